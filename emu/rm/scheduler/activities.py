"""Why an application waits: its recent scheduling decisions, with reasons.

The schedulers call `Activities.record(app_id, reason, node)` where they
decide about an app (YARN's ActivitiesManager records the same moments).
It is on the scheduling hot path, so it is kept cheap: reasons are
constants (no string formatting), a decision is stored only when it differs
from the app's previous one, and each app keeps at most `keep` entries in a
ring buffer. Entries are (simulated ms, reason, node id or "").

Read by the REST API (`/ws/v1/cluster/scheduler/app-activities/{id}`) and
written into summary.json (`why_pending`) for apps that waited.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

ALLOCATED = "allocated"
RESERVED = "reserved a node"
QUEUE_MAX = "queue at max capacity"
USER_LIMIT = "user limit reached"
AM_LIMIT = "AM resource limit reached"
MAX_RUNNING = "maxRunningApps reached"
NO_FIT = "no node fits"
LOCALITY = "waiting for locality"
ORDER = "not offered a node: other apps come first in scheduling order"
"""Never recorded by a scheduler (that would cost a write per app per
heartbeat): inferred for an app that waited to start without any recorded
reason, because the apps ahead of it took every node it was offered."""
INFER_AFTER_MS = 1000

STATES = {ALLOCATED: "ALLOCATED", RESERVED: "RESERVED"}
"""YARN's allocationState for a reason; every other reason is SKIPPED."""

KEEP = 16

Entry = tuple[int, str, str]


def wait_entry(recent: tuple[Entry, ...], early: tuple[Entry, ...]) -> dict[str, list[list[Any]]]:
    """One app's `why_pending` as summary.json has it."""
    entry: dict[str, list[list[Any]]] = {"recent": [list(e) for e in recent]}
    if early:
        entry["before_start"] = [list(e) for e in early]
    return entry


class Activities:
    """Per-app ring buffers of decisions; see the module docstring. Besides
    the most recent `keep` decisions, the first `keep` made before the app's
    first container are kept apart: they say why it waited to start."""

    __slots__ = (
        "_before_start",
        "_last",
        "_log",
        "_waited",
        "keep",
        "now_ms",
        "on_write",
        "writes",
    )

    def __init__(self, now_ms: Callable[[], int], keep: int = KEEP) -> None:
        self.now_ms = now_ms
        self.keep = keep
        self._last: dict[str, str] = {}
        self._log: dict[str, deque[tuple[int, str, str]]] = {}
        self._before_start: dict[str, list[tuple[int, str, str]]] = {}
        self._waited: dict[str, list[tuple[int, str, str]]] = {}
        self.writes = 0
        """Decisions stored so far: a scheduler compares it before and after
        a pass to tell a pass that recorded nothing new."""
        self.on_write: Callable[[str], None] | None = None
        """Called with the app id after a decision is stored (or an app's
        last decision forgotten): the FairScheduler stops skipping offers
        that would now record again."""

    def record(self, app_id: str, reason: str, node: str = "") -> None:
        last = self._last.get(app_id)
        if last == reason:
            return
        self._last[app_id] = reason
        self.writes += 1
        if self.on_write is not None:
            self.on_write(app_id)
        entry = (self.now_ms(), reason, node)
        log = self._log.get(app_id)
        if log is None:
            log = self._log[app_id] = deque(maxlen=self.keep)
            if reason != ALLOCATED:
                self._before_start[app_id] = []
        log.append(entry)
        early = self._before_start.get(app_id)
        if early is not None:
            if reason == ALLOCATED:  # started: what held it back stays, frozen
                del self._before_start[app_id]
                self._waited[app_id] = early
            elif len(early) < self.keep:
                early.append(entry)

    def of(self, app_id: str) -> list[tuple[int, str, str]]:
        """The app's recent decisions, oldest first."""
        return list(self._log.get(app_id, ()))

    def forget(self, app_id: str) -> None:
        """Drop an app the RM no longer keeps (emu.rm.retention)."""
        if self._last.pop(app_id, None) is not None and self.on_write is not None:
            self.on_write(app_id)
        self._log.pop(app_id, None)
        self._before_start.pop(app_id, None)
        self._waited.pop(app_id, None)

    def held_back(self, app_id: str) -> tuple[tuple[Entry, ...], tuple[Entry, ...]] | None:
        """The app's recent decisions and those before its first container,
        as stored (no copies of the entries), or None if it was never held back."""
        log = self._log.get(app_id)
        if log is None or all(reason in STATES for _, reason, _ in log):
            return None
        early = self._waited.get(app_id) or self._before_start.get(app_id) or ()
        return tuple(log), tuple(early)

    def wait_of(self, app_id: str) -> dict[str, list[list[Any]]] | None:
        """The app's entry of `waits()`, or None if it was never held back."""
        held = self.held_back(app_id)
        return None if held is None else wait_entry(*held)

    def waits(self) -> dict[str, dict[str, list[list[Any]]]]:
        """Every app that was ever held back: app id -> {"recent": [[ms, reason,
        node], ...]} plus "before_start" (why it waited for its first
        container) for an app that did."""
        out: dict[str, dict[str, list[list[Any]]]] = {}
        for app_id in sorted(self._log):
            entry = self.wait_of(app_id)
            if entry is not None:
                out[app_id] = entry
        return out

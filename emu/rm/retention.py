"""How many finished applications the RM keeps, as YARN's RMAppManager.

A long-running RM cannot keep every application it ever ran: YARN keeps the
`yarn.resourcemanager.max-completed-applications` (default 1,000) most
recently completed ones in memory and
`yarn.resourcemanager.state-store.max-completed-applications` (default: the
former, and never more) in the state store; when one more completes, the
oldest completed ones are removed (RMAppManager.checkAppNumCompletedLimit).
Clients asking about a removed application are told it is not found; the
REST API lists only those retained.

Here removal takes with it everything the RM holds per application: the
RMApp, its attempts, the scheduler's decision log (`Activities`) and the
state store's record. Whoever needs a finished application's report (a
replay's outputs list every job) takes it before it goes, through
`listeners`: each is called with the RMApp about to be removed, while
everything the RM knew about it is still there. Until then the RM itself
answers for it, so a run that never reaches the limit reads its outputs
exactly as before.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

from emu.config.configuration import Configuration

if TYPE_CHECKING:
    from emu.rm.app import RMApp
    from emu.rm.context import RMContext

MAX_COMPLETED = "yarn.resourcemanager.max-completed-applications"
STATE_STORE_MAX_COMPLETED = "yarn.resourcemanager.state-store.max-completed-applications"
DEFAULT_MAX_COMPLETED = 1000


def limits(conf: Configuration) -> tuple[int, int]:
    """(in memory, in the state store), as YARN reads them: the store's limit
    defaults to the memory one and is lowered to it when larger."""
    in_memory = max(0, conf.get_int(MAX_COMPLETED, DEFAULT_MAX_COMPLETED))
    in_store = max(0, conf.get_int(STATE_STORE_MAX_COMPLETED, in_memory))
    return in_memory, min(in_store, in_memory)


class CompletedApps:
    """The RM's completed applications, oldest first, and their removal."""

    __slots__ = ("in_memory", "in_store", "listeners", "max_in_memory", "max_in_store", "removed")

    def __init__(self, max_in_memory: int, max_in_store: int) -> None:
        self.max_in_memory = max_in_memory
        self.max_in_store = max_in_store
        self.in_memory: deque[str] = deque()
        self.in_store: deque[str] = deque()
        self.removed = 0
        """Applications removed from memory: with those retained, every
        application the RM has known (YARN's appsSubmitted counts them)."""
        self.listeners: list[Callable[[RMApp], None]] = []

    @classmethod
    def from_conf(cls, conf: Configuration) -> CompletedApps:
        return cls(*limits(conf))

    def completed(self, ctx: RMContext, app: RMApp) -> None:
        """`app` has just reached its final state: remove the oldest completed
        apps beyond the limits."""
        self.in_memory.append(app.app_id)
        if ctx.recovery is not None:
            self.in_store.append(app.app_id)
            while len(self.in_store) > self.max_in_store:
                ctx.recovery.store.remove_app(self.in_store.popleft())
        while len(self.in_memory) > self.max_in_memory:
            self._remove(ctx, self.in_memory.popleft())

    def recovered(self, app_id: str) -> None:
        """A completed app restored from the state store, in completion order."""
        self.in_memory.append(app_id)
        self.in_store.append(app_id)

    def _remove(self, ctx: RMContext, app_id: str) -> None:
        app = ctx.apps.get(app_id)
        if app is None:
            return
        for listener in self.listeners:
            listener(app)
        self.removed += 1
        for attempt_id in app.attempts:
            ctx.attempts.pop(attempt_id, None)
        del ctx.apps[app_id]
        ctx.scheduler.activities.forget(app_id)

"""The bridge between a running RM and the web server's thread.

The run and the web server live in different trio loops (the server in a
thread of its own), so the run is never slowed or reordered by a browser:

- reads: the run publishes a `Snapshot` (`emu.web.view`) at most every
  `every_s` wall seconds, from a read-only observer the simulation calls
  every simulated second (`tick`) or, in `emu rm`, from a small loop
  (`publish_loop`). The server serves the latest snapshot; swapping one
  reference is atomic, so no lock is needed.
- the live pages' history: each published snapshot appends one point
  (`history`) — cluster and per-queue allocation, and each tracked job's
  containers and resources (`track_jobs`, `emu sls --track-jobs`), and with
  node labels each partition's allocated and available resources and its
  leaf queues' allocation there (`partitions`, under the names
  realtimetrack.json's `partition.<p>.` gauges use) — bounded to `HISTORY`
  points.
- writes (kill, submit, move, new-application): the server hands the request
  to the run's own loop with `trio.from_thread.run`, where it goes through
  the RM's client service exactly as a client's message would
  (`ResourceManager.local_request`), then publishes a fresh snapshot so the
  next read agrees with the RM. A replay on the virtual clock that nobody
  writes to runs exactly as without the web server.
"""

from __future__ import annotations

import collections
import itertools
import time
from typing import TYPE_CHECKING, Any

import structlog
import trio

from emu.metrics.sls import (
    TRACKED_JOB_FIELDS,
    partition_values,
    tracked_job_values,
)
from emu.metrics.timeline import share_memory
from emu.msg.types import request
from emu.web.view import Snapshot, snapshot

if TYPE_CHECKING:
    from emu.rm.actor import ResourceManager

HISTORY = 3600
log = structlog.get_logger("emu.web")


class RunEnded(Exception):
    """The run this view watched is over; it takes no more requests."""


class LiveView:
    """The latest snapshot of one RM, and the way back into its loop."""

    def __init__(
        self,
        epoch_ms: int = 0,
        every_s: float = 1.0,
        total_jobs: int = 0,
        track_jobs: tuple[str, ...] = (),
    ) -> None:
        self.epoch_ms = epoch_ms
        self.every_s = every_s
        self.total_jobs = total_jobs
        """When this many apps have all ended, the next tick publishes at once,
        so the last snapshot of a replay shows its end."""
        self._ended_published = False
        self.track_jobs = track_jobs
        """Trace job ids (the RM app's name) whose series `/track` draws."""
        self.job_apps: dict[str, str] = {}
        """Each tracked job's app id, once the job has been submitted."""
        self.latest: Snapshot | None = None
        self.history: collections.deque[dict[str, Any]] = collections.deque(maxlen=HISTORY)
        self.finished = False
        self.errors = 0
        self._rm: ResourceManager | None = None
        self._token: trio.lowlevel.TrioToken | None = None
        self._next_at = 0.0
        self._request_ids = itertools.count(1)

    # --- the run's side ----------------------------------------------------------------
    def tick(self, rm: ResourceManager) -> None:
        """Observer hook, called from the run's loop: publish when due."""
        if self._rm is None:
            self._rm = rm
            self._token = trio.lowlevel.current_trio_token()
        if time.monotonic() >= self._next_at or self._all_ended(rm):
            try:
                self.publish(rm)
            except Exception:
                # Watching must never end the run it watches.
                self.errors += 1
                log.exception("web snapshot failed; the run goes on")

    def _all_ended(self, rm: ResourceManager) -> bool:
        if self._ended_published or not self.total_jobs:
            return False
        ctx = rm.ctx
        ended = sum(ctx.final_apps.values())
        known = len(ctx.apps) + ctx.completed_apps.removed
        self._ended_published = ended >= self.total_jobs and ended == known
        return self._ended_published

    def publish(self, rm: ResourceManager) -> None:
        self._next_at = time.monotonic() + self.every_s
        snap = snapshot(rm, self.epoch_ms)
        point = _history_point(snap)
        if self.track_jobs:
            point["jobs"] = self._job_point(rm)
        partitions = partition_values(rm.ctx.scheduler)
        if partitions:
            point["partitions"] = dict(partitions)
        self.history.append(point)
        self.latest = snap

    def _job_point(self, rm: ResourceManager) -> dict[str, dict[str, int]]:
        """Each tracked job's values now, under SLS's tracked-app metric names
        (`emu.metrics.sls.TRACKED_JOB_FIELDS`, raw MB and vcores)."""
        if len(self.job_apps) < len(self.track_jobs):
            wanted = set(self.track_jobs).difference(self.job_apps)
            for app in rm.ctx.apps.values():
                if app.name in wanted:
                    self.job_apps[app.name] = app.app_id
                    wanted.discard(app.name)
        return {
            job: dict(
                zip(
                    TRACKED_JOB_FIELDS,
                    tracked_job_values(rm, self.job_apps.get(job)),
                    strict=True,
                )
            )
            for job in self.track_jobs
        }

    async def publish_loop(
        self, rm: ResourceManager, task_status: Any = trio.TASK_STATUS_IGNORED
    ) -> None:
        """For an RM on the scaled wall clock (`emu rm`): publish every
        `every_s` wall seconds (the clock runs `rm.rate` times faster)."""
        self.tick(rm)
        task_status.started()
        while True:
            await trio.sleep(self.every_s * (rm.rate or 1.0))
            self.tick(rm)

    def close(self) -> None:
        """The run ended: the latest snapshot stays, writes are refused."""
        self.finished = True

    # --- the server's side (another thread) ------------------------------------------------
    def request(self, mtype: str, **fields: Any) -> dict[str, Any]:
        """Send one client-protocol request into the run's loop and wait for
        the reply. Blocks the calling thread; raises RunEnded once the run is over."""
        if self.finished or self._token is None or self._rm is None:
            raise RunEnded("the run has ended" if self.finished else "the run has not started")
        rm = self._rm
        msg = request(mtype, next(self._request_ids), **fields)

        async def call() -> dict[str, Any]:
            reply = await rm.local_request("client", msg)
            self.publish(rm)
            return reply

        try:
            return trio.from_thread.run(call, trio_token=self._token)
        except trio.RunFinishedError:
            raise RunEnded("the run has ended") from None


def _history_point(snap: Snapshot) -> dict[str, Any]:
    """One point of the live pages' charts (SLS's realtimetrack keys in spirit)."""
    m = snap.metrics
    queues = {}
    for q in snap.queues:
        if q.get("type", "leaf") != "leaf":
            continue
        used = q.get("used") or q.get("allocated") or {}
        queues[q["name"]] = {
            "allocatedMB": used.get("memory-mb", 0),
            "allocatedVCores": used.get("vcores", 0),
            "shareMB": share_memory(q, m["totalMB"], snap.scheduler_kind),
        }
    return {
        "time": snap.sim_ms,
        "allocatedMB": m["allocatedMB"],
        "availableMB": m["availableMB"],
        "allocatedVCores": m["allocatedVirtualCores"],
        "availableVCores": m["availableVirtualCores"],
        "appsRunning": m["appsRunning"],
        "appsPending": m["appsPending"],
        "containersAllocated": m["containersAllocated"],
        "queues": queues,
    }

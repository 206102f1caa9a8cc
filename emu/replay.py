"""The replayer: submits a workload's jobs to the RM at their submission
times and waits until every one has ended.

It is the Client actor of the design: it knows the scenario's timeline, not
the cluster's insides, and speaks only the client protocol, so the same code
drives an in-process cluster on the virtual clock and a remote RM on the
scaled wall clock.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import trio

from emu.client import RMClient
from emu.timing import YARN, Timing
from emu.workload import JobSpec, Workload


@dataclass
class Replayer:
    """Submits `workload` through `client`; `racks` maps host -> rack for the
    AMs' rack-level asks; `am_heartbeat_ms` is the AMs' allocate interval;
    `timing` whether the AMs follow SLS's timing (emu.timing)."""

    client: RMClient
    workload: Workload
    racks: dict[str, str]
    am_heartbeat_ms: int = 1000
    poll_ms: int = 1000
    timing: Timing = YARN
    on_submitted: Callable[[JobSpec, str], None] | None = None
    app_of_job: dict[str, str] = field(default_factory=dict)

    async def run(self) -> list[dict[str, Any]]:
        """Submit everything, wait for the end; return the final app reports."""
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._submit_all)
            await self._wait_all(nursery)
        return await self.client.list_apps()

    async def _submit_all(self) -> None:
        for job in sorted(self.workload.jobs, key=lambda j: (j.submit_ms, j.job_id)):
            await trio.sleep_until(max(job.submit_ms / 1000, trio.current_time()))
            await self.submit(job)

    async def submit(self, job: JobSpec) -> str:
        submitted_s = trio.current_time()
        app_id = (await self.client.call("new_application"))["app_id"]
        hosts = {h for t in job.tasks for h in t.hosts}
        context = {
            "job": job.to_wire(),
            "racks": {h: self.racks[h] for h in sorted(hosts) if h in self.racks},
            "am_heartbeat_ms": self.am_heartbeat_ms,
        }
        if self.timing.am_ticks_from_submission:
            context["ticks_from_submission"] = True
            context["submitted_s"] = submitted_s
        if self.timing.am_replies_next_heartbeat:
            context["replies_next_heartbeat"] = True
        await self.client.call(
            "submit_application",
            app_id=app_id,
            name=job.job_id,
            queue=job.queue,
            user=job.user,
            priority=job.priority,
            am_resource=job.am_resource.to_wire(),
            am_type=job.am_type,
            context=context,
        )
        self.app_of_job[job.job_id] = app_id
        if self.on_submitted is not None:
            self.on_submitted(job, app_id)
        return app_id

    async def _wait_all(self, nursery: trio.Nursery) -> None:
        total = len(self.workload.jobs)
        while True:
            await trio.sleep(self.poll_ms / 1000)
            if len(self.app_of_job) < total:
                continue
            m = await self.client.cluster_metrics()
            if m["apps_completed"] + m["apps_failed"] + m["apps_killed"] >= m["apps_submitted"]:
                return

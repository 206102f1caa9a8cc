"""A FairScheduler driven the way Hadoop's FairSchedulerTestBase drives it:
scheduler events and allocate calls by hand, no NMs, no AMs.

Apps created here never ask for an AM container unless `am` is given, so
they behave as unmanaged AMs (no maxAMShare check), like the apps Hadoop's
`createSchedulingRequest` makes. Only scheduler events are handled when the
harness drains the dispatcher; app and attempt state machines stay put, so
a test controls exactly which scheduler events happen. `write_alloc` writes
an allocation file; `HADOOP_TEST_CONF` is FairSchedulerTestBase's
configuration, which `FSHarness` starts from.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from emu.config.configuration import Configuration
from emu.metrics.eventlog import EventLog
from emu.resources import Resource
from emu.rm.app import RMApp
from emu.rm.attempt import RMAppAttempt
from emu.rm.context import RMContext
from emu.rm.dispatcher import Dispatcher, Event
from emu.rm.node import RMNode
from emu.rm.scheduler import create
from emu.rm.scheduler.fair import FairScheduler
from emu.rm.scheduler.fair.app import FSApp
from emu.rm.settings import RMSettings
from emu.testing.cluster import ask

GB = 1024

# FairSchedulerTestBase.createConfiguration
HADOOP_TEST_CONF = {
    "yarn.resourcemanager.scheduler.class": "fair",
    "yarn.scheduler.minimum-allocation-mb": 0,
    "yarn.scheduler.increment-allocation-mb": 1024,
    "yarn.scheduler.maximum-allocation-mb": 10240,
    "yarn.scheduler.fair.assignmultiple": "false",
    "yarn.scheduler.fair.update-interval-ms": 10,
    "yarn.scheduler.fair.preemption.cluster-utilization-threshold": 0,
    "yarn.scheduler.reservation-threshold.increment-multiple": 0.09,
}


def write_alloc(tmp_path: Path, body: str, name: str = "fair-scheduler.xml") -> Path:
    path = tmp_path / name
    path.write_text(f'<?xml version="1.0"?>\n<allocations>\n{body}\n</allocations>\n')
    return path


class FSHarness:
    def __init__(self, props: dict[str, Any] | None = None, alloc: Path | None = None) -> None:
        conf = Configuration()
        for k, v in {**HADOOP_TEST_CONF, **(props or {})}.items():
            conf.set(k, v)
        if alloc is not None:
            conf.set("yarn.scheduler.fair.allocation.file", str(alloc))
        self.conf = conf
        self.ctx = RMContext(RMSettings.from_conf(conf), conf, EventLog())
        self.ctx.dispatcher = Dispatcher()
        for kind in ("app", "attempt", "container", "node"):
            self.ctx.dispatcher.register(kind, lambda event: None)
        sched = create(self.ctx)
        assert isinstance(sched, FairScheduler)
        self.sched: FairScheduler = sched
        self.ctx.attach_scheduler(sched)

    def _event(self, etype: str, target: str, data: Any) -> None:
        """A scheduler event, handled at once as the RM's dispatcher hands it
        over (Scheduler.handle)."""
        self.sched.handle(Event("scheduler", etype, target, data))

    # --- cluster ----------------------------------------------------------------------------
    def add_node(self, host: str, memory: int, vcores: int = 8, rack: str = "/rack1") -> None:
        rmnode = RMNode(host, host, rack, Resource(memory, vcores), "mem://nm", (), 0)
        self.ctx.nodes[host] = rmnode
        self._event("NODE_ADDED", host, rmnode)
        self.drain()

    def remove_node(self, host: str) -> None:
        rmnode = self.ctx.nodes.pop(host)
        self._event("NODE_REMOVED", host, rmnode)
        self.drain()

    def heartbeat(self, host: str, times: int = 1) -> None:
        for _ in range(times):
            self._event("NODE_UPDATE", host, ([], []))
            self.drain()

    def update(self) -> None:
        self.sched.update()
        self.drain()

    def drain(self) -> None:
        self.ctx.dispatcher.drain()

    # --- apps ----------------------------------------------------------------------------------
    def submit(self, queue: str, user: str = "user1", am: Resource | None = None) -> str | None:
        """Add an app and its attempt; the attempt id, or None if rejected."""
        app_id = self.ctx.new_app_id()
        app = RMApp(app_id, app_id, queue, user, 0, am or Resource(1024, 1), "generic", {}, 1, 0)
        self.ctx.apps[app_id] = app
        self._event("APP_ADDED", app_id, app)
        if app_id not in self.sched.app_queue:
            return None
        attempt_id = f"appattempt_0_{app_id.rsplit('_', 1)[1]}_000001"
        attempt = RMAppAttempt(attempt_id, app_id, 1, self.sched.now_ms())
        self.ctx.attempts[attempt_id] = attempt
        app.attempts.append(attempt_id)
        self._event("APP_ATTEMPT_ADDED", attempt_id, attempt)
        if am is not None:
            self.sched.request_am_container(attempt_id, am)
        self.drain()
        return attempt_id

    def request(
        self,
        memory: int,
        queue: str,
        user: str = "user1",
        num: int = 1,
        vcores: int = 1,
        priority: int = 1,
    ) -> str:
        """Hadoop's createSchedulingRequest: a new app asking for `num` containers."""
        attempt = self.submit(queue, user)
        assert attempt is not None, f"app for {queue} rejected"
        self.ask(attempt, memory, num, vcores=vcores, priority=priority)
        self.update()
        return attempt

    def ask(
        self,
        attempt: str,
        memory: int,
        num: int,
        vcores: int = 1,
        priority: int = 1,
        name: str = "*",
        relax: bool = True,
    ) -> None:
        self.sched.allocate(attempt, [ask(priority, name, num, memory, vcores, relax)], [], [], [])
        self.drain()

    def remove(self, attempt: str) -> None:
        self._event("APP_ATTEMPT_REMOVED", attempt, self.ctx.attempts[attempt])
        self.drain()

    def fsapp(self, attempt: str) -> FSApp:
        return self.sched.fsapps[attempt]

    def live(self, attempt: str) -> int:
        return len(self.sched.apps[attempt].live)

    def queue(self, name: str) -> Any:
        return self.sched.qm.get(name)

"""A CapacityScheduler driven directly, as Hadoop's CapacityScheduler unit
tests drive LeafQueue/ParentQueue: nodes, apps and asks are handed to the
scheduler without actors or state-machine side effects (events the
scheduler raises are recorded, not handled), so an app asks for exactly the
containers a test gives it and no AM container appears on its own.

`Harness(props)` takes capacity-scheduler properties (`Q` is their prefix,
`yarn.scheduler.capacity.`); `emu.testing.fair` does the same for the
FairScheduler.
"""

from __future__ import annotations

from emu.config.configuration import Configuration
from emu.metrics.eventlog import EventLog
from emu.resources import ZERO, Resource
from emu.rm.app import RMApp
from emu.rm.attempt import RMAppAttempt
from emu.rm.context import RMContext
from emu.rm.dispatcher import Dispatcher, Event
from emu.rm.node import RMNode
from emu.rm.scheduler.capacity import CapacityScheduler
from emu.rm.scheduler.capacity.queues import LeafQueue
from emu.rm.scheduler.capacity.scheduler import Assignment
from emu.rm.scheduler.scheduler_app import SchedulerApp
from emu.rm.scheduler.scheduler_node import SchedulerNode
from emu.rm.settings import RMSettings
from emu.testing.cluster import ask

GB = 1024
Q = "yarn.scheduler.capacity."


class Recorder:
    """The events the scheduler dispatched: the harness never drains the RM
    dispatcher, so they stay queued there, in order."""

    def __init__(self, dispatcher: Dispatcher) -> None:
        self.dispatcher = dispatcher

    @property
    def events(self) -> list[Event]:
        return list(self.dispatcher._queue)


class Harness:
    def __init__(self, props: dict[str, object], **settings: object) -> None:
        conf = Configuration({"yarn.resourcemanager.scheduler.class": "capacity"})
        for k, v in {**settings, **props}.items():
            conf.set(k, v)
        self.ctx = RMContext(RMSettings.from_conf(conf), conf, EventLog())
        self.recorder = Recorder(self.ctx.dispatcher)
        self.sched = CapacityScheduler(self.ctx)
        self.ctx.attach_scheduler(self.sched)

    # --- cluster ---------------------------------------------------------------
    def node(
        self,
        host: str,
        memory: int,
        vcores: int = 16,
        rack: str = "/default",
        labels: tuple[str, ...] = (),
    ) -> SchedulerNode:
        """A node; `labels` as a topology file gives them (`gpu`,
        `spare(exclusive=false)`)."""
        rmnode = RMNode(host, host, rack, Resource(memory, vcores), "mem://nm", labels, 0)
        self.ctx.nodes[host] = rmnode
        self.sched.on_NODE_ADDED(host, rmnode)
        return self.sched.nodes[host]

    # --- apps -------------------------------------------------------------------
    def submit(
        self, queue: str, user: str, am: Resource = ZERO, priority: int = 0, label: str = ""
    ) -> SchedulerApp:
        """Add an app and its attempt; raises if the scheduler rejects it.
        `label` is the app's node label expression."""
        reason = self.try_submit(queue, user, am, priority, label)
        assert isinstance(reason, SchedulerApp), reason
        return reason

    def try_submit(
        self, queue: str, user: str, am: Resource = ZERO, priority: int = 0, label: str = ""
    ) -> SchedulerApp | str:
        """The app's attempt, or the rejection reason."""
        ctx = self.ctx
        app_id = ctx.new_app_id()
        context = {"job": {"params": {"label_expression": label}}} if label else {}
        app = RMApp(app_id, app_id, queue, user, priority, am, "generic", context, 1, ctx.now_ms())
        ctx.apps[app_id] = app
        self.sched.on_APP_ADDED(app_id, app)
        last = self.recorder.events[-1]
        if last.type == "APP_REJECTED":
            return str(last.data)
        attempt_id = f"appattempt_0_{app_id.rsplit('_', 1)[1]}_000001"
        attempt = RMAppAttempt(attempt_id, app_id, 1, ctx.now_ms())
        ctx.attempts[attempt_id] = attempt
        app.attempts.append(attempt_id)
        self.sched.on_APP_ATTEMPT_ADDED(attempt_id, attempt)
        return self.sched.apps[attempt_id]

    def ask(
        self,
        sapp: SchedulerApp,
        memory: int,
        count: int,
        priority: int = 1,
        where: str = "*",
        vcores: int = 1,
        relax: bool = True,
    ) -> None:
        self.sched.allocate(
            sapp.attempt_id, [ask(priority, where, count, memory, vcores, relax)], [], [], []
        )

    def finish(self, sapp: SchedulerApp) -> None:
        """The attempt ends and the app leaves the scheduler."""
        self.sched.on_APP_ATTEMPT_REMOVED(sapp.attempt_id, self.ctx.attempts[sapp.attempt_id])
        self.sched.on_APP_REMOVED(sapp.app_id, "FINISHED")

    def release_all(self, sapp: SchedulerApp) -> None:
        for cid in sorted(sapp.live):
            self.sched.complete_container(sapp.live[cid], 0, "", "KILL")

    # --- scheduling ------------------------------------------------------------------
    def leaf(self, name: str) -> LeafQueue:
        q = self.sched.tree[name if name.startswith("root") else f"root.{name}"]
        assert isinstance(q, LeafQueue)
        return q

    def assign_leaf(self, leaf: str, node: SchedulerNode) -> Assignment:
        """One `LeafQueue.assignContainers(cluster, node, ResourceLimits(cluster))`."""
        return self.sched._assign_leaf(self.leaf(leaf), node, self.sched.cluster, self.sched)

    def assign_root(self, node: SchedulerNode) -> Assignment:
        """One `root.assignContainers`: at most one container."""
        return self.sched._assign(self.sched.root, node, self.sched.cluster, self.sched)

    def heartbeat(self, node: SchedulerNode) -> None:
        """A NODE_UPDATE: as many assignments as the scheduler makes per heartbeat."""
        self.sched.schedule(node)


def used(sapp: SchedulerApp) -> int:
    return sapp.used.memory

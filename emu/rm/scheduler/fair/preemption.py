"""Starvation-based preemption: Hadoop's FSPreemptionThread and the
preemption bookkeeping of FSSchedulerNode.

On each periodic update (when `yarn.scheduler.fair.preemption` is on and
the cluster is used above `preemption.cluster-utilization-threshold`), leaf
queues name their starved apps: fair-share starvation (below
fairSharePreemptionThreshold x fair share for fairSharePreemptionTimeout)
and min-share starvation (the queue below min(minResources, demand),
component by component, for minSharePreemptionTimeout, handed to its apps
with unmet demand). The starved apps wait in FSStarvedApps' heap (least
starved first, as their starvations compared when each came: see
StarvedApps). For each, the asks covering its starvation, in the order of
Hadoop's maps of asks (AppSchedulingInfo.getAllResourceRequests), are
matched, one container at a time, to a node where enough containers can be
taken from apps that stay at or above their fair share in preemptable
queues (allowPreemptionFrom), preferring sets with fewer AM containers. A
node's free room counts only what no reservation and no earlier preemption
holds (FSSchedulerNode.getTotalReserved): counting a reserved node's free
room as taken-back room would pick a set too small, often the victim's AM
container alone.

The victims' apps are told at once (the preemption contract in their
allocate replies, `SchedulerApp.to_preempt`); the containers are killed
`yarn.scheduler.fair.waitTimeBeforeKill` later, before whatever the
scheduler does first at or after that time. The freed node is kept for
the starved app: while it stays starved, the node's heartbeats offer the
node to that app before anyone else. The app is not checked for
starvation again until waitTimeBeforeKill +
waitTimeBeforeNextStarvationCheck later (Hadoop's "4 heartbeats" term is
0 there: see preempt_for).

Nodes are tried in the order of ClusterNodeTracker's node HashMap, and on
one node the candidates are its containers not already marked in
SchedulerNode.getRunningContainersWithAMsAtTheEnd's order: launchedContainers
(a HashMap) walked, each non-AM container put first (so they come reversed),
each AM container last (see emu.rm.scheduler.fair.javahash).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from emu.java_heap import JavaPriorityQueue
from emu.resources import ZERO, Resource, component_min
from emu.rm.scheduler import javahash
from emu.rm.scheduler.fair.arith import INT_MAX, fits_in, is_none, subtract_non_negative
from emu.rm.scheduler.locality import ANY

if TYPE_CHECKING:
    from emu.rm.container import RMContainer
    from emu.rm.scheduler.app_scheduling_info import Ask
    from emu.rm.scheduler.fair.app import FSApp
    from emu.rm.scheduler.fair.scheduler import FairScheduler
    from emu.rm.scheduler.scheduler_node import SchedulerNode


class NodePreemption:
    """A node's containers marked for preemption, and what their release
    is kept for, per starved attempt (in the order it was claimed)."""

    __slots__ = ("containers", "for_app")

    def __init__(self) -> None:
        self.containers: set[str] = set()
        self.for_app: dict[str, Resource] = {}

    def total(self) -> Resource:
        t = ZERO
        for r in self.for_app.values():
            t = t + r
        return t

    def add(self, containers: list[RMContainer], app: FSApp) -> None:
        claimed = ZERO
        for c in containers:
            if c.container_id not in self.containers:
                self.containers.add(c.container_id)
                claimed = claimed + c.resource
        if not is_none(claimed):
            key = app.sapp.attempt_id
            self.for_app[key] = self.for_app.get(key, ZERO) + claimed

    def allocated(self, attempt_id: str, r: Resource) -> None:
        reserved = self.for_app.get(attempt_id)
        if reserved is not None:
            left = reserved - component_min(reserved, r)
            if is_none(left):
                del self.for_app[attempt_id]
            else:
                self.for_app[attempt_id] = left


class _Candidates:
    """Hadoop's PreemptableContainers: a set with a cap on AM containers."""

    __slots__ = ("by_app", "max_am", "num_am")

    def __init__(self, max_am: int) -> None:
        self.max_am = max_am
        self.num_am = 0
        self.by_app: dict[str, list[RMContainer]] = {}

    def add(self, c: RMContainer) -> bool:
        if c.is_am:
            self.num_am += 1
            if self.num_am >= self.max_am:
                return False
        self.by_app.setdefault(c.app_id, []).append(c)
        return True

    def containers(self) -> list[RMContainer]:
        """getAllContainers: app by app in the order of containersByApp, a
        HashMap keyed by ApplicationId."""
        apps = list(self.by_app)
        if len(apps) > 1:
            apps = javahash.hash_order(apps, javahash.app_id_hash_of, len(apps))
        return [c for a in apps for c in self.by_app[a]]

    def for_app(self, app_id: str) -> Resource:
        r = ZERO
        for c in self.by_app.get(app_id, ()):
            r = r + c.resource
        return r


class StarvedApps:
    """FSStarvedApps: the starved apps waiting for the preemption thread, a
    PriorityBlockingQueue (a binary heap) ordered by StarvationComparator,
    which puts app1 first when its starvation fits in app2's (never a tie:
    two equal starvations each come first). The heap compares starvations
    as they are at each add and each take, so an app added for its fair-share
    starvation before its queue set its min-share starvation keeps the place
    it got then; and as the comparator is not a total order, the order
    depends on when each app came."""

    __slots__ = ("queue",)

    def __init__(self) -> None:
        self.queue: JavaPriorityQueue[FSApp] = JavaPriorityQueue(self._compare)

    @staticmethod
    def _compare(a: FSApp, b: FSApp) -> int:
        return -1 if fits_in(a.starvation, b.starvation) else 1

    def add(self, app: FSApp) -> None:
        """addStarvedApp: queued once (PriorityBlockingQueue.offer)."""
        if app not in self.queue.heap:
            self.queue.add(app)

    def take(self) -> FSApp | None:
        """The head, or None when empty (PriorityBlockingQueue.poll)."""
        return self.queue.poll() if self.queue else None


class Preemption:
    """Finds victims for starved apps and kills them when due."""

    def __init__(self, fs: FairScheduler) -> None:
        self.fs = fs
        self.kills: list[tuple[int, str]] = []
        self.starved = StarvedApps()

    def preempt_for(self, now: int) -> None:
        """FSPreemptionThread's loop until no starved app waits: take one,
        choose and mark its victims, then hold it off (preemptionTriggered)."""
        fs = self.fs
        s = fs.settings
        # FSPreemptionThread's delayBeforeNextStarvationCheck adds "4 heartbeats"
        # (4 x FairScheduler.getNMHeartbeatInterval) to these, but Hadoop builds
        # the thread in initScheduler, before AbstractYarnScheduler.serviceInit
        # has read the heartbeat interval: the term is 0.
        delay = s.wait_time_before_kill_ms + s.wait_time_before_next_starvation_check_ms
        while (app := self.starved.take()) is not None:
            if app.stopped:
                continue
            victims = self.identify(app)
            due = now + s.wait_time_before_kill_ms
            for c in victims:
                self.kills.append((due, c.container_id))
                fs.ctx.events.emit(
                    "preempt_warn",
                    container=c.container_id,
                    victim=c.app_id,
                    node=c.node_id,
                    starved=app.name,
                    kill_ms=due,
                )
            app.next_starvation_check = now + delay

    def kill_due(self, now: int) -> None:
        if not self.kills:
            return
        # by due time, then as they were chosen (each PreemptContainersTask
        # kills its list in order)
        due = sorted((k for k in self.kills if k[0] <= now), key=lambda k: k[0])
        if not due:
            return
        self.kills = [k for k in self.kills if k[0] > now]
        for _, cid in due:
            if cid in self.fs.ctx.containers:
                # at once, before what brought the scheduler here
                self.fs.on_KILL_PREEMPTED(cid, None)

    def identify(self, app: FSApp) -> list[RMContainer]:
        fs = self.fs
        chosen: list[RMContainer] = []
        for ask, num in app.starved_requests():
            potential = fs.nodes_by_name(ask.name)
            for _ in range(num):
                best = self._best(ask, potential)
                if best is None:
                    continue
                containers = best.containers()
                if not containers:
                    continue
                chosen.extend(containers)
                fs.node_preemption(containers[0].node_id).add(containers, app)
                for c in containers:
                    victim = fs.fsapps.get(c.attempt_id)
                    if victim is not None:
                        victim.track_for_preemption(c)
        return chosen

    def _best(self, ask: Ask, potential: list[SchedulerNode]) -> _Candidates | None:
        best = self._for_one(potential, ask.capability)
        if ask.relax and ask.name != ANY and best is not None and best.num_am > 0:
            names = {n.node_id for n in potential}
            rest = [n for n in self.fs.tracked_nodes() if n.node_id not in names]
            spare = self._for_one(rest, ask.capability)
            if spare is not None and spare.num_am < best.num_am:
                best = spare
        return best

    def _for_one(self, nodes: list[SchedulerNode], request: Resource) -> _Candidates | None:
        best = None
        max_am = INT_MAX
        for node in nodes:
            found = self._on_node(request, node, max_am)
            if found is not None:
                best = found
                max_am = found.num_am
                if max_am == 0:
                    break
        return best

    def _on_node(self, request: Resource, node: SchedulerNode, max_am: int) -> _Candidates | None:
        fs = self.fs
        state = fs.preempt_nodes.get(node.node_id)
        marked = state.containers if state is not None else set()
        candidates = _Candidates(max_am)
        ordered = [c for c in self._with_ams_at_the_end(node) if c.container_id not in marked]
        # FSSchedulerNode.getTotalReserved: the node's reserved container and
        # what earlier preemptions on it are kept for.
        held = state.total() if state else ZERO
        if node.reserved is not None:
            held = held + node.reserved.resource
        potential = subtract_non_negative(node.available, held)
        for c in ordered:
            app = fs.fsapps.get(c.attempt_id)
            if app is None:
                continue
            if app.can_container_be_preempted(c, candidates.for_app(c.app_id)):
                if not candidates.add(c):
                    return None
                potential = potential + c.resource
            if fits_in(request, potential):
                return candidates
        return None

    def _with_ams_at_the_end(self, node: SchedulerNode) -> list[RMContainer]:
        """SchedulerNode.getRunningContainersWithAMsAtTheEnd: launchedContainers
        in its HashMap's order, each non-AM container added first, each AM last."""
        held = list(node.containers.values())
        walked = javahash.hashmap_order(
            held,
            [javahash.container_id_hash(c.container_id) for c in held],
            javahash.capacity_for(self.fs.peak_containers.get(node.node_id, len(held))),
        )
        tasks = [c for c in walked if not c.is_am]
        tasks.reverse()
        return tasks + [c for c in walked if c.is_am]

"""The abstract scheduler (Hadoop's AbstractYarnScheduler): turns scheduler
events into calls, keeps containers' state machines in step, and charges
every container to its node, attempt, queue and the cluster through one
hook pair. FIFO, Capacity and Fair build on it: subclasses decide *where*
containers go (`schedule(node)`) and which queue an app joins
(`place_app`).

Only NODE_UPDATE places containers: `allocate` records asks and hands over
what was placed since the previous call, nothing more.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from mypy_extensions import mypyc_attr

from emu.metrics.utilization import UtilizationIntegral
from emu.msg.types import EXIT_ABORTED, EXIT_KILLED_EXPIRED, EXIT_PREEMPTED, EXIT_SUCCESS
from emu.resources import ZERO, Resource, ResourceCalculator, component_max, component_min
from emu.rm import app as app_sm
from emu.rm import attempt as attempt_sm
from emu.rm import container as csm
from emu.rm import node as node_sm
from emu.rm.container import RMContainer
from emu.rm.diagnostics import invalid_request
from emu.rm.scheduler import javahash
from emu.rm.scheduler.activities import Activities
from emu.rm.scheduler.app_scheduling_info import AppSchedulingInfo, Ask
from emu.rm.scheduler.async_scheduling import skip_node_interval_ms
from emu.rm.scheduler.events import check_handlers
from emu.rm.scheduler.locality import ANY, OFF_SWITCH
from emu.rm.scheduler.queue_metrics import QueueMetrics
from emu.rm.scheduler.scheduler_app import SchedulerApp
from emu.rm.scheduler.scheduler_node import SchedulerNode

_NORMALIZED_MAX = 256

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from emu.config.configuration import Configuration
    from emu.rm.app import RMApp
    from emu.rm.attempt import RMAppAttempt
    from emu.rm.context import RMContext
    from emu.rm.dispatcher import Event
    from emu.rm.node import RMNode
    from emu.rm.scheduler.async_scheduling import AsyncScheduling

AM_PRIORITY = 0


class SchedulerWatcher(Protocol):
    """Watches every allocate call, placement and scheduling pass (SLS's
    scheduler metrics: the allocate time cost, locality counts,
    first-allocation delays, emu.metrics.sls; the quiet-heartbeat probe,
    emu.bench.quiet). A hook rather than wrapped methods: the compiled
    scheduler's methods cannot be replaced on an instance."""

    def allocate(
        self, attempt_id: str, asks: list[dict[str, Any]], call: Callable[[], Allocation]
    ) -> Allocation:
        """Make `call` (the scheduler's allocate for `attempt_id` with
        `asks`) and observe it."""
        ...

    def placed(self, container: RMContainer) -> None:
        """A container was just placed on a node."""
        ...

    def preempted(self, container: RMContainer) -> None:
        """A container is being ended because the scheduler preempted it."""
        ...

    def scheduling_pass(self, node_id: str) -> None:
        """A node update is about to run a scheduling pass on the node."""
        ...


class SchedulerError(Exception):
    """An allocate call the scheduler refuses (YARN's InvalidResourceRequestException)."""


@dataclass
class Allocation:
    """What an allocate call hands back to the AM service."""

    containers: list[RMContainer]
    headroom: Resource
    preempt: list[str] = field(default_factory=list)


DEFAULT_PARTITION = ""
"""The partition of unlabelled nodes (YARN's RMNodeLabelsManager.NO_LABEL)."""


_NO_ASKS: list[dict[str, Any]] = []
"""The asks of an allocate of nothing (`allocate_nothing`), as a watcher
sees them; never changed."""

_NOTHING_ALLOCATED = Allocation([], ZERO)


def _allocated_nothing() -> Allocation:
    """What a watcher's `call` gives for an allocate of nothing."""
    return _NOTHING_ALLOCATED


@dataclass
class PartitionUsage:
    """One node-label partition as the run's per-partition gauges read it:
    its nodes' resource, what is allocated there over all queues (the root
    queue's usage in the partition), and each leaf queue's usage there and
    what its apps ask of the partition (pending), by full queue name (a leaf
    absent from `queues` / `pending` has none)."""

    name: str
    total: Resource
    used: Resource
    queues: dict[str, Resource]
    pending: dict[str, Resource] = field(default_factory=dict)


@mypyc_attr(allow_interpreted_subclasses=True)  # plugins subclass it: docs/plugins.md
class Scheduler:
    """Shared scheduler machinery (Hadoop's AbstractYarnScheduler);
    subclasses implement `schedule`, `place_app` and `headroom`, may override
    the app and node hooks, and extend `container_allocated` /
    `container_released` to charge what they keep themselves."""

    name = "base"
    update_interval_ms: int | None = None
    """If set, the RM calls `update()` this often (fair-share recomputation,
    preemption policies)."""
    node_sort_interval_ms: int = 0
    """If positive, the RM calls `sort_nodes()` this often (the
    CapacityScheduler's multi-node sorter), from the RM's start."""
    holds_launched: bool = False
    """Whether a container the scheduler ends (kill, preemption, release,
    expiry) after its NM reported it running keeps its node's capacity until
    the NM reports it completed, as Hadoop's SchedulerNode.releaseContainer
    does when the release does not come from the node (releasedByNode false
    and launchedOnNode: "wait until node reports container has completed").
    The app, queue and cluster usage are given back at once either way."""

    def __init__(self, ctx: RMContext, calculator: ResourceCalculator) -> None:
        self.ctx = ctx
        self.calc = calculator
        self.watcher: SchedulerWatcher | None = None
        self.async_scheduling: AsyncScheduling | None = None
        """Set when the scheduler schedules in passes every so many
        milliseconds rather than on node heartbeats (CapacityScheduler's
        asynchronous scheduling): the RM then calls `async_pass` at each
        tick `async_wanted` asks for."""
        self.demanding: set[str] = set()
        """The attempts with an outstanding ask."""
        self.peak_nodes = 0
        """The most nodes the scheduler has held at once: the size of
        ClusterNodeTracker's HashMap table (`tracked_nodes`)."""
        self._tracked: list[SchedulerNode] | None = None
        self.mutations = 0
        """Bumped by every change a scheduling pass could read: an event, a
        node's containers launching or ending, asks, releases and blacklists,
        placements, reservations, completions, and what a subclass changes
        (its queues, its delay-scheduling counts). An asynchronous pass that
        leaves it unchanged changed nothing, so the next one, from the same
        state, would change nothing either (`async_wanted`)."""
        self._quiet_at = -1
        """`mutations` after the last asynchronous pass that changed nothing."""
        self.reserved_nodes = 0
        """How many nodes hold a reservation. An app's asks may all be met
        elsewhere while it still holds one: the next offer of that node
        gives it up, so such a node still makes a pass worth running."""
        self.heartbeat_ms: dict[str, int] = {}
        """Under asynchronous scheduling or multi-node placement
        (`tracks_heartbeats`), each node's registration or last heartbeat:
        a node that missed the skip interval is not offered, and one that
        beats again is a change to the passes."""
        self.tracks_heartbeats = False
        self.skip_node_ms = skip_node_interval_ms(ctx.conf)
        self.container_epoch = container_epoch(ctx.conf)
        """YarnConfiguration.getSkipNodeInterval."""
        s = ctx.settings
        self.shortcuts = s.shortcuts
        """Whether this scheduler takes its output-preserving shortcuts
        (`RMSettings.shortcuts`): one simulation's choice."""
        self.minimum = s.minimum_allocation
        self.configured_maximum = s.maximum_allocation
        """yarn.scheduler.maximum-allocation-*, as configured."""
        self.maximum = s.maximum_allocation
        """The largest container any app may get: the configured maximum,
        capped component-wise by the largest registered node once a node has
        registered (ClusterNodeTracker.getMaxAllowedAllocation, as an RM past
        its scheduling wait after start); see `_node_max_changed`."""
        self.node_max: Resource | None = None
        """Each resource's largest amount on a registered node (None: none)."""
        self.force_configured_maximum = False
        """ClusterNodeTracker's forceConfiguredMaxAllocation: the configured
        maximum applies whatever the nodes (as in an RM's first
        scheduling-wait-ms after start; Hadoop's unit tests run there).
        Set with `set_force_configured_maximum`."""
        self.increment = s.minimum_allocation
        self.nodes: dict[str, SchedulerNode] = {}
        self.apps: dict[str, SchedulerApp] = {}
        self.attempts_created = 0
        self.app_queue: dict[str, str] = {}
        self.running_apps: set[str] = set()
        self.cluster = ZERO
        self.used = ZERO
        self.queues: dict[str, QueueMetrics] = {}
        self.container_total = 0
        self.preempted_total = 0
        """Containers ended by preemption (the stall test tells a loop by it)."""
        self.kept_work = 0
        """Containers that ended with exit status 0, each app's counted only
        beyond what its best earlier attempt finished: a new attempt's AM
        runs its job from the start, so work redone after an AM was
        preempted is not progress (the stall test's, while containers are
        preempted)."""
        self._attempt_work: dict[str, int] = {}
        self._app_best_work: dict[str, int] = {}
        self.unknown_reports: Counter[str] = Counter()
        """NM container statuses for containers the RM does not hold (late
        reports of containers it already ended, or strays), by reported state."""
        self.held_on_node: dict[str, RMContainer] = {}
        """Ended containers whose node still counts them (`holds_launched`),
        until their NM reports them completed."""
        self.integral = UtilizationIntegral()
        """Allocated and capacity over time, for the run's utilization."""
        self.activities = Activities(ctx.now_ms)
        """Why apps wait: recent decisions per app (`activities`)."""
        self._normalized: dict[
            int, tuple[Resource, tuple[Resource, Resource, Resource, Resource], Resource]
        ] = {}
        """Normalized asks by the id of the resource asked for (`_checked`)."""

    # --- events ------------------------------------------------------------------
    def handle(self, event: Event) -> None:
        if event.type != "NODE_UPDATE":  # on_NODE_UPDATE tells a quiet one
            self.mutations += 1
        getattr(self, "on_" + event.type)(event.target, event.data)

    def on_NODE_ADDED(self, node_id: str, rmnode: RMNode) -> None:
        self._account_usage()
        node = SchedulerNode(node_id, rmnode.host, rmnode.rack, rmnode.resource)
        self.nodes[node_id] = node
        if self.async_scheduling is not None or self.tracks_heartbeats:
            self.heartbeat_ms[node_id] = self.ctx.now_ms()
        self.peak_nodes = max(self.peak_nodes, len(self.nodes))
        self._tracked = None
        self.cluster = self.cluster + node.total
        self._node_max_changed(node.total, None)
        self.node_added(node)

    def on_NODE_REMOVED(self, node_id: str, rmnode: RMNode) -> None:
        node = self.nodes.pop(node_id, None)
        if node is None:
            return
        self._tracked = None
        self.heartbeat_ms.pop(node_id, None)
        self._account_usage()
        if node.reserved is not None:
            self.unreserve(self.apps.get(node.reserved.attempt_id), node)
        for cid in sorted(node.containers):
            if self.held_on_node.pop(cid, None) is not None:
                continue  # already ended; the node goes with it
            self.complete_container(
                node.containers[cid],
                EXIT_ABORTED,
                f"Container released on a *lost* node {node_id}",
                csm.ContainerEvent.KILL,
                cleanup=False,
            )
        self.cluster = self.cluster - node.total
        self._node_max_changed(None, node.total)
        self.node_removed(node)

    def on_NODE_RESOURCE_UPDATE(self, node_id: str, rmnode: RMNode) -> None:
        node = self.nodes.get(node_id)
        if node is None:
            return
        self._account_usage()
        self.cluster = self.cluster - node.total + rmnode.resource
        before = node.total
        node.set_total(rmnode.resource)
        self._node_max_changed(node.total, before)

    def _node_max_changed(self, added: Resource | None, removed: Resource | None) -> None:
        """Keep `node_max` and `maximum` as ClusterNodeTracker.updateMaxResources
        does: a node's arrival can only raise the largest amounts; a leaving
        (or resized) node that held one of them makes them recomputed."""
        node_max = self.node_max
        if removed is not None and node_max is not None and _holds_a_max(removed, node_max):
            node_max = None
            for other in self.nodes.values():
                node_max = other.total if node_max is None else component_max(node_max, other.total)
        elif added is not None:
            node_max = added if node_max is None else component_max(node_max, added)
        self.node_max = node_max
        maximum = (
            self.configured_maximum
            if node_max is None or self.force_configured_maximum
            else component_min(self.configured_maximum, node_max)
        )
        if maximum != self.maximum:
            self.maximum = maximum

    def set_force_configured_maximum(self, flag: bool) -> None:
        """ClusterNodeTracker.setForceConfiguredMaxAllocation."""
        self.mutations += 1
        self.force_configured_maximum = flag
        self._node_max_changed(None, None)

    def node_update(self, node_id: str, data: tuple[list[str], list[dict[str, Any]]]) -> None:
        """A NODE_UPDATE taken at once, not from the event queue (the
        heartbeat path's shortcut, `ResourceTrackerService._take`): what
        `handle` does for one."""
        self.on_NODE_UPDATE(node_id, data)

    def on_NODE_UPDATE(self, node_id: str, data: tuple[list[str], list[dict[str, Any]]]) -> None:
        launched, completed = data
        if self.async_scheduling is not None or self.tracks_heartbeats:
            self._node_beat(node_id)
        if launched or completed:
            self.mutations += 1
            self._node_statuses(node_id, launched, completed)
        node = self.nodes.get(node_id)
        if node is not None and not (self.shortcuts and self.skip_quiet_node_update(node_id)):
            # Shortcut: the one place the pass is skipped when it provably
            # changes nothing, whatever the node reported (most often
            # nothing; or containers that started running, or completions
            # FIFO and Capacity need no pass for while nothing is asked for).
            if self.watcher is not None:
                self.watcher.scheduling_pass(node_id)
            self.schedule(node)

    def _node_beat(self, node_id: str) -> None:
        """A node heartbeat under asynchronous scheduling or multi-node
        placement: one from a node that had missed the skip interval makes
        it an offer again."""
        now = self.ctx.now_ms()
        last = self.heartbeat_ms.get(node_id)
        if last is None or now - last > self.skip_node_ms:
            self.mutations += 1
        self.heartbeat_ms[node_id] = now

    def _node_statuses(
        self, node_id: str, launched: list[str], completed: list[dict[str, Any]]
    ) -> None:
        """The containers a NODE_UPDATE reports launched and completed,
        applied before its pass (most reports have none: then not called)."""
        containers = self.ctx.containers
        unknown = self.unknown_reports
        for cid in launched:
            c = containers.get(cid)
            if c is not None:
                self.ctx.fire("container", c, csm.ContainerEvent.LAUNCHED)
            else:
                # YARN's containerLaunchedOnNode: "Some unknown container
                # sneaked into the system. Kill it."
                unknown["running"] += 1
                self.ctx.dispatch("node", node_sm.NodeEvent.CLEANUP_CONTAINER, node_id, cid)
        held = self.held_on_node
        for st in completed:
            c = containers.get(st["container_id"])
            if c is not None and c.node_id == node_id:
                self.complete_container(
                    c,
                    st["exit_status"],
                    st.get("diagnostics") or "",
                    csm.ContainerEvent.FINISHED,
                    cleanup=False,
                )
            else:
                unknown["completed"] += 1
                if held:
                    ended = held.get(st["container_id"])
                    if ended is not None and ended.node_id == node_id:
                        # SchedulerNode.releaseContainer(id, releasedByNode=true)
                        del held[ended.container_id]
                        node = self.nodes.get(node_id)
                        if node is not None:
                            node.remove(ended)
                            self.node_released(node, ended)

    def on_APP_ADDED(self, app_id: str, app: RMApp) -> None:
        reason = self.place_app(app)
        if reason is not None:
            self.ctx.dispatch("app", app_sm.AppEvent.APP_REJECTED, app_id, reason)
            return
        self.app_queue[app_id] = app.queue
        q = self.queue_metrics(app.queue)
        q.apps_submitted += 1
        q.apps_pending += 1
        self.ctx.dispatch("app", app_sm.AppEvent.APP_ACCEPTED, app_id)

    def on_APP_ATTEMPT_ADDED(self, attempt_id: str, attempt: RMAppAttempt) -> None:
        app = self.ctx.apps[attempt.app_id]
        seq = 0
        for prev in app.attempts[:-1]:
            prev_app = self.apps.get(prev)
            if prev_app is not None:
                seq = prev_app.container_seq
        sapp = SchedulerApp(
            attempt_id,
            app.app_id,
            app.queue,
            app.user,
            app.priority,
            _app_seq(app.app_id),
            app.am_resource,
            self.ctx.now_ms(),
            seq,
            self.attempts_created,
        )
        self.attempts_created += 1
        self.apps[attempt_id] = sapp
        self.attempt_added(sapp)
        self.ctx.dispatch("attempt", attempt_sm.AttemptEvent.ATTEMPT_ADDED, attempt_id)

    def on_APP_ATTEMPT_REMOVED(self, attempt_id: str, attempt: RMAppAttempt) -> None:
        sapp = self.apps.get(attempt_id)
        if sapp is None:
            return
        for node_id in sorted(sapp.reservations):
            node = self.nodes.get(node_id)
            if node is not None:
                self.unreserve(sapp, node)
        for cid in sorted(sapp.live):
            self.complete_container(
                sapp.live[cid],
                EXIT_ABORTED,
                "Container of a completed attempt",
                csm.ContainerEvent.KILL,
            )
        del self.apps[attempt_id]
        self._attempt_work.pop(attempt_id, None)  # its containers have all ended
        q = self.queue_metrics(sapp.queue)
        q.pending = q.pending - sapp.info.pending
        sapp.info = AppSchedulingInfo()
        self.attempt_removed(sapp)

    def on_APP_REMOVED(self, app_id: str, final: str) -> None:
        queue = self.app_queue.pop(app_id, None)
        if queue is None:
            return
        self._app_best_work.pop(app_id, None)
        q = self.queue_metrics(queue)
        if app_id in self.running_apps:
            self.running_apps.discard(app_id)
            q.apps_running = max(0, q.apps_running - 1)
        else:
            q.apps_pending = max(0, q.apps_pending - 1)
        if final == app_sm.FAILED:
            q.apps_failed += 1
        elif final == app_sm.KILLED:
            q.apps_killed += 1
        else:
            q.apps_completed += 1
        self.app_removed(app_id, queue)

    def on_NODE_LABELS_UPDATE(self, target: str, changed: dict[str, str]) -> None:
        """Nodes' labels changed (`changed`: node id to its new label, ""
        for none). Only the CapacityScheduler has partitions; the FIFO and
        Fair schedulers ignore the event, as Hadoop's do."""

    def node_labels_admin(self, op: str, args: dict[str, Any]) -> str | None:
        """An operator's label change (`op`: add, remove or replace, with the
        admin request's fields), offered to the scheduler before the RM's
        label store applies it; the refusal, if any. emu's own schedulers
        leave the checks to the store (emu.rm.node_labels)."""
        return None

    def queue_using_label(self, label: str) -> str | None:
        """A queue whose accessible node labels name `label` (Hadoop refuses
        to remove such a label from the cluster); None: no queue does."""
        return None

    def on_CONTAINER_EXPIRED(self, container_id: str, data: Any) -> None:
        c = self.ctx.containers.get(container_id)
        if c is not None:
            self.complete_container(
                c,
                EXIT_KILLED_EXPIRED,
                "Container expired since it was unused",
                csm.ContainerEvent.EXPIRE,
            )

    def on_KILL_PREEMPTED(self, container_id: str, data: Any) -> None:
        c = self.ctx.containers.get(container_id)
        if c is None:
            return
        queue = self._queue_of(c)
        if queue is not None:
            self.queue_metrics(queue).preempted_containers += 1
        self.complete_container(
            c, EXIT_PREEMPTED, "Container preempted by scheduler", csm.ContainerEvent.KILL
        )

    def tracked_nodes(self) -> list[SchedulerNode]:
        """All nodes in the order ClusterNodeTracker.getAllNodes lists them:
        its HashMap keyed by NodeId (host, port 0 as the RM names emu's
        nodes). Kept until a node joins or leaves."""
        tracked = self._tracked
        if tracked is None:
            nodes = list(self.nodes.values())
            tracked = self._tracked = javahash.hashmap_order(
                nodes,
                [javahash.node_id_hash(n.host, 0) for n in nodes],
                javahash.capacity_for(self.peak_nodes),
            )
        return tracked

    # --- asynchronous scheduling ------------------------------------------------------
    def async_wanted(self) -> bool:
        """Whether the next asynchronous pass could change anything: there
        is a node to offer, and an attempt with an outstanding ask (every
        allocation and new reservation is for one) or a node holding a
        reservation (which an offer fulfils, renews or gives up), and
        something changed since the last pass that changed nothing
        (`mutations`). The RM runs no tick while this is false
        (emu.rm.scheduler.async_scheduling)."""
        return (
            bool(self.demanding or self.reserved_nodes)
            and bool(self.nodes)
            and not (self.shortcuts and self._quiet_at == self.mutations)
        )

    def async_pass(self, tick_ms: int) -> None:
        """The tick `tick_ms` of asynchronous scheduling: a pass per thread,
        from the start nodes drawn for it."""
        raise SchedulerError(f"the {self.name} scheduler does not schedule asynchronously")

    # --- subclass hooks ------------------------------------------------------------
    def place_app(self, app: RMApp) -> str | None:
        """Choose/validate the app's queue (may rewrite app.queue); a string
        is the rejection reason."""
        return None

    def node_added(self, node: SchedulerNode) -> None:
        """Called after a node joins the cluster."""

    def node_removed(self, node: SchedulerNode) -> None:
        """Called after a node left and its containers were killed."""

    def node_released(self, node: SchedulerNode, c: RMContainer) -> None:
        """Called after `node` gave back the capacity of `c`, a container
        ended earlier that it held until its NM reported it (`holds_launched`)."""

    def attempt_added(self, sapp: SchedulerApp) -> None:
        """Called when an attempt joins its queue."""

    def attempt_removed(self, sapp: SchedulerApp) -> None:
        """Called after an attempt's containers were released."""

    def app_removed(self, app_id: str, queue: str) -> None:
        """Called when an app leaves the scheduler."""

    def schedule(self, node: SchedulerNode) -> None:
        raise NotImplementedError

    def skip_quiet_node_update(self, node_id: str) -> bool:
        """Shortcut asked by `on_NODE_UPDATE` (and nowhere else) once the
        node's statuses are applied: True if the pass on `node_id` would
        provably change nothing (no placement, reservation, counter or
        recorded decision), after doing in O(1) whatever residue the
        skipped pass would have left. False (the safe answer, and this
        default) runs the pass."""
        return False

    def headroom(self, sapp: SchedulerApp) -> Resource:
        return self.cluster - self.used

    def max_allocation(self, sapp: SchedulerApp) -> tuple[Resource, str]:
        """The largest container `sapp` may ask for, and where that limit
        comes from (for the refusal message): the cluster's maximum unless a
        queue sets a lower one."""
        return self.maximum, ""

    def update(self) -> None:
        """Periodic work, every `update_interval_ms` (none for FIFO)."""

    def sort_nodes(self) -> None:
        """A multi-node sorter's run, every `node_sort_interval_ms`."""

    def refresh(self, properties: Mapping[str, object]) -> str | None:
        """Apply a queue-configuration refresh; return the reason if refused.
        Schedulers with queues override this; a scheduler without queue
        configuration (FIFO) has nothing to change and accepts."""
        return None

    def refresh_from(self, path: Path) -> str | None:
        """Apply an allocation file given with the refresh (`emu admin
        refresh-queues --file`); only the FairScheduler reads one."""
        return (
            f"the {self.name} scheduler takes capacity-scheduler.xml properties, "
            "not a FairScheduler allocation file"
        )

    def queue_metrics(self, name: str) -> QueueMetrics:
        q = self.queues.get(name)
        if q is None:
            q = self.queues[name] = QueueMetrics(name)
        return q

    def parent_queue_names(self) -> set[str]:
        """The short names of the non-root parent queues a federation's Global
        Policy Generator writes policies for: none but the CapacityScheduler's
        (Hadoop's GPG reads only a Capacity scheduler's queue tree)."""
        return set()

    def leaf_queues(self) -> list[str]:
        """Full names of leaf queues, for metrics series."""
        return sorted(self.queues)

    def queue_info(self, name: str) -> list[dict[str, Any]]:
        names = [name] if name else sorted(self.queues)
        return [self.queues[n].to_dict() for n in names if n in self.queues]

    def partition_usage(self) -> list[PartitionUsage]:
        """Each node-label partition's size and usage, the default one
        (`DEFAULT_PARTITION`) first, the labelled ones by name; empty while
        no node has a label, so an unlabelled run records no partition
        gauges. Read once per sampled second (`emu.metrics.sls`), never on
        the scheduling path."""
        return []

    # --- the AM's side ---------------------------------------------------------------
    def request_am_container(self, attempt_id: str, am_resource: Resource) -> None:
        sapp = self.apps[attempt_id]
        sapp.am_pending = True
        capability = self.calc.normalize(am_resource, self.minimum, self.maximum, self.increment)
        self._update_asks(sapp, [Ask(AM_PRIORITY, ANY, capability, 1, True)])

    def allocate(
        self,
        attempt_id: str,
        asks: list[dict[str, Any]],
        releases: list[str],
        blacklist_add: list[str],
        blacklist_remove: list[str],
    ) -> Allocation:
        """Record asks/releases/blacklist; hand over newly placed containers."""
        watcher = self.watcher
        if watcher is not None:
            return watcher.allocate(
                attempt_id,
                asks,
                lambda: self._allocate(attempt_id, asks, releases, blacklist_add, blacklist_remove),
            )
        return self._allocate(attempt_id, asks, releases, blacklist_add, blacklist_remove)

    def allocate_nothing(self, attempt_id: str) -> bool:
        """`allocate` with no asks, releases or blacklist changes, made
        cheaper (the RM's `ApplicationMasterService.allocate_nothing`):
        True, the call counted by the watcher, when it would hand the
        attempt nothing (no container placed since its last call, nothing
        to preempt) and change nothing; False, with nothing done, when the
        call must be made. The headroom the call would compute is not (an
        AM in this process reads none); a scheduler whose allocate has
        other effects returns False (its own override, or the shortcuts
        off)."""
        if not self.shortcuts:
            return False
        sapp = self.apps.get(attempt_id)
        if sapp is None or sapp.newly_allocated or sapp.to_preempt:
            return False
        watcher = self.watcher
        if watcher is not None:
            watcher.allocate(attempt_id, _NO_ASKS, _allocated_nothing)
        return True

    def _allocate(
        self,
        attempt_id: str,
        asks: list[dict[str, Any]],
        releases: list[str],
        blacklist_add: list[str],
        blacklist_remove: list[str],
    ) -> Allocation:
        sapp = self.apps.get(attempt_id)
        if sapp is None:
            return Allocation([], ZERO)
        if asks or releases or blacklist_add or blacklist_remove:
            self.mutations += 1
        if asks:
            parsed = []
            maximum = self.max_allocation(sapp)[0]
            for a in asks:
                cap = self._checked(Resource.from_wire(a["capability"]), maximum)
                parsed.append(
                    Ask(
                        a["priority"],
                        a["resource_name"],
                        cap,
                        a["num_containers"],
                        a["relax_locality"],
                    )
                )
            self._update_asks(sapp, parsed)
        for cid in releases:
            c = sapp.live.get(cid)
            if c is not None:
                self.complete_container(
                    c,
                    EXIT_ABORTED,
                    "Container released by application",
                    csm.ContainerEvent.RELEASED,
                )
        if blacklist_add:
            sapp.blacklist.update(blacklist_add)
        if blacklist_remove:
            sapp.blacklist.difference_update(blacklist_remove)
        if blacklist_add or blacklist_remove:
            self.blacklist_changed(sapp)
        containers = self.acquire(attempt_id)
        preempt = sorted(cid for cid in sapp.to_preempt if cid in sapp.live)
        return Allocation(containers, self.headroom(sapp), preempt)

    def _checked(self, cap: Resource, maximum: Resource) -> Resource:
        """`cap` normalized, or SchedulerError if it cannot be granted under
        `maximum`. Shortcut: asks arrive as a handful of shared resources
        (`Resource.from_wire`) and both steps are pure, so the answer for
        the same resource object, maximum and scheduler bounds is kept."""
        bounds = (maximum, self.minimum, self.maximum, self.increment)
        kept = self._normalized.get(id(cap))
        if (
            kept is not None
            and kept[0] is cap
            and all(x is y for x, y in zip(kept[1], bounds, strict=True))
            and self.shortcuts
        ):
            return kept[2]
        refusal = invalid_request(cap, maximum, self.configured_maximum)
        if refusal is not None:
            raise SchedulerError(refusal)
        normalized = self.calc.normalize(cap, self.minimum, self.maximum, self.increment)
        if len(self._normalized) < _NORMALIZED_MAX:
            # holds `cap`, so its id is not reused while the entry exists
            self._normalized[id(cap)] = (cap, bounds, normalized)
        return normalized

    def _update_asks(self, sapp: SchedulerApp, asks: list[Ask]) -> None:
        self.mutations += 1
        before = sapp.info.pending
        had = sapp.info.has_pending()
        sapp.info.update(asks)
        q = self.queue_metrics(sapp.queue)
        q.pending = q.pending - before + sapp.info.pending
        if sapp.info.has_pending() != had:
            self.demand_changed(sapp)

    def demand_changed(self, sapp: SchedulerApp) -> None:
        """An app started or stopped having outstanding asks."""

    def blacklist_changed(self, sapp: SchedulerApp) -> None:
        """An app's blacklist changed."""

    def acquire(self, attempt_id: str) -> list[RMContainer]:
        """Hand newly placed containers to their attempt (ACQUIRED)."""
        sapp = self.apps.get(attempt_id)
        if sapp is None or not sapp.newly_allocated:
            return []
        taken, sapp.newly_allocated = sapp.newly_allocated, []
        fire = self.ctx.fire
        for c in taken:
            fire("container", c, csm.ContainerEvent.ACQUIRED)
        return taken

    def node_container_count(self, node_id: str) -> int:
        node = self.nodes.get(node_id)
        return len(node.containers) if node is not None else 0

    # --- placement mechanics -------------------------------------------------------------
    def place(
        self,
        sapp: SchedulerApp,
        node: SchedulerNode,
        priority: int,
        node_type: str,
        ask: Ask,
        container_id: str | None = None,
    ) -> RMContainer:
        """Create a container for `ask` on `node` (the caller checked it fits).
        `container_id` is that of the reservation the placement fulfils: YARN
        allocates the reserved Container itself, id included, rather than a new one."""
        self._account_usage()
        self.mutations += 1
        c = self._new_container(sapp, node, priority, node_type, ask, container_id)
        before = sapp.info.pending
        sapp.info.allocated(node_type, node, priority)
        q = self.queue_metrics(sapp.queue)
        q.pending = q.pending - before + sapp.info.pending
        self.container_allocated(c, sapp, node)
        if not c.is_am:
            sapp.newly_allocated.append(c)
        self.ctx.fire("container", c, csm.ContainerEvent.START)
        if not sapp.info.has_pending():
            self.demand_changed(sapp)
        if self.watcher is not None:
            self.watcher.placed(c)
        return c

    def recover_container(
        self,
        attempt_id: str,
        container_id: str,
        node_id: str,
        resource: Resource,
        priority: int,
        is_am: bool,
    ) -> RMContainer | None:
        """Rebuild a container an NM reports still running after an RM
        restart (YARN's recoverContainersOnNode): charged to its node,
        attempt and queue as a placed one is, and RUNNING from the start.
        None if its node or attempt is unknown here, or it is already known."""
        ctx = self.ctx
        sapp = self.apps.get(attempt_id)
        node = self.nodes.get(node_id)
        if sapp is None or node is None or container_id in ctx.containers:
            return None
        self._account_usage()
        c = RMContainer(
            container_id,
            attempt_id,
            sapp.app_id,
            node_id,
            resource,
            priority,
            OFF_SWITCH,
            is_am,
            ctx.now_ms(),
        )
        self.container_allocated(c, sapp, node)
        ctx.fire("container", c, csm.ContainerEvent.RECOVER)
        return c

    def container_allocated(self, c: RMContainer, sapp: SchedulerApp, node: SchedulerNode) -> None:
        """The one place a new container (placed or recovered) is charged:
        to its node, attempt, queue and the cluster; an AM container makes
        its app running. Schedulers extend it (call super first) to charge
        their own queues and users, so no path can charge one and not the
        other."""
        self.mutations += 1
        ctx = self.ctx
        ctx.containers[c.container_id] = c
        node.add(c)
        sapp.live[c.container_id] = c
        sapp.used = sapp.used + c.resource
        self.used = self.used + c.resource
        q = self.queue_metrics(sapp.queue)
        q.allocated = q.allocated + c.resource
        q.allocated_containers += 1
        q.containers_allocated_total += 1
        self.container_total += 1
        if c.is_am:
            sapp.am_pending = False
            sapp.am_running = True
            if sapp.app_id not in self.running_apps:
                self.running_apps.add(sapp.app_id)
                q.apps_pending = max(0, q.apps_pending - 1)
                q.apps_running += 1
        rmnode = ctx.nodes.get(node.node_id)
        if rmnode is not None and sapp.app_id not in rmnode.running_apps:
            rmnode.running_apps.add(sapp.app_id)
            ran = ctx.app_nodes.get(sapp.app_id)
            if ran is None:
                ran = ctx.app_nodes[sapp.app_id] = set()
            ran.add(node.node_id)

    def container_released(self, c: RMContainer, sapp: SchedulerApp | None) -> None:
        """The one place a container's resources are given back: by its
        node, attempt (with any preemption mark), queue and the cluster.
        `sapp` is None once the attempt is gone. Schedulers extend it (call
        super first) to release what they charged in `container_allocated`."""
        node = self.nodes.get(c.node_id)
        if node is not None and c.container_id not in self.held_on_node:
            node.remove(c)
        if sapp is not None and sapp.live.pop(c.container_id, None) is not None:
            sapp.used = sapp.used - c.resource
            sapp.unmark_for_preemption(c.container_id)
        self.used = self.used - c.resource
        queue = sapp.queue if sapp is not None else self._queue_of(c)
        if queue is not None:
            q = self.queue_metrics(queue)
            q.allocated = q.allocated - c.resource
            q.allocated_containers -= 1
            q.containers_released_total += 1

    def complete_container(
        self,
        c: RMContainer,
        exit_status: int,
        diagnostics: str,
        event: str,
        cleanup: bool = True,
    ) -> None:
        """Free a container's resources everywhere and end its state machine.
        `cleanup` asks the node to kill it if it may still be running there."""
        ctx = self.ctx
        if ctx.containers.pop(c.container_id, None) is None:
            return
        self._account_usage()
        self.mutations += 1
        if exit_status == EXIT_SUCCESS:
            done = self._attempt_work[c.attempt_id] = self._attempt_work.get(c.attempt_id, 0) + 1
            if done > self._app_best_work.get(c.app_id, 0):
                self._app_best_work[c.app_id] = done
                self.kept_work += 1
        elif exit_status == EXIT_PREEMPTED:
            self.preempted_total += 1
            if self.watcher is not None:
                self.watcher.preempted(c)
        if (
            self.holds_launched
            and cleanup
            and c.state == csm.RUNNING
            and c.node_id in self.nodes
            and c.node_id in ctx.nodes
        ):
            # not released by the node, and launched there: the node keeps it
            self.held_on_node[c.container_id] = c
        self.container_released(c, self.apps.get(c.attempt_id))
        if (
            cleanup
            and c.state in (csm.ALLOCATED, csm.ACQUIRED, csm.RUNNING)
            and c.node_id in ctx.nodes
        ):
            ctx.dispatch("node", node_sm.NodeEvent.CLEANUP_CONTAINER, c.node_id, c.container_id)
        ctx.fire("container", c, event, (exit_status, diagnostics))

    def _queue_of(self, c: RMContainer) -> str | None:
        """The queue a container was charged to (None once its app is gone)."""
        sapp = self.apps.get(c.attempt_id)
        return sapp.queue if sapp is not None else self.app_queue.get(c.app_id)

    def _new_container(
        self,
        sapp: SchedulerApp,
        node: SchedulerNode,
        priority: int,
        node_type: str,
        ask: Ask,
        container_id: str | None = None,
    ) -> RMContainer:
        """A fresh RMContainer with the attempt's next id (YARN's
        container_<cluster ts>_<app>_<attempt>_<seq>), or with `container_id`
        (a fulfilled reservation's, no new id); the AM's own container
        is the priority-0 one asked for while the AM is pending."""
        ctx = self.ctx
        if container_id is not None:
            cid = container_id
        else:
            sapp.container_seq += 1
            prefix = sapp.container_prefix
            if not prefix:
                # The attempt's own cluster timestamp: an app submitted with
                # another RM's id (a federation's secondary sub-cluster) keeps it.
                ts, app_seq, attempt_no = _container_prefix(sapp.attempt_id)
                epoch = self.container_epoch
                # ContainerId.toString: the RM's epoch (container id >> 40), if any.
                mark = f"e{epoch:02d}_" if epoch > 0 else ""
                prefix = f"container_{mark}{ts}_{app_seq}_{attempt_no}_"
                sapp.container_prefix = prefix
            cid = f"{prefix}{sapp.container_seq:06d}"
        return RMContainer(
            cid,
            sapp.attempt_id,
            sapp.app_id,
            node.node_id,
            ask.capability,
            priority,
            node_type,
            sapp.am_pending and priority == AM_PRIORITY,
            ctx.now_ms(),
        )

    def reserve(
        self, sapp: SchedulerApp, node: SchedulerNode, priority: int, ask: Ask
    ) -> RMContainer:
        """Reserve `node` for an ask that does not fit yet, so smaller asks
        cannot starve it (YARN's node reservation)."""
        self.mutations += 1
        ctx = self.ctx
        c = self._new_container(sapp, node, priority, OFF_SWITCH, ask)
        ctx.fire("container", c, csm.ContainerEvent.RESERVED)
        node.reserved = c
        self.reserved_nodes += 1
        sapp.reservations[node.node_id] = c
        q = self.queue_metrics(sapp.queue)
        q.reserved = q.reserved + c.resource
        return c

    def unreserve(self, sapp: SchedulerApp | None, node: SchedulerNode) -> None:
        c = node.reserved
        if c is None:
            return
        self.mutations += 1
        node.reserved = None
        self.reserved_nodes -= 1
        if sapp is not None:
            sapp.reservations.pop(node.node_id, None)
        queue = sapp.queue if sapp is not None else self._queue_of(c)
        if queue is not None:
            q = self.queue_metrics(queue)
            q.reserved = q.reserved - c.resource
        self.ctx.fire("container", c, csm.ContainerEvent.RELEASED)

    # --- utilization integral (exact, for summaries) -------------------------------------------
    def _account_usage(self) -> None:
        self.integral.advance(self.ctx.now_ms(), self.used, self.cluster)

    def utilization(self) -> dict[str, float]:
        """Time-weighted allocated/capacity since the start, per resource."""
        self._account_usage()
        return self.integral.ratios()


check_handlers(Scheduler)


def _app_seq(app_id: str) -> int:
    return int(app_id.rsplit("_", 1)[1])


RM_EPOCH = "yarn.resourcemanager.epoch"


def container_epoch(conf: Configuration) -> int:
    """The RM's epoch, the top bits of its container ids: the state store's
    (`yarn.resourcemanager.epoch`, its base) when the RM keeps one, as a
    federation's sub-cluster RMs do to keep their container ids apart;
    0 without (Hadoop's NullRMStateStore)."""
    keeps_store = conf.get_bool("yarn.resourcemanager.recovery.enabled", False)
    if not (keeps_store or conf.get_bool("yarn.federation.enabled", False)):
        return 0
    return max(0, conf.get_int(RM_EPOCH, 0))


def _container_prefix(attempt_id: str) -> tuple[str, str, str]:
    parts = attempt_id.split("_")
    return parts[1], parts[2], f"{int(parts[3]):02d}"


def _holds_a_max(total: Resource, node_max: Resource) -> bool:
    """Whether a node of `total` has the largest amount of some resource."""
    held = total.components()
    return any(held.get(k, 0) == v for k, v in node_max.components().items())

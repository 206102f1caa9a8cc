"""The CapacityScheduler: Hadoop's CapacityScheduler on emu's common layer.

On each NODE_UPDATE (`schedule`), as CapacityScheduler.allocateContainersToNode:
a node holding a reservation only tries to fulfil it; otherwise the root
queue is asked for one container at a time, while the node has room for a
minimum allocation, until nothing is assigned, a reservation is made,
`per-node-heartbeat.maximum-offswitch-assignments` off-switch containers
were placed, or `maximum-container-assignments` is reached.

One assignment walks the tree (ParentQueue/LeafQueue.assignContainers): a
queue at or above its limit - min(its maximum capacity, what its parent
offers) - gets nothing; a parent offers its children, least served first,
`parent limit - parent usage + child usage`; a leaf visits its active apps
in order (FIFO: app priority, then submission; or `fair`), skips users
above the user limit, and gives the first app that can take one a
container (see `allocator`). A child that runs out of headroom lowers what
the parent offers its other children.

With node labels (a labelled node or app), a node is offered its own
partition first, each queue within its capacities and usage there (an
`Env` per partition, `queues.Partition`); a non-exclusive node nobody of its
partition took is then offered to default-partition asks, each queue up to
the whole partition (CapacityScheduler.allocateOrReserveNewContainers).
Without labels the scheduler is its own `Env` and none of this runs.

Every new container or reservation is then checked as Hadoop commits it
(`_accepts`, AbstractCSQueue.accept): refused when a queue up the tree would
go past its maximum in the node's partition with it.

`headroom` is what the AMs see in allocate responses: min(user limit -
user usage, queue limit - queue usage), capped by the free cluster.
`refresh` applies an admin refresh; `update` runs the monitor's policies
(preemption, removal of idle auto-created queues).

The scheduler holds the live queue tree, usage and partitions and walks the
tree; the parts that only read or maintain them are beside it: the queue
tree, users and limits in `queues`, placement rules in `placement`,
configuration parsing in `config`, max-parallel-apps in `max_running_apps`,
queues created, removed or refreshed in `queue_manager`, relabelled nodes in
`node_labels`, what the preemption policy sees in `preemption_snapshot`, and
queue reports in `queue_reports`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mypy_extensions import mypyc_attr

from emu.config.configuration import Configuration
from emu.resources import ZERO, Resource, calculator, component_min
from emu.rm.container import RMContainer
from emu.rm.diagnostics import invalid_request
from emu.rm.scheduler import activities as act
from emu.rm.scheduler.abstract_scheduler import PartitionUsage, Scheduler
from emu.rm.scheduler.app_scheduling_info import Ask
from emu.rm.scheduler.async_scheduling import AsyncScheduling, walk
from emu.rm.scheduler.capacity import (
    allocator,
    label_waits,
    node_labels,
    preemption_snapshot,
    queue_reports,
)
from emu.rm.scheduler.capacity import resource_math as rm
from emu.rm.scheduler.capacity.config import CapacityConf, parse
from emu.rm.scheduler.capacity.max_running_apps import MaxRunningAppsEnforcer
from emu.rm.scheduler.capacity.multi_node import MultiNodePlacement
from emu.rm.scheduler.capacity.placement import place
from emu.rm.scheduler.capacity.preemption import PreemptionPolicy, TempQueue
from emu.rm.scheduler.capacity.queue_manager import QueueManager
from emu.rm.scheduler.capacity.queues import (
    Env,
    LeafQueue,
    ParentQueue,
    Partition,
    Queue,
    build,
    recount_parents,
    update_absolute,
    update_absolute_labels,
)
from emu.rm.scheduler.locality import ANY, OFF_SWITCH
from emu.rm.scheduler.queue_metrics import QueueMetrics
from emu.rm.scheduler.scheduler_app import SchedulerApp
from emu.rm.scheduler.scheduler_node import SchedulerNode

if TYPE_CHECKING:
    from emu.rm.app import RMApp
    from emu.rm.context import RMContext
    from emu.rm.node import RMNode

QUEUE_LIMIT = "QUEUE_LIMIT"


class Assignment:
    """The result of offering a node to a queue (YARN's CSAssignment)."""

    __slots__ = ("headroom", "locality", "outcome")

    def __init__(self, outcome: str = "", locality: str = OFF_SWITCH, headroom: Resource = ZERO):
        self.outcome = outcome
        self.locality = locality
        self.headroom = headroom

    @property
    def assigned(self) -> bool:
        return self.outcome in (allocator.ALLOCATED, allocator.RESERVED)


NOTHING = Assignment()


_REASONS = {
    allocator.ALLOCATED: act.ALLOCATED,
    allocator.RESERVED: act.RESERVED,
    allocator.LOCALITY_WAIT: act.LOCALITY,
    allocator.QUEUE_SKIPPED: act.QUEUE_MAX,
}
"""Why an app got (or did not get) a container, by allocator outcome; any
other outcome means nothing it asks for fits this node."""


@mypyc_attr(allow_interpreted_subclasses=True)  # plugins subclass it: docs/plugins.md
class CapacityScheduler(Scheduler):
    name = "capacity"
    holds_launched = True  # LeafQueue.completedContainer: releaseContainer(id, false)

    def __init__(self, ctx: RMContext) -> None:
        s = ctx.settings
        cs = parse(ctx.conf, s.minimum_allocation, s.maximum_allocation)
        super().__init__(ctx, calculator(cs.calculator))
        self.limits = rm.limits_for(self.calc, self.cluster, self.minimum)
        """The limit arithmetic for this calculator and cluster (`rm.Limits`)."""
        self.partition = ""
        self.ignore = False
        # Node labels (RMNodeLabelsManager): each labelled node's partition,
        # each label's exclusivity and resource, and the `Env`s of the
        # partitions; `default_env` is the scheduler itself until a node or
        # an app has a label, then the unlabelled nodes' partition.
        self.labelled = False
        self.node_partition: dict[str, str] = {}
        self.exclusive: dict[str, bool] = {}
        self.partition_resource: dict[str, Resource] = {}
        self.envs: dict[tuple[str, bool], Env] = {}
        self.default_env: Env = self
        self.app_label: dict[str, str] = {}
        """The labelled partition each app's asks name (its
        `job.label.expression`, else its queue's default-node-label-expression)."""
        self.conf = ctx.conf
        self.cs = cs
        if cs.async_scheduling:
            self.async_scheduling = AsyncScheduling.from_conf(
                ctx.conf, cs.async_interval_ms, cs.async_threads, ctx.cluster_timestamp
            )
        self.tree, self.root = build(cs, self.leaf_metrics)
        self.queue_manager = QueueManager(self, ctx.conf)
        self.app_leaf: dict[str, LeafQueue] = {}
        self._max_allocation: dict[str, tuple[Resource, Resource, Resource]] = {}
        """Per leaf queue: (its configured maximum, the scheduler's maximum,
        their component-wise minimum), for `max_allocation`."""
        self.demanding: set[str] = set()
        self.demand: dict[str, int] = dict.fromkeys(self.tree, 0)
        self.max_running = MaxRunningAppsEnforcer(self)
        self.alloc = allocator.AllocatorState(
            self.calc,
            cs,
            self.minimum,
            self.nodes,
            self.apps,
            lambda path: self.tree[path].conf.maximum_allocation,
            self,
        )
        self.alloc.app_partition = self.app_label
        self.alloc.partition_of = self.node_partition
        self.alloc.accepts = self._accepts
        self.alloc.am_non_exclusive = ctx.conf.get_bool(
            "yarn.resourcemanager.node-labels.am.allow-non-exclusive-allocation", False
        )
        self.multi_node: MultiNodePlacement | None = None
        """Global scheduling with multi-node placement, when enabled."""
        if cs.multi_node.enabled:
            self.multi_node = MultiNodePlacement(
                cs.multi_node,
                self.nodes,
                self.node_partition,
                self.heartbeat_ms,
                self.skip_node_ms,
            )
            self.tracks_heartbeats = True
            self.node_sort_interval_ms = cs.multi_node.interval_ms
        self.preemption = PreemptionPolicy(cs.preemption) if cs.preemption.enabled else None
        intervals = []
        if self.preemption is not None:
            intervals.append(cs.preemption.monitoring_interval_ms)
        if cs.auto_deletion:
            intervals.append(cs.auto_expiry_ms)
        if intervals:
            self.update_interval_ms = min(intervals)
        # The monitor policies' next runs (SchedulingMonitor, one per policy).
        self._next_preemption = 0
        self._next_deletion = 0
        if cs.absolute:
            update_absolute(self.root, cs, self)
        if cs.label_absolute:
            update_absolute_labels(self.root, cs, self.calc, self.cluster, self.partition_resource)
        self.track_fair = _tracks_fair(cs)
        """A leaf orders its apps by the fair ordering policy, whose order is
        by cached usage (`LeafQueue.fair_seen`): both the leaf's assignment
        and a preemption policy read it."""

    def parent_queue_names(self) -> set[str]:
        """Non-root parent queues by short name (a leaf is another class in
        the REST view Hadoop's Global Policy Generator reads)."""
        return {
            q.conf.name for path, q in self.tree.items() if path != "root" and not q.conf.is_leaf
        }

    def leaf_metrics(self, path: str) -> QueueMetrics:
        q = self.queues.get(path)
        if q is None:
            q = self.queues[path] = QueueMetrics(path)
        return q

    # --- placement and app lifecycle ----------------------------------------------
    def place_app(self, app: RMApp) -> str | None:
        if self.root.num_apps >= self.cs.maximum_applications:
            # CapacityScheduler.addApplication rejects first of all when
            # isSystemAppsLimitReached: the root's getNumApplications (apps
            # submitted and not yet finished, over every queue) is at least
            # yarn.scheduler.capacity.maximum-applications.
            return (
                "Maximum system application limit reached,"
                f"cannot accept submission of application: {app.app_id}"
            )
        where = place(self.cs, app.queue, app.user, app.app_id)
        path = where.path
        if path is None:
            return where.reason
        if where.create:
            refusal = self.queue_manager.create(path, app, where.mapped)
            if refusal is not None:
                return refusal
        leaf = self.tree[path]
        assert isinstance(leaf, LeafQueue)
        refusal = self.queue_manager.submission_refusal(leaf, app, where.mapped)
        if refusal is not None:
            return refusal
        refusal = invalid_request(
            app.am_resource,
            component_min(leaf.conf.maximum_allocation, self.maximum),
            self.configured_maximum,
        )
        if refusal is not None:
            return refusal
        label = _label_expression(app) or leaf.conf.default_label
        if label and not leaf.conf.can_access(label):
            # SchedulerUtils.validateResourceRequest (checkQueueLabelExpression);
            # QueueInfo's queue name is the leaf's own name.
            name = path.rsplit(".", 1)[-1]
            return (
                f"Invalid resource request, queue={name} doesn't have permission to access "
                f"all labels in resource request. labelExpression of resource request={label}. "
                f"Queue labels={','.join(sorted(leaf.conf.accessible_labels))}"
            )
        if (
            label
            and label not in self.ctx.node_labels.exclusive
            and label not in self.partition_resource
        ):
            # SchedulerUtils.checkQueueLabelInLabelManager: a label the cluster
            # does not have (yet) is refused too, however the queue may use it.
            return f"Invalid label resource request, cluster do not contain , label= {label}"
        if label:
            self.app_label[app.app_id] = label
            self._labels_changed()
        app.queue = path
        self.app_leaf[app.app_id] = leaf
        if leaf.conf.dynamic:
            leaf.last_submitted_ms = self.ctx.now_ms()
        leaf.count_app(1)
        leaf.user(app.user).apps += 1
        return None

    def app_removed(self, app_id: str, queue: str) -> None:
        if self.multi_node is not None:
            self.multi_node.app_policy.pop(app_id, None)
        leaf = self.app_leaf.pop(app_id, None)
        if leaf is None:
            return
        if self.app_label:
            self.app_label.pop(app_id, None)
        leaf.count_app(-1)
        app = self.ctx.apps.get(app_id)
        u = leaf.users.get(app.user) if app is not None else None
        if u is not None:
            u.apps -= 1
            if u.apps <= 0 and u.used.is_zero() and all(r.is_zero() for r in u.used_in.values()):
                del leaf.users[u.name]

    def attempt_added(self, sapp: SchedulerApp) -> None:
        """CapacityScheduler.addApplicationAttempt: an attempt that would
        exceed a max-parallel-apps limit waits as non-runnable
        (CSMaxRunningAppsEnforcer.checkRunnabilityWithUpdate, trackApp)."""
        sapp.priority = min(sapp.priority, self.cs.max_application_priority)
        self.max_running.track(sapp, self.leaf_of(sapp))
        if self.multi_node is not None:
            self.multi_node.app_policy.setdefault(
                sapp.app_id, self.cs.multi_node.policy_of(self.leaf_of(sapp).path)
            )

    def attempt_removed(self, sapp: SchedulerApp) -> None:
        """CapacityScheduler.doneApplicationAttempt: the queue forgets the
        attempt, then the enforcer untracks it and, if it was runnable, lets
        waiting attempts run (updateRunnabilityOnAppRemoval)."""
        leaf = self.leaf_of(sapp)
        self._set_demand(sapp, leaf, False)
        leaf.remove_attempt(sapp)
        self.alloc.forget(sapp.attempt_id)
        self.activate(leaf)
        self.max_running.untrack(sapp, leaf)

    def demand_changed(self, sapp: SchedulerApp) -> None:
        leaf = self.leaf_of(sapp)
        has = sapp.info.has_pending()
        leaf.set_demanding(sapp, has)
        self._set_demand(sapp, leaf, has)

    def leaf_of(self, sapp: SchedulerApp) -> LeafQueue:
        leaf = self.tree[sapp.queue]
        assert isinstance(leaf, LeafQueue)
        return leaf

    def _set_demand(self, sapp: SchedulerApp, leaf: LeafQueue, on: bool) -> None:
        """Count, per queue, the attempts with outstanding asks, whether
        active or still waiting to be (the queue's pending resource, which
        AppSchedulingInfo adds every attempt's asks to): a queue with any is
        offered nodes (hasPendingResourceRequest), and its leaf then looks
        at its active apps even when none of them asks, publishing its
        limit as it does (computeUserLimitAndSetHeadroom)."""
        if on == (sapp.attempt_id in self.demanding):
            return
        delta = 1 if on else -1
        if on:
            self.demanding.add(sapp.attempt_id)
        else:
            self.demanding.discard(sapp.attempt_id)
        q: Queue | None = leaf
        while q is not None:
            self.demand[q.path] += delta
            q = q.parent

    def activate(self, leaf: LeafQueue) -> None:
        """LeafQueue.activateApplications. The AM limit reads the queue's
        current limit as last published (queueResourceLimitsInfo): the
        limit the leaf was last offered when it looked at an app, or the one
        the last cluster update gave it, not one computed now."""
        if self.cluster.is_zero():
            return
        env = self.default_env
        offered = leaf.offered
        current = offered if offered is not None else self._limit_from_top(leaf)
        if self.labelled:
            activated = leaf.activate(env, current, self._am_env)
        else:
            activated = leaf.activate(self, current)
        for sapp in activated:
            self._set_demand(sapp, leaf, sapp.info.has_pending())
        for sapp in leaf.pending:  # activation holds apps back only for AM limits
            self.activities.record(sapp.app_id, act.AM_LIMIT)

    def _limit_from_top(self, leaf: LeafQueue) -> Resource:
        """The limit the root's updateClusterResource hands the leaf
        (getResourceLimitsOfChild down the tree), capped by its maximum
        rounded down to the minimum allocation (updateCurrentResourceLimits)."""
        env = self.default_env
        return rm.rmin(
            self.calc, self.cluster, leaf.max_resource(env), self.current_limit(leaf, env)
        )

    def _activate_all(self) -> None:
        """root.updateClusterResource: every leaf publishes the limit it is
        handed from the top (refreshAfterResourceCalculation,
        setQueueResourceLimitsInfo), then activates what that allows."""
        for q in self.tree.values():
            if isinstance(q, LeafQueue):
                q.offered = self._limit_from_top(q)
                self.activate(q)

    def _pending_in(self, leaf: LeafQueue, partition: str) -> bool:
        """Whether an app of the leaf asks for `partition` (its pending
        resource there, as the queue's ResourceUsage keeps it: every
        attempt's asks count, one held back by max-parallel-apps too)."""
        labels = self.app_label
        for apps in (leaf.active, leaf.pending, leaf.non_runnable):
            for a in apps:
                if a.info.has_pending() and labels.get(a.app_id, "") == partition:
                    return True
        return False

    def _am_env(self, sapp: SchedulerApp) -> Env:
        """The `Env` of the partition an attempt's AM asks for."""
        label = self.app_label.get(sapp.app_id, "") if self.app_label else ""
        return self.env_for(label, False) if label else self.default_env

    # --- node labels ----------------------------------------------------------------
    def env_for(self, partition: str, ignore: bool) -> Env:
        """The `Env` of a labelled partition, in RESPECT (or, `ignore`,
        IGNORE) partition-exclusivity mode."""
        env = self.envs.get((partition, ignore))
        if env is None:
            total = self.partition_resource.get(partition, ZERO)
            env = self.envs[(partition, ignore)] = Partition(
                partition, self.calc, total, self.minimum, ignore
            )
        return env

    def _labels_changed(self) -> None:
        """A labelled node came or went, or the first labelled app: the
        partitions' resources (the default one's is what no label holds)
        and their `Env`s follow."""
        self.mutations += 1
        self.labelled = self.alloc.labelled = bool(self.node_partition or self.app_label)
        self.envs = {}
        if not self.labelled:
            self.default_env = self
            return
        labelled = ZERO
        for total in self.partition_resource.values():
            labelled = labelled + total
        self.default_env = Partition("", self.calc, self.cluster - labelled, self.minimum)

    def on_NODE_ADDED(self, node_id: str, rmnode: RMNode) -> None:
        """A node's first label is its partition (`node_labels.node_added`)."""
        if rmnode.labels:
            node_labels.node_added(self, node_id, rmnode.labels[0], rmnode.resource)
        super().on_NODE_ADDED(node_id, rmnode)

    def on_NODE_REMOVED(self, node_id: str, rmnode: RMNode) -> None:
        node = self.nodes.get(node_id)
        super().on_NODE_REMOVED(node_id, rmnode)
        name = self.node_partition.pop(node_id, "") if node is not None else ""
        if name:
            assert node is not None
            self.partition_resource[name] = self.partition_resource[name] - node.total
            self._labels_changed()
            if self.cs.label_absolute:
                update_absolute_labels(
                    self.root, self.cs, self.calc, self.cluster, self.partition_resource
                )
            self._activate_all()

    def node_added(self, node: SchedulerNode) -> None:
        self._cluster_changed(node.node_id in self.node_partition)

    def node_removed(self, node: SchedulerNode) -> None:
        self._cluster_changed()

    def on_NODE_RESOURCE_UPDATE(self, node_id: str, rmnode: Any) -> None:
        node = self.nodes.get(node_id)
        name = self.node_partition.get(node_id, "") if node is not None else ""
        if name:
            assert node is not None
            self.partition_resource[name] = (
                self.partition_resource[name] - node.total + rmnode.resource
            )
        super().on_NODE_RESOURCE_UPDATE(node_id, rmnode)
        self._cluster_changed()

    def on_NODE_LABELS_UPDATE(self, target: str, changed: dict[str, str]) -> None:
        """CapacityScheduler.updateNodeLabelsAndQueueResource: the nodes take
        their new partitions with their containers' usage (`node_labels`),
        the queues' capacities follow (root updateClusterResource) and
        waiting apps may start."""
        node_labels.relabel(self, changed)
        if changed:
            self._cluster_changed(True)

    def queue_using_label(self, label: str) -> str | None:
        return node_labels.queue_using_label(self.cs, label)

    def _cluster_changed(self, labels: bool = False) -> None:
        """The cluster's size changed: the limit arithmetic may change, the
        partitions' resources follow (`labels`: the node that came has a
        label), queues in resources get new effective capacities
        (root.updateClusterResource), and waiting apps may now start."""
        self.limits = rm.limits_for(self.calc, self.cluster, self.minimum)
        if self.multi_node is not None:
            self.multi_node.invalidate()
        if self.labelled or labels:
            self._labels_changed()
        if self.cs.absolute:
            update_absolute(self.root, self.cs, self)
        if self.cs.label_absolute:
            update_absolute_labels(
                self.root, self.cs, self.calc, self.cluster, self.partition_resource
            )
        self._recompute_usage_ratios()
        self._activate_all()

    def _recompute_usage_ratios(self) -> None:
        """Each leaf's updateClusterResource recalculates its users' usage
        ratios (recalculateQueueUsageRatio)."""
        cluster = self.default_env.cluster
        for q in self.tree.values():
            if isinstance(q, LeafQueue):
                q.recompute_usage_ratio(self.calc, cluster)

    # --- usage accounting ---------------------------------------------------------
    def _charge(
        self, app_id: str, user: str, delta: Resource, reserved: Resource, node_id: str = ""
    ) -> None:
        """Charge the app's leaf and user in the partition of the node
        (`node_id`) the container is on."""
        leaf = self.app_leaf.get(app_id)
        if leaf is None:
            return
        if self.node_partition:
            partition = self.node_partition.get(node_id, "")
            if partition:
                leaf.charge_in(partition, delta, reserved)
                u = leaf.user(user)
                u.used_in[partition] = u.used_in.get(partition, ZERO) + delta
                leaf.touch()
                return
        leaf.charge(delta, reserved)
        u = leaf.user(user)
        used = u.used
        if not used.extra and not delta.extra:
            u.used = rm.plain(used.memory + delta.memory, used.vcores + delta.vcores)
        else:
            u.used = used + delta
        leaf.update_usage_ratio(u, self.calc, self.default_env.cluster)
        leaf.touch()

    def container_allocated(self, c: RMContainer, sapp: SchedulerApp, node: SchedulerNode) -> None:
        super().container_allocated(c, sapp, node)
        self._charge(sapp.app_id, sapp.user, c.resource, ZERO, c.node_id)
        if self.track_fair and not self.alloc.fulfilling:
            self._fair_changed(c.app_id, c.attempt_id)

    def _update_asks(self, sapp: SchedulerApp, asks: list[Ask]) -> None:
        super()._update_asks(sapp, asks)
        # CapacityScheduler.allocate: an allocate that updates an off-switch
        # ask, from an app past its AM container, tells the ordering policy
        # its demand changed; only the size-based fair policy re-sorts on it.
        if self.track_fair and not sapp.am_pending:
            leaf = self.app_leaf.get(sapp.app_id)
            if (
                leaf is not None
                and leaf.conf.ordering_policy == "fair"
                and leaf.conf.fair_size_based_weight
                and any(a.name == ANY for a in asks)
            ):
                leaf.fair_changed.add(sapp.attempt_id)

    def _fair_changed(self, app_id: str, attempt_id: str) -> None:
        """FairOrderingPolicy.containerAllocated/containerReleased: the app
        is re-sorted at its queue's next assignment."""
        leaf = self.app_leaf.get(app_id)
        if leaf is not None and leaf.conf.ordering_policy == "fair":
            leaf.fair_changed.add(attempt_id)

    def container_released(self, c: RMContainer, sapp: SchedulerApp | None) -> None:
        super().container_released(c, sapp)
        app = self.ctx.apps.get(c.app_id)
        if app is not None:
            self._charge(c.app_id, app.user, ZERO - c.resource, ZERO, c.node_id)
        if self.preemption is not None:
            self.preemption.forget(c.container_id)
        if self.track_fair:
            self._fair_changed(c.app_id, c.attempt_id)

    def reserve(
        self, sapp: SchedulerApp, node: SchedulerNode, priority: int, ask: Ask
    ) -> RMContainer:
        c = super().reserve(sapp, node, priority, ask)
        self._charge(sapp.app_id, sapp.user, c.resource, c.resource, node.node_id)
        self.alloc.reservations_changed(sapp, priority)
        if self.track_fair:
            self._fair_changed(sapp.app_id, sapp.attempt_id)
        return c

    def unreserve(self, sapp: SchedulerApp | None, node: SchedulerNode) -> None:
        c = node.reserved
        super().unreserve(sapp, node)
        if c is not None and sapp is not None:
            self.alloc.reservations_changed(sapp, c.priority)
        if c is not None:
            app = self.ctx.apps.get(c.app_id)
            if app is not None:
                self._charge(c.app_id, app.user, ZERO - c.resource, ZERO - c.resource, node.node_id)
            if self.track_fair and not self.alloc.fulfilling:
                self._fair_changed(c.app_id, c.attempt_id)

    # --- allocation ---------------------------------------------------------------
    def max_allocation(self, sapp: SchedulerApp) -> tuple[Resource, str]:
        # CapacityScheduler.getMaximumResourceCapability(queue): the queue's
        # configured maximum, capped by the largest registered node. The
        # same object while neither changes, so `_checked` keeps its answers.
        configured = self.tree[sapp.queue].conf.maximum_allocation
        kept = self._max_allocation.get(sapp.queue)
        if kept is not None and kept[0] is configured and kept[1] is self.maximum:
            return kept[2], f" of queue {sapp.queue}"
        limit = component_min(configured, self.maximum)
        self._max_allocation[sapp.queue] = (configured, self.maximum, limit)
        return limit, f" of queue {sapp.queue}"

    def skip_quiet_node_update(self, node_id: str) -> bool:
        """The node holds no reservation, and either no active attempt has
        an outstanding ask or the node has no room for a minimum
        allocation: `schedule` assigns only while both hold, so the pass
        would not look at a single queue. Under asynchronous scheduling a
        heartbeat never assigns."""
        if self.async_scheduling is not None:
            return True
        if self.multi_node is not None:
            # Any node's heartbeat offers its whole partition.
            return not self.demand[self.root.path] and not self.reserved_nodes
        node = self.nodes.get(node_id)
        if node is None or node.reserved is not None:
            return False
        if not self.demand[self.root.path]:
            return True
        return self.calc.divide_and_count(node.available, self.minimum) < 1

    def schedule(self, node: SchedulerNode) -> None:
        if self.async_scheduling is None:
            self._offer(node, True)

    def sort_nodes(self) -> None:
        """The multi-node sorter's run (MultiNodeSorter.reSortClusterNodes):
        a new order is a change an asynchronous pass must see."""
        if self.multi_node is not None and self.multi_node.sort():
            self.mutations += 1

    def async_pass(self, tick_ms: int) -> None:
        """One tick of asynchronous scheduling (CapacityScheduler.schedule
        per thread; emu.rm.scheduler.async_scheduling): the nodes in
        getAllNodes' order from each drawn start, each offered once, a node
        skipped when its last heartbeat is older than the skip interval or
        when `skip_quiet_node_update`'s proof holds for it. Once no attempt
        asks for anything and no node holds a reservation, no later offer
        can do anything either."""
        passes = self.async_scheduling
        assert passes is not None
        if self.multi_node is not None:
            self._async_pass_partitions(passes, tick_ms)
            return
        nodes = self.tracked_nodes()
        if not nodes:
            return
        starts = passes.starts(tick_ms, len(nodes))
        alloc = self.alloc
        before = (self.mutations, alloc.touches)
        beats, now, skip = self.heartbeat_ms, self.ctx.now_ms(), self.skip_node_ms
        demand, root, shortcuts = self.demand, self.root.path, self.shortcuts
        count, minimum = self.calc.divide_and_count, self.minimum
        for start in starts:
            for i in walk(len(nodes), start):
                if shortcuts and not demand[root] and not self.reserved_nodes:
                    break
                node = nodes[i]
                if now - beats[node.node_id] > skip:
                    continue
                if shortcuts and node.reserved is None and count(node.available, minimum) < 1:
                    continue
                self._offer(node, False)
        if (self.mutations, alloc.touches) == before and not self.labelled:
            # With node labels a leaf publishes its limit for the partition
            # of each node it is offered (the AM limit reads the last one),
            # so two passes from different start nodes that change nothing
            # else can still leave different limits: none is quiet.
            self._quiet_at = self.mutations

    def _async_pass_partitions(self, passes: AsyncScheduling, tick_ms: int) -> None:
        """CapacityScheduler.schedule with multi-node placement: the
        partitions in ClusterNodeTracker.getPartitions' order from each drawn
        start (the start twice, as for nodes), each offered as its recently
        heartbeated nodes once per such node. An offer that changes nothing
        leaves the next one of the same partition nothing to do (the same
        candidates, the same state): the rest are skipped. So is the rest
        of an offer that changed only delay-scheduling counts already past
        every threshold (`allocator.saturated`): each would add the same
        again, which is added at once."""
        mn = self.multi_node
        assert mn is not None
        partitions = mn.partitions()
        if not partitions:
            return
        alloc, shortcuts, demand, root = self.alloc, self.shortcuts, self.demand, self.root.path
        before = (self.mutations, alloc.touches)
        now = self.ctx.now_ms()
        for start in passes.starts(tick_ms, len(partitions)):
            for i in walk(len(partitions), start):
                partition = partitions[i]
                nodes = mn.candidates(partition, now)
                for k in range(len(nodes)):
                    if shortcuts and not demand[root] and not self.reserved_nodes:
                        break
                    if not shortcuts:
                        self._offer_nodes(nodes, partition, False)
                        continue
                    offer_before = (self.mutations, alloc.touches)
                    alloc.journal = {}
                    try:
                        self._offer_nodes(nodes, partition, False)
                        quiet = (self.mutations, alloc.touches) == offer_before
                        repeats = (
                            not quiet
                            and self.mutations == offer_before[0]
                            and allocator.saturated(alloc)
                        )
                        if repeats:
                            allocator.apply_again(alloc, len(nodes) - k - 1)
                    finally:
                        alloc.journal = None
                    if quiet or repeats:
                        break
        if (self.mutations, alloc.touches) == before and not self.labelled:
            self._quiet_at = self.mutations

    def _offer(self, node: SchedulerNode, heartbeat: bool) -> None:
        """CapacityScheduler.allocateContainersToNode: a reserved node's
        reservation tried, else new containers, one after another on a node
        heartbeat while the per-heartbeat limits allow, once in an
        asynchronous pass. With multi-node placement the offer is every
        recently heartbeated node of the node's partition (`_offer_nodes`)."""
        if self.multi_node is not None:
            partition = self.node_partition.get(node.node_id, "")
            nodes = self.multi_node.candidates(partition, self.ctx.now_ms())
            self._offer_nodes(nodes or [node], partition, heartbeat)
            return
        self.alloc.cluster = self.cluster
        if node.reserved is not None:
            allocator.fulfil_reservation(self.alloc, node)
            return
        minimum, count = self.minimum, self.calc.divide_and_count
        offswitch = assigned = 0
        labelled = self.labelled
        while self.demand[self.root.path] and count(node.available, minimum) >= 1:
            if labelled:
                a = self._assign_partitioned(node, self.node_partition.get(node.node_id, ""))
            else:
                a = self._assign(self.root, node, self.cluster, self)
            if not self._more(a, heartbeat, offswitch, assigned):
                return
            offswitch += a.locality == OFF_SWITCH
            assigned += 1

    def _more(self, a: Assignment, heartbeat: bool, offswitch: int, assigned: int) -> bool:
        """CapacityScheduler.canAllocateMore after assignment `a` (counted
        with `offswitch` and `assigned` before it): only on a node heartbeat,
        after a container (not a reservation), within the off-switch and
        assignment limits."""
        cs, alloc = self.cs, self.alloc
        if alloc.rejected:
            # Hadoop counts a refused proposal as the heartbeat's
            # assignment and tries again while its limits allow; with
            # no limit on assignments that would never end.
            alloc.rejected = False
            if cs.max_assignments_per_heartbeat == -1:
                return False
        if not a.assigned or not heartbeat:
            return False
        if a.locality == OFF_SWITCH:
            offswitch += 1
        if a.outcome == allocator.RESERVED:
            return False
        assigned += 1
        if offswitch >= cs.offswitch_per_heartbeat or not cs.multiple_assignments:
            return False
        return cs.max_assignments_per_heartbeat == -1 or assigned < cs.max_assignments_per_heartbeat

    def _offer_nodes(self, nodes: list[SchedulerNode], partition: str, heartbeat: bool) -> None:
        """CapacityScheduler.allocateContainersOnMultiNodes over the candidate
        `nodes` of `partition`, repeated on a node heartbeat as `_offer` is:
        each reserved node's reservation tried, then the queues walked once
        for all of them, each app walking its preferred nodes (RegularContainerAllocator.allocate).
        A lone candidate is offered as a single node is (getSingleNode): the
        queues are walked only if it has no reservation and room."""
        alloc, count, minimum = self.alloc, self.calc.divide_and_count, self.minimum
        mn = self.multi_node
        assert mn is not None
        alloc.cluster = self.cluster
        now = self.ctx.now_ms()
        single = nodes[0] if len(nodes) == 1 else None

        def preferred(sapp: SchedulerApp) -> list[SchedulerNode]:
            return mn.preferred(sapp.app_id, nodes, partition, now)

        def walk_allowed() -> bool:
            """Some attempt asks, and a lone candidate has no reservation
            and room (ParentQueue.canAssign)."""
            return bool(self.demand[self.root.path]) and not (
                single is not None
                and (single.reserved is not None or count(single.available, minimum) < 1)
            )

        if not heartbeat:
            # Asynchronous: the offer's proposals wait in the committer's
            # backlog until it ends, the reserved nodes' first.
            proposals: list[allocator.Proposal] = []
            unconfirmed = alloc.unconfirmed
            for n in nodes:
                if n.reserved is not None:
                    p = allocator.propose_fulfilment(alloc, n)
                    if p is not None:
                        proposals.append(p)
                        if p.outcome == allocator.FULFIL and p.sapp is not None and p.ask:
                            key = p.sapp.attempt_id
                            unconfirmed[key] = unconfirmed.get(key, ZERO) + p.ask.capability
            if walk_allowed():
                alloc.preferred, alloc.proposing = preferred, proposals
                try:
                    self._assign_offered(single, partition)
                finally:
                    alloc.preferred, alloc.proposing = None, None
            unconfirmed.clear()
            for p in proposals:
                alloc.cluster = self.cluster
                allocator.commit(alloc, p)
            alloc.rejected = False  # read only between a heartbeat's offers
            return
        offswitch = assigned = 0
        while True:
            for n in nodes:
                if n.reserved is not None:
                    alloc.cluster = self.cluster
                    allocator.fulfil_reservation(alloc, n)
            if not walk_allowed():
                return
            alloc.preferred = preferred
            try:
                a = self._assign_offered(single, partition)
            finally:
                alloc.preferred = None
            if not self._more(a, heartbeat, offswitch, assigned):
                return
            offswitch += a.locality == OFF_SWITCH
            assigned += 1

    def _assign_offered(self, single: SchedulerNode | None, partition: str) -> Assignment:
        """The queues walked once for the offered nodes of `partition`."""
        if self.labelled:
            return self._assign_partitioned(single, partition)
        return self._assign(self.root, single, self.cluster, self)

    def _assign_partitioned(self, node: SchedulerNode | None, partition: str) -> Assignment:
        """CapacityScheduler.allocateOrReserveNewContainers with node labels:
        the partition is offered respecting exclusivity (only asks for that
        partition, within the queues' capacities there); when nothing is
        placed and the partition is non-exclusive, it is offered again
        ignoring exclusivity, to default-partition asks, each queue up to the
        whole partition. `node` is the node offered, None for several
        (multi-node placement)."""
        alloc = self.alloc
        alloc.node_partition = partition
        alloc.ignore_exclusivity = False
        if not partition:
            env = self.default_env
            return self._assign(self.root, node, env.cluster, env)
        env = self.env_for(partition, False)
        a = self._assign(self.root, node, env.cluster, env)
        if a.assigned or self.exclusive.get(partition, True):
            return a
        alloc.ignore_exclusivity = True
        try:
            env = self.env_for(partition, True)
            return self._assign(self.root, node, self.default_env.cluster, env)
        finally:
            alloc.ignore_exclusivity = False

    def _accepts(self, sapp: SchedulerApp, capability: Resource) -> bool:
        """AbstractCSQueue.accept for a new container (or reservation) of
        net size `capability` on the node being offered: the leaf and every
        ancestor stay within their maximum in the node's partition once it
        is added (ignoring exclusivity: the whole partition), every resource
        type compared (Resources.fitsIn). The walk's headroom does not cover
        this: under DRF a queue's limit is the dominant-share minimum of its
        maximum and what its parent offers (getCurrentLimitResource,
        getResourceLimitsOfChild), which can keep more memory than the root
        has left; in a labelled partition an ancestor's other children use
        the partition too."""
        alloc = self.alloc
        p = alloc.node_partition
        env = self.env_for(p, alloc.ignore_exclusivity) if p else self.default_env
        calc = self.calc
        q: Queue | None = self.leaf_of(sapp)
        while q is not None:
            limit = env.cluster if env.ignore else q.effective_max(env)
            if not calc.fits(q.used_of(p) + capability, limit):
                return False
            q = q.parent
        return True

    def _can_assign(
        self, q: Queue, limit: Resource, unreservable: Resource = ZERO, env: Env | None = None
    ) -> tuple[bool, Resource]:
        """AbstractCSQueue.canAssignToThisQueue: (below the limit, counting
        out reservations that could be given up?, headroom). In a labelled
        partition, usage there counts; ignoring exclusivity, the limit is
        the whole partition (getCurrentLimitResource)."""
        if env is None or env is self:
            return self.limits.can_assign(
                self.cluster,
                q.effective_max(self),
                limit,
                q.used,
                unreservable,
                self.cs.reservations_continue_looking,
            )
        p = env.partition
        queue_max = env.cluster if env.ignore else q.effective_max(env)
        # Amounts are the partition's; comparisons are over the whole cluster
        # (canAssignToThisQueue's clusterResource), which tells under DRF.
        return self.limits.can_assign(
            self.cluster,
            queue_max,
            env.cluster if env.ignore else limit,
            q.used if not p else q.used_in.get(p, ZERO),
            unreservable,
            self.cs.reservations_continue_looking,
        )

    def child_limit(
        self, parent: ParentQueue, child: Queue, parent_limit: Resource, env: Env | None = None
    ) -> Resource:
        """ParentQueue.getResourceLimitsOfChild: the parent's limit, capped by
        its own effective maximum, less what the parent uses, plus what the
        child uses, rounded down to the minimum allocation. The child's own
        maximum is not applied here but by the child (getCurrentLimitResource,
        unrounded), so a child below its maximum can show a headroom of less
        than one container."""
        if env is None or env is self:
            return self.limits.child_limit(
                self.cluster,
                parent_limit,
                parent.effective_max(self),
                parent.used,
                child.used,
                self.minimum,
            )
        p = env.partition
        return self.limits.child_limit(
            self.cluster,
            parent_limit,
            parent.effective_max(env),
            parent.used_of(p),
            child.used_of(p),
            self.minimum,
        )

    def current_limit(self, leaf: Queue, env: Env | None = None) -> Resource:
        """The limit a leaf is offered from the root down, capped by its
        maximum (in the default partition: `env`, or the scheduler's own
        while no label is known)."""
        e: Env = self if env is None else env
        chain: list[Queue] = []
        q: Queue | None = leaf
        while q is not None:
            chain.append(q)
            q = q.parent
        steps = [
            (chain[i].effective_max(e), chain[i].used, chain[i - 1].used)
            for i in range(len(chain) - 1, 0, -1)
        ]
        leaf_max = leaf.effective_max(e)
        return e.limits.current_limit(e.cluster, steps, leaf_max, self.minimum)

    def _assign(
        self, q: Queue, node: SchedulerNode | None, limit: Resource, env: Env
    ) -> Assignment:
        if not self.demand[q.path]:
            return NOTHING
        if (
            env is not self
            and env.partition
            and not env.ignore
            and not q.conf.can_access(env.partition)
        ):
            return NOTHING  # isAccessibleToPartition
        if isinstance(q, LeafQueue):
            return self._assign_leaf(q, node, limit, env)
        assert isinstance(q, ParentQueue)
        # What the parent could give up is its default partition's
        # reservations (its QueueMetrics' reserved), whatever the node's.
        ok, _ = self._can_assign(q, limit, q.reserved, env)
        if not ok:
            return NOTHING
        result = NOTHING
        blocked = ZERO
        for child in q.sorted_children(env):
            a = self._assign(child, node, self.child_limit(q, child, limit, env), env)
            if a.assigned:
                return a
            if a.outcome == QUEUE_LIMIT:
                if result.outcome != QUEUE_LIMIT:
                    result = a  # the first blocked child's (assignContainersToChildQueues)
                # A blocked leaf's headroom, or what a blocked parent's own
                # children were blocked by (getBlockedHeadroom), comes off
                # the limit the later children are offered. getResourceLimitsOfChild
                # has already capped the parent's limit by its maximum (it
                # sets it): the blocked headroom comes off the capped limit.
                sub = rm.rmax(self.calc, self.cluster, a.headroom, ZERO)
                blocked = blocked + sub
                capped = rm.rmin(self.calc, self.cluster, limit, q.effective_max(self))
                limit = capped - sub
        if result.outcome == QUEUE_LIMIT:
            # Its parent takes this parent's blocked headroom, the sum of its
            # children's (ResourceLimits.addBlockedHeadroom).
            return Assignment(QUEUE_LIMIT, result.locality, blocked)
        return result

    def _assign_leaf(
        self, leaf: LeafQueue, node: SchedulerNode | None, limit: Resource, env: Env
    ) -> Assignment:
        """LeafQueue.assignContainers: the first app (in order) that takes a
        container or a reservation wins; users above the user limit wait."""
        calc, cluster = self.calc, self.cluster  # canAssignToUser's comparisons
        looking = self.cs.reservations_continue_looking
        user_limit = leaf.user_limit(env)
        weighted = bool(leaf.conf.user_weights)
        users = leaf.users
        partition = "" if env is self else env.partition
        labelled = self.labelled
        if labelled and not self._pending_in(leaf, "" if env.ignore else partition):
            return NOTHING  # hasPendingResourceRequest for the partition looked at
        check_queue, headroom = True, ZERO
        record = self.activities.record
        node_id = node.node_id if node is not None else ""
        order = self._scheduling_order(leaf)
        for i, sapp in enumerate(order):
            # getCurrentReservation: the app's reservations in the default
            # partition, whatever the node's.
            reserved = (
                allocator.reserved_in(self.node_partition, sapp, "")
                if looking and sapp.reservations
                else ZERO
            )
            if check_queue:
                # The queue's limit is checked with the first app in order,
                # whether or not it asks for anything (LeafQueue.assignContainers
                # checks before the app's own pending-request check): a queue
                # at its limit stays closed unless that app's reservations
                # could make room.
                ok, headroom = self._can_assign(leaf, limit, reserved, env)
                if not ok:
                    # Why-pending goes to the first app that waits for something.
                    waiting = next((a for a in order[i:] if a.info.priorities), None)
                    if waiting is not None:
                        why = label_waits.queue_max(leaf, "" if env.ignore else partition)
                        record(waiting.app_id, why, node_id)
                    return NOTHING
                check_queue = looking and not reserved.is_zero()
                # computeUserLimitAndSetHeadroom publishes the limit the leaf
                # was offered (capped by its default-partition maximum,
                # updateCurrentResourceLimits) as the current limit its AM
                # limit reads until it is next published.
                leaf.offered = rm.rmin(calc, cluster, leaf.max_resource(self.default_env), limit)
            if not sapp.info.priorities:
                continue
            must_unreserve = ZERO
            user = users[sapp.user]
            user_used = user.used if not partition else user.used_in.get(partition, ZERO)
            if weighted:
                user_limit = leaf.user_limit_for(env, sapp.user)
            if rm.gt(calc, cluster, user_used, user_limit):
                # canAssignToUser: the exchange reads the user's usage in the
                # default partition, whatever the node's.
                if not (looking and rm.le(calc, cluster, user.used - reserved, user_limit)):
                    record(sapp.app_id, act.USER_LIMIT, node_id)
                    continue
                must_unreserve = user_used - user_limit
            outcome, locality = allocator.assign_app(
                self.alloc, sapp, node, headroom, must_unreserve
            )
            record(sapp.app_id, _REASONS.get(outcome, act.NO_FIT), node_id)
            if outcome in (allocator.ALLOCATED, allocator.RESERVED):
                return Assignment(outcome, locality)
            if outcome in (allocator.APP_SKIPPED, allocator.LOCALITY_WAIT):
                continue
            if outcome == allocator.QUEUE_SKIPPED:
                return Assignment(QUEUE_LIMIT, locality, headroom)
            return NOTHING
        return NOTHING

    def _scheduling_order(self, leaf: LeafQueue) -> list[SchedulerApp]:
        if leaf.conf.ordering_policy == "fifo":
            return list(leaf.active)
        # getAssignmentIterator re-sorts the apps whose containers came or
        # went since: the cached order is current for them again.
        self.reorder_fair(leaf)
        # The skip list is ordered by the usage each app had when it was
        # last re-sorted: an app given a container from its reservation is
        # not re-sorted (AbstractLeafQueue.apply calls containerAllocated
        # only for new allocations and reservations), so its place lags.
        return sorted(leaf.active, key=leaf.fair_key(seen=True))

    def reorder_fair(self, leaf: LeafQueue) -> None:
        """AbstractComparatorOrderingPolicy.reorderScheduleEntities, which
        getAssignmentIterator and getPreemptionIterator both call first: the
        apps whose containers came or went since are re-sorted by their
        usage now."""
        if not leaf.fair_changed:
            return
        apps = self.apps
        for attempt_id in leaf.fair_changed:
            a = apps.get(attempt_id)
            if a is not None:
                leaf.fair_seen[attempt_id] = (a.used, a.pending)
        leaf.fair_changed.clear()

    # --- what AMs and clients see -------------------------------------------------
    def headroom(self, sapp: SchedulerApp) -> Resource:
        leaf = self.leaf_of(sapp)
        env = self.default_env
        return leaf.headroom(env, sapp.user, self.current_limit(leaf, env), self.root.used)

    def queue_metrics(self, name: str) -> QueueMetrics:
        return queue_reports.queue_metrics(self, name)

    def queue_info(self, name: str) -> list[dict[str, Any]]:
        return queue_reports.queue_info(self, name)

    def partition_usage(self) -> list[PartitionUsage]:
        return queue_reports.partition_usage(self)

    # --- periodic work and refresh ------------------------------------------------
    def update(self) -> None:
        """The scheduling monitor's policies, each on the update tick nearest
        its own interval (the tick is the shortest of them)."""
        now, slack = self.ctx.now_ms(), (self.update_interval_ms or 0) // 2
        self.mutations += 1
        if self.preemption is not None and now + slack >= self._next_preemption:
            self._next_preemption = now + self.cs.preemption.monitoring_interval_ms
            self.preemption.edit_schedule(self)
        if self.cs.auto_deletion and now + slack >= self._next_deletion:
            self._next_deletion = now + self.cs.auto_expiry_ms
            self.queue_manager.delete_idle_queues()

    def preemption_snapshot(self) -> TempQueue:
        """The queue tree as the preemption policy sees it this round."""
        return preemption_snapshot.snapshot(self)

    def refresh(self, properties: Mapping[str, object]) -> str | None:
        """Apply `properties` over the running configuration; refuse (and keep
        running the old one) if the result is invalid or removes a queue."""
        self.mutations += 1
        conf = Configuration()
        conf.update(self.conf)
        for k, v in sorted(properties.items()):
            conf.set(k, str(v).lower() if isinstance(v, bool) else v, "refresh_queues")
        checked = self.queue_manager.reinitialize(conf)
        if isinstance(checked, str):
            return checked
        cs, auto_conf = checked
        self._apply(conf, cs)
        self.queue_manager.conf = auto_conf
        return None

    def _apply(self, conf: Configuration, cs: CapacityConf) -> None:
        self.conf, self.cs = conf, cs
        self.calc = calculator(cs.calculator)
        self.limits = rm.limits_for(self.calc, self.cluster, self.minimum)
        self.alloc.calc, self.alloc.cs = self.calc, cs
        if self.labelled:
            self._labels_changed()
        self.tree, self.root = build(cs, self.leaf_metrics, self.tree)
        if cs.absolute:
            update_absolute(self.root, cs, self)
        if cs.label_absolute:
            update_absolute_labels(self.root, cs, self.calc, self.cluster, self.partition_resource)
        for path in [p for p in self.queues if p in cs.queues and not cs.queues[p].is_leaf]:
            del self.queues[path]
        self._recount()
        self._recompute_usage_ratios()
        if self.preemption is not None:
            self.preemption.conf = cs.preemption
            if not cs.preemption.enabled:
                self.preemption = None
        self.track_fair = _tracks_fair(cs)
        self._activate_all()
        self.max_running.update_on_reload()

    def _recount(self) -> None:
        """Recompute parents' usage, app counts and demand from the leaves."""
        self.demand = dict.fromkeys(self.tree, 0)
        self.demanding = set()
        recount_parents(self.tree, self.labelled)
        for q in self.tree.values():
            if isinstance(q, LeafQueue):
                for apps in (q.active, q.pending, q.non_runnable):
                    for sapp in apps:
                        self._set_demand(sapp, q, sapp.info.has_pending())


def _tracks_fair(cs: CapacityConf) -> bool:
    return any(q.ordering_policy == "fair" for q in cs.queues.values() if q.is_leaf)


def _label_expression(app: RMApp) -> str:
    """The app's node label expression: an SLS job's `job.label.expression`,
    carried in its submission context ("" for none)."""
    job = app.context.get("job") if isinstance(app.context, dict) else None
    params = job.get("params") if isinstance(job, dict) else None
    label = params.get("label_expression") if isinstance(params, dict) else None
    return str(label).strip() if label else ""

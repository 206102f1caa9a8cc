"""The FairScheduler: Hadoop's FairScheduler on emu's common scheduler layer.

On each node heartbeat the node is first offered to apps it was freed for
by preemption, then to the app holding a reservation on it, and otherwise
to the root queue, which offers it depth first down the policy-sorted tree
(one container per heartbeat unless `yarn.scheduler.fair.assignmultiple`,
then up to `max.assign` or, with `dynamic.max.assign`, until half of what
was free is handed out). Every `update-interval-ms` the scheduler
recomputes demands and fair shares, identifies starved apps and preempts
for them, and checks whether the allocation file changed (every 10 s of
simulated time, as Hadoop's reload thread). A bad new file leaves the old
one in force; the failure is logged and recorded in the event log.

Queue names: `sls_queue_1` and `root.sls_queue_1` are the same queue;
`default` means the placement policy's default (`root.default` unless
configured otherwise). Queue reports (`queue_info`) carry each queue's fair
and steady fair shares, min/max resources, usage and demand.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import structlog
from mypy_extensions import mypyc_attr

from emu.errors import InputError
from emu.resources import (
    ZERO,
    DominantResourceCalculator,
    Resource,
    component_min,
)
from emu.rm.scheduler import activities as act
from emu.rm.scheduler.abstract_scheduler import Scheduler, SchedulerError
from emu.rm.scheduler.app_scheduling_info import Ask
from emu.rm.scheduler.fair import allocation_file
from emu.rm.scheduler.fair.allocation_file import AllocationConfiguration
from emu.rm.scheduler.fair.app import FSApp
from emu.rm.scheduler.fair.arith import (
    f32,
    fits_in,
    is_none,
    jdiv,
    multiply,
    subtract_non_negative,
    unbounded,
)
from emu.rm.scheduler.fair.fs_leaf_queue import FSLeafQueue
from emu.rm.scheduler.fair.fs_parent_queue import FSParentQueue
from emu.rm.scheduler.fair.fs_queue import (
    CONTAINER_RESERVED,
    NONE,
    FSQueue,
    InvalidQueueName,
    ensure_root_prefix,
)
from emu.rm.scheduler.fair.max_running import MaxRunningAppsEnforcer
from emu.rm.scheduler.fair.orderings import KeptAvailable, KeptState, QuietNodes, asks_grow
from emu.rm.scheduler.fair.placement import PlacementError, PlacementPolicy
from emu.rm.scheduler.fair.preemption import NodePreemption, Preemption
from emu.rm.scheduler.fair.queue_manager import QueueManager
from emu.rm.scheduler.fair.settings import FairSettings
from emu.rm.scheduler.scheduler_node import SchedulerNode
from emu.trio_time import current_time

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from emu.rm.app import RMApp
    from emu.rm.container import RMContainer
    from emu.rm.context import RMContext
    from emu.rm.dispatcher import Event
    from emu.rm.node import RMNode
    from emu.rm.scheduler.abstract_scheduler import Allocation
    from emu.rm.scheduler.scheduler_app import SchedulerApp

log = structlog.get_logger("emu.rm.fair")

ALLOC_RELOAD_INTERVAL_MS = 10_000
RESERVATION_DEFAULT_SUFFIX = "-default"


@mypyc_attr(allow_interpreted_subclasses=True)  # plugins subclass it: docs/plugins.md
class FairScheduler(Scheduler):
    name = "fair"
    holds_launched = True  # FairScheduler.completedContainer: releaseContainer(id, false)

    def __init__(self, ctx: RMContext) -> None:
        # Asks are normalized over every resource type, as
        # FairScheduler.getNormalizedResource does with the dominant
        # calculator; placement and ordering use the queues' policies.
        super().__init__(ctx, DominantResourceCalculator())
        s = ctx.settings
        self.settings = FairSettings.from_conf(ctx.conf, s.minimum_allocation, s.maximum_allocation)
        self.increment = self.settings.increment
        self.update_interval_ms = self.settings.update_interval_ms
        self.reservation_threshold = multiply(
            self.increment, self.settings.reservation_threshold_multiple
        )
        self.shortcuts = s.shortcuts
        """Whether the kept orderings, quiet-node state and other output-
        preserving shortcuts are used (`emu.scheduler.shortcuts`), for this
        simulation; read once and handed to the queues, apps and policies."""
        self.root_available = ZERO
        self._available = KeptAvailable(self.shortcuts)
        self.quiet = QuietNodes()
        """The quiet-node state and the settled and silent apps by app id
        (orderings.QuietNodes), read by the node update."""
        self.kept = KeptState(self, self.quiet)
        """How every change that may alter what a node update does reaches
        the kept orders and the quiet state (orderings.KeptState)."""
        self.fsapps: dict[str, FSApp] = {}
        self.activities.on_write = self.kept.decision_recorded
        self.rack_sizes: dict[str, int] = {}
        self.preempt_nodes: dict[str, NodePreemption] = {}
        """The most nodes the cluster had at once (the size of
        ClusterNodeTracker's node HashMap's table follows it)."""
        self.peak_containers: dict[str, int] = {}
        """Per node, the most containers it held at once (the size of
        SchedulerNode.launchedContainers' table follows it)."""
        self.enforcer = MaxRunningAppsEnforcer(self)
        self.preemption = Preemption(self)
        self.alloc = AllocationConfiguration.for_types(s.resource_types)
        self.unbounded = unbounded(s.resource_types)
        self.placement = self._placement_policy()
        self.qm = QueueManager(self)
        self.alloc_mtime: float | None = None
        self.next_reload_check_ms = ALLOC_RELOAD_INTERVAL_MS
        path = self.settings.allocation_file
        if path is not None:
            if not path.is_file():
                raise InputError(
                    ctx.conf.sources.get("yarn.scheduler.fair.allocation.file", str(path)),
                    "yarn.scheduler.fair.allocation.file",
                    f"allocation file {path} does not exist",
                )
            self.alloc_mtime = path.stat().st_mtime
            self._apply(allocation_file.load(path, s.resource_types))

    # --- helpers --------------------------------------------------------------------------------
    def now_ms(self) -> int:
        try:
            return round(current_time() * 1000)
        except RuntimeError:
            return 0

    def _placement_policy(self) -> PlacementPolicy:
        s = self.settings
        return self.alloc.placement_policy(
            s.groups_of, s.allow_undeclared_pools, s.user_as_default_queue
        )

    def _apply(self, alloc: AllocationConfiguration) -> None:
        """Commit a loaded allocation file (the reload listener)."""
        self.kept.config_changed()
        self.alloc = alloc
        self.placement = self._placement_policy()
        self.qm.update_allocation_configuration()
        self.enforcer.update_on_reload()

    def sorted_nodes(self) -> list[SchedulerNode]:
        return [self.nodes[n] for n in sorted(self.nodes)]

    def nodes_by_name(self, name: str) -> list[SchedulerNode]:
        """Nodes a resource name denotes, as ClusterNodeTracker.getNodesByResourceName
        lists them: `*` (getAllNodes' order), a host, or a rack (in the order
        its nodes joined)."""
        if name == "*":
            return self.tracked_nodes()
        by_host = [n for n in self.nodes.values() if n.host == name]
        if by_host:
            return by_host[-1:]
        return [n for n in self.nodes.values() if n.rack == name]

    def node_preemption(self, node_id: str) -> NodePreemption:
        state = self.preempt_nodes.get(node_id)
        if state is None:
            state = self.preempt_nodes[node_id] = NodePreemption()
        return state

    def preempted_for_app(self, node: SchedulerNode, app: FSApp) -> bool:
        state = self.preempt_nodes.get(node.node_id)
        return state is not None and app.sapp.attempt_id in state.for_app

    def update_root_available(self) -> None:
        """The root queue's available resource, cluster less used, as every
        pass (and every skipped quiet one) leaves it (kept: see
        orderings.KeptAvailable)."""
        self.root_available = self._available.of(self.cluster, self.used)

    # --- events ---------------------------------------------------------------------------------
    def handle(self, event: Event) -> None:
        self._kill_due()
        super().handle(event)

    def node_update(self, node_id: str, data: tuple[list[str], list[dict[str, Any]]]) -> None:
        """As `handle` takes a NODE_UPDATE: the kills due first."""
        self._kill_due()
        super().node_update(node_id, data)

    def allocate(
        self,
        attempt_id: str,
        asks: list[dict[str, Any]],
        releases: list[str],
        blacklist_add: list[str],
        blacklist_remove: list[str],
    ) -> Allocation:
        self._kill_due()
        return super().allocate(attempt_id, asks, releases, blacklist_add, blacklist_remove)

    def allocate_nothing(self, attempt_id: str) -> bool:
        """As the common layer's, unless preempted containers await their
        kill: `allocate` would kill those due now (`_kill_due`)."""
        if self.preemption.kills:
            return False
        return super().allocate_nothing(attempt_id)

    def request_am_container(self, attempt_id: str, am_resource: Resource) -> None:
        self._kill_due()
        super().request_am_container(attempt_id, am_resource)

    def _kill_due(self) -> None:
        """FSPreemptionThread's PreemptContainersTask runs on a Timer
        waitTimeBeforeKill after the victims were chosen: whatever the
        scheduler does at or after that time sees them gone."""
        if self.preemption.kills:
            self.preemption.kill_due(self.now_ms())

    def place_app(self, app: RMApp) -> str | None:
        requested, user = app.queue, app.user
        if not requested:
            return (
                f"Reject application {app.app_id} submitted by user {user} with an empty queue "
                "name."
            )
        if requested.startswith(".") or requested.endswith("."):
            return (
                f"Reject application {app.app_id} submitted by user {user} with an illegal queue "
                f"name {requested}. The queue name cannot start/end with period."
            )
        queue_name = requested
        existing = self.qm.get(queue_name)
        if existing is not None and existing.name in self.alloc.reservable:
            plan = existing.name.rsplit(".", 1)[-1]
            queue_name = f"{existing.name}.{plan}{RESERVATION_DEFAULT_SUFFIX}"
        try:
            placed = self.placement.assign(queue_name, user)
        except PlacementError as e:
            return str(e) if e.no_rule else f"Error assigning app to a queue: {e}"
        if placed is None:
            return "Application rejected by queue placement policy"
        try:
            leaf = self.qm.get_leaf(placed, True)
        except InvalidQueueName as e:
            return str(e)
        if leaf is None:
            return f"{ensure_root_prefix(placed)} is not a leaf queue"
        if not leaf.can_submit(user, self.settings.groups_of(user)):
            return (
                f"User {user} cannot submit applications to queue {leaf.name}"
                f"(requested queuename is {requested})"
            )
        app.queue = leaf.name
        return None

    def attempt_added(self, sapp: SchedulerApp) -> None:
        leaf = self.qm.get_leaf(sapp.queue, True)
        if leaf is None:
            raise SchedulerError(f"queue {sapp.queue} is not a leaf queue")
        app = FSApp(self, sapp, leaf)
        self.fsapps[sapp.attempt_id] = app
        runnable = self.enforcer.can_be_runnable(leaf, app)
        leaf.add_app(app, runnable)
        if runnable:
            self.enforcer.track_runnable(app)
        else:
            self.enforcer.track_non_runnable(app)
            self.activities.record(sapp.app_id, act.MAX_RUNNING)

    def attempt_removed(self, sapp: SchedulerApp) -> None:
        app = self.fsapps.pop(sapp.attempt_id, None)
        if app is None:
            return
        app.stopped = True
        leaf = app.queue
        if leaf.remove_app(app):
            self.enforcer.untrack_runnable(app)
            self.enforcer.update_on_removal(app, leaf)
        else:
            self.enforcer.untrack_non_runnable(app)
        # What nodes keep for it stays held (FSSchedulerNode.getTotalReserved
        # counts it) until each node's next heartbeat drops it
        # (cleanupPreemptionList: the app is stopped).

    def node_added(self, node: SchedulerNode) -> None:
        self.rack_sizes[node.rack] = self.rack_sizes.get(node.rack, 0) + 1
        self._recompute_steady_shares()

    def node_removed(self, node: SchedulerNode) -> None:
        n = self.rack_sizes.get(node.rack, 0) - 1
        if n > 0:
            self.rack_sizes[node.rack] = n
        else:
            self.rack_sizes.pop(node.rack, None)
        self.preempt_nodes.pop(node.node_id, None)
        self.peak_containers.pop(node.node_id, None)
        self._recompute_steady_shares()

    def node_released(self, node: SchedulerNode, c: RMContainer) -> None:
        self.kept.node_freed()

    def on_NODE_RESOURCE_UPDATE(self, node_id: str, rmnode: RMNode) -> None:
        super().on_NODE_RESOURCE_UPDATE(node_id, rmnode)
        self._recompute_steady_shares()

    def _recompute_steady_shares(self) -> None:
        self.kept.cluster_changed()
        root = self.qm.root
        root.steady_fair_share = self.cluster
        root.recompute_steady_shares()
        self.update_root_available()

    def container_allocated(self, c: RMContainer, sapp: SchedulerApp, node: SchedulerNode) -> None:
        super().container_allocated(c, sapp, node)
        app = self.fsapps.get(c.attempt_id)
        if app is not None:
            self.kept.container_allocated(app)
            app.queue.inc_usage(c.resource)
            if c.is_am:
                app.queue.am_usage = app.queue.am_usage + c.resource
        state = self.preempt_nodes.get(node.node_id)
        if state is not None:
            state.allocated(c.attempt_id, c.resource)
        held = len(node.containers)
        if held > self.peak_containers.get(node.node_id, 0):
            self.peak_containers[node.node_id] = held

    def container_released(self, c: RMContainer, sapp: SchedulerApp | None) -> None:
        super().container_released(c, sapp)
        app = self.fsapps.get(c.attempt_id)
        if app is not None:
            self.kept.container_released(app)
            app.queue.dec_usage(c.resource)
        state = self.preempt_nodes.get(c.node_id)
        if state is not None:
            state.containers.discard(c.container_id)
        self.update_root_available()

    def recover_container(
        self,
        attempt_id: str,
        container_id: str,
        node_id: str,
        resource: Resource,
        priority: int,
        is_am: bool,
    ) -> RMContainer | None:
        """As the common layer's; a recovery happens outside a node update,
        so the root's available resource is brought up to date here."""
        c = super().recover_container(attempt_id, container_id, node_id, resource, priority, is_am)
        if c is not None:
            self.update_root_available()
        return c

    def delay_off(self) -> bool:
        """Whether delay scheduling is off (a locality threshold below 0):
        then no offer reads the scheduling opportunities it counts."""
        s = self.settings
        return s.locality_threshold_node < 0.0 or s.locality_threshold_rack < 0.0

    def _update_asks(self, sapp: SchedulerApp, asks: list[Ask]) -> None:
        """As the common layer's, then the kept state follows."""
        # Only a quiet state that holds can be ended: otherwise no look.
        quiet = self.quiet
        grew = quiet.holds(quiet.epoch, self.activities.writes) and asks_grow(
            sapp.info.requests, asks
        )
        super()._update_asks(sapp, asks)
        app = self.fsapps.get(sapp.attempt_id)
        if app is not None:
            self.kept.asks_updated(app, grew)

    def demand_changed(self, sapp: SchedulerApp) -> None:
        self.kept.pending_changed(self.fsapps.get(sapp.attempt_id))

    def blacklist_changed(self, sapp: SchedulerApp) -> None:
        app = self.fsapps.get(sapp.attempt_id)
        if app is not None:
            self.kept.blacklist_changed(app)

    def reserve(
        self, sapp: SchedulerApp, node: SchedulerNode, priority: int, ask: Ask
    ) -> RMContainer:
        """As the common layer's, once the kept state has followed."""
        self.kept.reserved(self.fsapps.get(sapp.attempt_id))
        return super().reserve(sapp, node, priority, ask)

    def unreserve(self, sapp: SchedulerApp | None, node: SchedulerNode) -> None:
        """As the common layer's, once the kept state has followed."""
        held = node.reserved
        self.kept.unreserved(None if held is None else self.fsapps.get(held.attempt_id))
        super().unreserve(sapp, node)

    # --- scheduling -----------------------------------------------------------------------------
    def skip_quiet_node_update(self, node_id: str) -> bool:
        """Shortcut: the node's pass would change nothing (orderings.QuietNodes);
        its one residue, the root's available resource, is brought up to
        date as the pass would have."""
        if not (self.shortcuts and self.quiet.skips(self, node_id)):
            return False
        self.update_root_available()
        return True

    def schedule(self, node: SchedulerNode) -> None:
        if not self.shortcuts:
            self._schedule(node)
            return
        quiet, activities = self.quiet, self.activities
        epoch, writes, containers = quiet.epoch, activities.writes, self.container_total
        self._schedule(node)
        if (
            epoch == quiet.epoch
            and writes == activities.writes
            and containers == self.container_total
            and not quiet.holds(epoch, writes)
        ):
            quiet.note(self, node)

    def _schedule(self, node: SchedulerNode) -> None:
        self._assign_preempted(node)
        valid = False
        reserved = node.reserved
        if reserved is not None:
            holder = self.fsapps.get(reserved.attempt_id)
            if holder is not None:
                valid = holder.assign_reserved_container(node)
        if not valid:
            assigned_containers = 0
            assigned = ZERO
            s = self.settings
            # half of what was free: only `dynamic.max.assign` reads it
            max_to_assign = (
                multiply(node.available, f32(0.5))
                if s.assign_multiple and s.dynamic_max_assign
                else ZERO
            )
            root = self.qm.root
            while node.reserved is None:
                a = root.assign_container(node)
                if a is NONE or a == NONE:
                    break
                if not s.assign_multiple:
                    break
                assigned_containers += 1
                assigned = assigned + a
                if not self._continue_assigning(assigned_containers, max_to_assign, assigned):
                    break
        self.update_root_available()

    def _continue_assigning(
        self, containers: int, max_resources: Resource, assigned: Resource
    ) -> bool:
        s = self.settings
        if not s.assign_multiple:
            return False
        if s.dynamic_max_assign:
            return fits_in(assigned, max_resources)
        return s.max_assign <= 0 or containers < s.max_assign

    def _assign_preempted(self, node: SchedulerNode) -> None:
        state = self.preempt_nodes.get(node.node_id)
        if state is None or not state.for_app:
            return
        # FSSchedulerNode.cleanupPreemptionList: an app keeps what was freed
        # for it while it is starved, by its current fair share or by the
        # starvation the last update found, whatever it still asks for.
        for attempt_id in list(state.for_app):
            app = self.fsapps.get(attempt_id)
            if (
                app is None
                or app.stopped
                or not app.is_starved()
                or (is_none(app.fairshare_starvation) and is_none(app.minshare_starvation))
            ):
                del state.for_app[attempt_id]
        for attempt_id, pending in list(state.for_app.items()):
            app = self.fsapps[attempt_id]
            while not app.stopped and not is_none(pending):
                got = app.assign_container(node)
                if is_none(got) or got == CONTAINER_RESERVED:
                    break
                pending = subtract_non_negative(pending, got)

    def headroom(self, sapp: SchedulerApp) -> Resource:
        app = self.fsapps.get(sapp.attempt_id)
        if app is None:
            return self.cluster - self.used
        queue = app.queue
        cluster, used, usage, max_share = self.cluster, self.used, queue.usage, queue.max_share
        if not (sapp.blacklist or cluster.extra or used.extra or usage.extra or max_share.extra):
            # every AM allocate asks: the same minima without the three
            # intermediate resources
            max_available = Resource(
                min(cluster.memory - used.memory, max_share.memory - usage.memory),
                min(cluster.vcores - used.vcores, max_share.vcores - usage.vcores),
            )
            return queue.policy.headroom(queue.fair_share, usage, max_available)
        available = self.cluster - self.used
        if sapp.blacklist:
            for node in self.sorted_nodes():
                if node.host in sapp.blacklist or node.rack in sapp.blacklist:
                    available = subtract_non_negative(available, node.available)
        max_available = component_min(available, queue.max_share - queue.usage)
        return queue.policy.headroom(queue.fair_share, queue.usage, max_available)

    def max_allocation(self, sapp: SchedulerApp) -> tuple[Resource, str]:
        app = self.fsapps.get(sapp.attempt_id)
        if app is None:
            return self.maximum, ""
        return self.max_container_allocation(app.queue), f" of queue {app.queue.name}"

    def max_container_allocation(self, queue: FSQueue) -> Resource:
        q: FSQueue | None = queue
        while q is not None:
            limit = self.alloc.max_container_allocation.get(q.name)
            if limit is not None:
                return component_min(limit, self.maximum)
            q = q.parent
        return self.maximum

    # --- periodic work --------------------------------------------------------------------------
    def update(self) -> None:
        now = self.now_ms()
        self._kill_due()
        if now >= self.next_reload_check_ms:
            self.next_reload_check_ms = now + ALLOC_RELOAD_INTERVAL_MS
            self._reload_if_changed()
        root = self.qm.root
        root.update_demand()
        root.update(self.cluster)
        self.update_root_available()
        self.kept.shares_updated()
        if self._should_attempt_preemption():
            starved = self.preemption.starved
            for leaf in self.qm.leaves:
                leaf.update_starved_apps(now, starved)
            self.preemption.preempt_for(now)

    def _should_attempt_preemption(self) -> bool:
        s = self.settings
        if not s.preemption:
            return False
        mem = f32(jdiv(f32(float(self.used.memory)), float(self.cluster.memory)))
        cpu = f32(jdiv(f32(float(self.used.vcores)), float(self.cluster.vcores)))
        if mem != mem or cpu != cpu:
            return False
        return s.preemption_utilization_threshold < max(mem, cpu)

    def _reload_if_changed(self) -> None:
        path = self.settings.allocation_file
        if path is None or not path.is_file():
            return
        mtime = path.stat().st_mtime
        if mtime == self.alloc_mtime:
            return
        self.alloc_mtime = mtime
        reason = self._reload(path)
        if reason is not None:
            log.warning("allocation file reload failed; keeping the previous one", error=reason)

    def _reload(self, path: Any) -> str | None:
        try:
            alloc = allocation_file.load(path, self.ctx.settings.resource_types)
        except InputError as e:
            self.ctx.events.emit("fair_allocation_reload", ok=False, file=str(path), error=str(e))
            return str(e)
        self._apply(alloc)
        self.ctx.events.emit("fair_allocation_reload", ok=True, file=str(path))
        return None

    def refresh(self, properties: Mapping[str, object]) -> str | None:
        """Re-read the allocation file now (`yarn rmadmin -refreshQueues`)."""
        self._kill_due()
        path = self.settings.allocation_file
        if path is None:
            return None
        if not path.is_file():
            return f"allocation file {path} does not exist"
        self.alloc_mtime = path.stat().st_mtime
        return self._reload(path)

    def refresh_from(self, path: Path) -> str | None:
        """Apply the allocation file at `path` now (an admin's --file)."""
        self._kill_due()
        return self._reload(path)

    # --- reports --------------------------------------------------------------------------------
    def leaf_queues(self) -> list[str]:
        return sorted(q.name for q in self.qm.leaves)

    def queue_info(self, name: str) -> list[dict[str, Any]]:
        if name:
            q = self.qm.get(name)
            queues = [q] if q is not None else []
        else:
            queues = [self.qm.queues[n] for n in sorted(self.qm.queues)]
        return [self._queue_report(q) for q in queues]

    def _queue_report(self, q: FSQueue) -> dict[str, Any]:
        leaves = [q] if isinstance(q, FSLeafQueue) else self._leaves_under(q)
        metrics = [self.queue_metrics(leaf.name).to_dict() for leaf in leaves]
        report: dict[str, Any] = {}
        if isinstance(q, FSLeafQueue):
            report.update(metrics[0])
        else:
            for key in metrics[0] if metrics else ():
                if key == "name":
                    continue
                values = [m[key] for m in metrics]
                if isinstance(values[0], dict):
                    report[key] = {k: sum(v[k] for v in values) for k in values[0]}
                else:
                    report[key] = sum(values)
        report.update(
            name=q.name,
            type="leaf" if isinstance(q, FSLeafQueue) else "parent",
            policy=q.policy.name,
            weight=q.weight,
            fair_share=q.fair_share.to_wire(),
            steady_fair_share=q.steady_fair_share.to_wire(),
            min_resources=q.min_share.to_wire(),
            max_resources=q.max_share.to_wire(),
            used=q.usage.to_wire(),
            demand=q.demand.to_wire(),
            max_running_apps=q.max_running_apps,
            num_runnable_apps=q.num_runnable(),
            preemptable=q.preemptable,
        )
        if isinstance(q, FSLeafQueue):
            report.update(
                num_non_runnable_apps=len(q.non_runnable),
                am_resource_usage=q.am_usage.to_wire(),
                max_am_resource=q.max_am_metric.to_wire(),
            )
        return report

    def _leaves_under(self, q: FSQueue) -> list[FSLeafQueue]:
        out: list[FSLeafQueue] = []
        if isinstance(q, FSLeafQueue):
            return [q]
        if isinstance(q, FSParentQueue):
            for child in q.children:
                out.extend(self._leaves_under(child))
        return out

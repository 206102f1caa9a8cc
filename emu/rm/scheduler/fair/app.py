"""An application attempt as the FairScheduler sees it (Hadoop's
FSAppAttempt): its share, demand and starvation, delay scheduling, node
reservations, and the offer of a node to it.

It wraps the common layer's SchedulerApp and reads its asks, live
containers, usage, AM resource, reservations and preemption marks from it,
keeping beside it only what fair scheduling alone needs. An attempt that never asked for
an AM container is treated as an unmanaged AM (no maxAMShare check), which
is how Hadoop's own unit tests drive the scheduler.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from emu.resources import ZERO, Resource, component_min
from emu.rm.scheduler import activities as act
from emu.rm.scheduler.app_scheduling_info import Ask
from emu.rm.scheduler.fair.arith import (
    f32,
    fits_in,
    floor_int,
    is_none,
    memory_ratio,
    multiply,
    subtract_non_negative,
)
from emu.rm.scheduler.fair.fs_queue import CONTAINER_RESERVED, NONE
from emu.rm.scheduler.locality import ANY, NODE_LOCAL, OFF_SWITCH, RACK_LOCAL

if TYPE_CHECKING:
    from emu.rm.container import RMContainer
    from emu.rm.scheduler.fair.fs_leaf_queue import FSLeafQueue
    from emu.rm.scheduler.fair.scheduler import FairScheduler
    from emu.rm.scheduler.scheduler_app import SchedulerApp
    from emu.rm.scheduler.scheduler_node import SchedulerNode


_NO_ASKS: dict[str, Ask] = {}
"""What a priority without asks reads as (never written)."""


class FSApp:
    """See the module docstring."""

    min_share = ZERO

    def __init__(self, fs: FairScheduler, sapp: SchedulerApp, queue: FSLeafQueue) -> None:
        self.fs = fs
        self.shortcuts = fs.shortcuts
        self.sapp = sapp
        self.queue = queue
        self.name = sapp.app_id
        self.user = sapp.user
        self.max_share = fs.unbounded
        self.start_ms = sapp.start_ms
        self._demand = ZERO
        self.runnable = False
        self.fair_share = ZERO
        self.allowed_locality: dict[int, str] = {}
        self.fairshare_starvation = ZERO
        self.minshare_starvation = ZERO
        self.last_time_at_fair_share = sapp.start_ms
        self.next_starvation_check = 0
        self.stopped = False
        self.order_key: tuple[Any, ...] | None = None
        """This app's key in its queue's kept order (LeafOrder._reorder)."""
        self.runnable_seq = 0
        self.settled = False
        """Asks for nothing and recorded so; skipped by node offers (LeafOrder._settle)."""
        self.declined = ""
        """What the last offer that placed and reserved nothing recorded."""
        self.silent = False
        """Declines, without a trace, every node none of its asks fits
        (LeafOrder._silence); skipped by offers of such nodes."""
        self.silent_memory = 0
        self.silent_vcores = 0
        """The smallest memory and vcores among its asks, while silent."""

    def __repr__(self) -> str:
        return f"FSApp({self.name}, {self.queue.name}, used={self.used})"

    # --- Schedulable ----------------------------------------------------------------------------
    @property
    def usage(self) -> Resource:
        return self.used

    @property
    def used(self) -> Resource:
        """The common app's usage: the scheduler charges it, then tells the
        kept state (`KeptState.container_allocated` / `container_released`)."""
        return self.sapp.used

    @property
    def am_resource(self) -> Resource:
        return self.sapp.am_resource

    @property
    def demand(self) -> Resource:
        return self._demand

    @demand.setter
    def demand(self, r: Resource) -> None:
        self._demand = r
        self._track_demand()

    def _track_demand(self) -> None:
        """Demand or runnability changed: the kept state follows (its
        queue's apps with unmet demand, their order, the quiet state)."""
        self.fs.kept.app_changed(self)

    def set_runnable(self, runnable: bool) -> None:
        if runnable and not self.runnable:
            self.runnable_seq = self.queue.next_runnable_seq()
        self.runnable = runnable
        self._track_demand()

    @property
    def weight(self) -> float:
        if self.fs.settings.size_based_weight:
            return f32(math.log1p(self.demand.memory) / math.log(2))
        return 1.0

    def update_demand(self) -> None:
        used, pending, old = self.sapp.used, self.sapp.info.pending, self._demand
        if (
            not (used.extra or pending.extra or old.extra)
            and used.memory + pending.memory == old.memory
            and used.vcores + pending.vcores == old.vcores
            and self.shortcuts
        ):
            # Shortcut: unchanged, so neither the queue's wanting apps nor
            # their order can change (the update invalidates the quiet state itself)
            return
        self.demand = used + pending

    def pending_demand(self) -> Resource:
        return self.demand - self.used

    def blacklisted(self, node: SchedulerNode) -> bool:
        bl = self.sapp.blacklist
        return bool(bl) and (node.host in bl or node.rack in bl)

    # --- offers ---------------------------------------------------------------------------------
    def over_am_share_limit(self) -> bool:
        sapp = self.sapp
        if sapp.am_running or not sapp.am_pending:
            return False
        info = sapp.info
        ask = info.get(info.priorities[0], ANY) if info.priorities else None
        if ask is None or ask.num == 0:
            return True
        return not self.queue.can_run_am(ask.capability)

    def idle_reason(self) -> str:
        """What offering any node to this app records while it has no
        outstanding ask (`sapp.info.priorities` empty): the AM limit if its
        AM is still to be placed, else "no node fits". Such an offer places,
        reserves and counts nothing, so it is only this record."""
        sapp = self.sapp
        if sapp.am_pending and not sapp.am_running:
            return act.AM_LIMIT
        return act.NO_FIT

    def assign_container(self, node: SchedulerNode) -> Resource:
        """Offer `node` to this app (FSAppAttempt.assignContainer)."""
        record = self.fs.activities.record
        if self.over_am_share_limit():
            self.declined = act.AM_LIMIT
            record(self.sapp.app_id, act.AM_LIMIT, node.node_id)
            return NONE
        assigned = self._assign(node, False)
        if assigned == CONTAINER_RESERVED:
            record(self.sapp.app_id, act.RESERVED, node.node_id)
        elif assigned != NONE:
            record(self.sapp.app_id, act.ALLOCATED, node.node_id)
        else:
            self.declined = reason = self._why_not(node)
            record(self.sapp.app_id, reason, node.node_id)
        return assigned

    def _why_not(self, node: SchedulerNode) -> str:
        """Nothing placed on `node`: delay scheduling held the app back if its
        next ask would have fit here, else nothing it asks for fits."""
        info = self.sapp.info
        for p in info.priorities:
            any_ask = info.get(p, ANY)
            if any_ask is not None and any_ask.num > 0:
                return act.LOCALITY if fits_in(any_ask.capability, node.available) else act.NO_FIT
        return act.NO_FIT

    def _assign(self, node: SchedulerNode, reserved: bool) -> Resource:
        info = self.sapp.info
        if reserved:
            assert node.reserved is not None
            priorities = [node.reserved.priority]
        else:
            priorities = list(info.priorities)
        opportunities = self.sapp.opportunities
        requests = info.requests
        rack, host = node.rack, node.host
        for p in priorities:
            if not reserved and not self.has_container_for_node(p, node):
                continue
            opportunities[p] = opportunities.get(p, 0) + 1
            # the asks of `p` by resource name, read once (info.get's lookups)
            by_name = requests.get(p) or _NO_ASKS
            rack_ask = by_name.get(rack)
            host_ask = by_name.get(host)
            allowed = self.allowed_locality_level(p)
            if (
                rack_ask is not None
                and rack_ask.num > 0
                and host_ask is not None
                and host_ask.num > 0
            ):
                return self._assign_on(node, host_ask, NODE_LOCAL, reserved, p)
            if not (rack_ask is None or rack_ask.relax):  # can_delay_to(p, rack)
                continue
            if rack_ask is not None and rack_ask.num > 0 and allowed in (RACK_LOCAL, OFF_SWITCH):
                return self._assign_on(node, rack_ask, RACK_LOCAL, reserved, p)
            any_ask = by_name.get(ANY)
            if not (any_ask is None or any_ask.relax):  # can_delay_to(p, ANY)
                continue
            if any_ask is not None and any_ask.num > 0:
                unique = len(by_name)
                if unique <= 1 or allowed == OFF_SWITCH:
                    return self._assign_on(node, any_ask, OFF_SWITCH, reserved, p)
        return NONE

    def can_delay_to(self, priority: int, name: str) -> bool:
        ask = self.sapp.info.get(priority, name)
        return ask is None or ask.relax

    def has_container_for_node(self, priority: int, node: SchedulerNode) -> bool:
        by_name = self.sapp.info.requests.get(priority)
        if not by_name:
            return False
        any_ask = by_name.get(ANY)
        if any_ask is None or any_ask.num <= 0:
            return False
        rack_ask = by_name.get(node.rack)
        has_rack = rack_ask is not None and rack_ask.num > 0
        host_ask = by_name.get(node.host)
        has_node = host_ask is not None and host_ask.num > 0
        if not (any_ask.relax or has_rack):  # can_delay_to(priority, ANY)
            return False
        if not (not has_rack or rack_ask is None or rack_ask.relax or has_node):
            return False
        if not fits_in(any_ask.capability, node.total):
            # Resources.fitsIn(resource, node's total capability): every type
            return False
        return self.queue.fits_in_max_share(any_ask.capability)

    def allowed_locality_level(self, priority: int) -> str:
        """Delay scheduling: relax from node- to rack-local to off-switch after
        missing threshold x cluster-size scheduling opportunities."""
        s = self.fs.settings
        node_thr = min(s.locality_threshold_node, 1.0)
        rack_thr = min(s.locality_threshold_rack, 1.0)
        if node_thr < 0.0 or rack_thr < 0.0:
            return OFF_SWITCH
        allowed = self.allowed_locality.get(priority)
        if allowed is None:
            self.allowed_locality[priority] = NODE_LOCAL
            return NODE_LOCAL
        if allowed == OFF_SWITCH:
            return OFF_SWITCH
        threshold = node_thr if allowed == NODE_LOCAL else rack_thr
        if self.sapp.opportunities.get(priority, 0) > len(self.fs.nodes) * threshold:
            self.allowed_locality[priority] = RACK_LOCAL if allowed == NODE_LOCAL else OFF_SWITCH
            self.sapp.opportunities[priority] = 0
        return self.allowed_locality[priority]

    def _assign_on(
        self, node: SchedulerNode, ask: Ask, node_type: str, reserved: bool, priority: int
    ) -> Resource:
        capability = ask.capability
        fs = self.fs
        if fits_in(capability, node.available):
            # FSAppAttempt.assignContainer: a fulfilled reservation allocates the
            # node's reserved Container (its id) instead of creating one.
            held = node.reserved if reserved else None
            container = self.allocate(
                node_type, node, priority, ask, held.container_id if held is not None else None
            )
            if reserved:
                fs.unreserve(self.sapp, node)
            if container is None:
                return NONE
            return capability
        if (
            self.is_reservable(capability)
            and not fs.preempted_for_app(node, self)
            and self.reserve(node, node_type, priority, ask)
        ):
            return CONTAINER_RESERVED
        return NONE

    def allocate(
        self,
        node_type: str,
        node: SchedulerNode,
        priority: int,
        ask: Ask,
        container_id: str | None = None,
    ) -> RMContainer | None:
        allowed = self.allowed_locality.get(priority)
        if allowed is not None and (
            (allowed == OFF_SWITCH and node_type in (NODE_LOCAL, RACK_LOCAL))
            or (allowed == RACK_LOCAL and node_type == NODE_LOCAL)
        ):
            self.allowed_locality[priority] = node_type
        any_ask = self.sapp.info.get(priority, ANY)
        if any_ask is None or any_ask.num <= 0:
            return None
        return self.fs.place(self.sapp, node, priority, node_type, ask, container_id)

    # --- reservations ---------------------------------------------------------------------------
    def is_starved_for_fair_share(self) -> bool:
        return (
            self.queue.policy.calculator.compare(self.fs.cluster, self.used, self.fair_share, True)
            < 0
        )

    def is_starved(self) -> bool:
        return self.is_starved_for_fair_share() or not is_none(self.minshare_starvation)

    def is_reservable(self, capability: Resource) -> bool:
        fs = self.fs
        return self.is_starved() and self.queue.policy.calculator.at_least(
            fs.cluster, capability, fs.reservation_threshold
        )

    def num_reservations(self, rack: str, any_rack: bool) -> int:
        """Nodes this app holds reservations on: all of them, or on `rack`
        (the common app's reservations, by node)."""
        held = self.sapp.reservations
        if any_rack:
            return len(held)
        nodes = self.fs.nodes
        return sum(
            1 for node_id in held if (n := nodes.get(node_id)) is not None and n.rack == rack
        )

    def reservation_exceeds_threshold(self, node: SchedulerNode, node_type: str) -> bool:
        if node_type == NODE_LOCAL:
            return False
        if node_type == OFF_SWITCH:
            return self.holds_all_off_switch_reservations()
        fs = self.fs
        existing = self.num_reservations(node.rack, False)
        allowed = math.ceil(f32(fs.rack_sizes.get(node.rack, 0) * fs.settings.reservable_nodes))
        return existing >= allowed

    def holds_all_off_switch_reservations(self) -> bool:
        """Whether this app holds as many reservations as it may for an
        off-switch ask (a share of all nodes), on whichever node."""
        fs = self.fs
        allowed = math.ceil(f32(len(fs.nodes) * fs.settings.reservable_nodes))
        return len(self.sapp.reservations) >= allowed

    def reserve(self, node: SchedulerNode, node_type: str, priority: int, ask: Ask) -> bool:
        current = node.reserved
        mine = current is None or current.attempt_id == self.sapp.attempt_id
        if not mine or self.reservation_exceeds_threshold(node, node_type):
            return False
        if current is None:
            self.fs.reserve(self.sapp, node, priority, ask)
        return True

    def assign_reserved_container(self, node: SchedulerNode) -> bool:
        """Fulfil or drop this app's reservation on `node`; False if dropped."""
        reserved = node.reserved
        assert reserved is not None
        if not self.has_container_for_node(reserved.priority, node) or self.over_am_share_limit():
            self.fs.unreserve(self.sapp, node)
            return False
        if fits_in(reserved.resource, node.available):
            self._assign(node, True)
        return True

    # --- starvation and preemption --------------------------------------------------------------
    def update_fair_share_starvation(self, now: int) -> Resource:
        queue = self.queue
        threshold = multiply(self.fair_share, queue.fair_share_threshold)
        fair_demand = component_min(threshold, self.demand)
        starved = queue.policy.calculator.compare(self.fs.cluster, self.used, fair_demand, True) < 0
        if not starved:
            self.last_time_at_fair_share = now
        if not starved or now - self.last_time_at_fair_share < queue.fair_share_timeout:
            self.fairshare_starvation = ZERO
        else:
            self.fairshare_starvation = subtract_non_negative(fair_demand, self.used)
        return self.fairshare_starvation

    @property
    def starvation(self) -> Resource:
        return self.fairshare_starvation + self.minshare_starvation

    def can_container_be_preempted(self, c: RMContainer, already: Resource) -> bool:
        if not self.queue.preemptable:
            return False
        cid = c.container_id
        if cid not in self.sapp.live or cid in self.sapp.to_preempt:
            return False
        after = self.used - self.sapp.to_preempt_resource - c.resource - already
        return (
            not self.queue.policy.calculator.compare(self.fs.cluster, after, self.fair_share, True)
            < 0
        )

    def track_for_preemption(self, c: RMContainer) -> None:
        self.sapp.mark_for_preemption(c)

    def starved_requests(self) -> list[tuple[Ask, int]]:
        """The asks (and how many of their containers) that cover this app's
        starvation, one locality level per ask (getStarvedResourceRequests).
        Asks are visited as AppSchedulingInfo.getAllResourceRequests lists
        them (the order of its ConcurrentHashMaps), zero-count ones included:
        such an ask covers nothing but is visited, so the other levels of its
        priority and capability are passed over as Hadoop's
        VisitedResourceRequestTracker does."""
        visited = _Visited(self.fs)
        pending = self.starvation
        out: list[tuple[Ask, int]] = []
        info = self.sapp.info
        for priority, name, capability in info.resource_requests():
            if is_none(pending):
                break
            ask = info.get(priority, name)
            if ask is None or ask.num <= 0:
                visited.visit(priority, name, capability)
                continue
            if not visited.visit(priority, name, ask.capability):
                continue
            fit = floor_int(memory_ratio(pending, ask.capability))
            if fit == 0:
                continue
            num = min(fit, ask.num)
            out.append((ask, num))
            pending = subtract_non_negative(pending, multiply(ask.capability, num))
        return out


class _Tracker:
    __slots__ = ("any", "node_racks", "racks")

    def __init__(self) -> None:
        self.any = False
        self.node_racks: set[str] = set()
        self.racks: set[str] = set()


class _Visited:
    """Hadoop's VisitedResourceRequestTracker: an ask counts once across the
    node, rack and `*` levels of one (priority, capability)."""

    def __init__(self, fs: FairScheduler) -> None:
        self.fs = fs
        self.trackers: dict[tuple[int, Resource], _Tracker] = {}

    def visit(self, priority: int, name: str, capability: Resource) -> bool:
        t = self.trackers.setdefault((priority, capability), _Tracker())
        if name == ANY:
            if not t.racks and not t.node_racks:
                t.any = True
            return t.any
        matching = self.fs.nodes_by_name(name)
        if not matching:
            return False
        if len(matching) == 1 and matching[0].host == name:
            rack = matching[0].rack
            if t.any or rack in t.racks:
                return False
            t.node_racks.add(rack)
            return True
        if t.any or name in t.node_racks:
            return False
        t.racks.add(name)
        return True

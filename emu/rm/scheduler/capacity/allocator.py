"""One application's turn on one node, as Hadoop's RegularContainerAllocator
plays it: priorities from the most important, locality with delay
scheduling, and reservations for asks that do not fit.

Outcomes, as YARN's AllocationState:
- ALLOCATED / RESERVED: one container placed or the node reserved;
- PRIORITY_SKIPPED: nothing at this priority fits this node, try the next;
- APP_SKIPPED: the app waits (delay scheduling) or is blocked on this
  node; the leaf moves on to its next app;
- QUEUE_SKIPPED: the queue's headroom cannot hold the ask; the leaf stops
  and its parent lowers the limit it offers the other children.

Delay scheduling counts missed scheduling opportunities per priority
(`SchedulerApp.opportunities`): rack-local placement waits for more than
`min(#nodes, node-locality-delay)` of them; off-switch waits for more than
`min(#nodes, node-locality-delay + rack-locality-additional-delay)` when
the additional delay is set, otherwise for more than
`min(#nodes, outstanding containers * locality wait factor)`, the factor
being the share of the cluster the ask names. An ask naming no host or rack
is never delayed. Node-local placements (and rack-local ones, with
`rack-locality-full-reset`) reset the count.

Reservations follow `shouldAllocOrReserveNewContainer`: an app reserves
another node only while its outstanding containers at the priority exceed
its reservations, plus a starvation allowance that grows with the number of
re-reservations. With `reservations-continue-look-all-nodes` (default on)
an app whose reservations already cover its asks may still take a node
where the ask fits, giving up one of its reservations of the same priority
elsewhere; the same exchange lets it go past the queue headroom or the user
limit by no more than what it has reserved.

A new container or reservation is a proposal that Hadoop then commits
(CapacityScheduler.tryCommit): AbstractCSQueue.accept refuses it when a
queue from the leaf up would go past its maximum with it, reservations
counted as used (`AllocatorState.accepts`). A refused proposal places
nothing, though doAllocation's reset of the delay has happened, and the
heartbeat counts it as an assignment.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

# The dataclass below names these types at run time (its annotations are
# evaluated when the class is made, compiled or not), so they are imported.
from emu.resources import ZERO, Resource, ResourceCalculator
from emu.rm.container import RMContainer
from emu.rm.scheduler import javahash
from emu.rm.scheduler.app_scheduling_info import Ask
from emu.rm.scheduler.capacity import resource_math as rm
from emu.rm.scheduler.capacity.config import CapacityConf
from emu.rm.scheduler.locality import ANY, NODE_LOCAL, OFF_SWITCH, RACK_LOCAL
from emu.rm.scheduler.scheduler_app import SchedulerApp
from emu.rm.scheduler.scheduler_node import SchedulerNode

K = TypeVar("K")

ALLOCATED, RESERVED = "ALLOCATED", "RESERVED"
PRIORITY_SKIPPED, APP_SKIPPED = "PRIORITY_SKIPPED", "APP_SKIPPED"
QUEUE_SKIPPED, LOCALITY_SKIPPED = "QUEUE_SKIPPED", "LOCALITY_SKIPPED"
LOCALITY_WAIT = "LOCALITY_WAIT"
"""Like APP_SKIPPED, because delay scheduling holds the app for a better node."""


class Containers(Protocol):
    """What the allocator asks of the scheduler: create, reserve and drop
    containers, with all their bookkeeping."""

    def place(
        self,
        sapp: SchedulerApp,
        node: SchedulerNode,
        priority: int,
        node_type: str,
        ask: Ask,
        container_id: str | None = None,
    ) -> RMContainer: ...

    def reserve(
        self, sapp: SchedulerApp, node: SchedulerNode, priority: int, ask: Ask
    ) -> RMContainer: ...

    def unreserve(self, sapp: SchedulerApp | None, node: SchedulerNode) -> None: ...


@dataclass(slots=True)
class AllocatorState:
    """All the allocator reads and keeps, so it does not reach into the
    whole scheduler: the calculator and configuration (replaced on a
    refresh), the cluster's size (set before each node is offered), the
    scheduler's live node and attempt maps, each leaf's maximum allocation,
    and the re-reservation counts it alone maintains."""

    calc: ResourceCalculator
    cs: CapacityConf
    minimum: Resource
    nodes: dict[str, SchedulerNode]
    apps: dict[str, SchedulerApp]
    leaf_max: Callable[[str], Resource]
    containers: Containers
    cluster: Resource = ZERO
    rereservations: dict[tuple[str, int], int] = field(default_factory=dict)
    reservation_peaks: dict[tuple[str, int], int] = field(default_factory=dict)
    """The most reservations an attempt has held at once at a priority since
    it last held none: the size Hadoop's per-priority reservation HashMap
    grew its table for (see `javahash.hash_order`)."""
    fulfilling: bool = False
    """A reserved container is being allocated: Hadoop's LeafQueue.apply
    does not tell the ordering policy of that allocation (nor of the
    reservation it ends)."""
    labelled: bool = False
    """Some node or app has a node label: asks are matched to partitions."""
    app_partition: dict[str, str] = field(default_factory=dict)
    """The labelled partition each app's asks name, by app id (absent: the
    default partition)."""
    node_partition: str = ""
    """The partition of the node being offered."""
    partition_of: dict[str, str] = field(default_factory=dict)
    """Each labelled node's partition, by node id (the scheduler's map)."""
    am_non_exclusive: bool = False
    """`yarn.resourcemanager.node-labels.am.allow-non-exclusive-allocation`:
    AM containers too may be placed ignoring exclusivity."""
    touches: int = 0
    """Bumped by each change to the delay-scheduling and re-reservation
    counts (and each refused proposal): with the scheduler's `mutations`,
    what tells an asynchronous pass that changed nothing."""
    rejected: bool = False
    """The last proposal was refused at commit (`accepts`)."""
    ignore_exclusivity: bool = False
    """The pass is IGNORE_PARTITION_EXCLUSIVITY: a non-exclusive labelled
    node offered to asks of the default partition."""
    accepts: Callable[[SchedulerApp, Resource], bool] | None = None
    """Whether the commit of a new container (or reservation) of that net
    size for the app is accepted: each queue from its leaf up within its
    maximum in the node's partition once it is added (AbstractCSQueue.accept).
    The walk's headroom does not imply it: under DRF a queue's limit is the
    dominant-share minimum of its maximum and what its parent offers, which
    can keep more of one resource than an ancestor has left."""
    unconfirmed: dict[str, Resource] = field(default_factory=dict)
    """Per attempt, what the offer's proposals from reservations would give
    it until they are committed (FiCaSchedulerApp's unconfirmed allocated
    resource)."""
    proposing: list[Proposal] | None = None
    """While set, new allocations and reservations are proposed here, to be
    committed after the offer (`commit`), instead of carried out at once."""
    journal: dict[tuple[int, object], list[object]] | None = None
    """While set, each count decisions compare with thresholds (an app's
    scheduling opportunities, missed non-partitioned opportunities and
    re-reservations) is noted here before it first changes, as [count map,
    key, value before, whether already past every threshold] (see
    `saturated`). Everything else an offer can change is a placement, a
    reservation or a release: `Scheduler.mutations`."""
    preferred: Callable[[SchedulerApp], list[SchedulerNode]] | None = None
    """With multi-node placement, the nodes an app walks, in its sorting
    policy's order (AppPlacementAllocator.getPreferredNodeIterator)."""
    missed: dict[tuple[str, int], int] = field(default_factory=dict)
    """Missed non-partitioned scheduling opportunities per (attempt,
    priority) (SchedulerApplicationAttempt's
    missedNonPartitionedReqSchedulingOpportunity)."""

    def forget(self, attempt_id: str) -> None:
        """Drop an ended attempt's re-reservation counts."""
        for key in [k for k in self.rereservations if k[0] == attempt_id]:
            del self.rereservations[key]
        for key in [k for k in self.reservation_peaks if k[0] == attempt_id]:
            del self.reservation_peaks[key]
        for key in [k for k in self.missed if k[0] == attempt_id]:
            del self.missed[key]

    def reservations_changed(self, sapp: SchedulerApp, priority: int) -> None:
        """`sapp` made a new reservation or gave one up at `priority`: both
        reset its re-reservation count there (SchedulerApplicationAttempt.reserve
        for a NEW container, FiCaSchedulerApp.internalUnreserve), and
        `reservation_peaks` follows the reservation map's size
        (SchedulerApplicationAttempt.reserve makes the map on the first
        reservation, internalUnreserve drops it when the last goes)."""
        key = (sapp.attempt_id, priority)
        self.rereservations.pop(key, None)
        held = sum(1 for c in sapp.reservations.values() if c.priority == priority)
        if held == 0:
            self.reservation_peaks.pop(key, None)
        elif held > self.reservation_peaks.get(key, 0):
            self.reservation_peaks[key] = held


def assign_app(
    st: AllocatorState,
    sapp: SchedulerApp,
    node: SchedulerNode | None,
    headroom: Resource,
    must_unreserve: Resource = ZERO,
) -> tuple[str, str]:
    """Try to give `sapp` one container (or a reservation) on `node`, or,
    with multi-node placement (`node` None), on the first of its preferred
    nodes that takes one (`AllocatorState.preferred`); returns (outcome,
    locality). `headroom` is what the queue may still take;
    `must_unreserve` is how far the user is above the user limit (only
    reservations elsewhere can make room for it).

    RegularContainerAllocator.allocate: per priority, the request's checks
    (pending, the AM in non-exclusive mode, the reservation arithmetic
    without continue-looking, the queue's headroom, a missed non-partitioned
    opportunity) and then each node in turn (its partition, the blacklist, a
    scheduling opportunity, locality); the walk stops at the first node that
    takes a container, and a reservation is made only on the last node. 3.5.0
    checks the request once per priority, before any node
    (`CapacityConf.request_checked_once`); 3.4.2 checks it with each node,
    after the node's partition."""
    info = sapp.info
    if not _partition_matches(st, sapp) or _all_unconfirmed(st, sapp):
        # RegularContainerAllocator.assignContainers: an app with nothing
        # pending in the offered partition (the default one when ignoring
        # exclusivity) is skipped before any of its asks is looked at.
        return APP_SKIPPED, OFF_SWITCH
    once = st.cs.request_checked_once
    nodes: list[SchedulerNode] | None = [node] if node is not None else None
    for priority in list(info.priorities):
        any_ask = info.get(priority, ANY)
        if any_ask is None or any_ask.num <= 0:
            continue
        required = any_ask.capability
        if once:
            checked = _check_request(st, sapp, priority, required, headroom)
            if checked == PRIORITY_SKIPPED:
                continue
            if checked:
                return checked, OFF_SWITCH
        if nodes is None:
            assert st.preferred is not None
            nodes = st.preferred(sapp)
        outcome, locality = PRIORITY_SKIPPED, OFF_SWITCH
        tried = False
        last = len(nodes) - 1
        for i, n in enumerate(nodes):
            if not once:
                if _am_refused(st, sapp):
                    outcome = APP_SKIPPED
                    continue
                if not _partition_matches(st, sapp):
                    outcome = PRIORITY_SKIPPED
                    continue
                checked = _check_request(st, sapp, priority, required, headroom)
                if checked:
                    outcome = checked
                    continue
            elif not _partition_matches(st, sapp):
                outcome = PRIORITY_SKIPPED  # preCheckForNode
                continue
            if n.host in sapp.blacklist or n.rack in sapp.blacklist:
                outcome = APP_SKIPPED
                continue
            opportunities = sapp.opportunities
            _count(st, opportunities, priority, 1)
            tried = True
            outcome, locality = _assign_on_node(
                st, sapp, n, priority, headroom, must_unreserve, i == last
            )
            if outcome == PRIORITY_SKIPPED:
                _count(st, opportunities, priority, -1)
            elif outcome == ALLOCATED:
                break
        if outcome == PRIORITY_SKIPPED:
            continue
        if tried:
            st.touches += 1
        return outcome, locality
    return APP_SKIPPED, OFF_SWITCH


def _all_unconfirmed(st: AllocatorState, sapp: SchedulerApp) -> bool:
    """SchedulerApplicationAttempt.hasPendingResourceRequest in the default
    partition: what the app still asks for, less what this offer has
    already proposed to give it from its reservations (unconfirmed until
    committed), is nothing."""
    unconfirmed = st.unconfirmed.get(sapp.attempt_id) if st.unconfirmed else None
    if unconfirmed is None or (st.node_partition and not st.ignore_exclusivity):
        return False
    pending = sapp.info.pending
    return (
        pending.memory <= unconfirmed.memory
        and pending.vcores <= unconfirmed.vcores
        and all(v <= dict(unconfirmed.extra).get(k, 0) for k, v in pending.extra)
    )


def _partition_matches(st: AllocatorState, sapp: SchedulerApp) -> bool:
    """AppSchedulingInfo.precheckNode: the ask's partition is the offered
    one's (ignoring exclusivity: the default partition's asks only)."""
    if not st.labelled:
        return True
    partition = st.app_partition.get(sapp.app_id, "")
    return partition == ("" if st.ignore_exclusivity else st.node_partition)


def _note(
    st: AllocatorState,
    counts: dict[K, int],
    key: K,
    past: bool | None = None,
    reset: bool = False,
) -> None:
    """Before a count decisions compare with thresholds changes: note in
    the journal its value and whether it was already past all of them
    (`past`; by default above the cluster's node count, which bounds every
    locality delay and the non-partitioned opportunities). A count set back
    (`reset`) is past nothing: what the next offer does depends on it."""
    journal = st.journal
    if journal is None:
        return
    entry = journal.get((id(counts), key))
    if entry is None:
        value = counts.get(key, 0)
        if past is None:
            past = value > len(st.nodes)
        journal[(id(counts), key)] = [counts, key, value, past and not reset]
    elif reset:
        entry[3] = False


def _count(
    st: AllocatorState, counts: dict[K, int], key: K, by: int, past: bool | None = None
) -> int:
    """Add `by` to a count, noted in the journal (`_note`)."""
    _note(st, counts, key, past)
    value = counts.get(key, 0) + by
    counts[key] = value
    return value


def _changes(st: AllocatorState) -> list[tuple[dict[object, int], object, int, bool]]:
    """The journal's counts with their net change since they were noted."""
    assert st.journal is not None
    out = []
    for counts, key, before, past in st.journal.values():
        d: dict[object, int] = counts  # type: ignore[assignment]
        out.append((d, key, d.get(key, 0) - int(before), bool(past)))  # type: ignore[call-overload]
    return out


def saturated(st: AllocatorState) -> bool:
    """Whether the offer the journal covers changed nothing but counts, each
    either back where it started or already past every threshold it is
    compared with, and nothing else. The same offer again would take the
    same path and make the same changes (`apply_again`)."""
    if st.journal is None:
        return False
    return all(net == 0 or past for _, _, net, past in _changes(st))


def apply_again(st: AllocatorState, times: int) -> None:
    """The journal's net changes made `times` more times: what that many
    more saturated offers would have made."""
    for d, key, net, _ in _changes(st):
        if net:
            d[key] = d.get(key, 0) + net * times


def _am_refused(st: AllocatorState, sapp: SchedulerApp) -> bool:
    """No AM container in non-exclusive mode (unless the RM allows it)."""
    return st.labelled and st.ignore_exclusivity and sapp.am_pending and not st.am_non_exclusive


def _check_request(
    st: AllocatorState, sapp: SchedulerApp, priority: int, required: Resource, headroom: Resource
) -> str:
    """RegularContainerAllocator.preCheckRequest for one priority, less the
    node's partition: "" when the ask may be tried on nodes, else why not."""
    looking = st.cs.reservations_continue_looking
    if _am_refused(st, sapp):
        return APP_SKIPPED
    if not looking and not should_allocate_or_reserve(st, sapp, priority, required):
        return PRIORITY_SKIPPED
    unreservable = (
        reserved_in(st.partition_of, sapp, st.node_partition)
        if looking and sapp.reservations
        else ZERO
    )
    # RegularContainerAllocator.checkHeadroom: Resources.fitsIn, every
    # resource type under DRF (not a dominant-share comparison), so an
    # ask short of headroom in any type skips the queue.
    if not rm.fits(st.calc, required, headroom + unreservable):
        return QUEUE_SKIPPED
    if st.labelled and not st.app_partition.get(sapp.app_id, ""):
        # A default-partition ask counts the chances it had; it may use
        # a non-exclusive partition only after missing one per node.
        key = (sapp.attempt_id, priority)
        missed = _count(st, st.missed, key, 1)
        st.touches += 1
        if st.ignore_exclusivity and missed < len(st.nodes):
            return APP_SKIPPED
    return ""


def _assign_on_node(
    st: AllocatorState,
    sapp: SchedulerApp,
    node: SchedulerNode,
    priority: int,
    headroom: Resource,
    must_unreserve: Resource,
    reserve: bool = True,
) -> tuple[str, str]:
    """RegularContainerAllocator.assignContainersOnNode; `reserve` false when
    more preferred nodes follow (a RESERVED outcome is then not acted on)."""
    info = sapp.info
    for node_type in (NODE_LOCAL, RACK_LOCAL, OFF_SWITCH):
        ask = info.can_place(priority, node, node_type)
        if ask is None:
            continue
        if not _delay_allows(st, sapp, priority, node_type):
            if node_type == OFF_SWITCH:
                return LOCALITY_WAIT, node_type
            continue
        outcome = _assign_container(
            st, sapp, node, priority, ask, node_type, headroom, must_unreserve, reserve
        )
        if outcome in (ALLOCATED, RESERVED):
            return outcome, node_type
        if node_type == OFF_SWITCH:
            return APP_SKIPPED, node_type
    return PRIORITY_SKIPPED, OFF_SWITCH


def _delay_allows(st: AllocatorState, sapp: SchedulerApp, priority: int, node_type: str) -> bool:
    if node_type == NODE_LOCAL:
        return True
    cs, nodes = st.cs, len(st.nodes)
    missed = sapp.opportunities.get(priority, 0)
    if node_type == RACK_LOCAL:
        return min(nodes, cs.node_locality_delay) < missed
    # getUniqueLocationAsks: the names Hadoop still holds asks for, those
    # the AM set to zero included; only `*` means no delay.
    locations = sapp.info.location_count(priority)
    if locations <= 1:
        return True
    if cs.rack_locality_additional_delay > -1:
        return missed > min(nodes, cs.node_locality_delay + cs.rack_locality_additional_delay)
    any_ask = sapp.info.requests[priority][ANY]
    wait_factor = min((locations - 1) / nodes, 1.0) if nodes else 1.0
    return min(nodes, any_ask.num * wait_factor) < missed


def _assign_container(
    st: AllocatorState,
    sapp: SchedulerApp,
    node: SchedulerNode,
    priority: int,
    ask: Ask,
    node_type: str,
    headroom: Resource,
    must_unreserve: Resource,
    reserve: bool = True,
) -> str:
    calc, cluster = st.calc, st.cluster
    looking = st.cs.reservations_continue_looking
    capability = ask.capability
    if not calc.fits(capability, node.total):
        return LOCALITY_SKIPPED
    should = should_allocate_or_reserve(st, sapp, priority, capability)
    need = rm.rmax(calc, cluster, capability - headroom, must_unreserve)
    need_unreserve = rm.positive(calc, cluster, need)
    if calc.fits(capability, node.available):
        other: SchedulerNode | None = None
        if looking and (not should or need_unreserve):
            # Continue looking: allocate here by giving up a reservation
            # of the same priority elsewhere (FiCaSchedulerApp.findNodeToUnreserve).
            other = _node_to_unreserve(
                st, sapp, node, priority, need if need_unreserve else capability
            )
            if other is None:
                return LOCALITY_SKIPPED
        net = capability
        if other is not None:
            net = capability - sapp.reservations[other.node_id].resource
        if st.proposing is not None:
            return _propose(st, ALLOCATED, sapp, node, priority, node_type, ask, other, net)
        if node.reserved is not None or not _accepted(st, sapp, net):
            # The proposal is made, then refused at commit (by the queues'
            # maximums, or because the node is reserved, which only
            # multi-node placement offers: FiCaSchedulerApp.commonCheckContainerAllocation):
            # nothing placed or given up, though the app's delay was reset
            # (doAllocation runs first).
            _reset_opportunities(st, sapp, priority, node_type)
            _refused(st)
            return ALLOCATED
        if other is not None:
            st.containers.unreserve(sapp, other)
        st.containers.place(sapp, node, priority, node_type, ask)
        _reset_opportunities(st, sapp, priority, node_type)
        return ALLOCATED
    if should and not (looking and need_unreserve):
        if not reserve:
            return RESERVED  # the walk goes on to the next node (doAllocation waits)
        if st.proposing is not None:
            return _propose(st, RESERVED, sapp, node, priority, node_type, ask, None, capability)
        # A node already reserved (only multi-node placement offers one)
        # refuses the proposal at commit (FiCaSchedulerApp.accept), after
        # doAllocation has reset the delay.
        if node.reserved is None and _accepted(st, sapp, capability):
            st.containers.reserve(sapp, node, priority, ask)
        else:
            _refused(st)
        _reset_opportunities(st, sapp, priority, node_type)
        return RESERVED
    return LOCALITY_SKIPPED


def _propose(
    st: AllocatorState,
    outcome: str,
    sapp: SchedulerApp,
    node: SchedulerNode,
    priority: int,
    node_type: str,
    ask: Ask,
    other: SchedulerNode | None,
    net: Resource,
) -> str:
    """A new container or reservation proposed, to be committed after the
    offer (`commit`); doAllocation's reset of the delay happens now."""
    assert st.proposing is not None
    st.proposing.append(
        Proposal(
            outcome, sapp, node, priority, node_type, ask, other, net,
            st.node_partition, st.ignore_exclusivity,
        )
    )  # fmt: skip
    _reset_opportunities(st, sapp, priority, node_type)
    return outcome


def reserved_in(partition_of: dict[str, str], sapp: SchedulerApp, partition: str) -> Resource:
    """The app's reservations on nodes of `partition` (ResourceUsage's
    reserved by partition; all of them while no node has a label)."""
    if not partition_of:
        return sapp.reserved_total()
    total = ZERO
    for node_id, c in sapp.reservations.items():
        if partition_of.get(node_id, "") == partition:
            total = total + c.resource
    return total


def _accepted(st: AllocatorState, sapp: SchedulerApp, capability: Resource) -> bool:
    return st.accepts is None or st.accepts(sapp, capability)


def _reset_opportunities(
    st: AllocatorState, sapp: SchedulerApp, priority: int, node_type: str
) -> None:
    """RegularContainerAllocator.doAllocation, for a new container or a new
    reservation alike: a node-local one (or a rack-local one with
    rack-locality-full-reset) restarts the app's delay at `priority`."""
    if node_type == NODE_LOCAL or (node_type == RACK_LOCAL and st.cs.rack_locality_full_reset):
        _note(st, sapp.opportunities, priority, reset=True)
        sapp.opportunities[priority] = 0
    if st.labelled and not st.node_partition:
        key = (sapp.attempt_id, priority)
        _note(st, st.missed, key, reset=True)
        st.missed.pop(key, None)


def _node_to_unreserve(
    st: AllocatorState,
    sapp: SchedulerApp,
    node: SchedulerNode,
    priority: int,
    amount: Resource,
) -> SchedulerNode | None:
    """FiCaSchedulerApp.getNodeIdToUnreserve: the first reservation at
    `priority` at least `amount` big, in the iteration order of the
    HashMap<NodeId, RMContainer> Hadoop keeps them in; `node`'s own
    included (only multi-node placement walks a node the app reserved:
    the proposal is then refused at commit)."""
    held = [
        st.nodes[node_id]
        for node_id, c in sapp.reservations.items()
        if c.priority == priority and node_id in st.nodes
    ]
    peak = st.reservation_peaks.get((sapp.attempt_id, priority), len(held))
    for other in javahash.hash_order(held, lambda n: javahash.node_id_hash(n.host), peak):
        c = sapp.reservations[other.node_id]
        if rm.fits(st.calc, amount, c.resource):
            return other
    return None


def reserved_containers(st: AllocatorState, sapp: SchedulerApp) -> list[RMContainer]:
    """SchedulerApplicationAttempt.getReservedContainers: the attempt's
    reservations in the order its HashMap<SchedulerRequestKey,
    HashMap<NodeId, RMContainer>> iterates them (each inner map's table
    as large as its peak, `reservation_peaks`)."""
    by_priority: dict[int, list[RMContainer]] = {}
    for c in sapp.reservations.values():
        by_priority.setdefault(c.priority, []).append(c)
    priorities = javahash.hash_order(
        list(by_priority), javahash.scheduler_key_hash, len(by_priority)
    )
    nodes = st.nodes

    def node_hash(c: RMContainer) -> int:
        node = nodes.get(c.node_id)
        return javahash.node_id_hash(node.host if node is not None else c.node_id)

    ordered: list[RMContainer] = []
    for priority in priorities:
        held = by_priority[priority]
        peak = st.reservation_peaks.get((sapp.attempt_id, priority), len(held))
        ordered.extend(javahash.hash_order(held, node_hash, peak))
    return ordered


def should_allocate_or_reserve(
    st: AllocatorState, sapp: SchedulerApp, priority: int, required: Resource
) -> bool:
    """RegularContainerAllocator.shouldAllocOrReserveNewContainer."""
    any_ask = sapp.info.get(priority, ANY)
    outstanding = any_ask.num if any_ask is not None else 0
    reservations = sapp.reservations
    reserved = (
        sum(1 for c in reservations.values() if c.priority == priority) if reservations else 0
    )
    starvation = 0
    if reserved:
        leaf_max = st.leaf_max(sapp.queue)
        node_factor = st.calc.ratio(required, leaf_max)
        min_factor = st.calc.ratio(leaf_max - st.minimum, leaf_max)
        rereserved = st.rereservations.get((sapp.attempt_id, priority), 0)
        starvation = int((rereserved / reserved) * (1.0 - min(node_factor, min_factor)))
    return starvation + outstanding - reserved > 0


def fulfil_reservation(st: AllocatorState, node: SchedulerNode) -> bool:
    """Allocate from the node's reserved container if it now fits (queue
    limits are not checked again, as in YARN); drop the reservation if the
    app no longer needs it; otherwise re-reserve. True if a container was
    allocated."""
    proposal = propose_fulfilment(st, node)
    return proposal is not None and commit(st, proposal)


@dataclass(slots=True)
class Proposal:
    """A decision made in an offer and carried out at commit
    (CapacityScheduler.tryCommit). Asynchronous scheduling queues each
    proposal of an offer (ResourceCommitterService) and commits them after
    it, so with multi-node placement an offer's later decisions do not see
    its earlier ones; FiCaSchedulerApp.accept then checks each against the
    state of the moment."""

    outcome: str
    """ALLOCATED, RESERVED (a new reservation), or for a reserved node:
    FULFIL (allocate from it), RERESERVE, UNRESERVE."""
    sapp: SchedulerApp | None
    node: SchedulerNode
    priority: int
    node_type: str = OFF_SWITCH
    ask: Ask | None = None
    other: SchedulerNode | None = None
    """A reservation elsewhere given up for this allocation."""
    net: Resource = ZERO
    partition: str = ""
    ignore_exclusivity: bool = False
    reserved: RMContainer | None = None
    """The reserved container a FULFIL, RERESERVE or UNRESERVE is about."""


FULFIL, RERESERVE, UNRESERVE = "FULFIL", "RERESERVE", "UNRESERVE"


def propose_fulfilment(st: AllocatorState, node: SchedulerNode) -> Proposal | None:
    """CapacityScheduler.allocateFromReservedContainer's decision for the
    node's reserved container; None when it proposes nothing (a blacklisted
    node)."""
    reserved = node.reserved
    assert reserved is not None
    sapp = st.apps.get(reserved.attempt_id)
    if sapp is None:
        return Proposal(UNRESERVE, None, node, reserved.priority, reserved=reserved)
    priority = reserved.priority
    any_ask = sapp.info.get(priority, ANY)
    if any_ask is None or any_ask.num <= 0:
        return Proposal(UNRESERVE, sapp, node, priority, reserved=reserved)
    if node.host in sapp.blacklist or node.rack in sapp.blacklist:
        return None  # tryAllocateOnNode's checkIfNodeBlackListed: APP_SKIPPED
    # RegularContainerAllocator.tryAllocateOnNode counts a scheduling
    # opportunity for the reserved container's priority too (and never takes
    # it back, nor resets the count on this allocation): every heartbeat of
    # a reserved node brings the app closer to off-switch placement.
    _count(st, sapp.opportunities, priority, 1)
    st.touches += 1
    for node_type in (NODE_LOCAL, RACK_LOCAL, OFF_SWITCH):
        ask = sapp.info.can_place(priority, node, node_type)
        if ask is None:
            continue
        if node_type == RACK_LOCAL and not _delay_allows(st, sapp, priority, RACK_LOCAL):
            # canAssign's rack-local delay holds for a reserved container too
            # (only off-switch is exempt): it is then allocated off-switch.
            continue
        if st.calc.fits(ask.capability, node.available):
            return Proposal(FULFIL, sapp, node, priority, node_type, ask, reserved=reserved)
        break
    return Proposal(RERESERVE, sapp, node, priority, reserved=reserved)


def commit(st: AllocatorState, p: Proposal) -> bool:
    """Carry out `p` if it still holds (FiCaSchedulerApp.accept and
    AbstractCSQueue.accept against the state now); a refused one changes
    nothing. True if a container was allocated."""
    node, sapp = p.node, p.sapp
    if p.outcome in (FULFIL, RERESERVE, UNRESERVE):
        if node.reserved is not p.reserved or node.node_id not in st.nodes:
            return False  # the reservation is gone, or the node
        if p.outcome == UNRESERVE:
            st.containers.unreserve(sapp, node)
            return False
        if p.outcome == RERESERVE:
            assert sapp is not None
            # More re-reservations only ever let the app reserve more
            # (shouldAllocOrReserveNewContainer's starvation term): once it
            # may, the count is past its threshold.
            any_ask = sapp.info.get(p.priority, ANY)
            past = any_ask is not None and should_allocate_or_reserve(
                st, sapp, p.priority, any_ask.capability
            )
            _count(st, st.rereservations, (sapp.attempt_id, p.priority), 1, past)
            return False
        assert sapp is not None and p.ask is not None and p.reserved is not None
        if sapp.info.can_place(p.priority, node, p.node_type) is None or not st.calc.fits(
            p.ask.capability, node.available
        ):
            _refused(st)
            return False
        st.fulfilling = True
        st.containers.unreserve(sapp, node)
        # The reserved Container itself is allocated, its id included
        # (RegularContainerAllocator.getContainer with a reserved RMContainer).
        st.containers.place(sapp, node, p.priority, p.node_type, p.ask, p.reserved.container_id)
        st.fulfilling = False
        return True
    assert sapp is not None and p.ask is not None
    saved = st.node_partition, st.ignore_exclusivity
    st.node_partition, st.ignore_exclusivity = p.partition, p.ignore_exclusivity
    try:
        live = sapp.attempt_id in st.apps and node.node_id in st.nodes
        if p.outcome == RESERVED:
            if live and node.reserved is None and _accepted(st, sapp, p.net):
                st.containers.reserve(sapp, node, p.priority, p.ask)
                return False
            _refused(st)
            return False
        other = p.other
        ok = (
            live
            and node.reserved is None
            and sapp.info.can_place(p.priority, node, p.node_type) is not None
            and st.calc.fits(p.ask.capability, node.available)
            and (other is None or other.node_id in sapp.reservations)
            and _accepted(st, sapp, p.net)
        )
        if not ok:
            _refused(st)
            return False
        if other is not None:
            st.containers.unreserve(sapp, other)
        st.containers.place(sapp, node, p.priority, p.node_type, p.ask)
        return True
    finally:
        st.node_partition, st.ignore_exclusivity = saved


def _refused(st: AllocatorState) -> None:
    """A proposal refused at commit: nothing changes but the flag."""
    st.rejected = True
    st.touches += 1

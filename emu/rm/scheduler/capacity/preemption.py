"""ProportionalCapacityPreemptionPolicy: take back what queues borrowed
when the owners' demand returns.

Every `monitoring_interval` the policy snapshots the queue tree
(`TempQueue`, as Hadoop's TempQueuePerPartition) and, level by level from
the root, computes each queue's *ideal assignment*: the parent's share is
handed out as a fixpoint, most under-served queue (ideal / guaranteed)
first, each offered its guarantee-weighted part of what is left and
accepting up to min(maximum capacity, usage + pending asks) - and, for a
leaf, no more than max(usage, guarantee). The weights are per resource
type: where some needy queue's guarantee of a type rounded down to 0 they
are the queues' absolute capacities, and where none has any of it, equal
parts. Queues with no guarantee share what remains evenly. Usage above
the ideal assignment, but never below min(usage + pending, guarantee), is
preemptable; when the total exceeds `total_preemption_per_round` of the
cluster every queue's amount is scaled down. Leaves with
`disable_preemption` keep their excess (it becomes untouchable for their
parents too). A leaf gives back only if its usage is above guarantee *
(1 + `max_ignored_over_capacity`) (the dead zone), and then
`natural_termination_factor` of its preemptable amount per round.

Victims (FifoCandidatesSelector): leaf by leaf in the iteration order of
the HashSet of their paths, and in each leaf, apps from the last in
scheduling order (the newest, lowest priority) backwards; in each app its
reservations first, then containers from the lowest priority and the newest
container; AM containers are skipped and taken last, only while the skipped
AM containers exceed the queue's AM share. A selected container is first
marked: its id goes into the app's preemption contract
(`SchedulerApp.to_preempt`), returned by `allocate`. If it is still
selected `max_wait_before_kill` later, the policy dispatches
`KILL_PREEMPTED`. Marks left unselected for twice that long are dropped.
With `observe_only` nothing is marked or killed.

With node labels every labelled partition gets its own tree
(TempQueuePerPartition): the queues' guarantees and maximums in the
partition's resource (a queue with no capacities in a non-exclusive
partition may take all of it), their usage and pending asks there. The
ideal allocation runs on each tree as on the default one, every one
scaled against the same allowance; a leaf then gives up, per partition,
what its trees say, each container counting for its node's partition,
starting with the containers its default-partition asks got on
non-exclusive nodes (newest first, AM containers too), with one budget for
the round across partitions.

With `intra-queue-preemption.enabled`, IntraQueueCandidatesSelector
(`intra_preemption`) runs next in the same round, partition by partition,
over the leaves the ideal allocation there found wanting more (in the order
it found them), with what the round may still preempt; the containers it
selects are marked and killed the same way.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from emu.java_heap import JavaPriorityQueue
from emu.resources import ZERO, DominantResourceCalculator, Resource, ResourceCalculator
from emu.rm.container import RMContainer  # named by TempQueue at run time
from emu.rm.scheduler import javahash
from emu.rm.scheduler.capacity import intra_preemption
from emu.rm.scheduler.capacity import resource_math as rm
from emu.rm.scheduler.capacity.config import PreemptionConf
from emu.rm.scheduler.events import SchedulerEvent
from emu.rm.scheduler.scheduler_app import SchedulerApp  # named by TempQueue at run time

if TYPE_CHECKING:
    from emu.rm.scheduler.scheduler_node import SchedulerNode


class _PolicyContext(Protocol):
    @property
    def containers(self) -> dict[str, RMContainer]: ...
    def now_ms(self) -> int: ...
    def dispatch(self, kind: str, etype: str, target: str, data: Any = None) -> None: ...


class Preemptable(Protocol):
    """What the policy reads from and does to the scheduler (the
    CapacityScheduler; tests give it a fixed matrix instead)."""

    @property
    def calc(self) -> ResourceCalculator: ...
    @property
    def cluster(self) -> Resource: ...
    @property
    def apps(self) -> dict[str, SchedulerApp]: ...
    @property
    def nodes(self) -> dict[str, SchedulerNode]: ...
    @property
    def ctx(self) -> _PolicyContext: ...
    def preemption_snapshot(self) -> TempQueue: ...
    def unreserve(self, sapp: SchedulerApp | None, node: SchedulerNode) -> None: ...


UNIT = Resource(1, 1)
MAX_INT = float(2**31 - 1)


@dataclass(eq=False)
class TempQueue:
    """A queue's state for one round of the policy."""

    name: str
    guaranteed: Resource
    maximum: Resource
    used: Resource
    pending: Resource = ZERO
    pending_deduct_reserved: Resource = ZERO
    reserved: Resource = ZERO
    preemption_disabled: bool = False
    abs_capacity: float = 0.0
    """The queue's absolute capacity in this partition (a Java float):
    the fixpoint weighs a resource type by it where some needy queue's
    guarantee of that type rounded down to 0."""
    relative_priority: int = 0
    """The queue's priority when its parent orders children by
    priority-utilization, else 0 (cloneQueues)."""
    children: list[TempQueue] = field(default_factory=list)
    apps: list[SchedulerApp] = field(default_factory=list)
    reservations: dict[str, list[RMContainer]] = field(default_factory=dict)
    """A leaf's apps' reserved containers, by attempt id, in the order
    Hadoop lists them (getReservedContainers); an app not here has its
    reservations taken by node id."""
    max_am_resource: Resource = ZERO
    ideal_assigned: Resource = ZERO
    to_be_preempted: Resource = ZERO
    actually_to_be_preempted: Resource = ZERO
    untouchable_extra: Resource = ZERO
    preemptable_extra: Resource = ZERO
    normalized_guarantee: dict[str, float] = field(default_factory=dict)
    intra: intra_preemption.IntraLeaf | None = None
    """A leaf's apps and users, when intra-queue preemption is on."""
    partition: str = ""
    """The node partition this is the queue's state in ("" the default one)."""
    total: Resource = ZERO
    """A root's only, with node labels: its partition's resource, which
    its comparisons are made over (unset: the whole cluster)."""
    partitions: list[TempQueue] = field(default_factory=list)
    """The default partition's root only: the roots of the labelled
    partitions, each preempted for in the same round with the same
    allowance (a share of the whole cluster), as Hadoop does per partition."""
    node_partition: dict[str, str] = field(default_factory=dict)
    """The default partition's root only: each labelled node's partition."""
    underserved: list[TempQueue] = field(default_factory=list)
    """A labelled partition's root only: its queues that wanted more, as
    the default partition's go to `compute_ideal_allocation`'s list."""
    ignore_exclusivity: dict[str, list[RMContainer]] = field(default_factory=dict)
    """A default-partition leaf's only: per labelled partition, the
    containers its default-partition asks got there by ignoring
    exclusivity, oldest first (LeafQueue.getIgnoreExclusivityRMContainers);
    they are taken before any other."""

    def add_child(self, q: TempQueue) -> None:
        self.children.append(q)
        self.pending = self.pending + q.pending
        self.pending_deduct_reserved = self.pending_deduct_reserved + q.pending_deduct_reserved

    def leaves(self) -> list[TempQueue]:
        if not self.children:
            return [self]
        return [leaf for c in self.children for leaf in c.leaves()]

    # --- TempQueuePerPartition ----------------------------------------------------
    def offer(self, avail: Resource, calc: ResourceCalculator, cluster: Resource) -> Resource:
        """Accept what this queue can use of `avail`; return the rest
        (TempQueuePerPartition.offer: the room below the maximum caps the
        rest type by type, and what is accepted stays within 0 and `avail`
        in every type)."""
        max_delta = rm.non_negative(self.maximum - self.ideal_assigned)
        wanted = self.used + self.pending_deduct_reserved - self.ideal_assigned
        accepted = rm.cmin(max_delta, rm.rmin(calc, cluster, avail, wanted))
        if not self.children:
            room = rm.rmax(calc, cluster, self.used, self.guaranteed) - self.ideal_assigned
            room = rm.rmax(calc, cluster, room, ZERO)
            accepted = rm.rmin(calc, cluster, accepted, room)
        accepted = rm.cmin(rm.non_negative(accepted), avail)
        self.ideal_assigned = self.ideal_assigned + accepted
        return avail - accepted

    def update_preemptable_extras(self, calc: ResourceCalculator, cluster: Resource) -> None:
        for c in self.children:
            c.update_preemptable_extras(calc, cluster)
        extra = self.used - self.guaranteed
        if rm.lt(calc, cluster, extra, ZERO):
            extra = ZERO
        if not self.children:
            self.untouchable_extra = extra if self.preemption_disabled else ZERO
            self.preemptable_extra = ZERO if self.preemption_disabled else extra
            return
        children = ZERO
        for c in self.children:
            children = children + c.preemptable_extra
        self.untouchable_extra = ZERO if rm.ge(calc, cluster, children, extra) else extra - children
        self.preemptable_extra = rm.rmin(calc, cluster, children, extra)

    def assign_preemption(
        self, scaling: float, calc: ResourceCalculator, cluster: Resource
    ) -> None:
        total = self.used + self.pending
        keep = rm.rmax(
            calc, cluster, rm.rmin(calc, cluster, total, self.guaranteed), self.ideal_assigned
        )
        if rm.gt(calc, cluster, self.used, keep):
            self.to_be_preempted = rm.multiply(self.used - keep, scaling)
        else:
            self.to_be_preempted = ZERO


# --- ideal allocation (PreemptableResourceCalculator) -------------------------
def _pct_of_guaranteed(q: TempQueue, calc: ResourceCalculator, cluster: Resource) -> float:
    """TQComparator.getIdealPctOfGuaranteed: ideal / guaranteed as
    Resources.divide gives it, a Java float (0 / 0 is NaN); a queue
    without a guarantee comes last."""
    if not rm.positive(calc, cluster, q.guaranteed):
        return MAX_INT
    if isinstance(calc, DominantResourceCalculator):
        num, den = calc.share(cluster, q.ideal_assigned), calc.share(cluster, q.guaranteed)
    else:
        num, den = float(q.ideal_assigned.memory), float(q.guaranteed.memory)
    if den == 0:
        return math.nan if num == 0 else math.copysign(math.inf, num)
    return rm.f32(num / den)


def _double_compare(a: float, b: float) -> int:
    """java.lang.Double.compare: NaN equals itself and is above all else."""
    if a < b:
        return -1
    if a > b:
        return 1
    a_nan, b_nan = a != a, b != b
    return (a_nan > b_nan) - (a_nan < b_nan)


def _by_need(calc: ResourceCalculator, cluster: Resource) -> Callable[[TempQueue, TempQueue], int]:
    """TQComparator: the least served (ideal over guarantee) first, by
    PriorityUtilizationQueueOrderingPolicy.compare with the queues'
    relative priorities: of two queues both below 1 or both at or above
    it, the higher priority first."""

    def cmp(a: TempQueue, b: TempQueue) -> int:
        pa, pb = _pct_of_guaranteed(a, calc, cluster), _pct_of_guaranteed(b, calc, cluster)
        ra, rb = a.relative_priority, b.relative_priority
        if ra != rb and ((pa < 1.0 and pb < 1.0) or (pa >= 1.0 and pb >= 1.0)):
            return (rb > ra) - (rb < ra)
        return _double_compare(pa, pb)

    return cmp


def _reset_capacity(queues: list[TempQueue], types: list[str], ignore_guarantee: bool) -> None:
    """AbstractPreemptableResourceCalculator.resetCapacity: each queue's
    part of what is left, per resource type, in Java floats. By default
    its guarantee over the needy queues' guarantees of that type; where
    some needy queue's guarantee of the type is 0 though its absolute
    capacity is not (a small queue rounded down), its absolute capacity
    over theirs; where none is guaranteed any of the type (or none has
    any capacity, or `ignore_guarantee`), equal parts."""
    even = rm.f32(1.0 / len(queues))
    if ignore_guarantee:
        for q in queues:
            q.normalized_guarantee = dict.fromkeys(types, even)
        return
    active = ZERO
    total_abs = 0.0
    for q in queues:
        active = active + q.guaranteed
        total_abs = rm.f32(total_abs + rm.f32(q.abs_capacity))
    total = active.to_wire()
    mine = [q.guaranteed.to_wire() for q in queues]
    parts = [dict(q.normalized_guarantee) for q in queues]
    for t in types:
        den = total.get(t, 0)
        by_abs = False
        evenly = total_abs == 0
        for q, g in zip(queues, mine, strict=True):
            if g.get(t, 0) == 0 and q.abs_capacity != 0 and den != 0:
                by_abs = True
                break
            if den == 0:
                evenly = True
        for q, g, part in zip(queues, mine, parts, strict=True):
            if by_abs:
                part[t] = rm.f32(rm.f32(q.abs_capacity) / total_abs)
            elif evenly:
                part[t] = even
            else:
                part[t] = rm.f32(rm.f32(g.get(t, 0)) / rm.f32(den))
    for q, part in zip(queues, parts, strict=True):
        q.normalized_guarantee = part


def _fixpoint(
    calc: ResourceCalculator,
    tot_guarant: Resource,
    queues: list[TempQueue],
    unassigned: Resource,
    ignore_guarantee: bool,
    underserved: list[TempQueue],
) -> Resource:
    """computeFixpointAllocation. Queues that wanted more go to
    `underserved` in the order Hadoop adds them
    (addPartitionToUnderServedQueues): each most-under-served group and the
    queue after it as they are served, then the rest by need.

    Each round every queue of the most under-served group is offered its
    part of what was left when the round began, no more than what is
    still left; the round stops once nothing is (isAnyMajorResourceAboveZero).

    Returns what the caller's `unassigned` holds afterwards: Hadoop
    subtracts in place from the Resource it was given until the first
    offer, then goes on with a copy (componentwiseMax), so the caller sees
    only the initial assignments and that first offer taken out."""
    cmp = _by_need(calc, tot_guarant)
    needy: JavaPriorityQueue[TempQueue] = JavaPriorityQueue(cmp)
    for q in queues:
        if rm.gt(calc, tot_guarant, q.used, q.guaranteed):
            q.ideal_assigned = rm.cmin(q.guaranteed, q.used) + q.untouchable_extra
        else:
            q.ideal_assigned = q.used
        unassigned = unassigned - q.ideal_assigned
        if rm.lt(calc, tot_guarant, q.ideal_assigned, q.used + q.pending):
            needy.add(q)
    seen_by_caller: Resource | None = None
    types = list(unassigned.to_wire())
    while needy and rm.positive(calc, tot_guarant, unassigned):
        _reset_capacity(list(needy.heap), types, ignore_guarantee)
        group: list[TempQueue] = []
        while needy:
            q = needy.poll()
            group.append(q)
            underserved.append(q)
            nxt = needy.peek()
            if nxt is None or cmp(q, nxt) < 0:
                if nxt is not None:
                    underserved.append(nxt)
                break
        at_start = unassigned
        for q in group:
            if not rm.any_major_above_zero(calc, unassigned):
                break
            avail = rm.multiply_up_each(calc, at_start, q.normalized_guarantee, UNIT)
            avail = rm.cmin(avail, unassigned)
            done = avail - q.offer(avail, calc, tot_guarant)
            if rm.positive(calc, tot_guarant, done):
                needy.add(q)
            unassigned = unassigned - done
            if seen_by_caller is None:
                seen_by_caller = unassigned
            unassigned = rm.non_negative(unassigned)
    while needy:
        underserved.append(needy.poll())
    return unassigned if seen_by_caller is None else seen_by_caller


def _distribute(
    calc: ResourceCalculator,
    queues: list[TempQueue],
    total_allowed: Resource,
    tot_guarant: Resource,
    underserved: list[TempQueue],
) -> None:
    """computeIdealResourceDistribution for one level of the tree. Hadoop
    gathers the queues in HashSet<TempQueuePerPartition>s, iterated in the
    order of their identity hashes; emu runs Hadoop's JVM with every identity
    hash 1 (emu.hadoop.bridge), which makes that order the children's order
    (up to 10 queues; more turn the one bucket into a tree)."""
    nonzero = [q for q in queues if rm.positive(calc, tot_guarant, q.guaranteed)]
    zero = [q for q in queues if not rm.positive(calc, tot_guarant, q.guaranteed)]
    unassigned = _fixpoint(calc, tot_guarant, nonzero, tot_guarant, False, underserved)
    if zero and rm.positive(calc, tot_guarant, unassigned):
        _fixpoint(calc, tot_guarant, zero, unassigned, True, underserved)
    needed = ZERO
    for q in queues:
        if rm.gt(calc, tot_guarant, q.used, q.ideal_assigned):
            needed = needed + (q.used - q.ideal_assigned)
    scaling = 1.0
    if rm.gt(calc, tot_guarant, needed, total_allowed):
        scaling = rm.f32(rm.divide(calc, tot_guarant, total_allowed, needed))
    for q in queues:
        q.assign_preemption(scaling, calc, tot_guarant)


def _recurse(
    calc: ResourceCalculator, q: TempQueue, total_allowed: Resource, underserved: list[TempQueue]
) -> None:
    if q.children:
        _distribute(calc, q.children, total_allowed, q.ideal_assigned, underserved)
        for c in q.children:
            _recurse(calc, c, total_allowed, underserved)


def compute_ideal_allocation(
    calc: ResourceCalculator,
    cluster: Resource,
    root: TempQueue,
    total_allowed: Resource,
    conf: PreemptionConf,
    underserved: list[TempQueue] | None = None,
) -> None:
    """Sets `actually_to_be_preempted` on every leaf, in every partition
    (PreemptableResourceCalculator.computeIdealAllocation: each partition's
    tree on its own, each scaled against the same allowance); lists the
    default partition's queues that wanted more in `underserved`, as
    IntraQueueCandidatesSelector visits them."""
    for r in (root, *root.partitions):
        total = cluster if r.total.is_zero() else r.total
        r.update_preemptable_extras(calc, total)
        r.ideal_assigned = r.guaranteed
        wanting = r.underserved if r is not root else underserved if underserved is not None else []
        _recurse(calc, r, total_allowed, wanting)
    for r in (root, *root.partitions):
        for leaf in r.leaves():
            if leaf.preemption_disabled:
                continue
            dead_zone = rm.multiply(leaf.guaranteed, 1.0 + conf.max_ignored_over_capacity)
            if rm.gt(calc, cluster, leaf.used, dead_zone):
                res = leaf.to_be_preempted
                if rm.positive(calc, cluster, res):
                    res = rm.multiply_up(calc, res, conf.natural_termination_factor, UNIT)
                leaf.actually_to_be_preempted = res
            else:
                leaf.actually_to_be_preempted = ZERO


# --- victims (FifoCandidatesSelector) -----------------------------------------
def container_order_key(c: RMContainer) -> tuple[int, tuple[int, ...]]:
    """Sort key putting the lowest priority (largest number) and the newest
    container first, as FifoCandidatesSelector.sortContainers does."""
    return (-c.priority, tuple(-int(p) for p in c.container_id.split("_")[1:] if p.isdigit()))


def container_id_key(c: RMContainer) -> tuple[int, ...]:
    """ContainerId order: by application attempt, then container number."""
    return tuple(int(p) for p in c.container_id.split("_")[1:] if p.isdigit())


def leaf_queue_order(root: TempQueue) -> list[TempQueue]:
    """The leaves in the order FifoCandidatesSelector.selectCandidates visits
    them: ProportionalCapacityPreemptionPolicy.getLeafQueueNames gathers the
    leaves' paths into a HashSet (each parent's set added to its parent's,
    so paths in one bucket keep tree order) and keeps that set's iteration
    order (ImmutableSet.copyOf). Which leaf comes first decides which queue
    spends the round's allowance (total_preemption_per_round) first."""
    leaves = root.leaves()
    return javahash.hash_order(leaves, lambda q: javahash.string_hash(q.name), len(leaves))


def select_candidates(
    calc: ResourceCalculator,
    cluster: Resource,
    root: TempQueue,
    total_allowed: Resource,
    budget: list[Resource] | None = None,
) -> tuple[dict[str, list[RMContainer]], list[RMContainer]]:
    """Containers selected per attempt (reserved ones included, as YARN
    counts them), and the reservations the selector visited, which are
    dropped at once. `budget` (one value: what the round may still
    preempt) is shared with the selectors that run after this one.

    Each leaf gives up, per partition, what the ideal allocation there
    says (resToObtainByPartition); a container counts for the partition of
    its node, and is passed over once its partition has given enough."""
    selected: dict[str, list[RMContainer]] = {}
    chosen: set[str] = set()
    unreserve: list[RMContainer] = []
    allowed = budget if budget is not None else [total_allowed]
    where = root.node_partition
    elsewhere: dict[str, list[TempQueue]] = {}
    for r in root.partitions:
        for leaf in r.leaves():
            elsewhere.setdefault(leaf.name, []).append(leaf)

    def take(c: RMContainer, want: dict[str, Resource]) -> bool:
        """tryPreemptContainerAndDeductResToObtain."""
        if c.container_id in chosen:
            return False
        p = where.get(c.node_id, "") if where else ""
        need = want.get(p)
        if need is None or not rm.fits(calc, c.resource, allowed[0]):
            return False
        need = need - c.resource
        allowed[0] = allowed[0] - c.resource
        if rm.positive(calc, cluster, need):
            want[p] = need
        else:
            del want[p]
        chosen.add(c.container_id)
        selected.setdefault(c.attempt_id, []).append(c)
        return True

    for leaf in leaf_queue_order(root):
        if leaf.preemption_disabled:
            continue
        want: dict[str, Resource] = {}
        if rm.positive(calc, cluster, leaf.actually_to_be_preempted):
            want[""] = leaf.actually_to_be_preempted
        for other in elsewhere.get(leaf.name, ()):
            if rm.positive(calc, cluster, other.actually_to_be_preempted):
                want[other.partition] = other.actually_to_be_preempted
        if not want:
            continue
        if leaf.ignore_exclusivity:
            order = javahash.hash_order(list(want), javahash.string_hash, len(want))
            for p in order:
                for c in reversed(leaf.ignore_exclusivity.get(p, [])):
                    take(c, want)
        skipped_am: list[RMContainer] = []
        skipped_am_size = ZERO
        for sapp in reversed(leaf.apps):
            if not want:
                break
            # preemptFrom drops the reservations first, in the attempt's
            # getReservedContainers order, each it reaches whether or not it
            # counts (KILL_RESERVED_CONTAINER), but one already selected.
            held = leaf.reservations.get(sapp.attempt_id)
            if held is None:
                held = [sapp.reservations[n] for n in sorted(sapp.reservations)]
            for c in held:
                if c.container_id in chosen:
                    continue
                if not want:
                    break
                take(c, want)
                unreserve.append(c)
            for c in sorted(sapp.live.values(), key=container_order_key):
                if not want:
                    break
                if c.container_id in chosen:
                    continue
                if c.is_am:
                    skipped_am.append(c)
                    skipped_am_size = skipped_am_size + c.resource
                    continue
                take(c, want)
        for c in skipped_am:
            if not want:
                break
            if rm.le(calc, cluster, skipped_am_size, leaf.max_am_resource):
                break
            if take(c, want):
                skipped_am_size = skipped_am_size - c.resource
    return selected, unreserve


def _select_intra(
    calc: ResourceCalculator,
    cluster: Resource,
    root: TempQueue,
    underserved: list[TempQueue],
    selected: dict[str, list[RMContainer]],
    budget: list[Resource],
    conf: PreemptionConf,
) -> dict[str, list[RMContainer]]:
    """IntraQueueCandidatesSelector over the under-served leaves of each
    partition (the HashSet of partition names, then a LinkedHashSet of
    queue names per partition), each leaf once per partition."""
    wanting: dict[str, list[TempQueue]] = {"": underserved}
    for r in root.partitions:
        wanting[r.partition] = r.underserved
    names = javahash.hash_order(list(wanting), javahash.string_hash, len(wanting))
    leaves: list[tuple[intra_preemption.IntraLeaf, Resource, Resource, Resource]] = []
    for name in names:
        seen: set[str] = set()
        for q in wanting[name]:
            if q.name in seen or q.intra is None:
                continue
            seen.add(q.name)
            leaves.append((q.intra, q.used, q.guaranteed, q.actually_to_be_preempted))
    return intra_preemption.select_candidates(
        calc, cluster, leaves, selected, budget, conf, container_order_key, root.node_partition
    )


class PreemptionPolicy:
    """The monitor: one `edit_schedule` call per monitoring interval."""

    def __init__(self, conf: PreemptionConf) -> None:
        self.conf = conf
        self.marked: dict[str, int] = {}
        self.rounds = 0

    def edit_schedule(self, sched: Preemptable) -> None:
        self.rounds += 1
        calc, cluster = sched.calc, sched.cluster
        if cluster.is_zero():
            return
        root = sched.preemption_snapshot()
        total_allowed = rm.multiply(cluster, self.conf.total_preemption_per_round)
        underserved: list[TempQueue] = []
        compute_ideal_allocation(calc, cluster, root, total_allowed, self.conf, underserved)
        budget = [total_allowed]
        selected, unreserve = select_candidates(calc, cluster, root, total_allowed, budget)
        rounds = [selected]
        if self.conf.intra_queue_enabled:
            rounds.append(
                _select_intra(calc, cluster, root, underserved, selected, budget, self.conf)
            )
        if self.conf.observe_only:
            return
        for c in unreserve:
            node = sched.nodes.get(c.node_id)
            if node is not None and node.reserved is c:
                sched.unreserve(sched.apps.get(c.attempt_id), node)
        now = sched.ctx.now_ms()
        for chosen_by in rounds:
            self._mark_or_kill(sched, chosen_by, now)
        max_wait = self.conf.max_wait_before_kill_ms
        for cid in [k for k, t in self.marked.items() if t + 2 * max_wait < now]:
            del self.marked[cid]
            held = sched.ctx.containers.get(cid)
            sapp = sched.apps.get(held.attempt_id) if held is not None else None
            if sapp is not None:
                sapp.unmark_for_preemption(cid)

    def _mark_or_kill(
        self, sched: Preemptable, selected: dict[str, list[RMContainer]], now: int
    ) -> None:
        """Mark what one selector chose; kill what stayed marked
        `max_wait_before_kill`. preemptOrkillSelectedContainerAfterWait walks
        each selector's HashMap<ApplicationAttemptId, HashSet<RMContainer>>:
        marks and kills of one round go out in those maps' order."""
        max_wait = self.conf.max_wait_before_kill_ms
        attempts = javahash.hash_order(list(selected), javahash.attempt_hash_of, len(selected))
        for attempt_id in attempts:
            sapp = sched.apps.get(attempt_id)
            chosen = selected[attempt_id]
            by_id = lambda c: javahash.container_id_hash(c.container_id)  # noqa: E731
            for c in javahash.hash_order(chosen, by_id, len(chosen)):
                if c.container_id not in sched.ctx.containers:
                    continue  # a reservation: dropped above, nothing to mark
                cid = c.container_id
                since = self.marked.get(cid)
                if since is not None and since + max_wait <= now:
                    del self.marked[cid]
                    sched.ctx.dispatch("scheduler", SchedulerEvent.KILL_PREEMPTED, cid)
                elif since is None:
                    self.marked[cid] = now
                    if sapp is not None:
                        sapp.mark_for_preemption(c)

    def forget(self, container_id: str) -> None:
        self.marked.pop(container_id, None)

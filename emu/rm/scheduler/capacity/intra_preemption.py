"""IntraQueueCandidatesSelector: preemption within one leaf queue.

Cross-queue preemption (`preemption`) only moves resources between queues;
inside a queue, a high-priority app can wait behind the containers of older,
lower-priority apps, and a user below the user limit behind a user above it.
With `intra-queue-preemption.enabled` the policy runs this selector after
the cross-queue one, every round, as Hadoop's list of selectors does.

Per leaf the cross-queue computation found under-served (it had pending
demand), in that order, and whose used capacity reaches
`minimum-threshold` (FifoIntraQueuePreemptionPlugin):

1. Ideal assignment per app (`TempApp`): apps from the highest priority
   (then the oldest) down share the queue's usage less what cross-queue
   preemption takes and less the AM containers; each gets
   min(used + pending - AM - already selected, its user's user limit left
   (`TempUser`; the limit over all of the queue's users, less their AMs),
   what is left). What an app gets above its usage it needs from others.
   With the `fair` ordering policy and `userlimit_first`, the order is the
   queue's fair order within a user (by the usage that policy last sorted
   by, `LeafQueue.fair_seen`, which FifoCandidatesSelector's
   getPreemptionIterator has just brought up to date for the apps whose
   containers came or went: AbstractComparatorOrderingPolicy
   .reorderScheduleEntities) and least-used user first across users
   (TAFairOrderingComparator).
2. Preemptable per app, from the lowest priority up: usage above its ideal,
   less AM, less selected (less one minimum allocation with
   `userlimit_first`), within min(`max-allowable-limit` of the guarantee less
   what cross-queue preemption takes, what the round may still preempt).
3. Each needy app, highest first, takes from the lowest apps up: never from
   an app of its own user at its priority or above; with `userlimit_first`
   never from another user below the user limit; from another user at the
   same priority at most what that user holds above the limit.
4. Containers already selected this round are deducted, then containers
   are taken app by app (lowest first), lowest container priority and
   newest first, skipping AM containers, and with `userlimit_first` stopping
   at the one that would take its user to the user limit or below.

A queue whose `intra-queue-preemption.disable_preemption` (or, unset, its
parent's) is true, or with cross-queue preemption disabled, gives nothing.

With node labels a leaf is looked at once per partition it is under-served
in (`IntraLeaf.partition`): its apps' usage, running AMs and pending asks
there, its users' usage there and the user limit over the partition's
resource; only containers on that partition's nodes are taken, and what
earlier selectors took counts for the partition of its node.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from emu.resources import ZERO, DominantResourceCalculator, Resource, ResourceCalculator
from emu.rm.scheduler.capacity import resource_math as rm
from emu.rm.scheduler.capacity.config import USERLIMIT_FIRST, PreemptionConf
from emu.rm.scheduler.scheduler_app import SchedulerApp  # named by IntraLeaf at run time

if TYPE_CHECKING:
    from emu.rm.container import RMContainer


@dataclass(eq=False)
class TempUser:
    """TempUserPerPartition: one user of a leaf, for one round."""

    name: str
    used: Resource
    am_used: Resource
    user_limit: Resource
    """The user limit over all of the queue's users, less the user's AMs."""
    ideal_assigned: Resource = ZERO
    selected: Resource = ZERO
    quota_done: bool = False

    def used_deduct_am(self) -> Resource:
        return self.used - self.am_used

    def limit_reached(self, calc: ResourceCalculator, cluster: Resource) -> bool:
        return rm.gt(calc, cluster, self.used_deduct_am(), self.user_limit)


@dataclass(eq=False)
class TempApp:
    """TempAppPerPartition: one app of a leaf, for one round."""

    sapp: SchedulerApp
    user: TempUser
    used: Resource
    am_used: Resource
    pending: Resource
    ideal_assigned: Resource = ZERO
    to_be_preempted: Resource = ZERO
    actually_to_be_preempted: Resource = ZERO
    from_other: Resource = ZERO
    selected: Resource = ZERO

    @property
    def priority(self) -> int:
        return self.sapp.priority

    def deduct(self, calc: ResourceCalculator, cluster: Resource, res: Resource) -> None:
        if rm.gt(calc, cluster, self.actually_to_be_preempted, res):
            self.actually_to_be_preempted = self.actually_to_be_preempted - res


@dataclass(eq=False)
class IntraLeaf:
    """What the selector reads of one leaf queue (taken with the snapshot)
    and what it computes there."""

    all_apps: list[SchedulerApp]
    """Pending and active attempts (getAllApplications)."""
    active: list[SchedulerApp]
    user_used: dict[str, Resource]
    user_limit: Callable[[str], Resource]
    """getResourceLimitForAllUsers for a user (times its weight), read when the
    leaf's first user is looked at: UsersManager computes it then, or
    serves the value it cached at an earlier round if no usage or active
    user has changed since."""
    used_capacity: float
    disabled: bool
    fair: bool
    fair_key: Callable[[SchedulerApp], tuple[float, int, int]]
    minimum: Resource
    apps: list[TempApp] = field(default_factory=list)
    """Lowest priority first, once the demand is computed."""
    users: dict[str, TempUser] = field(default_factory=dict)
    partition: str = ""
    """The node partition these figures are for ("" the default one)."""
    usage: dict[str, tuple[Resource, Resource, Resource]] | None = None
    """With node labels: each attempt's usage, running AM and pending asks
    in `partition` (unset: the attempt's own, all in one partition)."""
    app_partition: dict[str, str] = field(default_factory=dict)
    """With node labels: the partition each labelled attempt asks for."""

    def asks_here(self, attempt_id: str) -> bool:
        """Whether an attempt's asks (and so its containers' label) are
        for this partition."""
        return self.usage is None or self.app_partition.get(attempt_id, "") == self.partition


def all_users_limit(
    calc: ResourceCalculator,
    cluster: Resource,
    minimum: Resource,
    guaranteed: Resource,
    used_by_user: list[Resource],
    percent: float,
    factor: float,
    queue_max: Resource,
    usage_ratio: float | None = None,
    weights: float | None = None,
) -> Resource:
    """UsersManager.computeUserLimit for all users (activeUser false): the
    queue's current capacity split among every user it knows, at least
    `percent` of it, capped by `factor` times the guarantee (-1: the
    queue's maximum), rounded up to the minimum allocation. What the queue
    consumes comes from its float usage ratio (`usage_ratio`) where
    UsersManager keeps one, else from the users' usage; with user weights
    the split is by the float sum of every user's weight (`weights`,
    allUsersTimesWeights), not by their number."""
    queue_capacity, current = rm.current_capacity(
        calc, cluster, minimum, guaranteed, used_by_user, usage_ratio
    )
    split = (
        rm.divide_and_ceil(current, len(used_by_user))
        if weights is None
        else rm.divide_and_ceil_f32(current, weights)
    )
    limit = rm.rmax(
        calc,
        cluster,
        split,
        rm.divide_and_ceil(rm.multiply(current, percent), 100),
    )
    cap = queue_max if factor == -1 else rm.multiply(queue_capacity, factor)
    return rm.round_up(rm.rmin(calc, cluster, limit, cap), minimum)


def _any_zero_or_negative(calc: ResourceCalculator, r: Resource) -> bool:
    """isAnyMajorResourceZeroOrNegative (the default calculator: memory)."""
    if isinstance(calc, DominantResourceCalculator):
        return any(v <= 0 for v in r.components().values())
    return r.memory <= 0


def _zero_as_minus_one(r: Resource) -> Resource:
    """tryPreemptContainerAndDeductResToObtain sets a to-obtain type at 0 to
    -1, so a type nobody asked for never counts as still wanted."""
    if r.memory and r.vcores and all(v for _, v in r.extra):
        return r
    return Resource(r.memory or -1, r.vcores or -1, tuple((k, v or -1) for k, v in r.extra))


def _app_id_key(app_id: str) -> tuple[int, int]:
    """ApplicationId.compareTo: cluster timestamp, then sequence number."""
    parts = app_id.split("_")
    return (int(parts[1]), int(parts[2])) if len(parts) == 3 else (0, 0)


def _priority_order(a: TempApp) -> tuple[int, tuple[int, int]]:
    """TAPriorityComparator: the highest priority, then the oldest app, first."""
    return (-a.priority, _app_id_key(a.sapp.app_id))


def _ordered(
    calc: ResourceCalculator, cluster: Resource, leaf: IntraLeaf, apps: list[TempApp], fair: bool
) -> list[TempApp]:
    """Highest first, as the plugin's PriorityQueue hands them out."""
    if not fair:
        return sorted(apps, key=_priority_order)

    def cmp(a: TempApp, b: TempApp) -> int:
        """TAFairOrderingComparator: the queue's fair order within a user;
        across users the one using less (AM aside), then the older app."""
        if a.user is b.user:
            ka, kb = leaf.fair_key(a.sapp), leaf.fair_key(b.sapp)
            return -1 if ka < kb else (1 if ka > kb else 0)
        ua, ub = a.user.used_deduct_am(), b.user.used_deduct_am()
        if ua == ub:
            ia, ib = _app_id_key(a.sapp.app_id), _app_id_key(b.sapp.app_id)
            return -1 if ia < ib else (1 if ia > ib else 0)
        return -1 if rm.lt(calc, cluster, ua, ub) else 1

    return sorted(apps, key=functools.cmp_to_key(cmp))


def _selected_of(selected: dict[str, list[RMContainer]], attempt_id: str) -> Resource:
    total = ZERO
    for c in selected.get(attempt_id, ()):
        total = total + c.resource
    return total


def compute_demand(
    calc: ResourceCalculator,
    cluster: Resource,
    leaf: IntraLeaf,
    used: Resource,
    guaranteed: Resource,
    queue_to_preempt: Resource,
    selected: dict[str, list[RMContainer]],
    allowed: Resource,
    conf: PreemptionConf,
) -> None:
    """FifoIntraQueuePreemptionPlugin.computeAppsIdealAllocation: sets
    `leaf.apps` (lowest priority first) with what each app gives up."""
    ul_first = conf.intra_order_policy == USERLIMIT_FIRST
    conservative = conf.intra_conservative_drf
    am_by_user: dict[str, Resource] = {}
    am_total = ZERO
    for sapp in leaf.active:
        if not leaf.asks_here(sapp.attempt_id):
            continue  # its AM is another partition's (getAMResource(partition))
        am_by_user[sapp.user] = am_by_user.get(sapp.user, ZERO) + sapp.am_resource
        am_total = am_total + sapp.am_resource
    reassignable = used - queue_to_preempt - am_total
    if len(leaf.all_apps) == 1:
        return
    temp: list[TempApp] = []
    for sapp in leaf.all_apps:
        user = leaf.users.get(sapp.user)
        if user is None:
            am = am_by_user.get(sapp.user, ZERO)
            user = leaf.users[sapp.user] = TempUser(
                sapp.user, leaf.user_used.get(sapp.user, ZERO), am, leaf.user_limit(sapp.user) - am
            )
        if leaf.usage is None:
            am_used = sapp.am_resource if sapp.am_running else ZERO
            temp.append(TempApp(sapp, user, sapp.used, am_used, sapp.pending))
        else:
            used, am_used, pending = leaf.usage[sapp.attempt_id]
            temp.append(TempApp(sapp, user, used, am_used, pending))
    fair = leaf.fair and ul_first
    ordered = _ordered(calc, cluster, leaf, temp, fair)

    # calculateIdealAssignedResourcePerApp
    for ta in ordered:
        if rm.le(calc, cluster, reassignable, ZERO) or (
            conservative and _any_zero_or_negative(calc, reassignable)
        ):
            continue
        tu = ta.user
        if leaf.asks_here(ta.sapp.attempt_id):
            ta.selected = _selected_of(selected, ta.sapp.attempt_id)
        tu.selected = tu.selected + ta.selected
        wanted = ta.used - ta.am_used + ta.pending - ta.selected
        if not rm.lt(calc, cluster, tu.ideal_assigned, tu.user_limit):
            continue
        ideal = rm.rmin(calc, cluster, wanted, tu.user_limit - tu.ideal_assigned)
        ta.ideal_assigned = rm.rmin(calc, cluster, reassignable, ideal)
        tu.ideal_assigned = tu.ideal_assigned + ta.ideal_assigned
        held = ta.used - ta.am_used - ta.selected
        if rm.gt(calc, cluster, ta.ideal_assigned, held):
            ta.from_other = ta.ideal_assigned - held
        reassignable = rm.non_negative(reassignable - ta.ideal_assigned)

    most = rm.multiply(guaranteed, conf.intra_max_allowable_limit)
    most = most - queue_to_preempt if rm.gt(calc, cluster, most, queue_to_preempt) else ZERO
    limit = rm.rmin(calc, cluster, most, allowed)

    # calculateToBePreemptedResourcePerApp, lowest priority first
    low_first = ordered[::-1]
    for ta in low_first:
        if rm.le(calc, cluster, limit, ZERO) or rm.le(calc, cluster, ta.used, ZERO):
            continue
        give = rm.non_negative(ta.used - ta.ideal_assigned - ta.selected)
        give = rm.non_negative(give - ta.am_used)
        if ul_first:
            give = rm.non_negative(give - leaf.minimum)
        ta.to_be_preempted = rm.rmin(calc, cluster, give, limit)
        limit = rm.non_negative(limit - ta.to_be_preempted)
    leaf.apps = low_first
    _match_demand(calc, cluster, leaf, ul_first)


def _match_demand(
    calc: ResourceCalculator, cluster: Resource, leaf: IntraLeaf, ul_first: bool
) -> None:
    """validateOutSameAppPriorityFromDemand: each needy app, highest first,
    takes what it needs from the lowest apps up."""
    apps = leaf.apps
    for high in reversed(apps):
        if not rm.gt(calc, cluster, high.from_other, ZERO):
            continue
        for low in apps:
            if not rm.gt(calc, cluster, low.to_be_preempted, ZERO):
                continue
            same_user = high.user is low.user
            if same_user and low.priority >= high.priority:
                continue
            if (
                rm.le(calc, cluster, low.to_be_preempted, low.actually_to_be_preempted)
                or high.from_other.is_zero()
            ):
                continue
            tu = low.user
            reached = tu.limit_reached(calc, cluster)
            if not same_user and not reached and ul_first:
                continue
            wanted, taken = high.from_other, low.actually_to_be_preempted
            offer = low.to_be_preempted - taken
            if not same_user and low.priority == high.priority and reached:
                delta = tu.used_deduct_am() - tu.selected - tu.user_limit
                if tu.quota_done:
                    delta = ZERO
                if rm.lt(calc, cluster, delta, offer):
                    tu.quota_done = True
                    offer = delta
            if rm.gt(calc, cluster, offer, ZERO):
                take = rm.rmin(calc, cluster, wanted, offer)
                high.from_other = wanted - take
                low.actually_to_be_preempted = taken + take


@dataclass(eq=False)
class _Round:
    """One leaf's selection: what it still wants (None once satisfied, as
    the selector drops the partition from its map) and the round's budget."""

    calc: ResourceCalculator
    cluster: Resource
    want: Resource | None
    allowed: list[Resource]
    chosen: set[str]
    out: dict[str, list[RMContainer]]
    conservative: bool

    def take(self, c: RMContainer) -> bool:
        """tryPreemptContainerAndDeductResToObtain."""
        if c.container_id in self.chosen or self.want is None:
            return False
        calc, cluster = self.calc, self.cluster
        want = self.want = _zero_as_minus_one(self.want)
        if not rm.any_major_above_zero(calc, want):
            return False
        if not rm.fits(calc, c.resource, self.allowed[0]):
            return False
        after = want - c.resource
        if self.conservative:
            ok = not _any_zero_or_negative(calc, want)
        else:
            ok = rm.lt(calc, cluster, rm.non_negative(after), rm.non_negative(want))
        if not ok:
            return False
        self.allowed[0] = self.allowed[0] - c.resource
        self.want = None if rm.le(calc, cluster, after, ZERO) else after
        self.chosen.add(c.container_id)
        self.out.setdefault(c.attempt_id, []).append(c)
        return True


def select_candidates(
    calc: ResourceCalculator,
    cluster: Resource,
    leaves: list[tuple[IntraLeaf, Resource, Resource, Resource]],
    selected: dict[str, list[RMContainer]],
    allowed: list[Resource],
    conf: PreemptionConf,
    order_key: Callable[[RMContainer], tuple[int, tuple[int, ...]]],
    where: dict[str, str] | None = None,
) -> dict[str, list[RMContainer]]:
    """IntraQueueCandidatesSelector.selectCandidates over the under-served
    leaves (each with its usage, guarantee and what cross-queue preemption
    takes from it, per partition), given what earlier selectors chose this
    round and the round's remaining budget (`allowed`, shared, decreased
    here). `where` is each labelled node's partition: a leaf's figures for
    one partition are met only by containers on its nodes. Returns the
    containers this selector chose, per attempt."""
    for leaf, used, guaranteed, to_preempt in leaves:
        if leaf.used_capacity < conf.intra_minimum_threshold:
            continue
        compute_demand(
            calc, cluster, leaf, used, guaranteed, to_preempt, selected, allowed[0], conf
        )

    # deductPreemptableResourcesBasedSelectedCandidates: what earlier
    # selectors took from a queue is taken from each of its apps' share
    # (the queue's own figure is not read again this round).
    # With node labels, what was taken on a node counts for the leaf's
    # figures in the node's partition.
    nodes = where or {}
    owner: dict[tuple[str, str], IntraLeaf] = {}
    for leaf, _, _, _ in leaves:
        for sapp in leaf.all_apps:
            owner[(leaf.partition, sapp.attempt_id)] = leaf
    for attempt_id, containers in selected.items():
        for c in containers:
            found = owner.get((nodes.get(c.node_id, "") if nodes else "", attempt_id))
            if found is None:
                continue
            for ta in found.apps:
                ta.deduct(calc, cluster, c.resource)

    chosen = {c.container_id for cs in selected.values() for c in cs}
    out: dict[str, list[RMContainer]] = {}
    ul_first = conf.intra_order_policy == USERLIMIT_FIRST
    for leaf, _, _, _ in leaves:
        if leaf.disabled:
            continue
        want = ZERO
        for ta in leaf.apps:
            want = want + ta.actually_to_be_preempted
        rnd = _Round(calc, cluster, want, allowed, chosen, out, conf.intra_conservative_drf)
        rolling = dict(leaf.user_used)
        for ta in leaf.apps:
            if ta.actually_to_be_preempted.is_zero():
                continue
            user = ta.sapp.user
            limit = ta.user.user_limit + ta.user.am_used
            for c in sorted(ta.sapp.live.values(), key=order_key):
                if rnd.want is None:
                    break
                if c.container_id in chosen or c.is_am:
                    continue
                if nodes and nodes.get(c.node_id, "") != leaf.partition:
                    continue  # another partition's: nothing is wanted there
                usage = rolling.get(user, ZERO)
                if ul_first and rm.le(calc, cluster, usage - c.resource, limit):
                    break
                if rnd.take(c) and ul_first:
                    rolling[user] = usage - c.resource
            if rnd.want is None:
                break
    return out

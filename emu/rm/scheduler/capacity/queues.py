"""The CapacityScheduler's live queue tree: usage, users and the limits
YARN derives from them.

Mirrors Hadoop's ParentQueue / LeafQueue / UsersManager:

- `used` counts allocated and reserved resources, as YARN's queue usage
  does, and rolls up to every ancestor.
- A leaf holds *pending* attempts (not yet activated) and *active* ones
  (scheduled). `activate` moves pending attempts to active, oldest first,
  while the AM resource limit of the queue and of the user allows
  (`maximum-am-resource-percent` of the queue's usable capacity, and the
  user's share of it); one attempt is always activated when none is active.
- A user is *active* in a leaf while one of their attempts there has
  outstanding asks. The user limit (UsersManager.computeUserLimit) is
  `max(ceil((active users' usage + min allocation) / #active users),
  current capacity * minimum-user-limit-percent / 100)`, capped by
  `guaranteed capacity * user-limit-factor` (or the queue's maximum when the
  factor is -1) and rounded up to the minimum allocation; the current
  capacity is the guaranteed capacity while the queue is below it, and its
  usage plus one minimum allocation above it.
- Children are ordered by used capacity (used / guaranteed), least served
  first, queues with zero guarantee last; `priority-utilization` parents
  respect child priorities (PriorityUtilizationQueueOrderingPolicy).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from emu.resources import ZERO, DominantResourceCalculator, Resource, ResourceCalculator
from emu.rm.scheduler.capacity import resource_math as rm
from emu.rm.scheduler.capacity.config import CapacityConf, QueueConf

if TYPE_CHECKING:
    from emu.resources import ResourceCalculator
    from emu.rm.scheduler.queue_metrics import QueueMetrics
    from emu.rm.scheduler.scheduler_app import SchedulerApp


class Env(Protocol):
    """What limit computations read from the scheduler: for one node
    partition (`partition`, "" the default one), whose resource is
    `cluster`; `ignore` is IGNORE_PARTITION_EXCLUSIVITY, where a queue may
    use the whole partition whatever its capacities there."""

    calc: ResourceCalculator
    cluster: Resource
    minimum: Resource
    limits: rm.Limits
    partition: str
    ignore: bool


class Partition:
    """The `Env` of one node partition: the scheduler's calculator and
    minimum over the partition's resource (RMNodeLabelsManager.getResourceByLabel).
    The scheduler is its own `Env` while no node or app has a label."""

    __slots__ = ("calc", "cluster", "ignore", "limits", "minimum", "partition")

    def __init__(
        self,
        partition: str,
        calc: ResourceCalculator,
        cluster: Resource,
        minimum: Resource,
        ignore: bool = False,
    ) -> None:
        self.partition = partition
        self.calc = calc
        self.cluster = cluster
        self.minimum = minimum
        self.limits = rm.limits_for(calc, cluster, minimum)
        self.ignore = ignore


def _partition(env: Env) -> str:
    """The partition `env` is for: "" (the default one) for the scheduler
    itself, which is its own `Env` while no label is known."""
    return env.partition if isinstance(env, Partition) else ""


class User:
    """A user's footprint in one leaf queue."""

    __slots__ = ("am_used", "am_used_in", "apps", "name", "ratio", "used", "used_in")

    def __init__(self, name: str) -> None:
        self.name = name
        self.used = ZERO
        self.am_used = ZERO
        self.apps = 0
        self.used_in: dict[str, Resource] = {}
        """Usage in each labelled partition (`used` is the default one's)."""
        self.am_used_in: dict[str, Resource] = {}
        self.ratio = 0.0
        """The user's usage ratio in the default partition, a Java float
        (UsersManager.User.updateUsageRatio: Resources.ratio(used,
        partition resource)) as last updated."""

    def used_of(self, partition: str) -> Resource:
        return self.used if not partition else self.used_in.get(partition, ZERO)


class Queue:
    """What parent and leaf queues share."""

    def __init__(self, conf: QueueConf, parent: ParentQueue | None) -> None:
        self.conf = conf
        self.path = conf.path
        self.parent = parent
        self.used = ZERO
        self.reserved = ZERO
        self.num_apps = 0
        self.runnable_apps = 0
        self.last_submitted_ms = 0
        """When an app was last submitted to this auto-created leaf (for a
        created parent: when a child was last created under it); queue
        removal counts idleness from it."""
        self._sized: tuple[Resource, QueueConf, Resource, Resource, Resource, Resource] | None = (
            None
        )
        self.absolute_capacity = conf.absolute_capacity
        """The share of the cluster guaranteed: the configured one, or (for a
        queue in resources) the one derived from the cluster (`update_absolute`)."""
        self.absolute_maximum_capacity = conf.absolute_maximum_capacity
        self.eff_min: Resource = ZERO
        """A queue in resources: its effective minimum resource (its
        guarantee), set by `update_absolute`."""
        self.eff_max: Resource = ZERO
        self.used_in: dict[str, Resource] = {}
        """Usage (allocated and reserved) in each labelled partition; `used`
        and `reserved` are the default partition's (QueueUsage by partition)."""
        self.reserved_in: dict[str, Resource] = {}
        self._sized_in: dict[
            str, tuple[Resource, QueueConf, Resource, Resource, Resource, Resource]
        ] = {}
        self.label_sizes: dict[str, tuple[float, float, float, float]] = {}
        """Per label whose capacities follow the partition's size (a queue
        in resources there, or one in percent below one): (capacity %,
        maximum capacity %, absolute capacity, absolute maximum capacity),
        derived by `update_absolute_labels`; other labels keep the
        configured ones (`QueueConf.label_capacity`)."""
        self.eff_in: dict[str, tuple[Resource, Resource]] = {}
        """A queue in resources, per label: its effective minimum and
        maximum resources there."""

    def absolute_in(self, label: str) -> tuple[float, float]:
        """(absolute capacity, absolute maximum capacity) in a partition,
        derived from the partition's size where the queue's capacities
        there are in resources."""
        if self.label_sizes:
            d = self.label_sizes.get(label)
            if d is not None:
                return d[2], d[3]
        return self.conf.absolute_in(label)

    def used_of(self, partition: str) -> Resource:
        return self.used if not partition else self.used_in.get(partition, ZERO)

    @property
    def is_leaf(self) -> bool:
        return False

    def _sizes(
        self, env: Env
    ) -> tuple[Resource, QueueConf, Resource, Resource, Resource, Resource]:
        """(cluster, conf, guaranteed, maximum, exact guarantee, exact
        maximum), recomputed only when the cluster or the configuration
        changes."""
        if isinstance(env, Partition) and env.partition:
            return self._sizes_in(env)
        s = self._sized
        if s is None or s[1] is not self.conf or (s[0] is not env.cluster and s[0] != env.cluster):
            c = self.conf
            if c.min_resource is not None:
                # In resources: the guarantee and maximum are the effective
                # resources themselves (getEffectiveCapacity and
                # getEffectiveMaxCapacityDown), as `update_absolute` set them.
                s = self._sized = (
                    env.cluster,
                    c,
                    self.eff_min,
                    rm.round_down(self.eff_max, env.minimum),
                    self.eff_min,
                    self.eff_max,
                )
                return s
            cap, max_cap = self.absolute_capacity, self.absolute_maximum_capacity
            s = self._sized = (
                env.cluster,
                c,
                rm.multiply_up(env.calc, env.cluster, cap, env.minimum),
                rm.multiply_down(env.cluster, max_cap, env.minimum),
                rm.multiply(env.cluster, cap),
                rm.multiply(env.cluster, max_cap),
            )
        return s

    def exact_sizes(self, env: Env) -> tuple[Resource, Resource]:
        """(effective minimum, effective maximum) resources, unrounded."""
        s = self._sizes(env)
        return s[4], s[5]

    def _sizes_in(
        self, env: Env
    ) -> tuple[Resource, QueueConf, Resource, Resource, Resource, Resource]:
        """`_sizes` in a labelled partition, from the queue's capacities
        there (CSQueueUtils.updateQueueStatistics per partition). The
        guarantee is the effective capacity as Hadoop's capacity
        calculators give it, truncated (getEffectiveCapacity): user and AM
        limits start from it."""
        s = self._sized_in.get(env.partition)
        if s is None or s[1] is not self.conf or (s[0] is not env.cluster and s[0] != env.cluster):
            c = self.conf
            e = self.eff_in.get(env.partition) if self.eff_in else None
            if e is not None:
                # In resources there: the effective resources themselves
                # (getEffectiveCapacity, getEffectiveMaxCapacityDown).
                s = self._sized_in[env.partition] = (
                    env.cluster,
                    c,
                    e[0],
                    rm.round_down(e[1], env.minimum),
                    e[0],
                    e[1],
                )
                return s
            cap, max_cap = self.absolute_in(env.partition)
            s = self._sized_in[env.partition] = (
                env.cluster,
                c,
                rm.multiply(env.cluster, cap),
                rm.multiply_down(env.cluster, max_cap, env.minimum),
                rm.multiply(env.cluster, cap),
                rm.multiply(env.cluster, max_cap),
            )
        return s

    def guaranteed(self, env: Env) -> Resource:
        """Guaranteed capacity, rounded up to the minimum allocation."""
        return self._sizes(env)[2]

    def effective_max(self, env: Env) -> Resource:
        """The queue's effective maximum resource (getEffectiveMaxCapacity,
        getQueueMaxResource): the maximum capacity of the cluster,
        truncated but not rounded to the minimum allocation. Queue limits
        and headroom are capped by it."""
        return self._sizes(env)[5]

    def max_resource(self, env: Env) -> Resource:
        """Maximum capacity, rounded down to the minimum allocation."""
        return self._sizes(env)[3]

    def used_capacity(self, env: Env) -> float:
        """used / guaranteed, as queues are ordered by. The guarantee is
        taken as at least one minimum allocation (CSQueueUtils.updateUsedCapacity:
        "make queueGuaranteed >= minimum_allocation to avoid divided by 0"),
        so a queue guaranteed less than a container in a partition counts
        its usage against a container's worth; an empty partition counts as
        unused."""
        cluster = env.cluster
        if not rm.positive(env.calc, cluster, cluster):
            return 0.0
        g = rm.rmax(env.calc, cluster, self._sizes(env)[4], env.minimum)
        p = _partition(env)
        used = self.used if not p else self.used_in.get(p, ZERO)
        if not rm.positive(env.calc, cluster, g):
            return 0.0 if used.is_zero() else math.inf
        # QueueCapacities holds it as a float (CSQueueUtils.updateUsedCapacity)
        return rm.f32(rm.divide(env.calc, cluster, used, g))

    def absolute_used_capacity(self, env: Env) -> float:
        if not rm.positive(env.calc, env.cluster, env.cluster):
            return 0.0
        p = _partition(env)
        used = self.used if not p else self.used_in.get(p, ZERO)
        return rm.f32(rm.divide(env.calc, env.cluster, used, env.cluster))

    def charge(self, delta: Resource, reserved: Resource) -> None:
        """Add `delta` to the usage (and `reserved` to the reservations) of
        this queue and every ancestor. Adding a plain zero leaves a sum as it
        was, and plain pairs add without `Resource.__add__`'s merging."""
        q: Queue | None = self
        plain_delta = not delta.extra
        dm, dv = delta.memory, delta.vcores
        no_reserved = reserved is ZERO
        while q is not None:
            used = q.used
            if plain_delta and not used.extra:
                q.used = rm.plain(used.memory + dm, used.vcores + dv)
            else:
                q.used = used + delta
            if not no_reserved:
                q.reserved = q.reserved + reserved
            q = q.parent

    def charge_in(self, partition: str, delta: Resource, reserved: Resource) -> None:
        """`charge` for a container on a node of a labelled partition."""
        q: Queue | None = self
        while q is not None:
            q.used_in[partition] = q.used_in.get(partition, ZERO) + delta
            if reserved is not ZERO:
                q.reserved_in[partition] = q.reserved_in.get(partition, ZERO) + reserved
            q = q.parent

    def num_runnable(self) -> int:
        """getNumRunnableApps: a parent counts its runnable apps (kept by
        the scheduler, as CSMaxRunningAppsEnforcer.trackRunnableApp does)."""
        return self.runnable_apps

    def count_app(self, delta: int) -> None:
        q: Queue | None = self
        while q is not None:
            q.num_apps += delta
            q = q.parent


class ParentQueue(Queue):
    def __init__(self, conf: QueueConf, parent: ParentQueue | None) -> None:
        super().__init__(conf, parent)
        self.children: list[Queue] = []

    def sorted_children(self, env: Env) -> list[Queue]:
        """Least-served child first (PriorityUtilizationQueueOrderingPolicy:
        PriorityQueueComparator over each child's stored used capacity, a
        Java float); queues with a guarantee before those without (which
        compare their absolute used capacity); ties go to the larger
        configured minimum resource when either has one
        (Resource.compareTo: memory, then vcores), else to the larger
        absolute capacity, then to configuration order (the stable
        Collections.sort). In a labelled partition the queues that can
        access it come first (compareQueueAccessToPartition), whatever
        their usage: non-exclusive nodes are offered to the queues of the
        label before the others."""
        p = _partition(env)
        keyed: list[_ChildKey] = []
        for i, q in enumerate(self.children):
            cap = rm.f32(q.absolute_capacity if not p else q.absolute_in(p)[0])
            used = q.absolute_used_capacity(env) if cap <= 0 else q.used_capacity(env)
            if not p:
                res = q.conf.min_resource
            else:
                quota = q.conf.label_resources.get(p)
                res = quota[0] if quota is not None else None
            tie = _min_resource_key(res)
            barred = bool(p) and not q.conf.can_access(p)
            keyed.append((barred, cap <= 0, used, tie, -cap, i, q))
        if self.conf.ordering_policy != "priority-utilization":
            keyed.sort(key=lambda k: k[:6])  # the index is unique
            return [k[6] for k in keyed]
        return [k[6] for k in sorted(keyed, key=functools.cmp_to_key(_by_priority))]


_ChildKey = tuple[bool, bool, float, tuple[int, ...], float, int, "Queue"]


def _min_resource_key(res: Resource | None) -> tuple[int, ...]:
    """A configured minimum resource as a sort key, larger first
    (Resource.compareTo over memory, vcores, then the other types); none
    configured is the zero resource."""
    if res is None:
        return (0, 0)
    return (-res.memory, -res.vcores, *(-v for _, v in res.extra))


def _by_priority(a: _ChildKey, b: _ChildKey) -> int:
    """PriorityQueueComparator with respectPriority: of two queues with a
    guarantee (or two without), both under it or both at or over it, the
    higher priority first; otherwise by used capacity, ties as
    `sorted_children` breaks them."""
    if a[0] != b[0]:
        return 1 if a[0] else -1  # compareQueueAccessToPartition
    if a[1] != b[1]:
        return -1 if b[1] else 1
    pa, pb = a[6].conf.priority, b[6].conf.priority
    ua, ub = a[2], b[2]
    if pa != pb and (ua < 1.0) == (ub < 1.0):
        return (pb > pa) - (pb < pa)
    ka, kb = a[2:6], b[2:6]
    return (ka > kb) - (ka < kb)


class LeafQueue(Queue):
    def __init__(self, conf: QueueConf, parent: ParentQueue | None, metrics: QueueMetrics) -> None:
        super().__init__(conf, parent)
        self.metrics = metrics
        self.pending: list[SchedulerApp] = []
        self.active: list[SchedulerApp] = []
        # Attempts held back by max-parallel-apps (AbstractLeafQueue's
        # nonRunnableApps): neither pending activation nor active.
        self.non_runnable: list[SchedulerApp] = []
        self.users: dict[str, User] = {}
        self.usage_ratio = 0.0
        """UsersManager.getUsageRatio for the default partition (a Java float)."""
        self.all_users_limits: dict[str, tuple[int, Resource, QueueConf, Resource]] = {}
        """Per partition, the user limit over all users as the preemption
        policy last computed it (preComputedAllUserLimit), with the
        `version` it was computed at."""
        self.user_apps: dict[str, set[str]] = {}
        """UsersManager's usersApplications: per user, the applications
        whose asks are outstanding."""
        self.limit_users: set[str] = set()
        """UsersManager's activeUsersSet, which the user limit divides among:
        a user joins when it becomes active (an app of its starts asking)
        and leaves when it stops, as `active_users`, and also when its
        last runnable attempt leaves the queue (removeUser), even if an
        app of its waiting on max-parallel-apps still asks; Hadoop then
        makes a new User, not active until its asks stop and start again."""
        self.am_used = ZERO
        self.pending_only_users = 0
        """UsersManager.activeUsersWithOnlyPendingApps: the users with apps
        waiting for activation and none active, counted each time the user
        limit is recomputed (computeNumActiveUsersWithOnlyPendingApps in
        reComputeUserLimits), not as they change."""
        self.max_applications = 0
        self.max_applications_per_user = 0
        self.version = 0
        self._user_limit: tuple[int, Resource, QueueConf, Resource] | None = None
        self.fair_seen: dict[str, tuple[Resource, Resource]] = {}
        """Under the fair ordering policy: each active attempt's (used,
        pending) as the policy last sorted it. Hadoop re-sorts an app whose
        containers came or went only when the queue next hands out its
        assignment or preemption iterator (the cached usage of
        AbstractComparatorOrderingPolicy), and both the assignments and the
        preemption policy walk that order; an allocation from a
        reservation re-sorts nothing. An attempt not listed has not been
        sorted since it became active (cached usage zero)."""
        self.fair_changed: set[str] = set()
        """The attempts the fair ordering policy is to re-sort at the next
        assignment (entitiesToReorder)."""
        self.am_partition: dict[str, str] = {}
        """The labelled partition of each active attempt whose AM asks for
        one (its AM resource counts there, as QueueUsage's AM used by
        partition)."""
        self.am_used_in: dict[str, Resource] = {}
        self.offered: Resource | None = None
        """The queue's current limit as last published
        (queueResourceLimitsInfo): the limit the leaf was offered when it
        last looked at an app, or the one the last cluster update handed it.
        Its AM limit reads this; None: the default partition's from the top."""

    @property
    def is_leaf(self) -> bool:
        return True

    @property
    def state(self) -> str:
        return self.conf.state

    def update_usage_ratio(self, u: User, calc: ResourceCalculator, cluster: Resource) -> None:
        """UsersManager.updateUserResourceUsage: the user's usage changed, and
        the queue's usage ratio (a Java float) moves by the change of the
        user's ratio (incQueueUsageRatio), so it drifts from the exact sum
        by float rounding until `recompute_usage_ratio`."""
        new = rm.f32(calc.ratio(u.used, cluster)) if cluster.memory else 0.0
        self.usage_ratio = rm.f32(self.usage_ratio + rm.f32(new - u.ratio))
        u.ratio = new

    def recompute_usage_ratio(self, calc: ResourceCalculator, cluster: Resource) -> None:
        """UsersManager.updateUsageRatio (AbstractLeafQueue.updateClusterResource,
        recalculateQueueUsageRatio): every user's ratio afresh, summed in
        floats."""
        consumed = 0.0
        for u in self.users.values():
            u.ratio = rm.f32(calc.ratio(u.used, cluster)) if cluster.memory else 0.0
            consumed = rm.f32(consumed + u.ratio)
        self.usage_ratio = consumed

    def user(self, name: str) -> User:
        u = self.users.get(name)
        if u is None:
            u = self.users[name] = User(name)
        return u

    # --- application limits -------------------------------------------------------
    def update_max_applications(self, cs: CapacityConf) -> None:
        """LeafQueue.updateMaximumApplications."""
        n = self.conf.maximum_applications
        if n < 0:
            if self.conf.min_resource is not None:
                # A queue in resources scales even the global limit by its
                # derived share, in floats (updateMaximumApplications).
                most = cs.maximum_applications
                if cs.global_queue_max_applications > 0:
                    most = min(cs.global_queue_max_applications, most)
                n = int(rm.f32(rm.f32(most) * rm.f32(self.absolute_capacity)))
            elif cs.global_queue_max_applications > 0:
                n = min(cs.global_queue_max_applications, cs.maximum_applications)
            else:
                n = int(cs.maximum_applications * self.absolute_capacity)
            if self.conf.min_resource is not None or cs.global_queue_max_applications <= 0:
                # Hadoop takes the largest over the queue's configured node
                # labels: (int) (baseMaxApplications * absoluteCapacity(label))
                # in floats (AbstractLeafQueue.updateMaximumApplications).
                base = cs.maximum_applications
                if cs.global_queue_max_applications > 0:
                    base = min(cs.global_queue_max_applications, base)
                for label in self.conf.label_capacity:
                    if label:
                        by_label = int(rm.f32(rm.f32(base) * rm.f32(self.absolute_in(label)[0])))
                        n = max(n, by_label)
        self.max_applications = n
        per_user = n
        if self.conf.user_limit_factor != -1:
            per_user = min(
                n, int(n * (self.conf.user_limit_percent / 100) * self.conf.user_limit_factor)
            )
        self.max_applications_per_user = per_user

    def submission_refusal(self, user: str, app_id: str) -> str | None:
        if self.num_apps >= self.max_applications:
            return (
                f"Queue {self.path} already has {self.num_apps} applications, "
                f"cannot accept submission of application: {app_id}"
            )
        # AbstractLeafQueue.validateSubmitApplication checks the user through
        # usersManager.getUserAndAddIfAbsent, so a user the queue has not seen
        # yet counts 0 applications and is still refused when
        # maxApplicationsPerUser is 0 (e.g. (int) (1 * 50 / 100.0f * 1)).
        u = self.users.get(user)
        n_apps = u.apps if u is not None else 0
        if n_apps >= self.max_applications_per_user:
            return (
                f"Queue {self.path} already has {n_apps} applications from user {user} "
                f"cannot accept submission of application: {app_id}"
            )
        return None

    # --- attempts -----------------------------------------------------------------
    def num_runnable(self) -> int:
        """AbstractLeafQueue.getNumRunnableApps: its runnableApps list,
        every attempt pending activation or active."""
        return len(self.pending) + len(self.active)

    def add_attempt(self, sapp: SchedulerApp) -> None:
        self.pending.append(sapp)
        self.pending.sort(key=lambda a: a.order)

    def remove_attempt(self, sapp: SchedulerApp) -> None:
        if sapp in self.active:
            self.active.remove(sapp)
            self.fair_seen.pop(sapp.attempt_id, None)
            self.fair_changed.discard(sapp.attempt_id)
            u = self.users.get(sapp.user)
            partition = self.am_partition.pop(sapp.attempt_id, "") if self.am_partition else ""
            if partition:
                am = sapp.am_resource
                self.am_used_in[partition] = self.am_used_in[partition] - am
                if u is not None:
                    u.am_used_in[partition] = u.am_used_in[partition] - am
            else:
                self.am_used = self.am_used - sapp.am_resource
                if u is not None:
                    u.am_used = u.am_used - sapp.am_resource
        elif sapp in self.pending:
            self.pending.remove(sapp)
        elif sapp in self.non_runnable:
            self.non_runnable.remove(sapp)
        # AppSchedulingInfo.stop clears the attempt's asks without
        # deactivating its application: a new attempt of the app finds it
        # still among its user's applications (`user_apps`).
        user = sapp.user
        if user in self.limit_users and not any(
            a.user == user for apps in (self.pending, self.active) for a in apps
        ):
            # AbstractLeafQueue.removeApplicationAttempt: no runnable attempt
            # left, so UsersManager.removeUser drops the User.
            self.limit_users.discard(user)
            self.touch()

    def set_demanding(self, sapp: SchedulerApp, demanding: bool) -> None:
        """UsersManager.activateApplication / deactivateApplication: the
        app's asks started or stopped. Kept by application, not attempt,
        as Hadoop keeps them."""
        name = sapp.user
        apps = self.user_apps.get(name)
        if demanding == (apps is not None and sapp.app_id in apps):
            return
        if demanding:
            u = self.user(name)
            if not any(a.user == name for a in self.active):
                # UsersManager.activateApplication ignores a user none of
                # whose apps the queue has activated yet (an app waiting
                # for the AM limit does not make its user active).
                return
            if apps is None:
                apps = self.user_apps[name] = set()
                self.limit_users.add(u.name)
            apps.add(sapp.app_id)
        else:
            assert apps is not None
            apps.discard(sapp.app_id)
            if not apps:
                del self.user_apps[name]
                self.limit_users.discard(name)
        self.touch()

    def num_active_users(self) -> int:
        """UsersManager.getNumActiveUsers' first term: the users with an
        application whose asks are outstanding (an attempt that ended with
        asks left its application there, as Hadoop's does)."""
        return len(self.user_apps)

    def activate(
        self,
        env: Env,
        current_limit: Resource,
        partition_env: Callable[[SchedulerApp], Env] | None = None,
    ) -> list[SchedulerApp]:
        """LeafQueue.activateApplications: returns the attempts activated.
        With `partition_env` (some app or node has a label), an attempt
        whose AM asks for a labelled partition is held to the AM limit of
        that partition (calculateAndGetAMResourceLimitPerPartition: the
        queue's guarantee there, not its current limit)."""
        if not self.pending:
            return []
        calc, cluster = env.calc, env.cluster
        am_limit = self.am_limit(env, current_limit)
        # The user AM limit of each partition, computed once per call for
        # the first app to reach the user check there, with that app's
        # user's weight (activateApplications' userAmPartitionLimit map is
        # keyed by partition only), and used for every later app.
        user_limits: dict[str, Resource] = {}
        activated = []
        for sapp in list(self.pending):
            if partition_env is not None:
                penv = partition_env(sapp)
                if penv.partition:
                    if self._activate_in(penv, sapp, user_limits):
                        activated.append(sapp)
                    continue
            am = sapp.am_resource
            lenient = not self.active or rm.le(calc, cluster, self.am_used, ZERO)
            if not rm.fits(calc, self.am_used + am, am_limit) and not lenient:
                continue
            u = self.user(sapp.user)
            limit = user_limits.get("")
            if limit is None:
                limit = user_limits[""] = self._user_am_limit_of(env, am_limit, sapp.user)
            if not rm.fits(calc, u.am_used + am, limit) and not lenient:
                continue
            self.pending.remove(sapp)
            self.insert_active(sapp)
            self.am_used = self.am_used + am
            u.am_used = u.am_used + am
            activated.append(sapp)
        return activated

    def _activate_in(self, env: Env, sapp: SchedulerApp, user_limits: dict[str, Resource]) -> bool:
        """`activate` for an attempt whose AM asks for the labelled
        partition of `env`."""
        calc, cluster, p = env.calc, env.cluster, env.partition
        am = sapp.am_resource
        am_limit = self.am_limit(env, ZERO)
        used = self.am_used_in.get(p, ZERO)
        lenient = not self.active or rm.le(calc, cluster, used, ZERO)
        if not rm.fits(calc, used + am, am_limit) and not lenient:
            return False
        u = self.user(sapp.user)
        user_used = u.am_used_in.get(p, ZERO)
        limit = user_limits.get(p)
        if limit is None:
            limit = user_limits[p] = self._user_am_limit_of(env, am_limit, sapp.user)
        if not rm.fits(calc, user_used + am, limit) and not lenient:
            return False
        self.pending.remove(sapp)
        self.insert_active(sapp)
        self.am_used_in[p] = used + am
        u.am_used_in[p] = user_used + am
        self.am_partition[sapp.attempt_id] = p
        return True

    def _user_am_limit_of(self, env: Env, am_limit: Resource, user: str) -> Resource:
        """getUserAMResourceLimitPerPartition(partition, user): with the
        user's weight, in a labelled partition as in the default one."""
        weights = self.conf.user_weights
        return self.user_am_limit(env, am_limit, weights.get(user, 1.0) if weights else 1.0)

    def insert_active(self, sapp: SchedulerApp) -> None:
        self.active.append(sapp)
        self.resort()

    def resort(self) -> None:
        if self.conf.ordering_policy == "fifo":
            self.active.sort(key=lambda a: (-a.priority, a.order))

    def fair_key(self, seen: bool = False) -> Callable[[SchedulerApp], tuple[float, int, int]]:
        """FairOrderingPolicy: least used memory first (divided by
        log2(1 + demand) with size-based weight), then the attempt's start
        time (FairComparator: getStartTime, when the attempt was made, so
        a re-attempted app goes after the apps already waiting), then
        application id (FifoComparator).
        With `seen`, by the usage the policy last sorted by (`fair_seen`),
        as Hadoop's assignment and preemption iterators walk the order."""
        sized = self.conf.fair_size_based_weight
        kept = self.fair_seen if seen else None

        def key(a: SchedulerApp) -> tuple[float, int, int]:
            used_r, pending_r = a.used, a.pending
            if kept is not None:
                used_r, pending_r = kept.get(a.attempt_id, (ZERO, ZERO))
            used = float(used_r.memory)
            if sized:
                weight = math.log1p((used_r + pending_r).memory) / math.log(2)
                used = used / weight if weight else used
            return (used, a.created, a.order)

        return key

    def am_limit(self, env: Env, current_limit: Resource) -> Resource:
        """calculateAndGetAMResourceLimit: the AM percent of the larger of the
        queue's guarantee and its current limit. The guarantee is
        getEffectiveCapacity: the effective minimum resource, truncated
        (AbstractCSQueue.updateEffectiveResources, Resources.multiply),
        not rounded up to the minimum allocation."""
        guaranteed = self._sizes(env)[4]
        usable = current_limit if rm.fits(env.calc, guaranteed, current_limit) else guaranteed
        return rm.multiply_up(env.calc, usable, self.conf.maximum_am_percent, env.minimum)

    def user_am_limit(self, env: Env, am_limit: Resource, weight: float = 1.0) -> Resource:
        """getUserAMResourceLimitPerPartition: a user's share of the AM limit,
        times the user's weight (at most the whole), of the queue's
        getEffectiveCapacity (the truncated effective minimum resource, as
        in `am_limit`): a queue guaranteed 3145.7 MB with AM percent 0.2
        and user-limit-factor 1.5 gives a user 943.5 MB, rounded up to 1024
        MB (not 0.3 of a guarantee rounded up to 4096 MB, 2048 MB)."""
        # UsersManager.getNumActiveUsers: the active users plus those with
        # only pending apps, as last counted (`pending_only_users`).
        active = self.num_active_users() + self.pending_only_users
        share = max(self.conf.user_limit_percent / 100, 1 / max(active, 1))
        if weight != 1.0:
            share = min(share * weight, 1.0)
        pct = self.conf.maximum_am_percent
        if self.conf.user_limit_factor != -1:
            pct = pct * share * self.conf.user_limit_factor
        limit = rm.multiply_up(env.calc, self._sizes(env)[4], pct, env.minimum)
        return rm.rmin(env.calc, env.cluster, limit, am_limit)

    # --- user limit and headroom --------------------------------------------------
    def touch(self) -> None:
        """Users' usage or activity changed: the user limit is recomputed."""
        self.version += 1

    def user_limit(self, env: Env) -> Resource:
        """UsersManager.computeUserLimit for active users (the same for every
        user of the queue; `user_limit_for` applies a user's weight). Cached until a
        user's usage or activity, the cluster or the configuration changes,
        as UsersManager caches it."""
        if isinstance(env, Partition) and env.partition:
            return self._compute_user_limit(env)
        cached = self._user_limit
        if (
            cached is not None
            and cached[0] == self.version
            and cached[2] is self.conf
            and (cached[1] is env.cluster or cached[1] == env.cluster)
        ):
            return cached[3]
        limit = self._compute_user_limit(env)
        self._user_limit = (self.version, env.cluster, self.conf, limit)
        return limit

    def _compute_user_limit(self, env: Env) -> Resource:
        """In IGNORE_PARTITION_EXCLUSIVITY the cap is the whole partition,
        not the user-limit-factor times a guarantee the queue may not have."""
        conf = self.conf
        p = _partition(env)
        self.pending_only_users = self._count_pending_only_users()
        limit_users = self.limit_users
        active = [u for _, u in sorted(self.users.items()) if u.name in limit_users]
        # UsersManager.sumActiveUsersTimesWeights, in floats.
        active_weight = (
            rm.weight_sum(conf.user_weights, (u.name for u in active))
            if conf.user_weights
            else None
        )
        # The default partition starts from the exact (unrounded) guarantee,
        # as getEffectiveCapacity gives it; a labelled one from its rounded
        # guarantee there, and in IGNORE_PARTITION_EXCLUSIVITY from no factor
        # at all, capped by the whole partition.
        cap: Callable[[], Resource] = lambda: self.max_resource(env)  # noqa: E731
        factor = conf.user_limit_factor
        guarantee = self.limit_guarantee(env)
        if p and env.ignore:
            factor, cap = -1.0, lambda: env.cluster
        return env.limits.user_limit(
            env.cluster,
            env.minimum,
            guarantee,
            [u.used_of(p) for u in self.users.values()],
            [u.used_of(p) for u in active],
            conf.user_limit_percent,
            factor,
            cap,
            active_weight,
            None if p else self.usage_ratio,
        )

    def limit_guarantee(self, env: Env) -> Resource:
        """The guarantee computeUserLimit starts from: the default
        partition's exact (unrounded) one, as getEffectiveCapacity gives
        it; a labelled partition's rounded one."""
        return self._sizes(env)[4] if not _partition(env) else self.guaranteed(env)

    def _count_pending_only_users(self) -> int:
        """UsersManager.computeNumActiveUsersWithOnlyPendingApps: users
        with a runnable app not yet activated and no activated one."""
        if not self.pending:
            return 0
        with_active = {a.user for a in self.active}
        return len({a.user for a in self.pending} - with_active)

    def user_limit_for(self, env: Env, user: str) -> Resource:
        """getComputedResourceLimitForActiveUsers: the user limit times the
        user's weight, rounded down to the minimum allocation (a user
        without a weight has weight 1: the user limit as it is)."""
        limit = self.user_limit(env)
        w = self.conf.user_weights.get(user, 1.0) if self.conf.user_weights else 1.0
        if w == 1.0:
            return limit
        return rm.multiply_down(limit, w, env.minimum)

    def headroom(
        self, env: Env, user: str, current_limit: Resource, cluster_used: Resource
    ) -> Resource:
        """min(user limit - user's usage, queue limit - queue usage), rounded
        down, and no more than what is free in the cluster."""
        u = self.users.get(user)
        return env.limits.headroom(
            env.cluster,
            cluster_used,
            current_limit,
            self.used,
            self.user_limit_for(env, user) if self.conf.user_weights else self.user_limit(env),
            u.used if u is not None else ZERO,
            env.minimum,
        )

    def pending_considering_user_limit(self, env: Env, deduct_reserved: bool) -> Resource:
        """getTotalPendingResourcesConsideringUserLimit: each user's pending
        asks, capped by what the user limit still allows."""
        room: dict[str, Resource] = {}
        total = ZERO
        labelled = self.am_partition
        p = _partition(env)
        for sapp in self.active:
            if (labelled or p) and labelled.get(sapp.attempt_id, "") != p:
                continue  # its asks are for another partition
            if sapp.user not in room:
                u = self.users.get(sapp.user)
                used = u.used_of(p) if u is not None else ZERO
                room[sapp.user] = rm.non_negative(self.user_limit_for(env, sapp.user) - used)
            pending = sapp.pending
            if deduct_reserved:
                pending = pending - sapp.reserved_total()
            take = rm.cmin(room[sapp.user], rm.non_negative(pending))
            total = total + take
            room[sapp.user] = room[sapp.user] - take
        return total


def leaves_under(q: Queue) -> list[LeafQueue]:
    """The leaves of `q`'s subtree, in tree order."""
    if isinstance(q, LeafQueue):
        return [q]
    assert isinstance(q, ParentQueue)
    return [leaf for c in q.children for leaf in leaves_under(c)]


def build(
    cs: CapacityConf,
    metrics_for: Callable[[str], QueueMetrics],
    existing: dict[str, Queue] | None = None,
) -> tuple[dict[str, Queue], ParentQueue]:
    """Queues for a configuration; `metrics_for(path)` gives a leaf's metrics.
    With `existing` (a refresh), queues that keep their path and kind are
    reconfigured in place, keeping their apps, users and usage, as YARN's
    queue reinitialize does; new queues start empty."""
    queues: dict[str, Queue] = {}
    root: ParentQueue | None = None
    for path, qc in cs.queues.items():
        parent = queues.get(qc.parent) if qc.parent else None
        assert parent is None or isinstance(parent, ParentQueue)
        old = (existing or {}).get(path)
        q: Queue
        if not qc.is_leaf:
            q = old if isinstance(old, ParentQueue) else ParentQueue(qc, parent)
            q.children = []
        else:
            q = old if isinstance(old, LeafQueue) else LeafQueue(qc, parent, metrics_for(path))
        q.conf, q.parent = qc, parent
        if q.label_sizes or q.eff_in:
            q.label_sizes, q.eff_in, q._sized_in = {}, {}, {}
        q.absolute_capacity = qc.absolute_capacity
        q.absolute_maximum_capacity = qc.absolute_maximum_capacity
        queues[path] = q
        if parent is not None:
            parent.children.append(q)
        else:
            assert isinstance(q, ParentQueue)
            root = q
        if isinstance(q, LeafQueue):
            q.update_max_applications(cs)
            q.resort()
    assert root is not None
    return queues, root


def recount_parents(tree: dict[str, Queue], labelled: bool) -> None:
    """Each parent's usage, reservations and app counts from its children's,
    from the bottom up (per labelled partition too, with `labelled`)."""
    for q in reversed(list(tree.values())):
        if not isinstance(q, ParentQueue):
            continue
        q.used = q.reserved = ZERO
        q.num_apps = q.runnable_apps = 0
        for c in q.children:
            q.used, q.reserved = q.used + c.used, q.reserved + c.reserved
            q.num_apps += c.num_apps
            q.runnable_apps += c.num_runnable()
        if labelled:
            used: dict[str, Resource] = {}
            reserved: dict[str, Resource] = {}
            for c in q.children:
                for p, r in c.used_in.items():
                    used[p] = used.get(p, ZERO) + r
                for p, r in c.reserved_in.items():
                    reserved[p] = reserved.get(p, ZERO) + r
            q.used_in, q.reserved_in = used, reserved


def update_absolute(root: ParentQueue, cs: CapacityConf, env: Env) -> None:
    """ParentQueue.updateClusterResource (legacy queue mode) for a tree
    with queues in resources, run whenever the cluster or the configuration
    changes: from the root down, each such queue's effective minimum is its
    configured minimum, scaled down per resource type when its parent's
    effective minimum cannot cover all its siblings' (recalculateEffectiveMinRatio,
    createNormalizedMinResource); its effective maximum is the smaller of
    its configured maximum and its parent's (getOrInheritMaxResource); its
    capacities are derived from both (deriveCapacityFromAbsoluteConfigurations),
    and its leaves' application limits follow."""
    root.eff_min = root.eff_max = env.cluster
    root._sized = None
    _update_children(root, cs, env)


def _update_children(parent: ParentQueue, cs: CapacityConf, env: Env) -> None:
    calc, cluster = env.calc, env.cluster
    ratio = _min_ratio(parent, env)
    for child in parent.children:
        c = child.conf
        if c.min_resource is not None:
            child.eff_min = _scaled(c.min_resource, ratio)
            parent_max = parent.conf.max_resource
            if parent_max is None:
                parent_max = parent.eff_max
            own = c.max_resource
            child.eff_max = parent_max if own is None else rm.rmin(calc, cluster, own, parent_max)
            cap = _f32_divide(calc, cluster, child.eff_min, parent.eff_min)
            max_cap = _f32_divide(calc, cluster, child.eff_max, parent.eff_max)
            child.absolute_capacity = rm.f32(cap * rm.f32(parent.absolute_capacity))
            child.absolute_maximum_capacity = rm.f32(
                max_cap * rm.f32(parent.absolute_maximum_capacity)
            )
        else:
            if parent.conf.min_resource is not None:
                # A percentage (0 %, the only one allowed there) under a
                # queue in resources: shares of the parent's derived ones
                # (CSQueueUtils.updateAbsoluteCapacitiesByNodeLabels).
                child.absolute_capacity = rm.f32(
                    rm.f32(c.capacity / 100) * rm.f32(parent.absolute_capacity)
                )
                child.absolute_maximum_capacity = rm.f32(
                    rm.f32(c.maximum_capacity / 100) * rm.f32(parent.absolute_maximum_capacity)
                )
            child.eff_min = rm.multiply(cluster, child.absolute_capacity)
            child.eff_max = rm.multiply(cluster, child.absolute_maximum_capacity)
        child._sized = None
        if isinstance(child, ParentQueue):
            _update_children(child, cs, env)
        elif isinstance(child, LeafQueue):
            child.update_max_applications(cs)
            child.touch()


def update_absolute_labels(
    root: ParentQueue,
    cs: CapacityConf,
    calc: ResourceCalculator,
    cluster: Resource,
    resources: dict[str, Resource],
) -> None:
    """`update_absolute` in each labelled partition where queues have
    capacities in resources (calculateEffectiveResourcesAndCapacity per
    label): root's effective resources there are the partition's
    (`resources`, by label), and from it down each such queue's effective
    minimum is scaled per resource type when its parent's there cannot
    cover its siblings' configured minimums, its effective maximum is the
    smaller of its own and its parent's, and its capacities there are
    derived from both; queues in percent below one follow their parent's
    derived capacities (updateAbsoluteCapacitiesByNodeLabels)."""
    for label in sorted(cs.label_absolute):
        total = resources.get(label, ZERO)
        root.eff_in[label] = (total, total)
        root._sized_in.pop(label, None)
        _update_label_children(root, label, calc, cluster, total)


def _update_label_children(
    parent: ParentQueue, label: str, calc: ResourceCalculator, cluster: Resource, total: Resource
) -> None:
    have_min, have_max = parent.eff_in[label]
    wanted = ZERO
    for child in parent.children:
        r = child.conf.label_resources.get(label)
        if r is not None:
            wanted = wanted + r[0]
    ratio: dict[str, float] | None = None
    if parent.parent is None:
        if not total.is_zero() and rm.lt(calc, cluster, total, wanted):
            ratio = _ratio(total, wanted)
    elif rm.lt(calc, cluster, have_min, wanted):
        ratio = _ratio(have_min, wanted)
    parent_conf = parent.conf.label_resources.get(label)
    parent_max = parent_conf[1] if parent_conf is not None else None
    if parent_max is None:
        parent_max = have_max
    parent_abs, parent_abs_max = parent.absolute_in(label)
    derived = label in parent.label_sizes
    for child in parent.children:
        c = child.conf
        r = c.label_resources.get(label)
        if r is not None:
            eff_min = _scaled(r[0], ratio)
            own = r[1]
            eff_max = parent_max if own is None else rm.rmin(calc, total, own, parent_max)
            cap = _f32_divide(calc, cluster, eff_min, have_min)
            max_cap = _f32_divide(calc, cluster, eff_max, have_max)
            child.eff_in[label] = (eff_min, eff_max)
            child.label_sizes[label] = (
                cap * 100,
                max_cap * 100,
                rm.f32(cap * rm.f32(parent_abs)),
                rm.f32(max_cap * rm.f32(parent_abs_max)),
            )
        elif derived:
            rel = c.label_capacity.get(label)
            if rel is None:
                continue
            child.label_sizes[label] = _percent_share(rel, parent_abs, parent_abs_max)
        else:
            continue
        child._sized_in.pop(label, None)
        if isinstance(child, ParentQueue):
            if r is not None:
                _update_label_children(child, label, calc, cluster, total)
            else:
                _update_percent_below(child, label)
        elif isinstance(child, LeafQueue):
            child.touch()


def _percent_share(
    rel: tuple[float, float, float, float], parent_abs: float, parent_abs_max: float
) -> tuple[float, float, float, float]:
    """A queue in percent under a derived parent, in one label: its configured
    capacity and maximum, and their shares of the parent's absolute ones."""
    return (
        rel[0],
        rel[1],
        rm.f32(rm.f32(rel[0] / 100) * rm.f32(parent_abs)),
        rm.f32(rm.f32(rel[1] / 100) * rm.f32(parent_abs_max)),
    )


def _update_percent_below(parent: ParentQueue, label: str) -> None:
    """Queues in percent below a derived one: shares of its capacities."""
    parent_abs, parent_abs_max = parent.absolute_in(label)
    for child in parent.children:
        rel = child.conf.label_capacity.get(label)
        if rel is None:
            continue
        child.label_sizes[label] = _percent_share(rel, parent_abs, parent_abs_max)
        child._sized_in.pop(label, None)
        if isinstance(child, ParentQueue):
            _update_percent_below(child, label)
        elif isinstance(child, LeafQueue):
            child.touch()


def _ratio(have: Resource, want: Resource) -> dict[str, float]:
    """getEffectiveMinRatio: per resource type the wanted amount is
    non-zero for, have / want as a Java float."""
    out: dict[str, float] = {}
    wanted = want.to_wire()
    for name, n in have.to_wire().items():
        d = wanted.get(name, 0)
        if d:
            out[name] = rm.f32(rm.f32(n) / rm.f32(d))
    return out


def _min_ratio(parent: ParentQueue, env: Env) -> dict[str, float] | None:
    """recalculateEffectiveMinRatio: per resource type, how far the parent's
    effective minimum (the cluster, for root) covers its children's
    configured minimums; None when it covers them all."""
    total = parent.conf.children_min
    if total is None:
        return None
    calc, cluster = env.calc, env.cluster
    have = parent.eff_min
    if parent.parent is None and cluster.is_zero():
        return None
    if not rm.lt(calc, cluster, have, total):
        return None
    return _ratio(have, total)


def _scaled(r: Resource, ratio: dict[str, float] | None) -> Resource:
    """createNormalizedMinResource: each amount times its type's ratio, in
    floats, truncated."""
    if ratio is None:
        return r
    out = {}
    for name, v in r.to_wire().items():
        f = ratio.get(name)
        out[name] = v if f is None else int(rm.f32(rm.f32(v) * f))
    return Resource.from_wire(out)


def _f32_divide(calc: ResourceCalculator, cluster: Resource, a: Resource, b: Resource) -> float:
    """ResourceCalculator.divide as a Java float, an infinite quotient (and,
    here, an undefined one) counting as 0."""
    if isinstance(calc, DominantResourceCalculator):
        q = rm.divide(calc, cluster, a, b)
    elif b.memory == 0:
        return 0.0
    else:
        q = rm.f32(a.memory) / rm.f32(b.memory)
    if math.isinf(q) or math.isnan(q):
        return 0.0
    return rm.f32(q)

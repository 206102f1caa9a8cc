"""The queue tree as ProportionalCapacityPreemptionPolicy sees it in one
round: a `TempQueue` (TempQueuePerPartition) per queue, built from the live
tree each time the policy runs (cloneQueues).

Each carries the queue's guarantee, maximum, usage, reservations and, for a
leaf, its pending asks within the user limit, its apps in ordering-policy
order, its AM limit and, with intra-queue preemption, what
IntraQueueCandidatesSelector reads of it (`IntraLeaf`). With node labels
the tree is cloned once per labelled partition, with that partition's
amounts, and each leaf lists the containers its default-partition asks got
on labelled nodes by ignoring exclusivity, which are taken back first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from emu.resources import ZERO, Resource
from emu.rm.container import RMContainer
from emu.rm.scheduler.capacity import allocator
from emu.rm.scheduler.capacity import resource_math as rm
from emu.rm.scheduler.capacity.intra_preemption import IntraLeaf, all_users_limit
from emu.rm.scheduler.capacity.preemption import TempQueue, container_id_key
from emu.rm.scheduler.capacity.queues import Env, LeafQueue, ParentQueue, Queue

if TYPE_CHECKING:
    from emu.rm.scheduler.capacity.scheduler import CapacityScheduler


def snapshot(sched: CapacityScheduler) -> TempQueue:
    """The queue tree as the preemption policy sees it this round, in
    the default partition. With node labels its root also holds the
    tree in each labelled partition (ProportionalCapacityPreemptionPolicy
    clones the queues once per partition), the nodes' partitions and,
    per leaf, the containers default-partition asks got on labelled
    nodes by ignoring exclusivity."""
    env = sched.default_env
    root = _temp_queue(sched, sched.root, env, sched.cs.preemption.intra_queue_enabled)
    if sched.labelled:
        root.total = env.cluster
        root.node_partition = sched.node_partition
        for name in sorted(sched.partition_resource):
            penv = sched.env_for(name, False)
            if not penv.cluster.is_zero():
                proot = _temp_queue(
                    sched, sched.root, penv, sched.cs.preemption.intra_queue_enabled
                )
                proot.total = penv.cluster
                root.partitions.append(proot)
        _ignore_exclusivity(sched, root)
    return root


def _temp_queue(sched: CapacityScheduler, q: Queue, env: Env, intra_on: bool) -> TempQueue:
    """TempQueuePerPartition of `q` and its subtree in `env`'s partition.
    In a non-exclusive partition a queue that has no capacities there
    may use all of it (cloneQueues raises its maximum capacity to 1)."""
    p = env.partition
    guaranteed, maximum = q.exact_sizes(env)
    if p:
        if not sched.exclusive.get(p, True) and p not in q.conf.label_capacity:
            maximum = env.cluster
        t = TempQueue(
            name=q.path,
            guaranteed=guaranteed,
            maximum=maximum,
            used=q.used_in.get(p, ZERO),
            reserved=q.reserved_in.get(p, ZERO),
            preemption_disabled=q.conf.preemption_disabled,
            abs_capacity=q.absolute_in(p)[0],
            partition=p,
        )
    else:
        t = TempQueue(
            name=q.path,
            guaranteed=guaranteed,
            maximum=maximum,
            used=q.used,
            reserved=q.reserved,
            preemption_disabled=q.conf.preemption_disabled,
            abs_capacity=q.absolute_capacity,
        )
    if q.conf.respects_priority:
        t.relative_priority = q.conf.priority
    if isinstance(q, LeafQueue):
        t.pending = q.pending_considering_user_limit(env, deduct_reserved=False)
        t.pending_deduct_reserved = q.pending_considering_user_limit(env, True)
        if p:
            # what is taken is chosen from the default partition's leaves
            if intra_on:
                t.intra = _intra_leaf(sched, q, env)
            return t
        if q.conf.ordering_policy == "fifo":
            t.apps = list(q.active)
        else:
            if not q.conf.preemption_disabled:
                # FifoCandidatesSelector takes every leaf it does not skip
                # through getPreemptionIterator, which re-sorts the apps
                # whose containers came or went first; the intra-queue
                # selector then compares apps by the same cached usage.
                sched.reorder_fair(q)
            t.apps = sorted(q.active, key=q.fair_key(seen=True))
        for sapp in t.apps:
            if sapp.reservations:
                t.reservations[sapp.attempt_id] = allocator.reserved_containers(sched.alloc, sapp)
        # FifoCandidatesSelector: the default partition's effective
        # capacity (getEffectiveCapacity(NO_LABEL)) times the AM percent.
        t.max_am_resource = rm.multiply(guaranteed, q.conf.maximum_am_percent)
        if intra_on:
            t.intra = _intra_leaf(sched, q, env)
    else:
        assert isinstance(q, ParentQueue)
        for c in q.children:
            t.add_child(_temp_queue(sched, c, env, intra_on))
    return t


def _ignore_exclusivity(sched: CapacityScheduler, root: TempQueue) -> None:
    """Each leaf's containers of apps without a label on labelled
    nodes (the asks that got them ignored exclusivity), by partition,
    in container order (the TreeSet of RMContainers)."""
    where = sched.node_partition
    labels = sched.app_label
    for leaf in root.leaves():
        found: dict[str, list[RMContainer]] = {}
        for sapp in leaf.apps:
            if labels.get(sapp.app_id, ""):
                continue
            for c in sapp.live.values():
                p = where.get(c.node_id, "")
                if p:
                    found.setdefault(p, []).append(c)
        for cs in found.values():
            cs.sort(key=container_id_key)
        leaf.ignore_exclusivity = found


def _intra_leaf(sched: CapacityScheduler, q: LeafQueue, env: Env) -> IntraLeaf:
    """What IntraQueueCandidatesSelector reads of a leaf this round, in
    `env`'s partition: with node labels, the users' usage there, the
    user limit over the partition's resource, and each app's usage,
    running AM and pending asks there."""
    c = q.conf
    p = env.partition
    used = {name: u.used_of(p) for name, u in q.users.items()}
    version, cluster = q.version, env.cluster

    def limit(user: str) -> Resource:
        # UsersManager.getComputedResourceLimitForAllUsers: recomputed only
        # when the users' state version moved (usage, active users, the
        # cluster); a user added by a submission alone does not move it.
        # A user with a weight gets the limit times it, rounded down.
        value = all_users()
        w = c.user_weights.get(user, 1.0) if c.user_weights else 1.0
        return value if w == 1.0 else rm.multiply_down(value, w, sched.minimum)

    def all_users() -> Resource:
        cached = q.all_users_limits.get(p)
        if cached is not None and cached[0] == version and cached[1] == cluster and cached[2] is c:
            return cached[3]
        # allUsersTimesWeights: every user the queue knows, by weight. As
        # the active users' limit: the same guarantee, and the queue's
        # float usage ratio in the default partition.
        weights = rm.weight_sum(c.user_weights, sorted(used)) if c.user_weights else None
        value = all_users_limit(
            sched.calc,
            cluster,
            sched.minimum,
            q.limit_guarantee(env),
            list(used.values()),
            c.user_limit_percent,
            c.user_limit_factor,
            q.max_resource(env),
            None if p else q.usage_ratio,
            weights,
        )
        q.all_users_limits[p] = (version, cluster, c, value)
        return value

    all_apps = list(q.pending) + list(q.active)
    leaf = IntraLeaf(
        all_apps=all_apps,
        active=list(q.active),
        user_used=used,
        user_limit=limit,
        used_capacity=q.used_capacity(env),
        disabled=c.intra_preemption_disabled,
        fair=c.ordering_policy == "fair",
        fair_key=q.fair_key(seen=True),
        minimum=sched.minimum,
    )
    if sched.labelled:
        where = sched.node_partition
        usage: dict[str, tuple[Resource, Resource, Resource]] = {}
        for sapp in all_apps:
            label = sched.app_label.get(sapp.app_id, "")
            if label:
                leaf.app_partition[sapp.attempt_id] = label
            here = ZERO
            for held in sapp.live.values():
                if where.get(held.node_id, "") == p:
                    here = here + held.resource
            if label == p:
                am = sapp.am_resource if sapp.am_running else ZERO
                usage[sapp.attempt_id] = (here, am, sapp.pending)
            else:
                usage[sapp.attempt_id] = (here, ZERO, ZERO)
        leaf.partition = p
        leaf.usage = usage
    return leaf

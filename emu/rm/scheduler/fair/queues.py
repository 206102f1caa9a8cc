"""The queue tree: Hadoop's FSQueue, FSParentQueue, FSLeafQueue and
QueueManager.

Queues are named by their full path (`root.a.b`). A parent queue splits its
fair share among its children with its policy and assigns a node to the
children in policy order, depth first, stopping at the first child that
assigns something; a leaf queue does the same with its runnable apps that
have unmet demand. `root.default` always exists; other queues come from the
allocation file or are created on demand by the placement policy (ad hoc
queues take their parent's `maxChildResources` as their max).

Usage is tracked per queue as containers come and go; demand (usage plus
outstanding asks, capped at the max share) and fair shares are recomputed
on the scheduler's periodic update, as in Hadoop, so between updates they
are as stale as Hadoop's are.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from emu.resources import ZERO, Resource, component_max, component_min
from emu.rm.scheduler import activities as act
from emu.rm.scheduler import shortcuts
from emu.rm.scheduler.fair.allocation_file import (
    ADMINISTER,
    EVERYBODY,
    SUBMIT,
    ConfigurableResource,
)
from emu.rm.scheduler.fair.arith import (
    fits_in,
    is_none,
    multiply_round_up,
    same,
    subtract_non_negative,
    value,
    with_value,
)
from emu.rm.scheduler.fair.policies import Policy
from emu.rm.scheduler.locality import ANY

if TYPE_CHECKING:
    from emu.rm.scheduler.fair.app import FSApp
    from emu.rm.scheduler.fair.scheduler import FairScheduler
    from emu.rm.scheduler.scheduler_node import SchedulerNode

ROOT = "root"
DEFAULT = "root.default"
NONE = ZERO
CONTAINER_RESERVED = Resource(-1, 0)
"""What an assignment returns when it reserved the node instead."""


class InvalidQueueName(Exception):
    """A queue name with an empty or untrimmed component."""


def ensure_root_prefix(name: str) -> str:
    if name != ROOT and not name.startswith(ROOT + "."):
        return ROOT + "." + name
    return name


class FSQueue:
    """What parent and leaf queues share (Hadoop's FSQueue)."""

    is_leaf = False

    def __init__(self, name: str, fs: FairScheduler, parent: FSParentQueue | None) -> None:
        # (cluster, max_conf, min_share, max share): kept while the three
        # inputs are the same objects.
        self._max_share: tuple[Resource, Any, Resource, Resource] | None = None
        self.name = name
        self.fs = fs
        self.parent = parent
        self.start_ms = 0
        self.fair_share = ZERO
        self.steady_fair_share = ZERO
        self.usage = ZERO
        self.demand = ZERO
        self.policy: Policy = fs.alloc.policy(name)
        self.weight = 1.0
        self.min_share = ZERO
        self.max_conf: ConfigurableResource = fs.alloc.max_share(name)
        self.max_child: ConfigurableResource | None = None
        self.max_running_apps = 0
        self.max_am_share = 0.5
        self.min_share_timeout = 0
        self.fair_share_timeout = 0
        self.fair_share_threshold = 0.5
        self.preemptable = True
        self.reinit(False)

    # --- configuration --------------------------------------------------------------------------
    def reinit(self, recursive: bool) -> None:
        """Take this queue's properties from the allocation configuration."""
        alloc = self.fs.alloc
        name = self.name
        self.weight = alloc.weight(name)
        self.min_share = alloc.min_share(name)
        self.max_conf = alloc.max_share(name)
        self.max_running_apps = alloc.max_apps(name)
        self.max_am_share = alloc.max_am_share(name)
        self.max_child = alloc.max_child_resources.get(name)
        parent = self.parent
        self.min_share_timeout = alloc.min_share_timeout(name)
        if self.min_share_timeout == -1 and parent is not None:
            self.min_share_timeout = parent.min_share_timeout
        self.fair_share_timeout = alloc.fair_share_timeout(name)
        if self.fair_share_timeout == -1 and parent is not None:
            self.fair_share_timeout = parent.fair_share_timeout
        self.fair_share_threshold = alloc.fair_share_threshold(name)
        if self.fair_share_threshold < 0 and parent is not None:
            self.fair_share_threshold = parent.fair_share_threshold
        if parent is not None and not parent.preemptable:
            self.preemptable = False
        else:
            self.preemptable = name not in alloc.non_preemptable
        if recursive:
            for child in self.children_list():
                child.reinit(True)

    def children_list(self) -> list[FSQueue]:
        return []

    @property
    def max_share(self) -> Resource:
        """The configured max (percentages of the current cluster), at least the
        min share; asked on every node update, so kept until one of the three
        inputs is replaced."""
        cluster, max_conf, min_share = self.fs.cluster, self.max_conf, self.min_share
        cached = self._max_share
        if (
            cached is not None
            and cached[0] is cluster
            and cached[1] is max_conf
            and cached[2] is min_share
            and shortcuts.enabled()
        ):
            return cached[3]
        value = component_max(max_conf.get(cluster), min_share)
        self._max_share = (cluster, max_conf, min_share, value)
        return value

    def has_access(self, kind: str, user: str, groups: tuple[str, ...]) -> bool:
        """ACLs are inherited: access to a queue or any of its ancestors grants it."""
        name: str | None = self.name
        alloc = self.fs.alloc
        while name is not None:
            acl = alloc.acl(name, kind)
            if acl is None and name == ROOT:
                acl = EVERYBODY
            if acl is not None and acl.allows(user, groups):
                return True
            name = name.rsplit(".", 1)[0] if "." in name else None
        return False

    def can_submit(self, user: str, groups: tuple[str, ...]) -> bool:
        return self.has_access(SUBMIT, user, groups) or self.has_access(ADMINISTER, user, groups)

    # --- usage and limits -----------------------------------------------------------------------
    def inc_usage(self, r: Resource) -> None:
        q: FSQueue | None = self
        while q is not None:
            q.usage = q.usage + r
            q = q.parent

    def dec_usage(self, r: Resource) -> None:
        q: FSQueue | None = self
        while q is not None:
            q.usage = q.usage - r
            q = q.parent

    def fits_in_max_share(self, additional: Resource) -> bool:
        """Whether `additional` fits under this queue's and every ancestor's
        max share; asked on every offer, so memory-and-vcores resources are
        compared without building the sum."""
        q: FSQueue | None = self
        while q is not None:
            usage, limit = q.usage, q.max_share
            if usage.extra or additional.extra or limit.extra:
                if not fits_in(usage + additional, limit):
                    return False
            elif (
                usage.memory + additional.memory > limit.memory
                or usage.vcores + additional.vcores > limit.vcores
            ):
                return False
            q = q.parent
        return True

    def precheck(self, node: SchedulerNode) -> bool:
        """assignContainerPreCheck: the node is not reserved, the queue is within its max."""
        return node.reserved is None and fits_in(self.usage, self.max_share)

    def num_runnable(self) -> int:
        raise NotImplementedError

    def is_active(self) -> bool:
        return self.num_runnable() > 0

    def is_empty(self) -> bool:
        raise NotImplementedError

    # --- periodic update ------------------------------------------------------------------------
    def update(self, fair_share: Resource) -> None:
        self.fair_share = fair_share
        self.update_internal()

    def update_internal(self) -> None:
        raise NotImplementedError

    def update_demand(self) -> None:
        raise NotImplementedError

    def assign_container(self, node: SchedulerNode) -> Resource:
        raise NotImplementedError


class FSParentQueue(FSQueue):
    def __init__(self, name: str, fs: FairScheduler, parent: FSParentQueue | None) -> None:
        self.children: list[FSQueue] = []
        self.runnable_apps = 0
        self._order: list[FSQueue] | None = None
        self._order_inputs: list[object] = []
        self._order_keys: list[tuple[Any, ...]] = []
        super().__init__(name, fs, parent)

    def children_list(self) -> list[FSQueue]:
        return self.children

    def num_runnable(self) -> int:
        return self.runnable_apps

    def is_empty(self) -> bool:
        return all(c.is_empty() for c in self.children)

    def update_internal(self) -> None:
        self.policy.compute_shares(self.children, self.fair_share)
        for child in self.children:
            child.update_internal()

    def recompute_steady_shares(self) -> None:
        self.policy.compute_steady_shares(self.children, self.steady_fair_share)
        for child in self.children:
            if isinstance(child, FSParentQueue):
                child.recompute_steady_shares()

    def update_demand(self) -> None:
        demand = ZERO
        for child in self.children:
            child.update_demand()
            demand = demand + child.demand
        self.demand = component_min(demand, self.max_share)

    def assign_container(self, node: SchedulerNode) -> Resource:
        if not self.precheck(node):
            return NONE
        for child in self.children_in_order():
            assigned: Resource = child.assign_container(node)
            if assigned is not NONE and assigned != NONE:
                return assigned
        return NONE

    def children_in_order(self) -> list[FSQueue]:
        """The children in the policy's order, as each node update offers
        the node to them. Shortcut: the last order is kept while nothing the
        policies' orders read has been replaced: the policy, the cluster,
        and each child (in list order), its usage, demand, min share and
        weight (resources are replaced on change, never changed in place; a
        queue's start time and name never change). Most node updates come
        between two container moves, and the sort (a key per child) was
        ~3 % of a busy Fair replay. When some children changed, only theirs
        of the kept sort keys (`Policy.app_key`, the key the policy's sort
        orders by, less the position) are made again."""
        children, cluster, policy = self.children, self.fs.cluster, self.policy
        kept, inputs = self._order, self._order_inputs
        if not (
            kept is not None
            and shortcuts.enabled()
            and len(inputs) == 2 + 5 * len(children)
            and inputs[0] is cluster
            and inputs[1] is policy
        ):
            return self._sort_children(children, cluster, policy)
        keys = self._order_keys
        changed = False
        i = 2
        for k, c in enumerate(children):
            if not (
                inputs[i] is c
                and inputs[i + 1] is c.usage
                and inputs[i + 2] is c.demand
                and inputs[i + 3] is c.min_share
                and inputs[i + 4] == c.weight
            ):
                key = policy.app_key(c, cluster)
                if key is None or len(keys) != len(children):
                    # The comparator orders them (or did last time): no keys.
                    return self._sort_children(children, cluster, policy)
                keys[k] = key
                inputs[i : i + 5] = (c, c.usage, c.demand, c.min_share, c.weight)
                changed = True
            i += 5
        if not changed:
            return kept
        # The sort's own keys: each child's key, then its position.
        order = [c for _, _, c in sorted(zip(keys, range(len(children)), children, strict=True))]
        self._order = order
        return order

    def _sort_children(
        self, children: list[FSQueue], cluster: Resource, policy: Policy
    ) -> list[FSQueue]:
        """`children_in_order` from scratch: the policy's sort, its inputs
        and each child's key kept for the next call."""
        order = policy.sort(children, cluster)
        inputs: list[object] = [cluster, policy]
        keys: list[tuple[Any, ...]] = []
        for c in children:
            inputs += (c, c.usage, c.demand, c.min_share, c.weight)
            key = policy.app_key(c, cluster)
            if key is not None:
                keys.append(key)
        # Keys for all or none: with one missing the comparator orders them.
        self._order, self._order_inputs = order, inputs
        self._order_keys = keys if len(keys) == len(children) else []
        return order


class FSLeafQueue(FSQueue):
    is_leaf = True

    def __init__(self, name: str, fs: FairScheduler, parent: FSParentQueue | None) -> None:
        self.runnable: list[FSApp] = []
        self.non_runnable: list[FSApp] = []
        # runnable apps whose demand differs from their usage (kept by FSApp)
        self.wanting: dict[FSApp, None] = {}
        # Shortcut: `wanting` in policy order, kept as apps change (reorder):
        # each app's sort key (its policy key and `runnable_seq`) and the app
        # at the same index, valid for the (policy, cluster) in _order_basis.
        self._keys: list[tuple[Any, ...]] = []
        self._ordered: list[FSApp] = []
        # the same less the settled apps (see settle): those offered a node
        self._active_keys: list[tuple[Any, ...]] = []
        self._active: list[FSApp] = []
        # the active apps less the silent ones (see silence): those offered a
        # node that no silent app's ask fits
        self._doubt_keys: list[tuple[Any, ...]] = []
        self._doubt: list[FSApp] = []
        self._silent: dict[FSApp, None] = {}
        # silent apps whose AM is still to be placed, by their AM ask's size
        self._silent_am: dict[FSApp, Resource] = {}
        # their smallest key and distinct AM sizes, until one of them changes
        self._silent_am_summary: tuple[Any, list[Resource]] | None = None
        # at most the smallest memory and vcores any silent app asks for
        self._silent_memory = 0
        self._silent_vcores = 0
        self._order_basis: tuple[Policy, Resource] | None = None
        self._runnable_seq = 0
        self.am_usage = ZERO
        self.max_am_metric = ZERO
        self.last_time_at_min_share = fs.now_ms()
        super().__init__(name, fs, parent)

    def num_runnable(self) -> int:
        return len(self.runnable)

    def is_empty(self) -> bool:
        return not self.runnable and not self.non_runnable

    def add_app(self, app: FSApp, runnable: bool) -> None:
        (self.runnable if runnable else self.non_runnable).append(app)
        app.set_runnable(runnable)
        self.inc_usage(app.usage)

    def remove_app(self, app: FSApp) -> bool:
        """Remove the app; True if it was runnable."""
        runnable = app in self.runnable
        if runnable:
            self.runnable.remove(app)
            if app.sapp.am_running:
                self.am_usage = self.am_usage - app.am_resource
        else:
            self.non_runnable.remove(app)
        app.set_runnable(False)
        self.dec_usage(app.usage)
        return runnable

    def next_runnable_seq(self) -> int:
        """Order of joining `runnable`: the comparator's last tie (two
        attempts of one app with one start time) falls to this order, as a
        stable sort of `runnable` leaves it."""
        self._runnable_seq += 1
        return self._runnable_seq

    def update_internal(self) -> None:
        self.policy.compute_shares(self.runnable, self.fair_share)

    # --- apps in policy order (shortcut) --------------------------------------------------------
    def reorder(self, app: FSApp) -> None:
        """`app`'s usage, demand, asks or runnability changed: move it to its
        place in the kept order (or out of it, if it no longer wants), and
        back among the apps a node is offered to if it asks again. Does
        nothing while no order is kept; the next node update builds one."""
        basis = self._order_basis
        if basis is None:
            return
        old = app.order_key
        key: tuple[Any, ...] | None = None
        if app in self.wanting:
            k = basis[0].app_key(app, basis[1])
            if k is None:
                self._drop_order()
                return
            key = (*k, app.runnable_seq)
        was_settled = app.settled
        settled = was_settled and key is not None and not app.sapp.info.priorities
        if key == old and settled == was_settled:
            return
        keys, ordered = self._keys, self._ordered
        if old is not None:
            i = bisect_left(keys, old)
            del keys[i]
            del ordered[i]
            if not was_settled:
                i = bisect_left(self._active_keys, old)
                del self._active_keys[i]
                del self._active[i]
                if not app.silent:
                    i = bisect_left(self._doubt_keys, old)
                    del self._doubt_keys[i]
                    del self._doubt[i]
        if was_settled and not settled:
            self.fs.unsettle(app)
        if app.silent and (key is None or settled):
            self._drop_silence(app)
        elif key != old and app in self._silent_am:
            self._silent_am_summary = None
        app.settled = settled
        app.order_key = key
        if key is not None:
            i = bisect_left(keys, key)
            keys.insert(i, key)
            ordered.insert(i, app)
            if not settled:
                i = bisect_left(self._active_keys, key)
                self._active_keys.insert(i, key)
                self._active.insert(i, app)
                if not app.silent:
                    i = bisect_left(self._doubt_keys, key)
                    self._doubt_keys.insert(i, key)
                    self._doubt.insert(i, app)

    def settle(self, app: FSApp) -> None:
        """`app` asks for nothing and has just recorded what an offer to it
        records (FSApp.idle_reason): until it asks again, leaves `wanting`,
        gets a blacklist, or another decision is recorded for its app id
        (`unsettle`), an offer would record nothing new, so nodes are not
        offered to it. An app with a blacklist is not settled."""
        key = app.order_key
        if key is None or app.settled or app.sapp.blacklist:
            return
        i = bisect_left(self._active_keys, key)
        del self._active_keys[i]
        del self._active[i]
        if app.silent:
            self._drop_silence(app)
        else:
            i = bisect_left(self._doubt_keys, key)
            del self._doubt_keys[i]
            del self._doubt[i]
        app.settled = True
        self.fs.settled(app)

    def unsettle(self, app: FSApp) -> None:
        """A decision was recorded for `app`'s app id: offer it nodes again."""
        if not app.settled:
            return
        app.settled = False
        key = app.order_key
        if key is not None:
            i = bisect_left(self._active_keys, key)
            self._active_keys.insert(i, key)
            self._active.insert(i, app)
            i = bisect_left(self._doubt_keys, key)
            self._doubt_keys.insert(i, key)
            self._doubt.insert(i, app)

    # --- silent apps (shortcut) -----------------------------------------------------------------
    def silence(self, app: FSApp) -> None:
        """`app`, active, has just been offered a node and recorded "no node
        fits". While delay scheduling is off (no offer reads or resets the
        scheduling opportunities it counts), it has no blacklist and none of
        its asks may reserve a node (below the reservation threshold, or
        off-switch only while it holds all the reservations it may), an
        offer of any node that none of its asks fits does exactly that
        again: records "no node fits" (after the AM-limit check if its AM
        is still to be placed), which is already its last decision, so
        nothing. Until something that could change that happens
        (`unsilence`: a new decision for its app id, a change of its asks,
        blacklist, AM or reservations, leaving the active apps, a new
        order), such nodes are not offered to it (`assign_container`)."""
        if app.silent or app.declined != act.NO_FIT or app.order_key is None or app.settled:
            return
        sapp = app.sapp
        if sapp.blacklist or not sapp.info.priorities or not self.fs.delay_off():
            return
        fs = self.fs
        cluster, threshold = fs.cluster, fs.reservation_threshold
        at_least = self.policy.calculator.at_least
        memory = vcores = -1
        last: Resource | None = None
        reservable = False
        for by_name in sapp.info.requests.values():
            for name, ask in by_name.items():
                capability = ask.capability
                if capability is not last:
                    last = capability
                    reservable = at_least(cluster, capability, threshold)
                    if memory < 0 or capability.memory < memory:
                        memory = capability.memory
                    if vcores < 0 or capability.vcores < vcores:
                        vcores = capability.vcores
                if (
                    reservable
                    and ask.num > 0
                    and not (
                        # FSApp.reserve refuses, whatever the node: off-switch
                        # only, and it holds all the reservations it may
                        name == ANY
                        and all(n == ANY or a.num <= 0 for n, a in by_name.items())
                        and app.holds_all_off_switch_reservations()
                    )
                ):
                    return  # FSApp.is_reservable could hold: it may reserve
        am_ask: Resource | None = None
        if sapp.am_pending and not sapp.am_running:
            first = sapp.info.get(sapp.info.priorities[0], ANY)
            if first is None or first.num == 0:
                return
            am_ask = first.capability
        key = app.order_key
        i = bisect_left(self._doubt_keys, key)
        del self._doubt_keys[i]
        del self._doubt[i]
        app.silent = True
        app.silent_memory, app.silent_vcores = memory, vcores
        if not self._silent or memory < self._silent_memory:
            self._silent_memory = memory
        if not self._silent or vcores < self._silent_vcores:
            self._silent_vcores = vcores
        self._silent[app] = None
        if am_ask is not None:
            self._silent_am[app] = am_ask
            self._silent_am_summary = None
        fs.silenced(app)

    def unsilence(self, app: FSApp) -> None:
        """Something that may change how `app` declines a node happened:
        offer it nodes again."""
        if not app.silent:
            return
        self._drop_silence(app)
        key = app.order_key
        if key is not None and not app.settled:
            i = bisect_left(self._doubt_keys, key)
            self._doubt_keys.insert(i, key)
            self._doubt.insert(i, app)

    def unsilence_all(self) -> None:
        """Nodes came or went: the reservations an app may hold changed."""
        for app in list(self._silent):
            self.unsilence(app)

    def _drop_silence(self, app: FSApp) -> None:
        app.silent = False
        del self._silent[app]
        if self._silent_am.pop(app, None) is not None:
            self._silent_am_summary = None
        self.fs.unsilenced(app)

    def refresh_silent_bounds(self) -> None:
        """Raise the smallest-ask bounds back to the silent apps' own (they
        only fall as apps are silenced): on the periodic update."""
        memory = vcores = 0
        for i, app in enumerate(self._silent):
            if i == 0 or app.silent_memory < memory:
                memory = app.silent_memory
            if i == 0 or app.silent_vcores < vcores:
                vcores = app.silent_vcores
        self._silent_memory, self._silent_vcores = memory, vcores

    def _silent_walk(self, node: SchedulerNode) -> tuple[Resource | None, Any] | None:
        """Whether `node` may be offered to the doubtful apps alone: no
        silent app's ask fits it, and every silent app whose AM is still to
        be placed passes the AM-limit check (so records nothing new). Then
        the AM limit those checks would have computed (None if the check is
        off) and the smallest key among such apps (None if there are none);
        else None."""
        available = node.available
        if not self._silent or not (
            available.memory < self._silent_memory or available.vcores < self._silent_vcores
        ):
            return None
        if not self._silent_am:
            return None, None
        summary = self._silent_am_summary
        if summary is None:
            first_key: Any = None
            sizes: list[Resource] = []
            for app, capability in self._silent_am.items():
                if first_key is None or app.order_key < first_key:
                    first_key = app.order_key
                if not any(capability is c for c in sizes):
                    sizes.append(capability)
            summary = self._silent_am_summary = (first_key, sizes)
        if abs(self.max_am_share - -1.0) < 0.0001:
            return None, summary[0]
        limit = self.max_am_resource()
        usage = self.am_usage
        for capability in summary[1]:
            if not fits_in(usage + capability, limit):
                return None
        return limit, summary[0]

    @property
    def active_apps(self) -> list[FSApp] | None:
        """The wanting apps less the settled ones, while an order is kept
        (else None): every wanting app with asks or a blacklist is in it."""
        return self._active if self._order_basis is not None else None

    def _drop_order(self) -> None:
        for app in self._ordered:
            app.order_key = None
            if app.settled:
                self.fs.unsettle(app)
                app.settled = False
        self._keys = []
        self._ordered = []
        self._active_keys = []
        self._active = []
        for app in list(self._silent):
            self._drop_silence(app)
        self._doubt_keys = []
        self._doubt = []
        self._order_basis = None

    def _build_order(self) -> bool:
        """Key and sort the wanting apps for the current policy and cluster;
        False (and no order kept) if the policy has no key for one of them."""
        self._drop_order()
        policy, cluster = self.policy, self.fs.cluster
        keyed = []
        for app in self.wanting:
            k = policy.app_key(app, cluster)
            if k is None:
                return False
            keyed.append(((*k, app.runnable_seq), app))
        keyed.sort(key=_first)
        for key, app in keyed:
            app.order_key = key
        self._keys = [key for key, _ in keyed]
        self._ordered = [app for _, app in keyed]
        self._active_keys = self._keys[:]
        self._active = self._ordered[:]
        self._doubt_keys = self._keys[:]
        self._doubt = self._ordered[:]
        self._order_basis = (policy, cluster)
        return True

    def _kept_order(self) -> bool:
        """Whether an order is kept for the current policy and cluster (built
        here if it can be)."""
        basis = self._order_basis
        return (
            basis is not None and basis[0] is self.policy and basis[1] is self.fs.cluster
        ) or self._build_order()

    def update_demand(self) -> None:
        memory = vcores = 0
        extra = False
        for apps in (self.runnable, self.non_runnable):
            for app in apps:
                app.update_demand()
                d = app.demand
                memory += d.memory
                vcores += d.vcores
                extra = extra or bool(d.extra)
        if extra:  # the sum with every resource type
            demand = ZERO
            for app in self.runnable:
                demand = demand + app.demand
            for app in self.non_runnable:
                demand = demand + app.demand
        else:
            demand = Resource(memory, vcores)
        self.demand = component_min(demand, self.max_share)

    def apps_with_demand(self, assignment: bool) -> list[FSApp]:
        """Runnable apps with unmet demand in policy order; for preemption,
        only those due a starvation check."""
        candidates: Iterable[FSApp] = self.wanting
        if not shortcuts.enabled():
            candidates = [a for a in self.runnable if not is_none(a.demand - a.usage)]
        elif self._kept_order():
            ordered = self._ordered
            if assignment:
                return ordered[:]
            now = self.fs.now_ms()
            return [a for a in ordered if now >= a.next_starvation_check]
        if assignment:
            return self.policy.sort(candidates, self.fs.cluster)
        now = self.fs.now_ms()
        apps = [a for a in candidates if now >= a.next_starvation_check]
        return self.policy.sort(apps, self.fs.cluster)

    def assign_container(self, node: SchedulerNode) -> Resource:
        if not self.precheck(node):
            if node.reserved is None:  # at maxResources: say so for its oldest waiting app
                for app in self.runnable:
                    if not same(app.demand, app.usage):
                        self.fs.activities.record(app.sapp.app_id, act.QUEUE_MAX, node.node_id)
                        break
            return NONE
        if not shortcuts.enabled() or not self._kept_order():
            for app in self.apps_with_demand(True):
                if app.blacklisted(node):
                    continue
                assigned = app.assign_container(node)
                if assigned != NONE:
                    return assigned
            return NONE
        # Shortcut: the kept order less the settled apps. An app asking for
        # nothing (its demand is stale until the next update) is offered the
        # node only to record why it took nothing: record that directly
        # (FSApp.idle_reason) and settle it, so later passes skip it. The
        # walk goes by key through the live list, so an app further on that
        # a record unsettles during this pass is still offered the node, as
        # it would be in a pass over all of them (no key moves until an
        # offer places or reserves, which ends the pass).
        #
        # Shortcut: a node that no silent app's asks fit is offered to the
        # others alone (silence), in the same order; the silent apps' offers
        # would have recorded nothing new and left only the AM limit their
        # check computes, set here as the walk would have left it.
        record = self.fs.activities.record
        node_id = node.node_id
        silent_walk = self._silent_walk(node) if self._silent else None
        if silent_walk is None:
            keys, apps = self._active_keys, self._active
        else:
            keys, apps = self._doubt_keys, self._doubt
        i = 0
        placed: Resource = NONE
        stop: Any = None
        while i < len(apps):
            app = apps[i]
            key = keys[i]
            sapp = app.sapp
            if not (sapp.blacklist and app.blacklisted(node)):
                if not sapp.info.priorities:
                    record(sapp.app_id, app.idle_reason(), node_id)
                    self.settle(app)
                else:
                    placed = app.assign_container(node)
                    if placed is not NONE and placed != NONE:
                        stop = key
                        break
                    if app.declined == act.NO_FIT:
                        self.silence(app)
            i = bisect_right(keys, key)
        if silent_walk is not None:
            limit, first_key = silent_walk
            if limit is not None and (stop is None or first_key < stop):
                self.max_am_metric = limit
        return NONE if stop is None else placed

    # --- AM limits ------------------------------------------------------------------------------
    def max_am_resource(self) -> Resource:
        """Fair share x maxAMShare, rounded up; a zero component of the fair
        share, extra resource types included, is replaced by min(cluster
        available, max share) (`computeMaxAMResource` and
        `QueueMetrics.fillInValuesFromAvailableResources`)."""
        r = self.fair_share
        available = self.fs.root_available
        max_share = self.max_share
        if r.memory == 0:
            r = Resource(min(available.memory, max_share.memory), r.vcores, r.extra)
        if r.vcores == 0:
            r = Resource(r.memory, min(available.vcores, max_share.vcores), r.extra)
        if available.extra:
            for rtype, free in available.extra:
                if value(r, rtype) == 0:
                    r = with_value(r, rtype, min(free, value(max_share, rtype)))
        return multiply_round_up(r, self.max_am_share)

    def can_run_am(self, am_resource: Resource) -> bool:
        """Whether one more AM fits under maxAMShare (-1 disables the check);
        the limit computed is kept for reports, as Hadoop's queue metrics do."""
        if abs(self.max_am_share - -1.0) < 0.0001:
            return True
        self.max_am_metric = self.max_am_resource()
        return fits_in(self.am_usage + am_resource, self.max_am_metric)

    # --- starvation -----------------------------------------------------------------------------
    def min_share_starvation(self, now: int) -> Resource:
        calc = self.policy.calculator
        desired = calc.min(self.fs.cluster, self.min_share, self.demand)
        starvation = desired - self.usage
        if is_none(starvation):
            self.last_time_at_min_share = now
        if now - self.last_time_at_min_share < self.min_share_timeout:
            starvation = ZERO
        return starvation

    def update_starved_apps(self, now: int, starved: list[FSApp]) -> None:
        """Identify this queue's starved apps (FSLeafQueue.updateStarvedApps)."""
        apps = self.apps_with_demand(False)
        fair_starvation = ZERO
        for app in apps:
            s = app.update_fair_share_starvation(now)
            if is_none(s):
                break
            if app not in starved:
                starved.append(app)
            fair_starvation = fair_starvation + s
        pending = subtract_non_negative(self.min_share_starvation(now), fair_starvation)
        calc = self.policy.calculator
        for app in apps:
            if not is_none(pending):
                app_min = subtract_non_negative(app.demand - app.usage, app.fairshare_starvation)
                if calc.greater_than(self.fs.cluster, app_min, pending):
                    app_min = subtract_non_negative(app_min, pending)
                    pending = ZERO
                else:
                    pending = subtract_non_negative(pending, app_min)
                app.minshare_starvation = app_min
                if app not in starved:
                    starved.append(app)
            else:
                app.minshare_starvation = ZERO


def _first(item: tuple[Any, ...]) -> Any:
    return item[0]


class QueueManager:
    """All queues by name; creates them on demand (Hadoop's QueueManager)."""

    def __init__(self, fs: FairScheduler) -> None:
        self.fs = fs
        self.root = FSParentQueue(ROOT, fs, None)
        self.queues: dict[str, FSQueue] = {ROOT: self.root}
        self.leaves: list[FSLeafQueue] = []
        self.get_leaf("default", True)
        self.root.reinit(True)

    def get(self, name: str) -> FSQueue | None:
        return self.queues.get(ensure_root_prefix(name))

    def get_leaf(self, name: str, create: bool, recompute: bool = True) -> FSLeafQueue | None:
        q = self._get(name, create, leaf=True, recompute=recompute)
        return q if isinstance(q, FSLeafQueue) else None

    def get_parent(self, name: str, create: bool, recompute: bool = True) -> FSParentQueue | None:
        q = self._get(name, create, leaf=False, recompute=recompute)
        return q if isinstance(q, FSParentQueue) else None

    def _get(self, name: str, create: bool, leaf: bool, recompute: bool) -> FSQueue | None:
        name = ensure_root_prefix(name)
        q = self.queues.get(name)
        if q is None and create:
            q = self._create(name, leaf)
            if q is not None and recompute:
                self.root.recompute_steady_shares()
        return q

    def _create(self, name: str, leaf: bool) -> FSQueue | None:
        """Create `name` and any missing ancestors; None if an ancestor is a
        leaf or a policy forbids it."""
        new_names = [name]
        parent: FSParentQueue | None = None
        sep = len(name)
        while sep != -1:
            prev = sep
            sep = name.rfind(".", 0, sep)
            node = name[sep + 1 : prev]
            if not node or node != node.strip():
                raise InvalidQueueName(
                    f"Illegal node name at offset {sep + 1} for queue name {name}"
                )
            if sep == -1:
                break
            cur = name[:sep]
            existing = self.queues.get(cur)
            if existing is None:
                new_names.insert(0, cur)
            else:
                if isinstance(existing, FSParentQueue):
                    parent = existing
                break
        if parent is None:
            return None
        alloc = self.fs.alloc
        queue: FSQueue | None = None
        for i, qname in enumerate(new_names):
            child_policy = alloc.policy(qname)
            if not parent.policy.child_allowed(child_policy):
                return None
            last = i == len(new_names) - 1
            if last and leaf:
                queue = FSLeafQueue(qname, self.fs, parent)
                self.leaves.append(queue)
            else:
                if child_policy.leaf_only:
                    return None
                queue = FSParentQueue(qname, self.fs, parent)
            parent.children.append(queue)
            if qname not in alloc.configured and parent.max_child is not None:
                queue.max_conf = parent.max_child
            self.queues[qname] = queue
            if isinstance(queue, FSParentQueue):
                parent = queue
        return queue

    def _remove_if_empty(self, q: FSQueue) -> bool:
        if not q.is_empty():
            return False
        self._remove(q)
        return True

    def _remove(self, q: FSQueue) -> None:
        if isinstance(q, FSLeafQueue):
            self.leaves.remove(q)
        else:
            for child in list(q.children_list()):
                self._remove(child)
        del self.queues[q.name]
        assert q.parent is not None
        q.parent.children.remove(q)

    def _remove_incompatible(self, name: str, leaf: bool) -> bool:
        """Make way for `name` as a leaf/parent by removing empty queues in
        the way; False if something in the way could not be removed."""
        name = ensure_root_prefix(name)
        if name == ROOT or name.startswith(DEFAULT + "."):
            return False
        q = self.queues.get(name)
        if q is not None:
            if q.is_leaf == leaf:
                return True
            return self._remove_if_empty(q)
        sep = name.rfind(".")
        while sep != -1:
            prefix = self.queues.get(name[:sep])
            if prefix is not None and prefix.is_leaf:
                return self._remove_if_empty(prefix)
            sep = name.rfind(".", 0, sep)
        return True

    def update_allocation_configuration(self) -> None:
        """Apply a newly loaded allocation file: policies, configured queues,
        properties, steady shares."""
        alloc = self.fs.alloc
        self._set_policies(self.root)
        for name in sorted(alloc.configured.leaves):
            if self._remove_incompatible(name, True):
                self.get_leaf(name, True, recompute=False)
        for name in sorted(alloc.configured.parents):
            if self._remove_incompatible(name, False):
                self.get_parent(name, True, recompute=False)
        self.root.reinit(True)
        for q in self.queues.values():
            ad_hoc = q.parent is not None and q.name not in alloc.configured
            if ad_hoc and q.parent is not None and q.parent.max_child is not None:
                q.max_conf = q.parent.max_child
        self.root.recompute_steady_shares()

    def _set_policies(self, q: FSQueue) -> bool:
        """verifyAndSetPolicyFromConf: set policies top-down unless a child's
        policy is not allowed under its parent's."""
        alloc = self.fs.alloc
        policy = alloc.policy(q.name)
        for child in q.children_list():
            if not policy.child_allowed(alloc.policy(child.name)):
                return False
            if not self._set_policies(child):
                return False
        q.policy = policy
        return True

"""The FairScheduler's kept orderings and quiet-node state: what it keeps
between node updates so that a pass does not work out again what has not
changed. None of it is Hadoop's; each index answers exactly as the plain
computation it stands for, and with the shortcuts off
(`emu.scheduler.shortcuts=false`, `RMSettings.shortcuts`) the scheduler
takes the plain computation instead.

- `LeafOrder`: a leaf queue's runnable apps with unmet demand, in policy
  order (moved as an app changes), and the same less the settled apps
  (they ask for nothing: an offer would only record why) and less the
  silent ones (they decline, without a trace, every node none of their
  asks fits).
- `ChildOrder`: a parent queue's children in policy order, kept while
  nothing the order reads has been replaced.
- `KeptMaxShare`: a queue's max share, kept while the cluster, the
  configured maximum and the min share are the same objects.
- `KeptAvailable`: the root queue's available resource, kept while the
  cluster and the used resource are the same objects.
- `QuietNodes`: whether a node update's pass would change nothing (and so
  may be skipped), and the settled and silent apps by app
  id, so that a decision recorded for an app id offers them nodes again.

`KeptMaxShare`, `KeptAvailable` and `ChildOrder` need no telling: they
compare their inputs (replaced on change, never changed in place) on every
read. `LeafOrder` and `QuietNodes` are told of every change that may alter
what a node update does through one seam, `KeptState` (the scheduler's
`kept`): one method per kind of change (an app's demand or runnability; a
container allocated or released; a node freed; asks updated; outstanding
asks started or stopped; a blacklist; a reservation made or gone; the
cluster; the allocation file; the periodic update of demands and shares;
a recorded decision), each called from one place. The quiet state ends
there and nowhere else; the orders and the quiet state call on each other
only inside this module. A pass reads them (`LeafOrder.kept`/`offer`,
`QuietNodes.skips`/`note`) and changes them only as a pass would
(settling and silencing the apps it offers a node to).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import TYPE_CHECKING, Any

from emu.resources import ZERO, Resource, component_max
from emu.rm.scheduler import activities as act
from emu.rm.scheduler.app_scheduling_info import Ask
from emu.rm.scheduler.fair.arith import fits_in, same
from emu.rm.scheduler.locality import ANY, OFF_SWITCH

if TYPE_CHECKING:
    from emu.rm.scheduler.fair.allocation_file import ConfigurableResource
    from emu.rm.scheduler.fair.app import FSApp
    from emu.rm.scheduler.fair.fs_leaf_queue import FSLeafQueue
    from emu.rm.scheduler.fair.fs_queue import FSQueue
    from emu.rm.scheduler.fair.policies import Policy
    from emu.rm.scheduler.fair.scheduler import FairScheduler
    from emu.rm.scheduler.scheduler_node import SchedulerNode

NONE = ZERO
"""What an assignment returns when it placed nothing (fs_queue.NONE)."""


class KeptMaxShare:
    """A queue's max share: the configured max (percentages of the current
    cluster), at least the min share. Asked on every offer, so the last
    value is kept while its three inputs are the same objects (resources
    are replaced on change, never changed in place)."""

    def __init__(self, on: bool) -> None:
        self.on = on
        self._cluster: Resource | None = None
        self._max_conf: ConfigurableResource | None = None
        self._min_share: Resource | None = None
        self._value = ZERO

    def get(
        self, cluster: Resource, max_conf: ConfigurableResource, min_share: Resource
    ) -> Resource:
        if (
            cluster is self._cluster
            and max_conf is self._max_conf
            and min_share is self._min_share
            and self.on
        ):
            return self._value
        value = component_max(max_conf.get(cluster), min_share)
        self._cluster, self._max_conf, self._min_share = cluster, max_conf, min_share
        self._value = value
        return value


class KeptAvailable:
    """The root queue's available resource, cluster less used: both are
    immutable and replaced on change, so while neither is, the difference
    already worked out is the one the subtraction would give."""

    def __init__(self, on: bool) -> None:
        self.on = on
        self._cluster: Resource | None = None
        self._used: Resource | None = None
        self._value = ZERO

    def of(self, cluster: Resource, used: Resource) -> Resource:
        if cluster is self._cluster and used is self._used and self.on:
            return self._value
        self._cluster, self._used = cluster, used
        self._value = value = cluster - used
        return value


class ChildOrder:
    """A parent queue's children in its policy's order, as each node update
    offers the node to them. The last order is kept while nothing the
    policies' orders read has been replaced: the policy, the cluster, and
    each child (in list order), its usage, demand, min share and weight (a
    queue's start time and name never change). When some children changed,
    only theirs of the kept sort keys (`Policy.app_key`, less the position)
    are made again."""

    def __init__(self, on: bool) -> None:
        self.on = on
        self._order: list[FSQueue] | None = None
        self._inputs: list[object] = []
        self._keys: list[tuple[Any, ...]] = []

    def of(self, children: list[FSQueue], cluster: Resource, policy: Policy) -> list[FSQueue]:
        kept, inputs = self._order, self._inputs
        if not (
            kept is not None
            and self.on
            and len(inputs) == 2 + 5 * len(children)
            and inputs[0] is cluster
            and inputs[1] is policy
        ):
            return self._sort(children, cluster, policy)
        keys = self._keys
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
                    return self._sort(children, cluster, policy)
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

    def _sort(self, children: list[FSQueue], cluster: Resource, policy: Policy) -> list[FSQueue]:
        """The order from scratch: the policy's sort, its inputs and each
        child's key kept for the next call."""
        order = policy.sort(children, cluster, self.on)
        inputs: list[object] = [cluster, policy]
        keys: list[tuple[Any, ...]] = []
        for c in children:
            inputs += (c, c.usage, c.demand, c.min_share, c.weight)
            key = policy.app_key(c, cluster)
            if key is not None:
                keys.append(key)
        # Keys for all or none: with one missing the comparator orders them.
        self._order, self._inputs = order, inputs
        self._keys = keys if len(keys) == len(children) else []
        return order


def asks_grow(requests: dict[int, dict[str, Ask]], asks: list[Ask]) -> bool:
    """Whether `asks`, each replacing the ask of its priority and name in
    `requests`, ask for more: an ask not there before, more containers, a
    different capability, or locality relaxed. Asking for fewer of the same
    cannot make a pass that placed nothing place something."""
    for ask in asks:
        old = requests.get(ask.priority, _NO_ASKS).get(ask.name)
        if (
            old is None
            or ask.num > old.num
            or ask.capability != old.capability
            or (ask.relax and not old.relax)
        ):
            return True
    return False


_NO_ASKS: dict[str, Ask] = {}


class KeptState:
    """The kept state (each leaf queue's `LeafOrder`, the `QuietNodes`) as
    the rest of the FairScheduler sees it: the one way a change reaches it.
    One method per kind of change, each called from one place: the
    scheduler's hook for that change, or, for an app's demand and
    runnability, `FSApp`. What each kind of change ends or moves is
    written here; the orders and the quiet state call on each other only
    inside this module."""

    def __init__(self, fs: FairScheduler, quiet: QuietNodes) -> None:
        self.fs = fs
        self.quiet = quiet

    def app_changed(self, app: FSApp) -> None:
        """`app`'s demand or runnability changed (it joined or left its
        queue's runnable apps, or the update worked out its demand again):
        it joins or leaves its queue's wanting apps and moves in their
        order; the quiet state ends."""
        app.queue.order.app_changed(app)

    def container_allocated(self, app: FSApp) -> None:
        """A container was placed for `app`: its asks and perhaps its AM
        changed (if silent, it is offered nodes again) and so did its
        usage (as `app_changed`)."""
        order = app.queue.order
        if app.silent:
            order.unsilence(app)
        order.app_changed(app)

    def container_released(self, app: FSApp) -> None:
        """A container of `app` was given back: its usage changed (as
        `app_changed`)."""
        app.queue.order.app_changed(app)

    def node_freed(self) -> None:
        """A node has more room (a container left it): the quiet state
        ends."""
        self.quiet.invalidate()

    def asks_updated(self, app: FSApp, grew: bool) -> None:
        """`app`'s asks were updated: if silent, it is offered nodes again;
        if they ask for more (`asks_grow`), the quiet state ends, since a
        node it passed over may fit what is asked for now."""
        if grew:
            self.quiet.invalidate()
        if app.silent:
            app.queue.order.unsilence(app)

    def pending_changed(self, app: FSApp | None) -> None:
        """An app started or stopped having outstanding asks: the quiet
        state ends, and a settled app that asks again is offered nodes
        again."""
        self.quiet.invalidate()
        if app is not None:
            app.queue.order.asks_changed(app)

    def blacklist_changed(self, app: FSApp) -> None:
        """`app`'s blacklist changed: settled apps have none (so the quiet
        check may pass them over), so one that has one is offered nodes
        again, and so is a silent one."""
        order = app.queue.order
        if app.sapp.blacklist:
            order.unsettle(app)
        if app.silent:
            order.unsilence(app)

    def reserved(self, app: FSApp | None) -> None:
        """A node is about to be reserved for `app`: the quiet state ends,
        and `app`, if silent, is offered nodes again."""
        self.quiet.invalidate()
        if app is not None and app.silent:
            app.queue.order.unsilence(app)

    def unreserved(self, holder: FSApp | None) -> None:
        """A node's reservation is about to go: the quiet state ends, and
        its holder, if silent, may reserve again, so it is offered nodes
        again."""
        self.quiet.invalidate()
        if holder is not None and holder.silent:
            holder.queue.order.unsilence(holder)

    def cluster_changed(self) -> None:
        """Nodes came or went or changed size (before steady shares are
        worked out again): the quiet state ends, and the reservations an
        app may hold changed, so every silent app is offered nodes again."""
        self.quiet.invalidate()
        for leaf in self.fs.qm.leaves:
            leaf.order.unsilence_all()

    def config_changed(self) -> None:
        """A new allocation file is applied (queues, limits, policies): the
        quiet state ends."""
        self.quiet.invalidate()

    def shares_updated(self) -> None:
        """The periodic update worked out demands and fair shares again:
        the quiet state ends, and the silent apps' smallest-ask bounds are
        raised back to their own."""
        self.quiet.invalidate()
        for leaf in self.fs.qm.leaves:
            leaf.order.refresh_silent_bounds()

    def decision_recorded(self, app_id: str) -> None:
        """Activities stored a new decision for `app_id` (as
        `QuietNodes.decision_recorded`)."""
        self.quiet.decision_recorded(app_id)


class QuietNodes:
    """Whether a node update's pass, its statuses applied, would change
    nothing. After a pass that placed nothing, recorded nothing new and saw
    no invalidation, `note` works out whether a pass on any other node would
    do the same; that holds (`skips`) until `invalidate` is called or a
    decision is recorded. Also the settled and silent apps by app id (see
    `LeafOrder`), offered nodes again when a decision is recorded for it."""

    def __init__(self) -> None:
        self.epoch = 0
        """Moves on with every `invalidate`."""
        self._epoch_at = -1
        self._writes_at = -1
        self._asks: list[Resource] = []
        self._settled: dict[str, list[FSApp]] = {}
        self._silent: dict[str, list[FSApp]] = {}

    def invalidate(self) -> None:
        """Something that may alter what a node update does changed (told
        by `KeptState`, or by `LeafOrder.app_changed` on its behalf): the
        quiet state ends."""
        self.epoch += 1

    def holds(self, epoch: int, writes: int) -> bool:
        """Whether the quiet state was noted at this epoch and count of
        recorded decisions."""
        return self._epoch_at == epoch and self._writes_at == writes

    def skips(self, fs: FairScheduler, node_id: str) -> bool:
        """Since a pass was last seen to change nothing on any node (`note`),
        nothing that could alter a pass has changed, this node holds no
        reservation and no preemption claim, and none of the asks then
        outstanding fits in what it has free: its pass would offer it to
        the same apps, place and reserve nothing, and record the same
        decisions again."""
        if not self.holds(self.epoch, fs.activities.writes):
            return False
        node = fs.nodes.get(node_id)
        if node is None or node.reserved is not None:
            return False
        state = fs.preempt_nodes.get(node_id)
        if state is not None and state.for_app:
            return False
        available = node.available
        for capability in self._asks:  # noqa: SIM110 (a loop: cheaper compiled than all())
            if fits_in(capability, available):
                return False
        return True

    def note(self, fs: FairScheduler, node: SchedulerNode) -> None:
        """After a pass on `node` that placed nothing, recorded nothing new
        and saw no invalidation, see whether a pass on any other node would
        do the same. It would, on an unreserved node without a preemption
        claim, if no app it could be offered to is blacklisted (every node
        is offered to the same apps) and every app with asks has its AM
        running (no AM-limit check) and asks only for what fits on neither
        node and either may not reserve a node for or asks off-switch only
        while holding all the off-switch reservations it may (so its offer
        ends in "no node fits", whatever the node). Such an offer also
        counts a scheduling opportunity, which nothing reads while delay
        scheduling is off (a locality threshold below 0): with it on, an
        app with asks ends the quiet."""
        if node.reserved is not None:
            return
        state = fs.preempt_nodes.get(node.node_id)
        if state is not None and state.for_app:
            return
        delay_off = fs.delay_off()
        available = node.available
        cluster, threshold = fs.cluster, fs.reservation_threshold
        asks: list[Resource] = []
        for leaf in fs.qm.leaves:
            # the settled apps need no look: no asks, no blacklist (_settle)
            order = leaf.order
            apps = order.wanting if order.active_apps is None else order.active_apps
            for app in apps:
                sapp = app.sapp
                if sapp.blacklist:
                    return
                info = sapp.info
                if not info.priorities:
                    continue
                if not delay_off or (sapp.am_pending and not sapp.am_running):
                    return
                starved: bool | None = None  # FSApp.is_reservable, its first half once
                at_least = app.queue.policy.calculator.at_least
                for by_name in info.requests.values():
                    # host and rack asks mostly share one capability object:
                    # a non-`*` ask repeating the last one checked answers
                    # the same (the `*` ask alone has the off-switch clause)
                    last: Resource | None = None
                    for name, ask in by_name.items():
                        capability = ask.capability
                        if name != ANY:
                            if capability is last:
                                continue
                            last = capability
                        if fits_in(capability, available):
                            return
                        if at_least(cluster, capability, threshold):
                            if starved is None:
                                starved = app.is_starved()
                            if starved and not (
                                name == ANY
                                and all(n == ANY or a.num <= 0 for n, a in by_name.items())
                                and app.reservation_exceeds_threshold(node, OFF_SWITCH)
                            ):
                                return
                        if capability not in asks:
                            asks.append(capability)
        self._asks = asks
        self._epoch_at, self._writes_at = self.epoch, fs.activities.writes

    # --- settled and silent apps by app id ------------------------------------------------------
    def settled(self, app: FSApp) -> None:
        self._settled.setdefault(app.name, []).append(app)

    def forget_settled(self, app: FSApp) -> None:
        _forget(self._settled, app)

    def silenced(self, app: FSApp) -> None:
        self._silent.setdefault(app.name, []).append(app)

    def forget_silent(self, app: FSApp) -> None:
        _forget(self._silent, app)

    def decision_recorded(self, app_id: str) -> None:
        """Activities stored a new decision for `app_id`: its settled and
        silent apps' next offer would record again, so they are offered
        nodes again."""
        held = self._settled.pop(app_id, None)
        if held is not None:
            for app in held:
                app.queue.order.unsettle(app)
        quiet = self._silent.get(app_id)
        if quiet is not None:
            for app in list(quiet):
                app.queue.order.unsilence(app)


def _forget(held_by_app: dict[str, list[FSApp]], app: FSApp) -> None:
    """Take `app` out of a registry of settled or silent apps by app id."""
    held = held_by_app.get(app.name)
    if held is not None and app in held:
        held.remove(app)
        if not held:
            del held_by_app[app.name]


class LeafOrder:
    """A leaf queue's runnable apps with unmet demand (`wanting`, kept as
    apps change, for every setting) and, with the shortcuts on, the same in
    policy order: each app's sort key (its policy key and `runnable_seq`)
    and the app at the same index, valid for the (policy, cluster) in
    `basis`, moved when the app's usage, demand or runnability changes
    (`_reorder`), instead of sorted on every node update. Of those, the
    active ones (not settled: see `_settle`) are offered a node, and of
    those, the doubtful ones (not silent: see `_silence`) are offered a node
    that no silent app's ask fits."""

    def __init__(self, queue: FSLeafQueue, quiet: QuietNodes) -> None:
        self.queue = queue
        self.fs = queue.fs
        self.quiet = quiet
        self.wanting: dict[FSApp, None] = {}
        """Runnable apps whose demand differs from their usage."""
        self._keys: list[tuple[Any, ...]] = []
        self._ordered: list[FSApp] = []
        self._active_keys: list[tuple[Any, ...]] = []
        self._active: list[FSApp] = []
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
        self._basis: tuple[Policy, Resource] | None = None

    # --- what tests and the quiet check read ----------------------------------------------------
    @property
    def basis(self) -> tuple[Policy, Resource] | None:
        """The (policy, cluster) the kept order is for; None if none is kept."""
        return self._basis

    @property
    def active_apps(self) -> list[FSApp] | None:
        """The wanting apps less the settled ones, while an order is kept
        (else None): every wanting app with asks or a blacklist is in it."""
        return self._active if self._basis is not None else None

    @property
    def ordered(self) -> list[FSApp]:
        """The kept order (valid after `kept()` answered True)."""
        return self._ordered

    # --- changes --------------------------------------------------------------------------------
    def app_changed(self, app: FSApp) -> None:
        """`app`'s usage, demand or runnability changed: the quiet state
        ends, and the app joins or leaves `wanting` and moves in the order."""
        self.quiet.invalidate()
        if app.runnable and not same(app.demand, app.sapp.used):
            self.wanting[app] = None
        else:
            self.wanting.pop(app, None)
        self._reorder(app)

    def asks_changed(self, app: FSApp) -> None:
        """`app` started or stopped having outstanding asks: a settled app
        that asks again is offered nodes again."""
        if app.settled:
            self._reorder(app)

    def _reorder(self, app: FSApp) -> None:
        """`app`'s usage, demand, asks or runnability changed: move it to its
        place in the kept order (or out of it, if it no longer wants), and
        back among the apps a node is offered to if it asks again. Does
        nothing while no order is kept; the next node update builds one."""
        basis = self._basis
        if basis is None:
            return
        old = app.order_key
        key: tuple[Any, ...] | None = None
        if app in self.wanting:
            k = basis[0].app_key(app, basis[1])
            if k is None:
                self._drop()
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
            self.quiet.forget_settled(app)
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

    # --- the kept order -------------------------------------------------------------------------
    def kept(self) -> bool:
        """Whether an order is kept for the queue's current policy and the
        current cluster (built here if it can be)."""
        basis = self._basis
        return (
            basis is not None and basis[0] is self.queue.policy and basis[1] is self.fs.cluster
        ) or self._build()

    def _build(self) -> bool:
        """Key and sort the wanting apps for the current policy and cluster;
        False (and no order kept) if the policy has no key for one of them."""
        self._drop()
        policy, cluster = self.queue.policy, self.fs.cluster
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
        self._basis = (policy, cluster)
        return True

    def _drop(self) -> None:
        for app in self._ordered:
            app.order_key = None
            if app.settled:
                self.quiet.forget_settled(app)
                app.settled = False
        self._keys = []
        self._ordered = []
        self._active_keys = []
        self._active = []
        for app in list(self._silent):
            self._drop_silence(app)
        self._doubt_keys = []
        self._doubt = []
        self._basis = None

    # --- the offer of a node --------------------------------------------------------------------
    def offer(self, node: SchedulerNode) -> Resource:
        """FSLeafQueue.assign_container's walk over the kept order (which
        `kept()` has just confirmed), less the settled apps. An app asking
        for nothing (its demand is stale until the next update) is offered
        the node only to record why it took nothing: that is recorded
        directly (FSApp.idle_reason) and the app settled, so later passes
        skip it. The walk goes by key through the live list, so an app
        further on that a record unsettles during this pass is still
        offered the node, as it would be in a pass over all of them (no key
        moves until an offer places or reserves, which ends the pass).

        A node that no silent app's asks fit is offered to the others alone,
        in the same order; the silent apps' offers would have recorded
        nothing new and left only the AM limit their check computes, set
        here as the walk would have left it."""
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
                    self._settle(app)
                else:
                    placed = app.assign_container(node)
                    if placed is not NONE and placed != NONE:
                        stop = key
                        break
                    if app.declined == act.NO_FIT:
                        self._silence(app)
            i = bisect_right(keys, key)
        if silent_walk is not None:
            limit, first_key = silent_walk
            if limit is not None and (stop is None or first_key < stop):
                self.queue.max_am_metric = limit
        return NONE if stop is None else placed

    # --- settled apps ---------------------------------------------------------------------------
    def _settle(self, app: FSApp) -> None:
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
        self.quiet.settled(app)

    def unsettle(self, app: FSApp) -> None:
        """A decision was recorded for `app`'s app id, or it got a
        blacklist: offer it nodes again."""
        if not app.settled:
            return
        self.quiet.forget_settled(app)
        app.settled = False
        key = app.order_key
        if key is not None:
            i = bisect_left(self._active_keys, key)
            self._active_keys.insert(i, key)
            self._active.insert(i, app)
            i = bisect_left(self._doubt_keys, key)
            self._doubt_keys.insert(i, key)
            self._doubt.insert(i, app)

    # --- silent apps ----------------------------------------------------------------------------
    def _silence(self, app: FSApp) -> None:
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
        order), such nodes are not offered to it (`offer`)."""
        if app.silent or app.declined != act.NO_FIT or app.order_key is None or app.settled:
            return
        sapp = app.sapp
        fs = self.fs
        if sapp.blacklist or not sapp.info.priorities or not fs.delay_off():
            return
        cluster, threshold = fs.cluster, fs.reservation_threshold
        at_least = self.queue.policy.calculator.at_least
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
        self.quiet.silenced(app)

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
        self.quiet.forget_silent(app)

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
        queue = self.queue
        if abs(queue.max_am_share - -1.0) < 0.0001:
            return None, summary[0]
        limit = queue.max_am_resource()
        usage = queue.am_usage
        for capability in summary[1]:
            if not fits_in(usage + capability, limit):
                return None
        return limit, summary[0]


def _first(item: tuple[Any, ...]) -> Any:
    return item[0]

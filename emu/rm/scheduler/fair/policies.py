"""The three scheduling policies a queue can name (`fair`, `drf`, `fifo`),
as Hadoop's FairSharePolicy, DominantResourceFairnessPolicy and FifoPolicy.

A policy orders a queue's children (child queues or apps) for assignment
through its comparator, splits the queue's share among them, and names the
resource calculator used for that queue's starvation and reservation checks.

- fair: memory only. Schedulables with demand go first; then those below
  min(minShare, demand) ("needy"), most needy by usage/minShare first; then
  usage/weight; ties by start time, then name.
- drf: weighted dominant shares of the cluster (usage share of each resource
  divided by the weight); needy (dominant usage below the min share of that
  resource) first, compared by usage/minShare; ties by the non-dominant
  share, then start time, then name. With only memory and vcores this is
  DominantResourceFairnessComparator2 (doubles); with extra resource types,
  DominantResourceFairnessComparatorN (32-bit floats, sorted ratios).
- fifo: start time, then name (all apps have priority 1 in the
  FairScheduler); the earliest app gets the whole queue share. Leaf only.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from typing import Any

from mypy_extensions import mypyc_attr

from emu import plugins
from emu.resources import MEMORY, Resource
from emu.rm.scheduler.fair import shares
from emu.rm.scheduler.fair.arith import (
    DEFAULT_CALCULATOR,
    DOMINANT_CALCULATOR,
    Calculator,
    f32,
    jdiv,
    jsignum,
    types_of,
    value,
)


def _tie(s1: Any, s2: Any) -> int:
    res = jsignum(s1.start_ms - s2.start_ms)
    if res == 0:
        res = (s1.name > s2.name) - (s1.name < s2.name)
    return res


@mypyc_attr(allow_interpreted_subclasses=True)  # plugins subclass it: docs/plugins.md
class Policy:
    """What every policy offers; see the module docstring."""

    name = ""
    calculator: Calculator = DEFAULT_CALCULATOR
    leaf_only = False

    def compare(self, s1: Any, s2: Any, cluster: Resource) -> int:
        raise NotImplementedError

    def sort(self, items: Iterable[Any], cluster: Resource, keyed: bool = True) -> list[Any]:
        """Items in assignment order (the TreeSet order Hadoop iterates).
        `keyed`: a policy may reach the same order through a sort key (the
        shortcuts setting); otherwise the comparator decides."""
        return sorted(items, key=functools.cmp_to_key(lambda a, b: self.compare(a, b, cluster)))

    def app_key(self, s: Any, cluster: Resource) -> tuple[Any, ...] | None:
        """A sort key giving the comparator's order for an app, or None when
        no plain key gives it (a leaf queue then sorts with the comparator).
        The key reads only the app's usage, demand, weight and min share,
        the cluster and the app's start time and name, so a leaf queue can
        keep its apps ordered by it, moving one when one of those changes
        (orderings.LeafOrder._reorder), instead of sorting on every node update. It
        ends with the start time and name (unique per app in a queue)."""
        return None

    def compute_shares(
        self, schedulables: Sequence[Any], total: Resource, grouped: bool = True
    ) -> None:
        """Instantaneous fair shares; `grouped`: neighbours with the same
        inputs are worked out once (shares.compute_shares_of)."""
        raise NotImplementedError

    def compute_steady_shares(
        self, queues: Sequence[Any], total: Resource, grouped: bool = True
    ) -> None:
        raise NotImplementedError

    def headroom(self, fair_share: Resource, usage: Resource, available: Resource) -> Resource:
        mem = max(fair_share.memory - usage.memory, 0)
        return Resource(min(available.memory, mem), available.vcores)

    def child_allowed(self, child: Policy) -> bool:
        return True


@mypyc_attr(allow_interpreted_subclasses=True)  # plugins subclass it: docs/plugins.md
class FairSharePolicy(Policy):
    name = "fair"

    def compare(self, s1: Any, s2: Any, cluster: Resource) -> int:
        d1, d2 = s1.demand.memory, s2.demand.memory
        if d1 == 0 and d2 > 0:
            return 1
        if d2 == 0 and d1 > 0:
            return -1
        u1, u2 = s1.usage, s2.usage
        res = _compare_min_share(s1, s2, u1, u2)
        if res == 0:
            res = _compare_fair_share_usage(s1.weight, s2.weight, u1.memory, u2.memory)
        if res == 0:
            res = _tie(s1, s2)
        return res

    def sort(self, items: Iterable[Any], cluster: Resource, keyed: bool = True) -> list[Any]:
        """The comparator's order through a sort key when no item is needy
        and every weight is positive (always so for apps, whose min share is
        zero): the same order, without a Python call per comparison. Each
        key ends with the item's position, so ties keep the input order (as
        a stable sort would) and the items themselves are never compared."""
        if not keyed:
            return super().sort(items, cluster, False)
        by_key = []
        for i, s in enumerate(items):
            w = s.weight
            m = s.min_share.memory
            if w <= 0.0 or (m > 0 and s.usage.memory < min(m, s.demand.memory)):
                return super().sort(items, cluster, False)
            by_key.append((s.demand.memory == 0, s.usage.memory / w, s.start_ms, s.name, i, s))
        by_key.sort()
        return [k[-1] for k in by_key]

    def app_key(self, s: Any, cluster: Resource) -> tuple[Any, ...] | None:
        """The sort shortcut's key above, without the position."""
        w = s.weight
        m = s.min_share.memory
        if w <= 0.0 or (m > 0 and s.usage.memory < min(m, s.demand.memory)):
            return None
        return (s.demand.memory == 0, s.usage.memory / w, s.start_ms, s.name)

    def compute_shares(
        self, schedulables: Sequence[Any], total: Resource, grouped: bool = True
    ) -> None:
        shares.compute_shares(schedulables, total, MEMORY, grouped)

    def compute_steady_shares(
        self, queues: Sequence[Any], total: Resource, grouped: bool = True
    ) -> None:
        shares.compute_steady_shares(queues, total, MEMORY, grouped)

    def child_allowed(self, child: Policy) -> bool:
        return not isinstance(child, DominantResourceFairnessPolicy)


def _compare_min_share(s1: Any, s2: Any, u1: Resource, u2: Resource) -> int:
    m1 = DEFAULT_CALCULATOR.min(Resource(), s1.min_share, s1.demand)
    m2 = DEFAULT_CALCULATOR.min(Resource(), s2.min_share, s2.demand)
    needy1 = u1.memory < m1.memory
    needy2 = u2.memory < m2.memory
    if needy1 and not needy2:
        return -1
    if needy2 and not needy1:
        return 1
    if needy1 and needy2:
        r1 = u1.memory / max(m1.memory, 1)
        r2 = u2.memory / max(m2.memory, 1)
        return jsignum(r1 - r2)
    return 0


def _compare_fair_share_usage(w1: float, w2: float, m1: int, m2: int) -> int:
    if w1 > 0.0 and w2 > 0.0:
        r1, r2 = m1 / w1, m2 / w2
    elif w1 == w2:
        r1, r2 = float(m1), float(m2)
    else:
        r1, r2 = -w1, -w2
    return jsignum(r1 - r2)


@mypyc_attr(allow_interpreted_subclasses=True)  # plugins subclass it: docs/plugins.md
class DominantResourceFairnessPolicy(Policy):
    name = "DRF"
    calculator = DOMINANT_CALCULATOR

    def compare(self, s1: Any, s2: Any, cluster: Resource) -> int:
        res = (_drf_compare_n if cluster.extra else _drf_compare_2)(s1, s2, cluster)
        return res if res != 0 else _tie(s1, s2)

    def sort(self, items: Iterable[Any], cluster: Resource, keyed: bool = True) -> list[Any]:
        """DominantResourceFairnessComparator2's order through a sort key
        (weighted dominant share, then the other share, then start time and
        name) when it is a plain lexicographic order: two resource types, a
        cluster with both, positive weights and no needy item. Apps always
        qualify (min share zero); otherwise the comparator decides. Keys end
        with the item's position, as the fair policy's."""
        cm, cv = cluster.memory, cluster.vcores
        if cluster.extra or cm <= 0 or cv <= 0 or not keyed:
            return super().sort(items, cluster, False)
        by_key = []
        for i, s in enumerate(items):
            u, w, ms = s.usage, s.weight, s.min_share
            if w <= 0.0:
                return super().sort(items, cluster, False)
            mem, cpu = u.memory / cm, u.vcores / cv
            if cpu > mem:
                if u.vcores < ms.vcores:
                    return super().sort(items, cluster, False)
                by_key.append((cpu / w, mem / w, s.start_ms, s.name, i, s))
            else:
                if u.memory < ms.memory:
                    return super().sort(items, cluster, False)
                by_key.append((mem / w, cpu / w, s.start_ms, s.name, i, s))
        by_key.sort()
        return [k[-1] for k in by_key]

    def app_key(self, s: Any, cluster: Resource) -> tuple[Any, ...] | None:
        """The sort shortcut's key above, without the position, computed the
        same way (the same float operations, so the same order)."""
        cm, cv = cluster.memory, cluster.vcores
        if cluster.extra or cm <= 0 or cv <= 0:
            return None
        u, w, ms = s.usage, s.weight, s.min_share
        if w <= 0.0:
            return None
        mem, cpu = u.memory / cm, u.vcores / cv
        if cpu > mem:
            if u.vcores < ms.vcores:
                return None
            return (cpu / w, mem / w, s.start_ms, s.name)
        if u.memory < ms.memory:
            return None
        return (mem / w, cpu / w, s.start_ms, s.name)

    def compute_shares(
        self, schedulables: Sequence[Any], total: Resource, grouped: bool = True
    ) -> None:
        shares.compute_shares_of(schedulables, total, types_of(total), grouped)

    def compute_steady_shares(
        self, queues: Sequence[Any], total: Resource, grouped: bool = True
    ) -> None:
        shares.compute_steady_shares_of(queues, total, types_of(total), grouped)

    def headroom(self, fair_share: Resource, usage: Resource, available: Resource) -> Resource:
        mem = max(fair_share.memory - usage.memory, 0)
        cpu = max(fair_share.vcores - usage.vcores, 0)
        return Resource(min(available.memory, mem), min(available.vcores, cpu))


def _drf_compare_2(s1: Any, s2: Any, cluster: Resource) -> int:
    """DominantResourceFairnessComparator2: memory and vcores, in doubles."""
    u1, u2 = s1.usage, s2.usage
    sh1 = [jdiv(u1.memory, cluster.memory), jdiv(u1.vcores, cluster.vcores)]
    sh2 = [jdiv(u2.memory, cluster.memory), jdiv(u2.vcores, cluster.vcores)]
    dom1 = 1 if sh1[1] > sh1[0] else 0
    dom2 = 1 if sh2[1] > sh2[0] else 0
    w1, w2 = s1.weight, s2.weight
    sh1 = [jdiv(x, w1) for x in sh1]
    sh2 = [jdiv(x, w2) for x in sh2]
    min1, min2 = s1.min_share, s2.min_share
    needy1 = (u1.memory, u1.vcores)[dom1] < (min1.memory, min1.vcores)[dom1]
    needy2 = (u2.memory, u2.vcores)[dom2] < (min2.memory, min2.vcores)[dom2]
    if not needy1 and not needy2:
        res = jsignum(sh1[dom1] - sh2[dom2])
        if res == 0:
            res = jsignum(sh1[1 - dom1] - sh2[1 - dom2])
        return res
    if needy1 and not needy2:
        return -1
    if needy2 and not needy1:
        return 1
    m1 = [jdiv(u1.memory, min1.memory), jdiv(u1.vcores, min1.vcores)]
    m2 = [jdiv(u2.memory, min2.memory), jdiv(u2.vcores, min2.vcores)]
    res = jsignum(m1[dom1] - m2[dom2])
    if res == 0:
        res = jsignum(m1[1 - dom1] - m2[1 - dom2])
    return res


def _fdiv(a: float, b: float) -> float:
    return f32(jdiv(f32(a), f32(b)))


def _drf_compare_n(s1: Any, s2: Any, cluster: Resource) -> int:
    """DominantResourceFairnessComparatorN: any number of resource types, in floats."""
    types = types_of(cluster)
    u1, u2 = s1.usage, s2.usage
    r1 = [[_fdiv(value(u1, t), value(cluster, t)), 0.0, 0.0] for t in types]
    r2 = [[_fdiv(value(u2, t), value(cluster, t)), 0.0, 0.0] for t in types]
    dom1 = dom2 = 0
    for i in range(len(types)):
        if r1[i][0] > r1[dom1][0]:
            dom1 = i
        if r2[i][0] > r2[dom2][0]:
            dom2 = i
        r1[i][1] = _fdiv(r1[i][0], s1.weight)
        r2[i][1] = _fdiv(r2[i][0], s2.weight)
    needy1 = value(u1, types[dom1]) < value(s1.min_share, types[dom1])
    needy2 = value(u2, types[dom2]) < value(s2.min_share, types[dom2])
    if needy1 and not needy2:
        return -1
    if needy2 and not needy1:
        return 1
    index = 1
    if needy1 and needy2:
        index = 2
        for i, t in enumerate(types):
            r1[i][2] = _fdiv(value(u1, t), value(s1.min_share, t))
            r2[i][2] = _fdiv(value(u2, t), value(s2.min_share, t))
    r1.sort(key=lambda r: -r[0])
    r2.sort(key=lambda r: -r[0])
    for a, b in zip(r1, r2, strict=True):
        res = jsignum(f32(a[index] - b[index]))
        if res != 0:
            return res
    return 0


@mypyc_attr(allow_interpreted_subclasses=True)  # plugins subclass it: docs/plugins.md
class FifoPolicy(Policy):
    name = "FIFO"
    leaf_only = True

    def compare(self, s1: Any, s2: Any, cluster: Resource) -> int:
        return _tie(s1, s2)

    def app_key(self, s: Any, cluster: Resource) -> tuple[Any, ...] | None:
        """Start time, then name: the comparator's order."""
        return (s.start_ms, s.name)

    def compute_shares(
        self, schedulables: Sequence[Any], total: Resource, grouped: bool = True
    ) -> None:
        earliest = None
        for s in schedulables:
            if earliest is None or s.start_ms < earliest.start_ms:
                earliest = s
        if earliest is not None:
            earliest.fair_share = total

    def compute_steady_shares(
        self, queues: Sequence[Any], total: Resource, grouped: bool = True
    ) -> None:
        """Leaf queues have no child queues to share among."""


FAIR = FairSharePolicy()
DRF = DominantResourceFairnessPolicy()
FIFO = FifoPolicy()

_PACKAGE = "org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.policies."
_BY_NAME: dict[str, Policy] = {}
"""The names `parse` knows: short names in lower case, class names as spelled."""


def register(policy: Policy, *names: str, replace: bool = False) -> None:
    """Let allocation files name `policy` by each of `names`: a short name
    (a word, matched in any case as Hadoop matches fair, drf and fifo) or a
    class name (dotted, matched exactly as Java's Class.forName). A name
    already registered for another policy is refused unless `replace`."""
    for name in names:
        key = name if "." in name else name.lower()
        known = _BY_NAME.get(key)
        if known is not None and known is not policy and not replace:
            raise ValueError(f"scheduling policy {name!r} is already registered")
    for name in names:
        _BY_NAME[name if "." in name else name.lower()] = policy


register(FAIR, "fair", _PACKAGE + "FairSharePolicy")
register(DRF, "drf", _PACKAGE + "DominantResourceFairnessPolicy")
register(FIFO, "fifo", _PACKAGE + "FifoPolicy")


def parse(text: str) -> Policy:
    """`SchedulingPolicy.parse`: fair, drf, fifo (any case) or a policy class name."""
    policy = _BY_NAME.get(text.lower()) or _BY_NAME.get(text)
    if policy is None and plugins.is_plugin_name(text, plugins.FAIR_POLICIES):
        policy = _plugin(text)
    if policy is None:
        raise ValueError(f"{text} SchedulingPolicy class not found!")
    return policy


def _plugin(name: str) -> Policy:
    """A policy plugin (`package.module:Class` or an entry point of
    `emu.fair_policies`; docs/plugins.md), made once and registered under
    `name` so every queue naming it shares it."""
    try:
        cls = plugins.load(name, plugins.FAIR_POLICIES)
    except plugins.PluginError as e:
        raise ValueError(f"{name} SchedulingPolicy plugin: {e}") from None
    if not issubclass(cls, Policy):
        raise ValueError(
            f"{name} is not a scheduling policy "
            "(a subclass of emu.rm.scheduler.fair.policies.Policy)"
        )
    policy: Policy = cls()
    register(policy, name, replace=True)
    return policy

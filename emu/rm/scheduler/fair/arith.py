"""Resource arithmetic with the exact numeric semantics of Hadoop's
`Resources`, `DefaultResourceCalculator` and `DominantResourceCalculator`
as the FairScheduler uses them.

Java's numbers leak into the FairScheduler's results: weights, thresholds
and `maxAMShare` are 32-bit floats, shares are truncated with `(long)` casts,
`(long)` saturates, a double divided by zero is infinite (or NaN, which
`(int) Math.signum` turns into 0). Reproducing those is what makes fair
shares and orderings match Hadoop's to the unit, so they live here, named
after the Java helpers they mirror.
"""

from __future__ import annotations

import math
import struct

from emu.resources import MEMORY, VCORES, Resource, dominance_compare

LONG_MAX = (1 << 63) - 1
INT_MAX = (1 << 31) - 1


def unbounded(types: tuple[str, ...] = ()) -> Resource:
    """`Resources.unbounded()`: Long.MAX_VALUE in memory, vcores and every
    declared extra type (`yarn.resource-types`). A type left out would read
    as 0 and bound the queue or app to none of it."""
    return Resource(LONG_MAX, LONG_MAX, dict.fromkeys(types, LONG_MAX))


def f32(x: float) -> float:
    """The value of `x` as a Java float (IEEE single), widened back to double."""
    value: float = struct.unpack("<f", struct.pack("<f", x))[0]
    return value


def jlong(x: float) -> int:
    """Java's `(long)` cast of a double: truncation, saturating, NaN -> 0."""
    if math.isnan(x):
        return 0
    if x >= 9.223372036854775807e18:
        return LONG_MAX
    if x <= -9.223372036854775808e18:
        return -LONG_MAX - 1
    return int(x)


def jdiv(a: float, b: float) -> float:
    """Java double division: x/0 is +-Infinity, 0/0 is NaN."""
    if b == 0:
        if a == 0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def jsignum(x: float) -> int:
    """`(int) Math.signum(x)`: -1, 0 or 1, and 0 for NaN."""
    if math.isnan(x) or x == 0:
        return 0
    return 1 if x > 0 else -1


def value(r: Resource, rtype: str) -> int:
    """`Resource.getResourceValue(type)`."""
    if rtype == MEMORY:
        return r.memory
    if rtype == VCORES:
        return r.vcores
    for k, v in r.extra:
        if k == rtype:
            return v
    return 0


def with_value(r: Resource, rtype: str, v: int) -> Resource:
    """`r` with one component replaced (`setResourceValue` on a copy)."""
    if rtype == MEMORY:
        return Resource(v, r.vcores, r.extra)
    if rtype == VCORES:
        return Resource(r.memory, v, r.extra)
    extra = dict(r.extra)
    extra[rtype] = v
    return Resource(r.memory, r.vcores, extra)


def types_of(*rs: Resource) -> list[str]:
    """Resource type names present in any of `rs`: memory, vcores, then extras."""
    extra = sorted({k for r in rs for k, _ in r.extra})
    return [MEMORY, VCORES, *extra]


def is_none(r: Resource) -> bool:
    """`Resources.isNone`: every component is zero."""
    return r.memory == 0 and r.vcores == 0 and all(v == 0 for _, v in r.extra)


def same(a: Resource, b: Resource) -> bool:
    """`is_none(a - b)` without building the difference: equal in every
    component, a type missing on one side counting as zero."""
    if a.memory != b.memory or a.vcores != b.vcores:
        return False
    if a.extra == b.extra:
        return True
    da, db = dict(a.extra), dict(b.extra)
    return all(da.get(k, 0) == db.get(k, 0) for k in da.keys() | db.keys())


def fits_in(a: Resource, b: Resource) -> bool:
    """`Resources.fitsIn`: every component of `a` is at most `b`'s."""
    if a.memory > b.memory or a.vcores > b.vcores:
        return False
    if a.extra or b.extra:
        bd = dict(b.extra)
        return all(v <= bd.get(k, 0) for k, v in a.extra)
    return True


def multiply(r: Resource, by: float) -> Resource:
    """`Resources.multiply`: each component `(long) (value * by)`."""
    return Resource(
        jlong(r.memory * by), jlong(r.vcores * by), tuple((k, jlong(v * by)) for k, v in r.extra)
    )


def multiply_round_up(r: Resource, by: float) -> Resource:
    """`Resources.multiplyAndRoundUp`: each component `(long) ceil(value * by)`."""

    def up(v: int) -> int:
        x = v * by
        return jlong(math.ceil(x)) if math.isfinite(x) else jlong(x)

    return Resource(up(r.memory), up(r.vcores), tuple((k, up(v)) for k, v in r.extra))


def subtract_non_negative(a: Resource, b: Resource) -> Resource:
    """`Resources.subtractFromNonNegative`: `a - b`, each component at least 0."""
    d = a - b
    return Resource(max(d.memory, 0), max(d.vcores, 0), tuple((k, max(v, 0)) for k, v in d.extra))


def default_compare(a: Resource, b: Resource) -> int:
    """`DefaultResourceCalculator.compare`: memory only."""
    return (a.memory > b.memory) - (a.memory < b.memory)


def dominant_compare(cluster: Resource, a: Resource, b: Resource, single_type: bool = False) -> int:
    """`DominantResourceCalculator.compare(cluster, lhs, rhs, singleType)`.

    With `single_type` only the dominant shares are compared; otherwise
    ties on the dominant share fall to the next-largest share. A cluster
    with a zero component compares component by component (a strict
    domination order, 0 when the two resources cross)."""
    if not (a.extra or b.extra or cluster.extra):
        # memory and vcores only (the usual case, on every offer's
        # reservation check): the same comparisons without lists
        am, av, bm, bv = a.memory, a.vcores, b.memory, b.vcores
        if am == bm and av == bv:
            return 0
        cm, cv = cluster.memory, cluster.vcores
        if cm == 0 or cv == 0:
            return dominance_compare(a, b)
        l0, l1, r0, r1 = am / cm, av / cv, bm / cm, bv / cv
        if l1 > l0:
            l0, l1 = l1, l0
        if r1 > r0:
            r0, r1 = r1, r0
        if single_type:
            return jsignum(l0 - r0)
        d = l0 - r0
        if d != 0:
            return jsignum(d)
        return jsignum(l1 - r1)
    if a == b:
        return 0
    types = types_of(cluster, a, b)
    if any(value(cluster, t) == 0 for t in types):
        return dominance_compare(a, b)
    ls = [value(a, t) / value(cluster, t) for t in types]
    rs = [value(b, t) / value(cluster, t) for t in types]
    if single_type:
        return jsignum(max(ls) - max(rs))
    ls.sort(reverse=True)
    rs.sort(reverse=True)
    for x, y in zip(ls, rs, strict=True):
        d = x - y
        if d != 0:
            return jsignum(d)
    return 0


class Calculator:
    """The two calculators a policy can name, behind one interface."""

    __slots__ = ("dominant",)

    def __init__(self, dominant: bool) -> None:
        self.dominant = dominant

    def compare(
        self, cluster: Resource, a: Resource, b: Resource, single_type: bool = False
    ) -> int:
        if self.dominant:
            return dominant_compare(cluster, a, b, single_type)
        return default_compare(a, b)

    def min(self, cluster: Resource, a: Resource, b: Resource) -> Resource:
        """`Resources.min(calc, cluster, a, b)`: whichever compares lower (a on ties)."""
        return a if self.compare(cluster, a, b) <= 0 else b

    def greater_than(self, cluster: Resource, a: Resource, b: Resource) -> bool:
        return self.compare(cluster, a, b) > 0

    def at_least(self, cluster: Resource, a: Resource, b: Resource) -> bool:
        return self.compare(cluster, a, b) >= 0


DEFAULT_CALCULATOR = Calculator(dominant=False)
DOMINANT_CALCULATOR = Calculator(dominant=True)


def memory_ratio(a: Resource, b: Resource) -> float:
    """`Resources.ratio(DefaultResourceCalculator, a, b)`: a float quotient of memory."""
    return f32(jdiv(float(f32(float(a.memory))), float(b.memory)))


def floor_int(x: float) -> int:
    """`(int) Math.floor(x)`: saturating at the int range, NaN -> 0."""
    if math.isnan(x):
        return 0
    if x >= INT_MAX:
        return INT_MAX
    if x <= -INT_MAX - 1:
        return -INT_MAX - 1
    return math.floor(x)

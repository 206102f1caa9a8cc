"""Hadoop's `Resources` helpers with calculator semantics, as the
CapacityScheduler and its preemption policy use them.

Comparisons (`lt`, `rmin`, `rmax`, ...) go through the calculator: memory
only for the default calculator, dominant share for DRF; `rmin`/`rmax` pick a
whole vector, as Hadoop's `Resources.min/max` do. Arithmetic is componentwise.
Rounding follows the two calculators: `multiply_up` is Hadoop's
`multiplyAndNormalizeUp` (default: `(long)(x * by + 0.5)`, DRF: ceiling),
rounded up to the step; `multiply_down` truncates and rounds down.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Iterable, Mapping

from emu.resources import (
    MEMORY,
    VCORES,
    ZERO,
    DominantResourceCalculator,
    Resource,
    ResourceCalculator,
    _make,
    component_max,
    component_min,
)

_FLOAT = struct.Struct("f")


def _map(r: Resource, fn: Callable[[int], int]) -> Resource:
    return Resource(fn(r.memory), fn(r.vcores), tuple((k, fn(v)) for k, v in r.extra))


def _step(r: Resource, step: Resource, up: bool) -> Resource:
    if not r.extra and not step.extra:
        m, v, sm, sv = r.memory, r.vcores, step.memory, step.vcores
        if up:
            return plain(m if sm <= 0 else -(-m // sm) * sm, v if sv <= 0 else -(-v // sv) * sv)
        return plain(m if sm <= 0 else m // sm * sm, v if sv <= 0 else v // sv * sv)
    steps = {"memory": step.memory, "vcores": step.vcores, **dict(step.extra)}

    def one(value: int, s: int) -> int:
        if s <= 0:
            return value
        return (-(-value // s) if up else value // s) * s

    return Resource(
        one(r.memory, steps["memory"]),
        one(r.vcores, steps["vcores"]),
        tuple((k, one(v, steps.get(k, 0))) for k, v in r.extra),
    )


def compare(calc: ResourceCalculator, cluster: Resource, a: Resource, b: Resource) -> int:
    return calc.compare(cluster, a, b)


def lt(calc: ResourceCalculator, cluster: Resource, a: Resource, b: Resource) -> bool:
    return calc.compare(cluster, a, b) < 0


def le(calc: ResourceCalculator, cluster: Resource, a: Resource, b: Resource) -> bool:
    return calc.compare(cluster, a, b) <= 0


def gt(calc: ResourceCalculator, cluster: Resource, a: Resource, b: Resource) -> bool:
    return calc.compare(cluster, a, b) > 0


def ge(calc: ResourceCalculator, cluster: Resource, a: Resource, b: Resource) -> bool:
    return calc.compare(cluster, a, b) >= 0


def positive(calc: ResourceCalculator, cluster: Resource, r: Resource) -> bool:
    return calc.compare(cluster, r, ZERO) > 0


def fits(calc: ResourceCalculator, small: Resource, big: Resource) -> bool:
    """Hadoop's `Resources.fitsIn(rc, small, big)`: memory only for the
    default calculator, every type for DRF."""
    return calc.fits(small, big)


def rmin(calc: ResourceCalculator, cluster: Resource, a: Resource, b: Resource) -> Resource:
    return a if calc.compare(cluster, a, b) <= 0 else b


def rmax(calc: ResourceCalculator, cluster: Resource, a: Resource, b: Resource) -> Resource:
    return a if calc.compare(cluster, a, b) >= 0 else b


def cmin(a: Resource, b: Resource) -> Resource:
    """Componentwise minimum."""
    return component_min(a, b)


def cmax(a: Resource, b: Resource) -> Resource:
    """Componentwise maximum."""
    return component_max(a, b)


def any_major_above_zero(calc: ResourceCalculator, r: Resource) -> bool:
    """ResourceCalculator.isAnyMajorResourceAboveZero: some countable type
    above 0 (the default calculator: memory)."""
    if isinstance(calc, DominantResourceCalculator):
        return r.memory > 0 or r.vcores > 0 or any(v > 0 for _, v in r.extra)
    return r.memory > 0


def non_negative(r: Resource) -> Resource:
    return cmax(r, ZERO)


def multiply(r: Resource, by: float) -> Resource:
    """Hadoop's `Resources.multiply`: each component times `by`, truncated."""
    if not r.extra:
        return _make(int(r.memory * by), int(r.vcores * by), ())
    return _map(r, lambda v: int(v * by))


def multiply_up(calc: ResourceCalculator, r: Resource, by: float, step: Resource) -> Resource:
    """Hadoop's `multiplyAndNormalizeUp`. The dominant calculator rounds
    the product to a Java float before taking its ceiling
    (`Math.ceil((float) (rValue * by))`): 24,576 MB times a usage ratio of
    0.16666667 is 4,096 MB, not 4,097."""
    if isinstance(calc, DominantResourceCalculator):
        scaled = _map(r, lambda v: math.ceil(f32(v * by)))
    elif not r.extra and not step.extra:
        return plain(
            step_up(int(r.memory * by + 0.5), step.memory),
            step_up(int(r.vcores * by + 0.5), step.vcores),
        )
    else:
        scaled = _map(r, lambda v: int(v * by + 0.5))
    return _step(scaled, step, up=True)


def multiply_up_each(
    calc: ResourceCalculator, r: Resource, by: Mapping[str, float], step: Resource
) -> Resource:
    """`multiplyAndNormalizeUp` with one factor per resource type (by YARN
    resource name; a type without a factor gets 0). The default calculator
    scales memory alone and makes the rest one vcore, none without memory
    (Resources.createResource(memory))."""
    if not isinstance(calc, DominantResourceCalculator):
        memory = step_up(int(r.memory * by.get(MEMORY, 0.0) + 0.5), step.memory)
        return plain(memory, 1 if memory > 0 else 0)

    def scale(v: int, f: float) -> int:
        return math.ceil(v * f)

    scaled = Resource(
        scale(r.memory, by.get(MEMORY, 0.0)),
        scale(r.vcores, by.get(VCORES, 0.0)),
        tuple((k, scale(v, by.get(k, 0.0))) for k, v in r.extra),
    )
    return _step(scaled, step, up=True)


def multiply_down(r: Resource, by: float, step: Resource) -> Resource:
    """Hadoop's `multiplyAndNormalizeDown`."""
    return _step(multiply(r, by), step, up=False)


def round_up(r: Resource, step: Resource) -> Resource:
    return _step(r, step, up=True)


def round_down(r: Resource, step: Resource) -> Resource:
    return _step(r, step, up=False)


def divide(calc: ResourceCalculator, cluster: Resource, a: Resource, b: Resource) -> float:
    """Hadoop's `Resources.divide`: a / b as the calculator sees it (memory
    ratio, or ratio of dominant shares)."""
    if isinstance(calc, DominantResourceCalculator):
        den = calc.share(cluster, b)
        if den == 0:
            return math.inf if calc.share(cluster, a) else 0.0
        return calc.share(cluster, a) / den
    return calc.ratio(a, b)


def f32(x: float) -> float:
    """`x` as a Java float: Hadoop keeps queue capacities in floats."""
    v: float = _FLOAT.unpack(_FLOAT.pack(x))[0]
    return v


def current_capacity(
    calc: ResourceCalculator,
    cluster: Resource,
    minimum: Resource,
    guaranteed: Resource,
    used_by_user: list[Resource],
    usage_ratio: float | None,
) -> tuple[Resource, Resource]:
    """computeUserLimit's (queue capacity, current capacity): the guarantee,
    at least one minimum allocation; and what the queue may use now, that
    capacity while what it consumes is below it, else the consumed
    resource plus a minimum allocation. Consumed comes from the queue's
    float usage ratio as UsersManager keeps it (`usage_ratio`), else from
    the sum of the users' ratios."""
    queue_capacity = rmax(calc, cluster, guaranteed, minimum)
    if usage_ratio is not None:
        ratio = usage_ratio
    else:
        ratio = sum(calc.ratio(u, cluster) for u in used_by_user) if cluster.memory else 0
    consumed = multiply_up(calc, cluster, ratio, minimum)
    below = lt(calc, cluster, consumed, queue_capacity)
    return queue_capacity, queue_capacity if below else consumed + minimum


def weight_sum(weights: Mapping[str, float], users: Iterable[str]) -> float:
    """UsersManager's sum of users' weights (sumActiveUsersTimesWeights,
    sumAllUsersTimesWeights): added up as Java floats, 1 for a user
    without a weight."""
    total = 0.0
    for name in users:
        total = f32(total + f32(weights.get(name, 1.0)))
    return total


def divide_and_ceil_f32(r: Resource, by: float) -> Resource:
    """`Resources.divideAndCeil` by a float, in Java floats: each amount,
    made a float, divided by `by` and rounded up (0 when dividing by 0)."""
    if by == 0:
        return ZERO
    d = f32(by)
    return _map(r, lambda v: math.ceil(f32(f32(v) / d)))


def divide_and_ceil(r: Resource, by: float) -> Resource:
    """Hadoop's `Resources.divideAndCeil` (0 when dividing by 0)."""
    if by == 0:
        return ZERO
    if not r.extra:
        return _make(math.ceil(r.memory / by), math.ceil(r.vcores / by), ())
    return _map(r, lambda v: math.ceil(v / by))


# --- components -------------------------------------------------------------------------


def plain(memory: int, vcores: int) -> Resource:
    """A `Resource` of two ints and no extra type, without `__init__`'s
    conversions (the caller passes ints)."""
    return _make(memory, vcores, ())


def step_down(value: int, step: int) -> int:
    """`round_down` of one component."""
    return value if step <= 0 else value // step * step


def step_up(value: int, step: int) -> int:
    """`round_up` of one component."""
    return value if step <= 0 else -(-value // step) * step


# --- the queues' limits, under one calculator -------------------------------------------
class Limits:
    """The CapacityScheduler's limit arithmetic: what a parent offers a child
    (ParentQueue.getResourceLimitsOfChild), whether a queue may take more
    (AbstractCSQueue.canAssignToThisQueue), a user's headroom
    (LeafQueue.getHeadroom) and user limit (UsersManager.computeUserLimit),
    with the calculator's comparisons on whole `Resource`s.

    The scheduler holds one, chosen by `limits_for` when its calculator or
    cluster changes: this one, or `MemoryLimits`, which gives the same
    values on two integers where the calculator looks at memory alone and
    no resource carries an extra type."""

    def __init__(self, calc: ResourceCalculator) -> None:
        self.calc = calc

    def child_limit(
        self,
        cluster: Resource,
        parent_limit: Resource,
        parent_max: Resource,
        parent_used: Resource,
        child_used: Resource,
        minimum: Resource,
    ) -> Resource:
        """The parent's limit capped by its maximum, less what the parent
        uses, plus what the child uses, rounded down to the minimum."""
        capped = rmin(self.calc, cluster, parent_limit, parent_max)
        return round_down(capped - parent_used + child_used, minimum)

    def current_limit(
        self,
        cluster: Resource,
        steps: list[tuple[Resource, Resource, Resource]],
        leaf_max: Resource,
        minimum: Resource,
    ) -> Resource:
        """`child_limit` from the cluster down `steps` (each parent's
        maximum, its usage and its child's usage, root first), then capped
        by the leaf's maximum."""
        limit = cluster
        for parent_max, parent_used, child_used in steps:
            limit = self.child_limit(cluster, limit, parent_max, parent_used, child_used, minimum)
        return rmin(self.calc, cluster, leaf_max, limit)

    def can_assign(
        self,
        cluster: Resource,
        queue_max: Resource,
        limit: Resource,
        used: Resource,
        unreservable: Resource,
        continue_looking: bool,
    ) -> tuple[bool, Resource]:
        """(below min(max, limit), counting out reservations that could be
        given up when `continue_looking`?, the headroom to it)."""
        calc = self.calc
        current = rmin(calc, cluster, queue_max, limit)
        headroom = current - used
        if lt(calc, cluster, used, current):
            return True, headroom
        if continue_looking and positive(calc, cluster, unreservable):
            return lt(calc, cluster, used - unreservable, current), headroom
        return False, headroom

    def headroom(
        self,
        cluster: Resource,
        cluster_used: Resource,
        current_limit: Resource,
        queue_used: Resource,
        user_limit: Resource,
        user_used: Resource,
        minimum: Resource,
    ) -> Resource:
        """min(user limit - user's usage, queue limit - queue usage), rounded
        down, and no more than what is free in the cluster."""
        h = cmin(non_negative(user_limit - user_used), non_negative(current_limit - queue_used))
        return rmin(self.calc, cluster, cluster - cluster_used, round_down(h, minimum))

    def user_limit(
        self,
        cluster: Resource,
        minimum: Resource,
        guaranteed: Resource,
        used_by_user: list[Resource],
        used_by_active: list[Resource],
        percent: float,
        factor: float,
        queue_max: Callable[[], Resource],
        active_weight: float | None = None,
        usage_ratio: float | None = None,
    ) -> Resource:
        """computeUserLimit: at least an equal split among the active users
        (`used_by_active`; with user weights, split by the sum of their
        weights, `active_weight`) and `percent` of what the queue may use
        now, capped by `factor` times the guarantee (-1, or no guarantee: the
        queue's maximum), rounded up to the minimum allocation."""
        calc = self.calc
        queue_capacity, current = current_capacity(
            calc, cluster, minimum, guaranteed, used_by_user, usage_ratio
        )
        active_used = ZERO
        for u in used_by_active:
            active_used = active_used + u
        split = (
            divide_and_ceil(active_used + minimum, len(used_by_active))
            if active_weight is None
            else divide_and_ceil_f32(active_used + minimum, active_weight)
        )
        limit = rmax(calc, cluster, split, divide_and_ceil(multiply(current, percent), 100))
        # A queue whose guarantee is zero (an auto-created queue without
        # capacity) is capped by its maximum, not by a factor of nothing.
        unlimited = factor == -1 or guaranteed.is_zero()
        cap = queue_max() if unlimited else multiply(queue_capacity, factor)
        return round_up(rmin(calc, cluster, limit, cap), minimum)


class MemoryLimits(Limits):
    """`Limits` for the default calculator when no resource carries an extra
    type: each comparison looks at memory alone, so the same values come
    from (memory, vcores) pairs, with one `Resource` built per answer
    (tests/unit/test_capacity_limits.py compares the two)."""

    def child_limit(
        self,
        cluster: Resource,
        parent_limit: Resource,
        parent_max: Resource,
        parent_used: Resource,
        child_used: Resource,
        minimum: Resource,
    ) -> Resource:
        if parent_limit.memory > parent_max.memory:
            parent_limit = parent_max
        lim_m = parent_limit.memory - parent_used.memory + child_used.memory
        lim_v = parent_limit.vcores - parent_used.vcores + child_used.vcores
        return plain(step_down(lim_m, minimum.memory), step_down(lim_v, minimum.vcores))

    def current_limit(
        self,
        cluster: Resource,
        steps: list[tuple[Resource, Resource, Resource]],
        leaf_max: Resource,
        minimum: Resource,
    ) -> Resource:
        min_m, min_v = minimum.memory, minimum.vcores
        lim_m, lim_v = cluster.memory, cluster.vcores
        for parent_max, parent_used, child_used in steps:
            if lim_m > parent_max.memory:
                lim_m, lim_v = parent_max.memory, parent_max.vcores
            lim_m = step_down(lim_m - parent_used.memory + child_used.memory, min_m)
            lim_v = step_down(lim_v - parent_used.vcores + child_used.vcores, min_v)
        if leaf_max.memory <= lim_m:
            return leaf_max
        return plain(lim_m, lim_v)

    def can_assign(
        self,
        cluster: Resource,
        queue_max: Resource,
        limit: Resource,
        used: Resource,
        unreservable: Resource,
        continue_looking: bool,
    ) -> tuple[bool, Resource]:
        cur = queue_max if queue_max.memory <= limit.memory else limit
        headroom = plain(cur.memory - used.memory, cur.vcores - used.vcores)
        if used.memory < cur.memory:
            return True, headroom
        if continue_looking and unreservable.memory > 0:
            return used.memory - unreservable.memory < cur.memory, headroom
        return False, headroom

    def headroom(
        self,
        cluster: Resource,
        cluster_used: Resource,
        current_limit: Resource,
        queue_used: Resource,
        user_limit: Resource,
        user_used: Resource,
        minimum: Resource,
    ) -> Resource:
        h_m = min(
            max(user_limit.memory - user_used.memory, 0),
            max(current_limit.memory - queue_used.memory, 0),
        )
        h_v = min(
            max(user_limit.vcores - user_used.vcores, 0),
            max(current_limit.vcores - queue_used.vcores, 0),
        )
        h_m = step_down(h_m, minimum.memory)
        h_v = step_down(h_v, minimum.vcores)
        free_m = cluster.memory - cluster_used.memory
        if free_m <= h_m:
            return plain(free_m, cluster.vcores - cluster_used.vcores)
        return plain(h_m, h_v)

    def user_limit(
        self,
        cluster: Resource,
        minimum: Resource,
        guaranteed: Resource,
        used_by_user: list[Resource],
        used_by_active: list[Resource],
        percent: float,
        factor: float,
        queue_max: Callable[[], Resource],
        active_weight: float | None = None,
        usage_ratio: float | None = None,
    ) -> Resource:
        min_m, min_v = minimum.memory, minimum.vcores
        qc = guaranteed if guaranteed.memory >= min_m else minimum
        cm = cluster.memory
        if usage_ratio is not None:
            ratio = usage_ratio
        else:
            ratio = sum(u.memory / cm for u in used_by_user) if cm else 0
        con_m = step_up(int(cm * ratio + 0.5), min_m)
        if con_m < qc.memory:
            cur_m, cur_v = qc.memory, qc.vcores
        else:
            con_v = step_up(int(cluster.vcores * ratio + 0.5), min_v)
            cur_m, cur_v = con_m + min_m, con_v + min_v
        n = len(used_by_active)
        au_m = au_v = 0
        for u in used_by_active:
            au_m += u.memory
            au_v += u.vcores
        if active_weight is not None:
            split = divide_and_ceil_f32(plain(au_m + min_m, au_v + min_v), active_weight)
            a_m, a_v = split.memory, split.vcores
        elif n:
            a_m, a_v = math.ceil((au_m + min_m) / n), math.ceil((au_v + min_v) / n)
        else:
            a_m = a_v = 0
        b_m, b_v = math.ceil(int(cur_m * percent) / 100), math.ceil(int(cur_v * percent) / 100)
        lim_m, lim_v = (a_m, a_v) if a_m >= b_m else (b_m, b_v)
        if factor == -1 or (guaranteed.memory == 0 and guaranteed.vcores == 0):
            mx = queue_max()
            cap_m, cap_v = mx.memory, mx.vcores
        else:
            cap_m, cap_v = int(qc.memory * factor), int(qc.vcores * factor)
        if lim_m > cap_m:
            lim_m, lim_v = cap_m, cap_v
        return plain(step_up(lim_m, min_m), step_up(lim_v, min_v))


def limits_for(calc: ResourceCalculator, cluster: Resource, minimum: Resource) -> Limits:
    """`MemoryLimits` for the default calculator while neither the cluster
    nor the minimum allocation carries an extra type (asks normalized by it
    carry none either), else `Limits`."""
    if type(calc) is ResourceCalculator and not cluster.extra and not minimum.extra:
        return MemoryLimits(calc)
    return Limits(calc)

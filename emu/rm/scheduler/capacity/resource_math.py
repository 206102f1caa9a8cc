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
from collections.abc import Callable, Mapping

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


def non_negative(r: Resource) -> Resource:
    return cmax(r, ZERO)


def multiply(r: Resource, by: float) -> Resource:
    """Hadoop's `Resources.multiply`: each component times `by`, truncated."""
    if not r.extra:
        return _make(int(r.memory * by), int(r.vcores * by), ())
    return _map(r, lambda v: int(v * by))


def multiply_up(calc: ResourceCalculator, r: Resource, by: float, step: Resource) -> Resource:
    """Hadoop's `multiplyAndNormalizeUp`."""
    if isinstance(calc, DominantResourceCalculator):
        scaled = _map(r, lambda v: math.ceil(v * by))
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
    resource name; a type without a factor gets 0)."""
    if isinstance(calc, DominantResourceCalculator):

        def scale(v: int, f: float) -> int:
            return math.ceil(v * f)
    else:

        def scale(v: int, f: float) -> int:
            return int(v * f + 0.5)

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

"""Fair shares, exactly as Hadoop's `ComputeFairShares`.

A set of schedulables (queues or apps) shares a total: find the
weight-to-resource ratio R such that each gets `weight * R`, raised to its
min share and capped at its max share, and the shares add up to the total.
R is found by doubling from 1 until the shares cover the total, then 25
steps of bisection; each share is the `(long)` truncation of its value at
the upper bound, so shares are whole units and can sum slightly above the
total (10240 MB over three equal queues gives 3414 each, as in Hadoop).

Schedulables with a zero max share, a non-positive weight, or (for
instantaneous shares) an inactive queue get a fixed share first: 0, or the
min share for a zero weight. The steady share considers every queue,
active or not.

A schedulable here is any object with `weight`, `min_share`, `max_share`
and a writable `fair_share` (or `steady_fair_share`); queues also have
`is_active()`.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence
from typing import Any

from emu.resources import MEMORY, VCORES, Resource
from emu.rm.scheduler.fair.arith import LONG_MAX, jlong, value, with_value

ITERATIONS = 25


def compute_shares(schedulables: Sequence[Any], total: Resource, rtype: str) -> None:
    """Instantaneous fair shares of `rtype` among active schedulables."""
    _compute(schedulables, total, rtype, steady=False)


def compute_steady_shares(queues: Sequence[Any], total: Resource, rtype: str) -> None:
    """Steady fair shares of `rtype` among all queues, active or not."""
    _compute(queues, total, rtype, steady=True)


_GETTERS: dict[str, Callable[[Resource], int]] = {
    MEMORY: operator.attrgetter("memory"),
    VCORES: operator.attrgetter("vcores"),
}


def _value_of(rtype: str, r: Resource) -> int:
    return value(r, rtype)


def _safe_add(a: int, b: int) -> int:
    s = a + b
    return LONG_MAX if s > LONG_MAX else s


def _set(s: Any, steady: bool, rtype: str, v: int) -> None:
    current = s.steady_fair_share if steady else s.fair_share
    # most shares are unchanged from one update to the next: keep the
    # resource then (memory and vcores; an extra type may be absent, which
    # setting would make an explicit 0)
    if (rtype == MEMORY and current.memory == v) or (rtype == VCORES and current.vcores == v):
        return
    if steady:
        s.steady_fair_share = with_value(current, rtype, v)
    else:
        s.fair_share = with_value(current, rtype, v)


def _fixed_share(s: Any, steady: bool, rtype: str, max_share: int) -> int:
    """The share if it does not depend on R, else -1."""
    if max_share <= 0:
        return 0
    if not steady and hasattr(s, "is_active") and not s.is_active():
        return 0
    if s.weight <= 0:
        return max(value(s.min_share, rtype), 0)
    return -1


def compute_share(s: Any, ratio: float, rtype: str) -> int:
    """The share of `s` at weight-to-resource ratio `ratio`."""
    share = s.weight * ratio
    share = max(share, float(value(s.min_share, rtype)))
    share = min(share, float(value(s.max_share, rtype)))
    return jlong(share)


Spec = tuple[float, float, float]  # weight, min share, max share (as doubles)


Run = tuple[Spec, int]  # a spec and how many schedulables in a row have it


def _used(runs: Sequence[Run], ratio: float) -> int:
    """resourceUsedWithWeightToResourceRatio: the sum of the shares at `ratio`
    (shares are >= 0, so adding a run's `count` equal shares at once reaches
    LONG_MAX exactly when adding them one by one would)."""
    taken = 0
    for (weight, lo, hi), count in runs:
        share = weight * ratio
        if share < lo:
            share = lo
        if share > hi:
            share = hi
        taken += jlong(share) * count
        if taken >= LONG_MAX:
            return LONG_MAX
    return taken


def _ratio(specs: tuple[Run, ...], total_resource: int) -> float:
    """The weight-to-resource ratio: doubling, then ITERATIONS bisection steps."""
    r_max = 1.0
    while _used(specs, r_max) < total_resource:
        r_max *= 2.0
    left, right = 0.0, r_max
    for _ in range(ITERATIONS):
        mid = (left + right) / 2.0
        planned = _used(specs, mid)
        if planned == total_resource:
            right = mid
            break
        if planned < total_resource:
            left = mid
        else:
            right = mid
    return right


# The search is a pure function of its inputs, which rarely change between
# updates: remember recent answers (bounded, cleared when full). Keys hold
# runs of equal specs, not one spec per schedulable: a queue's apps mostly
# share one (weight 1, no min, no max), and a key per update of a queue with
# hundreds of apps once cost ~100 bytes per app, up to 4096 times over.
_RATIOS: dict[tuple[tuple[Run, ...], int], float] = {}
_RATIOS_MAX = 4096


def _compute(all_schedulables: Sequence[Any], total: Resource, rtype: str, steady: bool) -> None:
    schedulables = []
    specs: list[Spec] = []
    taken = 0
    total_max = 0
    get = _GETTERS.get(rtype)
    if get is None:
        get = functools.partial(_value_of, rtype)
    for s in all_schedulables:
        # _fixed_share, inline: this runs for every app twice per update
        max_share = get(s.max_share)
        weight = 0.0
        inactive = (
            not steady and (active := getattr(s, "is_active", None)) is not None and not active()
        )
        if max_share <= 0 or inactive:
            fixed = 0
        else:
            weight = s.weight
            fixed = max(get(s.min_share), 0) if weight <= 0 else -1
        if fixed < 0:
            schedulables.append(s)
            specs.append((weight, float(get(s.min_share)), float(max_share)))
            total_max = _safe_add(max_share, total_max)
        else:
            _set(s, steady, rtype, fixed)
            taken = _safe_add(taken, fixed)
    if not schedulables:
        return
    total_resource = min(total_max, max(value(total, rtype) - taken, 0))
    key = (_runs(specs), total_resource)
    right = _RATIOS.get(key)
    if right is None:
        if len(_RATIOS) >= _RATIOS_MAX:
            _RATIOS.clear()
        right = _RATIOS[key] = _ratio(key[0], total_resource)
    for s, (weight, lo, hi) in zip(schedulables, specs, strict=True):
        share = weight * right
        share = min(max(share, lo), hi)
        _set(s, steady, rtype, jlong(share))


def _runs(specs: list[Spec]) -> tuple[Run, ...]:
    """`specs` as (spec, count) runs of equal neighbours, in order."""
    runs: list[Run] = []
    last: Spec | None = None
    count = 0
    for spec in specs:
        if spec == last:
            count += 1
            continue
        if last is not None:
            runs.append((last, count))
        last, count = spec, 1
    if last is not None:
        runs.append((last, count))
    return tuple(runs)

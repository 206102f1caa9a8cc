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
`is_active()` (a method of their class).

Cost: the FairScheduler's update runs this every 500 ms for every queue,
over every runnable app of a leaf, for memory and vcores. The types of one
call are worked out from one read of the schedulables, and neighbours with
the same inputs are worked out once (see `_compute`); the ratio search,
a pure function of the specs and the total, is remembered (`_RATIOS`).
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence
from typing import Any

from emu.resources import MEMORY, VCORES, Resource
from emu.rm.scheduler.fair.arith import LONG_MAX, jlong, value, with_value

ITERATIONS = 25


def compute_shares(
    schedulables: Sequence[Any], total: Resource, rtype: str, grouped: bool = True
) -> None:
    """Instantaneous fair shares of `rtype` among active schedulables."""
    _compute(schedulables, total, (rtype,), False, grouped)


def compute_steady_shares(
    queues: Sequence[Any], total: Resource, rtype: str, grouped: bool = True
) -> None:
    """Steady fair shares of `rtype` among all queues, active or not."""
    _compute(queues, total, (rtype,), True, grouped)


def compute_shares_of(
    schedulables: Sequence[Any], total: Resource, types: Sequence[str], grouped: bool = True
) -> None:
    """`compute_shares` for each of `types` in turn (the DRF policy's
    computeShares), reading the schedulables once. `grouped`: neighbours
    with the same inputs are worked out once (`_compute`); the shortcuts
    setting."""
    _compute(schedulables, total, types, False, grouped)


def compute_steady_shares_of(
    queues: Sequence[Any], total: Resource, types: Sequence[str], grouped: bool = True
) -> None:
    """`compute_steady_shares` for each of `types` in turn, reading the queues once."""
    _compute(queues, total, types, True, grouped)


_GETTERS: dict[str, Callable[[Resource], int]] = {
    MEMORY: operator.attrgetter("memory"),
    VCORES: operator.attrgetter("vcores"),
}


def _value_of(rtype: str, r: Resource) -> int:
    return value(r, rtype)


def _add_times(acc: int, v: int, n: int) -> int:
    """`acc` plus `n` times `v`, saturating at LONG_MAX as `n` saturating
    additions would (`acc` in [0, LONG_MAX], `v` >= 0, `n` >= 1), without the product
    ever leaving 64 bits (an unbounded max share is LONG_MAX)."""
    if v > (LONG_MAX - acc) // n:
        return LONG_MAX
    return acc + v * n


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
# share one (weight 1, no min, no max), so a key stays small however many
# apps the queue has.
_RATIOS: dict[tuple[tuple[Run, ...], int], float] = {}
_RATIOS_MAX = 4096


def _has_is_active(cls: type) -> bool:
    """Whether schedulables of class `cls` have `is_active()` (queues do,
    apps do not): asked once per class, not once per schedulable, since a
    failed attribute lookup costs an exception each time."""
    has = _HAS_ACTIVE.get(cls)
    if has is None:
        has = _HAS_ACTIVE[cls] = hasattr(cls, "is_active")
    return has


_HAS_ACTIVE: dict[type, bool] = {}


def _compute(
    all_schedulables: Sequence[Any],
    total: Resource,
    types: Sequence[str],
    steady: bool,
    grouped: bool,
) -> None:
    """The shares of each of `types`, each as its own ComputeFairShares call
    would give them (a type's shares read only the schedulables' weight,
    min and max share and activity, which no share changes), in one pass.

    Schedulables are read once, not once per type, in groups: neighbours
    whose weight is equal and whose min share, max share and activity are
    the same objects have, for every type, the same fixed share or the same
    spec, so the same share. A leaf queue's apps are mostly one group
    (weight 1, no min, the unbounded max), which is then worked out once.
    Not `grouped` (shortcuts off): every schedulable is its own group."""
    items = all_schedulables if isinstance(all_schedulables, list) else list(all_schedulables)
    if not items:
        return
    merge = grouped
    # per group: first index, weight, min share, max share, active
    starts: list[int] = []
    weights: list[float] = []
    mins: list[Resource] = []
    maxes: list[Resource] = []
    actives: list[bool] = []
    prev_w = 0.0
    prev_min: Resource | None = None
    prev_max: Resource | None = None
    prev_active = False
    for i, s in enumerate(items):
        weight: float = s.weight
        min_share: Resource = s.min_share
        max_share: Resource = s.max_share
        active = steady or not _has_is_active(type(s)) or bool(s.is_active())
        if (
            merge
            and min_share is prev_min
            and max_share is prev_max
            and active == prev_active
            and weight == prev_w
        ):
            continue
        starts.append(i)
        weights.append(weight)
        mins.append(min_share)
        maxes.append(max_share)
        actives.append(active)
        prev_w, prev_min, prev_max, prev_active = weight, min_share, max_share, active
    starts.append(len(items))
    values = [_group_shares(t, total, starts, weights, mins, maxes, actives) for t in types]
    _assign(items, steady, types, starts, values)


def _group_shares(
    rtype: str,
    total: Resource,
    starts: list[int],
    weights: list[float],
    mins: list[Resource],
    maxes: list[Resource],
    actives: list[bool],
) -> list[int]:
    """ComputeFairShares for one type: each group's share of `rtype`.
    Fixed shares come first (0 for a zero max or an inactive queue, the min
    share for a non-positive weight); the rest split what is left at the
    weight-to-resource ratio `_ratio` finds. Sums over a group of n add n
    equal non-negative terms, saturating at LONG_MAX as n additions would."""
    get = _GETTERS.get(rtype)
    if get is None:
        get = functools.partial(_value_of, rtype)
    out: list[int] = []
    specs: list[Spec] = []
    counts: list[int] = []
    free: list[int] = []  # the groups whose share depends on the ratio
    taken = 0
    total_max = 0
    for g in range(len(weights)):
        n = starts[g + 1] - starts[g]
        max_share = get(maxes[g])
        weight = weights[g]
        if max_share <= 0 or not actives[g]:
            fixed = 0
        elif weight <= 0:
            fixed = max(get(mins[g]), 0)
        else:
            fixed = -1
        if fixed >= 0:
            out.append(fixed)
            taken = _add_times(taken, fixed, n)
            continue
        out.append(-1)
        free.append(g)
        spec = (weight, float(get(mins[g])), float(max_share))
        if specs and specs[-1] == spec:
            counts[-1] += n
        else:
            specs.append(spec)
            counts.append(n)
        total_max = _add_times(total_max, max_share, n)
    if not free:
        return out
    total_resource = min(total_max, max(value(total, rtype) - taken, 0))
    key = (tuple(zip(specs, counts, strict=True)), total_resource)
    right = _RATIOS.get(key)
    if right is None:
        if len(_RATIOS) >= _RATIOS_MAX:
            _RATIOS.clear()
        right = _RATIOS[key] = _ratio(key[0], total_resource)
    for g in free:
        share = weights[g] * right
        share = min(max(share, float(get(mins[g]))), float(get(maxes[g])))
        out[g] = jlong(share)
    return out


def _assign(
    items: Sequence[Any],
    steady: bool,
    types: Sequence[str],
    starts: list[int],
    values: list[list[int]],
) -> None:
    """Set each schedulable's share of `types` to its group's, keeping its
    other components, and keeping the resource itself where no component
    changes (most shares are unchanged from one update to the next)."""
    groups = len(starts) - 1
    if len(types) == 2 and types[0] == MEMORY and types[1] == VCORES:
        memories, vcores = values
        for g in range(groups):
            m, v = memories[g], vcores[g]
            plain: Resource | None = None  # one resource for the group's plain shares
            for i in range(starts[g], starts[g + 1]):
                s = items[i]
                current: Resource = s.steady_fair_share if steady else s.fair_share
                if current.memory == m and current.vcores == v:
                    continue
                if current.extra:
                    r = Resource(m, v, current.extra)
                else:
                    if plain is None:
                        plain = Resource(m, v)
                    r = plain
                if steady:
                    s.steady_fair_share = r
                else:
                    s.fair_share = r
        return
    for t, shares in zip(types, values, strict=True):
        for g in range(groups):
            for i in range(starts[g], starts[g + 1]):
                _set(items[i], steady, t, shares[g])

"""Fair shares and policy orderings against Hadoop's own numbers:
TestComputeFairShares, TestDominantResourceFairnessPolicy and the
FairSharePolicy comparator."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

import pytest

from emu.resources import MEMORY, VCORES, ZERO, Resource
from emu.rm.scheduler.fair import policies, shares
from emu.rm.scheduler.fair.arith import LONG_MAX, f32, unbounded, value

INT_MAX = (1 << 31) - 1


@dataclass
class Fake:
    """Hadoop's FakeSchedulable."""

    min_share: Resource = ZERO
    max_share: Resource = field(default_factory=lambda: Resource(INT_MAX, 0))
    weight: float = 1.0
    usage: Resource = ZERO
    demand: Resource = ZERO
    start_ms: int = 0
    name: str = "fake"
    fair_share: Resource = ZERO


def mem(min_share: int = 0, max_share: int = INT_MAX, weight: float = 1.0) -> Fake:
    return Fake(Resource(min_share, 0), Resource(max_share, 0), f32(weight))


def memory_shares(scheds: list[Fake], total: int) -> list[int]:
    shares.compute_shares(scheds, Resource(total, 0), MEMORY)
    return [s.fair_share.memory for s in scheds]


def test_equal_sharing():
    """TestComputeFairShares.testEqualSharing"""
    assert memory_shares([mem(), mem(), mem(), mem()], 40) == [10, 10, 10, 10]


def test_low_max_shares():
    """TestComputeFairShares.testLowMaxShares"""
    scheds = [mem(0, 100), mem(0, 50), mem(0, 11), mem(0, 3)]
    assert memory_shares(scheds, 40) == [13, 13, 11, 3]


def test_min_shares():
    """TestComputeFairShares.testMinShares"""
    assert memory_shares([mem(20), mem(18), mem(0), mem(2)], 40) == [20, 18, 0, 2]


def test_weighted_sharing():
    """TestComputeFairShares.testWeightedSharing"""
    scheds = [mem(0, weight=2.0), mem(0, weight=1.0), mem(0, weight=1.0), mem(0, weight=0.5)]
    assert memory_shares(scheds, 45) == [20, 10, 10, 5]


def test_weighted_sharing_with_max_shares():
    """TestComputeFairShares.testWeightedSharingWithMaxShares"""
    scheds = [mem(0, 10, 2.0), mem(0, 11, 1.0), mem(0, 30, 1.0), mem(0, 20, 0.5)]
    assert memory_shares(scheds, 45) == [10, 11, 16, 8]


def test_weighted_sharing_with_min_shares():
    """TestComputeFairShares.testWeightedSharingWithMinShares"""
    scheds = [mem(20, weight=2.0), mem(0, weight=1.0), mem(5, weight=1.0), mem(15, weight=0.5)]
    assert memory_shares(scheds, 45) == [20, 5, 5, 15]


def test_large_shares():
    """TestComputeFairShares.testLargeShares"""
    million = 1000 * 1000
    assert memory_shares([mem(), mem(), mem(), mem()], 40 * million) == [10 * million] * 4


def test_empty_list():
    """TestComputeFairShares.testEmptyList"""
    assert memory_shares([], 40) == []


def test_cpu():
    """TestComputeFairShares.testCPU"""
    unbounded = Resource(INT_MAX, INT_MAX)
    scheds = [
        Fake(Resource(0, 20), unbounded, f32(2.0)),
        Fake(Resource(0, 0), unbounded, f32(1.0)),
        Fake(Resource(0, 5), unbounded, f32(1.0)),
        Fake(Resource(0, 15), unbounded, f32(0.5)),
    ]
    shares.compute_shares(scheds, Resource(0, 45), VCORES)
    assert [s.fair_share.vcores for s in scheds] == [20, 5, 5, 15]


def test_resource_used_with_weight_to_resource_ratio_does_not_overflow():
    """ComputeFairSharesTest.testResourceUsedWithWeightToResourceRatio: two
    min shares of Integer.MAX_VALUE over a total of Integer.MAX_VALUE terminate."""
    scheds = [mem(INT_MAX, LONG_MAX), mem(INT_MAX, LONG_MAX)]
    assert memory_shares(scheds, INT_MAX) == [INT_MAX, INT_MAX]


def test_zero_weight_gets_its_min_share_and_zero_max_gets_nothing():
    """ComputeFairShares.handleFixedFairShares (YARN-5077): weight 0 -> the min
    share, max share 0 -> 0, the rest split what is left."""
    scheds = [mem(4, weight=0.0), mem(0, 0), mem(), mem()]
    assert memory_shares(scheds, 40) == [4, 0, 18, 18]


def test_three_ways_rounds_up_as_hadoop():
    """TestFairScheduler.testSimpleFairShareCalculation's 3414: 10240 MB over
    three equal queues converges on the upper bound of the bisection."""
    assert memory_shares([mem(), mem(), mem()], 10 * 1024) == [3414, 3414, 3414]


def test_steady_shares_count_inactive_queues():
    """computeSteadyShares ignores activity; computeShares gives inactive queues 0."""

    @dataclass
    class Queue(Fake):
        active: bool = True
        steady_fair_share: Resource = ZERO

        def is_active(self) -> bool:
            return self.active

    qs = [Queue(max_share=unbounded()), Queue(max_share=unbounded(), active=False)]
    shares.compute_shares(qs, Resource(6144, 6), MEMORY)
    shares.compute_steady_shares(qs, Resource(6144, 6), MEMORY)
    assert [q.fair_share.memory for q in qs] == [6144, 0]
    assert [q.steady_fair_share.memory for q in qs] == [3072, 3072]


# --- TestDominantResourceFairnessPolicy ---------------------------------------------------------
def drf(cluster_mem: int, cluster_cpu: int):
    cluster = Resource(cluster_mem, cluster_cpu)
    return lambda a, b: policies.DRF.compare(a, b, cluster)


def sched(mem_usage: int, cpu_usage: int, weight: float = 1.0, min_mem: int = 0, min_cpu: int = 0):
    return Fake(
        min_share=Resource(min_mem, min_cpu),
        max_share=Resource(INT_MAX, INT_MAX),
        weight=f32(weight),
        usage=Resource(mem_usage, cpu_usage),
    )


def test_drf_same_dominant_resource():
    """TestDominantResourceFairnessPolicy.testSameDominantResource"""
    assert drf(8000, 4)(sched(1000, 1), sched(2000, 1)) < 0


def test_drf_different_dominant_resource():
    """TestDominantResourceFairnessPolicy.testDifferentDominantResource"""
    assert drf(8000, 8)(sched(4000, 3), sched(2000, 5)) < 0


def test_drf_one_is_needy():
    """TestDominantResourceFairnessPolicy.testOneIsNeedy"""
    assert drf(8000, 8)(sched(2000, 5, min_cpu=6), sched(4000, 3)) < 0


def test_drf_both_are_needy():
    """TestDominantResourceFairnessPolicy.testBothAreNeedy"""
    c = drf(8000, 100)
    assert c(sched(2000, 5), sched(4000, 3)) < 0
    assert c(sched(2000, 5, min_mem=3000, min_cpu=6), sched(4000, 3, min_mem=5000, min_cpu=4)) < 0


def test_drf_even_weights_same_dominant_resource():
    """TestDominantResourceFairnessPolicy.testEvenWeightsSameDominantResource"""
    assert drf(8000, 8)(sched(3000, 1, 2.0), sched(2000, 1)) < 0
    assert drf(8000, 8)(sched(1000, 3, 2.0), sched(1000, 2)) < 0


def test_drf_even_weights_different_dominant_resource():
    """TestDominantResourceFairnessPolicy.testEvenWeightsDifferentDominantResource"""
    assert drf(8000, 8)(sched(1000, 3, 2.0), sched(2000, 1)) < 0
    assert drf(8000, 8)(sched(3000, 1, 2.0), sched(1000, 2)) < 0


def test_drf_compare_schedulables_with_cluster_resource_changes():
    """TestDominantResourceFairnessPolicy.testCompareSchedulablesWithClusterResourceChanges"""
    s1, s2 = sched(2000, 1), sched(1000, 2)
    assert drf(4000, 5)(s1, s2) > 0
    assert drf(8000, 6)(s1, s2) < 0


def test_drf_three_resource_types_use_the_n_comparator():
    """TestDominantResourceFairnessPolicy with a third resource ("test"):
    testSameDominantResource/testDifferentDominantResource hold with the
    generic comparator too, and the dominant type can be the extra one."""
    cluster = Resource(8000, 8, {"test": 10})

    def s(m: int, c: int, t: int) -> Fake:
        return Fake(usage=Resource(m, c, {"test": t}), max_share=Resource(INT_MAX, INT_MAX))

    assert policies.DRF.compare(s(1000, 1, 0), s(2000, 1, 0), cluster) < 0
    assert policies.DRF.compare(s(4000, 3, 0), s(2000, 5, 0), cluster) < 0
    assert policies.DRF.compare(s(1000, 1, 6), s(4000, 2, 1), cluster) > 0


def test_drf_ties_break_by_start_time_then_name():
    """DominantResourceFairnessComparator.compareAttribrutes"""
    a = Fake(usage=Resource(1000, 1), start_ms=5, name="b")
    b = Fake(usage=Resource(1000, 1), start_ms=3, name="a")
    c = Fake(usage=Resource(1000, 1), start_ms=3, name="c")
    cluster = Resource(8000, 8)
    assert [x.name for x in policies.DRF.sort([a, b, c], cluster)] == ["a", "c", "b"]


# --- FairSharePolicy.FairShareComparator --------------------------------------------------------
def test_fair_comparator_demand_then_needy_then_usage_over_weight():
    """FairSharePolicy.FairShareComparator: no demand last; below min share
    first (by usage/minShare); then usage/weight."""
    cluster = Resource(100_000, 100)
    no_demand = Fake(usage=ZERO, demand=ZERO, name="a")
    needy = Fake(
        min_share=Resource(4096, 0), usage=Resource(2048, 2), demand=Resource(8192, 8), name="b"
    )
    heavy = Fake(usage=Resource(4096, 4), demand=Resource(8192, 8), weight=f32(2.0), name="c")
    light = Fake(usage=Resource(3072, 3), demand=Resource(8192, 8), name="d")
    order = policies.FAIR.sort([no_demand, light, heavy, needy], cluster)
    assert [x.name for x in order] == ["b", "c", "d", "a"]


def test_fair_comparator_zero_weight_goes_after_positive_weight():
    """FairShareComparator: a zero weight loses to any positive weight."""
    cluster = Resource(100_000, 100)
    zero = Fake(usage=ZERO, demand=Resource(1024, 1), weight=0.0, name="a")
    one = Fake(usage=Resource(9000, 9), demand=Resource(10000, 10), weight=1.0, name="b")
    assert [x.name for x in policies.FAIR.sort([zero, one], cluster)] == ["b", "a"]


def test_fifo_gives_the_whole_share_to_the_earliest():
    """FifoPolicy.computeShares"""
    a, b = Fake(start_ms=10, name="a"), Fake(start_ms=5, name="b")
    policies.FIFO.compute_shares([a, b], Resource(4096, 4))
    assert b.fair_share == Resource(4096, 4)
    assert a.fair_share == ZERO


def test_many_equal_schedulables_share_as_one_by_one_and_cache_runs():
    """600 apps in runs of equal specs (and one saturating run): the shares
    are those the one-spec-per-app sum gives, and the remembered key holds
    the runs, not 600 specs."""
    scheds = [mem() for _ in range(300)] + [mem(0, 7)] * 2 + [mem() for _ in range(298)]
    shares._RATIOS.clear()
    got = memory_shares(scheds, 100_000)
    one_by_one = [(float(s.weight), 0.0, float(s.max_share.memory)) for s in scheds]
    ratio = shares._ratio(tuple((spec, 1) for spec in one_by_one), 100_000)
    assert got == [shares.compute_share(s, ratio, MEMORY) for s in scheds]
    assert got[:3] == [168, 168, 168] and got[300:302] == [7, 7]
    ((key, total),) = shares._RATIOS
    assert total == 100_000
    assert [n for _, n in key] == [300, 2, 298]
    assert memory_shares([mem() for _ in range(3)] + [mem(0, LONG_MAX)], 12) == [3, 3, 3, 3]


# --- grouped computation against a one-at-a-time port -------------------------------------------
def _port_shares(scheds: list[Any], total: Resource, rtype: str, steady: bool) -> list[int]:
    """ComputeFairShares (handleFixedFairShares, then the doubling and the
    25-step bisection), one schedulable and one type at a time, with no
    grouping and no remembered ratios: what each share must equal."""
    out: list[int] = [0] * len(scheds)
    free: list[int] = []
    taken = 0
    for i, s in enumerate(scheds):
        max_share = value(s.max_share, rtype)
        if max_share <= 0 or (not steady and hasattr(s, "is_active") and not s.is_active()):
            out[i] = 0
        elif s.weight <= 0:
            out[i] = max(value(s.min_share, rtype), 0)
        else:
            free.append(i)
            continue
        taken = min(taken + out[i], LONG_MAX)
    if not free:
        return out
    total_max = 0
    for i in free:
        total_max = min(total_max + value(scheds[i].max_share, rtype), LONG_MAX)
    total_resource = min(total_max, max(value(total, rtype) - taken, 0))

    def used(ratio: float) -> int:
        return min(sum(shares.compute_share(scheds[i], ratio, rtype) for i in free), LONG_MAX)

    r_max = 1.0
    while used(r_max) < total_resource:
        r_max *= 2.0
    left, right = 0.0, r_max
    for _ in range(shares.ITERATIONS):
        mid = (left + right) / 2.0
        planned = used(mid)
        if planned == total_resource:
            right = mid
            break
        if planned < total_resource:
            left = mid
        else:
            right = mid
    for i in free:
        out[i] = shares.compute_share(scheds[i], right, rtype)
    return out


@dataclass
class FakeQueue(Fake):
    active: bool = True
    steady_fair_share: Resource = ZERO

    def is_active(self) -> bool:
        return self.active


def _expect(scheds: list[Any], total: Resource, steady: bool) -> list[tuple[int, int]]:
    mem_shares = _port_shares(scheds, total, MEMORY, steady)
    cpu_shares = _port_shares(scheds, total, VCORES, steady)
    return list(zip(mem_shares, cpu_shares, strict=True))


def _got(scheds: list[Any], steady: bool) -> list[tuple[int, int]]:
    rs = [s.steady_fair_share if steady else s.fair_share for s in scheds]
    return [(r.memory, r.vcores) for r in rs]


@pytest.mark.parametrize("on", [True, False])
@pytest.mark.parametrize("seed", range(40))
def test_drf_shares_equal_the_one_at_a_time_port(seed: int, on: bool) -> None:
    """Schedulables in runs sharing their min and max share objects (as a
    leaf's apps do), with fixed shares (zero weight, zero max, inactive)
    between them: every memory and vcores share is the port's, shortcuts on
    (grouped) or off (one group each), instantaneous and steady."""
    rng = random.Random(seed)
    unb = unbounded()
    pool = [unb, ZERO, Resource(2048, 2), Resource(0, 3), Resource(50_000, 40)]
    scheds: list[Any] = []
    while len(scheds) < rng.randint(1, 60):
        lo, hi = rng.choice(pool), rng.choice([unb, unb, Resource(30_000, 20), Resource(0, 9)])
        weight = f32(rng.choice([1.0, 1.0, 2.0, 0.5, 0.0]))
        active = rng.random() > 0.2
        for _ in range(rng.randint(1, 8)):
            scheds.append(FakeQueue(lo, hi, weight, active=active))
    total = Resource(rng.randint(0, 400_000), rng.randint(0, 300))
    policies.DRF.compute_shares(scheds, total, grouped=on)
    policies.DRF.compute_steady_shares(scheds, total, grouped=on)
    assert _got(scheds, False) == _expect(scheds, total, False)
    assert _got(scheds, True) == _expect(scheds, total, True)


def test_shares_follow_changed_inputs_between_updates() -> None:
    """Nothing of one update's grouping carries to the next: after a change
    of one app's weight, one app's max share and the total, each share is
    what a fresh computation gives, not the group's previous one."""
    unb = unbounded()
    apps = [Fake(ZERO, unb, 1.0) for _ in range(64)]
    total = Resource(64 * 1024, 64)
    policies.DRF.compute_shares(apps, total)
    assert _got(apps, False) == [(1024, 1)] * 64
    apps[10].weight = f32(3.0)
    policies.DRF.compute_shares(apps, total)
    assert _got(apps, False) == _expect(apps, total, False)
    assert apps[10].fair_share.memory > 2 * apps[11].fair_share.memory
    apps[10].weight = 1.0
    apps[20].max_share = Resource(100, 100)
    total = Resource(32 * 1024, 64)
    policies.DRF.compute_shares(apps, total)
    assert _got(apps, False) == _expect(apps, total, False)
    assert apps[20].fair_share == Resource(100, 1)
    assert apps[10].fair_share == apps[11].fair_share


def test_fair_policy_sets_memory_only_and_keeps_vcores() -> None:
    """The fair policy's share is memory alone: the vcores (and any extra
    type) of the share already held stay as they were."""
    apps = [Fake(ZERO, unbounded(), 1.0, fair_share=Resource(5, 7, {"gpu": 2})) for _ in range(3)]
    policies.FAIR.compute_shares(apps, Resource(3000, 30))
    assert [a.fair_share for a in apps] == [Resource(1000, 7, {"gpu": 2})] * 3


@pytest.mark.parametrize(
    ("acc", "v", "n"),
    [(0, LONG_MAX, 1), (0, LONG_MAX, 3), (5, LONG_MAX // 2, 2), (1, LONG_MAX // 2, 2), (7, 3, 9)],
)
def test_add_times_saturates_as_repeated_additions(acc: int, v: int, n: int) -> None:
    """A group's n equal terms add up (saturating at LONG_MAX) as n additions do."""
    expected = acc
    for _ in range(n):
        expected = min(expected + v, LONG_MAX)
    assert shares._add_times(acc, v, n) == expected

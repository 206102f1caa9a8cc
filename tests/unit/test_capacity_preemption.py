"""ProportionalCapacityPreemptionPolicy against the matrices of Hadoop's
TestProportionalCapacityPreemptionPolicy.

Each case builds the queue tree the way that test's `mockNested` does:
rows are absolute guarantee, maximum, used, pending, reserved, number of
apps, container size and number of children, one column per queue in
pre-order (root, queueA, queueB, ...); a leaf's usage is split evenly among
its apps, in containers of the given size. As in Hadoop's setup,
total_preemption_per_round and natural_termination_factor are 1.0,
max_ignored_over_capacity 0.1 and max_wait_before_kill 10 s. The assertions
count containers selected per app (Hadoop counts preemption events).
"""

from __future__ import annotations

from dataclasses import replace

from emu.resources import ZERO, DominantResourceCalculator, Resource, ResourceCalculator
from emu.rm.container import RMContainer
from emu.rm.enums import ContainerState
from emu.rm.scheduler.capacity import resource_math as rm
from emu.rm.scheduler.capacity.config import PreemptionConf
from emu.rm.scheduler.capacity.preemption import (
    PreemptionPolicy,
    TempQueue,
    _reset_capacity,
    compute_ideal_allocation,
    container_order_key,
    select_candidates,
)
from emu.rm.scheduler.scheduler_app import SchedulerApp
from emu.testing.capacity import Harness as CapacityHarness

MONITOR_ON = {
    "yarn.resourcemanager.scheduler.monitor.enable": "true",
    "yarn.resourcemanager.scheduler.monitor.policies": (
        "org.apache.hadoop.yarn.server.resourcemanager.monitor.capacity."
        "ProportionalCapacityPreemptionPolicy"
    ),
}
"""yarn-site.xml's lines that turn the preemption policy on."""
CONF = PreemptionConf(
    enabled=True,
    max_wait_before_kill_ms=10_000,
    total_preemption_per_round=1.0,
    natural_termination_factor=1.0,
    max_ignored_over_capacity=0.1,
)


def R(x: int) -> Resource:
    return Resource(x, x)


def _app(seq: int, used: int, reserved: int, gran: int, am: bool) -> SchedulerApp:
    app_id = f"application_0_{seq:04d}"
    sapp = SchedulerApp(f"appattempt_0_{seq:04d}_000001", app_id, "q", "u", 0, seq, ZERO, 0, 0)
    n = 0
    for i in range(-(-reserved // gran) if gran else 0):
        n += 1
        c = RMContainer(
            f"container_0_{seq:04d}_01_{n:06d}",
            sapp.attempt_id,
            app_id,
            f"n{i}",
            R(gran),
            1,
            "OFF_SWITCH",
            False,
            0,
        )
        c.state = ContainerState.RESERVED
        sapp.reservations[f"n{i}"] = c
    for i in range(-(-used // gran) if gran else 0):
        n += 1
        is_am = am and i == 0
        c = RMContainer(
            f"container_0_{seq:04d}_01_{n:06d}",
            sapp.attempt_id,
            app_id,
            "n",
            R(gran),
            0 if is_am else 1,
            "OFF_SWITCH",
            is_am,
            0,
        )
        sapp.live[c.container_id] = c
    return sapp


def build(
    q: list[list[int]],
    disabled: dict[str, bool] | None = None,
    am_containers: bool = False,
    am_percent: float = 0.0,
) -> tuple[TempQueue, Resource, list[SchedulerApp]]:
    """TestProportionalCapacityPreemptionPolicy.mockNested, as TempQueues."""
    abs_, maxcap, used, pending, reserved, apps, gran, subq = q
    tot = sum(a for a, s in zip(abs_, subq, strict=True) if s == 0)
    cluster = R(tot)
    disabled = disabled or {}

    def off(path: str, inherited: bool) -> bool:
        return disabled.get(path, inherited)

    root = TempQueue("root", R(abs_[0]), R(maxcap[0]), R(used[0]), reserved=R(reserved[0]))
    root.preemption_disabled = off("root", False)
    stack = [root] * subq[0]
    all_apps: list[SchedulerApp] = []
    for i in range(1, len(abs_)):
        parent = stack.pop()
        name = f"{parent.name}.queue{chr(ord('A') + i - 1)}"
        t = TempQueue(name, R(abs_[i]), R(maxcap[i]), R(used[i]), reserved=R(reserved[i]))
        t.abs_capacity = abs_[i] / tot
        t.preemption_disabled = off(name, parent.preemption_disabled)
        parent.children.append(t)
        if subq[i]:
            stack.extend([t] * subq[i])
            continue
        t.pending = R(pending[i])
        t.pending_deduct_reserved = rm.non_negative(R(pending[i]) - R(reserved[i]))
        t.max_am_resource = rm.multiply(rm.multiply(cluster, abs_[i] / tot), am_percent)
        for _ in range(apps[i]):
            a_used = -(-used[i] // apps[i])
            a_res = -(-reserved[i] // apps[i])
            sapp = _app(len(all_apps), a_used, a_res, gran[i], am_containers)
            t.apps.append(sapp)
            all_apps.append(sapp)

    def roll_up(t: TempQueue) -> None:
        for c in t.children:
            roll_up(c)
            t.pending = t.pending + c.pending
            t.pending_deduct_reserved = t.pending_deduct_reserved + c.pending_deduct_reserved

    roll_up(root)
    return root, cluster, all_apps


def preempted(
    q: list[list[int]],
    conf: PreemptionConf = CONF,
    calc: ResourceCalculator | None = None,
    **kw: object,
) -> list[int]:
    """Containers selected per app, in app order (appA, appB, ...)."""
    calc = calc or ResourceCalculator()
    root, cluster, apps = build(q, **kw)  # type: ignore[arg-type]
    allowed = rm.multiply(cluster, conf.total_preemption_per_round)
    compute_ideal_allocation(calc, cluster, root, allowed, conf)
    selected, _ = select_candidates(calc, cluster, root, allowed)
    return [len(selected.get(a.attempt_id, [])) for a in apps]


def test_ignore_without_demand() -> None:
    """testIgnore: no imbalance is corrected without pending demand."""
    q = [
        [100, 40, 40, 20],
        [100, 100, 100, 100],
        [100, 0, 60, 40],
        [0, 0, 0, 0],
        [0, 0, 0, 0],
        [3, 1, 1, 1],
        [-1, 1, 1, 1],
        [3, 0, 0, 0],
    ]
    assert preempted(q) == [0, 0, 0]


def test_proportional_preemption() -> None:
    """testProportionalPreemption: A (10 % guaranteed, using 30) gives back 10."""
    q = [
        [100, 10, 40, 20, 30],
        [100, 100, 100, 100, 100],
        [100, 30, 60, 10, 0],
        [45, 20, 5, 20, 0],
        [0, 0, 0, 0, 0],
        [3, 1, 1, 1, 0],
        [-1, 1, 1, 1, 1],
        [4, 0, 0, 0, 0],
    ]
    assert preempted(q) == [10, 0, 0]


def test_max_capacity_caps_what_a_queue_can_claim() -> None:
    """testMaxCap: B is at its maximum, so A's excess is not taken for it."""
    q = [
        [100, 40, 40, 20],
        [100, 100, 45, 100],
        [100, 55, 45, 0],
        [20, 10, 10, 0],
        [0, 0, 0, 0],
        [2, 1, 1, 0],
        [-1, 1, 1, 0],
        [3, 0, 0, 0],
    ]
    assert preempted(q)[0] == 0


def test_preempt_cycle() -> None:
    """testPreemptCycle: A's 10 pending are taken from C (20 % over)."""
    q = [
        [100, 40, 40, 20],
        [100, 100, 100, 100],
        [100, 0, 60, 40],
        [10, 10, 0, 0],
        [0, 0, 0, 0],
        [3, 1, 1, 1],
        [-1, 1, 1, 1],
        [3, 0, 0, 0],
    ]
    assert preempted(q) == [0, 0, 10]


def test_deadzone() -> None:
    """testDeadzone: usage within max_ignored_over_capacity is left alone."""
    q = [
        [100, 40, 40, 20],
        [100, 100, 100, 100],
        [100, 39, 43, 21],
        [10, 10, 0, 0],
        [0, 0, 0, 0],
        [3, 1, 1, 1],
        [-1, 1, 1, 1],
        [3, 0, 0, 0],
    ]
    assert preempted(q) == [0, 0, 0]


def test_per_queue_disable_preemption() -> None:
    """testPerQueueDisablePreemption: a disabled queue keeps its excess and
    the others give back more; with it enabled both give back."""
    q = [
        [100, 55, 25, 20],
        [100, 100, 100, 100],
        [100, 0, 54, 46],
        [10, 10, 0, 0],
        [0, 0, 0, 0],
        [3, 1, 1, 1],
        [-1, 1, 1, 1],
        [3, 0, 0, 0],
    ]
    assert preempted(q, disabled={"root.queueB": True}) == [0, 0, 10]
    assert preempted(q) == [0, 4, 6]


def test_per_queue_disable_preemption_hierarchical() -> None:
    """testPerQueueDisablePreemptionHierarchical: take from B (parent A over
    capacity), not E; with B disabled, from E."""
    q = [
        [200, 100, 50, 50, 100, 10, 90],
        [200, 200, 200, 200, 200, 200, 200],
        [200, 110, 60, 50, 90, 90, 0],
        [10, 0, 0, 0, 10, 0, 10],
        [0, 0, 0, 0, 0, 0, 0],
        [4, 2, 1, 1, 2, 1, 1],
        [-1, -1, 1, 1, -1, 1, 1],
        [2, 2, 0, 0, 2, 0, 0],
    ]
    assert preempted(q) == [10, 0, 0, 0]
    assert preempted(q, disabled={"root.queueA.queueB": True}) == [0, 0, 10, 0]


def test_per_queue_disable_preemption_broad_hierarchical() -> None:
    """testPerQueueDisablePreemptionBroadHierarchical: 27 from B and 23 from
    E; all 50 from E when B is disabled; nothing when B and E are."""
    q = [
        [1000, 350, 150, 200, 400, 200, 200, 250, 100, 150],
        [1000] * 10,
        [1000, 400, 200, 200, 400, 250, 150, 200, 150, 50],
        [50, 0, 0, 0, 50, 0, 50, 0, 0, 0],
        [0] * 10,
        [6, 2, 1, 1, 2, 1, 1, 2, 1, 1],
        [-1, -1, 1, 1, -1, 1, 1, -1, 1, 1],
        [3, 2, 0, 0, 2, 0, 0, 2, 0, 0],
    ]
    assert preempted(q) == [27, 0, 23, 0, 0, 0]
    assert preempted(q, disabled={"root.queueA.queueB": True}) == [0, 0, 50, 0, 0, 0]
    both = {"root.queueA.queueB": True, "root.queueD.queueE": True}
    assert preempted(q, disabled=both) == [0, 0, 0, 0, 0, 0]


def test_per_queue_disable_preemption_inherits_from_parent() -> None:
    """testPerQueueDisablePreemptionInheritParent: 17 from C and 183 from D;
    with A disabled (and so its children), F's demand starves."""
    q = [
        [1000, 500, 200, 200, 100, 500, 200, 200, 100],
        [1000] * 9,
        [1000, 700, 0, 350, 350, 300, 0, 200, 100],
        [200, 0, 0, 0, 0, 200, 200, 0, 0],
        [0] * 9,
        [5, 2, 0, 1, 1, 3, 1, 1, 1],
        [-1, -1, 1, 1, 1, -1, 1, 1, 1],
        [2, 3, 0, 0, 0, 3, 0, 0, 0],
    ]
    assert preempted(q) == [17, 183, 0, 0, 0]
    assert preempted(q, disabled={"root.queueA": True}) == [0, 0, 0, 0, 0]


def test_root_disables_all() -> None:
    """testPerQueueDisablePreemptionRootDisablesAll."""
    q = [
        [1000, 500, 250, 250, 250, 100, 150, 250, 100, 150],
        [1000] * 10,
        [1000, 20, 0, 20, 490, 240, 250, 490, 240, 250],
        [200, 200, 200, 0, 0, 0, 0, 0, 0, 0],
        [0] * 10,
        [6, 2, 1, 1, 2, 1, 1, 2, 1, 1],
        [-1, -1, 1, 1, -1, 1, 1, -1, 1, 1],
        [3, 2, 0, 0, 2, 0, 0, 2, 0, 0],
    ]
    assert preempted(q, disabled={"root": True}) == [0] * 6


def test_over_capacity_imbalance_is_not_corrected() -> None:
    """testOverCapacityImbalance: both over guarantee, no preemption."""
    q = [
        [100, 40, 40, 20],
        [100, 100, 100, 100],
        [100, 55, 45, 0],
        [20, 10, 10, 0],
        [0, 0, 0, 0],
        [2, 1, 1, 0],
        [-1, 1, 1, 0],
        [3, 0, 0, 0],
    ]
    assert preempted(q)[0] == 0


def test_natural_termination_factor() -> None:
    """testNaturalTermination: a small factor leaves a 10 % imbalance alone."""
    q = [
        [100, 40, 40, 20],
        [100, 100, 100, 100],
        [100, 55, 45, 0],
        [20, 10, 10, 0],
        [0, 0, 0, 0],
        [2, 1, 1, 0],
        [-1, 1, 1, 0],
        [3, 0, 0, 0],
    ]
    assert preempted(q, replace(CONF, natural_termination_factor=0.1)) == [0, 0]


def test_hierarchical() -> None:
    """testHierarchical: take from A's child B, not from E although E is far
    over its own guarantee (its parent D is not)."""
    q = [
        [200, 100, 50, 50, 100, 10, 90],
        [200, 200, 200, 200, 200, 200, 200],
        [200, 110, 60, 50, 90, 90, 0],
        [10, 0, 0, 0, 10, 0, 10],
        [0, 0, 0, 0, 0, 0, 0],
        [4, 2, 1, 1, 2, 1, 1],
        [-1, -1, 1, 1, -1, 1, 1],
        [2, 2, 0, 0, 2, 0, 0],
    ]
    assert preempted(q) == [10, 0, 0, 0]


def test_hierarchical_with_reserved() -> None:
    """testHierarchicalWithReserved: B's reservations count towards what it
    gives back (and are dropped)."""
    q = [
        [200, 100, 50, 50, 100, 10, 90],
        [200, 200, 200, 200, 200, 200, 200],
        [200, 110, 60, 50, 90, 90, 0],
        [10, 0, 0, 0, 10, 0, 10],
        [40, 25, 15, 10, 15, 15, 0],
        [4, 2, 1, 1, 2, 1, 1],
        [-1, -1, 1, 1, -1, 1, 1],
        [2, 2, 0, 0, 2, 0, 0],
    ]
    assert preempted(q)[0] == 10


def test_zero_guarantee() -> None:
    """testZeroGuar: nothing is taken from A's child for a zero-guarantee queue."""
    q = [
        [200, 100, 0, 99, 100, 10, 90],
        [200, 200, 200, 200, 200, 200, 200],
        [170, 80, 60, 20, 90, 90, 0],
        [10, 0, 0, 0, 10, 0, 10],
        [0, 0, 0, 0, 0, 0, 0],
        [4, 2, 1, 1, 2, 1, 1],
        [-1, -1, 1, 1, -1, 1, 1],
        [2, 2, 0, 0, 2, 0, 0],
    ]
    assert preempted(q)[0] == 0


def test_zero_guarantee_queues_do_not_preempt_each_other() -> None:
    """testZeroGuarOverCap."""
    q = [
        [200, 100, 0, 100, 0, 100, 100],
        [200, 200, 200, 200, 200, 200, 200],
        [170, 170, 60, 20, 90, 0, 0],
        [85, 50, 30, 10, 10, 20, 20],
        [0, 0, 0, 0, 0, 0, 0],
        [4, 3, 1, 1, 1, 1, 1],
        [-1, -1, 1, 1, 1, -1, 1],
        [2, 3, 0, 0, 0, 1, 0],
    ]
    assert preempted(q)[:4] == [0, 0, 0, 0]


def test_hierarchical_large() -> None:
    """testHierarchicalLarge: 9 from A's B and 6 from G's H (Hadoop notes the
    rounding of Resources.multiply in these counts)."""
    q = [
        [400, 200, 60, 140, 100, 70, 30, 100, 10, 90],
        [400] * 10,
        [400, 210, 70, 140, 100, 50, 50, 90, 90, 0],
        [15, 0, 0, 0, 0, 0, 0, 0, 0, 15],
        [0] * 10,
        [6, 2, 1, 1, 2, 1, 1, 2, 1, 1],
        [-1, -1, 1, 1, -1, 1, 1, -1, 1, 1],
        [3, 2, 0, 0, 2, 0, 0, 2, 0, 0],
    ]
    counts = preempted(q)
    assert counts[0] == 9  # appA in queueB
    assert counts[4] == 6  # appE in queueH


def test_skip_am_containers() -> None:
    """testSkipAMContainer: AM containers are taken last; the newest apps
    give up everything else first."""
    q = [
        [100, 50, 50],
        [100, 100, 100],
        [100, 100, 0],
        [70, 20, 50],
        [0, 0, 0],
        [5, 4, 1],
        [-1, 1, 1],
        [2, 0, 0],
    ]
    a, b, c, d, _ = preempted(q, am_containers=True)
    assert (d, c, b) == (24, 24, 2)
    assert a == 0


def test_preempt_skipped_am_containers() -> None:
    """testPreemptSkippedAMContainers: when needed, AM containers go too."""
    q = [
        [100, 10, 90],
        [100, 100, 100],
        [100, 100, 0],
        [70, 20, 90],
        [0, 0, 0],
        [5, 4, 1],
        [-1, 5, 5],
        [2, 0, 0],
    ]
    assert preempted(q, am_containers=True) == [4, 4, 5, 5, 0]


def test_am_resource_percent_keeps_some_am_containers() -> None:
    """testAMResourcePercentForSkippedAMContainers: AM containers are kept
    while they fit in the queue's AM share."""
    q = [
        [100, 10, 90],
        [100, 100, 100],
        [100, 100, 0],
        [70, 20, 90],
        [0, 0, 0],
        [5, 4, 1],
        [-1, 5, 5],
        [2, 0, 0],
    ]
    a, b, c, d, _ = preempted(q, am_containers=True, am_percent=0.5)
    assert (d, c) == (5, 5)
    assert (a, b) == (4, 4)


def test_container_ordering() -> None:
    """testContainerOrdering: lowest priority first, then newest container."""

    def c(cid: int, priority: int) -> RMContainer:
        return RMContainer(
            f"container_0_0010_01_{cid:06d}", "a", "app", "n", R(1), priority, "x", False, 0
        )

    rm1, rm2, rm3, rm4, rm5 = c(5, 3), c(3, 3), c(2, 2), c(1, 2), c(4, 1)
    ordered = sorted([rm3, rm2, rm1, rm5, rm4], key=container_order_key)
    assert ordered == [rm1, rm2, rm3, rm4, rm5]


def test_drf_preemption_uses_dominant_shares() -> None:
    """With the DominantResourceCalculator, queues are compared by dominant
    share: B over its vcores guarantee gives back to A."""
    q = [
        [100, 50, 50],
        [100, 100, 100],
        [100, 0, 100],
        [50, 50, 0],
        [0, 0, 0],
        [2, 1, 1],
        [-1, 1, 1],
        [2, 0, 0],
    ]
    assert preempted(q, calc=DominantResourceCalculator()) == [0, 50]


def test_drf_ideal_allocation_shares_out_every_resource_type() -> None:
    """The fixpoint offers each needy queue its guarantee-weighted part of
    what is left in every resource type (normalizedGuarantee per type), so a
    queue that needs gpus is assigned gpus: B, guaranteed half of 10 gpus and
    asking for 5 while A holds all 10, is given its 5 gpus and A is to give
    back 5. (Resources.min picks a whole vector, so B's offer of half of
    what A leaves, <45, 45, 3 gpus>, is taken whole, then the last 2 gpus;
    Hadoop 3.4.2's PreemptableResourceCalculator gives the same.)"""
    cluster = Resource(100, 100, {"gpu": 10})
    half = Resource(50, 50, {"gpu": 5})
    pending = Resource(10, 10, {"gpu": 5})
    a = TempQueue("root.a", half, cluster, Resource(10, 10, {"gpu": 10}), abs_capacity=0.5)
    b = TempQueue(
        "root.b",
        half,
        cluster,
        ZERO,
        pending=pending,
        pending_deduct_reserved=pending,
        abs_capacity=0.5,
    )
    root = TempQueue("root", cluster, cluster, a.used, abs_capacity=1.0)
    root.add_child(a)
    root.add_child(b)
    compute_ideal_allocation(DominantResourceCalculator(), cluster, root, cluster, CONF)
    assert b.ideal_assigned == Resource(45, 45, {"gpu": 5})
    assert a.ideal_assigned == Resource(55, 55, {"gpu": 5})
    assert dict(a.to_be_preempted.extra) == {"gpu": 5}


def _leaf(name: str, guaranteed: Resource, used: Resource, abs_capacity: float) -> TempQueue:
    t = TempQueue(name, guaranteed, Resource(24576, 24), used)
    t.abs_capacity = abs_capacity  # set as an attribute: older TempQueues lack the field
    return t


def test_guarantee_rounded_to_zero_in_a_type_is_shared_by_absolute_capacity() -> None:
    """root.a (9 %) has a1 (91 % of a) and a2 (9 % of a) on <24 GB, 24
    vcores>: a2's vcore guarantee, 0.81 % of 24, rounds down to 0. Both
    leaves are over their guarantees and want nothing more. In a's ideal
    allocation a2 is offered vcores by its absolute capacity where a needy
    queue's guarantee of a type is 0, and all that is left once it alone
    wants more (resetCapacity), so it keeps its two vcores and nothing is
    preempted, as Hadoop 3.4.2 finds; weighing vcores by guarantees alone
    gives a2 none and takes a container from it."""
    calc = DominantResourceCalculator()
    cluster = Resource(24576, 24)
    a1 = _leaf("root.a.a1", Resource(2012, 1), Resource(2048, 4), 0.0819)
    a2 = _leaf("root.a.a2", Resource(199, 0), Resource(2048, 2), 0.0081)
    a = _leaf("root.a", Resource(2211, 2), Resource(4096, 6), 0.09)
    a.add_child(a1)
    a.add_child(a2)
    root = TempQueue("root", cluster, cluster, a.used)
    root.add_child(a)
    for name, g, cap in (("b", Resource(2949, 2), 0.12), ("c", Resource(9093, 8), 0.37)):
        root.add_child(_leaf(f"root.{name}", g, ZERO, cap))
    root.add_child(_leaf("root.d", Resource(10321, 10), ZERO, 0.42))
    conf = PreemptionConf(enabled=True)
    compute_ideal_allocation(calc, cluster, root, rm.multiply(cluster, 0.1), conf)
    assert a2.ideal_assigned == a2.used
    assert a1.ideal_assigned == a1.used
    assert a2.actually_to_be_preempted == ZERO
    assert a1.actually_to_be_preempted == ZERO


def test_reset_capacity_normalization_strategies() -> None:
    """resetCapacity per resource type: guarantees where none of the needy
    queues' is 0, absolute capacities where one is 0 and the total is
    not, equal parts where the total is 0; in Java floats."""
    q1 = TempQueue("q1", Resource(2012, 1), ZERO, ZERO, abs_capacity=0.0819)
    q2 = TempQueue("q2", Resource(199, 0), ZERO, ZERO, abs_capacity=0.0081)
    _reset_capacity([q1, q2], ["memory-mb", "vcores"], False)
    assert q1.normalized_guarantee["memory-mb"] == rm.f32(rm.f32(2012) / rm.f32(2211))
    assert q1.normalized_guarantee["vcores"] == rm.f32(rm.f32(0.0819) / rm.f32(0.09))
    assert q2.normalized_guarantee["vcores"] == rm.f32(rm.f32(0.0081) / rm.f32(0.09))
    _reset_capacity([q2], ["memory-mb", "vcores"], False)
    assert q2.normalized_guarantee == {"memory-mb": 1.0, "vcores": 1.0}


class _Ctx:
    def __init__(self) -> None:
        self.now = 0
        self.dispatched: list[str] = []
        self.containers: dict[str, RMContainer] = {}

    def now_ms(self) -> int:
        return self.now

    def dispatch(self, kind: str, etype: str, target: str, data: object = None) -> None:
        self.dispatched.append(f"{etype}:{target}")


class _Sched:
    """What the policy reads from the scheduler, from a fixed matrix."""

    def __init__(self, q: list[list[int]]) -> None:
        self.q = q
        self.calc = ResourceCalculator()
        _, self.cluster, apps = build(q)
        self.apps = {a.attempt_id: a for a in apps}
        self.nodes: dict[str, object] = {}
        self.ctx = _Ctx()
        self.ctx.containers = {cid: c for a in apps for cid, c in a.live.items()}

    def preemption_snapshot(self) -> TempQueue:
        root, _, apps = build(self.q)
        by_id = {a.attempt_id: a for a in apps}
        for leaf in root.leaves():
            leaf.apps = [self.apps[by_id[a.attempt_id].attempt_id] for a in leaf.apps]
        return root


def test_expire_kill_after_max_wait() -> None:
    """testExpireKill: the AM is first told (preemption contract), requests
    are not repeated, and containers still selected after
    max_wait_before_kill are killed."""
    q = [
        [100, 40, 40, 20],
        [100, 100, 100, 100],
        [100, 0, 60, 40],
        [10, 10, 0, 0],
        [0, 0, 0, 0],
        [3, 1, 1, 1],
        [-1, 1, 1, 1],
        [3, 0, 0, 0],
    ]
    sched = _Sched(q)
    policy = PreemptionPolicy(CONF)
    app_c = sched.apps["appattempt_0_0002_000001"]
    policy.edit_schedule(sched)  # type: ignore[arg-type]
    assert len(app_c.to_preempt) == 10
    assert sched.ctx.dispatched == []
    sched.ctx.now = 5_000
    policy.edit_schedule(sched)  # type: ignore[arg-type]
    assert len(app_c.to_preempt) == 10 and sched.ctx.dispatched == []
    sched.ctx.now = 10_001
    policy.edit_schedule(sched)  # type: ignore[arg-type]
    assert len(sched.ctx.dispatched) == 10
    assert all(e.startswith("KILL_PREEMPTED:container_0_0002_") for e in sched.ctx.dispatched)


def test_observe_only() -> None:
    """testObserveOnly: even a severe imbalance is only observed."""
    q = [
        [100, 40, 40, 20],
        [100, 100, 100, 100],
        [100, 90, 10, 0],
        [80, 10, 20, 50],
        [0, 0, 0, 0],
        [2, 1, 1, 0],
        [-1, 1, 1, 0],
        [3, 0, 0, 0],
    ]
    sched = _Sched(q)
    policy = PreemptionPolicy(replace(CONF, observe_only=True))
    for t in (0, 20_000):
        sched.ctx.now = t
        policy.edit_schedule(sched)  # type: ignore[arg-type]
    assert sched.ctx.dispatched == []
    assert all(not a.to_preempt for a in sched.apps.values())


def test_reservations_are_dropped_in_the_attempts_hashmap_order() -> None:
    """FifoCandidatesSelector.preemptFrom drops an app's reserved containers
    in getReservedContainers order: a HashMap<NodeId, RMContainer> per
    scheduler key, whose table keeps the size of its peak. An app that
    reserved node7, node3, node8 and node4, then gave node8's up, lists
    node4, node7, node3; a queue that must give up less than one container
    loses the reservation on node4 (not node3, first by name)."""
    from emu.rm.scheduler.capacity import allocator

    sapp = SchedulerApp(
        "appattempt_0_0001_000001", "application_0_0001", "q", "u", 0, 1, ZERO, 0, 0
    )
    for n, host in enumerate(["node7", "node3", "node4"], 1):
        c = RMContainer(
            f"container_0_0001_01_{n:06d}",
            sapp.attempt_id,
            sapp.app_id,
            host,
            R(3),
            20,
            "OFF_SWITCH",
            False,
            0,
        )
        c.state = ContainerState.RESERVED
        sapp.reservations[host] = c
    st = CapacityHarness({}).sched.alloc
    st.reservation_peaks[(sapp.attempt_id, 20)] = 4
    held = allocator.reserved_containers(st, sapp)
    assert [c.node_id for c in held] == ["node4", "node7", "node3"]

    calc = DominantResourceCalculator()
    root = TempQueue("root", R(100), R(100), R(9))
    leaf = TempQueue("root.a", R(50), R(100), R(9))
    leaf.apps = [sapp]
    leaf.reservations = {sapp.attempt_id: held}
    leaf.actually_to_be_preempted = R(1)
    root.add_child(leaf)
    selected, dropped = select_candidates(calc, R(100), root, R(100))
    assert [c.node_id for c in dropped] == ["node4"]
    assert [c.node_id for c in selected[sapp.attempt_id]] == ["node4"]


def test_leaves_are_visited_in_the_hashset_order_of_their_paths() -> None:
    """FifoCandidatesSelector walks ProportionalCapacityPreemptionPolicy's
    leafQueueNames, a HashSet of queue paths: root.a, root.b.b1, ...,
    root.d iterate as root.b.b1, root.d, root.a, root.b.b3, root.b.b2,
    root.c. When root.a and root.b.b1 both give up something and the
    round's allowance holds one container, root.b.b1's goes (not root.a's,
    first in the tree)."""
    from emu.rm.scheduler.capacity.preemption import leaf_queue_order

    calc = ResourceCalculator()
    root = TempQueue("root", R(100), R(100), R(8))
    b = TempQueue("root.b", R(50), R(100), R(4))
    apps: dict[str, SchedulerApp] = {}
    leaves = {}
    for seq, path in enumerate(["root.a", "root.b.b1", "root.b.b2", "root.b.b3", "root.c"], 1):
        leaf = TempQueue(path, R(10), R(100), R(4))
        sapp = _app(seq, 4, 0, 4, False)
        leaf.apps = [sapp]
        apps[path] = sapp
        leaves[path] = leaf
        (b if path.startswith("root.b.") else root).add_child(leaf)
        if path == "root.a":
            root.add_child(b)
    root.add_child(TempQueue("root.d", R(10), R(100), ZERO))
    assert [q.name for q in leaf_queue_order(root)] == [
        "root.b.b1",
        "root.d",
        "root.a",
        "root.b.b3",
        "root.b.b2",
        "root.c",
    ]
    leaves["root.a"].actually_to_be_preempted = R(1)
    leaves["root.b.b1"].actually_to_be_preempted = R(1)
    selected, _ = select_candidates(calc, R(100), root, R(4))
    assert list(selected) == [apps["root.b.b1"].attempt_id]


async def test_fair_leaf_is_re_sorted_before_the_policy_reads_it(autojump_clock: object) -> None:
    """FifoCandidatesSelector takes a leaf's apps through
    OrderingPolicy.getPreemptionIterator, which first re-sorts the apps
    whose containers came or went (reorderScheduleEntities): an app that
    gave back containers since the queue last assigned one is read at its
    usage now. app1 (3 GB) and app2 (2 GB) are sorted; app1 then releases
    two containers, so the newest-first walk starts at app2 (2 GB), not at
    app1 (its stale 3 GB)."""
    from emu.rm.scheduler.capacity.preemption_snapshot import snapshot
    from emu.testing.capacity import GB, Q

    h = CapacityHarness(
        {
            Q + "root.queues": "a",
            Q + "root.a.capacity": 100,
            Q + "root.a.ordering-policy": "fair",
        },
        **{
            **MONITOR_ON,
        },
    )
    node = h.node("n1", 16 * GB)
    app1 = h.submit("a", "u")
    app2 = h.submit("a", "u")
    h.ask(app1, GB, 3)
    h.ask(app2, GB, 2)
    for _ in range(5):
        h.assign_leaf("a", node)
    assert (app1.used.memory, app2.used.memory) == (3 * GB, 2 * GB)
    h.assign_leaf("a", node)  # sorts both by their usage now
    for c in sorted(app1.live.values(), key=lambda c: c.container_id)[:2]:
        h.sched.complete_container(c, 0, "", "KILL")
    leaf = snapshot(h.sched).children[0]
    assert [a.attempt_id for a in reversed(leaf.apps)] == [app2.attempt_id, app1.attempt_id]


async def test_intra_queue_fair_order_within_a_user_is_re_sorted(
    autojump_clock: object,
) -> None:
    """IntraQueueCandidatesSelector under the fair ordering policy
    (userlimit_first) orders one user's apps with the policy's own
    comparator (TAFairOrderingComparator, over the usage the apps were last
    sorted by); FifoCandidatesSelector has re-sorted them just before
    (getPreemptionIterator calls reorderScheduleEntities), so an app that
    gave back containers since the queue last assigned one is ordered by
    its usage now. alice's app1 (5 GB) and app2 (6 GB) were sorted app1
    first; app2 then releases 3 GB, so app2 (3 GB) comes first, takes its
    share of alice's ideal assignment, and bob's demand is met from app1,
    not from app2 (as by the stale order)."""
    from emu.testing.capacity import GB, Q

    pre = "yarn.resourcemanager.monitor.capacity.preemption."
    h = CapacityHarness(
        {
            Q + "root.queues": "a",
            Q + "root.a.capacity": 100,
            Q + "root.a.ordering-policy": "fair",
            Q + "root.a.minimum-user-limit-percent": 50,
        },
        **{
            **MONITOR_ON,
            pre + "total_preemption_per_round": 1.0,
            pre + "intra-queue-preemption.enabled": "true",
            pre + "intra-queue-preemption.max-allowable-limit": 1.0,
        },
    )
    node = h.node("n1", 12 * GB)
    app1 = h.submit("a", "alice")
    app2 = h.submit("a", "alice")
    h.ask(app1, GB, 5)
    h.ask(app2, GB, 6)
    for _ in range(11):
        h.assign_leaf("a", node)
    bob = h.submit("a", "bob")
    h.ask(bob, GB, 1)
    h.assign_leaf("a", node)  # sorts alice's apps by their usage now
    assert (app1.used.memory, app2.used.memory, bob.used.memory) == (5 * GB, 6 * GB, GB)
    h.ask(bob, GB, 5)
    for c in sorted(app2.live.values(), key=lambda c: c.container_id)[:3]:
        h.sched.complete_container(c, 0, "", "KILL")
    policy = h.sched.preemption
    assert policy is not None
    policy.edit_schedule(h.sched)
    marked = [h.sched.ctx.containers[cid].attempt_id for cid in policy.marked]
    assert marked == [app1.attempt_id]

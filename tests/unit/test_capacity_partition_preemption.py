"""ProportionalCapacityPreemptionPolicy per node partition, on the layout
of Hadoop's TestProportionalCapacityPreemptionPolicyForNodePartitions
(testNodePartitionPreemptionRespectGuaranteedCapacity): queues a and b,
guaranteed half of each partition; node n1 (100) is partition x, node n2
(100) the default one. app1 (a) uses 80 on n1, app2 (a) 20 on n2, app3 (b)
20 on n1, app4 (b) 80 on n2; both queues ask 50 more in each partition.
Each partition gives back what it holds above its owner's guarantee there:
30 from app1 on n1 and 30 from app4 on n2. Intra-queue preemption in a
partition takes only containers on that partition's nodes."""

from __future__ import annotations

from dataclasses import replace

from emu.resources import ZERO, Resource, ResourceCalculator
from emu.rm.container import RMContainer
from emu.rm.scheduler.capacity import intra_preemption
from emu.rm.scheduler.capacity.config import PRIORITY_FIRST, PreemptionConf
from emu.rm.scheduler.capacity.intra_preemption import IntraLeaf
from emu.rm.scheduler.capacity.preemption import (
    TempQueue,
    compute_ideal_allocation,
    container_order_key,
    select_candidates,
)
from emu.rm.scheduler.scheduler_app import SchedulerApp

CONF = PreemptionConf(
    enabled=True,
    max_wait_before_kill_ms=10_000,
    total_preemption_per_round=1.0,
    natural_termination_factor=1.0,
    max_ignored_over_capacity=0.1,
)
CALC = ResourceCalculator()
CLUSTER = Resource(200, 200)


def R(x: int) -> Resource:
    return Resource(x, x)


def _app(seq: int, node: str, used: int) -> SchedulerApp:
    app_id = f"application_0_{seq:04d}"
    sapp = SchedulerApp(f"appattempt_0_{seq:04d}_000001", app_id, "q", "u", 0, seq, ZERO, 0, 0)
    for n in range(1, used + 1):
        c = RMContainer(
            f"container_0_{seq:04d}_01_{n:06d}",
            sapp.attempt_id,
            app_id,
            node,
            R(1),
            1,
            "OFF_SWITCH",
            False,
            0,
        )
        sapp.live[c.container_id] = c
    return sapp


def _tree(partition: str, used_a: int, used_b: int) -> TempQueue:
    half, whole = R(50), R(100)
    a = TempQueue("root.a", half, whole, R(used_a), R(50), R(50), partition=partition)
    b = TempQueue("root.b", half, whole, R(used_b), R(50), R(50), partition=partition)
    a.abs_capacity = b.abs_capacity = 0.5
    root = TempQueue("root", whole, whole, R(used_a + used_b), partition=partition, total=whole)
    root.add_child(a)
    root.add_child(b)
    return root


def _layout() -> tuple[TempQueue, list[SchedulerApp]]:
    apps = [_app(1, "n1", 80), _app(2, "n2", 20), _app(3, "n1", 20), _app(4, "n2", 80)]
    root = _tree("", 20, 80)
    a, b = root.children
    a.apps, b.apps = apps[:2], apps[2:]
    root.partitions.append(_tree("x", 80, 20))
    root.node_partition = {"n1": "x"}
    return root, apps


def _selected(allowed: Resource, conf: PreemptionConf = CONF) -> list[list[str]]:
    root, apps = _layout()
    compute_ideal_allocation(CALC, CLUSTER, root, allowed, conf)
    selected, _ = select_candidates(CALC, CLUSTER, root, allowed)
    return [sorted(c.node_id for c in selected.get(a.attempt_id, [])) for a in apps]


def test_each_partition_gives_back_what_it_holds_above_the_guarantee() -> None:
    chosen = _selected(CLUSTER)
    assert chosen == [["n1"] * 30, [], [], ["n2"] * 30]


def test_the_round_allowance_is_shared_by_the_partitions() -> None:
    # Each partition needs 30 (within 40, so unscaled); the selector's
    # budget of 40 is spent on a's 30 on n1 first, leaving b 10 on n2.
    chosen = _selected(R(40))
    assert chosen == [["n1"] * 30, [], [], ["n2"] * 10]


def test_a_partition_without_labelled_roots_is_left_alone() -> None:
    root, apps = _layout()
    root.partitions.clear()
    compute_ideal_allocation(CALC, CLUSTER, root, CLUSTER, CONF)
    selected, _ = select_candidates(CALC, CLUSTER, root, CLUSTER)
    # only the default partition's demand: app4's 30 on n2; app1's
    # containers on n1 do not count for it.
    assert [len(selected.get(a.attempt_id, [])) for a in apps] == [0, 0, 0, 30]


def test_borrowed_containers_go_first_and_newest_first() -> None:
    root, apps = _layout()
    # app2's containers (default-partition asks) sit on n1, in partition x.
    for c in apps[1].live.values():
        c.node_id = "n1"
    a = root.children[0]
    a.ignore_exclusivity = {"x": sorted(apps[1].live.values(), key=_id)}
    a.apps = [apps[1], apps[0]]  # app1 last in scheduling order: walked first
    compute_ideal_allocation(CALC, CLUSTER, root, CLUSTER, CONF)
    selected, _ = select_candidates(CALC, CLUSTER, root, CLUSTER)
    # x wants 30 from a: app2's 20, newest first, then 10 of app1's.
    assert [_id(c) for c in selected[apps[1].attempt_id]] == sorted(
        (_id(c) for c in apps[1].live.values()), reverse=True
    )
    assert len(selected[apps[0].attempt_id]) == 10


def _id(c: RMContainer) -> str:
    return c.container_id


def _intra_leaf(low: SchedulerApp, high: SchedulerApp) -> IntraLeaf:
    """One user's leaf in partition x: low (priority 1) holds 60 there,
    high (priority 5) 20 and asks 40 more there."""
    return IntraLeaf(
        all_apps=[low, high],
        active=[low, high],
        user_used={"u": R(80)},
        user_limit=lambda user: R(100),
        used_capacity=0.8,
        disabled=False,
        fair=False,
        fair_key=lambda a: (0.0, a.order),
        minimum=R(1),
        partition="x",
        usage={low.attempt_id: (R(60), ZERO, ZERO), high.attempt_id: (R(20), ZERO, R(40))},
        app_partition={low.attempt_id: "x", high.attempt_id: "x"},
    )


def test_intra_queue_preemption_takes_only_the_partition_s_containers() -> None:
    low, high = _app(1, "n1", 60), _app(2, "n1", 20)
    low.priority, high.priority = 1, 5
    # low's newest containers are on the default partition's node n2
    for c in _app(1, "n2", 90).live.values():
        if c.container_id not in low.live:
            low.live[c.container_id] = c
    conf = replace(CONF, intra_queue_enabled=True, intra_order_policy=PRIORITY_FIRST)
    leaf = _intra_leaf(low, high)
    chosen = intra_preemption.select_candidates(
        CALC,
        CLUSTER,
        [(leaf, R(80), R(100), ZERO)],
        {},
        [CLUSTER],
        conf,
        container_order_key,
        {"n1": "x"},
    )
    taken = chosen[low.attempt_id]
    # max-allowable-limit 0.2 of the guarantee there: 20, all on n1, newest first
    assert len(taken) == 20 and {c.node_id for c in taken} == {"n1"}
    assert [_id(c) for c in taken] == sorted((_id(c) for c in taken), reverse=True)

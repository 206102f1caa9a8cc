"""Node heartbeats through the whole tree, against Hadoop's TestParentQueue
and TestCapacityScheduler/TestLeafQueue behaviours: child-queue order,
elasticity up to maximum-capacity, off-switch assignments per heartbeat,
delay scheduling and reservations."""

from __future__ import annotations

from emu.resources import Resource
from emu.testing.capacity import GB, Harness, Q, used

TWO = {Q + "root.queues": "a,b", Q + "root.a.capacity": 30, Q + "root.b.capacity": 70}
SETTINGS = {
    "yarn.scheduler.maximum-allocation-mb": 16 * GB,
    "yarn.scheduler.maximum-allocation-vcores": 32,
}


async def test_least_served_child_queue_first(autojump_clock) -> None:
    """TestParentQueue.testSingleLevelQueues: a (30 %, 6 GB of 20 GB) and
    b (70 %, 14 GB) each have plenty to ask; each assignment goes to the
    child with the lower used/guaranteed. b's guarantee is 70 % as a Java
    float (0.69999999) of 20 GB, truncated: 14,335 MB, so at 3 GB of 6 and
    7 GB of 14 the 11th goes to a, not to b by the larger-guarantee tie."""
    h = Harness({**TWO, Q + "root.a.user-limit-factor": 10, Q + "root.b.user-limit-factor": 10})
    n0, n1 = h.node("n0", 10 * GB), h.node("n1", 10 * GB)
    app_a, app_b = h.submit("a", "u"), h.submit("b", "u")
    h.ask(app_a, GB, 20)
    h.ask(app_b, GB, 20)
    order = []
    for i in range(12):
        before = used(app_a)
        assert h.assign_root(n0 if i < 10 else n1).assigned
        order.append("a" if used(app_a) > before else "b")
    assert "".join(order) == "babbabbabbab"


async def test_children_ordered_by_used_capacity_then_guarantee(autojump_clock) -> None:
    """PriorityUtilizationQueueOrderingPolicy: used capacity ascending; equal
    use goes to the larger guarantee; zero-guarantee queues come last."""
    h = Harness(
        {
            Q + "root.queues": "a,b,z",
            Q + "root.a.capacity": 40,
            Q + "root.b.capacity": 60,
            Q + "root.z.capacity": 0,
            Q + "root.a.user-limit-factor": 10,
        }
    )
    n0 = h.node("n0", 10 * GB)
    names = [q.path for q in h.sched.root.sorted_children(h.sched)]
    assert names == ["root.b", "root.a", "root.z"]
    app = h.submit("b", "u")
    h.ask(app, GB, 1)
    h.heartbeat(n0)
    names = [q.path for q in h.sched.root.sorted_children(h.sched)]
    assert names == ["root.a", "root.b", "root.z"]


async def test_used_capacity_measures_a_tiny_guarantee_as_one_container(autojump_clock) -> None:
    """CSQueueUtils.updateUsedCapacity divides usage by the guarantee or one
    minimum allocation, whichever is larger: a (5 % of 20 GB = 1 GB, below
    the 2 GB minimum) holding 2 GB is at 1.0, so it goes before b (15 % =
    3 GB, holding 4 GB: 1.33), not after it (2.0)."""
    h = Harness(
        {
            Q + "root.queues": "a,b,c",
            Q + "root.a.capacity": 5,
            Q + "root.b.capacity": 15,
            Q + "root.c.capacity": 80,
            Q + "root.a.user-limit-factor": 100,
            Q + "root.b.user-limit-factor": 100,
        },
        **{"yarn.scheduler.minimum-allocation-mb": 2 * GB},
    )
    n0 = h.node("n0", 20 * GB)
    app_a, app_b = h.submit("a", "u"), h.submit("b", "u")
    h.ask(app_a, 2 * GB, 1)
    h.ask(app_b, 2 * GB, 2)
    for _ in range(3):
        assert h.assign_root(n0).assigned
    assert (used(app_a), used(app_b)) == (2 * GB, 4 * GB)
    assert h.leaf("a").used_capacity(h.sched) == 1.0
    names = [q.path for q in h.sched.root.sorted_children(h.sched)]
    assert names == ["root.c", "root.a", "root.b"]


async def test_used_capacities_tied_as_floats_go_to_the_larger_configured_minimum(
    autojump_clock,
) -> None:
    """QueueCapacities stores the used capacity as a float: with the
    DominantResourceCalculator over 24 GB and 96 vcores, a ([7680 MB, 30
    vcores], holding 10 GB and 10 vcores) and c ([2048 MB, 9 vcores],
    holding 3 GB and 5 vcores) are both at 1.3333334 (as doubles a is a
    little above c), so PriorityQueueComparator breaks the tie by the
    configured minimum resource: a first."""
    h = Harness(
        {
            Q + "resource-calculator": (
                "org.apache.hadoop.yarn.util.resource.DominantResourceCalculator"
            ),
            Q + "root.queues": "a,b,c",
            Q + "root.a.capacity": "[memory=7680,vcores=30]",
            Q + "root.b.capacity": "[memory=4096,vcores=17]",
            Q + "root.c.capacity": "[memory=2048,vcores=9]",
        }
    )
    for i in range(6):
        h.node(f"n{i}", 4 * GB, 16)
    a, c = h.leaf("a"), h.leaf("c")
    a.used = Resource(10 * GB, 10)
    c.used = Resource(3 * GB, 5)
    assert a.used_capacity(h.sched) == c.used_capacity(h.sched)
    names = [q.path for q in h.sched.root.sorted_children(h.sched)]
    assert names == ["root.b", "root.a", "root.c"]


async def test_priority_utilization_prefers_higher_priority_under_guarantee(autojump_clock) -> None:
    """PriorityUtilizationQueueOrderingPolicy with priorities: among queues
    both under their guarantee, the higher priority goes first."""
    h = Harness(
        {
            **TWO,
            Q + "root.ordering-policy": "priority-utilization",
            Q + "root.a.priority": 1,
        }
    )
    n0 = h.node("n0", 10 * GB)
    app_b = h.submit("b", "u")
    h.ask(app_b, GB, 1)
    h.heartbeat(n0)
    names = [q.path for q in h.sched.root.sorted_children(h.sched)]
    assert names == ["root.a", "root.b"]


async def test_queue_grows_to_maximum_capacity_and_no_further(autojump_clock) -> None:
    """Elasticity (TestCapacityScheduler): an idle cluster lends a queue
    capacity up to its maximum-capacity, and no more."""
    h = Harness({**TWO, Q + "root.a.maximum-capacity": 40, Q + "root.a.user-limit-factor": 10})
    nodes = [h.node("n0", 10 * GB), h.node("n1", 10 * GB)]
    app = h.submit("a", "u")
    h.ask(app, GB, 20)
    for _ in range(10):
        for n in nodes:
            h.heartbeat(n)
    assert used(app) == 8 * GB  # 40 % of 20 GB; guarantee is 6 GB
    assert h.leaf("a").used_capacity(h.sched) > 1.3


async def test_one_off_switch_container_per_heartbeat(autojump_clock) -> None:
    """CapacityScheduler.canAllocateMore: at most
    per-node-heartbeat.maximum-offswitch-assignments (1) off-switch
    containers per node heartbeat; node-local ones are not limited."""
    h = Harness({**TWO, Q + "root.b.user-limit-factor": 10})
    n0 = h.node("n0", 10 * GB)
    app = h.submit("b", "u")
    h.ask(app, GB, 5)
    h.heartbeat(n0)
    assert len(app.live) == 1
    h1 = Harness({**TWO, Q + "root.b.user-limit-factor": 10})
    m0 = h1.node("n0", 10 * GB)
    local = h1.submit("b", "v")
    h1.ask(local, GB, 3, where="n0")
    h1.ask(local, GB, 3, where="/default")
    h1.ask(local, GB, 3)
    h1.heartbeat(m0)
    assert len(local.live) == 3

    h2 = Harness(
        {
            **TWO,
            Q + "root.b.user-limit-factor": 10,
            Q + "per-node-heartbeat.maximum-offswitch-assignments": 3,
        }
    )
    k0 = h2.node("n0", 10 * GB)
    app2 = h2.submit("b", "u")
    h2.ask(app2, GB, 5)
    h2.heartbeat(k0)
    assert len(app2.live) == 3


def _locality_harness(**extra: object) -> Harness:
    h = Harness({**TWO, Q + "root.b.user-limit-factor": 10, **{Q + k: v for k, v in extra.items()}})
    h.node("h0", 8 * GB, rack="/r0")
    h.node("h1", 8 * GB, rack="/r0")
    h.node("h2", 8 * GB, rack="/r1")
    return h


def _wants_h0(h: Harness):
    app = h.submit("b", "u")
    h.ask(app, GB, 1, where="h0")
    h.ask(app, GB, 1, where="/r0")
    h.ask(app, GB, 1)
    return app


async def test_node_local_is_immediate(autojump_clock) -> None:
    """TestLeafQueue.testLocalityScheduling: a node-local ask is met at the
    first heartbeat of its node."""
    h = _locality_harness()
    app = _wants_h0(h)
    h.heartbeat(h.sched.nodes["h0"])
    assert [c.locality for c in app.live.values()] == ["NODE_LOCAL"]


async def test_rack_local_waits_for_node_locality_delay(autojump_clock) -> None:
    """RegularContainerAllocator.canAssign(RACK_LOCAL): rack-local placement
    waits for more than min(#nodes, node-locality-delay) missed opportunities;
    rack-locality-additional-delay holds off-switch placement longer."""
    h = _locality_harness(**{"node-locality-delay": 2, "rack-locality-additional-delay": 1})
    app = _wants_h0(h)
    h2, h1 = h.sched.nodes["h2"], h.sched.nodes["h1"]
    h.heartbeat(h2)  # missed 1: off-switch needs > 3
    h.heartbeat(h1)  # missed 2: rack-local needs > 2
    assert not app.live
    h.heartbeat(h1)  # missed 3
    assert [c.locality for c in app.live.values()] == ["RACK_LOCAL"]


async def test_off_switch_waits_for_rack_locality_additional_delay(autojump_clock) -> None:
    """RegularContainerAllocator.canAssign(OFF_SWITCH): with the additional
    delay, more than min(#nodes, node delay + additional delay) missed."""
    h = _locality_harness(**{"node-locality-delay": 2, "rack-locality-additional-delay": 1})
    app = _wants_h0(h)
    h2 = h.sched.nodes["h2"]
    for _ in range(3):
        h.heartbeat(h2)
    assert not app.live
    h.heartbeat(h2)
    assert [c.locality for c in app.live.values()] == ["OFF_SWITCH"]


async def test_off_switch_default_wait_is_the_locality_wait_factor(autojump_clock) -> None:
    """Without the additional delay, off-switch waits for more than
    min(#nodes, outstanding * (locations - 1) / #nodes) = 2 * 2/3 missed."""
    h = _locality_harness()
    app = h.submit("b", "u")
    h.ask(app, GB, 2, where="h0")
    h.ask(app, GB, 2, where="/r0")
    h.ask(app, GB, 2)
    h2 = h.sched.nodes["h2"]
    h.heartbeat(h2)
    assert not app.live
    h.heartbeat(h2)
    assert len(app.live) == 1


async def test_asks_without_locality_are_not_delayed(autojump_clock) -> None:
    """canAssign(OFF_SWITCH): an ask naming only `*` is never delayed."""
    h = _locality_harness()
    app = h.submit("b", "u")
    h.ask(app, GB, 1)
    h.heartbeat(h.sched.nodes["h2"])
    assert len(app.live) == 1


def _busy_pair(h: Harness):
    n0, n1 = h.node("n0", 8 * GB), h.node("n1", 8 * GB)
    hogs = []
    for n in (n0, n1):
        hog = h.submit("a", "x")
        h.ask(hog, 6 * GB, 1)
        h.heartbeat(n)
        hogs.append(hog)
    return n0, n1, hogs


async def test_reservation_holds_the_node_until_the_ask_fits(autojump_clock) -> None:
    """TestReservations / LeafQueue: an ask that fits the queue but not the
    node reserves it; the reservation counts as the queue's usage; nothing
    else is placed on the node; it is fulfilled when room frees up."""
    h = Harness(
        {**TWO, Q + "root.a.user-limit-factor": 10, Q + "root.b.user-limit-factor": 10},
        **SETTINGS,
    )
    n0, _, hogs = _busy_pair(h)
    waiting = h.submit("b", "y")
    h.ask(waiting, 4 * GB, 1)
    h.heartbeat(n0)
    assert n0.reserved is not None and n0.reserved.attempt_id == waiting.attempt_id
    assert h.leaf("b").used.memory == 4 * GB
    assert h.leaf("b").metrics.reserved.memory == 4 * GB
    small = h.submit("a", "z")
    h.ask(small, GB, 1)
    h.heartbeat(n0)
    assert not small.live  # the node is held for the reservation
    h.release_all(hogs[0])
    h.heartbeat(n0)
    assert used(waiting) == 4 * GB and n0.reserved is None
    assert h.leaf("b").metrics.reserved.memory == 0
    assert h.leaf("b").used.memory == 4 * GB


async def test_reservation_moves_to_a_node_where_the_ask_fits(autojump_clock) -> None:
    """reservations-continue-look-all-nodes: an app holding a reservation
    takes another node where its ask fits and gives the reservation up."""
    h = Harness(
        {**TWO, Q + "root.a.user-limit-factor": 10, Q + "root.b.user-limit-factor": 10},
        **SETTINGS,
    )
    n0, n1, hogs = _busy_pair(h)
    waiting = h.submit("b", "y")
    h.ask(waiting, 4 * GB, 1)
    h.heartbeat(n0)
    assert n0.reserved is not None
    h.release_all(hogs[1])
    h.heartbeat(n1)
    assert [c.node_id for c in waiting.live.values()] == ["n1"]
    assert n0.reserved is None and h.leaf("b").used.memory == 4 * GB


async def test_reservation_is_dropped_when_the_ask_goes_away(autojump_clock) -> None:
    """allocateFromReservedContainer: no outstanding ask, no reservation."""
    h = Harness({**TWO, Q + "root.a.user-limit-factor": 10}, **SETTINGS)
    n0, _, _ = _busy_pair(h)
    app = h.submit("b", "y")
    h.ask(app, 4 * GB, 1)
    h.heartbeat(n0)
    assert n0.reserved is not None
    h.ask(app, 4 * GB, 0)
    h.heartbeat(n0)
    assert n0.reserved is None and h.leaf("b").used.memory == 0


async def test_asks_above_the_queue_maximum_allocation_are_refused(autojump_clock) -> None:
    """maximum-allocation-mb per queue: InvalidResourceRequestException."""
    import pytest

    from emu.rm.scheduler.abstract_scheduler import SchedulerError

    h = Harness({**TWO, Q + "root.a.maximum-allocation-mb": 2048})
    h.node("n0", 8 * GB)
    app = h.submit("a", "u")
    with pytest.raises(SchedulerError, match="maximum allocation"):
        h.ask(app, 4 * GB, 1)
    h.ask(app, 2 * GB, 1)

"""The headroom check of Hadoop's RegularContainerAllocator under the
DominantResourceCalculator: an ask must fit the queue's headroom in every
resource type (Resources.fitsIn), not merely have a smaller dominant share,
and a queue skipped for it hands its headroom back to the parent; a
headroom that keeps more of one resource than an ancestor has left is
caught when the proposal is committed (AbstractCSQueue.accept)."""

from __future__ import annotations

from emu.testing.capacity import GB, Harness, Q

DRF = "org.apache.hadoop.yarn.util.resource.DominantResourceCalculator"


def _harness(b_max: int = 100) -> Harness:
    return Harness(
        {
            Q + "resource-calculator": DRF,
            Q + "root.queues": "a,b",
            Q + "root.a.capacity": 50,
            Q + "root.b.capacity": 50,
            Q + "root.a.maximum-capacity": 50,
            Q + "root.b.maximum-capacity": b_max,
            Q + "root.a.user-limit-factor": 2,
            Q + "root.b.user-limit-factor": 2,
        },
        **{
            "yarn.scheduler.maximum-allocation-vcores": 16,
            "yarn.scheduler.maximum-allocation-mb": 16 * GB,
        },
    )


async def test_ask_short_of_headroom_in_vcores_skips_the_queue(autojump_clock) -> None:
    """Queue a may use (8 GB, 8 vcores); after one (1 GB, 6) container its
    headroom is (7 GB, 2): a second (1 GB, 6) ask has the smaller dominant
    share but does not fit, so the queue is skipped with its headroom."""
    h = _harness()
    n = h.node("n0", 16 * GB, 16)
    app = h.submit("a", "u")
    h.ask(app, GB, 2, vcores=6)
    assert h.assign_leaf("a", n).outcome == "ALLOCATED"
    a = h.assign_leaf("a", n)
    assert a.outcome == "QUEUE_LIMIT"
    assert a.headroom.memory == 7 * GB and a.headroom.vcores == 2
    assert len(app.live) == 1


async def test_skipped_queue_headroom_blocks_its_sibling(autojump_clock) -> None:
    """ParentQueue.assignContainersToChildQueues: a child skipped for its
    limit takes its headroom out of the limit its later siblings get. Queue
    a, at its vcores maximum with (14 GB, 0) headroom, is ordered first and
    skipped; b's limit then drops to (16 GB, 16), below the (18 GB, 2) it
    uses, so b's small ask waits although the node has room."""
    h = _harness()
    n0, n1 = h.node("n0", 16 * GB, 16), h.node("n1", 16 * GB, 16)
    big = h.submit("b", "v")
    h.ask(big, 9 * GB, 2)
    assert h.assign_root(n0).outcome == "ALLOCATED"
    assert h.assign_root(n1).outcome == "ALLOCATED"
    app = h.submit("a", "u")
    h.ask(app, GB, 3, vcores=8)
    assert h.assign_root(n0).outcome == "ALLOCATED"
    assert h.assign_root(n1).outcome == "ALLOCATED"
    small = h.submit("b", "v")
    h.ask(small, GB, 1)
    assert not h.assign_root(n0).assigned
    assert not small.live


async def test_reservation_past_the_root_is_refused_at_commit(autojump_clock) -> None:
    """AbstractCSQueue.accept, run from the leaf up when Hadoop commits a
    proposal. b is offered what the root has left, (2 GB, 9); its limit is
    the dominant-share minimum of that and its maximum, 64 % = (7864 MB, 7),
    so the maximum: a headroom of 7864 MB, more memory than the cluster has
    left. Its (3 GB, 1) ask passes the walk and reserves n2, but the root
    would then use 13 GB of 12: the proposal is refused, nothing is
    reserved. Once a's container on n2 ends, the ask fits and is placed."""
    h = Harness(
        {
            Q + "resource-calculator": DRF,
            Q + "root.queues": "a,b",
            Q + "root.a.capacity": 50,
            Q + "root.b.capacity": 50,
            Q + "root.b.maximum-capacity": 64,
            Q + "root.a.user-limit-factor": 2,
        }
    )
    n0, n1, n2 = (h.node(f"n{i}", 4 * GB, 4) for i in range(3))
    hog = h.submit("a", "u")
    h.ask(hog, 4 * GB, 2)
    h.heartbeat(n0)
    h.heartbeat(n1)
    h.ask(hog, 2 * GB, 1, priority=2)
    h.heartbeat(n2)
    assert h.sched.root.used.memory == 10 * GB and h.sched.root.used.vcores == 3
    app = h.submit("b", "v")
    h.ask(app, 3 * GB, 1)
    h.heartbeat(n2)
    assert n2.reserved is None and not app.reservations
    assert h.sched.root.used.memory == 10 * GB
    assert not h.sched.alloc.rejected
    small = next(c for c in hog.live.values() if c.node_id == "n2")
    h.sched.complete_container(small, 0, "", "KILL")
    h.heartbeat(n2)
    assert [c.node_id for c in app.live.values()] == ["n2"]

"""The headroom check of Hadoop's RegularContainerAllocator under the
DominantResourceCalculator: an ask must fit the queue's headroom in every
resource type (Resources.fitsIn), not merely have a smaller dominant share,
and a queue skipped for it hands its headroom back to the parent."""

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

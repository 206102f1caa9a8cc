"""Starvation-based preemption, as Hadoop's TestFairSchedulerPreemption: a
greedy app takes two 4 GB / 12 vcore nodes with eight 1 GB containers, a
starving app asks for 2 GB containers, in four modes (min-share or
fair-share preemption, fair or drf)."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from emu.msg.types import EXIT_PREEMPTED
from emu.resources import Resource
from emu.testing.fair import GB, FSHarness, write_alloc

MODES = [
    "MinSharePreemption",
    "MinSharePreemptionWithDRF",
    "FairSharePreemption",
    "FairSharePreemptionWithDRF",
]


def alloc_file(tmp_path: Path, mode: str) -> Path:
    fairshare = mode.startswith("FairShare")
    if fairshare:
        preemption = (
            "<fairSharePreemptionThreshold>1</fairSharePreemptionThreshold>"
            "<fairSharePreemptionTimeout>0</fairSharePreemptionTimeout>"
        )
        resources = ""
    else:
        preemption = "<minSharePreemptionTimeout>0</minSharePreemptionTimeout>"
        resources = "<minResources>4096mb,4vcores</minResources>"
    children = f'<queue name="child-1">{resources}</queue><queue name="child-2">{resources}</queue>'
    body = (
        f'<queue name="preemptable">{preemption}{children}</queue>'
        f'<queue name="preemptable-sibling">{preemption}</queue>'
        f'<queue name="nonpreemptable"><allowPreemptionFrom>false</allowPreemptionFrom>'
        f"{preemption}{children}</queue>"
    )
    if mode.endswith("DRF"):
        body += "<defaultQueueSchedulingPolicy>drf</defaultQueueSchedulingPolicy>"
    return write_alloc(tmp_path, body)


class Cluster:
    """TestFairSchedulerPreemption's setup: two nodes, waitTimeBeforeKill 0."""

    def __init__(self, tmp_path: Path, mode: str, props: dict | None = None) -> None:
        self.mode = mode
        base = {
            "yarn.scheduler.fair.preemption": "true",
            "yarn.scheduler.fair.preemption.cluster-utilization-threshold": 0,
            "yarn.scheduler.fair.waitTimeBeforeKill": 0,
        }
        self.h = FSHarness({**base, **(props or {})}, alloc=alloc_file(tmp_path, mode))
        self.h.add_node("node1", 4 * GB, 12)
        self.h.add_node("node2", 4 * GB, 12)
        self.greedy = ""
        self.starving = ""
        for child in ("child-1", "child-2"):
            assert not self.h.queue(f"nonpreemptable.{child}").preemptable

    def fill(self) -> None:
        for node in ("node1", "node2"):
            self.h.heartbeat(node, 4)

    def take_all(self, queue: str) -> None:
        self.greedy = self.h.request(GB, queue, "default", num=8)
        self.fill()
        assert self.h.live(self.greedy) == 8

    async def preempt_half(self, queue: str, memory: int = 2 * GB, vcores: int = 2) -> None:
        self.starving = self.h.request(memory, queue, "default", num=4, vcores=vcores)
        await trio.sleep(1)
        self.h.update()

    def verify(self, starved: int, greedy: int) -> None:
        h = self.h
        assert h.live(self.greedy) == greedy
        assert h.fsapp(self.greedy).queue.name in h.sched.queues
        metrics = h.sched.queue_metrics(h.fsapp(self.greedy).queue.name)
        assert metrics.preempted_containers == 8 - greedy
        if greedy < 8:
            kept = [s.for_app for s in h.sched.preempt_nodes.values()]
            assert any(self.starving in m for m in kept)
        self.fill()
        assert h.live(self.starving) == starved
        assert not any(self.starving in s.for_app for s in h.sched.preempt_nodes.values())


@pytest.mark.parametrize("mode", MODES)
async def test_preemption_within_same_leaf_queue(tmp_path: Path, mode: str, autojump_clock):
    """TestFairSchedulerPreemption.testPreemptionWithinSameLeafQueue"""
    c = Cluster(tmp_path, mode)
    c.take_all("root.preemptable.child-1")
    await c.preempt_half("root.preemptable.child-1")
    if mode.startswith("FairShare"):
        c.verify(2, 4)
    else:
        assert c.h.live(c.greedy) == 8


@pytest.mark.parametrize("mode", MODES)
async def test_preemption_between_two_sibling_leaf_queues(
    tmp_path: Path, mode: str, autojump_clock
):
    """TestFairSchedulerPreemption.testPreemptionBetweenTwoSiblingLeafQueues"""
    c = Cluster(tmp_path, mode)
    c.take_all("root.preemptable.child-1")
    await c.preempt_half("root.preemptable.child-2")
    c.verify(2, 4)


@pytest.mark.parametrize("mode", MODES)
async def test_preemption_between_non_sibling_queues(tmp_path: Path, mode: str, autojump_clock):
    """TestFairSchedulerPreemption.testPreemptionBetweenNonSiblingQueues"""
    c = Cluster(tmp_path, mode)
    c.take_all("root.preemptable.child-1")
    await c.preempt_half("root.nonpreemptable.child-1")
    c.verify(2, 4)


@pytest.mark.parametrize("mode", MODES)
async def test_no_preemption_from_disallowed_queue(tmp_path: Path, mode: str, autojump_clock):
    """TestFairSchedulerPreemption.testNoPreemptionFromDisallowedQueue"""
    c = Cluster(tmp_path, mode)
    c.take_all("root.nonpreemptable.child-1")
    await c.preempt_half("root.preemptable.child-1")
    assert c.h.live(c.greedy) == 8


@pytest.mark.parametrize("mode", MODES)
async def test_preemption_select_non_am_container(tmp_path: Path, mode: str, autojump_clock):
    """TestFairSchedulerPreemption.testPreemptionSelectNonAMContainer: with two
    AM containers per node, the two preempted pairs come from different nodes."""
    c = Cluster(tmp_path, mode)
    c.take_all("root.preemptable.child-1")
    for node in c.h.sched.sorted_nodes():
        for container in list(node.containers.values())[:2]:
            container.is_am = True
    await c.preempt_half("root.preemptable.child-2")
    c.verify(2, 4)
    hosts = {x.node_id for x in c.h.sched.apps[c.starving].live.values()}
    assert hosts == {"node1", "node2"}


@pytest.mark.parametrize("mode", MODES)
async def test_app_not_preempted_below_fair_share(tmp_path: Path, mode: str, autojump_clock):
    """TestFairSchedulerPreemption.testAppNotPreemptedBelowFairShare"""
    c = Cluster(tmp_path, mode)
    c.take_all("root.preemptable.child-1")
    await c.preempt_half("root.preemptable.child-2", 3 * GB, 3)
    c.verify(1, 5)


async def test_preemption_between_sibling_queues_with_parent_at_fair_share(
    tmp_path: Path, autojump_clock
):
    """TestFairSchedulerPreemption.testPreemptionBetweenSiblingQueuesWithParentAtFairShare"""
    for mode in ("FairSharePreemption", "FairSharePreemptionWithDRF"):
        c = Cluster(tmp_path, mode)
        c.take_all("root.preemptable.child-1")
        await c.preempt_half("root.preemptable-sibling")
        c.verify(2, 4)
        await c.preempt_half("root.preemptable.child-2")
        c.verify(1, 2)


@pytest.mark.parametrize(("threshold", "greedy_left"), [(0.9, 7), (0.8, 4)])
async def test_preemption_only_above_cluster_utilization_threshold(
    tmp_path: Path, threshold: float, greedy_left: int, autojump_clock
):
    """FairScheduler.shouldAttemptPreemption (Hadoop 2.x's
    TestFairSchedulerPreemption.testPreemptionWithFreeResources): with 7 of
    8 GB used (0.875), no preemption at threshold 0.9, preemption at 0.8."""
    props = {"yarn.scheduler.fair.preemption.cluster-utilization-threshold": threshold}
    c = Cluster(tmp_path, "FairSharePreemption", props)
    c.greedy = c.h.request(GB, "root.preemptable.child-1", "default", num=7)
    c.fill()
    assert c.h.live(c.greedy) == 7
    await c.preempt_half("root.preemptable.child-2")
    assert c.h.live(c.greedy) == greedy_left


async def test_preemption_contract_comes_before_the_kill(tmp_path: Path, autojump_clock):
    """FSPreemptionThread: the victim's AM is told (allocate's preemption list)
    and the container is killed waitTimeBeforeKill later, exit PREEMPTED."""
    c = Cluster(tmp_path, "FairSharePreemption", {"yarn.scheduler.fair.waitTimeBeforeKill": 3000})
    c.take_all("root.preemptable.child-1")
    await c.preempt_half("root.preemptable.child-2")
    h = c.h
    reply = h.sched.allocate(c.greedy, [], [], [], [])
    assert len(reply.preempt) == 4
    assert h.live(c.greedy) == 8
    # starvation was found when the starving app arrived (t=0, timeout 0): kills at 3 s
    await trio.sleep(1)
    h.update()
    assert h.live(c.greedy) == 8
    await trio.sleep(1)
    h.update()
    assert h.live(c.greedy) == 4
    killed = [h.ctx.containers.get(cid) for cid in reply.preempt]
    assert killed == [None] * 4
    assert h.sched.allocate(c.greedy, [], [], [], []).preempt == []
    c.fill()
    assert h.live(c.starving) == 2
    assert EXIT_PREEMPTED == -102
    assert Resource(2 * GB, 2) in {x.resource for x in h.sched.apps[c.starving].live.values()}


def _claim(tmp_path: Path) -> tuple[FSHarness, str]:
    """A starving app for which two of the greedy app's containers on node2
    are marked, their room kept for it (FSSchedulerNode.resourcesPreemptedForApp);
    the kill is 5 s away."""
    c = Cluster(tmp_path, "FairSharePreemption", {"yarn.scheduler.fair.waitTimeBeforeKill": 5000})
    c.take_all("root.preemptable.child-1")
    starving = c.h.request(GB, "root.preemptable.child-2", "default", num=2)
    assert list(c.h.sched.preempt_nodes["node2"].for_app) == [starving]
    return c.h, starving


async def test_room_kept_for_an_app_no_longer_starved_is_given_up(tmp_path: Path, autojump_clock):
    """FSSchedulerNode.cleanupPreemptionList, on the node's heartbeat: an app
    that is not starved any more (its usage not below its fair share, no
    min-share starvation) loses the room kept for it, though it still asks."""
    h, starving = _claim(tmp_path)
    app = h.fsapp(starving)
    app.fair_share = Resource(0, 0)
    assert not app.is_starved()
    assert app.pending_demand() != Resource(0, 0)
    h.heartbeat("node2")
    assert starving not in h.sched.preempt_nodes["node2"].for_app


async def test_room_kept_for_a_starved_app_outlasts_its_asks(tmp_path: Path, autojump_clock):
    """cleanupPreemptionList keeps the room while the app is starved, even
    with nothing pending (its demand is from the last update)."""
    h, starving = _claim(tmp_path)
    app = h.fsapp(starving)
    app.demand = app.used
    assert app.is_starved()
    h.heartbeat("node2")
    assert starving in h.sched.preempt_nodes["node2"].for_app


async def test_room_kept_for_a_removed_app_held_until_the_nodes_heartbeat(
    tmp_path: Path, autojump_clock
):
    """A removed app's claim still counts in FSSchedulerNode.getTotalReserved
    until the node's next heartbeat drops it (the app is stopped)."""
    h, starving = _claim(tmp_path)
    h.remove(starving)
    assert starving in h.sched.preempt_nodes["node2"].for_app
    h.heartbeat("node1")
    assert starving in h.sched.preempt_nodes["node2"].for_app
    h.heartbeat("node2")
    assert starving not in h.sched.preempt_nodes["node2"].for_app


@pytest.mark.parametrize(
    ("min_resources", "starvation"), [("2048mb,2vcores", (0, 0)), ("4096mb,8vcores", (0, 2))]
)
async def test_min_share_starvation_component_by_component(
    tmp_path: Path, min_resources: str, starvation: tuple[int, int], autojump_clock
):
    """FSLeafQueue.minShareStarvation: componentwiseMin(minResources, demand)
    less the usage, never below 0. With <4 GB, 4> used of a <6 GB, 6>
    demand: under <2 GB, 2> nothing is missing (not <-2 GB, -2>); under
    <4 GB, 8> two vcores are (the fair policy's min of the two resources
    would have kept the minimum whole, four)."""
    alloc = write_alloc(
        tmp_path,
        f'<queue name="q"><minResources>{min_resources}</minResources>'
        "<minSharePreemptionTimeout>0</minSharePreemptionTimeout></queue>",
    )
    h = FSHarness(
        {
            "yarn.scheduler.fair.preemption": "true",
            "yarn.scheduler.fair.preemption.cluster-utilization-threshold": 0,
        },
        alloc=alloc,
    )
    h.add_node("node1", 4 * GB, 8)
    app = h.request(2 * GB, "root.q", num=3, vcores=2)
    h.heartbeat("node1", 3)
    assert h.live(app) == 2
    await trio.sleep(1)
    h.update()
    queue = h.queue("root.q")
    now = h.sched.now_ms()
    assert queue.min_share_starvation(now) == Resource(*starvation)
    assert (queue.last_time_at_min_share == now) == (starvation == (0, 0))


async def test_victims_killed_at_the_first_call_once_due(tmp_path: Path, autojump_clock):
    """PreemptContainersTask runs on a Timer waitTimeBeforeKill after the
    choice (here 1.2 s, between two updates): the node heartbeat after that
    finds the victims gone and gives their room to the starved app."""
    c = Cluster(tmp_path, "FairSharePreemption", {"yarn.scheduler.fair.waitTimeBeforeKill": 1200})
    c.take_all("root.preemptable.child-1")
    starving = c.h.request(GB, "root.preemptable.child-2", "default", num=1)
    await trio.sleep(1.1)
    c.h.heartbeat("node2")
    assert c.h.live(c.greedy) == 8
    await trio.sleep(0.1)
    c.h.heartbeat("node2")
    assert c.h.live(c.greedy) == 7
    assert c.h.live(starving) == 1


async def test_victims_due_at_an_update_are_killed_before_it(tmp_path: Path, autojump_clock):
    """A kill due at an update's time comes first (as the driver of Hadoop's
    scheduler does): the update already sees the cluster used below the
    utilization threshold (6 of 8 GB) and looks at no starved app, so the
    starving one, due a look again, is not held off once more."""
    props = {
        "yarn.scheduler.fair.waitTimeBeforeKill": 1000,
        "yarn.scheduler.fair.waitTimeBeforeNextStarvationCheck": 0,
        "yarn.scheduler.fair.preemption.cluster-utilization-threshold": 0.9,
    }
    c = Cluster(tmp_path, "FairSharePreemption", props)
    c.take_all("root.preemptable.child-1")
    starving = c.h.request(2 * GB, "root.preemptable.child-2", "default", num=1)
    assert c.h.fsapp(starving).next_starvation_check == 1000
    await trio.sleep(1)
    c.h.update()
    assert c.h.live(c.greedy) == 6
    assert c.h.fsapp(starving).next_starvation_check == 1000

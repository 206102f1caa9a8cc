"""The FairScheduler driven like Hadoop's TestFairScheduler (scheduler
events by hand, one container per heartbeat), reproducing its numbers."""

from __future__ import annotations

from pathlib import Path

import trio

from emu.resources import Resource
from emu.rm.scheduler.fair import policies
from emu.rm.scheduler.fair.arith import multiply_round_up
from emu.testing.fair import GB, FSHarness, write_alloc


async def test_simple_fair_share_calculation(autojump_clock):
    """TestFairScheduler.testSimpleFairShareCalculation"""
    h = FSHarness()
    h.add_node("n1", 10 * GB)
    h.request(10 * GB, "queue1")
    h.request(10 * GB, "queue2")
    h.request(10 * GB, "root.default")
    h.update()
    leaves = h.sched.qm.leaves
    assert len(leaves) == 3
    for q in leaves:
        assert q.fair_share.memory == 3414
        assert q.steady_fair_share.memory == 3414


async def test_fair_share_with_high_max_resources(tmp_path: Path, autojump_clock):
    """TestFairScheduler.testFairShareWithHighMaxResources"""
    alloc = write_alloc(
        tmp_path,
        '<queue name="queueA"><maxResources>1073741824 mb 1000 vcores</maxResources>'
        "<weight>.25</weight></queue>"
        '<queue name="queueB"><maxResources>1073741824 mb 1000 vcores</maxResources>'
        "<weight>.75</weight></queue>",
    )
    h = FSHarness(alloc=alloc)
    h.add_node("n1", 8 * GB, 8)
    h.request(1 * GB, "queueA")
    h.request(6 * GB, "queueB")
    h.update()
    assert h.queue("queueA").fair_share.memory == 2 * GB
    assert h.queue("queueB").fair_share.memory == 6 * GB


async def test_fair_share_with_low_max_resources(tmp_path: Path, autojump_clock):
    """TestFairScheduler.testFairShareWithLowMaxResources"""
    alloc = write_alloc(
        tmp_path,
        '<queue name="queueA"><maxResources>1024 mb 1 vcores</maxResources>'
        "<weight>0.75</weight></queue>"
        '<queue name="queueB"><maxResources>3072 mb 3 vcores</maxResources>'
        "<weight>0.25</weight></queue>",
    )
    h = FSHarness(alloc=alloc)
    h.add_node("n1", 8 * GB, 8)
    a1 = h.request(1024, "queueA", num=2)
    a2 = h.request(1024, "queueB", num=4)
    h.update()
    assert h.queue("queueA").fair_share.memory == 1 * GB
    assert h.queue("queueB").fair_share.memory == 3 * GB
    h.heartbeat("n1", 6)
    assert h.live(a1) == 1
    assert h.live(a2) == 3


async def test_child_max_resources(tmp_path: Path, autojump_clock):
    """TestFairScheduler.testChildMaxResources"""
    body = '<queue name="queueA" type="parent"><maxChildResources>{}</maxChildResources></queue>'
    alloc = write_alloc(tmp_path, body.format("2048mb,2vcores"))
    h = FSHarness(alloc=alloc)
    h.add_node("n1", 8 * GB, 8)
    a1 = h.request(1024, "queueA.queueB", num=8)
    a2 = h.request(1024, "queueA.queueC", num=8)
    h.update()
    h.heartbeat("n1", 8)
    assert (h.live(a1), h.live(a2)) == (2, 2)
    write_alloc(tmp_path, body.format("3072mb,3vcores"))
    assert h.sched.refresh({}) is None
    h.update()
    h.heartbeat("n1", 4)
    assert (h.live(a1), h.live(a2)) == (3, 3)
    write_alloc(tmp_path, body.format("1024mb,1vcores"))
    assert h.sched.refresh({}) is None
    h.update()
    h.heartbeat("n1")
    assert (h.live(a1), h.live(a2)) == (3, 3)  # no preemption


async def test_fair_share_with_zero_weight(tmp_path: Path, autojump_clock):
    """TestFairScheduler.testFairShareWithZeroWeight"""
    alloc = write_alloc(
        tmp_path,
        '<queue name="queueA"><weight>0.0</weight></queue>'
        '<queue name="queueB"><weight>0.0</weight></queue>',
    )
    h = FSHarness(alloc=alloc)
    h.add_node("n1", 8 * GB, 8)
    h.request(2 * GB, "queueA")
    h.request(6 * GB, "queueB")
    h.update()
    assert h.queue("queueA").fair_share.memory == 0
    assert h.queue("queueB").fair_share.memory == 0


async def test_fair_share_with_zero_weight_none_zero_min_res(tmp_path: Path, autojump_clock):
    """TestFairScheduler.testFairShareWithZeroWeightNoneZeroMinRes"""
    alloc = write_alloc(
        tmp_path,
        '<queue name="queueA"><minResources>1 mb 1 vcores</minResources><weight>0.0</weight>'
        "</queue>"
        '<queue name="queueB"><minResources>1 mb 1 vcores</minResources><weight>0.0</weight>'
        "</queue>",
    )
    h = FSHarness(alloc=alloc)
    h.add_node("n1", 8 * GB, 8)
    h.request(2 * GB, "queueA")
    h.request(6 * GB, "queueB")
    h.update()
    assert h.queue("queueA").fair_share.memory == 1
    assert h.queue("queueB").fair_share.memory == 1


async def test_fair_share_with_min_alloc(tmp_path: Path, autojump_clock):
    """TestFairScheduler.testFairShareWithMinAlloc"""
    alloc = write_alloc(
        tmp_path,
        '<queue name="queueA"><minResources>1024mb,0vcores</minResources></queue>'
        '<queue name="queueB"><minResources>2048mb,0vcores</minResources></queue>',
    )
    h = FSHarness(alloc=alloc)
    h.add_node("n1", 3 * GB)
    h.request(2 * GB, "queueA")
    h.request(2 * GB, "queueB")
    h.update()
    assert len(h.sched.qm.leaves) == 3
    assert h.queue("queueA").fair_share.memory == 1024
    assert h.queue("queueB").fair_share.memory == 2048


async def test_simple_hierarchical_fair_share_calculation(autojump_clock):
    """TestFairScheduler.testSimpleHierarchicalFairShareCalculation"""
    h = FSHarness()
    # as Hadoop's test, within the RM's scheduling wait: asks beyond the node
    # are checked against the configured maximum only
    h.sched.set_force_configured_maximum(True)
    capacity = 10 * 24
    h.add_node("n1", capacity)
    h.request(10 * GB, "parent.queue2")
    h.request(10 * GB, "parent.queue3")
    h.request(10 * GB, "root.default")
    h.update()
    assert len(h.sched.qm.leaves) == 3
    for name, share in (("default", 120), ("parent.queue2", 60), ("parent.queue3", 60)):
        assert h.queue(name).fair_share.memory == share
        assert h.queue(name).steady_fair_share.memory == share


async def test_hierarchical_queues_similar_parents(autojump_clock):
    """TestFairScheduler.testHierarchicalQueuesSimilarParents"""
    qm = FSHarness().sched.qm
    leaf = qm.get_leaf("parent.child", True)
    assert leaf is not None and leaf.name == "root.parent.child"
    assert len(qm.leaves) == 2
    assert qm.get_leaf("parent", True) is None
    assert qm.get_leaf("parent.child.grandchild", True) is None
    assert len(qm.leaves) == 2
    sister = qm.get_leaf("parent.sister", True)
    assert sister is not None and sister.name == "root.parent.sister"
    assert len(qm.leaves) == 3


async def test_steady_fair_share_with_reload_and_node_add_remove(tmp_path: Path, autojump_clock):
    """TestFairScheduler.testSteadyFairShareWithReloadAndNodeAddRemove"""
    body = (
        "<defaultQueueSchedulingPolicy>fair</defaultQueueSchedulingPolicy>"
        '<queue name="root"><schedulingPolicy>drf</schedulingPolicy>{}</queue>'
    )
    two = (
        '<queue name="child1"><weight>1</weight></queue>'
        '<queue name="child2"><weight>1</weight></queue>'
    )
    alloc = write_alloc(tmp_path, body.format(two))
    h = FSHarness(alloc=alloc)
    assert h.queue("child1").steady_fair_share.memory == 0
    h.add_node("n1", 6144)
    assert h.queue("child1").steady_fair_share.memory == 2048
    assert h.queue("child2").steady_fair_share.memory == 2048
    three = (
        '<queue name="child1"><weight>1</weight></queue>'
        '<queue name="child2"><weight>2</weight></queue>'
        '<queue name="child3"><weight>2</weight></queue>'
    )
    write_alloc(tmp_path, body.format(three))
    assert h.sched.refresh({}) is None
    assert [h.queue(f"child{i}").steady_fair_share.memory for i in (1, 2, 3)] == [1024, 2048, 2048]
    h.remove_node("n1")
    assert h.queue("child1").steady_fair_share.memory == 0
    assert h.queue("child2").steady_fair_share.memory == 0


async def test_steady_fair_share_with_queue_created_runtime(autojump_clock):
    """TestFairScheduler.testSteadyFairShareWithQueueCreatedRuntime"""
    h = FSHarness({"yarn.scheduler.fair.user-as-default-queue": "true"})
    h.add_node("n1", 6144)
    assert h.sched.qm.root.steady_fair_share.memory == 6144
    assert h.queue("default").steady_fair_share.memory == 6144
    h.submit("default", "user1")
    assert h.queue("default").steady_fair_share.memory == 3072
    assert h.queue("user1").steady_fair_share.memory == 3072


async def test_fifo_within_queue(autojump_clock):
    """TestFairScheduler.testFifoWithinQueue"""
    h = FSHarness()
    h.add_node("n1", 3072, 3)
    a1 = h.request(1024, "queue1", num=2)
    a2 = h.request(1024, "queue1", num=2)
    h.queue("queue1").policy = policies.FIFO
    h.update()
    counts = []
    for _ in range(3):
        h.heartbeat("n1")
        counts.append((h.live(a1), h.live(a2)))
    assert counts == [(1, 0), (2, 0), (2, 1)]


async def test_fixed_max_assign(autojump_clock):
    """TestFairScheduler.testFixedMaxAssign"""
    props = {
        "yarn.scheduler.fair.assignmultiple": "true",
        "yarn.scheduler.fair.dynamic.max.assign": "false",
        "yarn.scheduler.fair.max.assign": 2,
    }
    h = FSHarness(props)
    h.add_node("n1", 16384, 16)
    a = h.request(1024, "root.default", num=8)
    h.heartbeat("n1")
    assert h.live(a) == 2


async def test_dynamic_max_assign(autojump_clock):
    """TestFairScheduler.testDynamicMaxAssign: floor(8/2)+1, then floor(3/2)+1, then 1."""
    h = FSHarness(
        {"yarn.scheduler.fair.assignmultiple": "true", "yarn.scheduler.fair.max.assign": 2}
    )
    h.add_node("n1", 8192, 8)
    a = h.request(1024, "root.default", num=12)
    seen = []
    for _ in range(3):
        h.update()
        h.heartbeat("n1")
        seen.append(h.live(a))
    assert seen == [5, 7, 8]


async def test_simple_container_reservation(autojump_clock):
    """TestFairScheduler.testSimpleContainerReservation"""
    h = FSHarness()
    h.add_node("n1", 1024)
    h.request(1024, "queue1")
    h.heartbeat("n1")
    assert h.queue("queue1").usage.memory == 1024
    a = h.request(1024, "queue2")
    h.heartbeat("n1")
    assert h.queue("queue2").usage.memory == 0
    assert h.sched.apps[a].reserved_total().memory == 1024
    h.add_node("n2", 1024)
    h.heartbeat("n2")
    assert h.queue("queue2").usage.memory == 1024
    assert h.sched.apps[a].reserved_total().memory == 1024  # the old reservation stays...
    h.heartbeat("n1")
    assert h.sched.apps[a].reserved_total().memory == 0  # ...until n1 is offered


async def test_multiple_containers_waiting_for_reservation(autojump_clock):
    """TestFairScheduler.testMultipleContainersWaitingForReservation"""
    h = FSHarness()
    h.add_node("n1", 1024)
    h.request(1024, "queue1")
    h.heartbeat("n1")
    a1 = h.request(1024, "queue2", "user2")
    a2 = h.request(1024, "queue3", "user3")
    h.update()
    h.heartbeat("n1")
    assert h.sched.apps[a1].reserved_total().memory == 1024
    assert h.sched.apps[a2].reserved_total().memory == 0


async def test_reservation_threshold_gates_reservations(tmp_path: Path, autojump_clock):
    """TestFairScheduler.testReservationThresholdGatesReservations"""
    alloc = write_alloc(
        tmp_path, "<defaultQueueSchedulingPolicy>drf</defaultQueueSchedulingPolicy>"
    )
    h = FSHarness({"yarn.scheduler.reservation-threshold.increment-multiple": 2}, alloc=alloc)
    h.add_node("n1", 4096, 4)
    h.request(4096, "queue1", vcores=4)
    h.heartbeat("n1")
    assert h.queue("queue1").usage.memory == 4096
    a = h.request(1024, "queue2")
    h.heartbeat("n1")
    assert h.sched.apps[a].reservations == {}
    h.ask(a, 1024, 1, vcores=3)
    h.update()
    h.heartbeat("n1")
    assert h.sched.apps[a].reserved_total().vcores == 3
    h.add_node("n2", 1024, 4)
    h.heartbeat("n2")
    assert h.queue("queue2").usage.vcores == 3
    h.heartbeat("n1")
    assert h.sched.apps[a].reserved_total().vcores == 0


async def test_user_max_running_apps(tmp_path: Path, autojump_clock):
    """TestFairScheduler.testUserMaxRunningApps"""
    alloc = write_alloc(tmp_path, '<user name="user1"><maxRunningApps>1</maxRunningApps></user>')
    h = FSHarness(alloc=alloc)
    h.add_node("n1", 8192, 8)
    a1 = h.request(1024, "queue1", "user1")
    h.heartbeat("n1")
    assert h.live(a1) == 1
    a2 = h.request(1024, "queue1", "user1")
    h.heartbeat("n1")
    assert h.live(a2) == 0
    h.ask(a1, 1024, 1)
    h.update()
    h.heartbeat("n1")
    assert h.live(a1) == 2


async def test_increase_queue_max_running_apps_on_the_fly(tmp_path: Path, autojump_clock):
    """TestFairScheduler.testIncreaseQueueMaxRunningAppsOnTheFly"""
    body = (
        '<queue name="root"><queue name="queue1">'
        "<maxRunningApps>{}</maxRunningApps></queue></queue>"
    )
    alloc = write_alloc(tmp_path, body.format(1))
    h = FSHarness(alloc=alloc)
    h.add_node("n1", 8192, 8)
    apps = []
    for _ in range(4):
        apps.append(h.request(1024, "queue1", "user1"))
        h.heartbeat("n1")
    assert [h.live(a) for a in apps] == [1, 0, 0, 0]
    write_alloc(tmp_path, body.format(3))
    assert h.sched.refresh({}) is None
    for _ in range(3):
        h.update()
        h.heartbeat("n1")
    assert [h.live(a) for a in apps] == [1, 1, 1, 0]
    h.remove(apps[0])
    h.update()
    h.heartbeat("n1")
    assert h.live(apps[3]) == 1


async def test_decrease_user_max_running_apps_on_the_fly(tmp_path: Path, autojump_clock):
    """TestFairScheduler.testDecreaseUserMaxRunningAppsOnTheFly"""
    body = (
        '<queue name="root"><queue name="queue1"><maxRunningApps>10</maxRunningApps></queue>'
        "</queue>"
        '<user name="user1"><maxRunningApps>{}</maxRunningApps></user>'
    )
    alloc = write_alloc(tmp_path, body.format(3))
    h = FSHarness(alloc=alloc)
    h.add_node("n1", 8192, 8)
    apps = []
    for _ in range(4):
        apps.append(h.request(1024, "queue1", "user1"))
        h.heartbeat("n1")
    assert [h.live(a) for a in apps] == [1, 1, 1, 0]
    write_alloc(tmp_path, body.format(1))
    assert h.sched.refresh({}) is None
    for removed in apps[:2]:
        h.remove(removed)
        h.update()
        h.heartbeat("n1")
        assert h.live(apps[3]) == 0
    h.remove(apps[2])
    h.update()
    h.heartbeat("n1")
    assert h.live(apps[3]) == 1


async def test_user_and_queue_max_running_apps(tmp_path: Path, autojump_clock):
    """TestFairScheduler.testUserAndQueueMaxRunningApps"""
    alloc = write_alloc(
        tmp_path,
        '<queue name="queue1"><maxRunningApps>2</maxRunningApps></queue>'
        '<user name="user1"><maxRunningApps>1</maxRunningApps></user>',
    )
    h = FSHarness(alloc=alloc)

    def runnable(attempt: str) -> bool:
        app = h.fsapp(attempt)
        return app in app.queue.runnable

    def counts(queue: str) -> tuple[int, int]:
        q = h.queue(queue)
        return len(q.runnable), len(q.non_runnable)

    a1 = h.request(1024, "queue1", "user1")
    assert runnable(a1) and counts("queue1") == (1, 0)
    a2 = h.request(1024, "queue2", "user1")
    assert not runnable(a2) and counts("queue2") == (0, 1)
    a3 = h.request(1024, "queue1", "user2")
    assert runnable(a3) and counts("queue1") == (2, 0)
    a4 = h.request(1024, "queue1", "user2")
    assert not runnable(a4) and counts("queue1") == (2, 1)
    h.remove(a1)
    assert runnable(a2) and counts("queue2") == (1, 0)
    assert runnable(a4) and counts("queue1") == (2, 0)
    a5 = h.request(1024, "queue1", "user2")
    assert not runnable(a5) and counts("queue1") == (2, 1)


async def test_queue_max_am_share(tmp_path: Path, autojump_clock):
    """TestFairScheduler.testQueueMaxAMShare"""
    alloc = write_alloc(tmp_path, '<queue name="queue1"><maxAMShare>0.2</maxAMShare></queue>')
    h = FSHarness(alloc=alloc)
    h.add_node("n1", 20480, 20)
    h.update()
    queue1 = h.sched.qm.get_leaf("queue1", True)
    assert queue1 is not None and queue1.fair_share.memory == 0
    h.request(1024, "root.default", "user1")
    h.heartbeat("n1")

    def am_app(memory: int, vcores: int = 1) -> str:
        attempt = h.submit("queue1", "user1", am=Resource(memory, vcores))
        assert attempt is not None
        h.update()
        h.heartbeat("n1")
        return attempt

    a1 = am_app(1024)
    assert h.live(a1) == 1 and queue1.am_usage.memory == 1024
    a2 = am_app(1024)
    assert h.live(a2) == 1 and queue1.am_usage.memory == 2048
    a3 = am_app(1024)  # exceeds 0.2 x 10240
    assert h.live(a3) == 0 and queue1.am_usage.memory == 2048
    h.ask(a1, 1024, 1)  # non-AM containers still run
    h.update()
    h.heartbeat("n1")
    assert h.live(a1) == 2 and queue1.am_usage.memory == 2048
    h.update()
    h.remove(a1)
    h.heartbeat("n1")
    assert h.live(a3) == 1 and queue1.am_usage.memory == 2048
    a4 = am_app(2048, 2)
    assert h.live(a4) == 0
    a5 = am_app(2048, 2)
    assert h.live(a5) == 0
    h.remove(a4)
    h.update()
    h.heartbeat("n1")
    assert h.live(a5) == 0 and queue1.am_usage.memory == 2048
    h.remove(a2)
    h.remove(a3)
    h.update()
    h.heartbeat("n1")
    assert h.live(a5) == 1 and queue1.am_usage.memory == 2048


async def test_queue_max_am_share_default(tmp_path: Path, autojump_clock):
    """TestFairScheduler.testQueueMaxAMShareDefault"""
    alloc = write_alloc(
        tmp_path,
        '<queue name="queue1"></queue><queue name="queue2"><maxAMShare>0.4</maxAMShare></queue>'
        '<queue name="queue3"><maxResources>10240 mb 4 vcores</maxResources></queue>'
        '<queue name="queue4"></queue><queue name="queue5"></queue>'
        "<defaultQueueSchedulingPolicy>fair</defaultQueueSchedulingPolicy>",
    )
    h = FSHarness({"yarn.scheduler.maximum-allocation-vcores": 6}, alloc=alloc)
    h.add_node("n1", 8192, 10)
    h.update()
    for name in ("root.queue3", "root.queue4", "root.queue5"):
        h.request(1024, name, "user1")
        h.heartbeat("n1")

    def am_app(queue: str, vcores: int) -> str:
        attempt = h.submit(queue, "test1", am=Resource(1024, vcores))
        assert attempt is not None
        h.update()
        h.heartbeat("n1")
        return attempt

    a1 = am_app("queue1", 1)  # fair share 2048, default maxAMShare 0.5: accepted
    assert h.live(a1) == 1 and h.queue("queue1").am_usage.memory == 1024
    a2 = am_app("queue2", 1)  # fair share 1639 x 0.4: refused
    assert h.live(a2) == 0 and h.queue("queue2").am_usage.memory == 0
    h.remove(a2)
    h.update()
    a3 = am_app("queue3", 6)  # takes every available vcore: refused
    assert h.live(a3) == 0
    a4 = am_app("queue3", 5)  # more than half of maxResources' 4 vcores: refused
    assert h.live(a4) == 0
    assert h.queue("queue3").am_usage.memory == 0


async def test_compute_max_am_resource(tmp_path: Path, autojump_clock):
    """TestFairScheduler.testComputeMaxAMResource"""
    alloc = write_alloc(
        tmp_path,
        '<queue name="queueFSZeroWithMax"><weight>0</weight><maxAMShare>0.5</maxAMShare>'
        "<maxResources>4096 mb 4 vcores</maxResources></queue>"
        '<queue name="queueFSZeroWithAVL"><weight>0.0</weight><maxAMShare>0.5</maxAMShare></queue>'
        '<queue name="queueFSNonZero"><weight>1</weight><maxAMShare>0.5</maxAMShare></queue>'
        "<defaultQueueSchedulingPolicy>drf</defaultQueueSchedulingPolicy>",
    )
    h = FSHarness(alloc=alloc)
    h.add_node("n1", 20 * GB, 20)
    h.update()

    def am_app(queue: str) -> None:
        assert h.submit(queue, "user1", am=Resource(GB, 1)) is not None
        h.update()
        h.heartbeat("n1")

    am_app("queueFSZeroWithMax")
    q = h.queue("queueFSZeroWithMax")
    assert q.fair_share.memory == 0
    assert q.max_am_metric == multiply_round_up(q.max_share, q.max_am_share)
    assert q.am_usage.memory == GB
    am_app("queueFSZeroWithAVL")
    q = h.queue("queueFSZeroWithAVL")
    assert q.fair_share.memory == 0
    assert q.max_am_metric == multiply_round_up(Resource(19 * GB, 19), q.max_am_share)
    am_app("queueFSNonZero")
    q = h.queue("queueFSNonZero")
    assert q.fair_share.memory != 0
    assert q.max_am_metric == multiply_round_up(q.fair_share, q.max_am_share)


async def test_basic_drf_assignment(autojump_clock):
    """TestFairScheduler.testBasicDRFAssignment"""
    h = FSHarness()
    h.add_node("n1", 8192, 5)
    a1 = h.request(2048, "queue1", vcores=1, num=2)
    a2 = h.request(1024, "queue1", vcores=2, num=2)
    h.queue("queue1").policy = policies.DRF
    h.update()
    seen = []
    for _ in range(3):
        h.heartbeat("n1")
        seen.append((h.live(a1), h.live(a2)))
    assert seen == [(1, 0), (1, 1), (2, 1)]


async def test_basic_drf_with_queues(autojump_clock):
    """TestFairScheduler.testBasicDRFWithQueues"""
    h = FSHarness()
    h.add_node("n1", 8192, 7)
    a1 = h.request(3072, "queue1", vcores=1, num=2)
    a2 = h.request(2048, "queue1", vcores=2, num=2)
    a3 = h.request(1024, "queue2", vcores=2, num=2)
    h.queue("root").policy = policies.DRF
    h.queue("queue1").policy = policies.DRF
    h.update()
    h.heartbeat("n1")
    assert h.live(a1) == 1
    h.heartbeat("n1")
    assert h.live(a3) == 1
    h.heartbeat("n1")
    assert h.live(a3) == 2
    h.heartbeat("n1")
    assert h.live(a2) == 1


async def test_drf_hierarchical_queues(autojump_clock):
    """TestFairScheduler.testDRFHierarchicalQueues"""
    h = FSHarness()
    h.add_node("n1", 12288, 12)
    apps = []
    for memory, vcores, queue in (
        (3074, 1, "queue1.subqueue1"),
        (1024, 3, "queue1.subqueue1"),
        (2048, 2, "queue1.subqueue2"),
        (1024, 2, "queue2"),
    ):
        apps.append(h.request(memory, queue, vcores=vcores, num=2))
        await trio.sleep(0.003)  # distinct start times
    a1, a2, a3, a4 = apps
    for name in ("root", "queue1", "queue1.subqueue1"):
        h.queue(name).policy = policies.DRF
    h.update()
    expected = [(a1, 1), (a4, 1), (a4, 2), (a3, 1), (a3, 2), (a2, 1)]
    for attempt, live in expected:
        h.heartbeat("n1")
        assert h.live(attempt) == live
    h.heartbeat("n1")  # all CPU used
    assert [h.live(a) for a in apps] == [1, 1, 2, 2]


async def test_no_more_cpu_on_node(autojump_clock):
    """TestFairScheduler.testNoMoreCpuOnNode"""
    h = FSHarness()
    h.add_node("n1", 2048, 1)
    a = h.request(1024, "default", vcores=1, num=2)
    h.heartbeat("n1", 2)
    assert h.live(a) == 1


async def test_strict_locality(autojump_clock):
    """TestFairScheduler.testStrictLocality"""
    h = FSHarness()
    h.add_node("n1", 1024, rack="/rack1")
    h.add_node("n2", 1024, rack="/rack1")
    a = h.request(1024, "queue1", num=0)
    h.ask(a, 1024, 1, name="n1")
    h.ask(a, 1024, 1, name="/rack1", relax=False)
    h.ask(a, 1024, 1, name="*", relax=False)
    h.update()
    for _ in range(10):
        h.heartbeat("n2")
        assert h.live(a) == 0
        assert h.sched.apps[a].reservations == {}
    h.heartbeat("n1")
    assert h.live(a) == 1


async def test_multiple_nodes_single_rack_request(autojump_clock):
    """TestFairScheduler.testMultipleNodesSingleRackRequest"""
    h = FSHarness()
    h.add_node("n1", 1024, rack="/rack1")
    h.add_node("n2", 1024, rack="/rack1")
    h.add_node("n3", 1024, rack="/rack2")
    a = h.request(1024, "queue1", num=0)
    for name, num in (("n1", 1), ("n2", 1), ("n3", 1), ("/rack1", 1), ("/rack2", 1), ("*", 2)):
        h.ask(a, 1024, num, name=name)
    h.update()
    h.heartbeat("n1")
    assert h.live(a) == 1
    h.update()
    h.heartbeat("n2")
    assert h.live(a) == 2


async def test_delay_scheduling_relaxes_after_missed_opportunities(autojump_clock):
    """FSAppAttempt.getAllowedLocalityLevel (TestFSAppAttempt.testDelayScheduling):
    with thresholds 0.5 on 2 nodes, a level is relaxed once more than 1
    opportunity was missed at it."""
    props = {
        "yarn.scheduler.fair.locality.threshold.node": 0.5,
        "yarn.scheduler.fair.locality.threshold.rack": 0.5,
    }
    h = FSHarness(props)
    h.add_node("n1", 4096, rack="/rack1")
    h.add_node("n2", 4096, rack="/rack2")
    a = h.request(1024, "queue1", num=0)
    h.ask(a, 1024, 1, name="n1")
    h.ask(a, 1024, 1, name="/rack1")
    h.ask(a, 1024, 1, name="*")
    h.update()
    # opportunities 1, 2 (> 2 x 0.5: relax to RACK_LOCAL, count reset), 1
    h.heartbeat("n2", 3)
    assert h.live(a) == 0
    h.heartbeat("n2")  # 2 > 1 again: OFF_SWITCH, and the container goes off-switch
    assert h.live(a) == 1
    assert next(iter(h.sched.apps[a].live.values())).locality == "OFF_SWITCH"


async def test_acl_submit_application(tmp_path: Path, autojump_clock):
    """TestFairScheduler.testAclSubmitApplication"""
    alloc = write_alloc(
        tmp_path,
        '<queue name="root"><aclSubmitApps> </aclSubmitApps><aclAdministerApps> '
        "</aclAdministerApps>"
        '<queue name="queue1"><aclSubmitApps>norealuserhasthisname</aclSubmitApps>'
        "<aclAdministerApps>norealuserhasthisname</aclAdministerApps></queue></queue>",
    )
    h = FSHarness(alloc=alloc)
    assert h.submit("queue1", "norealuserhasthisname") is not None
    assert h.submit("queue1", "norealuserhasthisname2") is None


async def test_acl_by_group(tmp_path: Path, autojump_clock):
    """AccessControlList "users groups": a user is let in through a group."""
    alloc = write_alloc(
        tmp_path,
        '<queue name="root"><aclSubmitApps> </aclSubmitApps><aclAdministerApps> '
        "</aclAdministerApps>"
        '<queue name="q"><aclSubmitApps>alice analysts</aclSubmitApps></queue></queue>',
    )
    h = FSHarness({"hadoop.user.group.static.mapping.overrides": "bob=analysts;carol=ops"}, alloc)
    assert h.submit("q", "alice") is not None
    assert h.submit("q", "bob") is not None
    assert h.submit("q", "carol") is None


async def test_empty_queue_name_and_periods(autojump_clock):
    """TestFairScheduler.testEmptyQueueName and testQueueuNameWithPeriods"""
    h = FSHarness()
    assert len(h.sched.qm.leaves) == 1
    assert h.submit("") is None
    assert h.submit(".A") is None
    assert h.submit("A.") is None
    assert len(h.sched.qm.leaves) == 1
    assert h.submit("A.B") is not None
    assert len(h.sched.qm.leaves) == 2


async def test_assign_to_queue(autojump_clock):
    """TestFairScheduler.testAssignToQueue"""
    h = FSHarness({"yarn.scheduler.fair.user-as-default-queue": "true"})
    h.submit("default", "asterix")
    h.submit("notdefault", "obelix")
    assert [a.queue for a in h.ctx.apps.values()] == ["root.asterix", "root.notdefault"]


async def test_assign_to_non_leaf_queue_is_rejected(autojump_clock):
    """TestFairScheduler.testAssignToNonLeafQueueReturnsNull"""
    h = FSHarness()
    h.sched.qm.get_leaf("root.child1.granchild", True)
    h.sched.qm.get_leaf("root.child2", True)
    assert h.submit("root.child1", "tintin") is None
    assert h.submit("root.child2", "snowy") is not None


async def test_queue_placement_with_policy(tmp_path: Path, autojump_clock):
    """TestFairScheduler.testQueuePlacementWithPolicy (groups as SimpleGroupsMapping:
    user -> "<user>group", "<user>subgroup1", "<user>subgroup2")."""
    users = ["user1", "user3", "user4", "user5", "otheruser"]
    mapping = ";".join(f"{u}={u}group,{u}subgroup1,{u}subgroup2" for u in users)
    alloc = write_alloc(
        tmp_path,
        "".join(
            f'<queue name="{q}"/>'
            for q in ("user1", "user3group", "user4subgroup1", "user4subgroup2", "user5subgroup2")
        )
        + "<queuePlacementPolicy>"
        '<rule name="specified"/><rule name="user" create="false"/>'
        '<rule name="primaryGroup" create="false"/>'
        '<rule name="secondaryGroupExistingQueue" create="false"/><rule name="default"/>'
        "</queuePlacementPolicy>",
    )
    h = FSHarness({"hadoop.user.group.static.mapping.overrides": mapping}, alloc=alloc)
    cases = [
        ("somequeue", "user1", "root.somequeue"),
        ("default", "user1", "root.user1"),
        ("default", "user3", "root.user3group"),
        ("default", "user4", "root.user4subgroup1"),
        ("default", "user5", "root.user5subgroup2"),
        ("default", "otheruser", "root.default"),
    ]
    for requested, user, expected in cases:
        attempt = h.submit(requested, user)
        assert attempt is not None
        assert h.sched.apps[attempt].queue == expected


async def test_nested_user_queue(tmp_path: Path, autojump_clock):
    """TestFairScheduler.testNestedUserQueue"""
    alloc = write_alloc(
        tmp_path,
        '<queue name="user1group" type="parent"><minResources>1024mb,0vcores</minResources></queue>'
        "<queuePlacementPolicy>"
        '<rule name="specified" create="false"/>'
        '<rule name="nestedUserQueue"><rule name="primaryGroup" create="false"/></rule>'
        '<rule name="default"/>'
        "</queuePlacementPolicy>",
    )
    h = FSHarness({"hadoop.user.group.static.mapping.overrides": "user1=user1group"}, alloc=alloc)
    attempt = h.submit("root.default", "user1")
    assert attempt is not None
    assert h.sched.apps[attempt].queue == "root.user1group.user1"


async def test_fair_share_and_weights_in_nested_user_queue_rule(tmp_path: Path, autojump_clock):
    """TestFairScheduler.testFairShareAndWeightsInNestedUserQueueRule"""
    alloc = write_alloc(
        tmp_path,
        '<queue name="parentq" type="parent"><minResources>1024mb,0vcores</minResources></queue>'
        "<queuePlacementPolicy>"
        '<rule name="nestedUserQueue"><rule name="specified" create="false"/></rule>'
        '<rule name="default"/>'
        "</queuePlacementPolicy>",
    )
    h = FSHarness(alloc=alloc)
    capacity = 16 * GB
    h.add_node("n1", capacity)
    h.request(10 * GB, "root.parentq", "user1")
    h.request(10 * GB, "root.parentq", "user2")
    h.request(10 * GB, "root.default", "user3")
    h.update()
    for name in ("root.parentq.user1", "root.parentq.user2"):
        q = h.queue(name)
        assert q.fair_share.memory == capacity // 4
        assert q.steady_fair_share.memory == capacity // 4
        assert q.weight == 1.0


async def test_queue_demand_calculation(autojump_clock):
    """TestFairScheduler.testQueueDemandCalculation"""
    h = FSHarness()
    a1 = h.submit("root.queue1")
    assert a1 is not None
    h.ask(a1, 2048, 1)
    a2 = h.submit("root.queue2")
    assert a2 is not None
    h.ask(a2, 2048, 1, name="foo", relax=False)
    h.ask(a2, 2048, 1, relax=False)
    a3 = h.submit("root.queue2")
    assert a3 is not None
    h.ask(a3, 1024, 2, name="bar", priority=2)
    h.ask(a3, 1024, 2, priority=2)
    h.update()
    assert h.queue("root.queue1").demand.memory == 2048
    assert h.queue("root.queue2").demand.memory == 2048 + 2048


async def test_delay_scheduling_levels(autojump_clock):
    """TestFSAppAttempt.testDelayScheduling: 10 nodes, thresholds .5 and .6."""
    props = {
        "yarn.scheduler.fair.locality.threshold.node": 0.5,
        "yarn.scheduler.fair.locality.threshold.rack": 0.6,
    }
    h = FSHarness(props)
    for i in range(10):
        h.add_node(f"n{i}", 1024)
    app = h.fsapp(h.request(1024, "queue1", num=0))
    opportunities = app.sapp.opportunities

    def offer() -> str:
        opportunities[1] = opportunities.get(1, 0) + 1
        return app.allowed_locality_level(1)

    assert app.allowed_locality_level(1) == "NODE_LOCAL"
    assert [offer() for _ in range(5)] == ["NODE_LOCAL"] * 5
    assert offer() == "RACK_LOCAL"
    app.allowed_locality[1] = "NODE_LOCAL"
    opportunities[1] = 0
    assert app.allowed_locality_level(1) == "NODE_LOCAL"
    assert [offer() for _ in range(5)] == ["NODE_LOCAL"] * 5
    assert offer() == "RACK_LOCAL"
    assert [offer() for _ in range(6)] == ["RACK_LOCAL"] * 6
    assert offer() == "OFF_SWITCH"


async def test_locality_level_without_delays(autojump_clock):
    """TestFSAppAttempt.testLocalityLevelWithoutDelays"""
    h = FSHarness()
    h.add_node("n1", 1024)
    app = h.fsapp(h.request(1024, "queue1", num=0))
    assert app.allowed_locality_level(1) == "OFF_SWITCH"


async def test_headroom_with_blacklisted_nodes(autojump_clock):
    """TestFSAppAttempt.testHeadroomWithBlackListedNodes"""
    h = FSHarness()
    h.add_node("n1", 8 * GB, 8)
    h.add_node("n2", 4 * GB, 4)
    attempt = h.submit("default")
    assert attempt is not None
    sapp = h.sched.apps[attempt]
    h.fsapp(attempt).queue.fair_share = h.sched.cluster
    sapp.blacklist = {"n1"}
    assert h.sched.headroom(sapp) == Resource(4 * GB, 4)
    sapp.blacklist = {"n2"}
    assert h.sched.headroom(sapp) == Resource(8 * GB, 8)
    sapp.blacklist = set()
    assert h.sched.headroom(sapp) == Resource(12 * GB, 12)

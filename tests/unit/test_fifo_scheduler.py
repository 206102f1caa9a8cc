"""FIFO scheduling and the shared scheduler layer, driven through the RM's
services with protocol messages (as NMs and AMs would send them)."""

from __future__ import annotations

from emu.msg import catalogue as C
from emu.msg import types as P
from emu.resources import Resource
from emu.rm.scheduler.app_scheduling_info import AppSchedulingInfo, Ask
from emu.rm.scheduler.locality import ANY, NODE_LOCAL, OFF_SWITCH, RACK_LOCAL
from emu.testing.cluster import ask, fifo_conf
from emu.testing.rm import RMHarness


def one_task_running() -> tuple[RMHarness, str, dict]:
    """One node h1 running app a's AM and one task container, collected by the AM."""
    rm = RMHarness(fifo_conf())
    rm.add_node("h1")
    app = rm.submit("a")
    rm.start_am(app, "h1")
    rm.allocate(app, [ask(20, ANY, 1)])
    rm.heartbeat("h1")
    (c,) = rm.allocate(app)["allocated"]
    return rm, app, c


async def test_am_container_then_tasks_only_on_node_heartbeat(autojump_clock):
    rm = RMHarness(fifo_conf())
    rm.add_node("h1")
    app = rm.submit("a")
    attempt = rm.ctx.attempts[rm.attempt(app)]
    assert attempt.state == "SCHEDULED"
    rm.heartbeat("h1")
    assert attempt.state == "LAUNCHED"
    assert rm.launches[0][1] == "h1"
    rm.register_am(app)
    assert rm.ctx.apps[app].state == "RUNNING"
    reply = rm.allocate(app, [ask(20, ANY, 3)])
    assert reply["allocated"] == []  # asks are not satisfied inside allocate
    rm.heartbeat("h1")
    reply = rm.allocate(app)
    assert len(reply["allocated"]) == 3
    assert {c["node_id"] for c in reply["allocated"]} == {"h1"}
    assert rm.ctx.scheduler.used == Resource(4 * 1024, 4)


async def test_fifo_serves_the_earlier_app_first_and_by_priority(autojump_clock):
    rm = RMHarness(fifo_conf())
    rm.add_node("h1", memory=4096)
    rm.add_node("h2", memory=8192)
    first, second = rm.submit("first"), rm.submit("second")
    rm.heartbeat("h2")  # both AMs fit on h2
    rm.register_am(first)
    rm.register_am(second)
    rm.allocate(second, [ask(20, ANY, 2)])
    rm.allocate(first, [ask(20, ANY, 2), ask(10, ANY, 2)])
    rm.heartbeat("h1")  # 4 GB: the first app takes it all, priority 10 before 20
    got = rm.allocate(first)["allocated"]
    assert sorted(c["priority"] for c in got) == [10, 10, 20, 20]
    assert rm.allocate(second)["allocated"] == []


async def test_node_local_before_rack_local_before_off_switch(autojump_clock):
    rm = RMHarness(fifo_conf())
    rm.add_node("h1", rack="/r1")
    rm.add_node("h2", rack="/r1")
    rm.add_node("h3", rack="/r2", memory=16384)
    app = rm.submit("a")
    rm.start_am(app, "h3")
    rm.allocate(app, [ask(20, "h1", 1), ask(20, "/r1", 1), ask(20, ANY, 3)])
    rm.heartbeat("h2")  # rack-local for the h1 ask's rack
    sched = rm.ctx.scheduler
    localities = [c.locality for c in sched.nodes["h2"].containers.values()]
    # the rack ask is served first, then the rest of `*` off-switch
    assert localities == [RACK_LOCAL, OFF_SWITCH, OFF_SWITCH]
    info = sched.apps[rm.attempt(app)].info
    # rack ask consumed (emu drops an ask at zero), host ask left, any used up
    assert info.get(20, "/r1") is None
    assert info.get(20, "h1").num == 1
    assert info.get(20, ANY).num == 0


async def test_strict_host_ask_never_goes_elsewhere(autojump_clock):
    rm = RMHarness(fifo_conf())
    rm.add_node("h1", rack="/r1")
    rm.add_node("h2", rack="/r1")
    app = rm.submit("a")
    rm.start_am(app, "h2")
    rm.allocate(
        app, [ask(20, "h1", 1), ask(20, "/r1", 1, relax=False), ask(20, ANY, 1, relax=False)]
    )
    rm.heartbeat("h2")
    assert rm.allocate(app)["allocated"] == []
    rm.heartbeat("h1")
    got = rm.allocate(app)["allocated"]
    assert [c["node_id"] for c in got] == ["h1"]


async def test_ask_above_maximum_is_refused_and_the_am_keeps_going(autojump_clock):
    rm = RMHarness(fifo_conf())
    rm.add_node("h1")
    app = rm.submit("a")
    rm.start_am(app, "h1")
    reply = rm.allocate(app, [ask(20, ANY, 1, memory=64 * 1024)])
    assert reply["type"] == "error" and reply["code"] == P.INVALID_RESOURCE_REQUEST
    assert "requested resource is greater than maximum allowed allocation" in reply["message"]
    assert rm.allocate(app, [ask(20, ANY, 1)])["type"] == "allocate_reply"


async def test_completed_container_reported_once_to_the_am(autojump_clock):
    rm, app, c = one_task_running()
    cid = c["container_id"]
    rm.heartbeat("h1", [{"container_id": cid, "state": "RUNNING", "exit_status": -1000}])
    assert rm.ctx.containers[cid].state == "RUNNING"
    rm.heartbeat("h1", [{"container_id": cid, "state": "COMPLETE", "exit_status": 0}])
    assert [s["container_id"] for s in rm.allocate(app)["completed"]] == [cid]
    assert rm.allocate(app)["completed"] == []
    assert rm.ctx.scheduler.used == Resource(1024, 1)  # only the AM


async def test_released_container_frees_resources_and_node_is_told(autojump_clock):
    rm, app, c = one_task_running()
    rm.allocate(app, releases=[c["container_id"]])
    assert rm.ctx.scheduler.used == Resource(1024, 1)
    assert c["container_id"] in rm.heartbeat("h1")["containers_to_cleanup"]


async def test_duplicate_heartbeat_gets_the_same_reply_and_stale_one_resync(autojump_clock):
    rm = RMHarness(fifo_conf())
    rm.add_node("h1")
    first = rm.heartbeat("h1")
    again = rm.call(
        C.RESOURCE_TRACKER, "node_heartbeat", node_id="h1", response_id=0, containers=[],
        healthy=True,
    )  # fmt: skip
    assert again["response_id"] == first["response_id"] == 1
    stale = rm.call(
        C.RESOURCE_TRACKER, "node_heartbeat", node_id="h1", response_id=9, containers=[],
        healthy=True,
    )  # fmt: skip
    assert stale["action"] == P.RESYNC
    unknown = rm.call(
        C.RESOURCE_TRACKER, "node_heartbeat", node_id="zz", response_id=0, containers=[],
        healthy=True,
    )  # fmt: skip
    assert unknown["action"] == P.RESYNC


async def test_request_on_the_wrong_service_is_refused(autojump_clock):
    rm = RMHarness(fifo_conf())
    reply = rm.call(
        C.CLIENT, "node_heartbeat", node_id="x", response_id=0, containers=[], healthy=True
    )
    assert reply["code"] == P.WRONG_SERVICE


def test_asks_replace_by_priority_and_name():
    info = AppSchedulingInfo()
    cap = Resource(1024, 1)
    info.update([Ask(20, ANY, cap, 5, True), Ask(20, "h1", cap, 2, True)])
    assert info.pending == Resource(5 * 1024, 5)
    info.update([Ask(20, ANY, cap, 3, True)])  # replaces, does not add
    assert info.pending == Resource(3 * 1024, 3)
    assert info.priorities == [20]
    info.update([Ask(20, ANY, cap, 0, True)])
    assert info.priorities == [] and not info.has_pending()


def test_locality_decrements_host_rack_and_any():
    from emu.rm.scheduler.scheduler_node import SchedulerNode

    info = AppSchedulingInfo()
    cap = Resource(1024, 1)
    node = SchedulerNode("h1", "h1", "/r1", Resource(8192, 8))
    info.update(
        [Ask(5, "h1", cap, 2, True), Ask(5, "/r1", cap, 2, True), Ask(5, ANY, cap, 3, True)]
    )
    assert info.can_place(5, node, NODE_LOCAL) is info.get(5, "h1")
    info.allocated(NODE_LOCAL, node, 5)
    assert (info.get(5, "h1").num, info.get(5, "/r1").num, info.get(5, ANY).num) == (1, 1, 2)
    info.allocated(OFF_SWITCH, node, 5)
    assert (info.get(5, "h1").num, info.get(5, "/r1").num, info.get(5, ANY).num) == (1, 1, 1)


async def test_am_lost_with_its_node_does_not_count_toward_max_attempts(autojump_clock):
    """YARN's shouldCountTowardsMaxAttemptRetry: an AM container aborted
    because its node was lost is not the app's fault."""
    rm = RMHarness(fifo_conf({"yarn.resourcemanager.am.max-attempts": 1}))
    rm.add_node("h1")
    rm.add_node("h2")
    app = rm.submit("a")
    rm.start_am(app, "h1")
    rm.ctx.dispatch("node", "EXPIRE", "h1")
    rm.ctx.dispatcher.drain()
    assert rm.ctx.apps[app].state == "ACCEPTED"
    assert len(rm.ctx.apps[app].attempts) == 2


async def test_am_that_exits_with_an_error_uses_up_its_attempts(autojump_clock):
    rm = RMHarness(fifo_conf({"yarn.resourcemanager.am.max-attempts": 1}))
    rm.add_node("h1")
    app = rm.submit("a")
    rm.start_am(app, "h1")
    am = rm.ctx.attempts[rm.attempt(app)].am_container_id
    rm.heartbeat("h1", [{"container_id": am, "state": "COMPLETE", "exit_status": 1}])
    assert rm.ctx.apps[app].state == "FAILED"


async def test_removed_attempt_leaves_no_pending_demand_in_its_queue(autojump_clock):
    rm = RMHarness(fifo_conf())
    rm.add_node("h1", memory=2048)
    app = rm.submit("a")
    rm.start_am(app, "h1")
    rm.allocate(app, [ask(20, ANY, 5)])
    queue = rm.ctx.scheduler.queue_metrics("default")
    assert queue.pending == Resource(5 * 1024, 5)
    rm.call(C.CLIENT, "kill_application", app_id=app)
    assert rm.ctx.apps[app].state == "KILLED"
    assert queue.pending == Resource(0, 0)
    assert queue.allocated == Resource(0, 0)


async def test_launched_container_released_by_the_app_keeps_its_node_until_the_nm_says(
    autojump_clock,
):
    """FifoScheduler.completedContainer calls SchedulerNode.releaseContainer(id,
    releasedByNode=false): a container its NM reported running keeps its
    node's capacity until the NM reports it completed; the app's and the
    cluster's usage drop at once."""
    rm, app, c = one_task_running()
    cid = c["container_id"]
    rm.heartbeat("h1", [{"container_id": cid, "state": "RUNNING", "exit_status": -1000}])
    node = rm.ctx.scheduler.nodes["h1"]
    before = node.available
    rm.allocate(app, releases=[cid])
    assert rm.ctx.scheduler.used == Resource(1024, 1)
    assert node.available == before
    assert cid in node.containers
    rm.heartbeat("h1", [{"container_id": cid, "state": "COMPLETE", "exit_status": -100}])
    assert node.available == before + Resource(1024, 1)
    assert cid not in node.containers and not rm.ctx.scheduler.held_on_node


async def test_container_never_launched_frees_its_node_when_released(autojump_clock):
    """Without a launch report (launchedOnNode false) the release frees the node at once."""
    rm, app, c = one_task_running()
    node = rm.ctx.scheduler.nodes["h1"]
    before = node.available
    rm.allocate(app, releases=[c["container_id"]])
    assert node.available == before + Resource(1024, 1)
    assert not rm.ctx.scheduler.held_on_node

"""RMNode's table, one transition per test, as Hadoop's
TestRMNodeTransitions: the state before, the event, the state after, and
the side effects (scheduler events raised, liveness, the active/inactive
registries, cleanup lists)."""

from __future__ import annotations

from emu.resources import Resource
from emu.rm.enums import NodeEvent, NodeState
from emu.rm.scheduler.events import SchedulerEvent
from tests.transitions import Bench

DONE = {"container_id": "c1", "state": "COMPLETE", "exit_status": 0}


async def test_new_started_joins_the_scheduler_and_is_watched() -> None:
    b = Bench()
    node = b.node(NodeState.NEW)
    b.fire("node", node, NodeEvent.STARTED)
    assert node.state == NodeState.RUNNING
    assert "n1" in b.ctx.nm_liveness
    assert b.events() == [("scheduler", SchedulerEvent.NODE_ADDED, "n1")]
    assert b.raised[0].data is node


async def test_new_resource_update_changes_nothing_yet() -> None:
    b = Bench()
    node = b.node(NodeState.NEW)
    assert b.fire("node", node, NodeEvent.RESOURCE_UPDATE, Resource(1024, 1))
    assert node.state == NodeState.NEW
    assert node.resource == Resource(8192, 8)
    assert b.events() == []


async def test_running_healthy_status_is_a_node_update() -> None:
    b = Bench()
    node = b.node(NodeState.RUNNING)
    b.fire("node", node, NodeEvent.STATUS_UPDATE, (True, ["c2"], [DONE]))
    assert node.state == NodeState.RUNNING
    assert b.events() == [("scheduler", SchedulerEvent.NODE_UPDATE, "n1")]
    assert b.raised[0].data == (["c2"], [DONE])


async def test_running_unhealthy_status_reports_then_leaves_the_scheduler() -> None:
    b = Bench()
    node = b.node(NodeState.RUNNING)
    b.fire("node", node, NodeEvent.STATUS_UPDATE, (False, [], [DONE]))
    assert node.state == NodeState.UNHEALTHY
    assert b.events() == [
        ("scheduler", SchedulerEvent.NODE_UPDATE, "n1"),
        ("scheduler", SchedulerEvent.NODE_REMOVED, "n1"),
    ]
    assert "n1" in b.ctx.nodes


async def test_unhealthy_healthy_status_rejoins_the_scheduler() -> None:
    b = Bench()
    node = b.node(NodeState.UNHEALTHY)
    b.fire("node", node, NodeEvent.STATUS_UPDATE, (True, [], []))
    assert node.state == NodeState.RUNNING
    assert b.events() == [
        ("scheduler", SchedulerEvent.NODE_ADDED, "n1"),
        ("scheduler", SchedulerEvent.NODE_UPDATE, "n1"),
    ]


async def test_unhealthy_quiet_unhealthy_status_stays_out() -> None:
    b = Bench()
    node = b.node(NodeState.UNHEALTHY)
    b.fire("node", node, NodeEvent.STATUS_UPDATE, (False, [], []))
    assert node.state == NodeState.UNHEALTHY
    assert b.events() == []


async def test_running_expire_is_lost_and_leaves_the_scheduler() -> None:
    b = Bench()
    node = b.node(NodeState.RUNNING)
    b.ctx.nm_liveness.register("n1", 0)
    b.fire("node", node, NodeEvent.EXPIRE)
    assert node.state == NodeState.LOST
    assert "n1" not in b.ctx.nm_liveness
    assert "n1" not in b.ctx.nodes and b.ctx.inactive_nodes["n1"] is node
    assert b.events() == [("scheduler", SchedulerEvent.NODE_REMOVED, "n1")]


async def test_unhealthy_expire_is_lost_without_a_second_removal() -> None:
    b = Bench()
    node = b.node(NodeState.UNHEALTHY)
    b.ctx.nm_liveness.register("n1", 0)
    b.fire("node", node, NodeEvent.EXPIRE)
    assert node.state == NodeState.LOST
    assert "n1" not in b.ctx.nm_liveness
    assert b.ctx.inactive_nodes["n1"] is node
    assert b.events() == []


async def test_running_decommission_leaves_the_cluster() -> None:
    b = Bench()
    node = b.node(NodeState.RUNNING)
    b.fire("node", node, NodeEvent.DECOMMISSION)
    assert node.state == NodeState.DECOMMISSIONED
    assert b.ctx.inactive_nodes["n1"] is node and "n1" not in b.ctx.nodes
    assert b.events() == [("scheduler", SchedulerEvent.NODE_REMOVED, "n1")]


async def test_unhealthy_decommission_leaves_the_cluster_quietly() -> None:
    b = Bench()
    node = b.node(NodeState.UNHEALTHY)
    b.fire("node", node, NodeEvent.DECOMMISSION)
    assert node.state == NodeState.DECOMMISSIONED
    assert b.ctx.inactive_nodes["n1"] is node
    assert b.events() == []


async def test_running_shutdown_leaves_the_cluster() -> None:
    b = Bench()
    node = b.node(NodeState.RUNNING)
    b.fire("node", node, NodeEvent.SHUTDOWN)
    assert node.state == NodeState.SHUTDOWN
    assert b.ctx.inactive_nodes["n1"] is node
    assert b.events() == [("scheduler", SchedulerEvent.NODE_REMOVED, "n1")]


async def test_unhealthy_shutdown_leaves_the_cluster_quietly() -> None:
    b = Bench()
    node = b.node(NodeState.UNHEALTHY)
    b.fire("node", node, NodeEvent.SHUTDOWN)
    assert node.state == NodeState.SHUTDOWN
    assert b.events() == []


async def test_running_resource_update_resizes_the_node_in_the_scheduler() -> None:
    b = Bench()
    node = b.node(NodeState.RUNNING)
    b.fire("node", node, NodeEvent.RESOURCE_UPDATE, Resource(4096, 4))
    assert node.state == NodeState.RUNNING
    assert node.resource == Resource(4096, 4)
    assert node.resource_updated_ms >= 0
    assert b.events() == [("scheduler", SchedulerEvent.NODE_RESOURCE_UPDATE, "n1")]


async def test_unhealthy_resource_update_resizes_the_node() -> None:
    b = Bench()
    node = b.node(NodeState.UNHEALTHY)
    b.fire("node", node, NodeEvent.RESOURCE_UPDATE, Resource(4096, 4))
    assert node.state == NodeState.UNHEALTHY
    assert node.resource == Resource(4096, 4)


async def test_cleanup_container_is_queued_for_the_next_heartbeat() -> None:
    b = Bench()
    node = b.node(NodeState.RUNNING)
    b.fire("node", node, NodeEvent.CLEANUP_CONTAINER, "c1")
    assert node.state == NodeState.RUNNING
    assert node.containers_to_cleanup == ["c1"]
    assert b.events() == []


async def test_cleanup_app_is_queued_and_the_app_no_longer_runs_there() -> None:
    b = Bench()
    node = b.node(NodeState.UNHEALTHY)
    node.running_apps.add("application_0_0001")
    b.fire("node", node, NodeEvent.CLEANUP_APP, "application_0_0001")
    assert node.state == NodeState.UNHEALTHY
    assert node.apps_to_cleanup == ["application_0_0001"]
    assert node.running_apps == set()


async def test_running_reconnected_is_removed_and_added_with_its_new_resource() -> None:
    b = Bench()
    node = b.node(NodeState.RUNNING)
    b.fire("node", node, NodeEvent.RECONNECTED, Resource(16384, 16))
    assert node.state == NodeState.RUNNING
    assert node.resource == Resource(16384, 16)
    assert b.events() == [
        ("scheduler", SchedulerEvent.NODE_REMOVED, "n1"),
        ("scheduler", SchedulerEvent.NODE_ADDED, "n1"),
    ]


async def test_a_late_status_after_lost_is_absorbed() -> None:
    b = Bench()
    node = b.node(NodeState.LOST)
    assert b.fire("node", node, NodeEvent.STATUS_UPDATE, (True, [], []))
    assert node.state == NodeState.LOST
    assert b.events() == []
    assert not b.ctx.invalid_transitions


async def test_an_event_the_state_does_not_take_is_counted_not_applied() -> None:
    b = Bench()
    node = b.node(NodeState.NEW)
    assert not b.fire("node", node, NodeEvent.EXPIRE)
    assert node.state == NodeState.NEW
    assert b.ctx.invalid_transitions == {"node:NEW:EXPIRE": 1}

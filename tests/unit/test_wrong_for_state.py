"""Requests that are well-formed but wrong for the receiver's state get
YARN's answers (ApplicationMasterService, ResourceTrackerService)."""

from __future__ import annotations

from emu.msg import catalogue as C
from emu.msg import types as P
from emu.rm.scheduler.locality import ANY
from emu.testing.cluster import ask, fifo_conf
from emu.testing.rm import RMHarness


def running(rm: RMHarness) -> str:
    rm.add_node("h1")
    rm.add_node("h2")
    app = rm.submit("a")
    rm.start_am(app, "h1")
    return app


async def test_allocate_from_an_unregistered_attempt_is_an_error(autojump_clock):
    """YARN: ApplicationMasterNotRegisteredException."""
    rm = RMHarness(fifo_conf())
    rm.add_node("h1")
    app = rm.submit("a")
    rm.heartbeat("h1")  # AM container launched, attempt not registered yet
    reply = rm.allocate(app, [ask(20, ANY, 1)])
    assert (reply["type"], reply["code"]) == ("error", P.INVALID)
    assert "is not registered" in reply["message"]
    assert rm.services.errors[P.INVALID] == 1


async def test_duplicate_heartbeat_gets_the_last_reply_again(autojump_clock):
    """YARN: a heartbeat whose response id is one behind is a retransmission;
    the RM answers with its previous response and does nothing else."""
    rm = RMHarness(fifo_conf())
    app = running(rm)
    rm.allocate(app, [ask(20, ANY, 2)])
    node = rm.ctx.nodes["h2"]
    first = rm.heartbeat("h2")
    assert first["action"] == P.NORMAL and node.response_id == 1
    used = rm.ctx.scheduler.used
    again = rm.call(
        C.RESOURCE_TRACKER, "node_heartbeat", node_id="h2", response_id=0, containers=[],
        healthy=True,
    )  # fmt: skip
    assert {k: v for k, v in again.items() if k != "id"} == {
        k: v for k, v in first.items() if k != "id"
    }
    assert node.response_id == 1 and rm.ctx.scheduler.used == used


async def test_heartbeat_with_a_stale_response_id_is_told_to_resync(autojump_clock):
    """YARN: 'Too far behind rm response id' -> NodeAction.RESYNC."""
    rm = RMHarness(fifo_conf())
    running(rm)
    for _ in range(3):
        rm.heartbeat("h2")
    reply = rm.call(
        C.RESOURCE_TRACKER, "node_heartbeat", node_id="h2", response_id=0, containers=[],
        healthy=True,
    )  # fmt: skip
    assert reply["action"] == P.RESYNC


async def test_status_of_an_unknown_container_is_counted_and_the_stray_killed(autojump_clock):
    """A completed status the RM has no container for is ignored and
    counted; a running one is killed (YARN: 'Some unknown container sneaked
    into the system. Kill it.')."""
    rm = RMHarness(fifo_conf())
    running(rm)
    before = dict(rm.ctx.containers)
    statuses = [
        {"container_id": "container_0_0042_01_000001", "state": "COMPLETE", "exit_status": 0},
        {"container_id": "container_0_0042_01_000002", "state": "RUNNING", "exit_status": 0},
    ]
    reply = rm.heartbeat("h2", statuses)
    assert rm.ctx.containers == before
    assert rm.ctx.scheduler.unknown_reports == {"completed": 1, "running": 1}
    assert reply["containers_to_cleanup"] == ["container_0_0042_01_000002"]
    metrics = rm.call(C.CLIENT, "cluster_metrics")["metrics"]
    assert metrics["unknown_container_reports"] == {"completed": 1, "running": 1}


async def test_second_registration_of_a_live_node_reconnects_it(autojump_clock):
    """YARN's registerNodeManager for a node it already has: NORMAL, and the
    node is reconnected (removed and re-added with its new resource; the
    containers it held are gone)."""
    rm = RMHarness(fifo_conf())
    app = running(rm)
    rm.allocate(app, [ask(20, ANY, 2)])
    rm.heartbeat("h2")
    assert rm.ctx.scheduler.nodes["h2"].containers
    reply = rm.call(
        C.RESOURCE_TRACKER, "register_node", node_id="h2", host="h2", rack="/r1",
        resource={"memory-mb": 4096, "vcores": 4}, nm_address="mem://nm", containers=[],
    )  # fmt: skip
    assert reply["action"] == P.NORMAL
    node = rm.ctx.scheduler.nodes["h2"]
    assert node.containers == {} and node.total.memory == 4096
    assert rm.ctx.nodes["h2"].state == "RUNNING" and rm.ctx.nodes["h2"].response_id == 0


async def test_a_node_below_the_minimum_allocation_is_told_to_shut_down(autojump_clock):
    """YARN: 'NodeManager ... doesn't satisfy minimum allocations' -> SHUTDOWN."""
    rm = RMHarness(fifo_conf())
    reply = rm.call(
        C.RESOURCE_TRACKER, "register_node", node_id="tiny", host="tiny", rack="/r1",
        resource={"memory-mb": 512, "vcores": 1}, nm_address="mem://nm", containers=[],
    )  # fmt: skip
    assert reply["action"] == P.SHUTDOWN and "minimum allocations" in reply["diagnostics"]
    assert "tiny" not in rm.ctx.nodes


async def test_a_node_too_far_behind_is_rebooted_until_it_registers_again(autojump_clock):
    """YARN: the RM answers RESYNC and raises REBOOTING; the node leaves the
    scheduler (its containers with it) and counts as rebooted in the cluster
    metrics until it registers again."""
    rm = RMHarness(fifo_conf())
    running(rm)
    for _ in range(3):
        rm.heartbeat("h2")
    total = rm.ctx.scheduler.cluster
    reply = rm.call(
        C.RESOURCE_TRACKER, "node_heartbeat", node_id="h2", response_id=0, containers=[],
        healthy=True,
    )  # fmt: skip
    assert reply["action"] == P.RESYNC
    assert "h2" not in rm.ctx.nodes and rm.ctx.inactive_nodes["h2"].state == "REBOOTED"
    assert "h2" not in rm.ctx.scheduler.nodes and rm.ctx.scheduler.cluster != total
    assert rm.services.client.metrics()["rebooted_nodes"] == 1
    rm.add_node("h2")
    assert rm.ctx.nodes["h2"].state == "RUNNING" and "h2" not in rm.ctx.inactive_nodes
    assert rm.services.client.metrics()["rebooted_nodes"] == 0
    assert rm.ctx.scheduler.cluster == total

"""Container ids around Fair's reservations."""

from __future__ import annotations

from emu.testing.fair import FSHarness


async def test_fulfilled_reservation_keeps_the_reserved_container_id(autojump_clock):
    """FSAppAttempt.assignContainer hands allocate() the node's reserved
    Container, and allocate() only creates a container (a new id) when there
    is none: the container that fulfils a reservation has the reservation's
    id, and the app's id sequence does not advance for it."""
    h = FSHarness()
    h.add_node("n1", 1024)
    a1 = h.request(1024, "queue1")
    h.heartbeat("n1")
    (held,) = h.sched.apps[a1].live
    a2 = h.request(1024, "queue2")
    h.heartbeat("n1")
    reservation = h.sched.nodes["n1"].reserved
    assert reservation is not None and reservation.attempt_id == a2
    assert reservation.container_id.endswith("_000001")
    h.sched.allocate(a1, [], [held], [], [])
    h.drain()
    h.heartbeat("n1")
    assert h.sched.nodes["n1"].reserved is None
    assert list(h.sched.apps[a2].live) == [reservation.container_id]
    h.ask(a2, 1024, 1)
    h.sched.allocate(a2, [], [reservation.container_id], [], [])
    h.drain()
    h.heartbeat("n1")
    assert [c.rsplit("_", 1)[1] for c in h.sched.apps[a2].live] == ["000002"]


async def test_no_reservation_on_a_node_too_small_in_any_resource(autojump_clock):
    """FSAppAttempt.hasContainerForNode: the ask must fit in the node's total
    capability in every resource (Resources.fitsIn), not in memory alone; a
    node with 2 vcores is never reserved for a 3-vcore container."""
    h = FSHarness({"yarn.scheduler.maximum-allocation-vcores": 8})
    # within the RM's scheduling wait, so the 3-vcore ask is not refused
    # against the node's 2 vcores before it reaches the scheduler
    h.sched.set_force_configured_maximum(True)
    h.add_node("n1", 8 * 1024, 2)
    a = h.request(1024, "queue1", vcores=3)
    h.heartbeat("n1")
    assert h.sched.nodes["n1"].reserved is None
    assert h.sched.apps[a].reservations == {}

"""The CapacityScheduler skips a quiet node's pass when it provably assigns
nothing: no outstanding ask anywhere, or no room on the node for a minimum
allocation; never while the node holds a reservation (the pass would try to
fulfil it)."""

from __future__ import annotations

from emu.testing.capacity import GB, Harness, Q

ONE = {Q + "root.queues": "a", Q + "root.a.capacity": 100}


async def test_full_node_is_quiet_while_asks_are_outstanding(autojump_clock) -> None:
    h = Harness(ONE)
    small = h.node("n0", 2 * GB)
    big = h.node("n1", 8 * GB)
    app = h.submit("a", "u")
    sched = h.sched
    assert sched.skip_quiet_node_update("n0")  # nothing asked for yet
    h.ask(app, 2 * GB, 3)
    assert not sched.skip_quiet_node_update("n0")
    h.heartbeat(small)
    assert small.available.memory == 0
    assert sched.demand[sched.root.path]  # two containers still wanted
    assert sched.skip_quiet_node_update("n0")  # but not here: no room left
    assert not sched.skip_quiet_node_update("n1")
    assert not sched.skip_quiet_node_update("nowhere")
    h.heartbeat(big)  # one off-switch container per heartbeat
    h.heartbeat(big)
    assert big.available.memory == 4 * GB
    assert not sched.demand[sched.root.path]
    assert sched.skip_quiet_node_update("n1")


async def test_a_reserved_node_is_never_quiet(autojump_clock) -> None:
    h = Harness(ONE)
    node = h.node("n0", 3 * GB)
    h.node("n1", 8 * GB)  # room in the queue for the reservation
    app, other = h.submit("a", "u"), h.submit("a", "v")
    h.ask(app, 2 * GB, 1)
    h.heartbeat(node)
    h.ask(other, 2 * GB, 1)
    h.heartbeat(node)
    assert node.reserved is not None
    assert node.available.memory == GB
    assert not h.sched.skip_quiet_node_update("n0")
    h.release_all(app)
    h.heartbeat(node)
    assert node.reserved is None and other.used.memory == 2 * GB

"""Delay scheduling and reservations in the details Hadoop's
RegularContainerAllocator, FiCaSchedulerApp and LeafQueue give them:
which asks count as locations, when the missed-opportunity count moves,
which reservation continue-looking gives up, how a reservation is
fulfilled, and when a queue at its limit stays closed."""

from __future__ import annotations

from emu.config.configuration import Configuration
from emu.resources import Resource
from emu.rm.scheduler import javahash
from emu.rm.scheduler.locality import ANY
from emu.testing.capacity import GB, Harness, Q
from emu.testing.cluster import ask
from emu.testing.rm import RMHarness

TWO = {
    Q + "root.queues": "a,b",
    Q + "root.a.capacity": 30,
    Q + "root.b.capacity": 70,
    Q + "root.a.user-limit-factor": 10,
    Q + "root.b.user-limit-factor": 10,
}
SETTINGS = {
    "yarn.scheduler.maximum-allocation-mb": 16 * GB,
    "yarn.scheduler.maximum-allocation-vcores": 32,
}


def _three_nodes() -> Harness:
    h = Harness(TWO, **SETTINGS)
    h.node("h0", 8 * GB, rack="/r0")
    h.node("h1", 8 * GB, rack="/r0")
    h.node("h2", 8 * GB, rack="/r1")
    return h


def _hog(h: Harness, node: str, memory: int) -> None:
    """Fill `node` but `memory` less than its 8 GB with an app of queue a."""
    hog = h.submit("a", "hog")
    h.ask(hog, 8 * GB - memory, 1)
    h.heartbeat(h.sched.nodes[node])


async def test_asks_set_to_zero_still_count_as_locations(autojump_clock) -> None:
    """getUniqueLocationAsks is the size of LocalityAppPlacementAllocator's
    map, which keeps an ask the AM set to zero: here h0, /r0, h1 and *, so
    off-switch waits for more than 2 * 3/3 = 2 missed opportunities (with
    three locations it would be 2 * 2/3)."""
    h = _three_nodes()
    app = h.submit("b", "u")
    h.ask(app, GB, 2, where="h0")
    h.ask(app, GB, 2, where="/r0")
    h.ask(app, GB, 0, where="h1")
    h.ask(app, GB, 2)
    assert app.info.location_count(1) == 4
    h2 = h.sched.nodes["h2"]
    h.heartbeat(h2)
    h.heartbeat(h2)
    assert not app.live
    h.heartbeat(h2)
    assert len(app.live) == 1


async def test_a_placement_taking_a_count_to_zero_drops_the_location(autojump_clock) -> None:
    """decResourceRequest removes an ask its placement took to zero."""
    h = _three_nodes()
    app = h.submit("b", "u")
    h.ask(app, GB, 1, where="h0")
    h.ask(app, GB, 1, where="/r0")
    h.ask(app, GB, 3)
    h.heartbeat(h.sched.nodes["h0"])  # node-local, then one off-switch
    assert app.info.get(1, ANY).num == 1
    assert app.info.location_count(1) == 1  # only `*` is left


async def test_a_node_local_reservation_restarts_the_delay(autojump_clock) -> None:
    """RegularContainerAllocator.doAllocation resets the missed
    opportunities for a new node-local reservation as for a container."""
    h = _three_nodes()
    _hog(h, "h0", 2 * GB)
    app = h.submit("b", "u")
    h.ask(app, 4 * GB, 3, where="h0")
    h.ask(app, 4 * GB, 3, where="/r0")
    h.ask(app, 4 * GB, 3)
    h.heartbeat(h.sched.nodes["h2"])  # off-switch waits for more than 3 * 2/3
    assert not app.live and app.opportunities[1] == 1
    h.heartbeat(h.sched.nodes["h0"])
    assert h.sched.nodes["h0"].reserved is not None
    assert app.opportunities[1] == 0


async def test_a_reserved_node_heartbeat_is_a_scheduling_opportunity(autojump_clock) -> None:
    """tryAllocateOnNode counts an opportunity for the reserved container's
    priority too, and its allocation neither resets the count nor takes a
    new container id: the reserved Container itself is allocated."""
    h = _three_nodes()
    _hog(h, "h2", 2 * GB)
    app = h.submit("b", "u")
    h.ask(app, 4 * GB, 1)
    h2 = h.sched.nodes["h2"]
    h.heartbeat(h2)
    reserved = h2.reserved
    assert reserved is not None and app.opportunities[1] == 1
    h.heartbeat(h2)
    assert h2.reserved is reserved and app.opportunities[1] == 2
    hog = next(a for a in h.sched.apps.values() if a.user == "hog")
    h.release_all(hog)
    h.heartbeat(h2)
    assert [c.container_id for c in app.live.values()] == [reserved.container_id]
    assert app.opportunities[1] == 3


async def test_a_reservation_is_fulfilled_off_switch_within_the_rack_delay(
    autojump_clock,
) -> None:
    """canAssign(RACK_LOCAL) holds for a reserved container too: before the
    node-locality delay has passed it is allocated off-switch (which a
    reserved container may always be), taking no rack-local count."""
    h = _three_nodes()
    _hog(h, "h2", 2 * GB)
    app = h.submit("b", "u")
    h.ask(app, 4 * GB, 1, where="h9")
    h.ask(app, 4 * GB, 1, where="/r1")
    h.ask(app, 4 * GB, 1)
    h2 = h.sched.nodes["h2"]
    h.heartbeat(h2)  # off-switch is allowed (1 * 2/3 < 1), the node is full
    assert h2.reserved is not None
    hog = next(a for a in h.sched.apps.values() if a.user == "hog")
    h.release_all(hog)
    h.heartbeat(h2)
    assert [c.locality for c in app.live.values()] == ["OFF_SWITCH"]
    assert app.info.get(1, "/r1").num == 1


def test_node_id_hash_is_java_s() -> None:
    """NodeId.hashCode for (host, 0), checked against the JVM's values."""
    assert javahash.node_id_hash("host00065") == 373944860
    assert javahash.node_id_hash("host00008") == 283686149


async def test_continue_looking_unreserves_in_hash_map_order(autojump_clock) -> None:
    """FiCaSchedulerApp.getNodeIdToUnreserve takes the first fitting
    reservation in its HashMap<NodeId, RMContainer>'s order (by the NodeId's
    bucket), not by node name: of these, host00065 (bucket 5)."""
    h = Harness(TWO, **SETTINGS)
    busy = ["host00008", "host00015", "host00065", "host00066"]
    for name in busy:
        h.node(name, 8 * GB)
        _hog(h, name, 2 * GB)
    free = h.node("host00001", 8 * GB)  # room for the reservations, no heartbeat yet
    app = h.submit("b", "u")
    h.ask(app, 4 * GB, 4)
    for name in ("host00065", "host00066", "host00015", "host00008"):
        h.heartbeat(h.sched.nodes[name])
    assert sorted(app.reservations) == busy
    held = [h.sched.nodes[n] for n in app.reservations]
    order = javahash.hash_order(held, lambda n: javahash.node_id_hash(n.host), 4)
    assert [n.node_id for n in order] == ["host00065", "host00015", "host00066", "host00008"]
    h.heartbeat(free)  # four reserved for four asks: take this node, give one up
    assert [c.node_id for c in app.live.values()] == ["host00001"]
    assert "host00065" not in app.reservations and len(app.reservations) == 3


async def test_a_queue_at_its_limit_is_checked_with_its_first_app(autojump_clock) -> None:
    """LeafQueue.assignContainers checks the queue's limit with the first
    app in order before looking at its asks: an app with nothing to ask and
    nothing reserved keeps a queue at its limit closed, though a later app's
    reservation could have made room."""
    props = {
        **TWO,
        Q + "root.a.capacity": 50,
        Q + "root.a.maximum-capacity": 50,
        Q + "root.b.capacity": 50,
    }
    h = Harness(props, **SETTINGS)
    n0, n1 = h.node("n0", 8 * GB), h.node("n1", 8 * GB)
    hog = h.submit("b", "hog")
    h.ask(hog, 6 * GB, 1)
    h.heartbeat(n0)
    first = h.submit("a", "x")
    h.ask(first, 2 * GB, 1)
    h.heartbeat(n1)
    second = h.submit("a", "y")
    h.ask(second, 4 * GB, 1)
    h.heartbeat(n0)  # 2 GB free: reserved
    assert n0.reserved is not None and n0.reserved.attempt_id == second.attempt_id
    h.ask(first, 2 * GB, 1)
    h.heartbeat(n1)  # queue a now at its 8 GB maximum, `first` asks nothing more
    assert h.leaf("a").used.memory == 8 * GB and not first.info.priorities
    h.heartbeat(n1)  # 4 GB free, but the queue is closed
    assert not second.live and n0.reserved is not None


async def test_a_killed_running_container_holds_its_node_until_the_nm_says(
    autojump_clock,
) -> None:
    """LeafQueue.completedContainer calls SchedulerNode.releaseContainer(id,
    releasedByNode=false): a released container its NM reported running
    keeps its node's capacity until the NM reports it completed."""
    conf = Configuration({"yarn.resourcemanager.scheduler.class": "capacity"})
    rm = RMHarness(conf)
    rm.add_node("h1")
    app = rm.submit("a")
    rm.start_am(app, "h1")
    rm.allocate(app, [ask(20, ANY, 1)])
    rm.heartbeat("h1")
    (c,) = rm.allocate(app)["allocated"]
    cid = c["container_id"]
    rm.heartbeat("h1", [{"container_id": cid, "state": "RUNNING", "exit_status": -1000}])
    node = rm.ctx.scheduler.nodes["h1"]
    before = node.available
    rm.allocate(app, releases=[cid])
    assert node.available == before and cid in node.containers
    rm.heartbeat("h1", [{"container_id": cid, "state": "COMPLETE", "exit_status": -100}])
    assert node.available == before + Resource(1024, 1)


async def test_a_queue_short_of_a_container_below_its_maximum_blocks_its_share(
    autojump_clock,
) -> None:
    """A queue's maximum is its effective maximum resource, not rounded to
    the minimum allocation (getQueueMaxResource): queue a, at 12 GB of its
    13107 MB, is below it but 819 MB short of a container, so it reports
    QUEUE_LIMIT and the parent holds that headroom back from the next
    child (ParentQueue.assignContainersToChildQueues): b gets nothing from
    the last free 1 GB."""
    props = {
        Q + "root.queues": "a,b",
        Q + "root.a.capacity": 40,
        Q + "root.a.maximum-capacity": 40,
        Q + "root.b.capacity": 60,
        Q + "root.a.user-limit-factor": 10,
        Q + "root.b.user-limit-factor": 10,
        Q + "per-node-heartbeat.maximum-offswitch-assignments": 100,
    }
    h = Harness(props, **SETTINGS)
    nodes = [h.node(f"n{i}", 8 * GB) for i in range(4)]
    a = h.submit("a", "x")
    h.ask(a, GB, 13)
    h.heartbeat(nodes[0])
    h.heartbeat(nodes[1])
    assert h.leaf("a").used.memory == 12 * GB  # the 13th would pass 13107 MB
    b = h.submit("b", "y")
    h.ask(b, GB, 19)
    for n in nodes[1:]:
        h.heartbeat(n)
    assert h.leaf("b").used.memory == 19 * GB and nodes[3].available.memory == GB
    h.ask(b, GB, 1)
    h.heartbeat(nodes[3])
    assert h.leaf("b").used.memory == 19 * GB


def test_java_hash_codes() -> None:
    """ContainerId and ApplicationAttemptId hashCodes, checked against the
    JVM's values: the order preemption marks and kills containers in."""
    assert javahash.container_id_hash("container_0_0001_01_000031") == -1438957395
    assert javahash.container_id_hash("container_1700000000000_0123_02_004567") == -1260357123
    assert javahash.attempt_hash_of("appattempt_0_0001_000001") == -1438958356
    assert javahash.attempt_hash_of("appattempt_1700000000000_0123_000002") == -1260498700

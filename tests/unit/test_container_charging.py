"""Every path that creates or frees a container goes through the abstract
scheduler's `container_allocated`/`container_released` pair, so a container
recovered after an RM restart is charged exactly as a placed one: to its
node, attempt, queue metrics and the cluster, and to what the scheduler
itself keeps (Fair's queue usage, AM usage and FSApp; Capacity's queues and
users), and freeing either gives it all back."""

from __future__ import annotations

from emu.resources import ZERO, Resource
from emu.rm.enums import ContainerEvent
from emu.testing.capacity import Harness, Q
from emu.testing.fair import GB, FSHarness


async def test_fair_charges_a_recovered_container_as_a_placed_one() -> None:
    h = FSHarness()
    h.add_node("n1", 8 * GB)
    attempt = h.submit("root.default", am=Resource(GB, 1))
    assert attempt is not None
    h.update()
    h.heartbeat("n1")
    sched = h.sched
    sapp, fs = sched.apps[attempt], h.fsapp(attempt)
    leaf = fs.queue
    am = next(iter(sapp.live.values()))
    assert am.is_am
    assert (sapp.used, fs.used, leaf.usage, leaf.am_usage) == (Resource(GB, 1),) * 4
    assert fs.am_resource == Resource(GB, 1)

    c = sched.recover_container(
        attempt, "container_0_0001_01_000009", "n1", Resource(2 * GB, 1), 1, False
    )
    assert c is not None
    assert (sapp.used, fs.used, leaf.usage) == (Resource(3 * GB, 2),) * 3
    assert leaf.am_usage == Resource(GB, 1)
    assert sched.queue_metrics(leaf.name).allocated == Resource(3 * GB, 2)
    assert sched.nodes["n1"].allocated == Resource(3 * GB, 2)
    assert sched.used == Resource(3 * GB, 2)
    assert sched.root_available == Resource(5 * GB, 6)

    fs.track_for_preemption(c)
    assert sapp.to_preempt_resource == Resource(2 * GB, 1)
    sched.complete_container(c, 0, "", ContainerEvent.FINISHED, cleanup=False)
    assert (sapp.used, fs.used, leaf.usage) == (Resource(GB, 1),) * 3
    assert sapp.to_preempt == {} and sapp.to_preempt_resource == ZERO
    assert sched.queue_metrics(leaf.name).allocated == Resource(GB, 1)


async def test_fair_keeps_an_app_wanting_only_while_its_usage_is_below_its_demand() -> None:
    h = FSHarness()
    h.add_node("n1", 8 * GB)
    attempt = h.request(GB, "root.default", num=2)
    fs = h.fsapp(attempt)
    assert fs in fs.queue.wanting
    h.heartbeat("n1", times=2)
    assert h.live(attempt) == 2
    assert fs.used == fs.demand
    assert fs not in fs.queue.wanting
    c = next(iter(h.sched.apps[attempt].live.values()))
    h.sched.complete_container(c, 0, "", ContainerEvent.FINISHED, cleanup=False)
    assert fs in fs.queue.wanting


async def test_fair_counts_reservations_from_the_common_app_by_rack() -> None:
    h = FSHarness()
    h.add_node("n1", 2 * GB, rack="/r1")
    h.add_node("n2", 2 * GB, rack="/r2")
    attempt = h.request(GB, "root.default", num=1)
    sapp, fs = h.sched.apps[attempt], h.fsapp(attempt)
    ask = h.sched.apps[attempt].info.get(1, "*")
    assert ask is not None
    h.sched.reserve(sapp, h.sched.nodes["n1"], 1, ask)
    assert (fs.num_reservations("/r1", False), fs.num_reservations("/r2", False)) == (1, 0)
    assert fs.num_reservations("/r2", True) == 1
    h.sched.unreserve(sapp, h.sched.nodes["n1"])
    assert fs.num_reservations("/r1", True) == 0


async def test_capacity_charges_a_recovered_container_as_a_placed_one() -> None:
    h = Harness({Q + "root.queues": "a", Q + "root.a.capacity": 100})
    node = h.node("n1", 8 * GB)
    sapp = h.submit("a", "alice")
    h.ask(sapp, GB, 1)
    h.sched.schedule(node)
    leaf = h.leaf("a")
    assert len(sapp.live) == 1
    assert (leaf.used, leaf.users["alice"].used, h.sched.root.used) == (Resource(GB, 1),) * 3

    c = h.sched.recover_container(
        sapp.attempt_id, "container_0_0001_01_000009", "n1", Resource(2 * GB, 1), 1, False
    )
    assert c is not None
    assert (leaf.used, leaf.users["alice"].used, h.sched.root.used) == (Resource(3 * GB, 2),) * 3
    assert h.sched.queue_metrics("root.a").allocated == Resource(3 * GB, 2)

    h.release_all(sapp)
    assert (leaf.used, leaf.users["alice"].used, h.sched.root.used) == (ZERO,) * 3
    # The recovered container is running: as Hadoop's SchedulerNode.releaseContainer
    # does, its node keeps the capacity until the NM reports it completed.
    assert sapp.used == ZERO and node.allocated == Resource(2 * GB, 1)


async def test_fair_root_available_follows_the_cluster_and_usage() -> None:
    """The root's available resource is kept while neither the cluster nor
    the usage is replaced, and recomputed as soon as either is."""
    h = FSHarness()
    h.add_node("n1", 8 * GB)
    sched = h.sched
    sched.update_root_available()
    held = sched.root_available
    assert held == Resource(8 * GB, 8)
    sched.update_root_available()
    assert sched.root_available is held
    h.add_node("n2", 4 * GB)
    sched.update_root_available()
    assert sched.root_available == Resource(12 * GB, 16)
    attempt = h.request(GB, "root.default", num=1)
    h.heartbeat("n1")
    assert h.live(attempt) == 1
    assert sched.root_available == Resource(11 * GB, 15)

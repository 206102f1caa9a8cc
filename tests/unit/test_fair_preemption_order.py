"""Which containers Fair's preemption takes, and when it looks again, as
Hadoop 3.4.2's FSPreemptionThread does: nodes and containers in the order
of the Java HashMaps it walks."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import trio

from emu.resources import Resource
from emu.rm.scheduler import javahash
from emu.rm.scheduler.app_scheduling_info import AppSchedulingInfo, Ask
from emu.rm.scheduler.fair.preemption import StarvedApps
from emu.testing.cluster import ask
from emu.testing.fair import GB, FSHarness, write_alloc


def test_java_hash_codes_and_hashmap_order():
    """Values printed by the Hadoop 3.4.2 records themselves (NodeId,
    ApplicationAttemptId, ContainerId hashCode; HashMap key order)."""
    assert javahash.node_id_hash("node1", 0) == -563477180
    assert javahash.node_id_hash("a2117.smile.com", 8041) == -1149263119
    assert javahash.node_id_hash("ünï", 0) == 315893714
    assert javahash.app_attempt_hash(1700000000123, 17, 2) == -620853459
    assert javahash.container_id_hash("container_0_0017_02_012345") == -1433012924
    assert javahash.container_id_hash("container_e03_0_0017_02_000077") == -1433369424
    hosts = [f"host{i:05d}" for i in range(1, 101)]
    ordered = javahash.hashmap_order(
        hosts, [javahash.node_id_hash(h, 0) for h in hosts], javahash.capacity_for(100)
    )
    assert ordered[:6] == [
        "host00071",
        "host00080",
        "host00067",
        "host00076",
        "host00085",
        "host00094",
    ]
    assert ordered[-3:] == ["host00058", "host00019", "host00055"]
    # 30 inserted (the table grew to 64), 10 removed, 5 more: insertion order within a bucket
    keys = [f"container_0_0001_01_{i:06d}" for i in range(1, 31) if i % 2 or i > 20]
    keys += [f"container_0_0002_01_{i:06d}" for i in range(1, 6)]
    ordered = javahash.hashmap_order(
        keys, [javahash.container_id_hash(k) for k in keys], javahash.capacity_for(30)
    )
    assert [k[-9:] for k in ordered[:4]] == ["01_000017", "01_000002", "01_000019", "01_000013"]
    assert ordered[1] == "container_0_0002_01_000002"


def _cluster(
    tmp_path: Path, props: dict | None = None, nodes: tuple[str, str] = ("node1", "node2")
) -> FSHarness:
    alloc = write_alloc(
        tmp_path,
        '<queue name="greedy"/><queue name="starving">'
        "<fairSharePreemptionThreshold>1</fairSharePreemptionThreshold>"
        "<fairSharePreemptionTimeout>0</fairSharePreemptionTimeout></queue>",
    )
    base = {
        "yarn.scheduler.fair.preemption": "true",
        "yarn.scheduler.fair.preemption.cluster-utilization-threshold": 0,
        "yarn.scheduler.fair.waitTimeBeforeKill": 0,
    }
    h = FSHarness({**base, **(props or {})}, alloc=alloc)
    for node in nodes:
        h.add_node(node, 4 * GB, 12)
    return h


async def test_victim_is_the_first_in_hadoops_hashmap_walk(tmp_path: Path, autojump_clock):
    """Containers 1-4 on node1, 5-8 on node2. ClusterNodeTracker's HashMap
    lists node2 before node1; node2's launchedContainers walk 5, 6, 7, 8 and
    getRunningContainersWithAMsAtTheEnd puts each first: 8 is taken."""
    h = _cluster(tmp_path)
    greedy = h.request(GB, "root.greedy", num=8)
    h.heartbeat("node1", 4)
    h.heartbeat("node2", 4)
    assert h.live(greedy) == 8
    assert [n.node_id for n in h.sched.tracked_nodes()] == ["node2", "node1"]
    h.request(GB, "root.starving", num=1)
    await trio.sleep(1)
    h.update()
    assert sorted(h.sched.apps[greedy].live) == [
        f"container_0_0001_01_{i:06d}" for i in range(1, 8)
    ]


async def test_next_starvation_check_leaves_out_the_heartbeats(tmp_path: Path, autojump_clock):
    """FSPreemptionThread's delayBeforeNextStarvationCheck is waitTimeBeforeKill
    + 4 x the NM heartbeat interval + waitTimeBeforeNextStarvationCheck, but
    the thread is built before the scheduler has read the interval (0): the
    app is looked at again 5 s + 10 s later, not 19 s."""
    h = _cluster(tmp_path, {"yarn.scheduler.fair.waitTimeBeforeKill": 5000})
    h.request(GB, "root.greedy", num=8)
    h.heartbeat("node1", 4)
    h.heartbeat("node2", 4)
    now = h.sched.now_ms()
    starving = h.request(GB, "root.starving", num=1)  # its update finds it starved
    assert h.fsapp(starving).next_starvation_check == now + 15000


async def test_kills_come_in_the_order_the_victims_were_chosen(tmp_path: Path, autojump_clock):
    """PreemptContainersTask kills its list as identifyContainersToPreempt
    built it (here 8, then 7 on node2), not sorted by container id."""
    h = _cluster(tmp_path)
    killed: list[str] = []

    class Watcher:
        def placed(self, c: object) -> None: ...

        def scheduling_pass(self, node_id: str) -> None: ...

        def allocate(self, attempt_id: str, asks: object, call: Callable[[], Any]) -> Any:
            return call()

        def preempted(self, c: object) -> None:
            killed.append(c.container_id)  # type: ignore[attr-defined]

    h.sched.watcher = Watcher()  # type: ignore[assignment]
    h.request(GB, "root.greedy", num=8)
    h.heartbeat("node1", 4)
    h.heartbeat("node2", 4)
    h.request(GB, "root.starving", num=2)
    await trio.sleep(1)
    h.update()
    assert killed == ["container_0_0001_01_000008", "container_0_0001_01_000007"]


def test_resource_requests_in_the_order_of_hadoops_concurrent_hashmaps():
    """AppSchedulingInfo.getAllResourceRequests: scheduler keys, then each
    allocator's resource names, in ConcurrentHashMap order (values printed by
    Hadoop 3.4.2: SchedulerRequestKey.hashCode, a map of these six names),
    whose table doubles when a put brings it to 12 entries (HashMap: 13)."""
    assert [javahash.priority_key_hash(p) for p in (0, 1, 5, 10, 20)] == [
        232347939,
        232348900,
        232352744,
        232357549,
        232367159,
    ]
    info = AppSchedulingInfo()
    cap = Resource(GB, 1)
    names = ["*", "/rack1", "node4", "node1", "node2", "node3"]
    info.update([Ask(20, n, cap, 1, True) for n in names])
    info.update([Ask(10, "*", cap, 2, True)])
    assert [(p, n) for p, n, _ in info.resource_requests()] == [
        (10, "*"),
        *[(20, n) for n in ["node4", "node2", "node3", "*", "/rack1", "node1"]],
    ]
    assert javahash.concurrent_capacity_for(11) == 16
    assert javahash.concurrent_capacity_for(12) == 32
    assert javahash.capacity_for(12) == 16
    # a `*` ask for no containers drops the priority's allocator, names and all
    info.update([Ask(20, "*", cap, 0, True)])
    assert [(p, n) for p, n, _ in info.resource_requests()] == [(10, "*")]


async def test_starved_node_ask_is_met_on_its_node_first(tmp_path: Path, autojump_clock):
    """A starved app asking for node4 (and its rack, and `*`): Hadoop's map of
    resource names lists node4 before `*`, so the container is made room for
    on node4, though ClusterNodeTracker lists node2 first."""
    h = _cluster(tmp_path, {"yarn.scheduler.fair.waitTimeBeforeKill": 5000}, ("node2", "node4"))
    greedy = h.request(GB, "root.greedy", num=8)
    h.heartbeat("node2", 4)
    h.heartbeat("node4", 4)
    assert [n.node_id for n in h.sched.tracked_nodes()] == ["node2", "node4"]
    starving = h.submit("root.starving")
    assert starving is not None
    asks = [ask(1, name, 1) for name in ("node4", "/rack1", "*")]
    h.sched.allocate(starving, asks, [], [], [])
    h.drain()
    await trio.sleep(1)
    h.update()
    marked = h.sched.apps[greedy].to_preempt
    assert {h.sched.apps[greedy].live[c].node_id for c in marked} == {"node4"}


async def test_equally_starved_apps_come_last_added_first(tmp_path: Path, autojump_clock):
    """FSStarvedApps is a PriorityBlockingQueue whose comparator puts app1
    first when its starvation fits in app2's: of two apps equally starved,
    the one added later is sifted above the other and taken first, so the
    room on node2 is kept first for the second app."""
    h = _cluster(tmp_path)
    h.request(GB, "root.greedy", num=8)
    h.heartbeat("node1", 4)
    h.heartbeat("node2", 4)
    first = h.submit("root.starving")
    second = h.submit("root.starving")
    assert first is not None and second is not None
    h.ask(first, GB, 1)
    h.ask(second, GB, 1)
    await trio.sleep(1)
    h.update()
    assert h.fsapp(first).starvation == h.fsapp(second).starvation == Resource(GB, 0)
    assert list(h.sched.preempt_nodes["node2"].for_app) == [second, first]


async def test_starved_apps_heap_compares_when_added_and_taken(tmp_path: Path, autojump_clock):
    """PriorityBlockingQueue's siftUp and siftDown with StarvationComparator
    (no total order: neither <2 GB, 1> nor <1 GB, 4> fits in the other)."""
    h = _cluster(tmp_path)
    starvations = {
        "a": Resource(2 * GB, 1),
        "b": Resource(GB, 4),
        "c": Resource(GB, 1),
        "d": Resource(3 * GB, 3),
    }
    apps = {}
    for name, starvation in starvations.items():
        attempt = h.submit("root.starving")
        assert attempt is not None
        app = apps[name] = h.fsapp(attempt)
        app.fairshare_starvation = starvation
    queue = StarvedApps()
    for app in apps.values():
        queue.add(app)
    queue.add(apps["a"])  # queued once
    names = {app.name: name for name, app in apps.items()}
    taken = []
    while (app := queue.take()) is not None:
        taken.append(names[app.name])
    assert taken == ["c", "a", "b", "d"]  # as Java 17's PriorityBlockingQueue takes them


async def test_victims_of_one_set_go_app_by_app_in_hashmap_order(tmp_path: Path, autojump_clock):
    """PreemptableContainers.getAllContainers walks containersByApp, a HashMap
    keyed by ApplicationId: application_0_0001 comes before application_0_0002
    though node2's walk met the second app's container first; the kills come
    in that order."""
    h = _cluster(tmp_path)
    killed: list[str] = []

    class Watcher:
        def placed(self, c: object) -> None: ...

        def scheduling_pass(self, node_id: str) -> None: ...

        def allocate(self, attempt_id: str, asks: object, call: Callable[[], Any]) -> Any:
            return call()

        def preempted(self, c: object) -> None:
            killed.append(c.container_id)  # type: ignore[attr-defined]

    assert javahash.app_id_hash(0, 5) == -655606762  # as Hadoop 3.4.2's ApplicationId
    h.sched.watcher = Watcher()  # type: ignore[assignment]
    first, second = h.submit("root.greedy"), h.submit("root.greedy")
    assert first is not None and second is not None
    h.ask(first, GB, 4)
    h.ask(second, GB, 4)
    h.update()
    h.heartbeat("node1", 4)
    h.heartbeat("node2", 4)
    h.request(2 * GB, "root.starving", num=1)
    h.heartbeat("node1")
    assert killed == ["container_0_0001_01_000004", "container_0_0002_01_000004"]


async def test_leaf_queues_looked_at_in_hadoops_hash_set_order(tmp_path: Path, autojump_clock):
    """QueueManager creates the allocation file's leaves in the order of
    QueueProperties' HashSet of names, and FairScheduler.update looks for
    starved apps queue by queue in that order (getLeafQueues): root.d.d1
    before root.a. Of two apps equally starved, the one in root.a is added
    to FSStarvedApps last and served first."""
    starving = (
        "<fairSharePreemptionThreshold>1</fairSharePreemptionThreshold>"
        "<fairSharePreemptionTimeout>0</fairSharePreemptionTimeout>"
    )
    alloc = write_alloc(
        tmp_path,
        f'<queue name="a">{starving}</queue><queue name="b"/><queue name="c"/>'
        f'<queue name="d"><queue name="d1">{starving}</queue><queue name="d2"/></queue>',
    )
    props = {
        "yarn.scheduler.fair.preemption": "true",
        "yarn.scheduler.fair.preemption.cluster-utilization-threshold": 0,
        "yarn.scheduler.fair.waitTimeBeforeKill": 5000,
    }
    h = FSHarness(props, alloc=alloc)
    for node in ("node1", "node2"):
        h.add_node(node, 4 * GB, 12)
    # (root.default, which emu makes at start, aside)
    assert [q.name for q in h.sched.qm.leaves if q.name != "root.default"] == [
        "root.d.d1",
        "root.d.d2",
        "root.a",
        "root.b",
        "root.c",
    ]
    h.request(GB, "root.b", num=8)
    h.heartbeat("node1", 4)
    h.heartbeat("node2", 4)
    in_a, in_d1 = h.submit("root.a"), h.submit("root.d.d1")
    assert in_a is not None and in_d1 is not None
    h.ask(in_a, GB, 1)
    h.ask(in_d1, GB, 1)
    await trio.sleep(1)
    h.update()
    assert h.fsapp(in_a).starvation == h.fsapp(in_d1).starvation == Resource(GB, 0)
    assert list(h.sched.preempt_nodes["node2"].for_app) == [in_a, in_d1]

"""Node labels in the CapacityScheduler, one mechanism at a time: label
settings as CapacitySchedulerConfiguration reads them, partitions matched
to asks, the missed-opportunity rule before a non-exclusive node serves
default-partition asks, no AM there, and usage kept per partition."""

from __future__ import annotations

import pytest

from emu.config.configuration import Configuration
from emu.errors import InputError
from emu.resources import Resource
from emu.rm.scheduler.capacity.config import parse
from emu.testing.capacity import GB, Harness, Q, used

MIN, MAX = Resource(1024, 1), Resource(8192, 8)

HIERARCHY = {
    Q + "root.queues": "eng,ops",
    Q + "root.eng.queues": "train,dev",
    Q + "root.eng.capacity": 60,
    Q + "root.eng.accessible-node-labels": "gpu",
    Q + "root.eng.accessible-node-labels.gpu.capacity": 100,
    Q + "root.eng.default-node-label-expression": "gpu",
    Q + "root.eng.train.capacity": 50,
    Q + "root.eng.train.accessible-node-labels.gpu.capacity": 70,
    Q + "root.eng.dev.capacity": 50,
    Q + "root.eng.dev.accessible-node-labels.gpu.capacity": 30,
    Q + "root.eng.dev.accessible-node-labels.gpu.maximum-capacity": 50,
    Q + "root.eng.dev.default-node-label-expression": " ",
    Q + "root.ops.capacity": 40,
    Q + "root.ops.accessible-node-labels": " ",
}


def _parse(props: dict[str, object]):
    conf = Configuration()
    for k, v in props.items():
        conf.set(k, v)
    return parse(conf, MIN, MAX)


def test_label_settings_are_inherited_and_made_absolute_along_the_path():
    cs = _parse(HIERARCHY)
    q = cs.queues
    assert cs.labels == frozenset({"gpu"})
    assert q["root"].accessible_labels == frozenset({"*"})
    assert q["root.eng.train"].accessible_labels == frozenset({"gpu"})  # inherited
    assert q["root.ops"].accessible_labels == frozenset()  # a blank list: no label
    assert q["root.eng.train"].absolute_in("gpu") == pytest.approx((0.7, 1.0))
    assert q["root.eng.dev"].absolute_in("gpu") == pytest.approx((0.3, 0.5))
    # ops sets nothing for gpu: no capacities there at all (QueueCapacities)
    assert q["root.ops"].absolute_in("gpu") == pytest.approx((0.0, 0.0))
    assert q["root.eng.train"].default_label == "gpu"  # inherited from eng
    assert q["root.eng.dev"].default_label == ""  # its own, blank
    assert q["root.ops"].default_label == ""
    assert q["root.eng.train"].can_access("gpu") and not q["root.ops"].can_access("gpu")
    assert q["root.ops"].can_access("")


@pytest.mark.parametrize(
    ("extra", "name", "says"),
    [
        (
            {Q + "root.eng.dev.accessible-node-labels.gpu.capacity": 150},
            Q + "root.eng.dev.accessible-node-labels.gpu.capacity",
            "must be in [0, 100]",
        ),
        (
            {Q + "root.eng.dev.accessible-node-labels.gpu.capacity": 40},
            Q + "root.eng.queues",
            "capacities for label gpu of the children of root.eng sum to 110",
        ),
        (
            {Q + "root.eng.accessible-node-labels.gpu.capacity": 0},
            Q + "root.queues",
            "capacities for label gpu of the children of root sum to 0",
        ),
        (
            {Q + "root.nope.accessible-node-labels.gpu.capacity": 10},
            Q + "root.nope.accessible-node-labels.gpu.capacity",
            "not defined",
        ),
        (
            # a queue in resources by default, in percent on a label (Hadoop's words)
            {
                Q + "root.eng.capacity": "[memory=10240,vcores=10]",
                Q + "root.ops.capacity": "[memory=6144,vcores=6]",
                Q + "root.eng.train.capacity": "[memory=5120,vcores=5]",
                Q + "root.eng.dev.capacity": "[memory=5120,vcores=5]",
            },
            Q + "root.eng.accessible-node-labels.gpu.capacity",
            "Queue 'root.eng' should use either percentage based capacity configuration "
            "or absolute resource.",
        ),
    ],
)
def test_a_bad_label_setting_names_its_property(extra, name, says):
    with pytest.raises(InputError) as e:
        _parse({**HIERARCHY, **extra})
    assert name in str(e.value) and says in str(e.value)


SPARE = {
    Q + "root.queues": "a",
    Q + "root.a.capacity": 100,
    Q + "root.a.accessible-node-labels": "spare,gpu",
    Q + "root.a.accessible-node-labels.spare.capacity": 100,
    Q + "root.a.accessible-node-labels.gpu.capacity": 100,
}


async def test_a_non_exclusive_node_lends_itself_after_a_miss_per_node(autojump_clock) -> None:
    """Two nodes: the spare node places a default-partition ask only once
    the ask has missed two scheduling opportunities, and a placement on
    the unlabelled node starts the count again."""
    h = Harness(SPARE)
    plain = h.node("n1", 8 * GB)
    spare = h.node("n2", 8 * GB, labels=("spare(exclusive=false)",))
    app = h.submit("a", "u")
    h.ask(app, GB, 4)
    h.heartbeat(spare)
    assert used(app) == 0  # one missed opportunity, of two needed
    h.heartbeat(spare)
    assert sorted(c.node_id for c in app.live.values()) == ["n2"]
    h.heartbeat(plain)
    h.heartbeat(spare)
    assert sorted(c.node_id for c in app.live.values()) == ["n1", "n2"]
    h.heartbeat(spare)
    assert sorted(c.node_id for c in app.live.values()) == ["n1", "n2", "n2"]


async def test_an_exclusive_node_serves_only_its_labels_asks(autojump_clock) -> None:
    h = Harness(SPARE)
    plain = h.node("n1", 8 * GB)
    gpu = h.node("n2", 8 * GB, labels=("gpu",))
    default_app = h.submit("a", "u")
    gpu_app = h.submit("a", "v", label="gpu")
    h.ask(default_app, GB, 2)
    h.ask(gpu_app, GB, 2)
    for _ in range(5):
        h.heartbeat(gpu)
    assert {c.node_id for c in gpu_app.live.values()} == {"n2"} and used(gpu_app) == 2 * GB
    assert used(default_app) == 0
    h.heartbeat(plain)
    h.heartbeat(plain)
    assert {c.node_id for c in default_app.live.values()} == {"n1"}
    assert used(gpu_app) == 2 * GB  # nothing on the unlabelled node


async def test_no_am_container_on_a_non_exclusive_node_borrowed(autojump_clock) -> None:
    h = Harness(SPARE)
    h.node("n1", 8 * GB)
    spare = h.node("n2", 8 * GB, labels=("spare(exclusive=false)",))
    app = h.submit("a", "u", am=Resource(GB, 1))
    h.sched.request_am_container(app.attempt_id, Resource(GB, 1))
    for _ in range(6):
        h.heartbeat(spare)
    assert used(app) == 0


async def test_an_am_may_borrow_a_non_exclusive_node_when_configured(autojump_clock) -> None:
    """yarn.resourcemanager.node-labels.am.allow-non-exclusive-allocation."""
    h = Harness(
        SPARE, **{"yarn.resourcemanager.node-labels.am.allow-non-exclusive-allocation": "true"}
    )
    h.node("n1", 8 * GB)
    spare = h.node("n2", 8 * GB, labels=("spare(exclusive=false)",))
    app = h.submit("a", "u", am=Resource(GB, 1))
    h.sched.request_am_container(app.attempt_id, Resource(GB, 1))
    h.heartbeat(spare)
    assert used(app) == 0  # one missed opportunity of two
    h.heartbeat(spare)
    assert [c.node_id for c in app.live.values()] == ["n2"]


async def test_usage_is_kept_per_partition_and_reported_per_label(autojump_clock) -> None:
    h = Harness(SPARE)
    h.node("n1", 8 * GB)
    gpu = h.node("n2", 4 * GB, labels=("gpu",))
    app = h.submit("a", "u", label="gpu")
    h.ask(app, GB, 3)
    for _ in range(3):
        h.heartbeat(gpu)
    (info,) = h.sched.queue_info("root.a")
    assert info["used"]["memory-mb"] == 0  # the default partition's, as YARN's
    assert info["used_total"]["memory-mb"] == 3 * GB
    by_label = {p["partition"]: p for p in info["partitions"]}
    assert by_label["gpu"]["used"]["memory-mb"] == 3 * GB
    assert by_label["gpu"]["absolute_used_capacity"] == pytest.approx(75.0)
    assert by_label["spare"]["used"]["memory-mb"] == 0
    assert info["accessible_labels"] == ["gpu", "spare"]
    h.release_all(app)
    (info,) = h.sched.queue_info("root.a")
    assert info["used_total"]["memory-mb"] == 0


async def test_a_queue_that_cannot_access_the_label_rejects_the_app(autojump_clock) -> None:
    h = Harness({**SPARE, Q + "root.a.accessible-node-labels": "spare"})
    h.node("n1", 8 * GB, labels=("gpu",))
    reason = h.try_submit("a", "u", label="gpu")
    assert isinstance(reason, str) and "doesn't have permission to access" in reason


async def test_the_rest_scheduler_info_has_a_partition_entry_per_label(autojump_clock) -> None:
    """/ws/v1/cluster/scheduler: each queue's capacities and usage by
    partition name ("" the default one), and the labels it may use."""
    from emu.testing.rm import RMHarness
    from emu.web.view import snapshot

    conf = Configuration({"yarn.resourcemanager.scheduler.class": "capacity"})
    for k, v in SPARE.items():
        conf.set(k, v)
    rm = RMHarness(conf)
    rm.add_node("n1")
    rm.add_node("n2", labels=("gpu",))
    info = snapshot(rm)  # type: ignore[arg-type]
    root = info.scheduler
    (a,) = root["queues"]["queue"]
    assert a["nodeLabels"] == ["gpu", "spare"]
    capacities = {p["partitionName"]: p for p in a["capacities"]["queueCapacitiesByPartition"]}
    assert set(capacities) == {"", "gpu", "spare"}
    assert capacities["gpu"]["absoluteCapacity"] == pytest.approx(100.0)
    usages = {p["partitionName"] for p in a["resources"]["resourceUsagesByPartition"]}
    assert usages == {"", "gpu", "spare"}
    (n2,) = [n for n in info.nodes if n["nodeHostName"] == "n2"]
    assert n2["nodeLabels"] == ["gpu"]


def test_a_labels_capacity_in_resources_is_read_as_resources_not_misread():
    """Hadoop takes `[memory=...]` for a label's capacities; so does emu,
    rather than saying "expected a number"."""
    cs = _parse(
        {
            Q + "root.queues": "a",
            Q + "root.a.capacity": "[memory=8192,vcores=8]",
            Q + "root.a.accessible-node-labels.gpu.capacity": "[memory=4096,vcores=4]",
            Q + "root.a.accessible-node-labels.gpu.maximum-capacity": "[memory=8192,vcores=8]",
        }
    )
    assert cs.queues["root.a"].label_resources["gpu"] == (
        Resource(4096, 4),
        Resource(8192, 8),
    )


async def test_a_guarantee_below_one_container_counts_as_one_in_queue_order(
    autojump_clock,
) -> None:
    """CSQueueUtils.updateUsedCapacity divides a queue's usage by its
    guarantee raised to at least the minimum allocation: `a`, guaranteed 8 %
    of an 8 GB partition (655 MB), using 2 GB is at 2.0, below `c`'s 5 GB of
    29 % (2.16), so `a` is offered the node first."""
    h = Harness(
        {
            Q + "root.queues": "a,b,c",
            Q + "root.a.capacity": 33,
            Q + "root.b.capacity": 34,
            Q + "root.c.capacity": 33,
            Q + "root.accessible-node-labels.y.capacity": 100,
            Q + "root.a.accessible-node-labels": "y",
            Q + "root.a.accessible-node-labels.y.capacity": 8,
            Q + "root.b.accessible-node-labels": "y",
            Q + "root.b.accessible-node-labels.y.capacity": 63,
            Q + "root.c.accessible-node-labels": "y",
            Q + "root.c.accessible-node-labels.y.capacity": 29,
        }
    )
    node = h.node("n1", 8 * GB, labels=("y",))
    a = h.submit("a", "u", label="y")
    c = h.submit("c", "v", label="y")
    h.ask(a, GB, 2)
    h.ask(c, 5 * GB, 1)
    for _ in range(3):
        h.heartbeat(node)
    assert (used(a), used(c)) == (2 * GB, 5 * GB)
    env = h.sched.env_for("y", False)
    assert h.leaf("a").used_capacity(env) == pytest.approx(2.0)
    assert h.leaf("c").used_capacity(env) == pytest.approx(5120 / 2375)
    order = [q.path for q in h.sched.root.sorted_children(env)]
    assert order == ["root.b", "root.a", "root.c"]


async def test_a_labelled_am_is_held_to_its_users_weighted_am_limit(autojump_clock) -> None:
    """activateApplications reads getUserAMResourceLimitPerPartition with
    the app's user (and so the user's weight) in a labelled partition too:
    a's guarantee in x is 68 % of 8 GB (5570 MB), AM percent 0.3, alice's
    weight 0.25: 417.75 MB, rounded up to 1 GB. Her second 1 GB AM there
    waits while her first app runs (without the weight: 2 GB, it starts)."""
    h = Harness(
        {
            Q + "root.queues": "a,b",
            Q + "root.a.capacity": 68,
            Q + "root.a.maximum-am-resource-percent": 0.3,
            Q + "root.a.user-settings.alice.weight": 0.25,
            Q + "root.a.accessible-node-labels.x.capacity": 68,
            Q + "root.b.capacity": 32,
            Q + "root.b.accessible-node-labels.x.capacity": 32,
        }
    )
    h.node("n1", 8 * GB)
    h.node("n2", 8 * GB, labels=("x",))
    a = h.leaf("a")
    first = h.submit("a", "alice", Resource(GB, 1), label="x")
    h.ask(first, GB, 1)
    h.submit("a", "alice", Resource(GB, 1), label="x")
    assert (len(a.active), len(a.pending)) == (1, 1)
    h.finish(first)
    assert (len(a.active), len(a.pending)) == (1, 0)


async def test_maximum_applications_is_the_largest_over_configured_labels(autojump_clock) -> None:
    """AbstractLeafQueue.updateMaximumApplications: with no per-queue limit,
    a queue may hold (int) (maximum-applications * absolute capacity) apps in
    whichever of its configured labels gives the most: a's 8 % of 10 apps
    is 0, its 78 % in x is 7."""
    h = Harness(
        {
            Q + "maximum-applications": 10,
            Q + "root.queues": "a,b",
            Q + "root.a.capacity": 8,
            Q + "root.a.accessible-node-labels.x.capacity": 78,
            Q + "root.b.capacity": 92,
            Q + "root.b.accessible-node-labels.x.capacity": 22,
        }
    )
    h.node("n1", 8 * GB)
    assert (h.leaf("a").max_applications, h.leaf("a").max_applications_per_user) == (7, 7)
    assert h.leaf("b").max_applications == 9

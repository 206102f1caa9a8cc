"""A node label's capacities in resources: per label, each queue's
configured minimum and maximum as CapacitySchedulerConfiguration reads
them (a maximum inherited from the parent's), the effective resources
and capacities derived from the partition's size (scaled down when it
cannot cover what the children ask, recomputed when nodes come and go),
and Hadoop 3.4.2's refusals of bad values, in its words."""

from __future__ import annotations

import pytest

from emu.config import support
from emu.config.configuration import Configuration
from emu.errors import InputError
from emu.resources import Resource
from emu.rm.scheduler.capacity.config import parse
from emu.testing.capacity import GB, Harness, Q

MIN, MAX = Resource(1024, 1), Resource(8192, 8)
GPU = Q + "root.eng.{}accessible-node-labels.gpu.{}"

HIERARCHY = {
    Q + "root.queues": "eng,ops",
    Q + "root.eng.queues": "train,dev",
    Q + "root.eng.capacity": "[memory=10240,vcores=10]",
    Q + "root.eng.accessible-node-labels": "gpu",
    GPU.format("", "capacity"): "[memory=16384,vcores=16]",
    Q + "root.eng.train.capacity": "[memory=5120,vcores=5]",
    GPU.format("train.", "capacity"): "[memory=11264,vcores=11]",
    Q + "root.eng.dev.capacity": "[memory=5120,vcores=5]",
    GPU.format("dev.", "capacity"): "[memory=5120,vcores=5]",
    GPU.format("dev.", "maximum-capacity"): "[memory=8192,vcores=8]",
    Q + "root.ops.capacity": "[memory=6144,vcores=6]",
    Q + "root.ops.accessible-node-labels": " ",
}


def _parse(props: dict[str, object]):
    conf = Configuration()
    for k, v in props.items():
        conf.set(k, v)
    return parse(conf, MIN, MAX)


def _refusal(changes: dict[str, object]) -> InputError:
    with pytest.raises(InputError) as e:
        _parse({**HIERARCHY, **changes})
    return e.value


def test_the_rows_are_emulated_not_refused():
    for prop in ("capacity", "maximum-capacity"):
        name = GPU.format("dev.", prop)
        assert support.refused_rule(name, "[memory=4096,vcores=4]", "capacity") is None
        rule = support.rule_for(name, "[memory=4096,vcores=4]")
        assert rule is not None and rule.status == support.EMULATED


def test_configured_resources_per_label_with_the_maximum_inherited():
    cs = _parse(
        {
            **HIERARCHY,
            GPU.format("", "maximum-capacity"): "[memory=12288,vcores=12]",
            GPU.format("", "capacity"): "[memory=12288,vcores=12]",
            GPU.format("train.", "capacity"): "[memory=7168,vcores=7]",
        }
    )
    q = cs.queues
    assert cs.label_absolute == frozenset({"gpu"})
    assert q["root.eng"].label_resources["gpu"] == (Resource(12288, 12), Resource(12288, 12))
    # train sets no maximum there: its parent's (updateConfigurableResourceLimits)
    assert q["root.eng.train"].label_resources["gpu"] == (Resource(7168, 7), Resource(12288, 12))
    assert q["root.eng.dev"].label_resources["gpu"] == (Resource(5120, 5), Resource(8192, 8))
    assert "gpu" not in q["root.ops"].label_resources


def test_percent_labels_configure_no_resources():
    cs = _parse(
        {
            Q + "root.queues": "a",
            Q + "root.a.capacity": 100,
            Q + "root.a.accessible-node-labels.gpu.capacity": 100,
        }
    )
    assert cs.label_absolute == frozenset()


# Each wording below is what Hadoop 3.4.2's CapacityScheduler says, taken
# from running it (`--scheduler-impl hadoop`) on the same configuration.
def test_a_minimum_above_the_maximum_in_a_label_is_refused():
    e = _refusal({GPU.format("dev.", "maximum-capacity"): "[memory=4096,vcores=4]"})
    assert e.where == GPU.format("dev.", "capacity")
    assert e.message == (
        "Min resource configuration <memory:5120, vCores:5> is greater than its max "
        "value:<memory:4096, vCores:4> in queue:root.eng.dev"
    )


def test_a_maximum_above_the_parents_in_a_label_is_refused():
    e = _refusal(
        {
            GPU.format("", "capacity"): "[memory=12288,vcores=12]",
            GPU.format("", "maximum-capacity"): "[memory=12288,vcores=12]",
            GPU.format("dev.", "maximum-capacity"): "[memory=16384,vcores=16]",
        }
    )
    assert e.where == GPU.format("dev.", "maximum-capacity")
    assert e.message == (
        "Max resource configuration <memory:16384, vCores:16> is greater than parents max "
        "value:<memory:12288, vCores:12> in queue:root.eng.dev"
    )


def test_children_above_their_parent_in_a_label_are_refused():
    e = _refusal({GPU.format("train.", "capacity"): "[memory=12288,vcores=12]"})
    assert e.where == Q + "root.eng.queues"
    assert e.message == (
        "Parent Queues capacity: <memory:16384, vCores:16> is less than to its "
        "children:<memory:17408, vCores:17> for queue:eng"
    )


def test_percent_in_one_label_and_resources_in_another_is_refused():
    e = _refusal({GPU.format("train.", "capacity"): "70"})
    assert e.where == GPU.format("train.", "capacity")
    assert e.message == (
        "Queue 'root.eng.train' should use either percentage based capacity "
        "configuration or absolute resource."
    )


def _harness(gpu_nodes: int) -> Harness:
    h = Harness(HIERARCHY, **{"yarn.node-labels.enabled": "true"})
    for i in range(gpu_nodes):
        h.node(f"g{i}", 8 * GB, 8, labels=("gpu",))
    for i in range(2):
        h.node(f"d{i}", 8 * GB, 8)
    return h


def _gpu(h: Harness, path: str) -> tuple[Resource, Resource, float, float]:
    """(effective minimum, effective maximum, absolute capacity, absolute
    maximum capacity) of `path` in the gpu partition."""
    q = h.sched.tree[path]
    env = h.sched.env_for("gpu", False)
    lo, hi = q.exact_sizes(env)
    return lo, hi, *q.absolute_in("gpu")


async def test_effective_resources_and_capacities_in_a_partition_that_covers_them(autojump_clock):
    h = _harness(2)  # gpu: 16 GB, 16 vcores
    assert _gpu(h, "root.eng") == (Resource(16384, 16), Resource(16384, 16), 1.0, 1.0)
    lo, hi, cap, max_cap = _gpu(h, "root.eng.train")
    assert (lo, hi) == (Resource(11264, 11), Resource(16384, 16))
    assert cap == pytest.approx(11 / 16) and max_cap == pytest.approx(1.0)
    lo, hi, cap, max_cap = _gpu(h, "root.eng.dev")
    assert (lo, hi) == (Resource(5120, 5), Resource(8192, 8))
    assert cap == pytest.approx(5 / 16) and max_cap == pytest.approx(0.5)
    dev = h.sched.tree["root.eng.dev"]
    env = h.sched.env_for("gpu", False)
    assert dev.guaranteed(env) == Resource(5120, 5)
    assert dev.max_resource(env) == Resource(8192, 8)


async def test_a_partition_too_small_scales_the_minimums_down_at_each_level(autojump_clock):
    """8 GB of gpu for eng's 16 GB: eng gets half of what it asks; train's
    and dev's 16 GB then get half of eng's 8 GB (createNormalizedMinResource
    truncates: 11 vcores * 0.5 = 5)."""
    h = _harness(1)
    assert _gpu(h, "root.eng")[:2] == (Resource(8192, 8), Resource(8192, 8))
    assert _gpu(h, "root.eng.train")[:2] == (Resource(5632, 5), Resource(8192, 8))
    assert _gpu(h, "root.eng.dev")[:2] == (Resource(2560, 2), Resource(8192, 8))
    assert _gpu(h, "root.eng.train")[2] == pytest.approx(5632 / 8192)


async def test_the_partition_resource_changing_recomputes_them(autojump_clock):
    h = _harness(1)
    h.node("g1", 8 * GB, 8, labels=("gpu",))
    assert _gpu(h, "root.eng.train")[:2] == (Resource(11264, 11), Resource(16384, 16))
    h.sched.on_NODE_REMOVED("g1", h.ctx.nodes["g1"])
    assert _gpu(h, "root.eng.train")[:2] == (Resource(5632, 5), Resource(8192, 8))


async def test_the_queue_info_reports_the_derived_capacities(autojump_clock):
    h = _harness(2)
    info = {q["name"]: q for q in h.sched.queue_info("")}
    (gpu,) = [p for p in info["root.eng.dev"]["partitions"] if p["partition"] == "gpu"]
    assert gpu["capacity"] == pytest.approx(100 * 5 / 16)
    assert gpu["maximum_capacity"] == pytest.approx(50.0)
    assert gpu["absolute_capacity"] == pytest.approx(100 * 5 / 16)


def test_siblings_mixing_kinds_are_named_in_each_label():
    """The parent looks at each child in each of its labels, the default
    one first (Hadoop's message, less its trailing space)."""
    e = _refusal(
        {
            Q + "root.eng.dev.capacity": "50",
            GPU.format("dev.", "capacity"): "30",
            GPU.format("dev.", "maximum-capacity"): "50",
        }
    )
    assert e.where == Q + "root.eng.queues"
    assert e.message == (
        "Parent queue 'root.eng' have children queue used mixed of  weight mode, percentage "
        "and absolute mode, it is not allowed, please double check, details:"
        "{Queue=root.eng.train, label= uses absolute mode}. "
        "{Queue=root.eng.train, label=gpu uses absolute mode}. "
        "{Queue=root.eng.dev, label= uses percentage mode}. "
        "{Queue=root.eng.dev, label=gpu uses percentage mode}."
    )


async def test_a_node_relabelled_into_the_partition_recomputes_them(autojump_clock):
    """A default node taking gpu at run time (updateNodeLabelsAndQueueResource)
    grows the partition to cover the minimums: no more scaling; losing it
    shrinks the partition again."""
    h = _harness(1)
    h.ctx.node_labels.exclusive.setdefault("gpu", True)
    h.sched.on_NODE_LABELS_UPDATE("replace", {"d0": "gpu"})
    assert _gpu(h, "root.eng.train")[:2] == (Resource(11264, 11), Resource(16384, 16))
    h.sched.on_NODE_LABELS_UPDATE("replace", {"d0": ""})
    assert _gpu(h, "root.eng.train")[:2] == (Resource(5632, 5), Resource(8192, 8))


async def test_a_refresh_derives_them_again(autojump_clock):
    h = _harness(2)
    assert (
        h.sched.refresh({GPU.format("dev.", "maximum-capacity"): "[memory=6144,vcores=6]"}) is None
    )
    assert _gpu(h, "root.eng.dev")[1] == Resource(6144, 6)
    assert _gpu(h, "root.eng.dev")[3] == pytest.approx(6 / 16)

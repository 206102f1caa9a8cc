"""Multi-node placement's configuration and node orders
(emu.rm.scheduler.capacity.multi_node): what Hadoop's
CapacitySchedulerConfiguration accepts and refuses, the
ResourceUsageMultiNodeLookupPolicy order, and the nodes an app walks."""

from __future__ import annotations

import pytest

from emu.config.configuration import Configuration
from emu.errors import InputError
from emu.resources import Resource
from emu.rm.scheduler.capacity.multi_node import (
    RESOURCE_USAGE,
    MultiNodePlacement,
    parse,
    sort_partitions,
)
from emu.rm.scheduler.scheduler_node import SchedulerNode

CS = "yarn.scheduler.capacity."
POLICY = CS + "multi-node-sorting.policy"


def _conf(**props: str) -> Configuration:
    conf = Configuration()
    for k, v in props.items():
        conf.set(k, v)
    return conf


def _parse(props: dict[str, str], queues: tuple[str, ...] = ("root", "root.a")):
    return parse(_conf(**props), list(queues))


def test_defaults_have_no_sorter_and_no_policy():
    mn = _parse({})
    assert not mn.enabled and mn.sorters == {} and mn.policy_of("root.a") is None
    assert mn.interval_ms == 0


def test_the_default_name_needs_no_class_for_its_sorter_and_runs_every_second():
    mn = _parse({CS + "multi-node-placement-enabled": "true", POLICY + ".names": "default"})
    assert mn.sorters == {RESOURCE_USAGE: 1000} and mn.interval_ms == 1000
    # No queue names a policy: apps get none (Hadoop's first-candidate fallback).
    assert mn.policy_of("root.a") is None


def test_a_queue_policy_needs_its_class_even_when_named_default():
    with pytest.raises(InputError, match=r"multi-node-sorting.policy.*has no class"):
        _parse({POLICY: "default"})


def test_queue_policy_overrides_the_global_one_and_an_empty_one_means_none():
    mn = _parse(
        {
            POLICY: "usage",
            POLICY + ".usage.class": RESOURCE_USAGE,
            CS + "root.a.multi-node-sorting.policy": "",
        },
        ("root", "root.a", "root.b"),
    )
    assert mn.policy_of("root.b") == RESOURCE_USAGE
    assert mn.policy_of("root.a") is None


def test_a_policy_class_the_port_lacks_is_refused_naming_the_property():
    with pytest.raises(InputError) as e:
        _parse({POLICY + ".names": "mine", POLICY + ".mine.class": "com.example.Mine"})
    assert "multi-node-sorting.policy.mine.class" in str(e.value)
    assert "--scheduler-impl hadoop" in str(e.value)
    # Hadoop's own scheduler decides: accepted.
    mn = parse(
        _conf(**{POLICY + ".names": "mine", POLICY + ".mine.class": "com.example.Mine"}),
        ["root"],
        hadoop=True,
    )
    assert mn.sorters == {"com.example.Mine": 1000}


def test_a_negative_interval_and_two_intervals_for_one_class_are_refused():
    with pytest.raises(InputError, match=r"sorting-interval\.ms"):
        _parse({POLICY + ".names": "default", POLICY + ".default.sorting-interval.ms": "-1"})
    with pytest.raises(InputError, match="keeps one of the two at random"):
        _parse(
            {
                POLICY + ".names": "default,usage",
                POLICY + ".usage.class": RESOURCE_USAGE,
                POLICY + ".usage.sorting-interval.ms": "0",
            }
        )


def _node(name: str, memory: int, vcores: int = 1) -> SchedulerNode:
    n = SchedulerNode(name, name, "/rack", Resource(8192, 8))
    n.allocated = Resource(memory, vcores)
    return n


def test_resource_usage_orders_by_memory_then_vcores_then_host():
    nodes = [_node("h3", 2048), _node("h1", 2048, 2), _node("h2", 1024, 5), _node("h0", 2048)]
    assert sort_partitions({"": nodes}) == {"": ["h2", "h0", "h3", "h1"]}


def _placement(interval: int, nodes: list[SchedulerNode], policy: str | None = RESOURCE_USAGE):
    props = {CS + "multi-node-placement-enabled": "true", POLICY + ".names": "default"}
    props[POLICY + ".default.sorting-interval.ms"] = str(interval)
    mn = MultiNodePlacement(
        _parse(props), {n.node_id: n for n in nodes}, {}, {n.node_id: 0 for n in nodes}, 2000
    )
    mn.app_policy["app"] = policy
    return mn


def test_an_app_walks_the_last_sorted_order_until_the_next_sort():
    a, b, c = _node("a", 3072), _node("b", 1024), _node("c", 2048)
    mn = _placement(1000, [a, b, c])
    cands = mn.candidates("", 0)
    assert mn.preferred("app", cands, "", 0) == []  # no sort yet: nothing to walk
    assert mn.sort()
    assert [n.node_id for n in mn.preferred("app", cands, "", 0)] == ["b", "c", "a"]
    b.allocated = Resource(4096, 1)  # the order lags until the sorter runs again
    assert [n.node_id for n in mn.preferred("app", cands, "", 0)] == ["b", "c", "a"]
    assert mn.sort() and [n.node_id for n in mn.preferred("app", cands, "", 0)] == ["c", "a", "b"]
    assert not mn.sort()  # nothing moved: no change to report


def test_interval_zero_sorts_the_candidates_on_every_use():
    a, b = _node("a", 3072), _node("b", 1024)
    mn = _placement(0, [a, b])
    cands = mn.candidates("", 0)
    assert [n.node_id for n in mn.preferred("app", cands, "", 0)] == ["b", "a"]
    b.allocated = Resource(4096, 1)
    assert [n.node_id for n in mn.preferred("app", cands, "", 0)] == ["a", "b"]


def test_without_a_policy_an_app_gets_the_first_candidate_alone():
    a, b = _node("a", 3072), _node("b", 1024)
    mn = _placement(1000, [a, b], policy=None)
    cands = mn.candidates("", 0)
    assert mn.preferred("app", cands, "", 0) == cands[:1]
    # A lone candidate is offered as a single node whatever the policy.
    assert _placement(1000, [a]).preferred("app", [a], "", 0) == [a]


def test_nodes_that_missed_their_heartbeats_are_neither_candidates_nor_walked():
    a, b = _node("a", 0), _node("b", 0)
    mn = _placement(1000, [a, b])
    mn.beats["a"] = 5000
    mn.sort()
    assert [n.node_id for n in mn.candidates("", 5000)] == ["a"]
    assert [n.node_id for n in mn.preferred("app", [a, b], "", 5000)] == ["a"]

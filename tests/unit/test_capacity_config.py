"""capacity-scheduler.xml: Hadoop's own files load unchanged; bad ones fail
with one error naming the property; admin refreshes apply or are refused
whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from emu.config import support
from emu.config.configuration import Configuration
from emu.config.hadoop_xml import load_xml
from emu.errors import InputError
from emu.resources import Resource
from emu.rm.scheduler.capacity.config import PREFIX, parse
from emu.testing.capacity import GB, Harness, Q, used
from tests.reference import REFERENCE_DIR

MIN, MAX = Resource(1024, 1), Resource(8192, 4)
CAPACITY_FILES = sorted(REFERENCE_DIR.rglob("*capacity-scheduler.xml"))


def conf(**props: object) -> Configuration:
    c = Configuration()
    for k, v in props.items():
        c.set(PREFIX + k.replace("__", "."), v, "test.xml:1")
    return c


def test_reference_files_are_found() -> None:
    names = {str(p.relative_to(REFERENCE_DIR)) for p in CAPACITY_FILES}
    assert {
        "rm-allocation-files/capacity-scheduler.xml",
        "rm-allocation-files/cs-validation-pass-capacity-scheduler.xml",
        "sample-conf/capacity-scheduler.xml",
        "test-resources/capacity-scheduler.xml",
    } <= names


@pytest.mark.parametrize("path", CAPACITY_FILES, ids=lambda p: str(p.relative_to(REFERENCE_DIR)))
async def test_every_reference_capacity_scheduler_xml_loads(path: Path, autojump_clock) -> None:
    """Hadoop's own capacity-scheduler.xml files build a scheduler unchanged,
    and their leaf queues take applications; one that enables what emu does
    not emulate is refused by name, and loads without it when that is
    allowed."""
    props = {name: load_xml(path).get(name) for name in load_xml(path)}
    if any(support.refused_rule(n, v, support.CAPACITY) for n, v in props.items()):
        with pytest.raises(InputError, match="does not emulate"):
            parse(load_xml(path), MIN, MAX)
        props[support.ALLOW] = "true"
    h = Harness(props)
    leaves = h.sched.cs.leaves()
    assert leaves
    h.node("n0", 8 * GB)
    for leaf in leaves:
        assert h.submit(leaf, "alice").queue == leaf
    total = sum(h.sched.cs.queues[p].absolute_capacity for p in leaves)
    assert total == pytest.approx(1.0)


def test_sls_sample_queues() -> None:
    """The SLS sample configuration: three leaves at 25/25/50 %, elastic to 100 %."""
    cs = parse(load_xml(REFERENCE_DIR / "sample-conf/capacity-scheduler.xml"), MIN, MAX)
    caps = {p: (q.capacity, q.maximum_capacity) for p, q in cs.queues.items()}
    assert caps == {
        "root": (100.0, 100.0),
        "root.sls_queue_1": (25.0, 100.0),
        "root.sls_queue_2": (25.0, 100.0),
        "root.sls_queue_3": (50.0, 100.0),
    }


def test_defaults_match_yarn() -> None:
    """CapacitySchedulerConfiguration defaults; no queues -> root.default."""
    cs = parse(Configuration(), MIN, MAX)
    assert list(cs.queues) == ["root", "root.default"]
    d = cs.queues["root.default"]
    assert (d.user_limit_percent, d.user_limit_factor, d.maximum_am_percent) == (100.0, 1.0, 0.1)
    assert (cs.node_locality_delay, cs.rack_locality_additional_delay) == (40, -1)
    assert (cs.maximum_applications, cs.calculator) == (10000, "default")
    assert not cs.preemption.enabled


def test_weights_and_nested_absolute_capacities() -> None:
    cs = parse(
        conf(
            root__queues="a,b",
            root__a__capacity="1w",
            root__b__capacity="3w",
            root__b__queues="x,y",
            root__b__x__capacity=40,
            root__b__y__capacity=60,
            **{"root__b__maximum-capacity": 80},
        ),
        MIN,
        MAX,
    )
    assert cs.queues["root.a"].capacity == 25.0
    assert cs.queues["root.b.x"].absolute_capacity == pytest.approx(0.3)
    assert cs.queues["root.b.y"].absolute_maximum_capacity == pytest.approx(0.8)


def test_a_capacity_above_its_maximum_is_accepted_as_hadoop_does() -> None:
    """Hadoop 3.4.2 checks capacity against maximum-capacity only in code
    its comments call test-only (CSQueueUtils.checkAbsoluteCapacity): the
    queue keeps its guarantee and is bounded by its maximum."""
    cs = parse(
        conf(
            root__queues="a,b",
            root__a__capacity=60,
            root__b__capacity=40,
            **{"root__a__maximum-capacity": 50},
        ),
        MIN,
        MAX,
    )
    assert cs.queues["root.a"].absolute_capacity == pytest.approx(0.6)
    assert cs.queues["root.a"].absolute_maximum_capacity == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("props", "culprit", "words"),
    [
        (
            {"root__queues": "a,b", "root__a__capacity": 70, "root__b__capacity": 40},
            "root.queues",
            "sum to 110",
        ),
        (
            {"root__queues": "a,b", "root__a__capacity": 50, "root__b__capacity": 40},
            "root.queues",
            "sum to 90",
        ),
        ({"root__queues": "a", "root__a__capacity": "lots"}, "root.a.capacity", "a number"),
        (
            {"root__queues": "a", "root__a__capacity": 100, "root__b__capacity": 5},
            "root.b.capacity",
            "is not defined",
        ),
        (
            {"root__queues": "a", "root__a__capacity": 100, "root__x__y__capacity": 5},
            "root.x.y.capacity",
            "unknown parent",
        ),
        (
            {"root__queues": "a", "root__a__capacity": 100, "root__a__maximum-capacity": 150},
            "root.a.maximum-capacity",
            "(0, 100]",
        ),
        (
            {"root__queues": "a", "root__a__capacity": 100, "root__a__state": "PAUSED"},
            "root.a.state",
            "RUNNING or STOPPED",
        ),
        (
            {"root__queues": "a", "root__a__capacity": 100, "root__a__user-limit-factor": 0},
            "root.a.user-limit-factor",
            "positive",
        ),
        (
            {
                "root__queues": "a,c",
                "root__a__capacity": "[memory=4096,vcores=4]",
                "root__c__capacity": "[memory=512,vcores=0]",
                "root__c__queues": "c1,c2",
                "root__c__c1__capacity": "[memory=0,vcores=0]",
                "root__c__c2__capacity": "[memory=0,vcores=0]",
            },
            "root.c.queues",
            "both parent and child all use absolute minResource",
        ),
        ({"root__queues": "a,a", "root__a__capacity": 100}, "root.queues", "listed twice"),
        ({"resource-calculator": "Bogus"}, "resource-calculator", "unknown resource calculator"),
        ({"queue-mappings": "u:alice"}, "queue-mappings", "malformed mapping"),
        ({"queue-mappings": "u:alice:nowhere"}, "queue-mappings", "not a leaf"),
        (
            {
                "root__queues": "a",
                "root__a__capacity": 100,
                "root__accessible-node-labels__gpu__maximum-am-resource-percent": 0.5,
            },
            "root.accessible-node-labels.gpu.maximum-am-resource-percent",
            "does not emulate per-label queue settings",
        ),
        (
            {
                "root__queues": "a",
                "root__a__capacity": 100,
                "root__a__user-settings__alice__weight": 2,
            },
            "root.a.user-settings.alice.weight",
            "must be between 0 and 100 / 100",
        ),
        (
            {"root__queues": "a,b", "root__a__capacity": "[memory=1024]", "root__b__capacity": 50},
            "root.queues",
            "have children queue used mixed of",
        ),
        (
            {"root__default__maximum-allocation-mb": 99999},
            "root.default.maximum-allocation-mb",
            "larger",
        ),
        (
            {"root__state": "STOPPED", "root__default__state": "RUNNING"},
            "root.default.state",
            "cannot be RUNNING",
        ),
    ],
)
def test_invalid_configuration_names_the_property(props: dict, culprit: str, words: str) -> None:
    with pytest.raises(InputError) as err:
        parse(conf(**props), MIN, MAX)
    assert err.value.where == PREFIX + culprit
    assert err.value.path == "test.xml:1"
    assert words in err.value.message


def test_preemption_settings_are_read() -> None:
    c = conf()
    c.set("yarn.resourcemanager.scheduler.monitor.enable", "true")
    c.set("yarn.resourcemanager.monitor.capacity.preemption.monitoring_interval", "1s")
    c.set("yarn.resourcemanager.monitor.capacity.preemption.max_wait_before_kill", 5000)
    c.set("yarn.resourcemanager.monitor.capacity.preemption.observe_only", "true")
    p = parse(c, MIN, MAX).preemption
    assert (p.enabled, p.monitoring_interval_ms, p.max_wait_before_kill_ms, p.observe_only) == (
        True,
        1000,
        5000,
        True,
    )
    c.set("yarn.resourcemanager.scheduler.monitor.policies", "some.OtherPolicy")
    assert not parse(c, MIN, MAX).preemption.enabled
    c.set("yarn.resourcemanager.monitor.capacity.preemption.total_preemption_per_round", 2)
    with pytest.raises(InputError, match="total_preemption_per_round"):
        parse(c, MIN, MAX)


# --- refresh through the admin protocol ---------------------------------------------------
BASE = {Q + "root.queues": "a,b", Q + "root.a.capacity": 50, Q + "root.b.capacity": 50}


async def test_refresh_adds_queues_and_changes_properties(autojump_clock) -> None:
    """CapacityScheduler.reinitialize: new queues join, properties change,
    running apps keep their queue and usage."""
    h = Harness(BASE)
    n0 = h.node("n0", 8 * GB)
    app = h.submit("a", "u")
    h.ask(app, GB, 1)
    h.heartbeat(n0)
    reason = h.sched.refresh(
        {
            Q + "root.queues": "a,b,c",
            Q + "root.a.capacity": 40,
            Q + "root.c.capacity": 10,
            Q + "root.a.user-limit-factor": 2,
        }
    )
    assert reason is None
    assert h.leaf("a").conf.user_limit_factor == 2
    assert h.leaf("a").used.memory == GB and used(app) == GB
    assert h.submit("c", "u").queue == "root.c"
    assert h.sched.leaf_queues() == ["root.a", "root.b", "root.c"]


async def test_refresh_refuses_removal_and_bad_sums_and_keeps_running(autojump_clock) -> None:
    """A refresh that removes a queue or leaves a level not summing to 100 is
    refused with the reason; the running configuration stays."""
    h = Harness(BASE)
    before = h.sched.cs
    removed = h.sched.refresh({Q + "root.queues": "a", Q + "root.a.capacity": 100})
    assert removed is not None and "root.b cannot be removed" in removed
    bad = h.sched.refresh({Q + "root.a.capacity": 60})
    assert bad is not None and "sum to 110" in bad and Q + "root.queues" in bad
    assert h.sched.cs is before
    assert h.submit("b", "u").queue == "root.b"


async def test_refresh_can_turn_an_empty_leaf_into_a_parent(autojump_clock) -> None:
    h = Harness(BASE)
    reason = h.sched.refresh(
        {Q + "root.b.queues": "b1,b2", Q + "root.b.b1.capacity": 50, Q + "root.b.b2.capacity": 50}
    )
    assert reason is None
    assert h.sched.leaf_queues() == ["root.a", "root.b.b1", "root.b.b2"]
    assert h.submit("b1", "u").queue == "root.b.b1"
    h.submit("b2", "u")
    assert h.sched.queue_metrics("root.b").apps_submitted == 2


async def test_queue_metrics_by_short_name_and_for_parents(autojump_clock) -> None:
    h = Harness(
        {
            Q + "root.queues": "p,c",
            Q + "root.p.capacity": 50,
            Q + "root.c.capacity": 50,
            Q + "root.p.queues": "x",
            Q + "root.p.x.capacity": 100,
        }
    )
    n0 = h.node("n0", 8 * GB)
    app = h.submit("x", "u")
    h.ask(app, GB, 2, where="n0")
    h.ask(app, GB, 2, where="/default")
    h.ask(app, GB, 2)
    h.heartbeat(n0)
    assert h.sched.queue_metrics("x") is h.sched.queue_metrics("root.p.x")
    assert h.sched.queue_metrics("p").allocated.memory == 2 * GB
    assert h.sched.queue_metrics("root").allocated_containers == 2
    info = {q["name"]: q for q in h.sched.queue_info("")}
    assert info["root.p"]["type"] == "parent" and info["root.p.x"]["used"]["memory-mb"] == 2 * GB
    assert info["root.p.x"]["absolute_capacity"] == 50.0

"""The intra-queue preemption settings as CapacitySchedulerConfiguration and
CSQueuePreemptionSettings read them: the policy's knobs with Hadoop's
defaults, and a queue's disable inherited down the tree (and implied by
its cross-queue disable)."""

from __future__ import annotations

import pytest

from emu.config.configuration import Configuration
from emu.errors import InputError
from emu.resources import Resource
from emu.rm.scheduler.capacity.config import parse

MIN, MAX = Resource(1024, 1), Resource(8192, 8)
CS = "yarn.scheduler.capacity."
INTRA = "yarn.resourcemanager.monitor.capacity.preemption.intra-queue-preemption."


def _conf(**props: str) -> Configuration:
    c = Configuration()
    c.set(CS + "root.queues", "a,b")
    c.set(CS + "root.a.queues", "a1,a2")
    c.set(CS + "root.a.capacity", "50")
    c.set(CS + "root.b.capacity", "50")
    c.set(CS + "root.a.a1.capacity", "50")
    c.set(CS + "root.a.a2.capacity", "50")
    for name, value in props.items():
        c.set(name, value)
    return c


def test_defaults_are_hadoops() -> None:
    p = parse(_conf(), MIN, MAX).preemption
    assert not p.intra_queue_enabled
    assert p.intra_minimum_threshold == 0.5
    assert p.intra_max_allowable_limit == pytest.approx(0.2)
    assert p.intra_order_policy == "userlimit_first"
    assert p.intra_conservative_drf


def test_settings_are_read() -> None:
    conf = _conf(
        **{
            INTRA + "enabled": "true",
            INTRA + "minimum-threshold": "0.25",
            INTRA + "max-allowable-limit": "0.5",
            INTRA + "preemption-order-policy": "PRIORITY_FIRST",
            INTRA + "conservative-drf": "false",
        }
    )
    p = parse(conf, MIN, MAX).preemption
    assert p.intra_queue_enabled
    assert (p.intra_minimum_threshold, p.intra_max_allowable_limit) == (0.25, 0.5)
    assert p.intra_order_policy == "priority_first"
    assert not p.intra_conservative_drf


def test_a_bad_order_policy_names_the_property() -> None:
    with pytest.raises(InputError, match="preemption-order-policy"):
        parse(_conf(**{INTRA + "preemption-order-policy": "fifo"}), MIN, MAX)


def test_every_queue_is_off_while_the_feature_is() -> None:
    qs = parse(_conf(), MIN, MAX).queues
    assert all(q.intra_preemption_disabled for q in qs.values())


def test_a_parents_disable_is_inherited_unless_a_child_overrides_it() -> None:
    conf = _conf(
        **{
            INTRA + "enabled": "true",
            CS + "root.a.intra-queue-preemption.disable_preemption": "true",
            CS + "root.a.a2.intra-queue-preemption.disable_preemption": "false",
        }
    )
    qs = parse(conf, MIN, MAX).queues
    assert qs["root.a.a1"].intra_preemption_disabled
    assert not qs["root.a.a2"].intra_preemption_disabled
    assert not qs["root.b"].intra_preemption_disabled


def test_a_queue_without_cross_queue_preemption_has_none_within() -> None:
    conf = _conf(**{INTRA + "enabled": "true", CS + "root.b.disable_preemption": "true"})
    q = parse(conf, MIN, MAX).queues["root.b"]
    assert not q.intra_disabled_in_hierarchy
    assert q.intra_preemption_disabled


def test_the_queue_key_for_an_undefined_queue_is_an_error() -> None:
    conf = _conf(**{CS + "root.c.intra-queue-preemption.disable_preemption": "true"})
    with pytest.raises(InputError, match=r"queue 'root\.c' is not defined"):
        parse(conf, MIN, MAX)

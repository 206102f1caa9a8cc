"""Asynchronous scheduling's pieces: the order a pass offers nodes in, the
start nodes it draws, its ticks, and which Hadoop release turns it on."""

from __future__ import annotations

import pytest

from emu.config.configuration import Configuration
from emu.errors import InputError
from emu.hadoop.classpath import VERSIONS, check_version
from emu.resources import Resource
from emu.rm.scheduler.async_scheduling import AsyncScheduling, skip_node_interval_ms, walk
from emu.rm.scheduler.capacity.config import parse
from emu.scenario.java_random import JavaRandom

MIN, MAX = Resource(1024, 1), Resource(8192, 4)


def test_a_pass_walks_from_the_start_to_the_end_then_to_the_start_again():
    # CapacityScheduler.schedule: `current++ >= start` over all nodes, then
    # `current++ > start` breaks, so node `start` is offered twice.
    assert walk(5, 2) == [2, 3, 4, 0, 1, 2]
    assert walk(5, 0) == [0, 1, 2, 3, 4, 0]
    assert walk(5, 4) == [4, 0, 1, 2, 3, 4]
    assert walk(1, 0) == [0, 0]


def test_each_ticks_start_nodes_are_java_randoms_next_int_over_the_node_count():
    passes = AsyncScheduling(5, 2, seed=42)
    for tick in (0, 5, 10, 100_000):
        java = JavaRandom(42 ^ (tick // 5) * 0x9E3779B97F4A7C15)
        assert passes.starts(tick, 7) == [java.next_int(7), java.next_int(7)]
    # a tick's draws depend on that tick alone: skipping others shifts nothing
    assert passes.starts(100_000, 7) == AsyncScheduling(5, 2, 42).starts(100_000, 7)
    drawn = [s for tick in range(0, 5000, 5) for s in passes.starts(tick, 7)]
    assert all(0 <= s < 7 for s in drawn) and len(set(drawn)) == 7


def test_ticks_are_the_multiples_of_the_interval_from_now():
    passes = AsyncScheduling(5, 1, seed=0)
    assert [passes.tick_from(t) for t in (0, 1, 4, 5, 6, 1003)] == [0, 5, 5, 5, 10, 1005]


def test_skip_interval_is_the_multiplier_times_the_rms_heartbeat_interval():
    assert skip_node_interval_ms(Configuration()) == 2000
    conf = Configuration()
    conf.set("yarn.resourcemanager.nodemanagers.heartbeat-interval-ms", "3000", "test")
    conf.set("yarn.scheduler.skip.node.multiplier", "3", "test")
    assert skip_node_interval_ms(conf) == 9000


def _conf(**props: str) -> Configuration:
    conf = Configuration()
    for k, v in props.items():
        conf.set(k, v, "test")
    return conf


@pytest.mark.parametrize(
    ("version", "asynchronous"), [("", False), ("3.4.2", False), ("3.5.0", True)]
)
def test_each_release_applies_its_own_default(version, asynchronous):
    conf = _conf(**({"emu.hadoop.version": version} if version else {}))
    cs = parse(conf, MIN, MAX)
    assert cs.async_scheduling is asynchronous
    assert (cs.async_interval_ms, cs.async_threads) == (5, 1)


def test_an_explicit_setting_wins_over_the_release_default():
    prefix = "yarn.scheduler.capacity.schedule-asynchronously"
    off = parse(_conf(**{"emu.hadoop.version": "3.5.0", prefix + ".enable": "false"}), MIN, MAX)
    assert off.async_scheduling is False
    on = parse(
        _conf(
            **{
                prefix + ".enable": "true",
                prefix + ".scheduling-interval-ms": "50",
                prefix + ".maximum-threads": "0",
            }
        ),
        MIN,
        MAX,
    )
    assert (on.async_scheduling, on.async_interval_ms, on.async_threads) == (True, 50, 1)


def test_an_interval_below_one_millisecond_is_refused_by_name():
    key = "yarn.scheduler.capacity.schedule-asynchronously.scheduling-interval-ms"
    with pytest.raises(InputError) as e:
        parse(_conf(**{key: "0"}), MIN, MAX)
    assert key in str(e.value) and "at least 1 ms" in str(e.value)


def test_a_release_emu_does_not_pin_is_refused_with_the_ones_it_does():
    assert check_version(" 3.5.0 ") == "3.5.0"
    with pytest.raises(InputError) as e:
        check_version("3.3.6")
    message = str(e.value)
    assert "--hadoop-version: emu.hadoop.version" in message and "'3.3.6'" in message
    assert all(v in message for v in VERSIONS) and "--hadoop-classpath" in message

"""The RM-state invariant checker: it passes on a consistent RM and names
each kind of corruption it exists to catch."""

from __future__ import annotations

import pytest

from emu.metrics.cluster_invariants import ClusterInvariantBroken, check_final, check_state
from emu.resources import Resource
from emu.rm.scheduler.locality import ANY
from emu.testing.cluster import ask, fifo_conf, mr_job, simulation
from emu.testing.rm import RMHarness


def busy_rm(conf=None) -> tuple[RMHarness, str]:
    """Two nodes, one app with its AM and three tasks on h1."""
    rm = RMHarness(conf or fifo_conf())
    rm.add_node("h1")
    rm.add_node("h2")
    app = rm.submit("a")
    rm.start_am(app, "h1")
    rm.allocate(app, [ask(20, ANY, 3)])
    for _ in range(3):  # the CapacityScheduler places one off-switch task per heartbeat
        rm.heartbeat("h1")
    rm.allocate(app)
    assert len(rm.ctx.containers) == 4
    check_state(rm.ctx)
    return rm, app


def broken(rm: RMHarness) -> str:
    with pytest.raises(ClusterInvariantBroken) as e:
        check_state(rm.ctx)
    return str(e.value)


async def test_a_container_on_two_nodes_is_caught(autojump_clock):
    rm, _ = busy_rm()
    nodes = rm.ctx.scheduler.nodes
    cid, c = next(iter(nodes["h1"].containers.items()))
    nodes["h2"].containers[cid] = c
    assert f"{cid} is allocated on both h1 and h2" in broken(rm)


async def test_a_container_held_by_two_attempts_is_caught(autojump_clock):
    rm, app = busy_rm()
    other = rm.submit("b")
    apps = rm.ctx.scheduler.apps
    cid, c = next(iter(apps[rm.attempt(app)].live.items()))
    apps[rm.attempt(other)].live[cid] = c
    assert f"{cid} is held by both" in broken(rm)


async def test_node_above_capacity_in_an_enforced_type_is_caught(autojump_clock):
    rm, _ = busy_rm()
    node = rm.ctx.scheduler.nodes["h1"]
    node.set_total(Resource(2048, 8))
    assert "h1 holds <memory:4096, vCores:4>, above its capacity <memory:2048" in broken(rm)


async def test_dominant_calculator_enforces_vcores(autojump_clock):
    rm, _ = busy_rm(
        _capacity_conf("org.apache.hadoop.yarn.util.resource.DominantResourceCalculator")
    )
    rm.ctx.scheduler.nodes["h1"].set_total(Resource(8192, 2))
    assert "above its capacity" in broken(rm) and "dominant calculator" in broken(rm)


async def test_queue_usage_must_equal_its_containers(autojump_clock):
    rm, _ = busy_rm()
    q = rm.ctx.scheduler.queues["default"]
    q.allocated = q.allocated + Resource(1024, 1)
    assert "queue default counts <memory:5120, vCores:5> in 4 containers" in broken(rm)


async def test_attempt_usage_must_equal_its_containers(autojump_clock):
    rm, app = busy_rm()
    sapp = rm.ctx.scheduler.apps[rm.attempt(app)]
    sapp.used = sapp.used - Resource(1024, 1)
    assert f"{sapp.attempt_id} counts <memory:3072, vCores:3> used" in broken(rm)


async def test_negative_pending_is_caught(autojump_clock):
    rm, _ = busy_rm()
    q = rm.ctx.scheduler.queues["default"]
    q.pending = Resource(-1024, 0)
    assert "queue default: pending is negative" in broken(rm)


async def test_every_app_must_end_and_say_why_it_failed(autojump_clock):
    rm, app = busy_rm()
    with pytest.raises(ClusterInvariantBroken, match=f"{app} ended the run in state RUNNING"):
        check_final(rm.ctx)


def _capacity_conf(calculator: str):
    conf = fifo_conf({"yarn.resourcemanager.scheduler.class": "capacity"})
    conf.set("yarn.scheduler.capacity.resource-calculator", calculator)
    return conf


async def test_a_simulation_stops_at_the_first_broken_invariant(autojump_clock):
    """The run-time hook: corruption injected at 30 s is reported within the
    next check, with its simulated time."""

    def corrupt(rm) -> None:
        if rm.ctx.now_ms() >= 30_000:
            q = rm.ctx.scheduler.queues["default"]
            q.allocated_containers += 1

    sim = simulation([mr_job("j1")], on_tick=corrupt, invariant_interval_ms=1000)
    with pytest.raises(ClusterInvariantBroken) as e:
        await sim.run()
    assert 30_000 <= e.value.time_ms <= 31_000
    assert "queue default counts" in str(e.value)

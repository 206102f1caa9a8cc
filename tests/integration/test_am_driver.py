"""The in-process AM driver (`emu.am.driver`): one task steps every AM in
launch order, and a run is the same as with a task per AM, faults included
(an AM that hangs, crashes, is killed with its node or its app, an RM that
restarts). The golden-output tests compare the reference replays with the
copies the task-per-AM path made; these compare the two paths' event logs."""

from __future__ import annotations

import io
import itertools

import pytest

from emu.am import AMDriver
from emu.scenario import native
from emu.scenario.native import Fault
from emu.simulation import Simulation, run_virtual
from emu.testing.cluster import SCENARIOS, fifo_conf, mr_job, scenario_simulation, simulation

SHIPPED = ["all-faults.toml", "mixed-am-types.toml", "fair-preemption.toml", "lost-node.toml"]


def _events(sim: Simulation) -> tuple[list, str]:
    """The run's jobs and event log, in a trio run of its own from time 0."""
    log = io.StringIO()
    result = run_virtual(sim, events_stream=log)
    return result.jobs, log.getvalue()


@pytest.mark.parametrize("name", SHIPPED)
def test_driver_and_task_per_am_give_the_same_run(name):
    """Every event the RM logs (attempts launched, registered, finished,
    containers allocated and killed, restarts) comes in the same order at
    the same time on both paths."""
    sc = native.load(SCENARIOS / name)
    driven = scenario_simulation(sc)
    jobs, log = _events(driven)
    assert driven.nm_host is not None and isinstance(driven.nm_host.am_driver, AMDriver)
    assert driven.nm_host.am_driver.turns > 0
    tasks = scenario_simulation(sc, am_driver=False)
    jobs_tasks, log_tasks = _events(tasks)
    assert tasks.nm_host is not None and tasks.nm_host.am_driver is None
    assert jobs == jobs_tasks
    assert log.splitlines() == log_tasks.splitlines()


async def test_hung_and_crashed_ams_leave_the_driver(autojump_clock):
    """A hung AM stays in the driver without turns until the RM expires it
    and its container is killed; a crashed one leaves at once; the next
    attempts run and finish."""
    conf_props = {"yarn.am.liveness-monitor.expiry-interval-ms": 20_000}
    sim = simulation(
        [mr_job("hung", maps=2), mr_job("crash", maps=2)],
        conf=fifo_conf(conf_props),
        faults=[Fault(5_000, "am_hang", "hung"), Fault(5_000, "am_crash", "crash")],
    )
    live: list[tuple[int, set[str], int]] = []

    def watch(rm) -> None:
        assert sim.nm_host is not None and isinstance(sim.nm_host.am_driver, AMDriver)
        driver = sim.nm_host.am_driver
        attempts = set(driver.attempts())
        live.append((rm.ctx.now_ms(), attempts, driver.turns))

    sim.on_tick = watch
    result = await sim.run()
    assert {j["job_id"]: (j["state"], j["attempts"]) for j in result.jobs} == {
        "hung": ("FINISHED", 2),
        "crash": ("FINISHED", 2),
    }
    attempt = {j["job_id"]: j["app_id"].replace("application", "appattempt") for j in result.jobs}
    hung, crashed = attempt["hung"] + "_000001", attempt["crash"] + "_000001"
    hung_live = [t for t, attempts, _ in live if hung in attempts]
    # Hung from 5 s, expired 20 s after its last allocate, then killed.
    assert hung_live[0] < 5_000 and 20_000 < hung_live[-1] < 30_000
    assert max(t for t, attempts, _ in live if crashed in attempts) < 6_000
    # While hung it takes no turn: each second, one turn per other live AM.
    steady = [
        (b[2] - a[2], len(a[1]) - 1)
        for a, b in itertools.pairwise(live)
        if a[0] >= 7_000 and b[0] <= 20_000 and hung in a[1] and a[1] == b[1]
    ]
    assert len(steady) >= 10
    assert all(turns == others for turns, others in steady)
    assert attempt["hung"] + "_000002" in set().union(*(a for _, a, _ in live))

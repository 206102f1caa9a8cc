"""The in-process AM driver (`emu.am.driver`): one task steps every AM in
launch order, and a run is the same as with a task per AM, faults included
(an AM that hangs, crashes, is killed with its node or its app, an RM that
restarts). The golden-output tests compare the reference replays with the
copies the task-per-AM path made; these compare the two paths' event logs."""

from __future__ import annotations

import io

import pytest

from emu.am import AMDriver
from emu.scenario import native
from emu.scenario.native import Fault
from emu.simulation import Simulation, run_virtual
from tests.helpers import SCENARIOS, fifo_conf, mr_job, scenario_simulation, simulation

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
    """A hung AM holds its place without turns until the RM expires it and
    its container is killed; a crashed one ends its attempt; the next
    attempts finish, and no AM is left in the driver at the end."""
    conf_props = {"yarn.am.liveness-monitor.expiry-interval-ms": 20_000}
    sim = simulation(
        [mr_job("hung", maps=2), mr_job("crash", maps=2)],
        conf=fifo_conf(conf_props),
        faults=[Fault(5_000, "am_hang", "hung"), Fault(5_000, "am_crash", "crash")],
    )
    result = await sim.run()
    assert {j["job_id"]: (j["state"], j["attempts"]) for j in result.jobs} == {
        "hung": ("FINISHED", 2),
        "crash": ("FINISHED", 2),
    }
    assert sim.nm_host is not None
    driver = sim.nm_host.am_driver
    assert isinstance(driver, AMDriver)
    assert driver.running == 0
    # Four attempts: each registered, took turns every second, and ended.
    assert driver.turns > 4 * 10

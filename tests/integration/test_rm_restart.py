"""An RM restart injected in-process (fault kind `rm_restart`), with and
without yarn.resourcemanager.recovery.enabled: with it, running apps survive
(NMs resync and list their containers, AMs register again, YARN's
work-preserving restart); without it they are lost, reported FAILED saying
why, and later submissions still run."""

from __future__ import annotations

import pytest

from emu.scenario.native import Fault
from emu.simulation import LOST_IN_RESTART
from emu.testing.cluster import fifo_conf, mr_job, simulation

RECOVERY = {"yarn.resourcemanager.recovery.enabled": "true"}


def _jobs() -> list:
    return [
        mr_job("early", submit_ms=0, maps=6, map_ms=60_000),
        mr_job("running", submit_ms=5_000, maps=6, map_ms=60_000),
        mr_job("late", submit_ms=90_000, maps=4, map_ms=30_000),
    ]


async def test_with_recovery_running_apps_survive_a_restart(autojump_clock):
    rms = []
    sim = simulation(
        _jobs(),
        faults=[Fault(40_000, "rm_restart", "")],
        conf=fifo_conf(RECOVERY),
        on_start=rms.append,
    )
    result = await sim.run()
    by_job = {j["job_id"]: j for j in result.jobs}
    assert {j: r["state"] for j, r in by_job.items()} == dict.fromkeys(by_job, "FINISHED")
    # Work-preserving: the same attempt carried on, no task ran twice.
    assert by_job["early"]["attempts"] == 1 and by_job["running"]["attempts"] == 1
    assert result.faults["injected"] == {"rm_restart": 1}
    recovered = result.faults["recovered"]
    assert (recovered["rm_restarts"], recovered["apps_recovered"], recovered["apps_lost"]) == (
        1, 2, 0,
    )  # fmt: skip
    assert recovered["tasks_rerun"] == 0
    # The store keeps the cluster's identity: an app submitted after the
    # restart carries the same cluster timestamp as the recovered ones.
    assert {r["app_id"].split("_")[1] for r in by_job.values()} == {"0"}
    assert rms[0].ctx.recovery is not None and rms[0].ctx.recovery.recovered_containers > 0
    assert sim.nm_host is not None and sim.nm_host.resyncs == 4  # every node once


async def test_without_recovery_running_apps_are_lost_and_new_ones_run(autojump_clock):
    result = await simulation(_jobs(), faults=[Fault(40_000, "rm_restart", "")]).run()
    by_job = {j["job_id"]: j for j in result.jobs}
    for job in ("early", "running"):
        assert by_job[job]["state"] == "FAILED"
        assert by_job[job]["diagnostics"] == LOST_IN_RESTART
        assert by_job[job]["finished_ms"] == 40_000
    assert by_job["late"]["state"] == "FINISHED"
    # The new RM numbers its apps under its own cluster timestamp.
    assert by_job["late"]["app_id"] not in {by_job["early"]["app_id"], by_job["running"]["app_id"]}
    recovered = result.faults["recovered"]
    assert (recovered["rm_restarts"], recovered["apps_recovered"], recovered["apps_lost"]) == (
        1, 0, 2,
    )  # fmt: skip


@pytest.mark.parametrize("props", [{}, RECOVERY], ids=["without-recovery", "with-recovery"])
async def test_apps_finished_before_a_restart_stay_in_the_outputs(autojump_clock, props):
    jobs = [mr_job("quick", maps=1, map_ms=5_000), mr_job("after", submit_ms=90_000, maps=1)]
    faults = [Fault(60_000, "rm_restart", "")]
    result = await simulation(jobs, faults=faults, conf=fifo_conf(props)).run()
    assert [j["state"] for j in result.jobs] == ["FINISHED", "FINISHED"]
    assert result.jobs[0]["finished_ms"] < 60_000 < result.jobs[1]["submit_ms"]

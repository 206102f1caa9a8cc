"""The RM keeps only the most recently completed applications
(yarn.resourcemanager.max-completed-applications), while a replay's outputs
still list every job."""

from __future__ import annotations

import io
from dataclasses import replace

import httpx
import pytest

from emu.config.configuration import Configuration
from emu.resources import Resource
from emu.rm.app import REPORT_KEYS, RMApp
from emu.rm.retention import MAX_COMPLETED, limits
from emu.scenario.native import Fault
from emu.simulation import run_virtual
from emu.sls import run
from emu.testing.cluster import fifo_conf, mr_job, simulation
from emu.web.live import LiveView
from emu.web.server import build_app
from tests.integration.test_golden_outputs import GOLDEN
from tests.reference import comparable_outputs, reference_options


def _jobs(n: int) -> list:
    return [mr_job(f"j{i}", submit_ms=i * 20_000, maps=2, map_ms=10_000) for i in range(n)]


async def test_a_low_cap_keeps_few_apps_in_the_rm_and_every_job_in_the_outputs(autojump_clock):
    rms = []
    sim = simulation(
        _jobs(8),
        conf=fifo_conf({"yarn.resourcemanager.max-completed-applications": 3}),
        on_start=rms.append,
    )
    result = await sim.run()
    [rm] = rms
    assert [j["job_id"] for j in result.jobs] == [f"j{i}" for i in range(8)]
    assert all(j["state"] == "FINISHED" and j["finished_ms"] > 0 for j in result.jobs)
    assert sorted(a.name for a in rm.ctx.apps.values()) == ["j5", "j6", "j7"]
    assert len(rm.ctx.attempts) == 3  # the removed apps' attempts went with them
    assert rm.ctx.completed_apps.removed == 5
    assert result.metrics["apps_submitted"] == 8 and result.metrics["apps_completed"] == 8


def test_outputs_are_the_same_with_and_without_removal():
    capped = run_virtual(
        simulation(_jobs(6), conf=fifo_conf({"yarn.resourcemanager.max-completed-applications": 1}))
    )
    kept = run_virtual(simulation(_jobs(6)))
    assert capped.stalled is None and len(capped.jobs) == 6
    assert capped.jobs == kept.jobs
    assert capped.why_pending == kept.why_pending


async def test_the_rest_api_lists_only_the_apps_the_rm_retains(autojump_clock):
    rms = []
    result = await simulation(
        _jobs(5),
        conf=fifo_conf({"yarn.resourcemanager.max-completed-applications": 2}),
        on_start=rms.append,
    ).run()
    live = LiveView()
    live.publish(rms[0])
    transport = httpx.ASGITransport(app=build_app(live))
    async with httpx.AsyncClient(transport=transport, base_url="http://rm") as http:
        apps = (await http.get("/ws/v1/cluster/apps")).json()["apps"]["app"]
        assert sorted(a["name"] for a in apps) == ["j3", "j4"]
        removed = result.jobs[0]["app_id"]
        assert (await http.get(f"/ws/v1/cluster/apps/{removed}")).status_code == 404


def test_the_state_store_limit_defaults_to_the_memory_one_and_never_exceeds_it():
    assert limits(Configuration()) == (1000, 1000)
    conf = Configuration({"yarn.resourcemanager.max-completed-applications": 50})
    assert limits(conf) == (50, 50)
    conf.set("yarn.resourcemanager.state-store.max-completed-applications", 500)
    assert limits(conf) == (50, 50)
    conf.set("yarn.resourcemanager.state-store.max-completed-applications", 5)
    assert limits(conf) == (50, 5)


def test_report_keys_name_the_report_in_order():
    app = RMApp(
        "application_0_0001", "n", "default", "u", 0, Resource(1024, 1), "mapreduce", {}, 2, 0
    )
    assert tuple(app.report()) == REPORT_KEYS


async def test_a_cap_of_zero_removes_each_app_as_it_completes(autojump_clock):
    rms = []
    result = await simulation(
        _jobs(3),
        conf=fifo_conf({"yarn.resourcemanager.max-completed-applications": 0}),
        on_start=rms.append,
    ).run()
    assert [j["state"] for j in result.jobs] == ["FINISHED"] * 3
    assert rms[0].ctx.apps == {}


async def test_the_state_store_keeps_fewer_and_a_restart_recovers_only_those(autojump_clock):
    """yarn.resourcemanager.state-store.max-completed-applications below the
    memory limit: after an RM restart with recovery only the newest finished
    apps come back, yet the outputs still list every job."""
    rms = []
    props = {
        "yarn.resourcemanager.recovery.enabled": "true",
        "yarn.resourcemanager.max-completed-applications": 4,
        "yarn.resourcemanager.state-store.max-completed-applications": 1,
    }
    result = await simulation(
        [*_jobs(5), mr_job("last", submit_ms=200_000, maps=1)],
        conf=fifo_conf(props),
        faults=[Fault(150_000, "rm_restart", "")],
        on_start=rms.append,
    ).run()
    assert len(result.jobs) == 6 and {j["state"] for j in result.jobs} == {"FINISHED"}
    # j0..j4 finished before the restart; the store kept j4 only.
    assert sorted(a.name for a in rms[0].ctx.apps.values()) == ["j4", "last"]


@pytest.mark.parametrize("case", ["sls-capacity", "bench-fair"])
def test_sls_outputs_stay_byte_identical_when_the_rm_keeps_two_apps(tmp_path, bench_inputs, case):
    """The golden replays (tests/data/golden) with the RM keeping only two
    finished apps: jobruntime.csv, summary.json (why_pending included) and
    realtimetrack.json do not change."""
    opts = reference_options(case, tmp_path, bench_inputs)
    opts = replace(opts, overrides={**opts.overrides, MAX_COMPLETED: "2"})
    run(opts, stdout=io.StringIO())
    for name, got in comparable_outputs(tmp_path).items():
        assert got == (GOLDEN / case / name).read_bytes(), f"{case}/{name} differs"

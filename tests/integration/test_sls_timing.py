"""SLS's timing of its simulated AMs and NMs (emu.timing), one setting at a
time against YARN's: each moves a job's times by what SLS's Java does.

One node, one job of one map and one reduce: every step waits on the one
before it, so each setting's effect is exact."""

from __future__ import annotations

import csv
from dataclasses import replace
from typing import Any

import pytest

from emu.cli import main
from emu.simulation import Simulation, run_virtual
from emu.testing.cluster import fifo_conf, mr_job, nodes
from emu.timing import SLS, TIMINGS, YARN, Timing
from emu.workload import Workload
from tests.reference import REFERENCE_DIR

TEST_RES = REFERENCE_DIR / "test-resources"

UNREGISTER = Timing(end_at_unregister=True)


def _job(timing: Timing, submit_ms: int = 0) -> dict[str, Any]:
    job = mr_job("j", submit_ms, maps=1, reduces=1, map_ms=10_000, reduce_ms=5_000)
    sim = Simulation(
        conf=fifo_conf(), nodes=nodes(1), workload=Workload([job]), faults=[], timing=timing
    )
    (report,) = run_virtual(sim).jobs
    assert report["final_status"] == "SUCCEEDED"
    return report


def test_yarn_and_sls_are_named_and_differ_in_every_setting():
    assert TIMINGS == {"yarn": YARN, "sls": SLS}
    assert YARN.name == "yarn" and SLS.name == "sls" and UNREGISTER.name == "custom"
    assert all(not getattr(YARN, f) and getattr(SLS, f) for f in YARN.__dataclass_fields__)


def test_a_job_ends_when_its_am_unregisters_as_slss_jobruntime_says():
    """AMSimulator.lastStep takes simulateFinishTimeMS right after
    finishApplicationMaster; the RM finishes the app once the NM reports
    the AM container's exit, at the node's next heartbeat (here the AM
    ticks off the NM's beat, from its submission at 250 ms)."""
    rm_end = _job(replace(SLS, end_at_unregister=False), 250)
    sls = _job(SLS, 250)
    assert sls["unregistered_ms"] == rm_end["unregistered_ms"]
    assert sls["finished_ms"] == sls["unregistered_ms"]
    assert rm_end["finished_ms"] > rm_end["unregistered_ms"] > rm_end["finished_ms"] - 1000


@pytest.mark.parametrize("submit_ms", [250, 1730])
def test_am_heartbeats_fall_on_submission_plus_whole_intervals(submit_ms):
    """An SLS AM simulator ticks from its submission (TaskRunner), so it
    unregisters on that grid; YARN's AM ticks from its registration (the
    NM heartbeat that got its container)."""
    ticks = _job(replace(UNREGISTER, am_ticks_from_submission=True), submit_ms)
    assert (ticks["unregistered_ms"] - submit_ms) % 1000 == 0
    yarn = _job(UNREGISTER, submit_ms)
    assert (yarn["unregistered_ms"] - submit_ms) % 1000 != 0
    # The AM registers when its container is launched, in both.
    assert ticks["started_ms"] == yarn["started_ms"]


def test_allocate_responses_are_acted_on_one_heartbeat_late():
    """MRAMSimulator.middleStep processes the responses the previous
    heartbeat queued: each wave of containers starts one heartbeat late
    (the map, then the reduce) and the last completion is seen one late:
    3 heartbeats in all."""
    late = _job(replace(UNREGISTER, am_replies_next_heartbeat=True))
    on_time = _job(UNREGISTER)
    assert late["started_ms"] == on_time["started_ms"]
    assert late["unregistered_ms"] - on_time["unregistered_ms"] == 3000


def test_a_nodes_first_heartbeat_comes_one_interval_after_its_offset():
    """NMSimulator.firstStep does nothing: the first heartbeat, which can
    get a job submitted at 0 its AM container, comes an interval later."""
    late = _job(replace(UNREGISTER, nm_first_heartbeat_after_interval=True))
    on_time = _job(UNREGISTER)
    assert late["started_ms"] - on_time["started_ms"] == 1000
    assert late["unregistered_ms"] - on_time["unregistered_ms"] == 1000


@pytest.mark.parametrize(
    ("args", "ends"),
    [
        ((), {"job_1": 24000, "job_2": 133204}),
        (("--timing=yarn",), {"job_1": 20050, "job_2": 130270}),
    ],
    ids=["sls", "yarn"],
)
def test_emu_sls_replays_with_slss_timing_unless_told_yarns(tmp_path, capsys, args, ends):
    """Hadoop's sample trace (FIFO): SLS's own runs end job_1 at 24.0 s and
    job_2 at 133.2 s (its submission + 28 s), as `emu sls` does by default."""
    argv = [
        "sls",
        f"--conf-dir={TEST_RES}",
        "-D",
        "yarn.resourcemanager.scheduler.class=fifo",
        "--tracetype=SLS",
        f"--tracelocation={TEST_RES / 'inputsls.json'}",
        f"--nodes={TEST_RES / 'nodes.json'}",
        f"--output-dir={tmp_path}",
        *args,
    ]
    assert main(argv) == 0
    with (tmp_path / "jobruntime.csv").open() as f:
        assert {r["JobID"]: int(r["simulate_end_time"]) for r in csv.DictReader(f)} == ends


def test_the_python_api_takes_the_timing_too(tmp_path):
    from emu.api import replay

    result = replay(
        TEST_RES / "inputsls.json",
        nodes=TEST_RES / "nodes.json",
        conf_dir=TEST_RES,
        scheduler="fifo",
        timing="yarn",
        output_dir=tmp_path,
    )
    assert [j["finish_ms"] for j in result.summary["jobs"]] == [20050, 130270]
    with pytest.raises(ValueError, match="timing must be one of sls, yarn"):
        replay(TEST_RES / "inputsls.json", timing="hadoop", output_dir=tmp_path)

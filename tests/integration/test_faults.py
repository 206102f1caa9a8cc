"""Faults in one place: every kind the scenario format injects, in one
shipped run that still finishes every job with the RM's invariants intact,
and each run's report of what was injected and what recovered."""

from __future__ import annotations

import io
import json

from emu.cli import main
from emu.metrics.eventlog import EventLog
from emu.scenario import native
from emu.scenario.native import FAULT_KINDS, Fault
from emu.testing.cluster import SCENARIOS, mr_job, scenario_simulation, simulation

ALL_FAULTS = SCENARIOS / "all-faults.toml"


async def test_all_faults_scenario_injects_every_kind_and_finishes_every_job(autojump_clock):
    sc = native.load(ALL_FAULTS)
    assert sorted({f.kind for f in sc.faults}) == sorted(FAULT_KINDS)
    sim = scenario_simulation(sc)
    result = await sim.run()
    states = {j["job_id"]: j["state"] for j in result.jobs}
    assert states == {"etl": "FINISHED", "report": "FINISHED", "index": "FINISHED",
                      "doomed": "KILLED"}  # fmt: skip
    attempts = {j["job_id"]: j["attempts"] for j in result.jobs}
    assert attempts["report"] == 2 and attempts["index"] == 2  # hung AM, crashed AM
    assert result.faults["injected"] == dict.fromkeys(sorted(FAULT_KINDS), 1)
    recovered = result.faults["recovered"]
    assert recovered["nodes_lost"] == 1 and recovered["nodes_rejoined"] == 1
    assert recovered["nodes_decommissioned"] == 1
    assert recovered["attempts_restarted"] == 2
    assert recovered["tasks_rerun"] > 0
    # The RM restart (with recovery) found etl and report still running.
    assert (recovered["rm_restarts"], recovered["apps_recovered"], recovered["apps_lost"]) == (
        1, 2, 0,
    )  # fmt: skip
    assert result.metrics["active_nodes"] == 7  # node2 is back, node8 decommissioned


async def test_a_crashed_am_fails_its_attempt_and_the_next_one_finishes(autojump_clock):
    sim = simulation([mr_job("j", maps=4, map_ms=60_000)], faults=[Fault(20_000, "am_crash", "j")])
    result = await sim.run()
    [job] = result.jobs
    assert (job["state"], job["attempts"]) == ("FINISHED", 2)
    assert result.faults["injected"] == {"am_crash": 1}
    assert result.faults["recovered"]["attempts_restarted"] == 1
    # The new attempt plans every task afresh: "re-run" counts tasks an AM
    # asked for again, and the crashed AM asks for nothing any more.
    assert result.faults["recovered"]["tasks_rerun"] == 0


def test_the_report_is_in_summary_json_and_on_the_terminal(tmp_path, capsys):
    assert main(["run", str(ALL_FAULTS), "--invariants", "-o", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "faults injected: am_crash 1, am_hang 1, decommission 1, kill_app 1" in out
    assert "nodes lost 1 (rejoined 1), decommissioned 1, attempts restarted 2" in out
    faults = json.loads((tmp_path / "summary.json").read_text())["faults"]
    assert faults["injected"]["nm_crash"] == 1 and faults["recovered"]["nodes_rejoined"] == 1


async def test_a_node_whose_heartbeats_fall_behind_is_rebooted_and_rejoins(autojump_clock):
    """YARN's ResourceTrackerService: a heartbeat whose response id is too
    far behind gets RESYNC and the node goes REBOOTED; the NM registers
    again and the replay still finishes."""
    log = io.StringIO()
    sim = simulation([mr_job("j", maps=8, map_ms=60_000)], events=EventLog(log))

    def fall_behind(rm) -> None:
        if rm.ctx.now_ms() == 30_000:
            assert sim.nm_host is not None
            sim.nm_host.by_id["node1"].response_id -= 5

    sim.on_tick = fall_behind
    result = await sim.run()
    assert [j["state"] for j in result.jobs] == ["FINISHED"]
    node1 = [
        (e["frm"], e["to"])
        for e in map(json.loads, log.getvalue().splitlines())
        if e["event"] == "node" and e["id"] == "node1"
    ]
    assert node1 == [("NEW", "RUNNING"), ("RUNNING", "REBOOTED"), ("NEW", "RUNNING")]
    assert result.metrics["active_nodes"] == 4 and result.metrics["rebooted_nodes"] == 0

"""`emu run`: the default scenario prints a summary and writes outputs; a bad
scenario gets one error line naming the file and the place, exit code 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from emu.cli import main

ROOT = Path(__file__).resolve().parents[2]


def test_every_shipped_scenario_loads():
    from emu.scenario import native

    shipped = sorted((ROOT / "scenarios").glob("*.toml"))
    assert len(shipped) >= 3
    for path in shipped:
        native.load(path)


def test_default_scenario_runs_and_writes_outputs(tmp_path, capsys):
    assert main(["run", str(ROOT / "scenarios" / "three-jobs.toml"), "-o", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "job_1" in out and "FINISHED" in out and "utilization" in out
    lines = (tmp_path / "jobruntime.csv").read_text().splitlines()
    assert lines[0] == "JobID,real_start_time,real_end_time,simulate_start_time,simulate_end_time"
    assert len(lines) == 4
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert [j["state"] for j in summary["jobs"]] == ["FINISHED"] * 3
    assert 0 < summary["cluster"]["utilization"]["memory"] <= 1
    events = (tmp_path / "events.jsonl").read_text().splitlines()
    assert all(json.loads(e)["t"] >= 0 for e in events)


BAD = {
    "syntax": ("name = \n", r"bad\.toml:1: not valid TOML"),
    "type": (
        "[[jobs]]\nid = 'j'\n[[jobs.tasks]]\nduration_ms = 'x'\n",
        r"jobs\[0\]\.tasks\[0\]\.duration_ms",
    ),
    "negative": (
        "[[jobs]]\nid = 'j'\n[[jobs.tasks]]\nduration_ms = -5\n",
        r"duration_ms: must be >= 1",
    ),
    "unknown_key": ("colour = 'red'\n", r"colour: unknown key"),
    "fault_node": (
        "[[jobs]]\nid='j'\n[[jobs.tasks]]\nduration_ms=1\n[[faults]]\nat_ms=1\nkind='nm_crash'\nnode='zz'\n",
        r"faults\[0\]\.node: no node 'zz'",
    ),
    "scheduler": (
        "[config]\n'yarn.resourcemanager.scheduler.class' = 'nope'\n[[jobs]]\nid='j'\n"
        "[[jobs.tasks]]\nduration_ms=1\n",
        r"yarn\.resourcemanager\.scheduler\.class: unknown scheduler",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_scenario_gets_one_error_line_and_exit_2(case, tmp_path, capsys):
    text, pattern = BAD[case]
    path = tmp_path / "bad.toml"
    path.write_text(text)
    out_dir = tmp_path / "out"
    assert main(["run", str(path), "-o", str(out_dir)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert str(path) in err[0]
    import re

    assert re.search(pattern, err[0]), err[0]
    assert not (out_dir / "summary.json").exists()


def test_missing_scenario_file(tmp_path, capsys):
    assert main(["run", str(tmp_path / "none.toml")]) == 2
    assert "no such file" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["lost-node.toml", "capacity-preemption.toml"])
def test_invariants_hold_and_change_no_output(name, tmp_path, capsys):
    """`--invariants` checks the RM's state as the run goes; the outputs are
    byte-identical to a run without it."""
    scenario = str(ROOT / "scenarios" / name)
    assert main(["run", scenario, "-o", str(tmp_path / "plain")]) == 0
    assert main(["run", scenario, "--invariants", "-o", str(tmp_path / "checked")]) == 0
    for f in ("jobruntime.csv", "summary.json", "events.jsonl"):
        assert (tmp_path / "plain" / f).read_bytes() == (tmp_path / "checked" / f).read_bytes()


def test_a_broken_invariant_is_one_error_line_and_exit_1(tmp_path, capsys, monkeypatch):
    from emu.metrics import cluster_invariants

    real = cluster_invariants.check_state

    def corrupted(ctx):
        if ctx.now_ms() >= 50_000:
            for node in ctx.scheduler.nodes.values():
                node.allocated = node.allocated + node.total
        real(ctx)

    monkeypatch.setattr("emu.simulation.check_state", corrupted)
    scenario = str(ROOT / "scenarios" / "three-jobs.toml")
    assert main(["run", scenario, "--invariants", "-o", str(tmp_path)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1
    assert err[0].startswith("emu: error: invariant broken at simulated time 50.000 s: node")
    assert not (tmp_path / "summary.json").exists()

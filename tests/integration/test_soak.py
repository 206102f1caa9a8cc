"""`make soak` at toy size: the command runs, every job finishes, the RM
keeps at most the configured number of finished apps, figures are written."""

from __future__ import annotations

import json

from emu import soak


def test_a_tiny_soak_finishes_every_job_and_writes_its_figures(tmp_path, capsys):
    assert soak.main(["--hours", "0.1", "--nodes", "20", "--max-completed-apps", "3",
                      "-o", str(tmp_path)]) == 0  # fmt: skip
    r = json.loads((tmp_path / "soak.json").read_text())
    assert r["jobs"] == 18 and r["finished"] == 18
    assert r["max_completed_apps"] == 3 and r["samples"]
    assert "jobs 18 of 18 finished" in capsys.readouterr().out


def test_fault_rounds_come_every_twenty_simulated_minutes():
    hosts = [f"h{i}" for i in range(10)]
    faults = soak.faults(1.0, hosts, [f"job_{i:05d}" for i in range(180)])
    kinds = [f.kind for f in faults]
    assert kinds.count("nm_crash") == 3 and kinds.count("nm_restart") == 3
    assert kinds.count("decommission") == 1
    assert faults == sorted(faults, key=lambda f: (f.at_ms, f.kind, f.target))

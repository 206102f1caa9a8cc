"""The differential campaign end to end: random cases replayed by emu's
scheduler and Hadoop's in a worker process, the per-class table, a baseline
of the cases that agreed, and `--check` failing when a listed case does not
agree any more (what `make fidelity-ci` runs)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def _fuzz(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "emu.fidelity.fuzz", "--jobs", "1", "--shrink", "0", *args],
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_a_small_campaign_agrees_and_its_baseline_checks(tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.json"
    done = _fuzz(
        "--count", "6", "--seed", "5", "--kinds", "fifo,fair",
        "--out", str(tmp_path / "out"), "--baseline", str(baseline),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    rows = {line.split()[0]: line.split() for line in done.stdout.splitlines() if line}
    assert rows["fifo"][1] == rows["fifo"][2] == "1"  # one FIFO case of six, identical
    assert rows["fair"][1] == rows["fair"][2] == "1"
    assert rows["all"][4] == "0"  # every replay the same twice
    data = json.loads(baseline.read_text())
    assert (data["seed"], data["count"]) == (5, 6)
    assert len(data["identical"]) == 2
    campaign = json.loads((tmp_path / "out" / "seed-5" / "campaign.json").read_text())
    assert {o["verdict"] for o in campaign["outcomes"]} == {"identical"}
    # Agreeing cases leave no outputs behind.
    assert not any((tmp_path / "out" / "seed-5" / "cases").iterdir())

    data["identical"].append("s5-00099")  # a case the campaign does not have agrees no more
    baseline.write_text(json.dumps(data))
    checked = _fuzz(
        "--check", str(baseline), "--kinds", "fifo,fair", "--out", str(tmp_path / "again")
    )
    assert checked.returncode == 1
    assert "these cases agreed and no longer do: s5-00099" in checked.stderr


def test_a_baseline_that_is_not_one_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "baseline.json"
    bad.write_text('{"seed": 1}')
    done = _fuzz("--check", str(bad), "--out", str(tmp_path / "out"))
    assert done.returncode == 2
    assert done.stderr.startswith(f"emu: error: {bad}: not a campaign baseline")

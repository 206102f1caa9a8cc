"""A federation whose sub-clusters run Hadoop's own scheduler classes
(`emu.scheduler.impl = hadoop`): unmanaged AMs in the secondary
sub-clusters ask for no AM container there, container ids stay apart by
the RMs' epochs, and the replay gives what emu's port gives."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "scenarios" / "federation" / "two-subclusters.toml"


def _run(path: Path, out: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "emu", "run", str(path), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return (out / "jobruntime.csv").read_text()


@pytest.mark.parametrize("scheduler", ["fair", "capacity"])
def test_hadoops_schedulers_in_a_federation_replay_as_emus(tmp_path: Path, scheduler: str) -> None:
    text = EXAMPLE.read_text().replace(
        '"yarn.resourcemanager.scheduler.class" = '
        '"org.apache.hadoop.yarn.server.resourcemanager.scheduler.fifo.FifoScheduler"',
        f'"yarn.resourcemanager.scheduler.class" = "{scheduler}"',
    )
    ours = tmp_path / "emu.toml"
    ours.write_text(text)
    theirs = tmp_path / "hadoop.toml"
    theirs.write_text(text.replace("[config]\n", '[config]\n"emu.scheduler.impl" = "hadoop"\n', 1))
    emu_jobs = _run(ours, tmp_path / "emu")
    hadoop_jobs = _run(theirs, tmp_path / "hadoop")
    assert hadoop_jobs == emu_jobs
    assert len(hadoop_jobs.splitlines()) == 4

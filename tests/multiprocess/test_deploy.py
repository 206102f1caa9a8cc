"""deploy/emu-cluster, the SSH launcher, driven through an ssh stand-in that
runs each command on this machine: up, status, replay, down, and nothing
left running afterwards."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from emu.processes.common import free_port_base
from tests.multiprocess.procs import write_scenario

REPO = Path(__file__).resolve().parents[2]
LAUNCHER = REPO / "deploy" / "emu-cluster"

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def launcher(tmp_path: Path):
    fake_ssh = tmp_path / "fake-ssh"
    fake_ssh.write_text('#!/usr/bin/env bash\nshift\nexec bash -c "$*"\n')
    fake_ssh.chmod(0o755)
    hosts = tmp_path / "hosts"
    hosts.write_text("# test\nrm 127.0.0.1\nnm 127.0.0.1 2 /r1\nnm 127.0.0.1 1 /r2 --vcores 4\n")
    run_dir = tmp_path / "run"
    env = {
        **os.environ,
        "EMU_SSH": str(fake_ssh),
        "EMU_CMD": f"{sys.executable} -m emu",
        "EMU_RUN_DIR": str(run_dir),
        "EMU_PORT_BASE": str(free_port_base()),
        "EMU_RATE": "40",
        "EMU_WAIT_S": "30",
    }

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(LAUNCHER), "-f", str(hosts), *args],
            env=env,
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=90,
        )

    yield run, run_dir
    run("down")
    for pid_file in run_dir.glob("*.pid"):  # in case `down` itself failed
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.killpg(int(pid_file.read_text()), signal.SIGKILL)


def _alive(session: int) -> bool:
    """Whether a process of `session` still runs (zombies, which this
    container's init may be slow to reap, do not count)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[3]) == session:
            return True
    return False


def test_launcher_up_replay_down(launcher, tmp_path: Path) -> None:
    run, run_dir = launcher
    up = run("up")
    assert up.returncode == 0, up.stderr + up.stdout
    assert "up: 3 nodes in 2 NM processes" in up.stdout
    groups = [int(p.read_text()) for p in sorted(run_dir.glob("*.pid"))]
    assert len(groups) == 3 and all(_alive(g) for g in groups)
    # Only what is missing is started again.
    os.killpg(groups[1], signal.SIGKILL)
    again = run("up")
    assert again.returncode == 0, again.stderr + again.stdout
    assert again.stdout.count("already running") == 2
    groups = [int(p.read_text()) for p in sorted(run_dir.glob("*.pid"))]
    assert all(_alive(g) for g in groups)

    status = run("status")
    assert status.returncode == 0 and "RUNNING 3" in status.stdout
    jobs = [{"id": f"j{i}", "maps": 3, "map_ms": 10_000, "reduce_ms": 5_000} for i in range(2)]
    replay = run("replay", str(write_scenario(tmp_path / "jobs.toml", jobs)))
    assert replay.returncode == 0, replay.stderr + replay.stdout
    assert "jobs 2 finished" in replay.stdout

    down = run("down")
    assert down.returncode == 0, down.stderr
    assert not any(_alive(g) for g in groups)
    assert not list(run_dir.glob("*.pid"))

"""`emu cluster up` and `emu replay` as a user runs them: bad configuration
and scenarios a running cluster cannot honour are one error line with
nothing left in the temp directory; `--keep-running` stays up after its
replay; a second replay on the same cluster reports only its own jobs."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from emu.processes.cluster import emu_argv
from tests.multiprocess.procs import write_scenario

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parents[2]


def run(tmp_path: Path, *args: object) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TMPDIR": str(tmp_path / "tmp")}
    (tmp_path / "tmp").mkdir(exist_ok=True)
    return subprocess.run(
        emu_argv(*args), capture_output=True, text=True, timeout=90, env=env, check=False
    )


def one_line(done: subprocess.CompletedProcess[str], code: int) -> str:
    assert done.returncode == code, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def test_cluster_up_with_bad_configuration_prints_the_rms_error(tmp_path) -> None:
    line = one_line(
        run(
            tmp_path,
            "cluster",
            "up",
            "--nodes",
            1,
            "--conf",
            "yarn.scheduler.capacity.root.queues=a",
        ),
        2,
    )
    assert line.startswith("emu: error: --conf: yarn.scheduler.capacity.root.queues: capacities")
    assert list((tmp_path / "tmp").iterdir()) == []


def test_cluster_up_refuses_a_stop_after_that_is_not_positive(tmp_path) -> None:
    line = one_line(run(tmp_path, "cluster", "up", "--stop-after", -5), 2)
    assert line == "emu: error: --stop-after: -5.0: must be a positive number of seconds"


def test_cluster_up_whose_rm_cannot_start_says_why_and_cleans_up(tmp_path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        line = one_line(run(tmp_path, "cluster", "up", "--nodes", 1, "--port-base", port), 1)
    assert line.startswith(f"emu: error: cannot bind tcp://127.0.0.1:{port}")
    assert list((tmp_path / "tmp").iterdir()) == []


def test_scenarios_a_cluster_cannot_honour_are_refused_by_name(tmp_path) -> None:
    drf = ROOT / "scenarios" / "fair-drf-paper.toml"
    line = one_line(run(tmp_path, "cluster", "up", "--trace", drf), 2)
    assert "this scenario's nodes (tasks, ams)" in line
    three = ROOT / "scenarios" / "three-jobs.toml"
    line = one_line(run(tmp_path, "replay", "--rm", "127.0.0.1:9", three), 2)
    assert "would ignore [config] (yarn.resourcemanager.scheduler.class" in line
    assert "[cluster] (node_memory_mb, node_vcores, nodes_per_rack, racks)" in line
    assert list((tmp_path / "tmp").iterdir()) == []


def test_keep_running_stays_up_and_a_second_replay_counts_its_own_jobs(tmp_path) -> None:
    scenario = write_scenario(
        tmp_path / "one.toml", [{"id": "j1", "maps": 1, "reduces": 0, "map_ms": 2_000}]
    )
    options = ["--nodes", 2, "--rate", 20, "--keep-running", "--work-dir", tmp_path / "work"]
    up = subprocess.Popen(
        emu_argv("cluster", "up", *options, "--trace", scenario),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        seen = []
        deadline = time.monotonic() + 60
        while not any("still up" in line for line in seen):
            assert time.monotonic() < deadline and up.poll() is None, "".join(seen)
            seen.append(up.stdout.readline())
        rm = next(line for line in seen if "RM up at" in line).split("RM up at ")[1].split()[0]
        time.sleep(1)
        assert up.poll() is None, "".join(seen)
        again = run(tmp_path, "replay", "--rm", rm, scenario)
        assert again.returncode == 0, again.stdout + again.stderr
        assert "jobs 1 finished, 0 failed, 0 killed" in again.stdout
    finally:
        up.send_signal(signal.SIGINT)
        try:
            rest = up.communicate(timeout=60)[0]
        except subprocess.TimeoutExpired:
            up.kill()  # nothing left behind for the next test, and say what it printed
            rest = up.communicate()[0]
            raise AssertionError(
                "cluster up did not stop on SIGINT:\n" + "".join(seen) + rest
            ) from None
    assert "emu cluster: stopping" in rest, rest


def test_a_replay_reports_every_job_though_the_rm_keeps_one_finished_app(tmp_path) -> None:
    """yarn.resourcemanager.max-completed-applications=1: the RM forgets
    finished apps, `emu replay` keeps their reports as it sees them end."""
    jobs = [
        {"id": f"j{i}", "submit_ms": i * 3_000, "maps": 1, "reduces": 0, "map_ms": 2_000}
        for i in range(4)
    ]
    scenario = write_scenario(tmp_path / "four.toml", jobs)
    done = run(
        tmp_path,
        "cluster", "up", "--nodes", 2, "--rate", 20, "--work-dir", tmp_path / "work",
        "--conf", "yarn.resourcemanager.max-completed-applications=1", "--trace", scenario,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "jobs 4 finished, 0 failed, 0 killed" in done.stdout

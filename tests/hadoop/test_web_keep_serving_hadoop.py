"""Signals on a run of Hadoop's own scheduler: the JVM inside emu leaves
SIGINT and SIGTERM to emu (`-Xrs`), so `--keep-serving` ends with exit 0 on
SIGTERM and an interrupted run stops as emu's own does (one line, exit 143,
no outputs), instead of the JVM exiting on its own."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.hadoop.conftest import TEST_RES
from tests.integration.test_web_keep_serving import SERVING, wait_for_line

pytestmark = pytest.mark.usefixtures("hadoop")


def start(conf_dir: Path, tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "emu",
            "sls",
            f"--conf-dir={conf_dir}",
            "--tracetype=SLS",
            f"--tracelocation={TEST_RES / 'inputsls.json'}",
            f"--nodes={TEST_RES / 'nodes.json'}",
            "--output-dir=out",
            "--scheduler-impl",
            "hadoop",
            *args,
        ],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_keep_serving_a_hadoop_run_stops_on_sigterm_with_exit_0(conf_dir, tmp_path):
    proc = start(conf_dir, tmp_path, "--track-jobs=job_1,job_2", "--web-port=0", "--keep-serving")
    try:
        url = wait_for_line(proc, SERVING).group(1)
        with httpx.Client(base_url=url, timeout=10) as http:
            metrics = http.get("/ws/v1/cluster/metrics").json()["clusterMetrics"]
            assert metrics["appsCompleted"] == 2
            track = http.get("/ws/v1/emu/track").json()
            assert [t["job"] for t in track["trackedJobs"]] == ["job_1", "job_2"]
            assert all(t["appId"] for t in track["trackedJobs"])
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert "jobs 2 finished" in out and "Traceback" not in err


def test_sigterm_during_a_hadoop_run_stops_it_as_emu_does(conf_dir, tmp_path):
    proc = start(conf_dir, tmp_path, "--rate=5")
    try:
        deadline = time.monotonic() + 120
        # The staging directory appears once the run has started (the JVM is up).
        while not list(tmp_path.glob("out/.emu-sls-staging-*")):
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.1)
        time.sleep(1)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 143, err
    assert err.strip().splitlines()[-1] == "emu: stopped by SIGTERM; no outputs written"
    assert not (tmp_path / "out").exists()

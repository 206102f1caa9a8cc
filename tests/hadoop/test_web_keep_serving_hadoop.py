"""`--keep-serving` on a run of Hadoop's own scheduler: the JVM inside emu
leaves SIGINT and SIGTERM to emu (`-Xrs`), so SIGTERM ends the served run
with exit 0 (as it ends an interrupted run with emu's one line and 143),
instead of the JVM exiting on its own with 143."""

from __future__ import annotations

import signal
import subprocess
import sys
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

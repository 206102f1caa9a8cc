"""`--keep-serving`: after a replay ends, its web server stays up with the
final state (pages and REST API) until SIGINT or SIGTERM, which end the
command with exit 0 (the run completed and its outputs are written);
without `--web-port` the option is refused with one line and exit 2."""

from __future__ import annotations

import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from emu.cli import main
from tests.web_harness import TEST_RES, sls_conf_dir

EMU = (sys.executable, "-m", "emu")
ROOT = Path(__file__).resolve().parents[2]
SERVING = re.compile(r"serving its final state at (http://\S+)/track .* \(kill (\d+)\)$")


def sls_args(tmp_path: Path) -> list[str]:
    conf = tmp_path / "conf"
    conf.mkdir()
    return [
        "sls",
        f"--conf-dir={sls_conf_dir(conf)}",
        "--tracetype=SLS",
        f"--tracelocation={TEST_RES / 'inputsls.json'}",
        f"--nodes={TEST_RES / 'nodes.json'}",
        f"--output-dir={tmp_path / 'out'}",
        "--track-jobs=job_1",
    ]


def run_args(tmp_path: Path) -> list[str]:
    return ["run", str(ROOT / "scenarios" / "three-jobs.toml")]


def wait_for_line(proc: subprocess.Popen[str], pattern: re.Pattern[str]) -> re.Match[str]:
    """Read stderr lines until one matches (the process must not end first)."""
    assert proc.stderr is not None
    deadline = time.monotonic() + 60
    seen = []
    while True:
        assert time.monotonic() < deadline, "".join(seen)
        ready, _, _ = select.select([proc.stderr], [], [], 0.5)
        if not ready:
            assert proc.poll() is None, "".join(seen)
            continue
        line = proc.stderr.readline()
        assert line, f"emu exited with {proc.wait()}:\n" + "".join(seen)
        seen.append(line)
        found = pattern.search(line.rstrip("\n"))
        if found:
            return found


@pytest.mark.parametrize(
    ("command", "signum", "jobs"),
    [(sls_args, signal.SIGINT, 2), (run_args, signal.SIGTERM, 3)],
    ids=["sls-SIGINT", "run-SIGTERM"],
)
def test_the_server_outlives_the_run_until_a_signal(tmp_path, command, signum, jobs):
    proc = subprocess.Popen(
        [*EMU, *command(tmp_path), "--web-port=0", "--keep-serving"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        found = wait_for_line(proc, SERVING)
        url, pid = found.group(1), int(found.group(2))
        assert pid == proc.pid
        time.sleep(0.5)
        assert proc.poll() is None, "the server stopped with the run"
        with httpx.Client(base_url=url, timeout=10) as http:
            track = http.get("/ws/v1/emu/track").json()
            assert track["finished"] and not track["running"]
            metrics = http.get("/ws/v1/cluster/metrics").json()["clusterMetrics"]
            assert metrics["appsCompleted"] == jobs and metrics["appsRunning"] == 0
            page = http.get("/track")
            assert page.status_code == 200 and "<canvas" in page.text
            assert http.get("/static/live.js").status_code == 200
            if command is sls_args:
                assert 'data-job="job_1"' in page.text
                assert (tmp_path / "out" / "jobruntime.csv").is_file()
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert "Traceback" not in err and "stopped by" not in err, err
    assert f"jobs {jobs} finished" in out
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{url}/ws/v1/cluster/metrics", timeout=5)


@pytest.mark.parametrize("command", [sls_args, run_args], ids=["sls", "run"])
def test_keep_serving_without_a_web_port_is_refused(tmp_path, command, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main([*command(tmp_path), "--keep-serving"]) == 2
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [
        "emu: error: --keep-serving: keeps the web server up: give --web-port PORT with it"
    ]
    assert captured.out == "" and not (tmp_path / "out").exists()

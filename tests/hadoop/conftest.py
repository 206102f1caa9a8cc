"""Hadoop's own schedulers beside emu's: these tests need a JDK, Maven (or a
fetched Hadoop) and JPype. Without them they skip, saying why; CI sets
EMU_REQUIRE_HADOOP=1 so that there they fail instead of skipping.

Each run is a fresh `emu` process: a process holds one JVM, with one
classpath, and a test that brings its own scheduler class needs another."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_runs import run_here
from tests.fidelity_runs import sls_argv
from tests.reference import REFERENCE_DIR

TEST_RES = REFERENCE_DIR / "test-resources"
ROOT = Path(__file__).resolve().parents[2]


def _missing() -> str | None:
    for tool in ("java", "javac"):
        if shutil.which(tool) is None and not os.environ.get("JAVA_HOME"):
            return f"no {tool}: the real-scheduler backend needs a JDK"
    try:
        import jpype  # noqa: F401
    except ImportError:
        return "JPype1 is not installed"
    from emu.errors import InputError
    from emu.hadoop import classpath

    try:
        classpath.resolve(fetch=shutil.which("mvn") is not None)
    except InputError as e:
        return str(e)
    return None


@pytest.fixture(scope="session")
def hadoop() -> None:
    """Skip (or, under EMU_REQUIRE_HADOOP, fail) when Hadoop cannot run here."""
    why = _missing()
    if why is not None:
        if os.environ.get("EMU_REQUIRE_HADOOP"):
            pytest.fail(f"EMU_REQUIRE_HADOOP is set but Hadoop's schedulers cannot run: {why}")
        pytest.skip(f"Hadoop's schedulers cannot run here: {why}")


def sls_case(case: str, out: Path, *extra: str, failed_jobs: bool = False) -> Path:
    """`emu sls` on a fidelity case (`tests.fidelity_runs.sls_argv`) with
    `extra` options, writing into `out`; the run must succeed (with
    `failed_jobs`, it may also end with exit 1: some job did not). Returns
    `out`. `case` may also be a directory laid out as a case. With Hadoop's
    scheduler the run has a process (and a JVM) of its own; with emu's it
    runs in this one."""
    argv = sls_argv(case, out, *extra)
    hadoop = any(a == "hadoop" or a.endswith("=hadoop") for a in extra)
    done = emu(*argv) if hadoop else run_here(argv)
    assert done.returncode in ((0, 1) if failed_jobs else (0,)), done.stderr[-2000:]
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    return out


def runtime_and_containers(case: str, out: Path, *extra: str) -> tuple[bytes, bytes]:
    """`sls_case` with `--container-log`: its jobruntime.csv and containers.csv."""
    sls_case(case, out, "--container-log", *extra)
    return (out / "jobruntime.csv").read_bytes(), (out / "containers.csv").read_bytes()


def emu(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`emu ARGS` in a process of its own."""
    return subprocess.run(
        [sys.executable, "-m", "emu", *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd or ROOT,
        timeout=240,
    )


@pytest.fixture
def conf_dir(tmp_path: Path) -> Path:
    d = tmp_path / "conf"
    d.mkdir()
    for name in ("sls-runner.xml", "yarn-site.xml", "capacity-scheduler.xml", "fair-scheduler.xml"):
        shutil.copy(TEST_RES / name, d / name)
    return d

"""The suite passes when the shell that starts it ignores SIGINT (a
background job, nohup, some CI runners): tests/conftest.py gives every test
process Python's default handler back, so the tests that interrupt a run
see it interrupted."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_ctrl_c_tests_pass_when_pytest_starts_with_sigint_ignored() -> None:
    done = subprocess.run(
        [
            sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
            "tests/unit/test_clock.py", "-k", "ctrl_c or sigint or signal",
        ],
        cwd=ROOT,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "deselected" in done.stdout

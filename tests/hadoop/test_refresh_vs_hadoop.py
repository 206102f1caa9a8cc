"""An admin queue refresh mid-trace (`emu sls --changes`) applied by Hadoop's
own scheduler (`--scheduler-impl hadoop`): the CapacityScheduler's
reinitialize and the FairScheduler's allocation reload give the same
jobruntime.csv as emu's port, and differ from the run without the refresh,
so a refresh is never silently dropped by either backend."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fidelity_runs import CASES, sls_argv
from tests.hadoop.conftest import emu, sls_case

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("hadoop")]


def _sls(case: str, out: Path, *extra: str) -> str:
    return (sls_case(case, out, *extra) / "jobruntime.csv").read_text()


def _flipped_weights(tmp_path: Path) -> Path:
    text = (CASES / "fair-weights" / "conf" / "fair-scheduler.xml").read_text()
    text = text.replace("<weight>3.0</weight>", "<weight>W</weight>")
    text = text.replace("<weight>1.0</weight>", "<weight>3.0</weight>")
    path = tmp_path / "flipped.xml"
    path.write_text(text.replace("<weight>W</weight>", "<weight>1.0</weight>"))
    return path


@pytest.mark.parametrize("case", ["cap-max-capacity", "fair-weights"])
def test_a_refresh_mid_trace_takes_effect_alike_in_both(case: str, tmp_path: Path) -> None:
    changes = tmp_path / "changes.toml"
    if case.startswith("cap"):
        changes.write_text(
            '[[changes]]\nat_ms = 20000\nkind = "refresh_queues"\n'
            'properties = { "yarn.scheduler.capacity.root.a.maximum-capacity" = 100 }\n'
        )
    else:
        _flipped_weights(tmp_path)
        changes.write_text(
            '[[changes]]\nat_ms = 5000\nkind = "refresh_queues"\nfile = "flipped.xml"\n'
        )
    hadoop = ("--scheduler-impl", "hadoop")
    base = _sls(case, tmp_path / "base", *hadoop)
    theirs = _sls(case, tmp_path / "hadoop", f"--changes={changes}", *hadoop)
    ours = _sls(case, tmp_path / "emu", f"--changes={changes}")
    assert theirs != base
    assert ours == theirs


def test_a_refresh_hadoop_refuses_stops_the_run_with_its_reason(tmp_path: Path) -> None:
    changes = tmp_path / "changes.toml"
    changes.write_text(
        '[[changes]]\nat_ms = 1000\nkind = "refresh_queues"\n'
        'properties = { "yarn.scheduler.capacity.root.a.capacity" = 90 }\n'
    )
    done = emu(
        *sls_argv(
            "cap-max-capacity",
            tmp_path / "out",
            f"--changes={changes}",
            "--scheduler-impl",
            "hadoop",
        )
    )
    assert done.returncode != 0
    errors = [line for line in done.stderr.splitlines() if line.startswith("emu: error:")]
    assert len(errors) == 1, done.stderr[-2000:]
    assert "root.a" in errors[0] or "100" in errors[0], errors[0]

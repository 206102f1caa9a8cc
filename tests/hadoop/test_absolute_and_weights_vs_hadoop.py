"""Capacities in resources and user weights, with Hadoop's own
CapacityScheduler deciding (`--scheduler-impl hadoop`): emu's port and
Hadoop's give the same jobruntime.csv and the same containers, byte for
byte, on the fidelity cases of both features."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hadoop.conftest import ROOT, emu

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("hadoop")]

CASES = ROOT / "scenarios" / "fidelity" / "cases"


def _sls(case: str, out: Path, *extra: str) -> tuple[bytes, bytes]:
    d = CASES / case
    done = emu(
        "sls",
        "--tracetype=SLS",
        f"--tracelocation={d / 'trace.json'}",
        f"--nodes={d / 'nodes.json'}",
        f"--conf-dir={d / 'conf'}",
        f"--output-dir={out}",
        "--container-log",
        *extra,
    )
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    return (out / "jobruntime.csv").read_bytes(), (out / "containers.csv").read_bytes()


@pytest.mark.parametrize("case", ["cap-absolute-capacity", "cap-user-weights"])
def test_emu_and_hadoop_give_the_same_jobruntime(case, tmp_path):
    ours = _sls(case, tmp_path / "emu")
    hadoops = _sls(case, tmp_path / "hadoop", "--scheduler-impl", "hadoop")
    assert ours[0] == hadoops[0]
    assert ours[1] == hadoops[1]

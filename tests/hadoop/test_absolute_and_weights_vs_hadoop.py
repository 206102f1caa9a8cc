"""Capacities in resources and user weights, with Hadoop's own
CapacityScheduler deciding (`--scheduler-impl hadoop`): emu's port and
Hadoop's give the same jobruntime.csv and the same containers, byte for
byte, on the fidelity cases of both features."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hadoop.conftest import sls_case

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("hadoop")]


def _sls(case: str, out: Path, *extra: str) -> tuple[bytes, bytes]:
    sls_case(case, out, "--container-log", *extra)
    return (out / "jobruntime.csv").read_bytes(), (out / "containers.csv").read_bytes()


@pytest.mark.parametrize("case", ["cap-absolute-capacity", "cap-user-weights"])
def test_emu_and_hadoop_give_the_same_jobruntime(case, tmp_path):
    ours = _sls(case, tmp_path / "emu")
    hadoops = _sls(case, tmp_path / "hadoop", "--scheduler-impl", "hadoop")
    assert ours[0] == hadoops[0]
    assert ours[1] == hadoops[1]

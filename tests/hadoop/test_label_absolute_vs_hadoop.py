"""A node label's capacities in resources, with Hadoop's own
CapacityScheduler deciding (`--scheduler-impl hadoop`): emu's port and
Hadoop's give the same jobruntime.csv and the same containers, byte for
byte, with a gpu partition that covers the queues' minimums there, with
one too small for them (scaled down), and with preemption taking a
queue's guarantee there back."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hadoop.conftest import sls_case

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("hadoop")]


def _sls(case: str, out: Path, *extra: str) -> tuple[bytes, bytes]:
    sls_case(case, out, "--container-log", *extra)
    return (out / "jobruntime.csv").read_bytes(), (out / "containers.csv").read_bytes()


@pytest.mark.parametrize(
    "case", ["cap-label-absolute", "cap-label-absolute-scaled", "cap-label-absolute-preemption"]
)
def test_emu_and_hadoop_give_the_same_jobruntime_and_containers(case, tmp_path):
    ours = _sls(case, tmp_path / "emu")
    hadoops = _sls(case, tmp_path / "hadoop", "--scheduler-impl", "hadoop")
    assert ours[0] == hadoops[0]
    assert ours[1] == hadoops[1]

"""Cross-queue preemption inside labelled partitions with Hadoop's own
CapacityScheduler deciding (`--scheduler-impl hadoop`, whose
ProportionalCapacityPreemptionPolicy clones the queues per partition): emu's
port gives the same jobruntime.csv and the same containers.csv, byte for
byte (tests/integration/test_capacity_partition_preemption.py checks what
those outcomes are). One selector chooses in these cases, so Hadoop's kill
order within a round does not vary from run to run."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hadoop.conftest import sls_case

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("hadoop")]


def _sls(case: str, out: Path, *extra: str) -> tuple[bytes, bytes]:
    sls_case(case, out, "--container-log", *extra)
    return (out / "jobruntime.csv").read_bytes(), (out / "containers.csv").read_bytes()


@pytest.mark.parametrize(
    "case",
    [
        "cap-partition-preemption",
        "cap-partition-reclaim",
        "cap-partition-no-guarantee",
        "cap-partition-reclaim-order",
    ],
)
def test_emu_and_hadoop_preempt_the_same_containers(case, tmp_path):
    ours = _sls(case, tmp_path / "emu")
    hadoops = _sls(case, tmp_path / "hadoop", "--scheduler-impl", "hadoop")
    assert b"preempted" in hadoops[1]
    assert ours[0] == hadoops[0]
    assert ours[1] == hadoops[1]

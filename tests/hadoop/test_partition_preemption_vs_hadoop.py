"""Preemption inside labelled partitions with Hadoop's own
CapacityScheduler deciding (`--scheduler-impl hadoop`, whose
ProportionalCapacityPreemptionPolicy clones the queues per partition and
runs its selectors per partition): emu's port gives the same
jobruntime.csv and the same containers.csv
(tests/integration/test_capacity_partition_preemption.py checks what those
outcomes are).

containers.csv is compared with the events of each millisecond sorted:
when the cross-queue and the intra-queue selector both choose in one
round, Hadoop kills their containers in an order that varies from run to
run (a HashMap keyed by the selector objects)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hadoop.conftest import sls_case

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("hadoop")]


def _sls(case: str, out: Path, *extra: str) -> tuple[bytes, bytes]:
    sls_case(case, out, "--container-log", *extra)
    return (out / "jobruntime.csv").read_bytes(), (out / "containers.csv").read_bytes()


def _by_millisecond(log: bytes) -> list[list[bytes]]:
    """containers.csv's events, grouped by time and sorted within a time."""
    groups: list[list[bytes]] = []
    last = b""
    for line in log.splitlines():
        at = line.split(b",", 1)[0]
        if not groups or at != last:
            groups.append([])
            last = at
        groups[-1].append(line)
    return [sorted(g) for g in groups]


@pytest.mark.parametrize(
    "case",
    [
        "cap-partition-preemption",
        "cap-partition-reclaim",
        "cap-partition-no-guarantee",
        "cap-partition-reclaim-order",
        "cap-partition-intra-queue",
        "cap-partition-intra-userlimit",
    ],
)
def test_emu_and_hadoop_preempt_the_same_containers(case, tmp_path):
    ours = _sls(case, tmp_path / "emu")
    hadoops = _sls(case, tmp_path / "hadoop", "--scheduler-impl", "hadoop")
    assert b"preempted" in hadoops[1]
    assert ours[0] == hadoops[0]
    assert _by_millisecond(ours[1]) == _by_millisecond(hadoops[1])

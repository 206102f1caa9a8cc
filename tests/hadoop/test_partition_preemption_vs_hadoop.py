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

import pytest

from emu.fidelity.fuzz.campaign import by_millisecond
from tests.hadoop.conftest import runtime_and_containers

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("hadoop")]


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
    ours = runtime_and_containers(case, tmp_path / "emu")
    hadoops = runtime_and_containers(case, tmp_path / "hadoop", "--scheduler-impl", "hadoop")
    assert b"preempted" in hadoops[1]
    assert ours[0] == hadoops[0]
    assert by_millisecond(ours[1]) == by_millisecond(hadoops[1])

"""A node label's capacities in resources, with Hadoop's own
CapacityScheduler deciding (`--scheduler-impl hadoop`): emu's port and
Hadoop's give the same jobruntime.csv and the same containers, byte for
byte, with a gpu partition that covers the queues' minimums there, with
one too small for them (scaled down), and with preemption taking a
queue's guarantee there back."""

from __future__ import annotations

import pytest

from tests.hadoop.conftest import runtime_and_containers

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("hadoop")]


@pytest.mark.parametrize(
    "case", ["cap-label-absolute", "cap-label-absolute-scaled", "cap-label-absolute-preemption"]
)
def test_emu_and_hadoop_give_the_same_jobruntime_and_containers(case, tmp_path):
    ours = runtime_and_containers(case, tmp_path / "emu")
    hadoops = runtime_and_containers(case, tmp_path / "hadoop", "--scheduler-impl", "hadoop")
    assert ours[0] == hadoops[0]
    assert ours[1] == hadoops[1]

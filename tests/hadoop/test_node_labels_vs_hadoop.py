"""Node labels decided by emu's CapacityScheduler and by Hadoop's
(`--scheduler-impl hadoop`) on the node-label fidelity cases: the same
jobruntime.csv byte for byte, and the same container decisions (node,
time, size) in containers.csv."""

from __future__ import annotations

import pytest

from tests.hadoop.conftest import runtime_and_containers

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("hadoop")]


@pytest.mark.parametrize(
    "case", ["cap-node-labels", "cap-node-labels-queues", "cap-node-labels-preemption"]
)
def test_emu_and_hadoop_place_labelled_work_alike(case, tmp_path):
    ours = runtime_and_containers(case, tmp_path / "emu")
    hadoops = runtime_and_containers(case, tmp_path / "hadoop", "--scheduler-impl", "hadoop")
    assert ours[0] == hadoops[0]
    assert ours[1] == hadoops[1]
    # The cases exercise labels: some container runs on a labelled node.
    assert b",node1," in ours[1]

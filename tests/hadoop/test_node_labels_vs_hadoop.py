"""Node labels decided by emu's CapacityScheduler and by Hadoop's
(`--scheduler-impl hadoop`) on the node-label fidelity cases: the same
jobruntime.csv byte for byte, and the same container decisions (node,
time, size) in containers.csv."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hadoop.conftest import sls_case

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("hadoop")]


def _sls(case: str, out: Path, *extra: str) -> tuple[bytes, bytes]:
    sls_case(case, out, "--container-log", *extra)
    return (out / "jobruntime.csv").read_bytes(), (out / "containers.csv").read_bytes()


@pytest.mark.parametrize(
    "case", ["cap-node-labels", "cap-node-labels-queues", "cap-node-labels-preemption"]
)
def test_emu_and_hadoop_place_labelled_work_alike(case, tmp_path):
    ours = _sls(case, tmp_path / "emu")
    hadoops = _sls(case, tmp_path / "hadoop", "--scheduler-impl", "hadoop")
    assert ours[0] == hadoops[0]
    assert ours[1] == hadoops[1]
    # The cases exercise labels: some container runs on a labelled node.
    assert b",node1," in ours[1]

"""Capacities in resources and user weights, with Hadoop's own
CapacityScheduler deciding (`--scheduler-impl hadoop`): emu's port and
Hadoop's give the same jobruntime.csv and the same containers, byte for
byte, on the fidelity cases of both features."""

from __future__ import annotations

import pytest

from tests.hadoop.conftest import runtime_and_containers

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("hadoop")]


@pytest.mark.parametrize("case", ["cap-absolute-capacity", "cap-user-weights"])
def test_emu_and_hadoop_give_the_same_jobruntime(case, tmp_path):
    ours = runtime_and_containers(case, tmp_path / "emu")
    hadoops = runtime_and_containers(case, tmp_path / "hadoop", "--scheduler-impl", "hadoop")
    assert ours[0] == hadoops[0]
    assert ours[1] == hadoops[1]

"""Multi-node (global) placement decided by emu's CapacityScheduler and by
Hadoop's own (`--scheduler-impl hadoop`: its MultiNodeSortingManager made
and never started, its sorters run at emu's instants, its heartbeat checks
answered on emu's clock): the same jobruntime.csv and containers.csv, byte
for byte, on node heartbeats under 3.4.2 and in asynchronous passes under
3.5.0, with the sorter on its interval and sorting on every use. The
fidelity suite holds more (`mn35-`/`mn34-` cases, `make fidelity`)."""

from __future__ import annotations

import pytest

from tests.hadoop.conftest import runtime_and_containers

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("hadoop")]

POLICY = "yarn.scheduler.capacity.multi-node-sorting.policy"
MULTI_NODE = (
    "-D",
    "yarn.scheduler.capacity.multi-node-placement-enabled=true",
    "-D",
    f"{POLICY}.names=default",
    "-D",
    f"{POLICY}=default",
    "-D",
    f"{POLICY}.default.class=org.apache.hadoop.yarn.server.resourcemanager.scheduler."
    "placement.ResourceUsageMultiNodeLookupPolicy",
)


@pytest.mark.parametrize(
    ("case", "extra"),
    [
        # Reservations land on the last node an app walks; a reserved node
        # may still be walked, and its proposals are refused at commit.
        ("cap-reservation", ("--hadoop-version=3.4.2",)),
        # Sorted on every use, in asynchronous passes, with delay scheduling.
        (
            "cap-locality-delay",
            ("--hadoop-version=3.5.0", "-D", f"{POLICY}.default.sorting-interval.ms=0"),
        ),
    ],
)
def test_emu_and_hadoop_place_on_multiple_nodes_alike(case, extra, tmp_path):
    args = (*MULTI_NODE, *extra)
    ours = runtime_and_containers(case, tmp_path / "emu", *args)
    hadoops = runtime_and_containers(case, tmp_path / "hadoop", *args, "--scheduler-impl", "hadoop")
    assert ours[0] == hadoops[0]
    assert ours[1] == hadoops[1]
    assert ours[1].count(b",allocated,") > 10


def test_hadoops_multi_node_replay_is_the_same_run_after_run(tmp_path):
    args = (*MULTI_NODE, "--hadoop-version=3.5.0", "--scheduler-impl", "hadoop")
    first = runtime_and_containers("cap-reservation", tmp_path / "a", *args)
    again = runtime_and_containers("cap-reservation", tmp_path / "b", *args)
    assert first == again

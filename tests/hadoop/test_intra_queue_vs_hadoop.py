"""Intra-queue preemption with Hadoop's own CapacityScheduler deciding
(`--scheduler-impl hadoop`, whose ProportionalCapacityPreemptionPolicy runs
IntraQueueCandidatesSelector): emu's port gives the same jobruntime.csv,
byte for byte, and the same containers.csv, with the feature on, and with
it disabled for the queue (tests/integration/test_capacity_intra_queue_preemption.py
checks what those outcomes are).

containers.csv is compared with the events of each millisecond sorted: the
policy walks its selectors' candidates in a HashMap keyed by the selector
objects (identity hashes), so when the cross-queue and the intra-queue
selector both kill in one round, Hadoop kills their containers in either
order from one run to the next."""

from __future__ import annotations

import pytest

from emu.fidelity.fuzz.campaign import by_millisecond
from tests.hadoop.conftest import runtime_and_containers

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("hadoop")]

INTRA = "yarn.resourcemanager.monitor.capacity.preemption.intra-queue-preemption."
QUEUE_OFF = "yarn.scheduler.capacity.root.default.intra-queue-preemption.disable_preemption=true"


@pytest.mark.parametrize(
    ("case", "props"),
    [
        ("cap-intra-queue-priority", ()),
        ("cap-intra-queue-userlimit", ()),
        ("cap-intra-queue-after-cross-queue", ()),
        ("cap-intra-queue-fair", ()),
        ("cap-intra-queue-priority", ("-D", INTRA + "preemption-order-policy=userlimit_first")),
        ("cap-intra-queue-userlimit", ("-D", QUEUE_OFF)),
    ],
    ids=[
        "priority",
        "userlimit",
        "after-cross-queue",
        "fair",
        "priority-userlimit-first",
        "userlimit-queue-disabled",
    ],
)
def test_emu_and_hadoop_preempt_the_same_containers(case, props, tmp_path):
    ours = runtime_and_containers(case, tmp_path / "emu", *props)
    hadoops = runtime_and_containers(
        case, tmp_path / "hadoop", "--scheduler-impl", "hadoop", *props
    )
    assert ours[0] == hadoops[0]
    assert by_millisecond(ours[1]) == by_millisecond(hadoops[1])

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

from pathlib import Path

import pytest

from tests.hadoop.conftest import sls_case

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("hadoop")]

INTRA = "yarn.resourcemanager.monitor.capacity.preemption.intra-queue-preemption."
QUEUE_OFF = "yarn.scheduler.capacity.root.default.intra-queue-preemption.disable_preemption=true"


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
    ours = _sls(case, tmp_path / "emu", *props)
    hadoops = _sls(case, tmp_path / "hadoop", "--scheduler-impl", "hadoop", *props)
    assert ours[0] == hadoops[0]
    assert _by_millisecond(ours[1]) == _by_millisecond(hadoops[1])

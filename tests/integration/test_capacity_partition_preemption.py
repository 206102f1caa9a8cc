"""Cross-queue preemption inside labelled partitions, replayed through
`emu sls` from the fidelity cases cap-partition-* (each 8 GB node runs
eight 1 GB containers; tests/hadoop/test_partition_preemption_vs_hadoop.py
replays them with Hadoop's CapacityScheduler and compares).

- preemption: a fills the two exclusive gpu nodes; b, guaranteed half of
  gpu, asks there at 20 s and gets its half back from a, one container a
  round, so its job ends at 98 s instead of 125 s.
- reclaim: a's default-partition job spreads onto the idle non-exclusive
  spare node; b, guaranteed all of spare, takes those containers back.
- no-guarantee: b may use gpu but is guaranteed none of it: its gpu job
  waits for a's containers to end, and only the default partition (where
  b has a guarantee) is preempted for.
- reclaim-order: of a's two jobs on spare, the containers the later one
  got there go first (newest first), though the later job comes first in
  a's scheduling order.
- intra-queue: alice's high-priority gpu job takes her low-priority gpu
  job's containers (on the gpu nodes only) with intra-queue preemption on.
- intra-userlimit: bob in gpu and dave in the default partition each take
  back what alice holds above the user limit in their partition.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from tests.integration.conftest import sls_case

MONITOR_OFF = "yarn.resourcemanager.scheduler.monitor.enable=false"
INTRA_OFF = "yarn.resourcemanager.monitor.capacity.preemption.intra-queue-preemption.enabled=false"
# The ends below were worked out with YARN's AM and NM timing (emu.timing):
# these tests are about the scheduler, so they replay with it, not SLS's.
YARN_TIMING = "--timing=yarn"

CASES = {
    "cap-partition-preemption": (
        {"hog": 247490, "side": 35050, "claim": 97970},
        {"hog": 217490, "side": 35050, "claim": 124970},
        {"node1", "node2"},
    ),
    "cap-partition-reclaim": (
        {"borrow": 184530, "owner": 93490},
        {"borrow": 164530, "owner": 109490},
        {"node1"},
    ),
    "cap-partition-no-guarantee": (
        {"hog": 189490, "wide": 188050, "guest": 191970, "share": 93530},
        {"hog": 189490, "wide": 158050, "guest": 191970, "share": 96530},
        {"node3", "node4"},
    ),
    "cap-partition-reclaim-order": (
        {"early": 130530, "late": 128530, "owner": 93490},
        {"early": 127530, "late": 127530, "owner": 103490},
        {"node1"},
    ),
}


def _run(case: str, out: Path, *extra: str) -> tuple[dict[str, int], list[dict[str, str]]]:
    """Each job's end and the preempted containers of one replay."""
    assert sls_case(case, out, "--container-log", YARN_TIMING, *extra) == 0
    with (out / "jobruntime.csv").open() as f:
        ends = {r["JobID"]: int(r["simulate_end_time"]) for r in csv.DictReader(f)}
    with (out / "containers.csv").open() as f:
        preempted = [r for r in csv.DictReader(f) if r["event"] == "preempted"]
    return ends, preempted


@pytest.mark.parametrize("case", list(CASES))
def test_preemption_acts_in_the_partition_the_guarantee_is_in(tmp_path, capsys, case):
    on, off, nodes = CASES[case]
    ends, preempted = _run(case, tmp_path / "on")
    assert ends == on
    assert len(preempted) == 7
    assert {r["node"] for r in preempted} == nodes
    ends_off, none = _run(case, tmp_path / "off", "-D", MONITOR_OFF)
    assert ends_off == off
    assert none == []


INTRA = {
    "cap-partition-intra-queue": (
        {"low": 364490, "plain": 107050, "high": 162970},
        {"low": 209490, "plain": 107050, "high": 267970},
        {"node1": 4, "node2": 5},
    ),
    "cap-partition-intra-userlimit": (
        {"alice": 317050, "alice_gpu": 335490, "bob_gpu": 133970, "dave": 110530},
        {"alice": 209050, "alice_gpu": 209490, "bob_gpu": 227970, "dave": 227530},
        {"node1": 3, "node2": 3, "node3": 3, "node4": 3},
    ),
}


@pytest.mark.parametrize("case", list(INTRA))
def test_intra_queue_preemption_acts_in_each_partition(tmp_path, capsys, case):
    on, off, per_node = INTRA[case]
    ends, preempted = _run(case, tmp_path / "on")
    assert ends == on
    nodes: dict[str, int] = {}
    for r in preempted:
        nodes[r["node"]] = nodes.get(r["node"], 0) + 1
    assert nodes == per_node
    ends_off, none = _run(case, tmp_path / "off", "-D", INTRA_OFF)
    assert ends_off == off
    assert none == []


def test_borrowed_containers_go_newest_first(tmp_path, capsys):
    _, preempted = _run("cap-partition-reclaim-order", tmp_path)
    order = [r["container"] for r in preempted]
    # application 2 (late) is first in a's scheduling order, yet its
    # containers on spare are the newest: they go before application 1's.
    assert order[:3] == [
        "container_0_0002_01_000014",
        "container_0_0002_01_000013",
        "container_0_0001_01_000010",
    ]

"""Intra-queue preemption, replayed through `emu sls` from the fidelity
cases cap-intra-queue-priority and cap-intra-queue-userlimit (one queue
over a 32-container cluster; tests/hadoop/test_intra_queue_vs_hadoop.py
replays them with Hadoop's CapacityScheduler and compares).

- priority: alice's priority-1 job holds 29 containers when her priority-5
  job arrives at 30 s and gets the last 3; with `priority_first` the
  policy takes the low job's containers (3 a round, the round's 10 %), and
  the high job finishes at 92 s instead of 157 s, the low one later.
- userlimit: the same shape with two users at minimum-user-limit-percent
  50: bob's job takes alice's containers above her user limit.
- after-cross-queue: queue a first takes its guarantee back from b through
  the cross-queue selector (which runs first and spends each round's
  budget), then bob, joining a, takes alice's containers above her limit.
- fair: three users, five jobs of mixed priorities under the fair ordering
  policy; which of alice's apps gives up containers follows the usage the
  policy last sorted them by (an allocation from a reservation does not
  re-sort), as Hadoop's does.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from emu.cli import main
from tests.fidelity_runs import sls_argv

INTRA = "yarn.resourcemanager.monitor.capacity.preemption.intra-queue-preemption."
QUEUE = "yarn.scheduler.capacity.root.default."

PRIORITY_ON = {"low_1": 290050, "high_1": 92490}
PRIORITY_OFF = {"low_1": 209050, "high_1": 157490}
USERLIMIT_ON = {"alice_1": 290050, "bob_1": 92490}
USERLIMIT_OFF = {"alice_1": 209050, "bob_1": 157490}
TWO_QUEUES_ON = {"carol_1": 604050, "alice_1": 419050, "bob_1": 217530}
TWO_QUEUES_OFF = {"carol_1": 603050, "alice_1": 455050, "bob_1": 254530}
FAIR_ON = {"a1": 378050, "a2": 327050, "b1": 228530, "c1": 139970, "b2": 189050}
FAIR_OFF = {"a1": 205050, "a2": 353050, "b1": 262530, "c1": 201970, "b2": 236050}


def _ends(case: str, out: Path, **props: str) -> dict[str, int]:
    # The ends here were worked out with YARN's AM and NM timing (emu.timing):
    # these tests are about the scheduler, so they replay with it, not SLS's.
    defines = ["--timing=yarn", *(f"-D{name}={value}" for name, value in props.items())]
    assert main(sls_argv(case, out, *defines)) == 0
    with (out / "jobruntime.csv").open() as f:
        return {r["JobID"]: int(r["simulate_end_time"]) for r in csv.DictReader(f)}


@pytest.mark.parametrize(
    ("case", "on", "off"),
    [
        ("cap-intra-queue-priority", PRIORITY_ON, PRIORITY_OFF),
        ("cap-intra-queue-userlimit", USERLIMIT_ON, USERLIMIT_OFF),
        ("cap-intra-queue-after-cross-queue", TWO_QUEUES_ON, TWO_QUEUES_OFF),
        ("cap-intra-queue-fair", FAIR_ON, FAIR_OFF),
    ],
)
def test_the_starved_app_finishes_first_only_with_intra_queue_preemption(
    tmp_path, capsys, case, on, off
):
    assert _ends(case, tmp_path / "on") == on
    assert _ends(case, tmp_path / "off", **{INTRA + "enabled": "false"}) == off


@pytest.mark.parametrize(
    "case", ["cap-intra-queue-priority", "cap-intra-queue-userlimit"], ids=["priority", "userlimit"]
)
def test_a_queue_that_disables_it_keeps_its_containers(tmp_path, capsys, case):
    off = PRIORITY_OFF if case == "cap-intra-queue-priority" else USERLIMIT_OFF
    props = {QUEUE + "intra-queue-preemption.disable_preemption": "true"}
    assert _ends(case, tmp_path / "queue", **props) == off
    # A queue cross-queue preemption may not touch is not touched within either.
    assert _ends(case, tmp_path / "cross", **{QUEUE + "disable_preemption": "true"}) == off


def test_the_disable_is_inherited_from_the_parent(tmp_path, capsys):
    props = {"yarn.scheduler.capacity.root.intra-queue-preemption.disable_preemption": "true"}
    assert _ends("cap-intra-queue-userlimit", tmp_path, **props) == USERLIMIT_OFF


def test_userlimit_first_spares_a_user_at_the_user_limit(tmp_path, capsys):
    """One user: under the default order the low job's containers would
    take alice below her user limit, so the selector skips them all."""
    props = {INTRA + "preemption-order-policy": "userlimit_first"}
    assert _ends("cap-intra-queue-priority", tmp_path, **props) == PRIORITY_OFF


def test_a_queue_below_the_minimum_threshold_is_not_looked_at(tmp_path, capsys):
    props = {INTRA + "minimum-threshold": "1.01"}  # the queue uses exactly its capacity
    assert _ends("cap-intra-queue-userlimit", tmp_path, **props) == USERLIMIT_OFF


def test_a_bad_order_policy_is_one_error(tmp_path, capsys):
    code = main(
        sls_argv(
            "cap-intra-queue-userlimit",
            tmp_path,
            "-D",
            INTRA + "preemption-order-policy=newest_first",
        )
    )
    assert code == 2
    err = capsys.readouterr().err
    assert INTRA + "preemption-order-policy" in err
    assert "userlimit_first or priority_first" in err

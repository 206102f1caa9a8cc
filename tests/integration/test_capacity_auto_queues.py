"""Auto-created queues in whole replays, from the fidelity cases
cap-auto-queues-legacy and cap-auto-queues-v2 (scenarios/fidelity/cases/;
tests/hadoop/test_auto_queues_vs_hadoop.py replays them with Hadoop's own
CapacityScheduler and compares jobruntime.csv).

- legacy: every job is submitted to default and u:%user:users.%user puts
  it in root.users.<user>, created on the user's first job from
  leaf-queue-template (30 % of users, at most 40 %, user-limit-factor 1);
  dave's is the fourth and starts with no guarantee.
- v2: u:%user:users.%primary_group.%user creates a parent per group and a
  leaf per user (weights 1w); AutoCreatedQueueDeletionPolicy removes the
  eng queues once idle for 30 s, and bob's sci queue then holds all of
  users, so bob's job ends earlier than without the policy.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from tests.integration.conftest import sls_case

# The ends below were worked out with YARN's AM and NM timing (emu.timing):
# these tests are about the scheduler, so they replay with it, not SLS's.
YARN_TIMING = "--timing=yarn"


def _queues(out: Path) -> dict[str, str]:
    jobs = json.loads((out / "summary.json").read_text())["jobs"]
    return {j["job_id"]: j["queue"] for j in jobs}


def _ends(out: Path) -> dict[str, int]:
    with (out / "jobruntime.csv").open() as f:
        return {r["JobID"]: int(r["simulate_end_time"]) for r in csv.DictReader(f)}


def test_legacy_jobs_run_in_queues_created_from_the_template(tmp_path, capsys):
    assert sls_case("cap-auto-queues-legacy", tmp_path, YARN_TIMING) == 0
    assert _queues(tmp_path) == {
        "alice_1": "root.users.alice",
        "bob_1": "root.users.bob",
        "carol_1": "root.users.carol",
        "dave_1": "root.users.dave",
        "alice_2": "root.users.alice",
    }
    # as Hadoop's CapacityScheduler: alice's 30 maps are held to her
    # queue's 24 % guarantee (user-limit-factor 1); her second job waits
    # for the first; dave, without a guarantee, may use his queue's maximum
    assert _ends(tmp_path) == {
        "alice_1": 126050,
        "bob_1": 97050,
        "carol_1": 69050,
        "dave_1": 68970,
        "alice_2": 169490,
    }


def test_legacy_template_limits_decide_finishing_times(tmp_path, capsys):
    """A template user-limit-factor of 3 lets each user grow from the queue's
    24 % guarantee to its 40 % maximum."""
    wide = "yarn.scheduler.capacity.root.users.leaf-queue-template.user-limit-factor=3"
    assert sls_case("cap-auto-queues-legacy", tmp_path, YARN_TIMING, "-D", wide) == 0
    assert _ends(tmp_path)["alice_1"] < 126050 - 20000


def test_blocked_headroom_comes_off_the_parents_capped_limit(tmp_path, capsys):
    """users capped at 90 %, leaves at user-limit-factor 3: alice's and bob's
    queues stop at their 40 % maximum with under a container of headroom,
    which ParentQueue takes off its limit after capping it by its own
    maximum, so dave's AM waits (as Hadoop's CapacityScheduler)."""
    extra = (
        "-D",
        "yarn.scheduler.capacity.root.users.leaf-queue-template.user-limit-factor=3",
        "-D",
        "yarn.scheduler.capacity.root.users.maximum-capacity=90",
    )
    assert sls_case("cap-auto-queues-legacy", tmp_path, YARN_TIMING, *extra) == 0
    assert _ends(tmp_path) == {
        "alice_1": 125050,
        "bob_1": 96050,
        "carol_1": 69050,
        "dave_1": 89970,
        "alice_2": 149490,
    }


def test_v2_jobs_run_two_levels_deep_and_idle_queues_go(tmp_path, capsys):
    assert sls_case("cap-auto-queues-v2", tmp_path / "on", YARN_TIMING) == 0
    assert _queues(tmp_path / "on") == {
        "alice_1": "root.users.eng.alice",
        "bob_1": "root.users.sci.bob",
        "carol_1": "root.users.eng.carol",
    }
    ends = _ends(tmp_path / "on")
    assert ends == {"alice_1": 70050, "bob_1": 212050, "carol_1": 46050}  # as Hadoop's
    off = "yarn.resourcemanager.scheduler.monitor.enable=false"
    assert sls_case("cap-auto-queues-v2", tmp_path / "off", YARN_TIMING, "-D", off) == 0
    kept = _ends(tmp_path / "off")
    assert kept["bob_1"] > ends["bob_1"]  # with eng kept, sci keeps half of users
    assert {k: v for k, v in kept.items() if k != "bob_1"} == {"alice_1": 70050, "carol_1": 46050}


def test_the_queue_management_policy_is_refused_by_name(tmp_path, capsys):
    """QueueManagementDynamicEditPolicy would re-size legacy leaves over
    time; emu's port does not run it, so naming it is refused."""
    policies = (
        "yarn.resourcemanager.scheduler.monitor.policies=org.apache.hadoop.yarn.server."
        "resourcemanager.scheduler.capacity.QueueManagementDynamicEditPolicy"
    )
    assert sls_case("cap-auto-queues-legacy", tmp_path, YARN_TIMING, "-D", policies) == 2
    err = capsys.readouterr().err
    assert "does not emulate QueueManagementDynamicEditPolicy" in err

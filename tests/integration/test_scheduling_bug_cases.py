"""Two scheduling cases where emu's port once decided differently from
Hadoop's schedulers, replayed through `emu sls` from their fidelity cases
(scenarios/fidelity/cases/; tests/hadoop/test_bug_cases.py replays the same
cases with Hadoop's own schedulers and compares jobruntime.csv).

- cap-impossible-ask: `yarn.scheduler.maximum-allocation-mb=131072` on
  16 GB nodes. Queue a's job asks for 64 GB containers: YARN caps the
  largest allocation at the largest registered node
  (ClusterNodeTracker.getMaxAllowedAllocation), refuses the ask and the job
  fails with that reason; queue b's 1 GB job runs as if alone.
- fair-preemption-spares-am: only a's 1 GB AM container could be preempted
  without putting a below its fair share, but the node's free room is held
  by b's reservation (FSSchedulerNode.getTotalReserved), so no set of
  containers there fits b's ask: nothing is preempted and a's job keeps its
  first attempt.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from tests.integration.conftest import sls_case

# The ends below were worked out with YARN's AM and NM timing (emu.timing):
# these tests are about the scheduler, so they replay with it, not SLS's.
YARN_TIMING = "--timing=yarn"


def _jobs(out: Path) -> dict[str, dict]:
    return {j["job_id"]: j for j in json.loads((out / "summary.json").read_text())["jobs"]}


def _ends(out: Path) -> dict[str, int]:
    with (out / "jobruntime.csv").open() as f:
        return {r["JobID"]: int(r["simulate_end_time"]) for r in csv.DictReader(f)}


def test_an_ask_larger_than_every_node_fails_its_job_and_starves_no_one(tmp_path, capsys):
    assert sls_case("cap-impossible-ask", tmp_path, YARN_TIMING) == 1  # a job failed
    jobs = _jobs(tmp_path)
    big, small = jobs["a_big"], jobs["b_small"]
    assert big["final_status"] == "FAILED"
    assert "maximum allowed allocation=<memory:16384, vCores:4>" in big["diagnostics"]
    assert "configured maximum allocation=<memory:131072, vCores:4>" in big["diagnostics"]
    assert small["final_status"] == "SUCCEEDED"
    assert _ends(tmp_path) == {"a_big": 1490, "b_small": 18490}  # as Hadoop's CapacityScheduler
    assert "emu: error: the run cannot make progress" not in capsys.readouterr().err


def test_a_reserved_node_is_no_room_to_preempt_an_am_for(tmp_path):
    assert sls_case("fair-preemption-spares-am", tmp_path, YARN_TIMING) == 0
    jobs = _jobs(tmp_path)
    assert jobs["a_1"]["attempts"] == 1
    assert _ends(tmp_path) == {"a_1": 244530, "b_1": 184050}  # as Hadoop's FairScheduler

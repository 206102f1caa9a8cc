"""Hadoop's own SLS, end to end, on a two-job trace: every job of the trace
finishes in SLS's jobruntime.csv with plausible simulated times. Needs a JDK
and Maven (or hadoop-sls already fetched); skips without them unless
EMU_REQUIRE_HADOOP is set. About 40 s of wall clock: SLS runs in real time."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from emu.fidelity import sls_oracle as so
from emu.fidelity.compare import read_jobruntime
from emu.fidelity.suite import SCHEDULER, Case
from tests.hadoop.conftest import TEST_RES

pytestmark = pytest.mark.oracle

CAPACITY = "org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler"


@pytest.fixture(scope="module")
def sls_available() -> None:
    why = None
    for tool in ("java", "javac"):
        if shutil.which(tool) is None and not os.environ.get("JAVA_HOME"):
            why = f"no {tool}: SLS needs a JDK"
    if why is None and shutil.which("mvn") is None:
        try:
            so.classpath(fetch=False)
        except so.SlsUnavailable as e:
            why = str(e)
    if why is not None:
        if os.environ.get("EMU_REQUIRE_HADOOP"):
            pytest.fail(f"EMU_REQUIRE_HADOOP is set but SLS cannot run: {why}")
        pytest.skip(f"Hadoop's SLS cannot run here: {why}")


def _task(host: str, start: int, end: int) -> dict[str, object]:
    return {
        "container.host": host,
        "container.start.ms": start,
        "container.end.ms": end,
        "container.priority": 20,
        "container.type": "map",
    }


def _job(job_id: str, queue: str, start: int, end: int, tasks: list[dict[str, object]]) -> dict:
    return {
        "am.type": "mapreduce",
        "job.start.ms": start,
        "job.end.ms": end,
        "job.queue.name": queue,
        "job.id": job_id,
        "job.user": "default",
        "job.tasks": tasks,
    }


def test_two_jobs_through_sls(tmp_path: Path, sls_available: None) -> None:
    trace = tmp_path / "trace.json"
    jobs = [
        _job("job_1", "sls_queue_2", 0, 6000, [_task("/rack1/node1", 1000, 4000)]),
        _job(
            "job_2",
            "sls_queue_3",
            2000,
            8000,
            # `container.count` is no resource type: SLS leaves it out, as emu's
            # reader does (tests/integration/test_sls_replay.py), and runs the task.
            [{**_task("/rack1/node1", 3000, 6000), "container.count": 3},
             _task("/rack1/node2", 3000, 5000)],
        ),
    ]  # fmt: skip
    trace.write_text("\n".join(json.dumps(j, indent=1) for j in jobs) + "\n")
    nodes = tmp_path / "nodes.json"
    nodes.write_text(json.dumps({"rack": "rack1", "nodes": [{"node": "node1"}, {"node": "node2"}]}))
    case = Case(
        name="two-jobs",
        what="two short jobs",
        traces=(trace,),
        nodes=nodes,
        conf=TEST_RES,
        properties={SCHEDULER: CAPACITY},
    )
    run = so.run_sls(case, tmp_path / "sls", timeout_s=150, expected_jobs=2)
    assert run.ok, f"{run.status}: {run.reason}"
    assert run.jobruntime is not None and run.raw_jobruntime is not None
    times = read_jobruntime(run.jobruntime)
    assert sorted(times) == ["job_1", "job_2"], run.jobruntime.read_text()
    for job, start in (("job_1", 0), ("job_2", 2000)):
        t = times[job]
        # Submitted on time (SLS's task runner is late by tens of ms at most),
        # and running at least the AM's heartbeat plus its longest task.
        assert start <= t.start_ms < start + 2000, (job, t)
        assert t.end_ms >= t.start_ms + 3000, (job, t)
        assert t.end_ms < start + 60_000, (job, t)
    assert so.compare_jobruntime(run.jobruntime, run.jobruntime).identical
    assert run.wall_s > 0 and run.exit_code == 0

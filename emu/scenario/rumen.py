"""Rumen job-history traces (`--tracetype=RUMEN`), read as SLS reads them.

A Rumen file (e.g. SLS's `2jobs2min-rumen-jh.json`) is a stream of
concatenated `LoggedJob` JSON objects, optionally gzip-compressed. SLS keeps
little of each job:

- `jobID`, `user` (default `default`), `queue` (default `default`);
- `submitTime` and `finishTime`, in epoch ms, made relative to the first
  job's `submitTime` (`job.start.ms = submitTime - baseline`); a job that
  would start before 0 starts at 0 and keeps its length;
- one container per map and per reduce task, from the task's *last* attempt:
  its `hostName` (`/rack/host`) as the locality preference and
  `finishTime - startTime` as the duration; maps at priority 20, reduces at
  10; the container size is the default container size (Rumen's
  `jobMapMB`/`jobReduceMB` are ignored, as SLS ignores them);
- the AM is a `mapreduce` AM with the default AM size.

`launchTime`, setup/cleanup tasks (`otherTasks`) and counters are ignored.
A negative `submitTime` is refused: it is no epoch time, and as the
baseline it would put every other job decades later. Where SLS would log
and drop a job (a task without attempts, an attempt lasting <= 0 ms), this
reader raises InputError naming the job and task.

Current SLS (AMDefinitionRumen) passes a baseline of 0 for every job, which
makes every job start at 0; this reader keeps the behaviour of the SLSRunner
that introduced Rumen replay and of RumenToSLSConverter, where jobs keep
their relative submission times.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from emu.resources import Resource
from emu.scenario.sls import (
    DEFAULT_QUEUE,
    DEFAULT_USER,
    MAP_PRIORITY,
    REDUCE_PRIORITY,
    JsonFields,
    TraceNodes,
    iter_json_objects,
    sort_jobs,
)
from emu.workload import JobSpec, TaskSpec, Workload


def read_rumen(
    paths: Sequence[str | os.PathLike[str]], *, container_default: Resource, am_default: Resource
) -> Workload:
    """Read Rumen traces into a Workload (one `mapreduce` job per Rumen job).

    Submission times are relative to the first job of the first file, so
    several files share one timeline, as SLS replays them.
    """
    nodes = TraceNodes()
    jobs: list[JobSpec] = []
    seen: set[str] = set()
    baseline: int | None = None
    for raw_path in paths:
        path = os.fspath(raw_path)
        for number, (line, obj) in enumerate(iter_json_objects(path), start=1):
            job = JsonFields(path, line, obj, f"job {number}")
            job_id = job.string("jobID", "")
            if not job_id:
                raise job.error("jobID", "missing")
            job.what = f"job {number} ({job_id})"
            if job_id in seen:
                raise job.error("jobID", "duplicate job id")
            seen.add(job_id)
            if not job.has("submitTime"):
                raise job.error("submitTime", "missing")
            submit = job.integer("submitTime", 0)
            if submit < 0:
                raise job.error("submitTime", f"{submit} is negative: Rumen times are epoch ms")
            finish = job.integer("finishTime", submit)
            if finish < submit and finish >= 0:
                raise job.error(
                    "finishTime", f"{finish} is before submitTime {submit} ({finish - submit} ms)"
                )
            if baseline is None:
                baseline = submit
            start_ms, end_ms = submit - baseline, finish - baseline
            if start_ms < 0:
                start_ms, end_ms = 0, end_ms - start_ms
            tasks = [
                *_tasks(job, "mapTasks", "map", MAP_PRIORITY, nodes, container_default),
                *_tasks(job, "reduceTasks", "reduce", REDUCE_PRIORITY, nodes, container_default),
            ]
            params = {"am_type": "mapreduce"}
            if job.has("jobName"):
                params["job_name"] = job.string("jobName", "")
            jobs.append(
                JobSpec(
                    job_id=job_id,
                    am_type="mapreduce",
                    submit_ms=start_ms,
                    end_ms=end_ms,
                    queue=job.string("queue", DEFAULT_QUEUE),
                    user=job.string("user", DEFAULT_USER),
                    am_resource=am_default,
                    tasks=tuple(tasks),
                    params=params,
                )
            )
    return Workload(jobs=sort_jobs(jobs), trace_nodes=nodes.nodes)


def _tasks(
    job: JsonFields,
    key: str,
    task_type: str,
    priority: int,
    nodes: TraceNodes,
    resource: Resource,
) -> list[TaskSpec]:
    out = []
    for i, raw_task in enumerate(job.array(key) or []):
        task = job.child(raw_task, f"{key}[{i}]")
        attempts = task.array("attempts")
        if not attempts:
            raise task.error("attempts", f"no attempt for this {task_type} task")
        attempt = task.child(attempts[-1], f"attempts[{len(attempts) - 1}]")
        host_path = attempt.string("hostName", "")
        if not host_path:
            raise attempt.error("hostName", "missing")
        for time_key in ("startTime", "finishTime"):
            if not attempt.has(time_key):
                raise attempt.error(time_key, "missing")
        duration = attempt.integer("finishTime", 0) - attempt.integer("startTime", 0)
        if duration <= 0:
            raise attempt.error("finishTime", f"attempt duration must be > 0 ms, got {duration}")
        out.append(
            TaskSpec(
                task_type=task_type,
                priority=priority,
                duration_ms=duration,
                resource=resource,
                hosts=(nodes.add(host_path),),
            )
        )
    return out

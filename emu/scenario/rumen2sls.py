"""`rumen2sls`: convert a Rumen trace to SLS's jobs and nodes files.

Byte-for-byte what Hadoop's `RumenToSLSConverter` (`rumen2sls.sh`) writes, so
files made here and files made by Hadoop are interchangeable:

- `<prefix>-jobs.json`: one SLS job per Rumen job, each written with
  Jackson's default pretty printer and a newline. Times are relative to the
  first job's `submitTime`; a job that would start before 0 is moved to 0 with
  its tasks. Every attempt of every task becomes a container (not only the
  last attempt, unlike a RUMEN replay), maps at priority 20, reduces at 10.
- `<prefix>-nodes.json`: one object per rack, racks and hosts sorted, rack
  names without their leading `/`.

Like the Java tool, it refuses to overwrite existing output. Unlike it, a
job without `queue` or `user` gets `default` (the Java tool stops with a
NullPointerException), matching what a RUMEN replay does.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from emu import outdir
from emu.errors import InputError
from emu.scenario.sls import (
    DEFAULT_QUEUE,
    DEFAULT_USER,
    MAP_PRIORITY,
    REDUCE_PRIORITY,
    JsonFields,
    iter_json_objects,
    split_host_path,
)


def convert(
    rumen_path: str | os.PathLike[str], output_dir: str | os.PathLike[str], prefix: str = "sls"
) -> tuple[Path, Path]:
    """Write `<prefix>-jobs.json` and `<prefix>-nodes.json` into `output_dir`
    (created if needed) from a Rumen trace; returns the two paths.

    Raises InputError for a bad Rumen file or when an output file exists.
    """
    out = Path(output_dir)
    jobs_path, nodes_path = out / f"{prefix}-jobs.json", out / f"{prefix}-nodes.json"
    for target in (jobs_path, nodes_path):
        if target.exists():
            raise InputError(str(target), None, "output file already exists")

    path = os.fspath(rumen_path)
    racks: dict[str, set[str]] = {}
    baseline: int | None = None
    jobs_text = []
    for number, (line, obj) in enumerate(iter_json_objects(path), start=1):
        job = JsonFields(path, line, obj, f"job {number}")
        for key in ("jobID", "submitTime", "finishTime"):
            if not job.has(key):
                raise job.error(key, "missing")
        if baseline is None:
            baseline = job.integer("submitTime", 0)
        jobs_text.append(jackson_pretty(_sls_job(job, baseline, racks)) + "\n")
    nodes_text = [
        jackson_pretty({"rack": rack, "nodes": [{"node": h} for h in sorted(racks[rack])]}) + "\n"
        for rack in sorted(racks)
    ]

    outdir.make(out)
    try:
        jobs_path.write_text("".join(jobs_text), encoding="utf-8")
        nodes_path.write_text("".join(nodes_text), encoding="utf-8")
    except OSError as e:
        jobs_path.unlink(missing_ok=True)
        raise InputError("--output-dir", str(out), f"cannot write: {e.strerror}") from None
    return jobs_path, nodes_path


def _sls_job(job: JsonFields, baseline: int, racks: dict[str, set[str]]) -> dict[str, Any]:
    """One Rumen job as an SLS job, times relative to the first job's
    submission (`baseline`); its hosts are added to `racks`.

    A job submitted before the baseline is moved to 0, with its tasks shifted
    as much, as SLS's converter does.
    """
    start = job.integer("submitTime", 0) - baseline
    finish = job.integer("finishTime", 0) - baseline
    offset = 0
    if start < 0:
        offset, finish, start = -start, finish - start, 0
    return {
        "am.type": "mapreduce",
        "job.start.ms": start,
        "job.end.ms": finish,
        "job.queue.name": job.string("queue", DEFAULT_QUEUE),
        "job.id": job.string("jobID", ""),
        "job.user": job.string("user", DEFAULT_USER),
        "job.tasks": _sls_tasks(job, offset - baseline, racks),
    }


def _sls_tasks(job: JsonFields, shift: int, racks: dict[str, set[str]]) -> list[dict[str, Any]]:
    """Every attempt of the job's map then reduce tasks as an SLS container,
    its times moved by `shift`."""
    tasks = []
    for key, task_type, priority in (
        ("mapTasks", "map", MAP_PRIORITY),
        ("reduceTasks", "reduce", REDUCE_PRIORITY),
    ):
        for i, raw_task in enumerate(job.array(key) or []):
            task = job.child(raw_task, f"{key}[{i}]")
            for j, raw_attempt in enumerate(task.array("attempts") or []):
                attempt = task.child(raw_attempt, f"attempts[{j}]")
                for field in ("hostName", "startTime", "finishTime"):
                    if not attempt.has(field):
                        raise attempt.error(field, "missing")
                host_path = attempt.string("hostName", "")
                rack, host = split_host_path(host_path)
                racks.setdefault(rack.lstrip("/"), set()).add(host)
                tasks.append(
                    {
                        "container.host": host_path,
                        "container.start.ms": attempt.integer("startTime", 0) + shift,
                        "container.end.ms": attempt.integer("finishTime", 0) + shift,
                        "container.priority": priority,
                        "container.type": task_type,
                    }
                )
    return tasks


def jackson_pretty(value: Any, depth: int = 0) -> str:
    """`value` as Jackson's `DefaultPrettyPrinter` writes it: objects one
    entry per line with two-space indents and `" : "`, arrays inline as
    `[ a, b ]` (objects inside still break lines), empties as `{ }` / `[ ]`.
    `depth` is the number of enclosing objects."""
    if isinstance(value, dict):
        if not value:
            return "{ }"
        inner = "  " * (depth + 1)
        entries = ",\n".join(
            f"{inner}{_string(str(k))} : {jackson_pretty(v, depth + 1)}" for k, v in value.items()
        )
        return "{\n" + entries + "\n" + "  " * depth + "}"
    if isinstance(value, list):
        if not value:
            return "[ ]"
        return "[ " + ", ".join(jackson_pretty(v, depth) for v in value) + " ]"
    if isinstance(value, str):
        return _string(value)
    return json.dumps(value)


def _string(s: str) -> str:
    # Jackson escapes quotes, backslashes and control characters only.
    return json.dumps(s, ensure_ascii=False)

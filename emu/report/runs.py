"""Reading run outputs for `emu report`: one `RunData` per output directory.

An emu output directory (`emu run -o`, `emu sls --output-dir`) has
`summary.json`: its jobs (wait, turnaround, queue) and its `timeline`
(utilization, per-queue allocation against fair share or guarantee, Jain's
index; see `emu.metrics.timeline`). A directory from Hadoop's SLS, or a
`realtimetrack.json` file itself, gives what SLS tracks: cluster and
per-queue allocation per second, no jobs and no shares. A realtimetrack.json
with node-label partitions (emu writes `partition.<p>.` gauges only for a
labelled cluster) adds each partition's allocation over time and its
queues' there. Anything else is an input error naming the path.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from emu.errors import InputError

GB = 1024.0


@dataclass
class RunData:
    """One run, in the units the report draws (seconds, GB, percent)."""

    name: str
    source: str
    scheduler: str = ""
    t_s: list[float] = field(default_factory=list)
    memory_pct: list[float] = field(default_factory=list)
    vcores_pct: list[float | None] = field(default_factory=list)
    queues: dict[str, dict[str, list[float] | None]] = field(default_factory=dict)
    jain: list[float | None] = field(default_factory=list)
    jobs: list[dict[str, Any]] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)
    partition_t_s: list[float] = field(default_factory=list)
    """The seconds of realtimetrack.json's records, which `partitions` follow."""
    partitions: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per node-label partition (empty: the run had none): `memory_pct`,
    `vcores_pct` (allocated / the partition's size), `allocated_gb`,
    `size_gb`, and `queues`: each leaf's allocated GB there."""

    def stats(self) -> dict[str, Any]:
        """The side-by-side table's row."""
        turnaround = sorted(j["turnaround_s"] for j in self.jobs if j["turnaround_s"] is not None)
        waits = [j["wait_s"] for j in self.jobs if j["wait_s"] is not None]
        jain = [x for x in self.jain if x is not None]
        util = (self.summary.get("cluster") or {}).get("utilization") or {}
        return {
            "run": self.name,
            "scheduler": self.scheduler or "?",
            "jobs finished": sum(1 for j in self.jobs if j["state"] == "FINISHED"),
            "jobs": len(self.jobs),
            "makespan s": _r(self.summary["simulated_ms"] / 1000)
            if "simulated_ms" in self.summary
            else (_r(self.t_s[-1]) if self.t_s else None),
            "turnaround mean s": _r(sum(turnaround) / len(turnaround)) if turnaround else None,
            "turnaround p50 s": _r(_percentile(turnaround, 0.5)) if turnaround else None,
            "turnaround p90 s": _r(_percentile(turnaround, 0.9)) if turnaround else None,
            "wait mean s": _r(sum(waits) / len(waits)) if waits else None,
            "wait max s": _r(max(waits)) if waits else None,
            "memory utilization %": (
                _r(100 * util["memory"]) if "memory" in util else _mean(self.memory_pct)
            ),
            "vcores utilization %": _r(100 * util["vcores"]) if "vcores" in util else None,
            "Jain index mean": _r(sum(jain) / len(jain), 3) if jain else None,
        }

    def wait_by_queue(self) -> dict[str, float]:
        waits: dict[str, list[float]] = {}
        for j in self.jobs:
            if j["wait_s"] is not None:
                waits.setdefault(j["queue"], []).append(j["wait_s"])
        return {q: _r(sum(v) / len(v)) for q, v in sorted(waits.items())}


def _r(x: float, digits: int = 1) -> float:
    return round(x, digits)


def _mean(values: list[float]) -> float | None:
    return _r(sum(values) / len(values)) if values else None


def _percentile(values: list[float], q: float) -> float:
    """The same nearest-rank rule summary.json's percentiles use."""
    k = min(len(values) - 1, max(0, round(q * (len(values) - 1))))
    return values[k]


def load(path: str) -> RunData:
    """One run from an output directory or a realtimetrack.json file."""
    p = Path(path)
    if p.is_file():
        return _from_realtimetrack(p, p.parent.name or p.name)
    if not p.is_dir():
        raise InputError(path, None, "no such output directory or file")
    summary, track = p / "summary.json", p / "realtimetrack.json"
    if summary.is_file():
        run = _from_summary(summary, p.name)
        if track.is_file():
            _partitions_from(track, run)
        return run
    if track.is_file():
        return _from_realtimetrack(track, p.name)
    raise InputError(path, None, "holds neither summary.json nor realtimetrack.json")


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(str(path), None, f"cannot read: {e}") from None
    except json.JSONDecodeError as e:
        raise InputError(str(path), f"line {e.lineno}", f"not JSON: {e.msg}") from None


def _from_summary(path: Path, name: str) -> RunData:
    data = _read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("jobs"), list):
        raise InputError(str(path), "jobs", "not an emu summary.json (no jobs list)")
    run = RunData(name=name, source="emu", summary=data)
    for k, j in enumerate(data["jobs"]):
        try:
            run.jobs.append(
                {
                    "job": j["job_id"],
                    "queue": j["queue"],
                    "state": j["state"],
                    "wait_s": None if j["wait_ms"] is None else j["wait_ms"] / 1000,
                    "turnaround_s": (
                        None if j["turnaround_ms"] is None else j["turnaround_ms"] / 1000
                    ),
                    "why": _reasons(j.get("why_pending")),
                }
            )
        except (KeyError, TypeError) as e:
            raise InputError(str(path), f"jobs[{k}]", f"missing or bad field {e}") from None
    tl = data.get("timeline")
    if isinstance(tl, dict):
        run.scheduler = tl.get("scheduler", "")
        run.t_s = [t / 1000 for t in tl["t_ms"]]
        run.memory_pct = [
            _r(100 * u / t, 3) if t else 0.0
            for u, t in zip(tl["memory_used"], tl["memory_total"], strict=True)
        ]
        run.vcores_pct = [
            _r(100 * u / t, 3) if t else 0.0
            for u, t in zip(tl["vcores_used"], tl["vcores_total"], strict=True)
        ]
        run.jain = list(tl["jain_dominant_share"])
        for q, s in tl["queues"].items():
            run.queues[q] = {
                "allocated_gb": [m / GB for m in s["memory"]],
                "share_gb": [m / GB for m in s["share_memory"]],
            }
    return run


def _reasons(why: Any) -> list[str]:
    """Why a job waited to start: its distinct reasons, first seen first."""
    if not isinstance(why, dict):
        return []
    seen: list[str] = []
    for entry in why.get("before_start") or []:
        if isinstance(entry, list) and len(entry) >= 2 and entry[1] not in seen:
            seen.append(str(entry[1]))
    return seen


def _read_records(path: Path, text: str) -> Any:
    """realtimetrack.json's records. SLS writes the file while running, so
    an unfinished one (no closing bracket) is read up to its last whole record."""
    try:
        records = json.loads(text)
    except json.JSONDecodeError:
        try:
            records = json.loads(text.rstrip(",") + "]")
        except json.JSONDecodeError as e:
            raise InputError(str(path), f"line {e.lineno}", f"not JSON: {e.msg}") from None
    if not isinstance(records, list) or not records or not isinstance(records[0], dict):
        raise InputError(str(path), None, "not a realtimetrack.json (a JSON array of records)")
    return records


def _from_realtimetrack(path: Path, name: str) -> RunData:
    """Hadoop SLS's realtimetrack.json (or emu's): a JSON array of
    per-second records (memory in GB)."""
    text = path.read_text(errors="replace").strip()
    records = _read_records(path, text)
    run = RunData(name=name, source="sls realtimetrack.json")
    t0 = float(records[0].get("time", 0))
    queue_keys = sorted(
        {
            k
            for r in records
            for k in r
            if k.startswith("queue.") and k.endswith(".allocated.memory")
        }
    )
    for r in records:
        alloc = float(r.get("cluster.allocated.memory", 0))
        avail = float(r.get("cluster.available.memory", 0))
        alloc_vc = float(r.get("cluster.allocated.vcores", 0))
        avail_vc = float(r.get("cluster.available.vcores", 0))
        run.t_s.append((float(r.get("time", 0)) - t0) / 1000)
        run.memory_pct.append(_r(100 * alloc / (alloc + avail), 3) if alloc + avail else 0.0)
        run.vcores_pct.append(
            _r(100 * alloc_vc / (alloc_vc + avail_vc), 3) if alloc_vc + avail_vc else 0.0
        )
    for key in queue_keys:
        q = key[len("queue.") : -len(".allocated.memory")]
        run.queues[q] = {
            "allocated_gb": [float(r.get(key, 0)) for r in records],
            "share_gb": None,
        }
    if PARTITION_MARK in text:
        _partition_series(records, run)
    return run


PARTITION_MARK = '"partition.'
"""In a realtimetrack.json with node-label partitions (emu writes
`partition.<p>.cluster.allocated.memory` and the like only then)."""


def _partitions_from(path: Path, run: RunData) -> None:
    """The per-partition series of an emu run's realtimetrack.json, if it has any."""
    try:
        text = path.read_text(errors="replace").strip()
    except OSError as e:
        raise InputError(str(path), None, f"cannot read: {e}") from None
    if PARTITION_MARK in text:
        _partition_series(_read_records(path, text), run)


def _partition_series(records: list[dict[str, Any]], run: RunData) -> None:
    """`run.partitions` from the records' `partition.<p>.` gauges (GB and vcores)."""
    suffix = ".cluster.allocated.memory"
    names = sorted(
        {
            k[len("partition.") : -len(suffix)]
            for k in records[0]
            if k.startswith("partition.") and k.endswith(suffix)
        }
    )
    if not names:
        return
    t0 = float(records[0].get("time", 0))
    run.partition_t_s = [(float(r.get("time", 0)) - t0) / 1000 for r in records]
    for p in names:
        base = f"partition.{p}."
        alloc = [float(r.get(base + "cluster.allocated.memory", 0)) for r in records]
        avail = [float(r.get(base + "cluster.available.memory", 0)) for r in records]
        alloc_vc = [float(r.get(base + "cluster.allocated.vcores", 0)) for r in records]
        avail_vc = [float(r.get(base + "cluster.available.vcores", 0)) for r in records]
        queue_keys = [
            k
            for k in records[0]
            if k.startswith(base + "queue.") and k.endswith(".allocated.memory")
        ]
        run.partitions[p] = {
            "allocated_gb": alloc,
            "size_gb": [a + b for a, b in zip(alloc, avail, strict=True)],
            "memory_pct": [
                _r(100 * a / (a + b), 3) if a + b else 0.0
                for a, b in zip(alloc, avail, strict=True)
            ],
            "vcores_pct": [
                _r(100 * a / (a + b), 3) if a + b else 0.0
                for a, b in zip(alloc_vc, avail_vc, strict=True)
            ],
            "queues": {
                k[len(base + "queue.") : -len(".allocated.memory")]: [
                    float(r.get(k, 0)) for r in records
                ]
                for k in queue_keys
            },
        }

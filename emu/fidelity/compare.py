"""How far apart two replays of one case are: emu's scheduler against Hadoop's.

Only the scheduler differs between the two runs (same NM and AM models, same
seed, same heartbeat offsets), so the comparison is scheduler against
scheduler:

- jobs: each job's start and end in `jobruntime.csv` (simulated ms), the
  largest and the 95th-percentile difference, and how many jobs differ at all;
- the first divergence: the first decision (a row of `containers.csv`, written
  by `emu sls --container-log`) where the two schedulers did different things,
  with the queues' allocations just before it;
- queue allocation curves (`realtimetrack.json`, one record per simulated
  second): the largest gap between the two runs' allocation of any queue, as a
  share of the cluster's memory;
- counts: containers allocated and preempted, and allocations by locality.
"""

from __future__ import annotations

import csv
import json
import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

LOCALITIES = ("NODE_LOCAL", "RACK_LOCAL", "OFF_SWITCH")


@dataclass(frozen=True)
class JobTimes:
    start_ms: int
    end_ms: int


def read_jobruntime(path: Path) -> dict[str, JobTimes]:
    """Job id to simulated start and end, from SLS's jobruntime.csv."""
    jobs: dict[str, JobTimes] = {}
    with path.open(newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            jobs[row["JobID"]] = JobTimes(
                int(float(row["simulate_start_time"])), int(float(row["simulate_end_time"]))
            )
    return jobs


@dataclass(frozen=True)
class JobDeltas:
    """Per-job start and end differences between two runs, in ms."""

    jobs: int
    differing: int
    max_start_ms: int
    max_end_ms: int
    p95_start_ms: int
    p95_end_ms: int
    missing: tuple[str, ...] = ()
    """Jobs in one run's jobruntime.csv and not the other's."""
    worst: str = ""
    """The job with the largest end difference."""

    @property
    def identical(self) -> bool:
        return self.differing == 0 and not self.missing


def p95(values: list[int]) -> int:
    """The 95th percentile by the nearest-rank method (0 for no values)."""
    if not values:
        return 0
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


def job_deltas(a: dict[str, JobTimes], b: dict[str, JobTimes]) -> JobDeltas:
    """Compare two runs' jobs (as `read_jobruntime` gives them)."""
    common = [j for j in a if j in b]
    missing = tuple(sorted(set(a) ^ set(b)))
    starts = [abs(a[j].start_ms - b[j].start_ms) for j in common]
    ends = [abs(a[j].end_ms - b[j].end_ms) for j in common]
    differing = sum(1 for s, e in zip(starts, ends, strict=True) if s or e)
    worst = max(common, key=lambda j: abs(a[j].end_ms - b[j].end_ms), default="")
    return JobDeltas(
        jobs=len(common),
        differing=differing,
        max_start_ms=max(starts, default=0),
        max_end_ms=max(ends, default=0),
        p95_start_ms=p95(starts),
        p95_end_ms=p95(ends),
        missing=missing,
        worst=worst if differing else "",
    )


@dataclass(frozen=True)
class Decision:
    """One row of containers.csv."""

    time_ms: int
    event: str
    container: str
    app: str
    node: str
    memory_mb: int
    vcores: int
    priority: int
    locality: str
    am: bool

    def describe(self) -> str:
        kind = "AM " if self.am else ""
        return (
            f"{self.event} {kind}{self.container} of {self.app} on {self.node} "
            f"(<{self.memory_mb} MB, {self.vcores} vcores>, priority {self.priority}, "
            f"{self.locality})"
        )


def read_decisions(path: Path) -> list[Decision]:
    with path.open(newline="", encoding="utf-8") as f:
        return [
            Decision(
                int(r["time_ms"]),
                r["event"],
                r["container"],
                r["app"],
                r["node"],
                int(r["memory_mb"]),
                int(r["vcores"]),
                int(r["priority"]),
                r["locality"],
                r["am"] == "1",
            )
            for r in csv.DictReader(f)
        ]


@dataclass(frozen=True)
class Divergence:
    """The first decision the two schedulers made differently."""

    time_ms: int
    node: str
    emu: Decision | None
    hadoop: Decision | None
    same_before: int
    """Decisions both made identically before this one."""
    queues: dict[str, tuple[float, int]] = field(default_factory=dict)
    """Each queue's allocation (GB, vcores) at the last whole second before."""
    running_apps: int = 0


def first_divergence(
    emu: list[Decision], hadoop: list[Decision], track: list[dict[str, Any]] | None = None
) -> Divergence | None:
    """Where the decision logs part (None if they are identical). Decisions
    made at the same simulated time are compared as sets: the order in which
    the two implementations report one instant's placements is not a
    decision."""
    ge, gh = _by_time(emu), _by_time(hadoop)
    same = 0
    e: Decision | None = None
    h: Decision | None = None
    for i in range(max(len(ge), len(gh))):
        a = ge[i] if i < len(ge) else []
        b = gh[i] if i < len(gh) else []
        if a == b:
            same += len(a)
            continue
        if a and b and a[0].time_ms != b[0].time_ms:
            # One scheduler decided something at an instant the other did not.
            e, h = (a[0], None) if a[0].time_ms < b[0].time_ms else (None, b[0])
        else:
            for j in range(max(len(a), len(b))):
                if j >= len(a) or j >= len(b) or a[j] != b[j]:
                    e = a[j] if j < len(a) else None
                    h = b[j] if j < len(b) else None
                    same += j
                    break
        break
    else:
        return None
    first = e if h is None or (e is not None and e.time_ms <= h.time_ms) else h
    assert first is not None
    queues: dict[str, tuple[float, int]] = {}
    running = 0
    record = _record_before(track or [], first.time_ms)
    if record is not None:
        running = int(record.get("running.applications", 0))
        for key, value in record.items():
            if key.startswith("queue.") and key.endswith(".allocated.memory"):
                name = key[len("queue.") : -len(".allocated.memory")]
                vcores = record.get(f"queue.{name}.allocated.vcores", 0)
                queues[name] = (float(value), int(vcores))
    return Divergence(first.time_ms, first.node, e, h, same, queues, running)


def _by_time(decisions: list[Decision]) -> list[list[Decision]]:
    """Decisions grouped by simulated time, each group in a canonical order."""
    groups: list[list[Decision]] = []
    for d in decisions:
        if groups and groups[-1][0].time_ms == d.time_ms:
            groups[-1].append(d)
        else:
            groups.append([d])
    key = lambda d: (d.node, d.app, d.container, d.event)  # noqa: E731
    return [sorted(g, key=key) for g in groups]


def _record_before(track: list[dict[str, Any]], time_ms: int) -> dict[str, Any] | None:
    before = None
    for rec in track:
        if rec.get("time", 0) > time_ms:
            break
        before = rec
    return before


def read_track(path: Path) -> list[dict[str, Any]]:
    """realtimetrack.json's records ([] when the file is missing)."""
    if not path.exists():
        return []
    data = json.loads(path.read_text(encoding="utf-8"))
    return data if isinstance(data, list) else []


def queue_curve_gap(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> tuple[float, str, int]:
    """The largest difference between two runs' per-second allocation of one
    queue, as a share of the cluster's memory: (share, queue, time ms)."""
    best = (0.0, "", 0)
    for ra, rb in zip(a, b, strict=False):
        total = float(ra.get("cluster.allocated.memory", 0)) + float(
            ra.get("cluster.available.memory", 0)
        )
        if total <= 0:
            continue
        for key, va in ra.items():
            if key.startswith("queue.") and key.endswith(".allocated.memory"):
                gap = abs(float(va) - float(rb.get(key, 0))) / total
                if gap > best[0]:
                    best = (gap, key[len("queue.") : -len(".allocated.memory")], ra["time"])
    return best


@dataclass(frozen=True)
class Counts:
    allocated: int
    preempted: int
    locality: dict[str, int]

    def brief(self) -> str:
        loc = "/".join(str(self.locality.get(k, 0)) for k in LOCALITIES)
        return f"{self.allocated} ({loc}), {self.preempted} preempted"


def counts(decisions: list[Decision]) -> Counts:
    allocated = [d for d in decisions if d.event == "allocated"]
    return Counts(
        allocated=len(allocated),
        preempted=sum(1 for d in decisions if d.event == "preempted"),
        locality=dict(Counter(d.locality for d in allocated)),
    )


@dataclass(frozen=True)
class Comparison:
    """One case's two runs compared; see the module docstring."""

    jobs: JobDeltas
    identical_jobruntime: bool
    divergence: Divergence | None
    queue_gap: tuple[float, str, int]
    emu_counts: Counts
    hadoop_counts: Counts

    @property
    def exact(self) -> bool:
        """Identical jobruntime.csv: the suite's agreement criterion."""
        return self.identical_jobruntime


def compare_runs(emu_dir: Path, hadoop_dir: Path) -> Comparison:
    """Compare the output directories of the two runs of one case."""
    ej, hj = emu_dir / "jobruntime.csv", hadoop_dir / "jobruntime.csv"
    emu_dec = read_decisions(emu_dir / "containers.csv")
    hadoop_dec = read_decisions(hadoop_dir / "containers.csv")
    emu_track = read_track(emu_dir / "realtimetrack.json")
    hadoop_track = read_track(hadoop_dir / "realtimetrack.json")
    return Comparison(
        jobs=job_deltas(read_jobruntime(ej), read_jobruntime(hj)),
        identical_jobruntime=ej.read_bytes() == hj.read_bytes(),
        divergence=first_divergence(emu_dec, hadoop_dec, emu_track),
        queue_gap=queue_curve_gap(emu_track, hadoop_track),
        emu_counts=counts(emu_dec),
        hadoop_counts=counts(hadoop_dec),
    )

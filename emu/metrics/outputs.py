"""Run outputs: SLS's jobruntime.csv, our summary.json, and the summary
table printed at the end of a run.

Times are simulated milliseconds. SLS's jobruntime.csv also has
`real_start_time`/`real_end_time` (wall-clock ms); on the virtual clock there
is no wall clock worth reporting, so they are the run's epoch (0 on the
virtual clock, the RM's announced epoch in ms on scaled wall time) plus the
simulated times, which keeps the file deterministic.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from emu.metrics.fault_report import describe

JOBRUNTIME_HEADER = "JobID,real_start_time,real_end_time,simulate_start_time,simulate_end_time"


def _percentile(values: list[int], q: float) -> int:
    if not values:
        return 0
    values = sorted(values)
    k = min(len(values) - 1, max(0, round(q * (len(values) - 1))))
    return values[k]


def job_rows(jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for j in jobs:
        start = j["started_ms"]
        finish = j["finished_ms"]
        rows.append(
            {
                "job_id": j["job_id"],
                "app_id": j["app_id"],
                "queue": j["queue"],
                "user": j["user"],
                "state": j["state"],
                "final_status": j["final_status"],
                "submit_ms": j["submit_ms"],
                "start_ms": start,
                "finish_ms": finish,
                "wait_ms": start - j["submit_ms"] if start >= 0 else None,
                "turnaround_ms": finish - j["submit_ms"] if finish >= 0 else None,
                "attempts": j["attempts"],
            }
        )
    return rows


def summary(
    name: str,
    seed: int,
    jobs: list[dict[str, Any]],
    metrics: dict[str, Any],
    simulated_ms: int,
    faults: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The run's summary; `faults` (emu.metrics.fault_report) is included
    when the run could inject any."""
    rows = job_rows(jobs)
    turnaround = [r["turnaround_ms"] for r in rows if r["turnaround_ms"] is not None]
    waits = [r["wait_ms"] for r in rows if r["wait_ms"] is not None]
    data: dict[str, Any] = {
        "scenario": name,
        "seed": seed,
        "simulated_ms": simulated_ms,
        "jobs": rows,
        "cluster": {
            "nodes": metrics["active_nodes"],
            "lost_nodes": metrics["lost_nodes"],
            "total": metrics["total"],
            "utilization": metrics["utilization"],
            "containers_total": metrics["containers_total"],
            "apps_completed": metrics["apps_completed"],
            "apps_failed": metrics["apps_failed"],
            "apps_killed": metrics["apps_killed"],
            "invalid_transitions": metrics["invalid_transitions"],
        },
        "turnaround_ms": {
            "mean": round(sum(turnaround) / len(turnaround)) if turnaround else 0,
            "p50": _percentile(turnaround, 0.5),
            "p90": _percentile(turnaround, 0.9),
            "max": max(turnaround, default=0),
        },
        "wait_ms": {
            "mean": round(sum(waits) / len(waits)) if waits else 0,
            "max": max(waits, default=0),
        },
    }
    if faults is not None:
        data["faults"] = faults
    return data


def write_jobruntime(path: Path, jobs: list[dict[str, Any]], epoch_ms: int = 0) -> None:
    lines = [JOBRUNTIME_HEADER]
    for j in jobs:
        start, end = j["submit_ms"], j["finished_ms"]
        lines.append(f"{j['job_id']},{epoch_ms + start},{epoch_ms + end},{start},{end}")
    path.write_text("\n".join(lines) + "\n")


def write_summary(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps(data, indent=2, sort_keys=False) + "\n")


def format_table(data: dict[str, Any]) -> str:
    """The summary as a plain-text table for the terminal."""

    def sec(ms: int | None) -> str:
        return "-" if ms is None or ms < 0 else f"{ms / 1000:.1f}"

    header = (
        "job", "app", "queue", "state", "attempts", "submit s", "start s", "finish s", "wait s",
        "turnaround s",
    )  # fmt: skip
    rows = [
        (
            r["job_id"],
            r["app_id"],
            r["queue"],
            r["state"],
            r["attempts"],
            sec(r["submit_ms"]),
            sec(r["start_ms"]),
            sec(r["finish_ms"]),
            sec(r["wait_ms"]),
            sec(r["turnaround_ms"]),
        )
        for r in data["jobs"]
    ]
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=False)]
    out = []
    for row in (header, *rows):
        out.append("  ".join(str(v).ljust(w) for v, w in zip(row, widths, strict=True)).rstrip())
    c = data["cluster"]
    u = c["utilization"]
    t = data["turnaround_ms"]
    out += [
        "",
        f"scenario {data['scenario']} (seed {data['seed']}): "
        f"simulated {sec(data['simulated_ms'])} s",
        f"nodes {c['nodes']} active, {c['lost_nodes']} lost; "
        f"capacity {c['total']['memory-mb']} MB / {c['total']['vcores']} vcores",
        f"jobs {c['apps_completed']} finished, {c['apps_failed']} failed, "
        f"{c['apps_killed']} killed; "
        f"containers allocated {c['containers_total']}",
        f"utilization memory {u['memory']:.1%}, vcores {u['vcores']:.1%}; "
        f"turnaround mean {sec(t['mean'])} s, p90 {sec(t['p90'])} s",
    ]
    faults = data.get("faults")
    if faults and (faults["injected"] or any(faults["recovered"].values())):
        out.append(describe(faults))
    return "\n".join(out)

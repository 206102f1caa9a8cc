"""A point's figures, read from its output directory.

`summary.json` (written by `emu run` and `emu sls`) gives the jobs (queue,
state, wait, turnaround), the utilization and the timeline's Jain index over
the queues' dominant shares. Preemptions come from the scheduler's
KILL_PREEMPTED counter in `metrics/` (`emu sls` writes it as SLS does; `emu
run` writes no metrics, so its points have none). Times are seconds,
utilization per cent; percentiles use summary.json's nearest-rank rule.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

# The figures of a point, in table order. Those in PER_QUEUE also appear per
# queue, as columns named "QUEUE:METRIC" (e.g. "root.prod:turnaround_p90_s").
METRICS = (
    "jobs",
    "failed_jobs",
    "makespan_s",
    "turnaround_mean_s",
    "turnaround_p50_s",
    "turnaround_p90_s",
    "turnaround_p99_s",
    "wait_mean_s",
    "wait_p90_s",
    "memory_utilization_pct",
    "vcores_utilization_pct",
    "jain_mean",
    "preemptions",
)
PER_QUEUE = (
    "jobs",
    "turnaround_mean_s",
    "turnaround_p50_s",
    "turnaround_p90_s",
    "turnaround_p99_s",
    "wait_mean_s",
    "wait_p90_s",
)


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    v = sorted(values)
    return v[min(len(v) - 1, max(0, round(q * (len(v) - 1))))]


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _r(x: float | None, digits: int = 3) -> float | None:
    return None if x is None else round(x, digits)


def _job_figures(jobs: list[dict[str, Any]]) -> dict[str, Any]:
    turnaround = [j["turnaround_ms"] / 1000 for j in jobs if j.get("turnaround_ms") is not None]
    waits = [j["wait_ms"] / 1000 for j in jobs if j.get("wait_ms") is not None]
    return {
        "jobs": len(jobs),
        "turnaround_mean_s": _r(_mean(turnaround)),
        "turnaround_p50_s": _r(percentile(turnaround, 0.5)),
        "turnaround_p90_s": _r(percentile(turnaround, 0.9)),
        "turnaround_p99_s": _r(percentile(turnaround, 0.99)),
        "wait_mean_s": _r(_mean(waits)),
        "wait_p90_s": _r(percentile(waits, 0.9)),
    }


def read(out: Path) -> dict[str, Any]:
    """The figures of the run whose outputs are in `out` (a dict of METRICS,
    then the per-queue columns in queue order). Raises OSError or ValueError
    when summary.json is missing or unreadable."""
    summary = json.loads((out / "summary.json").read_text())
    jobs: list[dict[str, Any]] = summary["jobs"]
    fig: dict[str, Any] = dict.fromkeys(METRICS)
    fig.update(_job_figures(jobs))
    fig["failed_jobs"] = sum(1 for j in jobs if j.get("final_status") != "SUCCEEDED")
    submits = [j["submit_ms"] for j in jobs]
    finishes = [j["finish_ms"] for j in jobs if j.get("finish_ms", -1) >= 0]
    if submits and finishes:
        fig["makespan_s"] = _r((max(finishes) - min(submits)) / 1000)
    util = (summary.get("cluster") or {}).get("utilization") or {}
    if "memory" in util:
        fig["memory_utilization_pct"] = _r(100 * util["memory"], 2)
    if "vcores" in util:
        fig["vcores_utilization_pct"] = _r(100 * util["vcores"], 2)
    timeline = summary.get("timeline") or {}
    jain = [x for x in timeline.get("jain_dominant_share") or [] if x is not None]
    fig["jain_mean"] = _r(_mean(jain), 4)
    # Containers preempted, AM and not, from each app's report (RMAppMetrics),
    # so `emu run` and `emu sls` points count them alike.
    fig["preemptions"] = sum(
        j.get("preempted_am_containers", 0) + j.get("preempted_non_am_containers", 0) for j in jobs
    )
    for queue in sorted({j["queue"] for j in jobs}):
        per = _job_figures([j for j in jobs if j["queue"] == queue])
        for k in PER_QUEUE:
            fig[f"{queue}:{k}"] = per[k]
    return fig

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
import re
import sys
from pathlib import Path
from typing import Any

from emu.errors import SchedulerFailed
from emu.metrics import failures
from emu.metrics.fault_report import describe
from emu.rm.scheduler import activities as act

JOBRUNTIME_HEADER = "JobID,real_start_time,real_end_time,simulate_start_time,simulate_end_time"


def percentile(values: list[int], q: float) -> int:
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
                "preempted_am_containers": j.get("preempted_am", 0),
                "preempted_non_am_containers": j.get("preempted_non_am", 0),
                "diagnostics": j.get("diagnostics", ""),
            }
        )
    return rows


def summary(
    name: str,
    seed: int,
    jobs: list[dict[str, Any]],
    metrics: dict[str, Any],
    simulated_ms: int,
    incomplete: str | None = None,
    faults: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The run's summary. `incomplete` is why the run stopped before every
    job ended (it could make no more progress); such a summary says
    `"complete": false` so it is never mistaken for a finished run. `faults`
    (emu.metrics.fault_report) is included when the run could inject any."""
    rows = job_rows(jobs)
    turnaround = [r["turnaround_ms"] for r in rows if r["turnaround_ms"] is not None]
    waits = [r["wait_ms"] for r in rows if r["wait_ms"] is not None]
    data: dict[str, Any] = {
        "scenario": name,
        "seed": seed,
        "complete": incomplete is None,
        "incomplete_reason": incomplete,
        "simulated_ms": simulated_ms,
        "failure_hint": failures.dominant(rows),
        "jobs": rows,
        "cluster": {
            "nodes": metrics["active_nodes"],
            "lost_nodes": metrics["lost_nodes"],
            "total": metrics["total"],
            "utilization": metrics["utilization"],
            "containers_total": metrics["containers_total"],
            # This run's own apps (an RM shared with other replays has more).
            "apps_completed": sum(r["state"] == "FINISHED" for r in rows),
            "apps_failed": sum(r["state"] == "FAILED" for r in rows),
            "apps_killed": sum(r["state"] == "KILLED" for r in rows),
            "invalid_transitions": metrics["invalid_transitions"],
        },
        "turnaround_ms": {
            "mean": round(sum(turnaround) / len(turnaround)) if turnaround else 0,
            "p50": percentile(turnaround, 0.5),
            "p90": percentile(turnaround, 0.9),
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


def add_why_pending(
    data: dict[str, Any], waits: dict[str, dict[str, list[list[Any]]]], nodes_up_ms: int = 0
) -> None:
    """Give each job the scheduler held back `why_pending`: {"before_start":
    why it waited for its first container, "recent": its last decisions},
    each [[simulated ms, reason, node], ...] oldest first. A job that waited
    over a second with no recorded reason was never offered a node (see
    `activities.ORDER`); time before `nodes_up_ms`, when the nodes may not
    have heartbeated yet (SLS's NMs first do one interval after their
    offset), does not count."""
    for row in data["jobs"]:
        entry = dict(waits.get(row["app_id"]) or {})
        waited = row["wait_ms"] or 0
        if waited and row["submit_ms"] < nodes_up_ms:
            waited -= min(waited, nodes_up_ms - row["submit_ms"])
        if "before_start" not in entry and waited > act.INFER_AFTER_MS:
            entry["before_start"] = [[row["submit_ms"], act.ORDER, ""]]
        if entry:
            row["why_pending"] = entry


def write_jobruntime(path: Path, jobs: list[dict[str, Any]], epoch_ms: int = 0) -> None:
    lines = [JOBRUNTIME_HEADER]
    for j in jobs:
        start, end = j["submit_ms"], j["finished_ms"]
        lines.append(f"{j['job_id']},{epoch_ms + start},{epoch_ms + end},{start},{end}")
    path.write_text("\n".join(lines) + "\n")


_NUMBER_LIST = re.compile(r"\[(\s*(?:-?[0-9.eE+-]+|null)(?:,\s*(?:-?[0-9.eE+-]+|null))*)\s*\]")


def write_failure(out_dir: Path, failed: SchedulerFailed) -> None:
    """`failure.json`: why a run ended early (its scheduler threw: emu's own
    RM or scheduler, a plugin, or Hadoop's), which, when in simulated time,
    and the exit code it ended with."""
    data = {
        "error": failed.message,
        "failed": failed.who,
        "simulated_ms": failed.simulated_ms,
        "exit": 1,
    }
    (out_dir / "failure.json").write_text(json.dumps(data, indent=2) + "\n")


def write_summary(path: Path, data: dict[str, Any]) -> None:
    """Indented JSON, except that lists of numbers (the timeline's series)
    stay on one line each, so a long run's summary stays readable."""
    text = json.dumps(data, indent=2, sort_keys=False)
    text = _NUMBER_LIST.sub(
        lambda m: "[" + ", ".join(m.group(1).split()).replace(",,", ",") + "]", text
    )
    path.write_text(text + "\n")


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
    # YARN's app state FINISHED only says the AM unregistered; an AM that
    # gave up (e.g. its asks were refused) finishes with final status FAILED.
    unsuccessful = sum(
        1 for j in data["jobs"] if j["state"] == "FINISHED" and j.get("final_status") == "FAILED"
    )
    finished = f"jobs {c['apps_completed']} finished" + (
        f" ({unsuccessful} with final status FAILED)" if unsuccessful else ""
    )
    out += [
        "",
        f"scenario {data['scenario']} (seed {data['seed']}): "
        f"simulated {sec(data['simulated_ms'])} s",
        f"nodes {c['nodes']} active, {c['lost_nodes']} lost; "
        f"capacity {c['total']['memory-mb']} MB / {c['total']['vcores']} vcores",
        f"{finished}, {c['apps_failed']} failed, "
        f"{c['apps_killed']} killed; "
        f"containers allocated {c['containers_total']}",
        f"utilization memory {u['memory']:.1%}, vcores {u['vcores']:.1%}; "
        f"turnaround mean {sec(t['mean'])} s, p90 {sec(t['p90'])} s",
    ]
    out += failure_lines(data["jobs"])
    faults = data.get("faults")
    if faults and (faults["injected"] or any(faults["recovered"].values())):
        out.append(describe(faults))
    return "\n".join(out)


def failure_lines(rows: list[dict[str, Any]], limit: int = 10) -> list[str]:
    """Each job that did not succeed with its diagnostics, the first `limit`
    of them (summary.json has all)."""
    bad = [r for r in rows if failures.failed(r)]
    if not bad:
        return []
    lines = ["", "jobs that did not succeed:"]
    for r in bad[:limit]:
        why = r["diagnostics"] or f"still {r['state']}"
        lines.append(f"  {r['job_id']} ({r['app_id']}) {r['final_status']}: {why}")
    if len(bad) > limit:
        lines.append(f"  ... and {len(bad) - limit} more (summary.json lists every one)")
    return lines


def scaled_wall_note(rate: float) -> str:
    """The line a run on scaled wall time prints under its summary."""
    return (
        f"ran on scaled wall time (--rate {rate:g}): results can differ from the virtual "
        "clock's on the same trace and seed; replay without --rate for reproducible results"
    )


def print_report(data: dict[str, Any], tail: str, rate: float | None = None) -> int:
    """Print a run's summary table, `tail`, the note that a run on scaled
    wall time (`rate`) is not the virtual clock's result, and the one line
    that explains most failures; return the exit code: 0 when every job
    succeeded or was killed on purpose (a kill is a user's or a fault's
    decision, not a failure of the run), 1 otherwise (a job failed or never
    ended, or the run could not make progress, which gets its own
    `emu: error:` line on stderr)."""
    print(format_table(data), flush=True)
    print(tail, flush=True)
    if rate:
        print(scaled_wall_note(rate), flush=True)
    if data["failure_hint"]:
        print(data["failure_hint"], flush=True)
    if not data["complete"]:
        print(f"emu: error: {data['incomplete_reason']}", file=sys.stderr, flush=True)
        return 1
    broken = [r for r in data["jobs"] if failures.failed(r) and r["final_status"] != "KILLED"]
    return 1 if broken else 0

"""The sweep's results: one row per point (its parameters, how its run
ended, its figures), written as `results.csv` (and `results.parquet` when
pyarrow is installed); the points ranked by the spec's objective; and the
sizing answer, the smallest cluster of the grid that meets the target.
"""

from __future__ import annotations

import csv
import importlib
import json
from pathlib import Path
from typing import Any

from emu.sweep.figures import METRICS

MANIFEST = "sweep.json"
RESULT = "result.json"
FINISHED = ("ok", "failed")
"""Statuses of a point that ran to its end (`failed`: some job failed or was
killed, exit 1); `error` (bad input, a crash, a timeout) is run again."""
BASE_COLUMNS = (
    "point", "trace", "config", "scheduler", "impl", "nodes", "scale", "seed",
    "status", "exit_code", "wall_s", "host", "worker", "error",
)  # fmt: skip


def is_sweep_dir(path: Path) -> bool:
    return (path / MANIFEST).is_file() and (path / "points").is_dir()


def read_manifest(sweep_dir: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((sweep_dir / MANIFEST).read_text())
    return data


def rows(sweep_dir: Path, manifest: dict[str, Any]) -> list[dict[str, Any]]:
    """The points' rows in grid order; a point not run yet has status
    `pending` and no figures."""
    out = []
    for point in manifest["points"]:
        path = sweep_dir / "points" / point["point"] / RESULT
        if path.is_file():
            result = json.loads(path.read_text())
            row = {k: result.get(k) for k in BASE_COLUMNS}
            row.update(result.get("figures") or {})
        else:
            row = dict(point) | {"status": "pending"}
        out.append(row)
    return out


def columns(table: list[dict[str, Any]]) -> list[str]:
    queue_cols = sorted({k for r in table for k in r if ":" in k})
    return [*BASE_COLUMNS, *METRICS, *queue_cols]


def write(sweep_dir: Path, table: list[dict[str, Any]]) -> list[Path]:
    """results.csv, and results.parquet when pyarrow is importable."""
    cols = columns(table)
    path = sweep_dir / "results.csv"
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for r in table:
            w.writerow(["" if r.get(c) is None else r.get(c) for c in cols])
    written = [path]
    try:  # optional (pip install 'emu[parquet]'), so imported by name
        pa = importlib.import_module("pyarrow")
        pq = importlib.import_module("pyarrow.parquet")
    except ImportError:
        return written
    pq.write_table(
        pa.Table.from_pylist([{c: r.get(c) for c in cols} for r in table]),
        sweep_dir / "results.parquet",
    )
    written.append(sweep_dir / "results.parquet")
    return written


def ranked(table: list[dict[str, Any]], objective: str, goal: str) -> list[dict[str, Any]]:
    """The finished points with a value for `objective`, best first (ties in
    grid order)."""
    scored = [
        r
        for r in table
        if r.get("status") in FINISHED and isinstance(r.get(objective), int | float)
    ]
    return sorted(scored, key=lambda r: r[objective] if goal == "min" else -r[objective])


def meets(row: dict[str, Any], target: dict[str, Any]) -> bool:
    """Whether a finished point meets the target (every queue's value when
    per_queue; a missing value does not)."""
    if row.get("status") not in FINISHED:
        return False
    metric = target["metric"]
    if target.get("queue"):
        keys = [f"{target['queue']}:{metric}"]
    elif target.get("per_queue"):
        keys = [k for k in row if k.endswith(":" + metric)]
    else:
        keys = [metric]
    if not keys:
        return False
    for k in keys:
        v = row.get(k)
        if not isinstance(v, int | float):
            return False
        if (v > target["bound"]) if target["upper"] else (v < target["bound"]):
            return False
    return True


def sizing(table: list[dict[str, Any]], target: dict[str, Any]) -> list[dict[str, Any]]:
    """For each trace and config, the smallest cluster (nodes) of the grid
    whose points meet the target for every seed, or None; `unfinished`
    counts the points of smaller sizes that did not finish (pending or
    errored), which could still change the answer."""
    groups: dict[tuple[str, str], dict[int, list[dict[str, Any]]]] = {}
    for r in table:
        by_size = groups.setdefault((r["trace"], r["config"]), {})
        by_size.setdefault(int(r["nodes"] or 0), []).append(r)
    answers = []
    for (trace, config), by_size in groups.items():
        smallest = next(
            (n for n in sorted(by_size) if all(meets(r, target) for r in by_size[n])), None
        )
        unfinished = sum(
            1
            for n, rs in by_size.items()
            if smallest is None or n < smallest
            for r in rs
            if r.get("status") not in FINISHED
        )
        answers.append(
            {
                "trace": trace,
                "config": config,
                "smallest_nodes": smallest,
                "sizes": sorted(by_size),
                "unfinished": unfinished,
            }
        )
    return answers


def answer(a: dict[str, Any]) -> str:
    """One sizing answer in words (`table.sizing`)."""
    if a["unfinished"]:
        n = a["unfinished"]
        points = f"{n} point{'s' if n > 1 else ''}"
        if a["smallest_nodes"] is None:
            return f"not known: {points} did not finish"
        return f"{a['smallest_nodes']} nodes, or fewer: {points} of smaller sizes did not finish"
    if a["sizes"] == [0]:  # the traces' own nodes: one size, no question of the smallest
        return "met" if a["smallest_nodes"] is not None else "not met"
    if a["smallest_nodes"] is None:
        return f"none of {a['sizes']} nodes"
    return f"{a['smallest_nodes']} nodes"

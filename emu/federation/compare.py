"""Federate or not: one workload on one big cluster and on the same nodes
split into federated sub-clusters, side by side.

    python -m emu.federation.compare WORK_DIR [--nodes 20000] [--subclusters 4]
        [--span-s 600] [--util 0.8] [--seed 1]

writes the benchmark workload (`emu.bench.workload`: SLS nodes and trace,
FairScheduler queues) into WORK_DIR, the two federation files
(`emu.bench.federation`: one sub-cluster with every node, and N
sub-clusters dealt the racks in turn, Hadoop's WeightedLocalityPolicyManager
with equal weights), replays both the same way (one process, virtual
clock) and prints what a user deciding whether to federate compares: jobs
finished, queue delay (wait) and turnaround percentiles, memory
utilization, containers placed across sub-clusters, and the wall time.
Each run's outputs are in WORK_DIR/federation-K/out.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from emu.bench import workload
from emu.bench.federation import write_federation
from emu.federation import description
from emu.federation.run import run_federation_file
from emu.metrics.outputs import percentile


def prepare(work: Path, nodes: int, span_s: float, util: float, seed: int) -> None:
    """The benchmark workload in `work` (kept if it is there already)."""
    if (work / "trace.json").is_file() and (work / "nodes.json").is_file():
        return
    workload.main([str(work), "--nodes", str(nodes), "--span-s", str(span_s), "--util", str(util),
                   "--seed", str(seed)])  # fmt: skip


def replay(work: Path, subclusters: int) -> dict[str, Any]:
    """One federation of the workload replayed; its comparison row."""
    path = write_federation(work, subclusters)
    fed = description.load(path)
    started = time.perf_counter()
    run = run_federation_file(fed, fed.seed, path.parent / "out")
    wall = time.perf_counter() - started
    rows = run.summary["jobs"]
    waits = [r["wait_ms"] for r in rows if r["wait_ms"] is not None]
    turns = [r["turnaround_ms"] for r in rows if r["turnaround_ms"] is not None]
    section = run.summary["federation"]
    return {
        "sub-clusters": subclusters,
        "jobs finished": sum(r["state"] == "FINISHED" for r in rows),
        "wait p50 s": percentile(waits, 0.5) / 1000,
        "wait p90 s": percentile(waits, 0.9) / 1000,
        "turnaround p50 s": percentile(turns, 0.5) / 1000,
        "turnaround p90 s": percentile(turns, 0.9) / 1000,
        "memory utilization": run.summary["cluster"]["utilization"].get("memory", 0.0),
        "containers across": section["containers_across_sub_clusters"],
        "wall s": wall,
        "simulated s": run.result.simulated_ms / 1000,
    }


def format_rows(rows: list[dict[str, Any]]) -> str:
    keys = list(rows[0])
    lines = [f"{'':<20}" + "".join(f"{r['sub-clusters']:>14}" for r in rows)]
    for k in keys[1:]:
        cells = []
        for r in rows:
            v = r[k]
            cells.append(f"{v:>14.2f}" if isinstance(v, float) else f"{v:>14}")
        lines.append(f"{k:<20}" + "".join(cells))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m emu.federation.compare",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("work", type=Path, help="where the workload and the runs' outputs go")
    p.add_argument("--nodes", type=int, default=20_000, help="nodes in all (default 20000)")
    p.add_argument(
        "--subclusters", type=int, default=4, help="sub-clusters to split into (default 4)"
    )
    p.add_argument("--span-s", type=float, default=600, help="arrival window, s (default 600)")
    p.add_argument("--util", type=float, default=0.8, help="memory to keep allocated (default 0.8)")
    p.add_argument("--seed", type=int, default=1, help="the workload's seed (default 1)")
    args = p.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    prepare(args.work, args.nodes, args.span_s, args.util, args.seed)
    rows = [replay(args.work, 1), replay(args.work, args.subclusters)]
    print(format_rows(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())

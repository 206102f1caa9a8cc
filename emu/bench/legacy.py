"""`make bench`: benchmark scenarios, reported as ratios.

For each scenario: simulated seconds per wall second, NM heartbeats and
container allocations handled per wall second, and memory per node (RSS
growth over the run divided by the node count). Runs on the virtual clock,
deterministically, in this process.

    python -m emu.bench [--nodes 1000] [--jobs 200] [--quick]
"""

from __future__ import annotations

import argparse
import resource
import sys
import time

from emu.config.configuration import Configuration
from emu.resources import Resource
from emu.simulation import Simulation, run_virtual
from emu.workload import JobSpec, NodeSpec, TaskSpec, Workload


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * resource.getpagesize() / 2**20


def cluster(nodes: int, per_rack: int = 40) -> list[NodeSpec]:
    return [
        NodeSpec(f"host{i:05d}", f"/rack{i // per_rack:03d}", Resource(65536, 32))
        for i in range(nodes)
    ]


def workload(jobs: int, nodes: list[NodeSpec], span_ms: int, maps: int, map_ms: int) -> Workload:
    """MapReduce jobs submitted evenly over `span_ms`, maps preferring 3
    hosts each (deterministic choice), one reduce per 10 maps."""
    out = []
    n = len(nodes)
    for j in range(jobs):
        tasks = []
        for m in range(maps):
            k = (j * 7919 + m * 104729) % n
            hosts = tuple(nodes[(k + d) % n].host for d in (0, 1, 2))
            tasks.append(TaskSpec("map", 20, map_ms + (m % 7) * 1000, Resource(2048, 1), hosts))
        tasks += [TaskSpec("reduce", 10, map_ms // 2, Resource(4096, 1))] * max(1, maps // 10)
        out.append(
            JobSpec(
                f"job_{j:05d}",
                "mapreduce",
                j * span_ms // max(1, jobs),
                "default",
                f"user{j % 10}",
                Resource(2048, 1),
                tuple(tasks),
            )
        )
    return Workload(out)


def run_one(name: str, nodes: int, jobs: int, maps: int, span_ms: int, map_ms: int) -> dict:
    spec = cluster(nodes)
    conf = Configuration({"yarn.resourcemanager.scheduler.class": "fifo"})
    sim = Simulation(conf, spec, workload(jobs, spec, span_ms, maps, map_ms), [], seed=1)
    rss0 = _rss_mb()
    started = time.perf_counter()
    result = run_virtual(sim)
    wall = time.perf_counter() - started
    rss1 = _rss_mb()
    allocations = result.metrics["containers_total"]
    return {
        "scenario": name,
        "nodes": nodes,
        "jobs": jobs,
        "simulated_s": result.simulated_ms / 1000,
        "wall_s": wall,
        "sim_per_wall": result.simulated_ms / 1000 / wall,
        "heartbeats_per_s": result.heartbeats / wall,
        "allocations_per_s": allocations / wall,
        "kb_per_node": max(0.0, rss1 - rss0) * 1024 / nodes,
        "finished": result.metrics["apps_completed"],
    }


SCENARIOS = {
    # name: (nodes, jobs, maps per job, submission span ms, map duration ms)
    "fifo-100-nodes": (100, 40, 40, 300_000, 60_000),
    "fifo-1000-nodes": (1000, 200, 100, 600_000, 90_000),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m emu.bench", description=__doc__)
    parser.add_argument("--only", choices=sorted(SCENARIOS), help="run one scenario")
    args = parser.parse_args(argv)
    names = [args.only] if args.only else list(SCENARIOS)
    print(
        f"{'scenario':18} {'nodes':>6} {'jobs':>5} {'sim s':>8} {'wall s':>7} "
        f"{'sim s/wall s':>12} {'heartbeats/s':>12} {'allocs/s':>9} {'KB/node':>8}"
    )
    for name in names:
        r = run_one(name, *SCENARIOS[name])
        print(
            f"{r['scenario']:18} {r['nodes']:>6} {r['jobs']:>5} {r['simulated_s']:>8.0f} "
            f"{r['wall_s']:>7.1f} {r['sim_per_wall']:>12.1f} {r['heartbeats_per_s']:>12.0f} "
            f"{r['allocations_per_s']:>9.0f} {r['kb_per_node']:>8.1f}"
        )
        if r["finished"] != r["jobs"]:
            print(f"  warning: only {r['finished']} of {r['jobs']} jobs finished", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

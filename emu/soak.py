"""`make soak`: simulated hours at 1,000 nodes with faults, watching memory.

A long run is where slow leaks and rare interleavings show. This one keeps
1,000 nodes busy with a steady stream of MapReduce jobs (one every 20
simulated seconds, 60 maps of 90-96 s and 6 reduces each) for `--hours`,
and every 20 simulated minutes injects faults: an NM crash (LOST after the
5-minute expiry, restarted 10 minutes later), a hung AM, a crashed AM and,
once an hour, a decommission. The RM's invariants are checked every
simulated minute and at the end (a broken one stops the run), and the
process's resident memory is sampled every 5 simulated minutes.

It passes when every job finished and memory after warm-up (the first
quarter of the run) stays within +-10 % of its first post-warm-up sample.
The RM keeps at most yarn.resourcemanager.max-completed-applications
finished apps (YARN's default, 1,000, unless `--max-completed-apps`), as a
real RM would over a day; the run's own record of every job is a tuple per
job (`emu.simulation.RemovedApps`).

`--output DIR` writes the figures to DIR/soak.json; `--trace-memory` also
compares tracemalloc snapshots taken at the first and the last
post-warm-up samples, and prints the allocation sites that grew most (slow: use it on
short runs to find what a long one would leak).

    python -m emu.soak [--hours 24] [--nodes 1000] [--output DIR] [--trace-memory]
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

from emu.bench.figures import rss_mb
from emu.config.configuration import Configuration
from emu.metrics.fault_report import describe
from emu.resources import Resource
from emu.rm.retention import DEFAULT_MAX_COMPLETED, MAX_COMPLETED
from emu.scenario.native import Fault
from emu.simulation import Simulation, run_virtual
from emu.workload import JobSpec, NodeSpec, TaskSpec, Workload

JOB_EVERY_MS = 20_000
FAULT_EVERY_MS = 20 * 60_000
SAMPLE_EVERY_S = 300
TOLERANCE = 0.10


def cluster(nodes: int, per_rack: int = 40) -> list[NodeSpec]:
    """`nodes` identical 64 GiB / 32-vcore hosts, `per_rack` to a rack."""
    return [
        NodeSpec(f"host{i:05d}", f"/rack{i // per_rack:03d}", Resource(65536, 32))
        for i in range(nodes)
    ]


def workload(jobs: int, nodes: list[NodeSpec], span_ms: int, maps: int, map_ms: int) -> Workload:
    """MapReduce jobs submitted evenly over `span_ms`, maps preferring 3
    hosts each (a deterministic choice), one reduce per 10 maps."""
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


def faults(hours: float, hosts: list[str], jobs: list[str]) -> list[Fault]:
    """The faults of a soak of `hours`: one round every 20 simulated minutes."""
    out = []
    rounds = int(hours * 3_600_000 // FAULT_EVERY_MS)
    for r in range(rounds):
        at = (r + 1) * FAULT_EVERY_MS - 10 * 60_000
        host = hosts[(r * 37) % len(hosts)]
        out.append(Fault(at, "nm_crash", host))
        out.append(Fault(at + 10 * 60_000, "nm_restart", host))
        hung, crashed = (
            jobs[(at // JOB_EVERY_MS) % len(jobs)],
            jobs[(at // JOB_EVERY_MS + 1) % len(jobs)],
        )
        out.append(Fault(at + 30_000, "am_hang", hung))
        out.append(Fault(at + 60_000, "am_crash", crashed))
        if r % 3 == 2:
            out.append(Fault(at + 90_000, "decommission", hosts[(r * 53 + 1) % len(hosts)]))
    return sorted(out, key=lambda f: (f.at_ms, f.kind, f.target))


def soak(
    hours: float,
    nodes: int,
    max_completed_apps: int = DEFAULT_MAX_COMPLETED,
    trace_memory: bool = False,
) -> dict[str, Any]:
    """Run the soak; its figures (and, with `trace_memory`, the top growing
    allocation sites after warm-up as text lines)."""
    spec = cluster(nodes)
    jobs = int(hours * 3_600_000 // JOB_EVERY_MS)
    wl = workload(jobs, spec, jobs * JOB_EVERY_MS, 60, 90_000)
    conf = Configuration(
        {
            "yarn.resourcemanager.scheduler.class": "fifo",
            "yarn.nm.liveness-monitor.expiry-interval-ms": "300000",
            "yarn.am.liveness-monitor.expiry-interval-ms": "300000",
            "yarn.resourcemanager.am.max-attempts": "4",
            MAX_COMPLETED: str(max_completed_apps),
        }
    )
    samples: list[tuple[int, float]] = []
    warm_up_s = hours * 3600 / 4
    traced: list[tracemalloc.Snapshot] = []
    if trace_memory:
        tracemalloc.start(6)

    def sample(rm: Any) -> None:
        seconds = rm.ctx.now_ms() // 1000
        if seconds % SAMPLE_EVERY_S == 0 and (not samples or samples[-1][0] != seconds):
            samples.append((seconds, rss_mb()))
            if trace_memory and seconds >= warm_up_s:
                # The first post-warm-up snapshot and the latest one: both
                # in steady state, unlike the end, when the run winds down.
                gc.collect()
                del traced[1:]
                traced.append(tracemalloc.take_snapshot())

    sim = Simulation(
        conf,
        spec,
        wl,
        faults(hours, [n.host for n in spec], [j.job_id for j in wl.jobs]),
        seed=1,
        on_tick=sample,
        check_invariants=True,
        invariant_interval_ms=60_000,
    )
    started = time.perf_counter()
    result = run_virtual(sim)
    wall = time.perf_counter() - started
    growth: list[str] = []
    if len(traced) == 2:
        stats = traced[1].compare_to(traced[0], "traceback")
        tracemalloc.stop()
        for stat in stats[:15]:
            growth.append(f"{stat.size_diff / 1024:+9.1f} KB {stat.count_diff:+8d} blocks")
            growth.extend(f"    {line}" for line in stat.traceback.format()[-6:])
    warm = [s for s in samples if s[0] >= result.simulated_ms / 1000 / 4]
    base = warm[0][1] if warm else 0.0
    drift = [(rss - base) / base for _, rss in warm] if base else [0.0]
    finished = sum(1 for j in result.jobs if j["state"] == "FINISHED")
    return {
        "hours": hours,
        "nodes": nodes,
        "jobs": jobs,
        "finished": finished,
        "simulated_s": result.simulated_ms / 1000,
        "wall_s": wall,
        "samples": samples,
        "drift_min": min(drift),
        "drift_max": max(drift),
        "faults": result.faults,
        "max_completed_apps": max_completed_apps,
        "growth": growth,
        "ok": finished == jobs and all(abs(d) <= TOLERANCE for d in drift),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m emu.soak", description=__doc__)
    parser.add_argument("--hours", type=float, default=24.0, help="simulated hours (default 24)")
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument(
        "--max-completed-apps",
        type=int,
        default=DEFAULT_MAX_COMPLETED,
        help=f"{MAX_COMPLETED} (default {DEFAULT_MAX_COMPLETED}, YARN's)",
    )
    parser.add_argument("--output", "-o", type=Path, help="write the figures to DIR/soak.json")
    parser.add_argument(
        "--trace-memory", action="store_true", help="print what grew after warm-up (slow)"
    )
    args = parser.parse_args(argv)
    r = soak(args.hours, args.nodes, args.max_completed_apps, args.trace_memory)
    if args.output is not None:
        args.output.mkdir(parents=True, exist_ok=True)
        (args.output / "soak.json").write_text(json.dumps(r, indent=2) + "\n")
    print("simulated min  RSS MB")
    for seconds, rss in r["samples"]:
        print(f"{seconds / 60:13.0f}  {rss:6.1f}")
    print(
        f"{r['nodes']} nodes, {r['hours']:g} h: simulated {r['simulated_s']:.0f} s in "
        f"{r['wall_s']:.0f} s wall ({r['simulated_s'] / r['wall_s']:.1f} sim s / wall s); "
        f"jobs {r['finished']} of {r['jobs']} finished; invariants held"
    )
    print(describe(r["faults"]))
    print(
        f"memory after warm-up: {r['drift_min']:+.1%} .. {r['drift_max']:+.1%} of its first "
        f"sample (limit +-{TOLERANCE:.0%}): {'PASS' if r['ok'] else 'FAIL'}"
    )
    if r["growth"]:
        print("allocation sites that grew most after warm-up:")
        print("\n".join(r["growth"]))
    return 0 if r["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())

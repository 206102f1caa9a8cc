"""The figures `make bench` prints, each beside its target (issue 12).

Each figure runs in a child process of its own, so its peak RSS is its own
and one figure's garbage never slows the next. A run goes through the same
path as `emu sls` (Hadoop configuration directory, SLS trace, nodes file)
on the virtual clock, and samples the cluster once per simulated second.

- P1: 1,000 nodes, the benchmark workload (`emu.bench.workload`) over one
  simulated hour, under Fair/drf, Capacity and FIFO: simulated s per wall s.
- P2: 10,000 nodes, the same workload at 10x the arrival rate over ten
  simulated minutes: simulated s per wall s and peak RSS.
- P4: 1,000 nodes, 200 jobs x 100 maps submitted at t=0, Fair/drf:
  containers allocated per wall second until the last one is placed.
- P6: wall time per simulated second and per 1,000 nodes at 1k, 2k, 5k and
  10k nodes with the same load per node: growth at most linear in nodes.

    python -m emu.bench [--quick] [--only NAME ...] [--work-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import trio

from emu.bench import workload as W
from emu.clock import seed_scheduler, virtual_clock
from emu.sls import SlsOptions, prepare, simulation_for


@dataclass
class Sample:
    """The cluster at one simulated second."""

    wall_s: float
    sim_s: float
    running_apps: int
    allocated_mb: int
    containers_total: int
    rss_mb: float = 0.0


@dataclass
class RunStats:
    """One bench run: totals, and the samples they came from."""

    nodes: int
    jobs: int
    finished: int
    containers: int
    simulated_s: float
    wall_s: float
    heartbeats: int
    peak_rss_mb: float
    base_rss_mb: float
    samples: list[Sample] = field(default_factory=list)
    prepared_rss_mb: float = 0.0
    """RSS once the trace and configuration are read, before the cluster."""

    @property
    def sim_per_wall(self) -> float:
        return self.simulated_s / self.wall_s

    def steady(self, from_s: float, to_s: float) -> tuple[float, float, float]:
        """(simulated s per wall s, mean running apps, mean memory allocated
        share) between two simulated times."""
        window = [s for s in self.samples if from_s <= s.sim_s <= to_s]
        if len(window) < 2:
            return self.sim_per_wall, 0.0, 0.0
        wall = window[-1].wall_s - window[0].wall_s
        sim = window[-1].sim_s - window[0].sim_s
        apps = sum(s.running_apps for s in window) / len(window)
        mem = sum(s.allocated_mb for s in window) / len(window)
        return sim / max(wall, 1e-9), apps, mem / (self.nodes * W.NODE_MEMORY_MB)

    def kb_per_node(self) -> float:
        """What the cluster itself costs per node: RSS at the first sample
        after one simulated second (every node registered, hardly any app)
        less RSS once the inputs were read."""
        first = next((s for s in self.samples if s.sim_s >= 1), None)
        if first is None:
            return 0.0
        return (first.rss_mb - self.prepared_rss_mb) * 1024 / self.nodes

    def kb_per_running_app(self) -> float:
        """RSS per running app, its containers included: the least-squares
        slope of RSS over the running apps across the samples from one
        simulated second (the cluster built) up to the peak of running apps
        (RSS seldom shrinks, so later samples would only flatten the slope)."""
        built = [s for s in self.samples if s.sim_s >= 1]
        if not built:
            return 0.0
        top = max(range(len(built)), key=lambda i: built[i].running_apps)
        window = built[: top + 1]
        n = len(window)
        if n < 2:
            return 0.0
        mx = sum(s.running_apps for s in window) / n
        my = sum(s.rss_mb for s in window) / n
        var = sum((s.running_apps - mx) ** 2 for s in window)
        if var == 0:
            return 0.0
        cov = sum((s.running_apps - mx) * (s.rss_mb - my) for s in window)
        return cov / var * 1024

    def memory_detail(self) -> str:
        return (
            f"peak RSS {self.peak_rss_mb:.0f} MB, "
            f"{(self.peak_rss_mb - self.base_rss_mb) * 1024 / self.nodes:.0f} KB/node all included "
            f"(inputs {self.prepared_rss_mb - self.base_rss_mb:.0f} MB; cluster "
            f"{self.kb_per_node():.1f} KB/node; {self.kb_per_running_app():.0f} KB per running app)"
        )

    def wall_until_containers(self, n: int) -> float:
        """Wall seconds from the start until `n` containers were allocated."""
        for s in self.samples:
            if s.containers_total >= n:
                return s.wall_s
        return self.wall_s


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * resource.getpagesize() / 2**20


def run_trace(inputs: Path, scheduler: str, trace: str = "trace.json") -> RunStats:
    """Replay `inputs/trace.json` on `inputs/nodes.json` with the
    configuration directory `inputs/<scheduler>` (as `emu sls` would) and
    sample it every simulated second."""
    opts = SlsOptions(
        tracetype="SLS",
        traces=[str(inputs / trace)],
        output_dir=inputs / "out",
        nodes_file=str(inputs / "nodes.json"),
        conf_dir=str(inputs / scheduler),
    )
    base = rss_mb()
    p = prepare(opts)
    samples: list[Sample] = []
    started = 0.0

    def tick(rm: Any) -> None:
        sched = rm.ctx.scheduler
        samples.append(
            Sample(
                time.perf_counter() - started,
                rm.ctx.now_ms() / 1000,
                sum(1 for a in rm.ctx.apps.values() if a.state == "RUNNING"),
                sched.used.memory,
                sched.container_total,
                rss_mb(),
            )
        )

    sim = simulation_for(p, on_tick=tick)
    prepared = rss_mb()
    seed_scheduler(p.seed)
    started = time.perf_counter()
    result = trio.run(sim.run, clock=virtual_clock())
    wall = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return RunStats(
        nodes=len(p.nodes),
        jobs=len(result.jobs),
        finished=sum(1 for j in result.jobs if j.get("state") == "FINISHED"),
        containers=result.metrics["containers_total"],
        simulated_s=result.simulated_ms / 1000,
        wall_s=wall,
        heartbeats=result.heartbeats,
        peak_rss_mb=peak,
        base_rss_mb=base,
        samples=samples,
        prepared_rss_mb=prepared,
    )


# --- figures --------------------------------------------------------------------------------
@dataclass
class Figure:
    """One line of the report: what was measured beside what it should be."""

    name: str
    measured: str
    target: str
    met: bool
    detail: str


def _p1(work: Path, scheduler: str, quick: bool) -> list[Figure]:
    span = 600 if quick else 3600
    inputs = _inputs(work, f"p1-{span}", nodes=1000, span_s=span)
    r = run_trace(inputs, scheduler)
    steady, apps, mem = r.steady(span / 3, span)
    detail = (
        f"{r.simulated_s:.0f} sim s in {r.wall_s:.1f} wall s; {r.finished}/{r.jobs} jobs, "
        f"{r.containers} containers; steady state {steady:.1f}x with {apps:.0f} running apps, "
        f"{mem:.0%} memory; {r.heartbeats / r.wall_s:,.0f} heartbeats/s, "
        f"{r.containers / r.wall_s:,.0f} allocations/s; {r.memory_detail()}"
    )
    ok = r.sim_per_wall >= 100 and r.finished == r.jobs
    name = f"P1 {scheduler}" + (" (10 min)" if quick else "")
    return [Figure(name, f"{r.sim_per_wall:.1f}x", ">= 100x, all jobs", ok, detail)]


def _p2(work: Path, quick: bool) -> list[Figure]:
    nodes = 2000 if quick else 10_000
    span = 120 if quick else 600
    inputs = _inputs(work, f"p2-{nodes}-{span}", nodes=nodes, span_s=span)
    r = run_trace(inputs, "fair")
    steady, apps, mem = r.steady(span / 3, span)
    detail = (
        f"{nodes} nodes, {r.simulated_s:.0f} sim s in {r.wall_s:.1f} wall s; "
        f"{r.finished}/{r.jobs} jobs; steady {steady:.1f}x, {apps:.0f} running apps, "
        f"{mem:.0%} memory; {r.memory_detail()}"
    )
    ok = r.sim_per_wall >= 10 and r.peak_rss_mb <= 1024
    name = "P2 fair" + (f" ({nodes} nodes, quick)" if quick else "")
    return [
        Figure(
            name, f"{r.sim_per_wall:.1f}x, {r.peak_rss_mb:.0f} MB", ">= 10x, <= 1 GiB", ok, detail
        )
    ]


def _p4(work: Path, quick: bool) -> list[Figure]:
    jobs_n, maps = (50, 100) if quick else (200, 100)
    inputs = work / f"p4-{jobs_n}x{maps}"
    if not (inputs / "trace.json").exists():
        W.write_conf_dirs(inputs)
        W.write_nodes(inputs / "nodes.json", 1000)
        W.write_trace(inputs / "trace.json", W.burst(jobs_n, maps, seed=1))
    r = run_trace(inputs, "fair")
    total = jobs_n * (maps + 1)
    wall = r.wall_until_containers(total)
    rate = total / wall
    detail = f"{total} containers placed in {wall:.2f} wall s; {r.finished}/{r.jobs} jobs"
    name = "P4 fair burst" + (" (quick)" if quick else "")
    return [Figure(name, f"{rate:,.0f}/s", ">= 20,000 containers/s", rate >= 20_000, detail)]


def _p6(work: Path, quick: bool) -> list[Figure]:
    sizes = (1000, 2000) if quick else (1000, 2000, 5000, 10_000)
    span = 60 if quick else 120
    per_k = []
    for n in sizes:
        inputs = _inputs(work, f"p6-{n}-{span}", nodes=n, span_s=span)
        r = run_trace(inputs, "fair")
        per_k.append((n, r.wall_s / r.simulated_s / (n / 1000)))
    growth = per_k[-1][1] / per_k[0][1]
    detail = "; ".join(f"{n} nodes {x * 1000:.1f} wall ms per sim s per 1k nodes" for n, x in per_k)
    return [
        Figure("P6 growth in nodes", f"{growth:.2f}", "<= 1.25 (linear)", growth <= 1.25, detail)
    ]


def _inputs(work: Path, name: str, nodes: int, span_s: float) -> Path:
    """Generated once per shape and reused: the generator is seeded."""
    out = work / name
    if not (out / "trace.json").exists():
        out.mkdir(parents=True, exist_ok=True)
        W.write_conf_dirs(out)
        W.write_nodes(out / "nodes.json", nodes)
        W.write_trace(out / "trace.json", W.jobs(nodes, span_s, 0.8, seed=1))
    return out


FIGURES = {
    "p1-fair": lambda w, q: _p1(w, "fair", q),
    "p1-capacity": lambda w, q: _p1(w, "capacity", q),
    "p1-fifo": lambda w, q: _p1(w, "fifo", q),
    "p2": _p2,
    "p4": _p4,
    "p6": _p6,
}
QUICK = ("p1-fair", "p4")


def _child(name: str, work: Path, quick: bool) -> list[Figure]:
    """Run one figure in a fresh interpreter and read its result back."""
    cmd = [sys.executable, "-m", "emu.bench.figures", "--child", name, "--work-dir", str(work)]
    if quick:
        cmd.append("--quick")
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return [Figure(name, "error", "", False, tail)]
    return [Figure(**f) for f in json.loads(done.stdout)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m emu.bench",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--quick", action="store_true", help="small versions (under 2 minutes)")
    parser.add_argument("--only", nargs="+", choices=sorted(FIGURES), help="figures to run")
    parser.add_argument("--work-dir", type=Path, help="where generated inputs are kept")
    parser.add_argument("--child", choices=sorted(FIGURES), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    work = args.work_dir or Path(tempfile.gettempdir()) / "emu-bench"
    work.mkdir(parents=True, exist_ok=True)
    if args.child:
        figures = FIGURES[args.child](work, args.quick)
        print(json.dumps([asdict(f) for f in figures]))
        return 0
    names = args.only or (list(QUICK) if args.quick else list(FIGURES))
    print(f"{'figure':28} {'measured':>18} {'target':>24}  met")
    for name in names:
        for f in _child(name, work, args.quick):
            print(f"{f.name:28} {f.measured:>18} {f.target:>24}  {'yes' if f.met else 'NO'}")
            print(f"    {f.detail}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

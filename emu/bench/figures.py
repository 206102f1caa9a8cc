"""The figures `make bench` prints, each beside its target.

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
- H1: P1 with Hadoop's own FairScheduler and CapacityScheduler deciding
  (`--scheduler-impl hadoop`, Apache Hadoop from `make hadoop`): simulated
  s per wall s; "not run", saying why, without a JVM or the jars.
- P3: `emu cluster up`, 10,000 NMs in NM processes (real subprocesses over
  ZeroMQ on loopback), rate 1, Fair/drf, the 1,000-node workload for a
  window of wall time: nodes lost and heartbeat round trips (p50/p99), as
  the NM processes measure them, after every node registered.

Before and after the figures it times two fixed reference loops (compute
and memory, `emu.bench.calibrate`): the machine's speed at the time, since
the figures are ratios to wall time on a machine whose speed drifts.

    python -m emu.bench [--quick] [--only NAME ...] [--work-dir DIR]
                        [--p3-nm-procs K ...] [--p3-window-s S]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from emu import native
from emu.bench import calibrate, paired
from emu.bench import workload as W
from emu.bench.paired import Replay
from emu.clock import run_deterministically, virtual_clock
from emu.sls import SlsOptions, prepare, simulation_for
from emu.timing import YARN


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

    def cluster_filled(self, before_s: float) -> tuple[int, float] | None:
        """(containers placed, wall s) at the first sample that reached the
        most containers placed before simulated `before_s`: the burst that
        fills the cluster, before the first container ends frees room and
        the figure starts to measure task durations instead of the
        scheduler. None without a sample before `before_s`."""
        early = [s for s in self.samples if s.sim_s < before_s]
        if not early:
            return None
        most = max(s.containers_total for s in early)
        first = next(s for s in early if s.containers_total == most)
        return most, first.wall_s

    def wall_until_containers(self, n: int) -> float:
        """Wall seconds from the start until `n` containers were allocated."""
        for s in self.samples:
            if s.containers_total >= n:
                return s.wall_s
        return self.wall_s


def rss_mb() -> float:
    """This process's resident set now. Read every simulated second, so
    from a descriptor kept open: opening the file for each read was ~0.5 %
    of a P1 run, the measurement's own cost."""
    global _statm
    if _statm is None:
        _statm = os.open("/proc/self/statm", os.O_RDONLY)
    pages = int(os.pread(_statm, 256, 0).split()[1])
    return pages * resource.getpagesize() / 2**20


_statm: int | None = None


RUNNING_EVERY = 10
"""Samples between two counts of the running apps (the others repeat the
last count): the steady-state figure averages them over thousands."""


def run_trace(
    inputs: Path,
    scheduler: str,
    trace: str = "trace.json",
    impl: str = "emu",
    properties: dict[str, str] | None = None,
) -> RunStats:
    """Replay `inputs/trace.json` on `inputs/nodes.json` with the
    configuration directory `inputs/<scheduler>` (as `emu sls` would) and
    sample it every simulated second; `impl` hadoop runs Hadoop's own
    scheduler class instead of emu's; `properties` are set over the files."""
    opts = SlsOptions(
        tracetype="SLS",
        traces=[str(inputs / trace)],
        output_dir=inputs / "out",
        nodes_file=str(inputs / "nodes.json"),
        conf_dir=str(inputs / scheduler),
        overrides={"emu.scheduler.impl": impl, **(properties or {})},
        # YARN's AM and NM timing, as every figure in BENCHMARKS.md was taken
        # with: `emu sls`'s default (SLS's, emu.timing) acts on each reply a
        # heartbeat later, which is other work, not other speed.
        timing=YARN,
    )
    base = rss_mb()
    p = prepare(opts)
    samples: list[Sample] = []
    started = 0.0

    running = [0]

    def tick(rm: Any) -> None:
        sched = rm.ctx.scheduler
        now_s = rm.ctx.now_ms() / 1000
        if len(samples) % RUNNING_EVERY == 0:
            # A walk over every retained app: once per RUNNING_EVERY samples
            # (per second it was ~1.5 % of a P1 run, the measurement's own cost).
            running[0] = sum(1 for a in rm.ctx.apps.values() if a.state == "RUNNING")
        samples.append(
            Sample(
                time.perf_counter() - started,
                now_s,
                running[0],
                sched.used.memory,
                sched.container_total,
                rss_mb(),
            )
        )

    sim = simulation_for(p, on_tick=tick)
    prepared = rss_mb()
    started = time.perf_counter()
    result = run_deterministically(sim.run, virtual_clock())
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
    value: float = 0.0
    """The figure as a number (the ratio, or containers per wall s), for a
    target set against another figure of the same run (H1 against P1)."""


def _p1_figure(
    work: Path,
    scheduler: str,
    quick: bool,
    impl: str,
    name: str,
    floor: float,
    properties: dict[str, str] | None = None,
) -> list[Figure]:
    """The P1 trace (1000 nodes, an hour or ten minutes) replayed with
    `impl` deciding, met at `floor` times faster than real time with every
    job finished: P1 and H1 differ only in who schedules and the bar."""
    span = 600 if quick else 3600
    inputs = _p1_inputs(work, quick)
    r = run_trace(inputs, scheduler, impl=impl, properties=properties)
    steady, apps, mem = r.steady(span / 3, span)
    detail = (
        f"{r.simulated_s:.0f} sim s in {r.wall_s:.1f} wall s; {r.finished}/{r.jobs} jobs, "
        f"{r.containers} containers; steady state {steady:.1f}x with {apps:.0f} running apps, "
        f"{mem:.0%} memory; {r.heartbeats / r.wall_s:,.0f} heartbeats/s, "
        f"{r.containers / r.wall_s:,.0f} allocations/s; {r.memory_detail()}"
    )
    ok = r.sim_per_wall >= floor and r.finished == r.jobs
    target = f">= {floor:g}x, all jobs"
    return [Figure(name, f"{r.sim_per_wall:.1f}x", target, ok, detail, r.sim_per_wall)]


P1_FLOOR = 200
"""P1's bar: simulated seconds per wall second at 1,000 busy nodes."""
H1_TARGET = "within 2x of P1, all jobs"
"""H1's bar: Hadoop's own scheduler no slower than half emu's port (P1 of
the same scheduler in the same run)."""


def within_of_p1(h1: Figure, p1: Figure) -> None:
    """Set H1's `met` against P1 of the same scheduler from the same run."""
    ratio = p1.value / h1.value if h1.value else math.inf
    h1.met = h1.met and ratio <= 2  # `met` so far: every job finished
    h1.detail = f"P1 {p1.measured} in this run, {ratio:.2f}x H1's time; " + h1.detail


def _p1(work: Path, scheduler: str, quick: bool) -> list[Figure]:
    name = f"P1 {scheduler}" + (" (10 min)" if quick else "")
    return _p1_figure(work, scheduler, quick, "emu", name, P1_FLOOR)


def _p1_async(work: Path, quick: bool) -> list[Figure]:
    """P1 capacity as Hadoop 3.5.0 schedules by default: asynchronous passes
    every 5 ms instead of allocation on node heartbeats."""
    name = "P1 capacity, 3.5.0 asynchronous" + (" (10 min)" if quick else "")
    return _p1_figure(work, "capacity", quick, "emu", name, P1_FLOOR, _async_props())


def _p1_multi_node(work: Path, quick: bool) -> list[Figure]:
    """P1 capacity with global scheduling (multi-node placement) under
    3.5.0's asynchronous passes: each offer is the whole cluster, each app
    walking the nodes least-allocated first."""
    name = "P1 capacity, 3.5.0 multi-node" + (" (10 min)" if quick else "")
    return _p1_figure(work, "capacity", quick, "emu", name, P1_FLOOR, _multi_node_props())


def _h1(work: Path, scheduler: str, quick: bool) -> list[Figure]:
    """P1 with Hadoop's own scheduler class deciding (`--scheduler-impl hadoop`)."""
    from emu.errors import InputError
    from emu.hadoop import classpath

    name = f"H1 hadoop {scheduler}" + (" (10 min)" if quick else "")
    try:
        classpath.resolve(fetch=False)
    except InputError as e:
        return [Figure(name, "not run", H1_TARGET, False, f"{e} (make hadoop)")]
    # The bar is relative to P1 in the same run: the parent sets `met`
    # (`within_of_p1`); on its own the figure is only all jobs finished.
    (f,) = _p1_figure(work, scheduler, quick, "hadoop", name, 0)
    f.target = H1_TARGET
    return [f]


def _large(
    inputs: Path, name: str, nodes: int, span: float, floor: float, rss_mb: float
) -> list[Figure]:
    """A large cluster under Fair/drf, arrivals sized to keep 80 % of its
    memory allocated (the rate grows with the nodes): simulated s per wall
    s and peak RSS, each against its bar."""
    r = run_trace(inputs, "fair")
    steady, apps, mem = r.steady(span / 3, span)
    detail = (
        f"{nodes} nodes, {r.simulated_s:.0f} sim s in {r.wall_s:.1f} wall s; "
        f"{r.finished}/{r.jobs} jobs; steady {steady:.1f}x, {apps:.0f} running apps, "
        f"{mem:.0%} memory; {r.heartbeats / r.wall_s:,.0f} heartbeats/s; {r.memory_detail()}"
    )
    ok = r.sim_per_wall >= floor and r.peak_rss_mb <= rss_mb
    measured = f"{r.sim_per_wall:.1f}x, {r.peak_rss_mb:.0f} MB"
    target = f">= {floor:g}x, <= {rss_mb / 1024:g} GiB"
    return [Figure(name, measured, target, ok, detail, r.sim_per_wall)]


def _p2_shape(quick: bool) -> tuple[int, int]:
    """P2: 10,000 nodes, ten simulated minutes (10x P1's arrival rate)."""
    return (2000, 120) if quick else (10_000, 600)


def _p7_shape(quick: bool) -> tuple[int, int]:
    """P7: 50,000 nodes in 1,250 racks, five simulated minutes (50x P1's rate)."""
    return (10_000, 60) if quick else (50_000, 300)


def _large_inputs(work: Path, figure: str, shape: tuple[int, int]) -> Path:
    nodes, span = shape
    return _inputs(work, f"{figure}-{nodes}-{span}", nodes=nodes, span_s=span)


def _p2(work: Path, quick: bool) -> list[Figure]:
    nodes, span = _p2_shape(quick)
    inputs = _large_inputs(work, "p2", (nodes, span))
    name = "P2 fair" + (f" ({nodes} nodes, quick)" if quick else "")
    return _large(inputs, name, nodes, span, 30, 1024)


def _p7(work: Path, quick: bool) -> list[Figure]:
    nodes, span = _p7_shape(quick)
    inputs = _large_inputs(work, "p7", (nodes, span))
    name = "P7 fair" + (f" ({nodes} nodes, quick)" if quick else "")
    return _large(inputs, name, nodes, span, 5, 4096)


def _f1(work: Path, quick: bool) -> list[Figure]:
    """F1: P7's nodes and workload as a federation of 10 sub-clusters of
    5,000 nodes (quick: P7 quick's 10,000 as 4 of 2,500), Fair/drf in each,
    Hadoop's WeightedLocalityPolicyManager with equal weights, in one
    process (the target is across processes: not built yet)."""
    from emu.bench.federation import write_federation
    from emu.federation import description
    from emu.federation.run import run_federation_file

    nodes, span = _p7_shape(quick)
    subclusters = 4 if quick else 10
    inputs = _large_inputs(work, "p7", (nodes, span))
    fed = description.load(write_federation(inputs, subclusters))
    started = time.perf_counter()
    run = run_federation_file(fed, fed.seed)
    wall = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    ratio = run.result.simulated_ms / 1000 / wall
    rows = run.summary["jobs"]
    finished = sum(r["state"] == "FINISHED" for r in rows)
    section = run.summary["federation"]
    detail = (
        f"{nodes} nodes in {subclusters} sub-clusters, {run.result.simulated_ms / 1000:.0f} sim s "
        f"in {wall:.1f} wall s; {finished}/{len(rows)} jobs; {section['unmanaged_ams']} "
        f"unmanaged AMs, {section['containers_across_sub_clusters']} containers across "
        "sub-clusters; one process"
    )
    name = "F1 federation fair" + (f" ({nodes} nodes, quick)" if quick else "")
    measured = f"{ratio:.1f}x, {peak:.0f} MB"
    return [Figure(name, measured, ">= 5x (across processes)", ratio >= 5, detail, ratio)]


def _p4_inputs(work: Path, quick: bool) -> tuple[Path, int]:
    """P4's inputs (1,000 nodes; 1,000 jobs x 100 maps at t=0, quick 50)
    and the containers it places (maps and AMs)."""
    jobs_n, maps = (50, 100) if quick else (1000, 100)
    inputs = work / f"p4-{jobs_n}x{maps}"
    if not (inputs / "trace.json").exists():
        W.write_conf_dirs(inputs)
        W.write_nodes(inputs / "nodes.json", 1000)
        W.write_trace(inputs / "trace.json", W.burst(jobs_n, maps, seed=1))
    return inputs, jobs_n * (maps + 1)


def _p4(work: Path, quick: bool) -> list[Figure]:
    inputs, total = _p4_inputs(work, quick)
    r = run_trace(inputs, "fair")
    wall = r.wall_until_containers(total)
    rate = total / wall
    detail = f"{total} containers placed in {wall:.2f} wall s; {r.finished}/{r.jobs} jobs"
    filled = r.cluster_filled(W.BURST_TASK_MS / 1000)
    if filled is not None:
        n, at = filled
        detail += (
            f"; until the cluster was full (before any map ended): {n} in {at:.2f} wall s, "
            f"{n / max(at, 1e-9):,.0f}/s"
        )
    name = "P4 fair burst" + (" (quick)" if quick else "")
    ok = rate >= 50_000
    return [Figure(name, f"{rate:,.0f}/s", ">= 50,000 containers/s", ok, detail, rate)]


def _p6_inputs(work: Path, quick: bool) -> list[tuple[int, Path]]:
    """P6's clusters (1k, 2k, 5k, 10k, 50k nodes; quick 1k, 2k), two
    simulated minutes each (one quick), each with P1's load per node."""
    sizes = (1000, 2000) if quick else (1000, 2000, 5000, 10_000, 50_000)
    span = 60 if quick else 120
    return [(n, _inputs(work, f"p6-{n}-{span}", nodes=n, span_s=span)) for n in sizes]


def _p6(work: Path, quick: bool) -> list[Figure]:
    per_k = []
    for n, inputs in _p6_inputs(work, quick):
        r = run_trace(inputs, "fair")
        per_k.append((n, r.wall_s / r.simulated_s / (n / 1000)))
    growth = per_k[-1][1] / per_k[0][1]
    detail = "; ".join(f"{n} nodes {x * 1000:.1f} wall ms per sim s per 1k nodes" for n, x in per_k)
    ok = growth <= 1.25
    return [Figure("P6 growth in nodes", f"{growth:.2f}", "<= 1.25 (linear)", ok, detail, growth)]


@dataclass
class P3Options:
    """P3's knobs (`--p3-nm-procs`, `--p3-window-s`); None: the defaults."""

    nm_procs: list[int] | None = None
    window_s: float | None = None
    sized: bool = False
    """Arrivals sized for the cluster (10x at 10,000 nodes) instead of the
    1,000-node workload: the RM's scheduling load grows tenfold."""


P3 = P3Options()
P3_NODES, P3_NM_PROCS, P3_WINDOW_S = 10_000, (8,), 600.0
P3_QUICK = (2000, (2,), 60.0)


def cluster_up_hosts(nodes: int, nm_procs: int) -> list[tuple[str, str]]:
    """(rack, host) of each node as `emu cluster up` names and places them:
    node1..N, NM process k's share on /rack<k>."""
    per, extra = divmod(nodes, nm_procs)
    out: list[tuple[str, str]] = []
    for k in range(nm_procs):
        for _ in range(per + (1 if k < extra else 0)):
            out.append((f"rack{k + 1}", f"node{len(out) + 1}"))
    return out


def p3_inputs(work: Path, nodes: int, nm_procs: int, span_s: float, sized_for: int = 1000) -> Path:
    """The 1,000-node benchmark workload over `span_s` (the first `span_s`
    of P1's hour: the generator is sequential), its preferred hosts renamed
    to the nodes `emu cluster up` starts (host i -> node i+1, on that node's
    rack; modulo the nodes on a test cluster of fewer than 1,000), and the
    Fair/drf configuration directory. `sized_for`: the cluster the
    arrivals are sized for (80 % of its memory), 1,000 nodes by default."""
    suffix = f"-for{sized_for}" if sized_for != 1000 else ""
    out = work / f"p3-{nodes}-{nm_procs}-{span_s:g}{suffix}"
    if (out / "trace.json").exists():
        return out
    out.mkdir(parents=True, exist_ok=True)
    W.write_conf_dirs(out)
    hosts = cluster_up_hosts(nodes, nm_procs)
    job_list = W.jobs(sized_for, span_s, 0.8, seed=1)
    for job in job_list:
        for task in job["job.tasks"]:
            where = task.get("container.host")
            if where is not None:
                rack, host = hosts[int(where.rsplit("/host", 1)[1]) % nodes]
                task["container.host"] = f"/{rack}/{host}"
    W.write_trace(out / "trace.json", job_list)
    return out


def run_cluster(
    inputs: Path,
    nodes: int,
    nm_procs: int,
    window_s: float,
    run_dir: Path,
    extra: tuple[object, ...] = (),
) -> dict[str, Any]:
    """`emu cluster up` on P3's inputs for `window_s` wall seconds after
    every node registered (`extra`: more of its options); its
    `summary.json` (plus the command line and the load average)."""
    from emu.processes.cluster import emu_argv

    argv = emu_argv(
        "cluster", "up", "--nodes", nodes, "--nm-procs", nm_procs, "--rate", 1,
        "--memory-mb", W.NODE_MEMORY_MB, "--vcores", W.NODE_VCORES,
        "--conf-dir", inputs / "fair", "--trace", inputs / "trace.json", "--tracetype", "SLS",
        "--work-dir", run_dir, "--stop-after", window_s, "--web-port", -1,
        "--register-timeout", 600, *extra,
    )  # fmt: skip
    if run_dir.exists():
        shutil.rmtree(run_dir)
    run_dir.mkdir(parents=True)
    load_before = os.getloadavg()
    with open(run_dir / "cluster-up.log", "wb") as log:
        done = subprocess.run(argv, stdout=log, stderr=subprocess.STDOUT, check=False)
    summary_path = run_dir / "summary.json"
    if not summary_path.exists():
        tail = (run_dir / "cluster-up.log").read_text(errors="replace").strip().splitlines()
        raise RuntimeError(f"emu cluster up exited {done.returncode}: {(tail or ['?'])[-1]}")
    summary: dict[str, Any] = json.loads(summary_path.read_text())
    summary["argv"] = argv[2:]
    summary["load_avg_before"] = load_before
    summary["load_avg"] = os.getloadavg()
    summary_path.write_text(json.dumps(summary, indent=1))
    return summary


def p3_figure(summary: dict[str, Any], name: str) -> Figure:
    """P3's line from one `emu cluster up` summary: met when no node was
    lost (the RM's count, and no NM told to resync) and the heartbeat p99
    over the window after registration is under 250 ms."""
    m = summary.get("metrics") or {}
    w = summary["window"]
    lat = w["latency"]
    lost = m.get("lost_nodes", -1)
    resyncs = sum(n.get("resyncs", 0) for n in summary["nm"])
    errors = sum(n.get("errors", 0) for n in summary["nm"])
    expected = summary["nodes"] * summary["rate"]  # 1 s heartbeats on the scaled clock
    cpu = w["cpu_pct"]
    nm_cpu = sum(v for k, v in cpu.items() if k.startswith("nm"))
    samples = summary.get("samples") or []
    last = samples[-1] if samples else {}
    load = summary.get("load_avg") or (0.0, 0.0, 0.0)
    before = summary.get("load_avg_before")
    detail = (
        f"{summary['nodes']} nodes in {summary['nm_procs']} NM processes, registered in "
        f"{summary['registered_s']:.1f} s; {summary['window_s']:.0f} s window: "
        f"{w['heartbeats']:,} heartbeats, {w['heartbeats_per_s']:,.0f}/s of {expected:,.0f}/s "
        f"expected, p50 {lat['p50_ms']:.1f} ms, p99 {lat['p99_ms']:.1f} ms, max "
        f"{lat['max_ms']:.0f} ms (whole run incl. registration: p99 "
        f"{summary['latency']['p99_ms']:.1f} ms); lost {lost}, resyncs {resyncs}, errors "
        f"{errors}; CPU % of a core: RM {cpu.get('rm', 0):.0f}, NM processes {nm_cpu:.0f}, "
        f"replay {cpu.get('replay', 0):.0f}; apps finished {m.get('apps_completed', 0)}, "
        f"running {last.get('apps_running', 0)}, memory {last.get('memory_used', 0):.0%}; "
        f"load average at the end {load[0]:.1f}/{load[1]:.1f}/{load[2]:.1f} (1/5/15 min)"
        + (f", 1 min before the run {before[0]:.1f}" if before else "")
    )
    ok = lost == 0 and resyncs == 0 and lat["p99_ms"] < 250 and lat["count"] > 0
    measured = f"lost {lost}, p99 {lat['p99_ms']:.0f} ms"
    return Figure(name, measured, "lost 0, p99 < 250 ms", ok, detail)


def _p3(work: Path, quick: bool) -> list[Figure]:
    nodes, default_procs, default_window = (
        P3_QUICK if quick else (P3_NODES, P3_NM_PROCS, P3_WINDOW_S)
    )
    procs = tuple(P3.nm_procs or default_procs)
    window = P3.window_s or default_window
    figures = []
    for k in procs:
        # Arrivals over the window only: what arrives later never runs in it.
        inputs = p3_inputs(work, nodes, k, window, nodes if P3.sized else 1000)
        run = work / (f"p3-run-{nodes}-{k}" + ("-sized" if P3.sized else ""))
        summary = run_cluster(inputs, nodes, k, window, run)
        name = f"P3 cluster up, {k} NM procs" + (" (quick)" if quick else "")
        name += ", sized" if P3.sized else ""
        figures.append(p3_figure(summary, name))
    return figures


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
    "p1-capacity-async": _p1_async,
    "p1-capacity-multi-node": _p1_multi_node,
    "p2": _p2,
    "p7": _p7,
    "f1": _f1,
    "p4": _p4,
    "p6": _p6,
    "p3": _p3,
    "h1-fair": lambda w, q: _h1(w, "fair", q),
    "h1-capacity": lambda w, q: _h1(w, "capacity", q),
}
QUICK = ("p1-fair", "p4", "p3")
ASKED_FOR_ONLY = ("f1",)
"""Figures run only when named (`--only`): F1 at full size outlasts the rest
of `make bench` together in one process."""


def _p1_inputs(work: Path, quick: bool) -> Path:
    span = 600 if quick else 3600
    return _inputs(work, f"p1-{span}", nodes=1000, span_s=span)


def _async_props() -> dict[str, str]:
    return {"emu.hadoop.version": "3.5.0"}


def _multi_node_props() -> dict[str, str]:
    from emu.rm.scheduler.capacity.multi_node import AS_OPERATORS_TURN_IT_ON

    return {**_async_props(), **AS_OPERATORS_TURN_IT_ON}


REPLAYS: dict[str, Callable[[Path, bool], list[Replay]]] = {
    "p1-fair": lambda w, q: [Replay(_p1_inputs(w, q), "fair")],
    "p1-capacity": lambda w, q: [Replay(_p1_inputs(w, q), "capacity")],
    "p1-fifo": lambda w, q: [Replay(_p1_inputs(w, q), "fifo")],
    "p1-capacity-async": lambda w, q: [Replay(_p1_inputs(w, q), "capacity", "emu", _async_props())],
    "p1-capacity-multi-node": lambda w, q: [
        Replay(_p1_inputs(w, q), "capacity", "emu", _multi_node_props())
    ],
    "p2": lambda w, q: [Replay(_large_inputs(w, "p2", _p2_shape(q)), "fair")],
    "p7": lambda w, q: [Replay(_large_inputs(w, "p7", _p7_shape(q)), "fair")],
    "p4": lambda w, q: [Replay(_p4_inputs(w, q)[0], "fair")],
    "p6": lambda w, q: [Replay(inputs, "fair") for _, inputs in _p6_inputs(w, q)],
    "h1-fair": lambda w, q: [Replay(_p1_inputs(w, q), "fair", "hadoop")],
    "h1-capacity": lambda w, q: [Replay(_p1_inputs(w, q), "capacity", "hadoop")],
}
"""What each figure replays, for its paired comparison (`--vs`): P3 has
none (its figure is latency over wall time, not CPU)."""

PAIRED_TARGET = {
    "p1-fair": 2.2,
    "p1-capacity": 2.2,
    "p1-fifo": 2.2,
    "p2": 3.5,
    "p7": 3.0,
    "p4": 2.0,
    "h1-fair": 2.5,
    "h1-capacity": 2.5,
}
"""How many times less CPU than the base each figure should take; the
figures without an entry are compared and printed, with no bar."""


def _child(name: str, work: Path, quick: bool) -> list[Figure]:
    """Run one figure in a fresh interpreter and read its result back."""
    cmd = [sys.executable, "-m", "emu.bench.figures", "--child", name, "--work-dir", str(work)]
    if quick:
        cmd.append("--quick")
    if P3.nm_procs:
        cmd += ["--p3-nm-procs", *map(str, P3.nm_procs)]
    if P3.window_s:
        cmd += ["--p3-window-s", str(P3.window_s)]
    if P3.sized:
        cmd.append("--p3-sized")
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
    parser.add_argument("--quick", action="store_true", help="small versions (under two minutes)")
    parser.add_argument("--only", nargs="+", choices=sorted(FIGURES), help="figures to run")
    parser.add_argument("--work-dir", type=Path, help="where generated inputs are kept")
    parser.add_argument(
        "--p3-nm-procs",
        type=int,
        nargs="+",
        metavar="K",
        help=f"P3: NM processes, one run each (default {P3_NM_PROCS[0]}; quick {P3_QUICK[1][0]})",
    )
    parser.add_argument(
        "--p3-window-s",
        type=float,
        metavar="S",
        help=f"P3: wall seconds measured after registration, at rate 1 as many simulated "
        f"(default {P3_WINDOW_S:g}; quick {P3_QUICK[2]:g}; 3600 for the whole hour)",
    )
    parser.add_argument(
        "--p3-sized",
        action="store_true",
        help="P3: arrivals sized for the cluster's nodes (10x the 1,000-node workload at "
        "10,000 nodes) instead of the 1,000-node workload",
    )
    parser.add_argument(
        "--vs",
        metavar="REV",
        help="also replay each figure's inputs on commit REV of this repository and on this "
        "build at once, one core each, and compare their user CPU seconds (REV is exported "
        "and compiled under the work directory once)",
    )
    parser.add_argument(
        "--pairs", type=int, default=1, metavar="N", help="paired runs per figure (--vs; default 1)"
    )
    parser.add_argument("--child", choices=sorted(FIGURES), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.pairs < 1:
        parser.error(f"--pairs must be at least 1, not {args.pairs}")
    P3.nm_procs, P3.window_s, P3.sized = args.p3_nm_procs, args.p3_window_s, args.p3_sized
    work = args.work_dir or Path(tempfile.gettempdir()) / "emu-bench"
    work.mkdir(parents=True, exist_ok=True)
    if args.child:
        figures = FIGURES[args.child](work, args.quick)
        print(json.dumps([asdict(f) for f in figures]))
        from emu.hadoop import bridge

        if bridge.jvm_started():
            bridge.exit_process(0)  # an H1 child: no finalization beside the JVM
        return 0
    names = args.only or (
        list(QUICK) if args.quick else [n for n in FIGURES if n not in ASKED_FOR_ONLY]
    )
    for h1 in ("h1-fair", "h1-capacity"):
        # H1's bar is P1 of the same scheduler in the same run.
        p1 = h1.replace("h1", "p1")
        if h1 in names and p1 not in names:
            names.insert(names.index(h1), p1)
    # Which form of the hot modules the figures measure (emu/native.py).
    print(f"emu: {native.describe()}; {os.cpu_count()} CPUs")
    base: Path | None = None
    if args.vs:
        try:
            base = paired.prepare_base(args.vs, work)
        except RuntimeError as e:
            # The figures still mean something alone (a shallow clone has no
            # history to pair with): say why, and run them.
            print(f"bench: no paired comparison against {args.vs}: {e}", flush=True)
    # The machine's speed now: the figures are wall-time ratios (calibrate.py).
    before = calibrate.describe()
    print(f"machine: reference loops {before} (lower is faster)", flush=True)
    print(f"{'figure':28} {'measured':>18} {'target':>24}  met")
    seen: dict[str, Figure] = {}
    for name in names:
        for f in _child(name, work, args.quick):
            if name.startswith("h1-") and name.replace("h1", "p1") in seen and f.value:
                within_of_p1(f, seen[name.replace("h1", "p1")])
            seen[name] = f
            print(f"{f.name:28} {f.measured:>18} {f.target:>24}  {'yes' if f.met else 'NO'}")
            print(f"    {f.detail}", flush=True)
        if base is not None and name in REPLAYS:
            print(f"    {_paired_line(name, base, args, work)}", flush=True)
    print(f"machine: reference loops {before} before the figures; {calibrate.describe()} after")
    return 0


def _paired_line(name: str, base: Path, args: argparse.Namespace, work: Path) -> str:
    """The paired comparison of figure `name` against the base, as a line."""
    try:
        pairing = paired.run_pairs(
            base, REPLAYS[name](work, args.quick), args.pairs, work / "paired" / name
        )
    except RuntimeError as e:
        return f"paired against {args.vs}: not measured: {e}"
    line = pairing.describe(args.vs)
    bar = PAIRED_TARGET.get(name)
    if bar is not None:
        met = "yes" if pairing.less_cpu >= bar else "NO"
        line += f" (target >= {bar:g}x: {met})"
    return line


if __name__ == "__main__":
    sys.exit(main())

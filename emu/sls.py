"""`emu sls`: replay SLS, Rumen and SYNTH traces as Hadoop's `slsrun.sh` does.

The run is assembled the way SLS assembles it, from the same inputs:

- configuration: `sls-runner.xml`, `yarn-site.xml` and
  `capacity-scheduler.xml` from the configuration directory (`--conf-dir`,
  default `$HADOOP_CONF_DIR`), merged into one Configuration (yarn-site wins
  over capacity-scheduler, which wins over sls-runner), then `-D` overrides.
  The scheduler is `yarn.resourcemanager.scheduler.class`; a FairScheduler
  allocation file found there is handed to the scheduler through
  `yarn.scheduler.fair.allocation.file`.
- cluster: the `--nodes` topology file, or else every node the trace names
  (SLS's behaviour); a node's size is `yarn.sls.nm.memory.mb` / `vcores`
  unless the topology gives one. NMs heartbeat every
  `yarn.sls.nm.heartbeat.interval.ms` (unless yarn-site sets
  `yarn.resourcemanager.nodemanagers.heartbeat-interval-ms`), AMs allocate
  every `yarn.sls.am.heartbeat.interval.ms`; task and AM containers default
  to `yarn.sls.container.*` / `yarn.sls.am.container.*`.
- time: the virtual clock (as fast as the CPU allows, deterministic for a
  seed) or, with `--rate R`, scaled wall time (R simulated seconds per wall
  second).

Outputs go to `--output-dir`: `jobruntime.csv` and `summary.json`
(deterministic), `realtimetrack.json` and `metrics/` (see
`emu.metrics.sls`). They are written into a staging directory inside the
output directory and moved into place only when the run succeeded, so a
failed run leaves no file that looks like a result.
"""

from __future__ import annotations

import contextlib
import math
import os
import shutil
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

from emu import outdir, preflight
from emu.clock import ScaledWallClock, run_deterministically, virtual_clock
from emu.config import sls_runner as S
from emu.config import support
from emu.config.configuration import Configuration
from emu.config.sls_runner import SlsSettings
from emu.errors import InputError, SchedulerFailed, find_in_group, warn_input
from emu.metrics import invariants as inv
from emu.metrics import outputs
from emu.metrics.progress import trace_span_ms
from emu.metrics.sls import SlsRecorder
from emu.metrics.timeline import Timeline, sample_every_s
from emu.rm.settings import RMSettings
from emu.scenario import read_trace
from emu.scenario.native import Change, load_changes
from emu.scenario.topology import read_nodes_file
from emu.simulation import RunResult, Simulation
from emu.timing import SLS, Timing
from emu.watch import Observer, Watch, chain
from emu.workload import NodeSpec, Workload

NM_HEARTBEAT = "yarn.resourcemanager.nodemanagers.heartbeat-interval-ms"
MONITOR_POLICIES = "yarn.resourcemanager.scheduler.monitor.policies"
INVARIANTS_FILE = "yarn.resourcemanager.invariant-checker.file"


@dataclass
class SlsOptions:
    """Everything `emu sls` was asked to do (the CLI fills this in)."""

    tracetype: str
    traces: list[str]
    output_dir: Path
    nodes_file: str | None = None
    track_jobs: list[str] = field(default_factory=list)
    print_simulation: bool = False
    conf_dir: str | None = None
    overrides: dict[str, str] = field(default_factory=dict)
    seed: int | None = None
    invariants: list[str] = field(default_factory=list)
    exit_invariants: list[str] = field(default_factory=list)
    rate: float | None = None
    watch: Watch | None = None
    """Progress line and web server (`emu.watch`); they only observe."""
    check_state: bool = False
    """Also check the RM's state invariants (emu.metrics.cluster_invariants)."""
    changes_file: str | None = None
    """A TOML file of [[changes]] (emu.scenario.native.load_changes): queues
    refreshed, nodes added or removed at simulated times."""
    container_log: bool = False
    """Also write containers.csv: every container the scheduler allocated or
    preempted, when and where (what `emu fidelity` compares decision by decision)."""
    timing: Timing = SLS
    """When the AMs and NMs act and when a job ends (emu.timing): SLS's by
    default, as `emu sls` replays a trace as SLS does; YARN's on request."""


@dataclass
class Prepared:
    """A run ready to start: the merged configuration and what it decided."""

    conf: Configuration
    settings: SlsSettings
    rm_settings: RMSettings
    workload: Workload
    nodes: list[NodeSpec]
    ongoing: list[inv.Invariant]
    at_exit: list[inv.Invariant]
    seed: int
    ignored: list[tuple[str, str]]
    no_effect: list[tuple[str, str]]
    changes: list[Change] = field(default_factory=list)
    unsupported: list[support.Unsupported] = field(default_factory=list)
    """What the run goes without (--allow-unsupported), for summary.json."""
    timing: Timing = SLS
    """The AMs' and NMs' timing (emu.timing)."""


# --- configuration ---------------------------------------------------------------------
def _configured_invariants(conf: Configuration, conf_dir: str | None) -> list[inv.Invariant]:
    """Hadoop's own way to ask for ongoing checks: the MetricsInvariantChecker
    scheduling-monitor policy with an invariants file."""
    if "MetricsInvariantChecker" not in (conf.get(MONITOR_POLICIES) or ""):
        return []
    name = conf.get(INVARIANTS_FILE)
    if not name:
        return []
    path = Path(name)
    if not path.is_absolute() and conf_dir:
        path = Path(conf_dir) / path
    return inv.load(path)


# --- preparation -------------------------------------------------------------------------
def prepare(opts: SlsOptions) -> Prepared:
    """Read every input and check it; raises InputError on the first problem."""
    read = preflight.read_configuration(opts.conf_dir, opts.overrides)
    conf, conf_dir = read.conf, read.conf_dir
    rm_settings = RMSettings.from_conf(conf)
    settings = SlsSettings.from_conf(conf, rm_settings.resource_types)
    if NM_HEARTBEAT not in read.explicit:
        conf.set(
            NM_HEARTBEAT,
            settings.nm_heartbeat_interval_ms,
            conf.sources.get(S.NM_HEARTBEAT_INTERVAL_MS, "default"),
        )
    checked = preflight.check_configuration(conf)
    rm_settings = checked.rm_settings

    ongoing = _configured_invariants(conf, conf_dir)
    for path in opts.invariants:
        ongoing += inv.load(path)
    at_exit = [*ongoing]
    for path in opts.exit_invariants:
        at_exit += inv.load(path)

    workload = read_trace(
        opts.tracetype,
        opts.traces,
        container_default=settings.container_resource,
        am_default=settings.am_container_resource,
        resource_types=rm_settings.resource_types,
        seed=opts.seed,
    )
    if not workload.jobs:
        raise InputError(",".join(opts.traces), None, "the trace holds no job")
    _apply_am_types(workload, settings, opts.traces)
    if opts.nodes_file:
        nodes = read_nodes_file(opts.nodes_file, nm_default=settings.nm_resource)
        if not nodes:
            raise InputError(opts.nodes_file, None, "the topology file lists no node")
    else:
        nodes = workload.trace_nodes
        if not nodes:
            raise InputError(
                ",".join(opts.traces), None, "the trace names no node; give a --nodes topology file"
            )
    job_ids = {j.job_id for j in workload.jobs}
    for job in opts.track_jobs:
        if job not in job_ids:
            raise InputError("--track-jobs", job, "no job with this id in the trace")
    ignored, no_effect = support.classify(conf, rm_settings.scheduler)
    if rm_settings.scheduler == "fair" and not support.hadoop_decides(conf):
        from emu.rm.scheduler.fair.settings import allocation_file_path

        allocation_file, _ = allocation_file_path(conf)
        if allocation_file is not None:
            no_effect += support.allocation_file_notes(allocation_file)
    _warn_defaults_and_hosts(conf_dir, opts, workload, nodes)
    changes = (
        load_changes(opts.changes_file, nodes, settings.nm_resource) if opts.changes_file else []
    )
    traces = ",".join(opts.traces)
    preflight.check_inputs(
        checked,
        conf,
        nodes_source=opts.nodes_file or traces,
        nodes=nodes,
        jobs_source=traces,
        jobs=workload.jobs,
        fields=preflight.SLS_FIELDS,
        refreshes=[(c.where, c.properties) for c in changes if c.properties],
    )
    return Prepared(
        conf=conf,
        settings=settings,
        rm_settings=rm_settings,
        workload=workload,
        nodes=nodes,
        ongoing=ongoing,
        at_exit=at_exit,
        seed=opts.seed if opts.seed is not None else 0,
        ignored=ignored,
        no_effect=no_effect,
        changes=changes,
        unsupported=checked.unsupported,
        timing=opts.timing,
    )


def _warn_defaults_and_hosts(
    conf_dir: str | None, opts: SlsOptions, workload: Workload, nodes: list[NodeSpec]
) -> None:
    """Warn about inputs that run but likely not as meant: a configuration
    directory without sls-runner.xml (SLS's default node, AM and container
    sizes apply), and trace hosts the nodes file does not have (their tasks
    only ever run off their preferred host)."""
    if conf_dir and not (Path(conf_dir) / "sls-runner.xml").is_file():
        warn_input(
            conf_dir,
            None,
            "no sls-runner.xml: NodeManagers, AMs and containers take SLS's default sizes "
            f"(node {SlsSettings().nm_resource}, container {SlsSettings().container_resource})",
        )
    if opts.nodes_file:
        known = {n.host for n in nodes}
        absent = [n.host for n in workload.trace_nodes if n.host not in known]
        if absent:
            shown = ", ".join(absent[:3]) + (
                f" and {len(absent) - 3} more" if len(absent) > 3 else ""
            )
            warn_input(
                ",".join(opts.traces),
                None,
                f"{len(absent)} host(s) the trace asks for are not in {opts.nodes_file} ({shown}): "
                "their tasks run elsewhere",
            )


def _apply_am_types(workload: Workload, settings: SlsSettings, traces: list[str]) -> None:
    """Each job's AM kind from `yarn.sls.am.type.<name>`, as SLS picks the AM
    simulator class; a type with no configured class fails, as in SLS."""
    jobs = []
    for job in workload.jobs:
        name = job.params.get("am_type")
        if name is None:
            jobs.append(job)
            continue
        kind = settings.am_kind(name)
        if kind is None:
            raise InputError(
                ",".join(traces),
                f"job {job.job_id}",
                f"AM type {name!r} has no simulator: "
                f"set {S.AM_TYPE_PREFIX}{name} in sls-runner.xml",
            )
        if kind != job.am_type:
            job = replace(job, am_type=kind)
        jobs.append(job)
    workload.jobs = jobs


# --- --print-simulation ----------------------------------------------------------------------
def simulation_info(p: Prepared) -> str:
    """What SLS's printSimulationInfo logs, plus the configuration emu ignores."""
    nm = p.settings.nm_resource
    racks = {n.rack for n in p.nodes}
    own = sum(1 for n in p.nodes if n.resource is not None)
    jobs = p.workload.jobs
    tasks = sum(len(j.tasks) for j in jobs)
    queues = Counter(j.queue for j in jobs)
    max_runtime = max((j.end_ms if j.end_ms is not None else j.submit_ms) for j in jobs)
    bar = "-" * 36
    lines = [
        bar,
        f"# nodes = {len(p.nodes)}, # racks = {len(racks)}, capacity of each node "
        f"{nm.memory} MB memory and {nm.vcores} vcores."
        + (f" ({own} nodes have their own size in the topology file)" if own else ""),
        f"scheduler = {p.rm_settings.scheduler}, NM heartbeat = "
        f"{p.rm_settings.nm_heartbeat_ms} ms, AM heartbeat = "
        f"{p.settings.am_heartbeat_interval_ms} ms",
        bar,
        f"# applications = {len(jobs)}, # total tasks = {tasks}, average # tasks per "
        f"application = {math.ceil(tasks / len(jobs))}",
        "JobId\tQueue\tAMType\tDuration\t#Tasks",
    ]
    for j in jobs:
        duration = j.end_ms - j.submit_ms if j.end_ms is not None else "-"
        am_type = j.params.get("am_type", j.am_type)
        lines.append(f"{j.job_id}\t{j.queue}\t{am_type}\t{duration}\t{len(j.tasks)}")
    lines += [
        bar,
        f"number of queues = {len(queues)}  average number of apps = "
        f"{math.ceil(len(jobs) / len(queues))}",
        bar,
        f"estimated simulation time is {math.ceil(max_runtime / 1000)} seconds",
        bar,
        f"configuration properties emu does not model (ignored): {len(p.ignored)}",
    ]
    lines += [f"  {name}  ({source})" for name, source in p.ignored]
    if p.no_effect:
        lines.append(f"accepted, without effect in emu: {len(p.no_effect)}")
        lines += [f"  {name}: {why}" for name, why in p.no_effect]
    lines.append(bar)
    return "\n".join(lines)


# --- the run -------------------------------------------------------------------------------
class _Staging:
    """Outputs are written here and moved into the output directory at the end.

    Nothing is created until `open`, which the caller calls inside the block
    that discards on failure: a signal landing just after the staging
    directory appears must still remove it."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.created = not out.exists()
        self.dir = out / f".emu-sls-staging-{os.getpid()}"

    def open(self) -> None:
        outdir.make(self.out)
        if self.dir.exists():
            shutil.rmtree(self.dir)
        self.dir.mkdir()

    def commit(self) -> None:
        metrics_new = self.dir / "metrics"
        metrics_old = self.out / "metrics"
        if metrics_new.is_dir():
            metrics_old.mkdir(exist_ok=True)
            fresh = {f.name for f in metrics_new.iterdir()}
            for stale in metrics_old.glob("*.csv"):
                if stale.name not in fresh:
                    stale.unlink()
            for f in sorted(metrics_new.iterdir()):
                os.replace(f, metrics_old / f.name)
            metrics_new.rmdir()
        for f in sorted(self.dir.iterdir()):
            os.replace(f, self.out / f.name)
        self.dir.rmdir()

    def discard(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)
        if self.created:
            with contextlib.suppress(OSError):
                self.out.rmdir()  # only if the failed run left it empty


@dataclass
class SlsRun:
    """A finished run: its result, the recorder, and the summary data."""

    result: RunResult
    recorder: SlsRecorder
    summary: dict[str, Any]
    epoch_ms: int


def run(opts: SlsOptions, stdout: IO[str] | None = None) -> SlsRun:
    """Prepare, run and write outputs. Raises InputError for bad inputs and
    InvariantBroken for a broken invariant (no outputs are left then)."""
    out_stream = stdout if stdout is not None else sys.stdout
    p = prepare(opts)
    if opts.print_simulation:
        print(simulation_info(p), file=out_stream)
    staging = _Staging(Path(opts.output_dir))
    try:
        staging.open()
        done = _run_staged(opts, p, staging)
    except BaseException as e:
        failed = find_in_group(e, SchedulerFailed)
        if not isinstance(failed, SchedulerFailed):
            staging.discard()
            raise
        # The metrics recorded so far, and why the run stopped.
        outputs.write_failure(staging.dir, failed)
        staging.commit()
        raise failed from None
    staging.commit()
    return done


def _observers(
    recorder: SlsRecorder,
    timeline: Timeline,
    watch: Watch | None,
    workload: Workload,
    epoch_ms: int,
    track_jobs: tuple[str, ...] = (),
) -> Observer:
    """The recorder's and the timeline's ticks, then whatever watches the run."""
    extra = watch.start(workload, epoch_ms, track_jobs) if watch is not None else None
    ticks = [recorder.tick, timeline.tick] + ([extra] if extra is not None else [])
    return chain(*ticks)


def simulation_for(
    p: Prepared,
    on_tick: Callable[[Any], None] | None = None,
    on_start: Callable[[Any], None] | None = None,
    check_invariants: bool = False,
) -> Simulation:
    """The in-process cluster `emu sls` replays a prepared trace on (the
    benchmark runs the same one, with its own observer)."""
    return Simulation(
        conf=p.conf,
        nodes=p.nodes,
        workload=p.workload,
        faults=[],
        seed=p.seed,
        am_heartbeat_ms=p.settings.am_heartbeat_interval_ms,
        node_default=p.settings.nm_resource,
        changes=p.changes,
        timing=p.timing,
        on_tick=on_tick,
        on_start=on_start,
        check_invariants=check_invariants,
    )


def _run_staged(opts: SlsOptions, p: Prepared, staging: _Staging) -> SlsRun:
    epoch = time.time() if opts.rate else 0.0
    epoch_ms = round(epoch * 1000)
    record_every = max(1, math.ceil(p.settings.metrics_record_interval_ms / 1000))
    recorder = SlsRecorder(
        staging.dir if p.settings.metrics_switch else None,
        track_jobs=tuple(opts.track_jobs),
        ongoing=p.ongoing,
        epoch_ms=epoch_ms,
        record_every_s=record_every,
        container_log=staging.dir / "containers.csv" if opts.container_log else None,
    )
    timeline = Timeline(sample_every_s(trace_span_ms(p.workload)))
    sim = simulation_for(
        p,
        on_tick=_observers(
            recorder, timeline, opts.watch, p.workload, epoch_ms, tuple(opts.track_jobs)
        ),
        on_start=recorder.attach,
        check_invariants=opts.check_state,
    )
    clock = ScaledWallClock(epoch=epoch, rate=opts.rate) if opts.rate else virtual_clock()
    try:
        result = run_deterministically(sim.run, clock)
    except BaseException as e:
        broken = find_in_group(e, inv.InvariantBroken) or find_in_group(e, InputError)
        if broken is not None and broken is not e:
            raise broken from None
        raise
    finally:
        recorder.close()
        if opts.watch is not None:
            opts.watch.stop()
    if p.at_exit and result.stalled is None:
        assert recorder.rm is not None
        inv.check(
            p.at_exit,
            recorder.bindings(recorder.rm, result.simulated_ms),
            result.simulated_ms,
            "at exit",
        )
    name = ",".join(Path(t).name for t in opts.traces)
    data = outputs.summary(
        name, p.seed, result.jobs, result.metrics, result.simulated_ms, result.stalled
    )
    data["timeline"] = timeline.to_json()
    # SLS's NMs first heartbeat up to two intervals in: no app is offered a
    # node before then.
    first_beats = p.timing.nm_first_heartbeat_after_interval
    outputs.add_why_pending(
        data, result.why_pending, 2 * p.rm_settings.nm_heartbeat_ms if first_beats else 0
    )
    support.add_to_summary(data, p.unsupported)
    outputs.write_jobruntime(staging.dir / "jobruntime.csv", result.jobs, epoch_ms)
    outputs.write_summary(staging.dir / "summary.json", data)
    return SlsRun(result, recorder, data, epoch_ms)

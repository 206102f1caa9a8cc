"""The `emu` command.

    emu run SCENARIO [--output-dir D] [--seed N]
    emu sls --tracetype=SLS|RUMEN|SYNTH --tracelocation=F1,F2 --output-dir=D [...]
    emu rumen2sls --rumen-file=F --output-dir=D [--output-prefix=sls]
    emu report OUT_DIR [OUT_DIR ...] -o report.html
    emu sweep SPEC.toml [-o DIR] [-j N] [--dask ADDRESS]   (README: Sweeps)
    emu report SWEEP_DIR -o report.html
    emu rm | nm | replay | cluster up|status | keys generate   (docs/multi-process.md)

Errors in user input (scenario, trace or configuration files) print one line
naming the file and the line or key, and exit with code 2.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from emu import __version__, native
from emu.config.configuration import Configuration
from emu.errors import InputError, SchedulerFailed, find_in_group
from emu.timing import TIMINGS

EXIT_INPUT = 2


def _cmd_run(args: argparse.Namespace) -> int:
    from emu.metrics import outputs
    from emu.metrics.cluster_invariants import ClusterInvariantBroken
    from emu.scenario import native
    from emu.scenario_run import run_scenario
    from emu.watch import Watch

    if args.rate is not None and not args.rate > 0:
        raise InputError("--rate", str(args.rate), "must be a positive number")
    if native.is_federation(args.scenario):
        return _run_federation(args)
    scenario = native.load(args.scenario, _impl_overrides(args))
    _apply_defines(scenario.conf, args.define)
    seed = scenario.seed if args.seed is None else args.seed
    watch = Watch.from_args(args)
    try:
        done = run_scenario(
            scenario,
            seed,
            args.output_dir or None,
            rate=args.rate,
            watch=watch,
            check_invariants=args.invariants,
        )
    except ClusterInvariantBroken as e:
        print(f"emu: error: {e}", file=sys.stderr)
        return 1
    result, out = done.result, done.output_dir
    code = outputs.print_report(
        done.summary,
        f"wall {result.wall_seconds:.2f} s; "
        f"{result.simulated_ms / 1000 / max(result.wall_seconds, 1e-9):.0f} simulated s per wall s"
        + (f"; outputs in {out}" if out is not None else ""),
        rate=args.rate,
    )
    watch.serve_until_stopped()
    return code


def _run_federation(args: argparse.Namespace) -> int:
    """`emu run` of a federation file (one with [[subclusters]]): `-D` sets a
    federation property (yarn.federation.*, yarn.router.*) in its
    [federation], any other in every sub-cluster's configuration, as do
    --scheduler-impl and --hadoop-version."""
    from emu.federation import description
    from emu.federation.run import format_federation, run_federation_file
    from emu.metrics import outputs

    for flag, given in (
        ("--rate", args.rate is not None),
        ("--invariants", args.invariants),
        ("--web-port", args.web_port is not None),
    ):
        if given:
            raise InputError(
                args.scenario, flag, "a federation file runs on the virtual clock without it"
            )
    overrides = _impl_overrides(args)
    for item in args.define:
        name, eq, value = item.partition("=")
        if not eq or not name.strip():
            raise InputError("-D", item, "expected NAME=VALUE")
        overrides[name.strip()] = (value, "-D")
    fed = description.load(args.scenario, overrides)
    seed = fed.seed if args.seed is None else args.seed
    done = run_federation_file(fed, seed, args.output_dir or None)
    result, out = done.result, done.output_dir
    code = outputs.print_report(
        done.summary,
        format_federation(done.summary["federation"]) + f"\nwall {result.wall_seconds:.2f} s; "
        f"{result.simulated_ms / 1000 / max(result.wall_seconds, 1e-9):.0f} simulated s per wall s"
        + (f"; outputs in {out}" if out is not None else ""),
    )
    return code


def _hadoop_line() -> str:
    from emu.hadoop import classpath

    return "\n".join(classpath.describe(version=v) for v in classpath.VERSIONS)


def _add_impl_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--scheduler-impl",
        choices=("emu", "hadoop"),
        help="whose code schedules: emu's own port of the scheduler, or Hadoop's scheduler "
        "class itself on emu's virtual clock (needs Java; the property emu.scheduler.impl) "
        "(default: emu)",
    )
    p.add_argument(
        "--hadoop-classpath",
        metavar="CP",
        help="the jars Hadoop's scheduler is loaded from, e.g. a patched build "
        "(default: HADOOP_HOME's, else Apache Hadoop as fetched by make hadoop)",
    )
    p.add_argument(
        "--hadoop-version",
        metavar="V",
        help="the Apache Hadoop release emu follows: its jars for --scheduler-impl hadoop "
        "and its defaults in emu's own port; 3.4.2 or 3.5.0, whose CapacityScheduler "
        "schedules asynchronously by default (the property emu.hadoop.version) "
        "(default: 3.4.2)",
    )
    p.add_argument(
        "--allow-unsupported",
        action="store_true",
        help="run without the properties emu's scheduler does not emulate (auto-created "
        "queues, user weights, ...: docs/configuration.md), one warning each and listed in "
        "summary.json, instead of refusing them (the property emu.allow-unsupported)",
    )


def _impl_overrides(args: argparse.Namespace) -> dict[str, tuple[str, str]]:
    """The properties --scheduler-impl and --hadoop-classpath stand for,
    over those of the environment (`environment_overrides`)."""
    from emu.processes.common import environment_overrides

    out = {name: (value, "environment") for name, value in environment_overrides().items()}
    if args.scheduler_impl:
        out["emu.scheduler.impl"] = (args.scheduler_impl, "--scheduler-impl")
    if args.hadoop_classpath:
        out["emu.hadoop.classpath"] = (args.hadoop_classpath, "--hadoop-classpath")
    if getattr(args, "hadoop_version", None):
        out["emu.hadoop.version"] = (args.hadoop_version, "--hadoop-version")
    if getattr(args, "allow_unsupported", False):
        out["emu.allow-unsupported"] = ("true", "--allow-unsupported")
    return out


def _apply_defines(conf: Configuration, defines: list[str]) -> None:
    """`-D NAME=VALUE` over the scenario's [config] (e.g. to pick another scheduler)."""
    for item in defines:
        name, eq, value = item.partition("=")
        if not eq or not name.strip():
            raise InputError("-D", item, "expected NAME=VALUE")
        conf.set(name.strip(), value, "-D")


def _cmd_sls(args: argparse.Namespace) -> int:
    from emu import sls
    from emu.metrics import outputs
    from emu.metrics.cluster_invariants import ClusterInvariantBroken
    from emu.metrics.invariants import InvariantBroken
    from emu.watch import Watch

    tracetype, location = args.tracetype, args.tracelocation
    for flag, kind, value in (
        ("--input-rumen", "RUMEN", args.input_rumen),
        ("--input-sls", "SLS", args.input_sls),
    ):
        if value is not None:
            if location is not None or (tracetype is not None and tracetype.upper() != kind):
                raise InputError(
                    flag, None, "give either --tracetype/--tracelocation or one --input-*"
                )
            tracetype, location = kind, value
    if tracetype is None or location is None:
        raise InputError(
            "emu sls", None, "missing input: give --tracetype=... --tracelocation=FILE[,FILE...]"
        )
    if args.rate is not None and not args.rate > 0:
        raise InputError("--rate", str(args.rate), "must be a positive number")
    overrides = {}
    for item in args.define:
        name, eq, value = item.partition("=")
        if not eq or not name.strip():
            raise InputError("-D", item, "expected NAME=VALUE")
        overrides[name.strip()] = value
    overrides.update((name, value) for name, (value, _) in _impl_overrides(args).items())
    watch = Watch.from_args(args)
    opts = sls.SlsOptions(
        tracetype=tracetype,
        traces=[t for t in location.split(",") if t],
        output_dir=Path(args.output_dir),
        nodes_file=args.nodes or None,
        track_jobs=[j for j in (args.track_jobs or "").split(",") if j],
        print_simulation=args.print_simulation,
        conf_dir=args.conf_dir,
        overrides=overrides,
        seed=args.seed,
        invariants=[f for f in args.invariants if f],
        exit_invariants=args.exit_invariants,
        rate=args.rate,
        watch=watch,
        check_state=bool(args.invariants),
        container_log=args.container_log,
        changes_file=args.changes,
        timing=TIMINGS[args.timing],
    )
    try:
        done = sls.run(opts)
    except (InvariantBroken, ClusterInvariantBroken) as e:
        print(f"emu: error: {e}", file=sys.stderr)
        return 1
    result = done.result
    code = outputs.print_report(
        done.summary,
        f"wall {result.wall_seconds:.2f} s; "
        f"{result.simulated_ms / 1000 / max(result.wall_seconds, 1e-9):.0f} "
        f"simulated s per wall s; outputs in {opts.output_dir}",
        rate=opts.rate,
    )
    watch.serve_until_stopped()
    return code


def _cmd_report(args: argparse.Namespace) -> int:
    from emu.report.html import render
    from emu.report.runs import load
    from emu.report.sweep import is_sweep_dir, write_sweep_report

    if len(args.runs) == 1 and is_sweep_dir(Path(args.runs[0])):
        return write_sweep_report(Path(args.runs[0]), Path(args.output))
    runs = [load(d) for d in args.runs]
    names = [r.name for r in runs]
    for k, r in enumerate(runs):  # same directory names (a/out, b/out): number them
        if names.count(r.name) > 1:
            r.name = f"{r.name} #{k + 1}"
    out = Path(args.output)
    out.write_text(render(runs))
    print(f"wrote {out} ({len(runs)} run{'s' if len(runs) != 1 else ''})")
    return 0


def _add_report_parser(sub: argparse._SubParsersAction) -> None:
    rep = sub.add_parser(
        "report",
        help="one self-contained HTML report comparing runs' outputs",
        description="Draw one or more runs (emu output directories, or Hadoop SLS's "
        "realtimetrack.json) into one HTML file that works offline: utilization over time, "
        "per-queue allocation against fair share or guarantee, job turnaround CDF, wait per "
        "queue, Jain's fairness index, and a side-by-side table; with node labels, each "
        "partition's allocation over time and its queues' there. Given one sweep directory "
        "(emu sweep), draw its points against the cluster size and rank them by the "
        "spec's objective.",
    )
    rep.add_argument(
        "runs", nargs="+", metavar="OUT_DIR", help="output directories (or files), or a sweep's"
    )
    rep.add_argument("-o", "--output", default="report.html", help="default report.html")
    rep.set_defaults(func=_cmd_report)


def _cmd_rumen2sls(args: argparse.Namespace) -> int:
    from emu.scenario.rumen2sls import convert

    jobs, nodes = convert(args.rumen_file, args.output_dir, args.output_prefix)
    print(f"wrote {jobs}")
    print(f"wrote {nodes}")
    return 0


SLS_HELP = """Replay SLS, Rumen or SYNTH traces the way Hadoop's slsrun.sh does, with the
same options and inputs, in one process on the virtual clock (deterministic
for --seed) or on scaled wall time (--rate).

Configuration comes from --conf-dir (default $HADOOP_CONF_DIR): sls-runner.xml,
yarn-site.xml and capacity-scheduler.xml are read and merged (yarn-site wins),
and fair-scheduler.xml is located as the RM would locate it. The scheduler is
yarn.resourcemanager.scheduler.class (Hadoop class names or fifo/capacity/fair).
Properties emu does not read are ignored (--print-simulation lists them, and
warns about names that look misspelt); properties Hadoop's scheduler acts on
and emu's does not (auto-created queues, user weights, ...) are refused unless
--allow-unsupported; yarn.sls.runner.pool.size and a few other SLS knobs are
accepted and mean nothing here. docs/configuration.md lists every property.

Outputs in --output-dir: jobruntime.csv, summary.json, realtimetrack.json,
metrics/*.csv (and containers.csv with --container-log). They appear only when the
run succeeds.

Exit codes: 0 every job finished; 1 a job failed or was killed, or an
invariant broke; 2 bad input (trace, topology, configuration, invariants).
"""


def _add_watch_options(p: argparse.ArgumentParser) -> None:
    from emu.watch import add_options

    add_options(p)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="emu",
        description="Emulate Hadoop YARN resource management: replay workloads against "
        "FIFO, Capacity or Fair scheduling on a virtual clock.",
        formatter_class=argparse.RawTextHelpFormatter,
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"emu {__version__}, {native.describe()}\n{_hadoop_line()}",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser(
        "run",
        help="replay a scenario file in one process on the virtual clock",
        description="Replay an emu scenario (TOML: cluster, config, jobs, faults) in one "
        "process, as fast as the CPU allows, deterministically for a seed. Writes "
        "jobruntime.csv, summary.json and events.jsonl to --output-dir. A federation file "
        "(TOML with [[subclusters]], docs/federation.md) replays a YARN federation: "
        "emu run scenarios/federation/two-subclusters.toml -o out/fed",
    )
    run.add_argument(
        "scenario",
        help="scenario or federation file, e.g. scenarios/three-jobs.toml or "
        "scenarios/federation/two-subclusters.toml",
    )
    run.add_argument("--output-dir", "-o", help="where to write outputs (default: print only)")
    run.add_argument(
        "--seed", type=int, help="overrides the scenario's seed (default: the scenario's seed)"
    )
    run.add_argument(
        "-D",
        dest="define",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="set a configuration property over the scenario's [config] (repeatable), e.g. "
        "-D yarn.resourcemanager.scheduler.class=fair (default: none)",
    )
    _add_impl_options(run)
    run.add_argument(
        "--rate",
        type=float,
        metavar="R",
        help="run on scaled wall time, R simulated seconds per wall second, e.g. to watch "
        "the live pages; results can differ from the virtual clock's "
        "(default: virtual time, as fast as possible, deterministic)",
    )
    _add_watch_options(run)
    run.add_argument(
        "--invariants",
        action="store_true",
        help="check the RM's state invariants every 5 simulated seconds and at the end "
        "(no container twice, no node over capacity, queue usage = its apps', nothing "
        "negative, every app ended); exit 1 at the first broken one",
    )
    run.set_defaults(func=_cmd_run)

    sls = sub.add_parser(
        "sls",
        help="replay SLS/Rumen/SYNTH traces with slsrun.sh's options",
        description=SLS_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sls.add_argument(
        "--tracetype",
        metavar="SLS|RUMEN|SYNTH",
        help="the trace format (no default: required unless --input-*)",
    )
    sls.add_argument(
        "--tracelocation",
        metavar="F1,F2,...",
        help="trace files, comma-separated (no default: required unless --input-*)",
    )
    sls.add_argument(
        "--input-rumen", metavar="F1,F2,...", help="deprecated: --tracetype=RUMEN (default: unused)"
    )
    sls.add_argument(
        "--input-sls", metavar="F1,F2,...", help="deprecated: --tracetype=SLS (default: unused)"
    )
    sls.add_argument("--output-dir", required=True, metavar="DIR", help="where outputs go")
    sls.add_argument(
        "--nodes", metavar="FILE", help="cluster topology file (default: the nodes the trace names)"
    )
    sls.add_argument(
        "--track-jobs",
        metavar="J1,J2,...",
        help="trace job ids whose containers and resources are recorded every second "
        "(default: none)",
    )
    sls.add_argument(
        "--container-log",
        action="store_true",
        help="also write containers.csv: every container the scheduler allocated or "
        "preempted (time, node, app, size, priority, locality), in decision order",
    )
    sls.add_argument(
        "--timing",
        choices=sorted(TIMINGS),
        default="sls",
        help="when the simulated AMs and NodeManagers act: as SLS's simulators do (an "
        "AM's heartbeats fall on its submission + k * interval and act on each allocate "
        "response one heartbeat late; a NodeManager's first heartbeat comes one interval "
        "after its random offset; a job ends when its AM unregisters), or as YARN's do "
        "(default: %(default)s)",
    )
    sls.add_argument(
        "--changes",
        metavar="FILE",
        help="a TOML file of [[changes]] applied at their simulated times: queues "
        "refreshed, nodes added or removed, node labels added, removed or put on nodes "
        "(what-if from mid-trace; see the README) (default: none)",
    )
    sls.add_argument(
        "--print-simulation",
        action="store_true",
        help="print nodes, apps, tasks, each app's summary and ignored properties first",
    )
    sls.add_argument(
        "--conf-dir",
        metavar="DIR",
        help="Hadoop configuration directory (default: $HADOOP_CONF_DIR; if unset, YARN's "
        "defaults: a CapacityScheduler with only root.default)",
    )
    sls.add_argument(
        "-D",
        dest="define",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="set a configuration property over the files (repeatable), e.g. "
        "-D yarn.resourcemanager.scheduler.class=fifo (default: none)",
    )
    sls.add_argument(
        "--seed",
        type=int,
        help="seed for the run (default 0); for SYNTH it also replaces the file's rand_seed",
    )
    sls.add_argument(
        "--invariants",
        action="append",
        nargs="?",
        const="",
        default=[],
        metavar="FILE",
        help="invariants checked every simulated second and at the end, e.g. Hadoop's "
        "ongoing-invariants.txt (repeatable; default: none); given at all, with or without "
        "a file, it also checks the RM's state invariants as `emu run --invariants` does",
    )
    sls.add_argument(
        "--exit-invariants",
        action="append",
        default=[],
        metavar="FILE",
        help="invariants checked once the run ends, e.g. Hadoop's exit-invariants.txt "
        "(repeatable; default: none)",
    )
    sls.add_argument(
        "--rate",
        type=float,
        metavar="R",
        help="run on scaled wall time, R simulated seconds per wall second; results can "
        "differ from the virtual clock's (default: virtual time, as fast as possible)",
    )
    _add_watch_options(sls)
    _add_impl_options(sls)
    sls.set_defaults(func=_cmd_sls)

    r2s = sub.add_parser(
        "rumen2sls",
        help="convert a Rumen trace to SLS jobs and nodes files (rumen2sls.sh)",
        description="Write <prefix>-jobs.json and <prefix>-nodes.json from a Rumen trace, "
        "byte-for-byte as Hadoop's rumen2sls.sh does. Existing files are not overwritten.",
    )
    r2s.add_argument("--rumen-file", required=True, metavar="FILE", help="the Rumen trace")
    r2s.add_argument("--output-dir", required=True, metavar="DIR", help="where to write")
    r2s.add_argument(
        "--output-prefix", default="sls", metavar="PREFIX", help="file name prefix (default sls)"
    )
    r2s.set_defaults(func=_cmd_rumen2sls)

    _add_report_parser(sub)

    from emu.sweep.cli import add_parser as add_sweep

    add_sweep(sub)

    from emu.processes.commands import add_commands

    add_commands(sub)
    return parser


EXIT_SIGNAL = {signal.SIGINT: 130, signal.SIGTERM: 143}
# Commands that run a simulation in this process, or a sweep's: SIGTERM stops
# them the way Ctrl-C does (the multi-process commands handle their own signals).
IN_PROCESS = {"run", "sls", "rumen2sls", "sweep"}


def main(argv: list[str] | None = None) -> int:
    code = _main(argv)
    if argv is None:  # this process's own command, not a call from Python
        from emu.hadoop import bridge

        if bridge.jvm_started():
            bridge.exit_process(code)
    return code


def _main(argv: list[str] | None) -> int:
    try:
        args = build_parser().parse_args(argv)
    except BrokenPipeError:
        return _reader_gone()
    received: list[signal.Signals] = []
    previous: dict[signal.Signals, Any] = {}
    if args.command in IN_PROCESS and threading.current_thread() is threading.main_thread():
        previous[signal.SIGTERM] = signal.signal(
            signal.SIGTERM, lambda signum, frame: _sigterm(received)
        )
        if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
            # A shell starts background jobs with SIGINT ignored; SIGTERM
            # travels through SIGINT (below), so it must be deliverable.
            previous[signal.SIGINT] = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return args.func(args)
    except InputError as e:
        print(f"emu: error: {e}", file=sys.stderr)
        return EXIT_INPUT
    except BaseException as e:
        if find_in_group(e, KeyboardInterrupt) is not None:
            sig = received[0] if received else signal.SIGINT
            print(f"emu: stopped by {sig.name}; no outputs written", file=sys.stderr)
            return EXIT_SIGNAL[sig]
        if find_in_group(e, BrokenPipeError) is not None:
            return _reader_gone()
        failed = find_in_group(e, SchedulerFailed)
        if failed is not None:
            print(f"emu: error: {failed}", file=sys.stderr)
            return 1
        raise
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _reader_gone() -> int:
    """The reader of our output (`| head`) went away: stop quietly, as a
    Unix tool killed by SIGPIPE does, and keep Python from complaining about
    the unflushed stdout at exit."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 128 + signal.SIGPIPE


def _sigterm(received: list[signal.Signals]) -> None:
    """Turn SIGTERM into the KeyboardInterrupt trio delivers safely for
    SIGINT, remembering which signal it was for the exit code."""
    received.append(signal.SIGTERM)
    signal.raise_signal(signal.SIGINT)


if __name__ == "__main__":
    sys.exit(main())

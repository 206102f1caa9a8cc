"""The `emu` command.

    emu run SCENARIO [--output-dir D] [--seed N]
    emu sls --tracetype=SLS|RUMEN|SYNTH --tracelocation=F1,F2 --output-dir=D [...]
    emu rumen2sls --rumen-file=F --output-dir=D [--output-prefix=sls]
    emu rm | nm | replay | cluster up|status | keys generate   (docs/multi-process.md)

Errors in user input (scenario, trace or configuration files) print one line
naming the file and the line or key, and exit with code 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from emu.errors import InputError

EXIT_INPUT = 2


def _cmd_run(args: argparse.Namespace) -> int:
    from emu.metrics import outputs
    from emu.metrics.cluster_invariants import ClusterInvariantBroken
    from emu.rm.settings import RMSettings
    from emu.scenario import native
    from emu.simulation import Simulation, run_virtual

    scenario = native.load(args.scenario)
    RMSettings.from_conf(scenario.conf)
    seed = scenario.seed if args.seed is None else args.seed
    sim = Simulation(
        conf=scenario.conf,
        nodes=scenario.nodes,
        workload=scenario.workload,
        faults=scenario.faults,
        seed=seed,
        am_heartbeat_ms=scenario.am_heartbeat_ms,
        check_invariants=args.invariants,
    )
    out = Path(args.output_dir) if args.output_dir else None
    try:
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)
            partial = out / "events.jsonl.partial"
            try:
                with partial.open("w") as events:
                    result = run_virtual(sim, events)
            except BaseException:
                partial.unlink(missing_ok=True)  # no half-written file that looks like a result
                raise
            partial.replace(out / "events.jsonl")
        else:
            result = run_virtual(sim)
    except ClusterInvariantBroken as e:
        print(f"emu: error: {e}", file=sys.stderr)
        return 1
    data = outputs.summary(
        scenario.name, seed, result.jobs, result.metrics, result.simulated_ms, result.faults
    )
    if out is not None:
        outputs.write_jobruntime(out / "jobruntime.csv", result.jobs)
        outputs.write_summary(out / "summary.json", data)
    print(outputs.format_table(data))
    print(
        f"wall {result.wall_seconds:.2f} s; "
        f"{result.simulated_ms / 1000 / max(result.wall_seconds, 1e-9):.0f} simulated s per wall s"
        + (f"; outputs in {out}" if out is not None else "")
    )
    failed = data["cluster"]["apps_failed"]
    return 1 if failed else 0


def _cmd_sls(args: argparse.Namespace) -> int:
    from emu import sls
    from emu.metrics import outputs
    from emu.metrics.cluster_invariants import ClusterInvariantBroken
    from emu.metrics.invariants import InvariantBroken

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
        check_state=bool(args.invariants),
    )
    try:
        done = sls.run(opts)
    except (InvariantBroken, ClusterInvariantBroken) as e:
        print(f"emu: error: {e}", file=sys.stderr)
        return 1
    result = done.result
    print(outputs.format_table(done.summary))
    print(
        f"wall {result.wall_seconds:.2f} s; "
        f"{result.simulated_ms / 1000 / max(result.wall_seconds, 1e-9):.0f} "
        f"simulated s per wall s; outputs in {opts.output_dir}"
    )
    c = done.summary["cluster"]
    return 1 if c["apps_failed"] or c["apps_killed"] else 0


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
Properties emu does not model are accepted and ignored (--print-simulation
lists them); yarn.sls.runner.pool.size, yarn.sls.dns.caching.enabled,
yarn.sls.metrics.web.address.port and yarn.sls.metrics.timer.window.size are
accepted and mean nothing here (emu runs every NM and AM in one trio loop and
serves no web page).

Outputs in --output-dir: jobruntime.csv, summary.json, realtimetrack.json,
metrics/*.csv. They appear only when the run succeeds.

Exit codes: 0 every job finished; 1 a job failed or was killed, or an
invariant broke; 2 bad input (trace, topology, configuration, invariants).
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="emu",
        description="Emulate Hadoop YARN resource management: replay workloads against "
        "FIFO, Capacity or Fair scheduling on a virtual clock.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser(
        "run",
        help="replay a scenario file in one process on the virtual clock",
        description="Replay an emu scenario (TOML: cluster, config, jobs, faults) in one "
        "process, as fast as the CPU allows, deterministically for a seed. Writes "
        "jobruntime.csv, summary.json and events.jsonl to --output-dir.",
    )
    run.add_argument("scenario", help="scenario file, e.g. scenarios/three-jobs.toml")
    run.add_argument("--output-dir", "-o", help="where to write outputs (default: print only)")
    run.add_argument("--seed", type=int, help="overrides the scenario's seed")
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
    sls.add_argument("--tracetype", metavar="SLS|RUMEN|SYNTH", help="the trace format")
    sls.add_argument("--tracelocation", metavar="F1,F2,...", help="trace files, comma-separated")
    sls.add_argument("--input-rumen", metavar="F1,F2,...", help="deprecated: --tracetype=RUMEN")
    sls.add_argument("--input-sls", metavar="F1,F2,...", help="deprecated: --tracetype=SLS")
    sls.add_argument("--output-dir", required=True, metavar="DIR", help="where outputs go")
    sls.add_argument(
        "--nodes", metavar="FILE", help="cluster topology file (default: the nodes the trace names)"
    )
    sls.add_argument(
        "--track-jobs",
        metavar="J1,J2,...",
        help="trace job ids whose containers and resources are recorded every second",
    )
    sls.add_argument(
        "--print-simulation",
        action="store_true",
        help="print nodes, apps, tasks, each app's summary and ignored properties first",
    )
    sls.add_argument(
        "--conf-dir",
        metavar="DIR",
        help="Hadoop configuration directory (default: $HADOOP_CONF_DIR)",
    )
    sls.add_argument(
        "-D",
        dest="define",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="set a configuration property over the files (repeatable), e.g. "
        "-D yarn.resourcemanager.scheduler.class=fifo",
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
        "ongoing-invariants.txt (repeatable); given at all, with or without a file, it "
        "also checks the RM's state invariants as `emu run --invariants` does",
    )
    sls.add_argument(
        "--exit-invariants",
        action="append",
        default=[],
        metavar="FILE",
        help="invariants checked once the run ends, e.g. Hadoop's exit-invariants.txt",
    )
    sls.add_argument(
        "--rate",
        type=float,
        metavar="R",
        help="run on scaled wall time, R simulated seconds per wall second "
        "(default: virtual time, as fast as possible)",
    )
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

    from emu.processes.commands import add_commands

    add_commands(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except InputError as e:
        print(f"emu: error: {e}", file=sys.stderr)
        return EXIT_INPUT


if __name__ == "__main__":
    sys.exit(main())

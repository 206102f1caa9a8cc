"""The `emu` command.

    emu run SCENARIO [--output-dir D] [--seed N]

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
    )
    out = Path(args.output_dir) if args.output_dir else None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        partial = out / "events.jsonl.partial"
        with partial.open("w") as events:
            result = run_virtual(sim, events)
        partial.replace(out / "events.jsonl")
    else:
        result = run_virtual(sim)
    data = outputs.summary(scenario.name, seed, result.jobs, result.metrics, result.simulated_ms)
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
    run.set_defaults(func=_cmd_run)
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

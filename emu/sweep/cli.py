"""`emu sweep SPEC.toml [-o DIR] [-j N] [--dask ADDRESS]`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from emu.errors import InputError

DESCRIPTION = """Run a grid of replays: the spec's traces x configurations x cluster sizes x
seeds, each point `emu sls` (or `emu run` for a scenario) in its own process,
up to --jobs at once, or on a Dask cluster with --dask. Outputs go to
--output-dir: points/<id>/out/ per point, results.csv (and results.parquet
with pyarrow) with each point's parameters and figures. Run it again to
finish an interrupted sweep: finished points are not run again.
`emu report DIR` draws the sweep and ranks its points by the spec's objective.

Exit codes: 0 every point ran to its end (a point whose jobs failed did);
1 some point errored: bad input, a crash or a timeout (see its result.json);
2 bad spec.
"""


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "sweep",
        help="run a grid of replays (traces x configs x cluster sizes x seeds)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("spec", help="the sweep spec, e.g. scenarios/sweeps/three-schedulers.toml")
    p.add_argument(
        "--output-dir", "-o", metavar="DIR", help="the sweep directory (default: sweep-NAME)"
    )
    p.add_argument(
        "--jobs",
        "-j",
        type=int,
        metavar="N",
        help="points run at once, locally (default: the number of cores)",
    )
    p.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="run the points on this Dask scheduler, e.g. tcp://10.0.0.5:8786 "
        "(needs pip install 'emu[dask]'; default: run locally)",
    )
    p.add_argument(
        "--progress",
        choices=("auto", "always", "never"),
        default="auto",
        help="the progress bar on stderr: auto rewrites it in place on a terminal and "
        "prints a line per point elsewhere; always prints lines; never (default: auto)",
    )
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from emu.sweep import spec as spec_mod
    from emu.sweep import table
    from emu.sweep.runner import run

    if args.jobs is not None and args.jobs < 1:
        raise InputError("--jobs", str(args.jobs), "must be at least 1")
    spec = spec_mod.load(args.spec)
    out = Path(args.output_dir or f"sweep-{spec.name}")
    try:
        rows = run(spec, out, jobs=args.jobs, dask_address=args.dask, progress=args.progress)
    except KeyboardInterrupt:
        print(
            f"emu: sweep stopped; finished points are kept in {out}/points, "
            "and the same command runs the rest",
            file=sys.stderr,
        )
        return 130
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    print(
        f"sweep {spec.name}: {len(rows)} point{'s' if len(rows) != 1 else ''}, "
        + ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
        + f"; table in {out / 'results.csv'}"
    )
    best = table.ranked(rows, spec.objective, spec.goal)
    if best:
        print(f"best by {spec.objective} ({spec.goal}):")
        for r in best[:5]:
            print(f"  {r[spec.objective]:>10}  {r['point']}")
    if spec.target is not None:
        target = table.read_manifest(out)["target"]
        print(f"smallest cluster meeting {spec.target.describe()}:")
        for a in table.sizing(rows, target):
            print(f"  {a['trace']} / {a['config']}: {table.answer(a)}")
    for r in rows:
        if r["status"] == "error":
            print(f"emu: point {r['point']} errored: {(r.get('error') or '').splitlines()[-1:]}")
    return 0 if all(r["status"] in table.FINISHED for r in rows) else 1

"""`python -m emu.fidelity.fuzz` (`make fidelity-fuzz`): the differential campaign.

Draws `--count` random cases from `--seed` (emu.fidelity.fuzz.generate),
replays each under emu's port and Hadoop's own scheduler, twice each, in
`--jobs` worker processes, and prints a table per class: cases, identical,
replays that were not the same twice, and the kinds of first divergence.
A diverging case is shrunk to a small reproducer written as a fidelity case
under `--out`/reproducers. `--write` puts the table into docs/fidelity.md;
`--baseline` records which cases agreed and `--check` fails when one of
them no longer does (what `make fidelity-ci` runs).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from emu.errors import InputError
from emu.fidelity.fuzz import campaign
from emu.fidelity.fuzz.generate import KINDS, case_name
from emu.fidelity.fuzz.report import markdown, replace_section, table
from emu.fidelity.fuzz.spec import FuzzCase
from emu.hadoop.classpath import HADOOP_VERSION, check_version
from emu.metrics.progress import BatchProgress

REPO = Path(__file__).resolve().parents[3]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m emu.fidelity.fuzz",
        description="Replay random Hadoop inputs under emu's scheduler and Hadoop's own, "
        "and count how often they agree.",
    )
    p.add_argument("--count", type=int, default=100, help="cases to draw (default 100)")
    p.add_argument("--seed", type=int, default=1, help="the campaign's seed (default 1)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes")
    p.add_argument("--kinds", default="", help=f"only these classes (of {', '.join(KINDS)})")
    p.add_argument("--case", type=int, action="append", default=[], help="only case number N")
    p.add_argument(
        "--replay",
        type=Path,
        action="append",
        default=[],
        help="replay this case.json (or a reproducer directory holding one) instead of drawing",
    )
    p.add_argument(
        "--hadoop-version",
        default="",
        help="the Hadoop release both implementations follow: 3.4.2 (the default) or 3.5.0, "
        "whose Capacity cases schedule asynchronously by default and draw its settings",
    )
    p.add_argument(
        "--multi-node",
        action="store_true",
        help="Capacity cases turn on multi-node placement and draw its sorting settings",
    )
    p.add_argument("--out", type=Path, default=REPO / "out" / "fuzz", help="work directory")
    p.add_argument("--shrink", type=int, default=40, help="trial replays to shrink a divergence")
    p.add_argument("--timeout", type=float, default=600, help="wall seconds per case")
    p.add_argument("--once", action="store_true", help="replay each implementation once, not twice")
    p.add_argument("--keep", action="store_true", help="keep the outputs of agreeing cases")
    p.add_argument("--write", type=Path, help="put the campaign's table in this markdown file")
    p.add_argument(
        "--baseline",
        type=Path,
        help="record the cases that agreed, and replayed the same twice, in this file",
    )
    p.add_argument(
        "--check", type=Path, help="exit 1 if a case this baseline file lists no longer agrees"
    )
    args = p.parse_args(argv)
    kinds = [k for k in args.kinds.split(",") if k]
    unknown = [k for k in kinds if k not in KINDS]
    try:
        if args.hadoop_version:
            args.hadoop_version = check_version(args.hadoop_version)
        if unknown:
            raise InputError("--kinds", ",".join(unknown), f"not a class; the classes: {KINDS}")
        expected: set[str] | None = None
        if args.check is not None:
            base = _read_baseline(args.check)
            args.seed, args.count, expected = base["seed"], base["count"], set(base["identical"])
    except InputError as e:
        print(f"emu: error: {e}", file=sys.stderr)
        return 2
    numbers = args.case or list(range(args.count))
    replays = []
    for path in args.replay:
        file = path / "case.json" if path.is_dir() else path
        try:
            text = file.read_text(encoding="utf-8")
            FuzzCase.from_json(text)  # refused here, not in a worker
        except OSError as e:
            print(f"emu: error: {file}: {e.strerror}", file=sys.stderr)
            return 2
        except (ValueError, KeyError, TypeError) as e:
            print(f"emu: error: {file}: not a generated case ({e!r})", file=sys.stderr)
            return 2
        replays.append(text)
    tasks = [
        campaign.Task(args.seed, 0, case_json=text, shrink_budget=args.shrink, keep=True)
        for text in replays
    ] or [
        campaign.Task(
            args.seed,
            n,
            shrink_budget=args.shrink,
            keep=args.keep,
            repeat=not args.once,
            hadoop_version=args.hadoop_version,
            multi_node=args.multi_node,
        )
        for n in numbers
        if not kinds or _kind(args.seed, n) in kinds
    ]
    root = args.out / (
        "replays"
        if replays
        else f"seed-{args.seed}"
        + (f"-{args.hadoop_version}" if args.hadoop_version else "")
        + ("-multi-node" if args.multi_node else "")
    )
    start = time.perf_counter()
    bar = BatchProgress("fidelity fuzz", "cases", len(tasks), 0, sys.stderr, sys.stderr.isatty())
    outcomes: list[campaign.Outcome] = []
    try:
        for outcome in campaign.run_tasks(
            tasks, root, args.jobs, args.timeout, lambda t, o: bar.item_done(o.name, _status(o))
        ):
            outcomes.append(outcome)
    except KeyboardInterrupt:
        bar.close()
        print(
            f"fidelity fuzz: interrupted after {len(outcomes)} of {len(tasks)} cases; "
            "nothing written",
            file=sys.stderr,
        )
        return 130
    finally:
        bar.close()
    elapsed = time.perf_counter() - start
    outcomes.sort(key=lambda o: o.name)
    (root / "campaign.json").write_text(
        json.dumps(
            {"seed": args.seed, "count": args.count, "wall_s": round(elapsed, 1),
             "hadoop_version": args.hadoop_version or HADOOP_VERSION,
             "multi_node": args.multi_node,
             "outcomes": [o.to_dict() for o in outcomes]},
            indent=1,
        ),
        encoding="utf-8",
    )  # fmt: skip
    print(table(outcomes))
    for o in outcomes:
        if o.verdict != "identical" or not all(o.deterministic.values()):
            line = f"{o.name} [{o.kind}] {o.verdict}: {o.what}"
            if o.detail:
                line += f" ({o.detail})"
            if o.reproducer:
                line += f"; reproducer {o.reproducer}"
            print(line)
    same = sum(o.verdict == "identical" for o in outcomes)
    print(
        f"fidelity fuzz: seed {args.seed}, {len(outcomes)} cases, {same} identical "
        f"({100 * same / max(len(outcomes), 1):.1f} %), {elapsed:.0f} s; details in {root}"
    )
    if args.write is not None:
        text = markdown(
            outcomes,
            args.seed,
            elapsed,
            args.jobs,
            args.hadoop_version,
            once=args.once,
            multi_node=args.multi_node,
        )
        before = args.write.read_text(encoding="utf-8") if args.write.exists() else ""
        args.write.write_text(replace_section(before, text), encoding="utf-8")
        print(f"fidelity fuzz: wrote {args.write}")
    if args.baseline is not None:
        args.baseline.write_text(
            json.dumps(
                {"seed": args.seed, "count": args.count,
                 "identical": [o.name for o in outcomes
                               if o.verdict == "identical" and all(o.deterministic.values())]},
                indent=1,
            ) + "\n",
            encoding="utf-8",
        )  # fmt: skip
        print(f"fidelity fuzz: wrote {args.baseline}")
    if expected is not None:
        lost = sorted(expected - {o.name for o in outcomes if o.verdict == "identical"})
        if lost:
            print(
                "fidelity fuzz: these cases agreed and no longer do: " + ", ".join(lost),
                file=sys.stderr,
            )
            return 1
    return 0


def _kind(seed: int, number: int) -> str:
    from emu.fidelity.fuzz.generate import kind_of

    return kind_of(seed, number)


def _status(o: campaign.Outcome) -> str:
    if o.verdict == "identical":
        return "ok" if all(o.deterministic.values()) else "not repeatable"
    return o.verdict


def _read_baseline(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        int(data["seed"]), int(data["count"]), list(data["identical"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise InputError(str(path), None, f"not a campaign baseline: {e}") from None
    for name in data["identical"]:
        if not isinstance(name, str) or not name.startswith(case_name(data["seed"], 0)[:-5]):
            raise InputError(str(path), name, "not a case of this seed")
    return data


if __name__ == "__main__":
    sys.exit(main())

"""`python -m emu.fidelity` (`make fidelity`): run the fidelity suite.

Replays every case with emu's scheduler and Hadoop's, compares them
(emu.fidelity.compare), prints one line per case and, with `--write`, writes
docs/fidelity.md. `--check` exits 1 when a case marked `exact` in the suite
file no longer agrees exactly, which is what `.ci/run` runs on the `ci`
subset after the tests.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from emu.errors import InputError
from emu.fidelity import compare, report, runner, suite
from emu.hadoop.classpath import HADOOP_VERSION

REPO = Path(__file__).resolve().parents[2]
SYNTH_SLS_NOTE = (
    "emu draws a SYNTH file's jobs with SLS's own generators (emu/scenario/synth.py), "
    "so both replay the same jobs, task counts, sizes and times; only the node each "
    "task prefers can differ, as SLS indexes its NMs in an order the threads that "
    "start them race for."
)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m emu.fidelity",
        description="Replay the fidelity suite with emu's scheduler and with Hadoop's, "
        "and measure how far apart they are.",
    )
    p.add_argument("--suite", type=Path, default=suite.SUITE_FILE, help="the case list")
    p.add_argument("--cases", default="", help="only these cases (comma-separated names)")
    p.add_argument("--subset", choices=("all", "ci"), default="all", help="ci: the short subset")
    p.add_argument("--out", type=Path, default=REPO / "out" / "fidelity", help="work directory")
    p.add_argument("--jobs", type=int, default=2, help="replays at once (default 2)")
    p.add_argument("--write", type=Path, help="write the report here (e.g. docs/fidelity.md)")
    p.add_argument(
        "--no-sls",
        action="store_true",
        help="skip the runs through Hadoop's own SLS (wall clock: most of the suite's time)",
    )
    p.add_argument(
        "--no-rest",
        action="store_true",
        help="skip the REST API comparison with a real ResourceManager",
    )
    p.add_argument(
        "--check",
        action="store_true",
        help="exit 1 if a case marked exact in the suite no longer agrees exactly",
    )
    args = p.parse_args(argv)
    try:
        cases = _select(suite.load(args.suite), args.cases, args.subset)
    except InputError as e:
        print(f"emu: error: {e}", file=sys.stderr)
        return 2
    start = time.perf_counter()
    replays = runner.run_cases(cases, args.out, jobs=args.jobs)
    comparisons: dict[str, compare.Comparison | None] = {}
    failed: list[str] = []
    for c in cases:
        r = replays[c.name]
        if not all(r[i].ok for i in runner.IMPLS):
            comparisons[c.name] = None
            for i in runner.IMPLS:
                if not r[i].ok:
                    failed.append(f"{c.name} [{i}]: exit {r[i].exit_code}: {r[i].error}")
            continue
        got = compare.compare_runs(r["emu"].out, r["hadoop"].out)
        comparisons[c.name] = got
        if not got.exact or got.divergence is not None:
            _side_by_side(r["emu"].out, r["hadoop"].out, args.out / c.name / "report.html")
    for c in cases:
        print(f"{c.name:24} {_verdict(comparisons[c.name])}")
    exact, total = report.headline(cases, comparisons)
    print(f"fidelity: {exact} of {total} cases agree exactly; {time.perf_counter() - start:.0f} s")
    for line in failed:
        print(f"fidelity: failed: {line}", file=sys.stderr)
    sections: list[str] = []
    whole = args.subset == "all" and not args.cases
    if not args.no_sls and whole:
        from emu.fidelity import sls_oracle

        emu_runs = {
            name: (r["emu"].out, r["emu"].wall_s) for name, r in replays.items() if r["emu"].ok
        }
        rows = sls_oracle.sls_table(cases, args.out, emu_runs)
        section = sls_oracle.render_markdown(rows, emu_label="emu")
        synth = [c.name for c in cases if c.sls and c.tracetype == "SYNTH"]
        if synth:
            section += f"- {', '.join(synth)}: {SYNTH_SLS_NOTE}\n"
        sections.append(section)
        sections.append(report.speed_section(rows, replays))
        print(f"fidelity: SLS ran {sum(len(r.runs) for r in rows)} times")
    if not args.no_rest and whole:
        from emu.fidelity import rest_schema

        rest = rest_schema.check()
        sections.append(rest_schema.markdown(rest))
        bad = [r.scheduler for r in rest if not r.ok]
        print(f"fidelity: REST schema {'differs for ' + ', '.join(bad) if bad else 'matches'}")
    if args.write is not None:
        text = report.render(cases, replays, comparisons, HADOOP_VERSION, REPO, sections)
        if args.write.exists():  # the random campaign's section is kept as it is
            from emu.fidelity.fuzz.report import kept_sections, replace_section

            for kept in kept_sections(args.write.read_text(encoding="utf-8")):
                text = replace_section(text, kept)
        args.write.write_text(text, encoding="utf-8")
        print(f"fidelity: wrote {args.write}")
    if failed:
        return 1
    if args.check:
        broken = [c.name for c in cases if c.exact and not _exact(comparisons[c.name])]
        if broken:
            print(
                "fidelity: these cases agreed exactly and no longer do: " + ", ".join(broken),
                file=sys.stderr,
            )
            return 1
    return 0


def _exact(cmp_: compare.Comparison | None) -> bool:
    return cmp_ is not None and cmp_.exact


def _verdict(cmp_: compare.Comparison | None) -> str:
    if cmp_ is None:
        return "run failed"
    j = cmp_.jobs
    if cmp_.exact:
        return "exact" + ("" if cmp_.divergence is None else " (some decisions differ)")
    return f"{j.differing}/{j.jobs} jobs differ, max end delta {j.max_end_ms / 1000:.1f} s"


def _side_by_side(emu_out: Path, hadoop_out: Path, html: Path) -> None:
    """`emu report` of the two runs, emu's and Hadoop's, side by side."""
    from emu.report.html import render
    from emu.report.runs import load

    html.write_text(render([load(str(emu_out)), load(str(hadoop_out))]), encoding="utf-8")


def _select(cases: list[suite.Case], names: str, subset: str) -> list[suite.Case]:
    if names:
        wanted = [n for n in names.split(",") if n]
        known = {c.name for c in cases}
        unknown = [n for n in wanted if n not in known]
        if unknown:
            raise InputError("--cases", ",".join(unknown), "no such case in the suite")
        return [c for c in cases if c.name in wanted]
    if subset == "ci":
        return [c for c in cases if c.ci]
    return cases


if __name__ == "__main__":
    sys.exit(main())

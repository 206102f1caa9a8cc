"""`make regold` (`python -m tests.regold`): rewrite the golden outputs.

tests/integration/test_golden_outputs.py compares what the reference replays
produce with the copies in `tests/data/golden/`; this command replays the
same cases and overwrites those copies. Use it only for a change meant to
alter outputs (a fidelity fix), and commit the diff of `tests/data/golden/`
with that change, where a reviewer sees exactly what moved.

    python -m tests.regold [CASE ...]      # default: every reference case
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
from pathlib import Path

from emu.sls import run
from tests.reference import (
    GOLDEN,
    REFERENCE_CASES,
    comparable_outputs,
    reference_options,
    write_bench_inputs,
)


def regold(cases: list[str], work: Path) -> list[Path]:
    """Replay `cases` under `work` and write their outputs to `GOLDEN`; the
    files that changed."""
    bench = write_bench_inputs(work / "bench")
    changed: list[Path] = []
    for case in cases:
        out = work / case
        run(reference_options(case, out, bench), stdout=io.StringIO())
        for name, got in comparable_outputs(out).items():
            kept = GOLDEN / case / name
            if kept.exists() and kept.read_bytes() == got:
                continue
            kept.parent.mkdir(parents=True, exist_ok=True)
            kept.write_bytes(got)
            changed.append(kept)
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.regold",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "cases",
        nargs="*",
        metavar="CASE",
        help=f"cases to rewrite (default all: {', '.join(REFERENCE_CASES)})",
    )
    args = parser.parse_args(argv)
    unknown = sorted(set(args.cases) - set(REFERENCE_CASES))
    if unknown:
        parser.error(f"unknown case(s) {', '.join(unknown)}; known: {', '.join(REFERENCE_CASES)}")
    with tempfile.TemporaryDirectory(prefix="emu-regold-") as tmp:
        changed = regold(args.cases or list(REFERENCE_CASES), Path(tmp))
    root = GOLDEN.parent.parent.parent
    for path in changed:
        print(f"rewrote {path.relative_to(root)}")
    print(f"{len(changed)} golden file(s) changed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

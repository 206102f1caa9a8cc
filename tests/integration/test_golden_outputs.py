"""Refactoring and speed work must not change what a replay produces.

Hadoop's reference traces (SLS under FIFO, Capacity and Fair; SYNTH; Rumen)
and a small loaded version of the benchmark workload are replayed and their
jobruntime.csv, summary.json and realtimetrack.json compared byte for byte
with the copies kept in `tests/data/golden/` (less the wall-time fields SLS
itself puts in realtimetrack: JVM memory and time costs).

This test only compares. A change that is meant to alter outputs (a
fidelity fix) rewrites the copies with `make regold` (`python -m
tests.regold`), and the diff of `tests/data/golden/` goes into the same
commit, where a reviewer sees exactly what changed.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from emu.sls import run
from tests.reference import GOLDEN, REFERENCE_CASES, comparable_outputs, reference_options


@pytest.mark.parametrize("case", REFERENCE_CASES)
def test_outputs_match_golden_copies(tmp_path: Path, bench_inputs: Path, case: str) -> None:
    run(reference_options(case, tmp_path, bench_inputs), stdout=io.StringIO())
    for name, got in comparable_outputs(tmp_path).items():
        kept = GOLDEN / case / name
        assert kept.exists(), f"no golden copy {kept}: `make regold` writes it"
        assert got == kept.read_bytes(), f"{case}/{name} differs from {kept}"
    if case.startswith("bench-"):
        summary = (tmp_path / "summary.json").read_bytes()
        assert summary.count(b'"FINISHED"') >= 20

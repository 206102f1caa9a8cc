"""Refactoring and speed work must not change what a replay produces.

Hadoop's reference traces (SLS under FIFO, Capacity and Fair; SYNTH; Rumen)
and a small loaded version of the benchmark workload are replayed and their
jobruntime.csv, summary.json and realtimetrack.json compared byte for byte
with the copies kept in `tests/data/golden/` (less the wall-time fields SLS
itself puts in realtimetrack: JVM memory and time costs).

A change that is meant to alter outputs (a fidelity fix) regenerates them
with `EMU_REGOLD=1 pytest tests/integration/test_golden_outputs.py` and the
diff of `tests/data/golden/` goes into the same commit, where a reviewer
sees exactly what changed.
"""

from __future__ import annotations

import io
import os
import re
from pathlib import Path

import pytest

from emu.bench import workload as W
from emu.sls import SlsOptions, run
from tests.reference import REFERENCE_DIR

GOLDEN = Path(__file__).resolve().parent.parent / "data" / "golden"
TEST_RES = REFERENCE_DIR / "test-resources"
WALL_FIELDS = re.compile(rb'"(jvm[^"]*|[^"]*timecost)": [0-9.eE+-]+')
SCHEDULER = "yarn.resourcemanager.scheduler.class"
FILES = ("jobruntime.csv", "summary.json", "realtimetrack.json")


@pytest.fixture(scope="module")
def bench_inputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """20 nodes, 90 s of arrivals at 80 % memory, jobs a tenth the size."""
    out = tmp_path_factory.mktemp("bench")
    W.write_conf_dirs(out)
    W.write_nodes(out / "nodes.json", 20)
    small = W.Shape(maps=(5, 15), reduces=(1, 2))
    W.write_trace(out / "trace.json", W.jobs(20, 90, 0.8, seed=5, shape=small))
    return out


def _options(case: str, out: Path, bench: Path) -> SlsOptions:
    if case.startswith("sls-"):
        return SlsOptions(
            output_dir=out,
            tracetype="SLS",
            traces=[str(TEST_RES / "inputsls.json")],
            nodes_file=str(TEST_RES / "nodes.json"),
            conf_dir=str(TEST_RES),
            overrides={SCHEDULER: case.removeprefix("sls-")},
        )
    if case == "synth":
        return SlsOptions(
            output_dir=out,
            tracetype="SYNTH",
            traces=[str(TEST_RES / "syn.json")],
            conf_dir=str(TEST_RES),
        )
    if case == "rumen":
        return SlsOptions(
            output_dir=out,
            tracetype="RUMEN",
            traces=[str(REFERENCE_DIR / "sample-data" / "2jobs2min-rumen-jh.json")],
            conf_dir=str(REFERENCE_DIR / "sample-conf"),
        )
    scheduler = case.removeprefix("bench-")
    return SlsOptions(
        output_dir=out,
        tracetype="SLS",
        traces=[str(bench / "trace.json")],
        nodes_file=str(bench / "nodes.json"),
        conf_dir=str(bench / scheduler),
    )


CASES = [
    "sls-fifo",
    "sls-capacity",
    "sls-fair",
    "synth",
    "rumen",
    "bench-fifo",
    "bench-capacity",
    "bench-fair",
]


@pytest.mark.parametrize("case", CASES)
def test_outputs_match_golden_copies(tmp_path: Path, bench_inputs: Path, case: str) -> None:
    run(_options(case, tmp_path, bench_inputs), stdout=io.StringIO())
    for name in FILES:
        got = (tmp_path / name).read_bytes()
        if name == "realtimetrack.json":
            got = WALL_FIELDS.sub(b"", got)
        kept = GOLDEN / case / name
        if os.environ.get("EMU_REGOLD") == "1":
            kept.parent.mkdir(parents=True, exist_ok=True)
            kept.write_bytes(got)
            continue
        assert kept.exists(), f"no golden copy {kept}; run with EMU_REGOLD=1 once"
        assert got == kept.read_bytes(), f"{case}/{name} differs from {kept}"
    if case.startswith("bench-"):
        summary = (tmp_path / "summary.json").read_bytes()
        assert summary.count(b'"FINISHED"') >= 20

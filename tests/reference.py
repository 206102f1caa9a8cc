"""Where the Apache Hadoop reference inputs live, and the reference replays
that the output-preservation tests (golden copies, shortcuts on/off) run.

`tests/data/hadoop/` is a verbatim copy of the shared reference material
(SLS traces, topology files, Hadoop configuration files; Apache License 2.0,
provenance in its SOURCES.md), so the suite runs from a checkout alone and a
change to the shared folder cannot change what the tests see unnoticed.
"""

from __future__ import annotations

import re
from pathlib import Path

from emu.bench import workload as W
from emu.sls import SlsOptions

REFERENCE_DIR = Path(__file__).resolve().parent / "data" / "hadoop"
GOLDEN = Path(__file__).resolve().parent / "data" / "golden"
"""The kept outputs of `REFERENCE_CASES`: tests/integration/test_golden_outputs.py
compares against them, `make regold` (tests/regold.py) rewrites them."""
TEST_RES = REFERENCE_DIR / "test-resources"
SCHEDULER = "yarn.resourcemanager.scheduler.class"

OUTPUT_FILES = ("jobruntime.csv", "summary.json", "realtimetrack.json")
WALL_FIELDS = re.compile(rb'"(jvm[^"]*|[^"]*timecost)": [0-9.eE+-]+')
"""The wall-time fields SLS itself puts in realtimetrack.json (JVM memory and
time costs): the only part of the outputs that may differ between runs."""

REFERENCE_CASES = (
    "sls-fifo",
    "sls-capacity",
    "sls-fair",
    "synth",
    "rumen",
    "bench-fifo",
    "bench-capacity",
    "bench-fair",
)
"""Hadoop's SLS trace under each scheduler, its SYNTH and Rumen samples, and
a small loaded benchmark workload under each scheduler."""


def write_bench_inputs(out: Path) -> Path:
    """A small, loaded version of the benchmark in `out`: 20 nodes, 90 s of
    arrivals at 80 % memory of jobs a tenth the size (so several run at
    once), a quarter of them with host preferences."""
    W.write_conf_dirs(out)
    W.write_nodes(out / "nodes.json", 20)
    small = W.Shape(maps=(5, 15), reduces=(1, 2))
    W.write_trace(out / "trace.json", W.jobs(20, 90, 0.8, seed=5, shape=small))
    return out


def reference_options(case: str, out: Path, bench: Path) -> SlsOptions:
    """The `emu sls` options of one of `REFERENCE_CASES`, writing to `out`;
    `bench` is where `write_bench_inputs` wrote."""
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
            output_dir=out, tracetype="SYNTH", traces=[str(TEST_RES / "syn.json")],
            conf_dir=str(TEST_RES),
        )  # fmt: skip
    if case == "rumen":
        return SlsOptions(
            output_dir=out,
            tracetype="RUMEN",
            traces=[str(REFERENCE_DIR / "sample-data" / "2jobs2min-rumen-jh.json")],
            conf_dir=str(REFERENCE_DIR / "sample-conf"),
        )
    return SlsOptions(
        output_dir=out,
        tracetype="SLS",
        traces=[str(bench / "trace.json")],
        nodes_file=str(bench / "nodes.json"),
        conf_dir=str(bench / case.removeprefix("bench-")),
    )


WALL_METRICS = ("sampler.", "variable.jvm.")
"""metrics/ CSVs of wall-clock timings and the JVM-compatible memory figures."""


def comparable_outputs(out: Path) -> dict[str, bytes]:
    """A replay's output files as bytes, less `WALL_FIELDS`; and, as
    `metrics.csv`, its metrics/ CSVs but `WALL_METRICS`, each after a
    `# name` line (so the compiled and pure-Python forms are held to the
    same numbers there too)."""
    files = {name: (out / name).read_bytes() for name in OUTPUT_FILES}
    files["realtimetrack.json"] = WALL_FIELDS.sub(b"", files["realtimetrack.json"])
    metrics = out / "metrics"
    if metrics.is_dir():
        files["metrics.csv"] = b"".join(
            b"# " + p.name.encode() + b"\n" + p.read_bytes()
            for p in sorted(metrics.iterdir())
            if not p.name.startswith(WALL_METRICS)
        )
    return files

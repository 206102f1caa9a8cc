"""Shortcuts (the schedulers' and the protocol's in-process frames, one
switch) change speed, never outputs: Hadoop's reference traces
and a small version of the benchmark workload, replayed with the shortcuts
on and off under FIFO, Capacity and Fair, give byte-identical
jobruntime.csv, summary.json and realtimetrack.json (less the wall-time
fields SLS itself puts in realtimetrack: JVM memory and time costs)."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from emu.bench import workload as W
from emu.rm.scheduler import shortcuts
from emu.sls import SlsOptions, run
from tests.reference import REFERENCE_DIR

TEST_RES = REFERENCE_DIR / "test-resources"
WALL_FIELDS = re.compile(rb'"(jvm[^"]*|[^"]*timecost)": [0-9.eE+-]+')
SCHEDULER = "yarn.resourcemanager.scheduler.class"


@pytest.fixture(scope="module")
def bench_inputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small, loaded version of the benchmark: 20 nodes, 90 s of
    arrivals at 80 % memory of jobs a tenth the size (so several run at
    once), a quarter of them with host preferences."""
    out = tmp_path_factory.mktemp("bench")
    W.write_conf_dirs(out)
    W.write_nodes(out / "nodes.json", 20)
    small = W.Shape(maps=(5, 15), reduces=(1, 2))
    W.write_trace(out / "trace.json", W.jobs(20, 90, 0.8, seed=5, shape=small))
    return out


@pytest.fixture(autouse=True)
def restore_shortcuts() -> Iterator[None]:
    before = shortcuts.enabled()
    yield
    shortcuts.set_enabled(before)


def _outputs(opts: SlsOptions, on: bool) -> dict[str, bytes]:
    shortcuts.set_enabled(on)
    run(opts, stdout=io.StringIO())
    out = Path(opts.output_dir)
    return {
        "jobruntime.csv": (out / "jobruntime.csv").read_bytes(),
        "summary.json": (out / "summary.json").read_bytes(),
        "realtimetrack.json": WALL_FIELDS.sub(b"", (out / "realtimetrack.json").read_bytes()),
    }


def _both_ways(tmp_path: Path, **kw: object) -> tuple[dict[str, bytes], dict[str, bytes]]:
    on = _outputs(SlsOptions(output_dir=tmp_path / "on", **kw), True)  # type: ignore[arg-type]
    off = _outputs(SlsOptions(output_dir=tmp_path / "off", **kw), False)  # type: ignore[arg-type]
    return on, off


@pytest.mark.parametrize("scheduler", ["fifo", "capacity", "fair"])
def test_reference_sls_trace_identical_with_and_without_shortcuts(
    tmp_path: Path, scheduler: str
) -> None:
    on, off = _both_ways(
        tmp_path,
        tracetype="SLS",
        traces=[str(TEST_RES / "inputsls.json")],
        nodes_file=str(TEST_RES / "nodes.json"),
        conf_dir=str(TEST_RES),
        overrides={SCHEDULER: scheduler},
    )
    assert on == off
    assert b"job_1" in on["jobruntime.csv"]


def test_reference_synth_trace_identical_with_and_without_shortcuts(tmp_path: Path) -> None:
    on, off = _both_ways(
        tmp_path, tracetype="SYNTH", traces=[str(TEST_RES / "syn.json")], conf_dir=str(TEST_RES)
    )
    assert on == off


@pytest.mark.parametrize("scheduler", ["fair", "capacity", "fifo"])
def test_loaded_bench_workload_identical_with_and_without_shortcuts(
    tmp_path: Path, bench_inputs: Path, scheduler: str
) -> None:
    on, off = _both_ways(
        tmp_path,
        tracetype="SLS",
        traces=[str(bench_inputs / "trace.json")],
        nodes_file=str(bench_inputs / "nodes.json"),
        conf_dir=str(bench_inputs / scheduler),
    )
    assert on == off
    # the workload is a loaded one: many jobs, all finished
    assert on["summary.json"].count(b'"FINISHED"') >= 20
    assert b'"FAILED"' not in on["summary.json"]

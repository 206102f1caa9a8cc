"""Shortcuts (the schedulers' and the protocol's in-process frames, one
switch) change speed, never outputs: Hadoop's reference traces
and a small version of the benchmark workload, replayed with the shortcuts
on and off under FIFO, Capacity and Fair, give byte-identical
jobruntime.csv, summary.json and realtimetrack.json (less the wall-time
fields SLS itself puts in realtimetrack: JVM memory and time costs)."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest

from emu.rm.scheduler import shortcuts
from emu.sls import run
from tests.reference import REFERENCE_CASES, comparable_outputs, reference_options


@pytest.fixture(autouse=True)
def restore_shortcuts() -> Iterator[None]:
    before = shortcuts.enabled()
    yield
    shortcuts.set_enabled(before)


def _outputs(case: str, out: Path, bench: Path, on: bool) -> dict[str, bytes]:
    shortcuts.set_enabled(on)
    run(reference_options(case, out, bench), stdout=io.StringIO())
    return comparable_outputs(out)


@pytest.mark.parametrize("case", REFERENCE_CASES)
def test_outputs_identical_with_and_without_shortcuts(
    tmp_path: Path, bench_inputs: Path, case: str
) -> None:
    on = _outputs(case, tmp_path / "on", bench_inputs, True)
    off = _outputs(case, tmp_path / "off", bench_inputs, False)
    assert on == off
    if case.startswith("sls-"):
        assert b"job_1" in on["jobruntime.csv"]
    if case.startswith("bench-"):
        # the workload is a loaded one: many jobs, all finished
        assert on["summary.json"].count(b'"FINISHED"') >= 20
        assert b'"FAILED"' not in on["summary.json"]

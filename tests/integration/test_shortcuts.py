"""The schedulers' shortcuts (`emu.scheduler.shortcuts`) change speed,
never outputs: Hadoop's reference traces
and a small version of the benchmark workload, replayed with the shortcuts
on and off under FIFO, Capacity and Fair, give byte-identical
jobruntime.csv, summary.json and realtimetrack.json (less the wall-time
fields SLS itself puts in realtimetrack: JVM memory and time costs)."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import pytest

from emu.rm.scheduler.capacity.multi_node import AS_OPERATORS_TURN_IT_ON
from emu.rm.settings import SHORTCUTS
from emu.sls import run
from tests.reference import REFERENCE_CASES, comparable_outputs, reference_options


def _outputs(case: str, out: Path, bench: Path, on: bool) -> dict[str, bytes]:
    opts = reference_options(case, out, bench)
    opts = dataclasses.replace(opts, overrides={**opts.overrides, SHORTCUTS: str(on).lower()})
    run(opts, stdout=io.StringIO())
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


@pytest.mark.parametrize(
    ("case", "version", "multi_node"),
    [
        ("sls-capacity", "3.5.0", False),
        ("bench-capacity", "3.5.0", False),
        ("sls-capacity", "3.4.2", True),
        ("bench-capacity", "3.5.0", True),
    ],
)
def test_asynchronous_scheduling_identical_with_and_without_shortcuts(
    tmp_path: Path, bench_inputs: Path, case: str, version: str, multi_node: bool
) -> None:
    """Hadoop 3.5's asynchronous scheduling: with the shortcuts, no pass runs
    after one that changed nothing until something changes, and a pass
    skips the nodes without room; without them every tick runs every pass.
    With multi-node placement (on heartbeats under 3.4.2, in passes under
    3.5.0) a quiet heartbeat is skipped only while nothing is asked for or
    reserved, and a pass stops offering a partition once an offer changed
    nothing."""

    def outputs(out: Path, on: bool) -> dict[str, bytes]:
        opts = reference_options(case, out, bench_inputs)
        overrides = {**opts.overrides, "emu.hadoop.version": version, SHORTCUTS: str(on).lower()}
        if multi_node:
            overrides.update(AS_OPERATORS_TURN_IT_ON)
        run(dataclasses.replace(opts, overrides=overrides), stdout=io.StringIO())
        return comparable_outputs(out)

    on, off = outputs(tmp_path / "on", True), outputs(tmp_path / "off", False)
    assert on == off
    assert b"job_1" in on["jobruntime.csv"] or b'"FINISHED"' in on["summary.json"]

"""The progress line: what it says, when it speaks, and that it changes nothing."""

from __future__ import annotations

import io
import re
from types import SimpleNamespace

import pytest

from emu.cli import main
from emu.metrics.progress import Progress, duration, trace_span_ms
from emu.resources import Resource
from emu.simulation import Simulation, run_virtual
from emu.testing.cluster import fifo_conf, mr_job, nodes
from emu.workload import JobSpec, TaskSpec, Workload


def _workload() -> Workload:
    return Workload([mr_job("j1", 0, maps=4), mr_job("j2", 30_000, maps=4)])


def _sim(progress: Progress | None) -> Simulation:
    return Simulation(
        conf=fifo_conf(),
        nodes=nodes(2),
        workload=_workload(),
        faults=[],
        on_tick=progress.tick if progress is not None else None,
    )


def test_duration_is_compact():
    assert duration(7.9) == "7s"
    assert duration(245) == "4m05s"
    assert duration(3723) == "1h02m03s"


def test_trace_span_is_the_latest_recorded_end_or_submission():
    w = Workload([mr_job("a", 1000), mr_job("b", 5000)])
    assert trace_span_ms(w) == 5000


def test_every_report_names_time_span_apps_jobs_memory_and_speed():
    out = io.StringIO()
    p = Progress(_workload(), out, terminal=False, first_after_s=0, every_s=0)
    result = run_virtual(_sim(p))
    lines = out.getvalue().splitlines()
    assert len(lines) == p.lines == result.simulated_ms // 1000 + 1  # one per simulated second
    assert lines[0].startswith("emu: sim 0s (0% of work done)")
    assert re.search(r"sim 30s \(\d+% of work done\)  apps running \d+  jobs 0/2 done", lines[30])
    assert all("memory " in line and "sim-s/wall-s" in line for line in lines)
    # the last report is the one at the end of the run: both jobs have finished
    assert "(100% of work done)  apps running 0  jobs 2/2 done" in lines[-1]
    assert "ETA" not in lines[-1]


def test_the_percentage_follows_the_work_done_and_never_passes_100():
    """Jobs run far past the trace's declared span (j2 is submitted at 30 s,
    its maps alone take 60 s): the percentage still only rises, up to 100 %
    when the last job ends, and an ETA is given while work is left."""
    out = io.StringIO()
    p = Progress(_workload(), out, terminal=False, first_after_s=0, every_s=0)
    run_virtual(_sim(p))
    lines = out.getvalue().splitlines()
    pcts = [int(m.group(1)) for m in (re.search(r"\((\d+)% of work done\)", x) for x in lines) if m]
    assert len(pcts) == len(lines)
    assert pcts == sorted(pcts) and pcts[-1] == 100 and max(pcts) <= 100
    # 100 % only once every job has ended
    assert all("jobs 2/2 done" in x for x, pct in zip(lines, pcts, strict=True) if pct == 100)
    assert all("ETA" in x for x, pct in zip(lines, pcts, strict=True) if 0 < pct < 100)


def test_done_fraction_and_eta_come_from_the_work_left():
    """j1 (4 GB x 10 s) has ended, j2 (1 GB x 30 s) has done 10 s of its 30,
    j3 (5 GB x 10 s) is not submitted: 50 of 120 GB x s are done, and after
    10 wall seconds the 70 left take 14 more at that rate."""
    jobs = [
        JobSpec("j1", "mapreduce", 0, "default", "u", Resource(1024, 1), (_task(4096, 10_000),)),
        JobSpec("j2", "mapreduce", 0, "default", "u", Resource(1024, 1), (_task(1024, 30_000),)),
        JobSpec(
            "j3", "mapreduce", 90_000, "default", "u", Resource(1024, 1), (_task(5120, 10_000),)
        ),
    ]
    apps = {
        "application_1": SimpleNamespace(name="j1", finished_ms=20_000, memory_seconds=9_999_999),
        "application_2": SimpleNamespace(name="j2", finished_ms=-1, memory_seconds=1024 * 10),
    }
    rm = SimpleNamespace(ctx=SimpleNamespace(apps=apps))
    p = Progress(Workload(jobs), io.StringIO(), terminal=False)
    assert p.done_fraction(rm, 60_000) == 50 / 120
    # retention forgot j1: it was submitted long ago, so it still counts as done
    del apps["application_1"]
    assert p.done_fraction(rm, 60_000) == 50 / 120
    assert p.eta_s(50 / 120, p.started + 10) == pytest.approx(14)


def _task(memory: int, ms: int) -> TaskSpec:
    return TaskSpec("map", 20, ms, Resource(memory, 1))


def test_on_a_terminal_the_line_rewrites_itself_and_is_cleared_at_the_end():
    out = io.StringIO()
    p = Progress(_workload(), out, terminal=True, first_after_s=0, every_s=0)
    run_virtual(_sim(p))
    p.close()
    text = out.getvalue()
    assert "\n" not in text and text.count("\r") == p.lines + 2
    assert text.endswith("\r") and text.rstrip("\r").split("\r")[-1].strip() == ""


def test_auto_stays_quiet_when_stderr_is_not_a_terminal():
    w = Workload([mr_job("a")])
    assert Progress.for_mode("auto", w) is None  # pytest captures stderr
    assert Progress.for_mode("never", w) is None
    assert Progress.for_mode("always", w) is not None


def test_short_runs_say_nothing():
    out = io.StringIO()
    p = Progress(_workload(), out, terminal=True)  # first report after 2 wall seconds
    run_virtual(_sim(p))
    p.close()
    assert out.getvalue() == "" and p.lines == 0


def test_the_progress_line_does_not_change_outputs(tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    assert main(["run", "scenarios/three-jobs.toml", "-o", str(a), "--progress", "never"]) == 0
    capsys.readouterr()
    assert main(["run", "scenarios/three-jobs.toml", "-o", str(b), "--progress", "always"]) == 0
    assert capsys.readouterr().err == ""  # a 0.3 s run: nothing to report
    for name in ("events.jsonl", "jobruntime.csv", "summary.json"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def test_a_run_on_scaled_wall_time_says_its_results_can_differ(tmp_path, capsys):
    assert (
        main(["run", "scenarios/three-jobs.toml", "-o", str(tmp_path / "r"), "--rate", "400"]) == 0
    )
    out = capsys.readouterr().out
    assert (
        "ran on scaled wall time (--rate 400): results can differ from the virtual clock's" in out
    )
    assert main(["run", "scenarios/three-jobs.toml", "-o", str(tmp_path / "v")]) == 0
    assert "scaled wall time" not in capsys.readouterr().out

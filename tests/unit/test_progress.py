"""The progress line: what it says, when it speaks, and that it changes nothing."""

from __future__ import annotations

import io
import re

from emu.cli import main
from emu.metrics.progress import Progress, duration, trace_span_ms
from emu.simulation import Simulation, run_virtual
from emu.testing.cluster import fifo_conf, mr_job, nodes
from emu.workload import Workload


def _sim(progress: Progress | None) -> Simulation:
    jobs = [mr_job("j1", 0, maps=4), mr_job("j2", 30_000, maps=4)]
    return Simulation(
        conf=fifo_conf(),
        nodes=nodes(2),
        workload=Workload(jobs),
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
    p = Progress(2, 30_000, out, terminal=False, first_after_s=0, every_s=0)
    result = run_virtual(_sim(p))
    lines = out.getvalue().splitlines()
    assert len(lines) == p.lines == result.simulated_ms // 1000 + 1  # one per simulated second
    assert lines[0].startswith("emu: sim 0s (0% of trace span)")
    assert re.search(r"sim 30s \(100% of trace span\)  apps running \d+  jobs 0/2 done", lines[30])
    assert all("memory " in line and "sim-s/wall-s" in line for line in lines)
    # the last report is the one at the end of the run: both jobs have finished
    assert "apps running 0  jobs 2/2 done" in lines[-1]


def test_on_a_terminal_the_line_rewrites_itself_and_is_cleared_at_the_end():
    out = io.StringIO()
    p = Progress(2, 30_000, out, terminal=True, first_after_s=0, every_s=0)
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
    p = Progress(2, 30_000, out, terminal=True)  # first report after 2 wall seconds
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

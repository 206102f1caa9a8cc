"""emu.api: runs from Python give the command line's results as data, the
examples in docs/python-api.md run as written, and runs in one process do
not disturb each other."""

from __future__ import annotations

import csv
import importlib.util
import re
from pathlib import Path

import pytest

from emu.api import replay, run_scenario
from emu.errors import InputError
from tests.fidelity_runs import case_dir, replay_inputs

ROOT = Path(__file__).resolve().parents[2]
CASE = case_dir("cap-max-capacity")
THREE_JOBS = ROOT / "scenarios" / "three-jobs.toml"


def _case(**kw):  # type: ignore[no-untyped-def]
    return replay(**replay_inputs(CASE), **kw)


def test_a_replay_gives_rows_that_match_its_files(tmp_path: Path) -> None:
    result = _case(output_dir=tmp_path / "out")
    assert result.output_dir == tmp_path / "out"
    assert {"jobruntime.csv", "summary.json", "realtimetrack.json"} <= set(result.files)
    with (tmp_path / "out" / "jobruntime.csv").open() as f:
        on_disk = {row["JobID"]: row for row in csv.DictReader(f)}
    assert [j["job_id"] for j in result.jobs] == ["a_1", "b_1", "a_2", "b_2"]
    for job in result.jobs:
        row = on_disk[job["job_id"]]
        assert job["state"] == "FINISHED" and job["final_status"] == "SUCCEEDED"
        assert job["turnaround_s"] == pytest.approx(job["finish_s"] - job["submit_s"])
        assert round(job["finish_s"] * 1000) == int(row["simulate_end_time"])
    assert result.complete
    assert result.makespan_s >= max(j["finish_s"] for j in result.jobs)
    queues = {row["queue"] for row in result.queue_timeline}
    assert queues == {"root.a", "root.b"}
    peak = max(row["running_apps"] for row in result.timeline)
    assert 1 <= peak <= len(result.jobs)
    assert any(e["why"] == "queue at max capacity" for e in result.why_pending["a_1"])


def test_one_property_changes_the_outcome_and_runs_do_not_disturb_each_other() -> None:
    first = _case()
    narrowed = _case(properties={"yarn.scheduler.capacity.root.a.maximum-capacity": 50})
    unshortcut = _case(properties={"emu.scheduler.shortcuts": False})
    again = _case()
    assert narrowed.jobs != first.jobs  # root.a may no longer grow past its guarantee
    assert narrowed.jobs[0]["turnaround_s"] > first.jobs[0]["turnaround_s"]
    assert again.summary == first.summary
    assert unshortcut.summary == first.summary


def test_a_scenario_under_each_scheduler() -> None:
    results = {s: run_scenario(THREE_JOBS, scheduler=s) for s in ("fifo", "capacity", "fair")}
    queues = {s: {j["queue"] for j in r.jobs} for s, r in results.items()}
    assert queues["fifo"] == {"default"}
    assert all(len(r.jobs) == 3 and r.complete for r in results.values())
    assert results["fifo"].output_dir is None and results["fifo"].files == {}
    waits = {s: max(j["wait_s"] for j in r.jobs) for s, r in results.items()}
    assert waits["fifo"] < waits["fair"]


def test_a_scenario_run_writes_what_emu_run_writes(tmp_path: Path) -> None:
    result = run_scenario(THREE_JOBS, seed=3, output_dir=tmp_path / "run")
    assert set(result.files) == {"events.jsonl", "jobruntime.csv", "summary.json"}
    assert result.summary["seed"] == 3


def test_bad_input_raises_the_command_lines_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"yarn\.resourcemanager\.scheduler\.class"):
        run_scenario(THREE_JOBS, scheduler="no-such-scheduler")
    with pytest.raises(InputError, match=r"missing\.json"):
        replay(tmp_path / "missing.json")


@pytest.mark.skipif(importlib.util.find_spec("pandas") is None, reason="pandas not installed")
def test_to_pandas_gives_the_same_rows() -> None:
    result = run_scenario(THREE_JOBS)
    frame = result.to_pandas("jobs")
    assert list(frame["job_id"]) == [j["job_id"] for j in result.jobs]
    assert len(result.to_pandas("queue_timeline")) == len(result.queue_timeline)
    with pytest.raises(ValueError, match="unknown table"):
        result.to_pandas("nodes")


def _doc_examples() -> list[str]:
    """The Python examples of docs/python-api.md and of the README."""
    blocks = []
    for doc in ("docs/python-api.md", "README.md"):
        blocks += re.findall(r"```python\n(.*?)```", (ROOT / doc).read_text(), re.S)
    return blocks


@pytest.mark.parametrize("index", range(len(_doc_examples())))
def test_the_documented_examples_run_as_written(
    index: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(ROOT)
    exec(compile(_doc_examples()[index], f"documented example {index + 1}", "exec"), {})
    assert capsys.readouterr().out.strip()

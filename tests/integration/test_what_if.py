"""What-if from mid-trace: [[changes]] at a simulated time refresh the
queues, add nodes or decommission them; everything before that time is
identical to the run without the change, and the change decides what
follows. A bad change is refused naming its key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from emu.api import replay, run_scenario
from emu.errors import InputError
from tests.fidelity_runs import case_dir, replay_inputs

ROOT = Path(__file__).resolve().parents[2]
THREE_JOBS = (ROOT / "scenarios" / "three-jobs.toml").read_text()


def _scenario(tmp_path: Path, changes: str, name: str = "s.toml") -> Path:
    path = tmp_path / name
    path.write_text(THREE_JOBS + "\n" + changes)
    return path


def _events_before(out: Path, t_ms: int) -> list[str]:
    lines = (out / "events.jsonl").read_text().splitlines()
    return [line for line in lines if json.loads(line)["t"] < t_ms]


@pytest.mark.parametrize(
    ("change", "at_ms", "faster"),
    [
        ('kind = "add_nodes"\ncount = 4\nmemory_mb = 8192', 60_000, True),
        ('kind = "remove_nodes"\ncount = 2', 30_000, False),
        ('kind = "remove_nodes"\nnodes = ["node1", "node3"]', 30_000, False),
    ],
)
def test_nodes_added_or_removed_mid_trace(
    tmp_path: Path, change: str, at_ms: int, faster: bool
) -> None:
    base = run_scenario(_scenario(tmp_path, "", "base.toml"), output_dir=tmp_path / "base")
    path = _scenario(tmp_path, f"[[changes]]\nat_ms = {at_ms}\n{change}\n")
    branch = run_scenario(path, output_dir=tmp_path / "branch")
    assert _events_before(tmp_path / "branch", at_ms) == _events_before(tmp_path / "base", at_ms)
    assert _events_before(tmp_path / "base", at_ms)  # the prefix is not empty
    mean = lambda r: sum(j["turnaround_s"] for j in r.jobs) / len(r.jobs)  # noqa: E731
    assert (mean(branch) < mean(base)) if faster else (mean(branch) > mean(base))
    assert all(j["state"] == "FINISHED" for j in branch.jobs)
    events = (tmp_path / "branch" / "events.jsonl").read_text()
    assert '"event": "change"' in events


def test_a_capacity_refresh_mid_trace_changes_what_follows(tmp_path: Path) -> None:
    changes = tmp_path / "changes.toml"
    changes.write_text(
        '[[changes]]\nat_ms = 20000\nkind = "refresh_queues"\n'
        'properties = { "yarn.scheduler.capacity.root.a.maximum-capacity" = 100 }\n'
    )
    kw = replay_inputs("cap-max-capacity")
    base = replay(output_dir=tmp_path / "base", **kw)
    branch = replay(output_dir=tmp_path / "branch", changes=changes, **kw)
    assert base.jobs != branch.jobs
    before = [j for j in base.jobs if j["finish_s"] < 20]
    assert [j for j in branch.jobs if j["job_id"] in {b["job_id"] for b in before}] == before
    assert branch.jobs[0]["turnaround_s"] < base.jobs[0]["turnaround_s"]


def test_a_fair_refresh_from_an_allocation_file(tmp_path: Path) -> None:
    case = case_dir("fair-weights")
    flipped = (case / "conf" / "fair-scheduler.xml").read_text()
    flipped = flipped.replace("<weight>3.0</weight>", "<weight>W</weight>")
    flipped = flipped.replace("<weight>1.0</weight>", "<weight>3.0</weight>")
    (tmp_path / "flipped.xml").write_text(
        flipped.replace("<weight>W</weight>", "<weight>1.0</weight>")
    )
    changes = tmp_path / "changes.toml"
    changes.write_text('[[changes]]\nat_ms = 5000\nkind = "refresh_queues"\nfile = "flipped.xml"\n')
    kw = replay_inputs(case)
    base = replay(output_dir=tmp_path / "base", **kw)
    branch = replay(output_dir=tmp_path / "branch", changes=changes, **kw)

    def by_queue(r):  # type: ignore[no-untyped-def]
        return {
            q: max(j["finish_s"] for j in r.jobs if j["queue"] == q) for q in ("root.a", "root.b")
        }

    assert by_queue(branch)["root.b"] < by_queue(base)["root.b"]


@pytest.mark.parametrize(
    ("change", "key", "message"),
    [
        ('kind = "grow"', "changes[0].kind", "unknown change 'grow'"),
        ('kind = "add_nodes"\ncount = 0', "changes[0].count", "must be >= 1"),
        ('kind = "add_nodes"\ncount = 1\nhosts = ["x"]', "changes[0].hosts", "unknown key"),
        ('kind = "remove_nodes"\nnodes = ["nodeX"]', "changes[0].nodes[0]", "no node 'nodeX'"),
        ('kind = "remove_nodes"\ncount = 9', "changes[0].count", "must be <= 4"),
        ('kind = "refresh_queues"', "changes[0].properties", "required"),
        ('kind = "refresh_queues"\nfile = "nowhere.xml"', "changes[0].file", "cannot read"),
    ],
)
def test_a_bad_change_is_refused_by_key(
    tmp_path: Path, change: str, key: str, message: str
) -> None:
    path = _scenario(tmp_path, f"[[changes]]\nat_ms = 1000\n{change}\n")
    with pytest.raises(InputError) as e:
        run_scenario(path)
    assert key in str(e.value) and message in str(e.value)
    assert str(path) in str(e.value)


def test_a_refresh_the_scheduler_refuses_stops_the_run_saying_why(tmp_path: Path) -> None:
    path = _scenario(
        tmp_path,
        '[[changes]]\nat_ms = 1000\nkind = "refresh_queues"\n'
        'properties = { "yarn.scheduler.capacity.root.queues" = "a" }\n',
    )
    with pytest.raises(InputError) as e:
        run_scenario(path, scheduler="fair", output_dir=tmp_path / "out")
    assert f"{path}: changes[0]" in str(e.value)
    assert "allocation file" in str(e.value)
    assert not (tmp_path / "out").exists()  # no half-written result


def test_the_readmes_changes_example_is_accepted(tmp_path: Path) -> None:
    from emu.scenario import native

    readme = (ROOT / "README.md").read_text()
    section = readme.split("### What-if from mid-trace", 1)[1]
    example = section.split("```toml\n", 1)[1].split("```", 1)[0]
    scenario = native.load(_scenario(tmp_path, example))
    assert [c.kind for c in scenario.changes] == ["refresh_queues", "add_nodes", "remove_nodes"]
    assert len(scenario.changes[1].hosts) == 20
    assert scenario.changes[2].hosts == scenario.changes[1].hosts[-10:]

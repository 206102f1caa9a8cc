"""The fidelity suite's comparison of two runs, and its case list."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from emu.errors import InputError
from emu.fidelity import compare, suite
from emu.fidelity.__main__ import main as fidelity_main

HEADER = "time_ms,event,container,app,node,memory_mb,vcores,priority,locality,am\n"


def _jobruntime(path: Path, rows: list[tuple[str, int, int]]) -> Path:
    lines = ["JobID,real_start_time,real_end_time,simulate_start_time,simulate_end_time"]
    lines += [f"{j},{s},{e},{s},{e}" for j, s, e in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


def _decisions(text: str) -> list[compare.Decision]:
    rows = [line.split(",") for line in textwrap.dedent(text).strip().splitlines()]
    return [
        compare.Decision(int(t), ev, c, a, n, int(m), int(v), int(p), loc, am == "1")
        for t, ev, c, a, n, m, v, p, loc, am in rows
    ]


def test_job_deltas_count_max_and_p95(tmp_path: Path) -> None:
    a = compare.read_jobruntime(_jobruntime(tmp_path / "a", [("j1", 0, 10), ("j2", 5, 20)]))
    b = compare.read_jobruntime(_jobruntime(tmp_path / "b", [("j1", 0, 10), ("j2", 7, 50)]))
    d = compare.job_deltas(a, b)
    assert (d.jobs, d.differing, d.max_start_ms, d.max_end_ms, d.worst) == (2, 1, 2, 30, "j2")
    assert not d.identical
    same = compare.job_deltas(a, a)
    assert same.identical and same.max_end_ms == 0 and same.worst == ""


def test_job_missing_on_one_side_is_not_identical(tmp_path: Path) -> None:
    a = compare.read_jobruntime(_jobruntime(tmp_path / "a", [("j1", 0, 10), ("j2", 5, 20)]))
    b = compare.read_jobruntime(_jobruntime(tmp_path / "b", [("j1", 0, 10)]))
    d = compare.job_deltas(a, b)
    assert d.missing == ("j2",) and not d.identical


def test_p95_nearest_rank() -> None:
    assert compare.p95([]) == 0
    assert compare.p95(list(range(1, 101))) == 95
    assert compare.p95([7]) == 7


def test_same_instant_in_another_order_is_no_divergence() -> None:
    emu = _decisions("""
        10,allocated,c1,app1,n1,1024,1,0,OFF_SWITCH,1
        20,allocated,c2,app1,n1,1024,1,20,NODE_LOCAL,0
        20,allocated,c3,app2,n2,1024,1,20,OFF_SWITCH,0
    """)
    hadoop = [emu[0], emu[2], emu[1]]
    assert compare.first_divergence(emu, hadoop) is None


def test_first_divergence_names_time_node_and_both_decisions() -> None:
    emu = _decisions("""
        10,allocated,c1,app1,n1,1024,1,0,OFF_SWITCH,1
        20,allocated,c2,app1,n1,1024,1,20,NODE_LOCAL,0
    """)
    hadoop = _decisions("""
        10,allocated,c1,app1,n1,1024,1,0,OFF_SWITCH,1
        20,allocated,c2,app1,n2,1024,1,20,OFF_SWITCH,0
    """)
    track = [
        {"time": 0, "running.applications": 0, "queue.root.a.allocated.memory": 0.0},
        {
            "time": 10,
            "running.applications": 1,
            "queue.root.a.allocated.memory": 1.0,
            "queue.root.a.allocated.vcores": 1,
        },
        {"time": 30, "running.applications": 1, "queue.root.a.allocated.memory": 3.0},
    ]
    d = compare.first_divergence(emu, hadoop, track)
    assert d is not None
    assert (d.time_ms, d.same_before, d.running_apps) == (20, 1, 1)
    assert d.emu == emu[1] and d.hadoop == hadoop[1]
    assert d.queues == {"root.a": (1.0, 1)}


def test_a_decision_only_one_scheduler_made() -> None:
    emu = _decisions("10,allocated,c1,app1,n1,1024,1,0,OFF_SWITCH,1")
    hadoop = _decisions("""
        10,allocated,c1,app1,n1,1024,1,0,OFF_SWITCH,1
        40,preempted,c1,app1,n1,1024,1,0,OFF_SWITCH,1
    """)
    d = compare.first_divergence(emu, hadoop)
    assert d is not None and d.emu is None and d.hadoop == hadoop[1] and d.time_ms == 40
    assert compare.counts(hadoop).preempted == 1


def test_queue_curve_gap_is_a_share_of_the_cluster() -> None:
    a = [{"time": 0, "cluster.allocated.memory": 2.0, "cluster.available.memory": 8.0,
          "queue.root.a.allocated.memory": 2.0}]  # fmt: skip
    b = [{"time": 0, "queue.root.a.allocated.memory": 1.0}]
    assert compare.queue_curve_gap(a, b) == (0.1, "root.a", 0)


def test_suite_file_loads_and_names_its_cases() -> None:
    cases = suite.load()
    names = [c.name for c in cases]
    assert len(names) == len(set(names)) >= 18
    assert {c.scheduler for c in cases} == {"fifo", "capacity", "fair"}
    assert [c for c in cases if c.ci], "the CI subset is empty"
    for c in cases:
        if c.generate is None:
            assert all(t.exists() for t in c.traces), c.name
            assert c.conf is None or c.conf.is_dir(), c.name


def test_bad_suite_entry_names_the_file_and_case(tmp_path: Path) -> None:
    f = tmp_path / "suite.toml"
    f.write_text('[[case]]\nname = "x"\nwhat = "y"\ntracetype = "CSV"\ntrace = "t"\n')
    with pytest.raises(InputError, match=r"suite\.toml.*case #1.*CSV"):
        suite.load(f)
    f.write_text('[[case]]\nname = "x"\nwhat = "y"\ntrace = "t"\ncolour = 1\n')
    with pytest.raises(InputError, match="colour"):
        suite.load(f)


def test_unknown_case_is_one_error_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert fidelity_main(["--cases", "no-such-case"]) == 2
    assert "emu: error: --cases" in capsys.readouterr().err


def test_generated_case_writes_its_inputs(tmp_path: Path) -> None:
    case = suite.Case(
        name="g", what="w", generate=suite.Generated(nodes=3, span_s=60, scheduler="capacity")
    )
    ready = case.materialize(tmp_path)
    assert ready.conf is not None and (ready.conf / "capacity-scheduler.xml").exists()
    args = ready.sls_args()
    assert args[:2] == ["--tracetype", "SLS"] and "--nodes" in args
    with pytest.raises(ValueError):
        case.sls_args()

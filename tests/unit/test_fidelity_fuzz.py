"""The differential fuzzer's parts that need no JVM: the generator draws the
same case from the same numbers and only inputs emu's configuration checks
accept (they refuse what Hadoop refuses at start-up), a case survives its
JSON form, the shrinker finds the smallest case its predicate accepts, and
the verdict reads two replays' decision logs as the comparison does."""

from __future__ import annotations

from pathlib import Path

import pytest

from emu.errors import InputError
from emu.fidelity.fuzz import campaign
from emu.fidelity.fuzz.campaign import Outcome
from emu.fidelity.fuzz.generate import KINDS, generate, kind_of
from emu.fidelity.fuzz.report import (
    BEGIN,
    END,
    feature_rows,
    kept_sections,
    markdown,
    markers,
    replace_section,
    table,
)
from emu.fidelity.fuzz.shrink import shrink
from emu.fidelity.fuzz.spec import FuzzCase
from emu.preflight import check_configuration, read_configuration


def test_a_case_is_a_function_of_seed_and_number() -> None:
    assert generate(3, 17).to_json() == generate(3, 17).to_json()
    assert generate(3, 17).to_json() != generate(3, 18).to_json()
    assert generate(3, 17).to_json() != generate(4, 17).to_json()


def test_the_classes_take_turns() -> None:
    assert [kind_of(5, n) for n in range(len(KINDS))] == [
        KINDS[(n + 5) % len(KINDS)] for n in range(len(KINDS))
    ]
    assert sorted({kind_of(1, n) for n in range(12)}) == sorted(KINDS)


@pytest.mark.parametrize("number", range(120))
def test_generated_inputs_pass_the_configuration_checks(number: int, tmp_path: Path) -> None:
    """emu refuses what Hadoop refuses at start-up (capacities not summing to
    100, user weights above 100 / minimum-user-limit-percent, a drf child of
    a fair parent, ...), so every drawn configuration must pass."""
    case = generate(11, number)
    written = case.write(tmp_path)
    assert written.conf is not None
    conf = read_configuration(str(written.conf), {}).conf
    try:
        checked = check_configuration(conf)
    except InputError as e:
        pytest.fail(f"{case.kind} case {number} refused: {e}")
    assert checked.scheduler == case.scheduler
    assert (tmp_path / "trace.json").read_text().count("job.id") == len(case.jobs)


def test_a_case_survives_its_json_form() -> None:
    for n in range(12):
        case = generate(2, n)
        again = FuzzCase.from_json(case.to_json())
        assert again == case
        assert again.allocation_file() == case.allocation_file()
        assert again.capacity_properties() == case.capacity_properties()


def test_fifo_cases_name_no_preferred_hosts() -> None:
    """Hadoop's FifoScheduler fails on some node-local placements (docs/fidelity.md)."""
    fifo = [generate(9, n) for n in range(60) if kind_of(9, n) == "fifo"]
    assert fifo
    assert all(not t.host for c in fifo for j in c.jobs for t in j.tasks)


def test_shrinking_keeps_only_what_the_divergence_needs() -> None:
    case = generate(4, 1)
    assert len(case.jobs) >= 6 and len(case.nodes) >= 2
    culprit = case.jobs[3].id
    calls = []

    def diverges(c: FuzzCase) -> tuple[bool, float | None]:
        calls.append(c)
        return any(j.id == culprit for j in c.jobs) and len(c.nodes) >= 2, None

    small = shrink(case, diverges, budget=500)
    assert [j.id for j in small.jobs] == [culprit]
    assert len(small.nodes) == 2
    assert all(t.count == 1 for t in small.jobs[0].tasks)
    assert not small.site and all(set(q.settings) <= {"capacity"} for _, q in small.root.walk())
    assert len(calls) <= 501


def test_shrinking_stops_at_its_budget() -> None:
    calls = []

    def always(c: FuzzCase) -> tuple[bool, float | None]:
        calls.append(c)
        return True, None

    shrink(generate(4, 2), always, budget=5)
    assert len(calls) == 6  # the case itself, then five variants


def test_shrinking_a_case_that_no_longer_diverges_keeps_it() -> None:
    case = generate(4, 3)
    assert shrink(case, lambda c: (False, None), budget=50) is case


HEADER = "time_ms,event,container,app,node,memory_mb,vcores,priority,locality,am\n"


def _run(where: Path, impl: str, rows: list[str], jobs: str) -> campaign.Run:
    where.mkdir(parents=True)
    (where / "containers.csv").write_text(HEADER + "".join(r + "\n" for r in rows))
    (where / "jobruntime.csv").write_text(
        "JobID,real_start_time,real_end_time,simulate_start_time,simulate_end_time\n" + jobs
    )
    return campaign.Run(impl, 0, str(where))


A = "1000,allocated,c1,app1,node1,1024,1,20,OFF_SWITCH,0"
B = "1000,allocated,c2,app1,node2,1024,1,20,OFF_SWITCH,0"
B_ELSEWHERE = "1000,allocated,c2,app1,node3,1024,1,20,OFF_SWITCH,0"
JOB = "job_1,0,0,0,5000\n"


def test_the_verdict_reads_one_instant_as_a_set(tmp_path: Path) -> None:
    case = generate(1, 0)
    runs = {
        "emu": [
            _run(tmp_path / "e1", "emu", [A, B], JOB),
            _run(tmp_path / "e2", "emu", [B, A], JOB),
        ],
        "hadoop": [_run(tmp_path / "h1", "hadoop", [B, A], JOB)],
    }
    got = campaign.judge(case, runs)
    assert got.verdict == "identical"
    assert got.deterministic == {"emu": True, "hadoop": True}


def test_the_verdict_names_the_first_divergence(tmp_path: Path) -> None:
    case = generate(1, 0)
    runs = {
        "emu": [_run(tmp_path / "e1", "emu", [A, B], JOB), _run(tmp_path / "e2", "emu", [A], JOB)],
        "hadoop": [_run(tmp_path / "h1", "hadoop", [A, B_ELSEWHERE], JOB)],
    }
    got = campaign.judge(case, runs)
    assert got.verdict == "diverged"
    assert got.what == "allocated on another node"
    assert "emu allocated c2 of app1 on node2" in got.detail
    assert "hadoop allocated c2 of app1 on node3" in got.detail
    assert got.deterministic == {"emu": False, "hadoop": True}


def test_a_replay_that_failed_is_not_compared(tmp_path: Path) -> None:
    case = generate(1, 0)
    bad = campaign.Run("hadoop", 2, str(tmp_path / "missing"), "emu: error: refused")
    runs = {"emu": [_run(tmp_path / "e1", "emu", [A], JOB)], "hadoop": [bad]}
    got = campaign.judge(case, runs)
    assert (got.verdict, got.what) == ("hadoop failed", "refused input")


def test_the_table_counts_per_class_and_the_docs_section_is_replaced() -> None:
    outcomes = [
        campaign.Outcome("a", "fifo", "identical", deterministic={"emu": True, "hadoop": True}),
        campaign.Outcome(
            "b",
            "fair",
            "diverged",
            "only emu preempted",
            deterministic={"emu": True, "hadoop": False},
        ),
        campaign.Outcome("c", "fair", "identical", deterministic={"emu": True, "hadoop": True}),
    ]
    text = table(outcomes)
    lines = {line.split()[0]: line.split() for line in text.splitlines()[1:]}
    assert lines["fifo"][1:4] == ["1", "1", "100.0"]
    assert lines["fair"][1:5] == ["2", "1", "50.0", "1"]
    assert lines["all"][1:3] == ["3", "2"]
    assert "only emu preempted (1)" in text
    doc = f"# title\n\nbefore\n\n{BEGIN}\nold\n{END}\n\nafter\n"
    new = replace_section(doc, f"{BEGIN}\nnew\n{END}")
    assert new == f"# title\n\nbefore\n\n{BEGIN}\nnew\n{END}\n\nafter\n"
    assert replace_section("# t\n", "S").endswith("# t\n\nS\n")
    assert kept_sections(new) == [f"{BEGIN}\nnew\n{END}"]
    assert kept_sections("# t\n") == []
    # Each Hadoop release has a section of its own; replacing one keeps the other.
    begin35, end35 = markers("3.5.0")
    assert (begin35, end35) != (BEGIN, END) and markers("3.4.2") == (BEGIN, END)
    both = replace_section(new, f"{begin35}\nasync\n{end35}")
    assert kept_sections(both) == [f"{BEGIN}\nnew\n{END}", f"{begin35}\nasync\n{end35}"]
    again = replace_section(both, f"{BEGIN}\nnewer\n{END}")
    assert kept_sections(again) == [f"{BEGIN}\nnewer\n{END}", f"{begin35}\nasync\n{end35}"]


def test_a_replay_of_a_file_that_is_no_case_is_refused_naming_it(tmp_path: Path, capsys) -> None:
    from emu.fidelity.fuzz.__main__ import main

    bad = tmp_path / "case.json"
    bad.write_text('{"name": "x"}')
    assert main(["--replay", str(tmp_path), "--out", str(tmp_path / "out")]) == 2
    assert (
        capsys.readouterr().err == f"emu: error: {bad}: not a generated case (KeyError('kind'))\n"
    )
    assert not (tmp_path / "out").exists()


def test_the_campaign_counts_each_mechanism_a_case_exercises() -> None:
    """The per-mechanism table: a case counts under each of its mechanisms,
    the least agreeing mechanism first."""
    case = generate(3, 4)
    assert case.kind == "capacity"
    features = case.features()
    assert "capacity: absolute resources" in features
    assert "capacity: preemption" not in features
    a = Outcome("a", "capacity", "identical", features=["capacity: weights", "reduces"])
    b = Outcome("b", "capacity", "diverged", features=["capacity: preemption", "reduces"])
    assert feature_rows([a, b]) == [
        ("capacity: preemption", 1, 0),
        ("reduces", 2, 1),
        ("capacity: weights", 1, 1),
    ]
    assert "| capacity: preemption | 1 | 0 | 0.0 |" in markdown([a, b], 3, 60.0, 2)

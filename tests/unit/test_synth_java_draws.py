"""SYNTH draws pinned to what hadoop-sls 3.4.2 draws (numbers printed by its
SynthTraceJobProducer and SynthJob for Hadoop's syn.json at rand_seed 2;
tests/hadoop/test_synth_vs_hadoop.py compares whole workloads against the
running code). No JVM needed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from emu.errors import InputError
from emu.resources import Resource
from emu.scenario.synth import read_synth
from emu.workload import JobSpec
from tests.reference import REFERENCE_DIR

SYN = REFERENCE_DIR / "test-resources" / "syn.json"
DEFAULTS: dict[str, Any] = {"container_default": Resource(1024, 1), "am_default": Resource(1024, 1)}


def _jobs() -> dict[str, JobSpec]:
    w = read_synth(SYN, **DEFAULTS)
    return {j.job_id: j for j in w.jobs}


def _tasks(job: JobSpec) -> list[tuple[str, int, int, int, str]]:
    return [
        (t.task_type, t.duration_ms, t.resource.memory, t.resource.vcores, t.hosts[0])
        for t in job.tasks
    ]


def test_first_job_as_sls_draws_it() -> None:
    """Submitted at 3 s (the zero of emu's timeline), 53 s long, with a
    deadline at 3 s + ceil(factor * 53 s) = 533131 ms, four maps and three
    reduces on the nodes AMDefinitionSynth picks."""
    job = _jobs()["job_job_mock_class_1_000000_0000"]
    assert (job.submit_ms, job.end_ms) == (0, 53000)
    assert job.params["deadline_ms"] == 533131 - 3000
    assert _tasks(job) == [
        ("map", 10, 1024, 1, "node8"),
        ("map", 10, 1024, 1, "node12"),
        ("map", 12, 1024, 1, "node0"),
        ("map", 10, 1024, 1, "node7"),
        ("reduce", 22, 2048, 2, "node9"),
        ("reduce", 19, 2048, 2, "node10"),
        ("reduce", 19, 2048, 2, "node6"),
    ]


def test_later_jobs_as_sls_draws_them() -> None:
    """The second job shares the first's second and has no deadline; every
    job starts its host draws over, so the hosts repeat from job to job."""
    jobs = _jobs()
    second = jobs["job_job_mock_class_1_000001_0001"]
    assert (second.submit_ms, second.end_ms) == (0, 55000)
    assert "deadline_ms" not in second.params
    assert [t[1] for t in _tasks(second)] == [7, 12, 13, 9, 25, 16, 17, 27]
    assert [t[4] for t in _tasks(second)][:4] == ["node8", "node12", "node0", "node7"]
    third = jobs["job_job_mock_class_1_000002_0002"]
    assert (third.submit_ms, third.end_ms) == (32000, 88000)
    assert third.params["deadline_ms"] == 594970 - 3000
    assert [t[1] for t in _tasks(third)] == [10, 8, 7, 15, 21, 17, 21]
    assert sorted(j.submit_ms for j in jobs.values()) == [
        0, 0, 32000, 35000, 36000, 36000, 39000, 42000, 45000, 54000,
    ]  # fmt: skip


def _spec(tmp_path: Path, **changes: Any) -> Path:
    spec = json.loads(SYN.read_text())
    spec.update(changes)
    path = tmp_path / "syn.json"
    path.write_text(json.dumps(spec))
    return path


def test_a_seed_sls_cannot_hold_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"rand_seed: .* out of range \(a Java long\)"):
        read_synth(_spec(tmp_path, rand_seed=2**63), **DEFAULTS)
    with pytest.raises(InputError, match="seed: must fit in a Java long"):
        read_synth(SYN, **DEFAULTS, seed=-(2**63) - 1)
    assert read_synth(SYN, **DEFAULTS, seed=-(2**63)).jobs


def test_a_negative_normal_std_is_an_input_error(tmp_path: Path) -> None:
    spec = json.loads((SYN.parent / "syn_generic.json").read_text())
    spec["workloads"][0]["job_classes"][0]["duration"] = {"val": 60, "std": -1, "dist": "NORM"}
    path = tmp_path / "norm.json"
    path.write_text(json.dumps(spec))
    with pytest.raises(InputError, match="a NORM std must be >= 0, got -1"):
        read_synth(path, **DEFAULTS)


def test_the_seed_overrides_rand_seed() -> None:
    """syn.json at seed 7 is what SLS draws from it with rand_seed 7."""
    w = read_synth(SYN, **DEFAULTS, seed=7)
    assert [j.submit_ms for j in w.jobs][:3] != [0, 0, 32000]
    assert w == read_synth(SYN, **DEFAULTS, seed=7)


def test_a_count_beyond_a_java_int_is_an_input_error(tmp_path: Path) -> None:
    """SLS's Sample.getInt overflows (Math.toIntExact) rather than run it."""
    spec = json.loads((SYN.parent / "syn_generic.json").read_text())
    spec["workloads"][0]["job_classes"][0]["tasks"][0]["count"] = {"val": 3e9}
    path = tmp_path / "huge.json"
    path.write_text(json.dumps(spec))
    with pytest.raises(InputError, match="a map count of 3000000000 was drawn, beyond a Java int"):
        read_synth(path, **DEFAULTS)

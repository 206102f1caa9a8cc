"""SYNTH draws pinned to what hadoop-sls 3.4.2 draws (numbers printed by its
SynthTraceJobProducer and SynthJob for Hadoop's syn.json at rand_seed 2;
tests/hadoop/test_synth_vs_hadoop.py compares whole workloads against the
running code). No JVM needed."""

from __future__ import annotations

from emu.resources import Resource
from emu.scenario.synth import read_synth
from emu.workload import JobSpec
from tests.reference import REFERENCE_DIR

SYN = REFERENCE_DIR / "test-resources" / "syn.json"


def _jobs() -> dict[str, JobSpec]:
    w = read_synth(SYN, container_default=Resource(1024, 1), am_default=Resource(1024, 1))
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

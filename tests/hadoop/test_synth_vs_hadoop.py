"""emu's SYNTH reader draws the jobs Hadoop 3.4.2's SLS draws: the same
submission times, queues, users, job ids, durations, deadlines, and per
task the same type, priority, time, memory, vcores, execution type and
preferred node.

The reference is hadoop-sls's own SynthTraceJobProducer and SynthJob, run by
a small Java program (java/SynthJobsDump.java) compiled here against SLS's
classpath, over Hadoop's sample specs and one spec that uses every kind of
sample (normal and log-normal distributions, weighted and uniform discrete
choices, the flat format, distributions with a mean of 0 that SLS builds
no generator for), several workloads and classes, and many jobs in
the same second (their order is the PriorityQueue's, not the drawing
order). Needs a JDK and hadoop-sls (fetched by Maven); skips without them
unless EMU_REQUIRE_HADOOP is set.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from emu.fidelity import sls_oracle as so
from emu.resources import Resource
from emu.scenario.synth import read_synth
from tests.reference import REFERENCE_DIR

HERE = Path(__file__).resolve().parent
DUMP_SOURCE = HERE / "java" / "SynthJobsDump.java"
SAMPLES = ("syn.json", "syn_generic.json", "syn_stream.json")
SEEDS = (0, 7, -123456789012)

MIXED: dict[str, Any] = {
    "num_nodes": 13,
    "nodes_per_rack": 5,
    "num_jobs": 60,
    "rand_seed": 31,
    "workloads": [
        {
            "workload_name": "batch",
            "workload_weight": 2,
            "queue_name": "a",
            "job_classes": [
                {
                    "class_name": "norm",
                    "user_name": "ann",
                    "class_weight": 3,
                    "type": "mapreduce",
                    "deadline_factor": {"val": 2.5, "std": 0.5, "dist": "NORM"},
                    "duration": {"val": 40, "std": 10, "dist": "NORM"},
                    "reservation": {"discrete": [0, 1], "weights": [1, 3]},
                    "params": {"k": "v"},
                    "tasks": [
                        {
                            "type": "map",
                            "priority": 20,
                            "count": {"discrete": [1, 2, 5], "weights": [1, 1, 2]},
                            "time": {"val": 3000, "std": 900},
                            "max_memory": {"discrete": [1024, 3072]},
                            "max_vcores": {"val": 2, "std": 1},
                        },
                        {
                            "type": "reduce",
                            "priority": 10,
                            "count": {"val": 2, "std": 0.7},
                            "time": {"val": 5000, "std": 300, "dist": "NORM"},
                            "max_memory": {"val": 2500, "std": 600},
                            "max_vcores": {"val": 1},
                            "execution_type": "OPPORTUNISTIC",
                        },
                        {
                            # Never drawn; a mean of 0 makes SLS build no
                            # distribution, so it takes no seed from the trace.
                            "type": "map",
                            "priority": 5,
                            "count": {"val": 0},
                            "time": {"val": 0, "std": 1},
                            "max_memory": {"val": 1024},
                            "max_vcores": {"val": 1},
                        },
                    ],
                },
                {
                    "class_name": "stream",
                    "user_name": "bob",
                    "class_weight": 1,
                    "type": "stream",
                    "deadline_factor": {"val": 4},
                    "duration": {"val": 20},
                    "reservation": {"val": 0.25},
                    "tasks": [
                        {
                            "type": "stream",
                            "priority": 20,
                            "count": {"val": 3},
                            "time": {"val": 20000, "std": 0},
                            "max_memory": {"val": 4096},
                            "max_vcores": {"val": 4},
                        }
                    ],
                },
            ],
            "time_distribution": [
                {"time": 0, "weight": 4},
                {"time": 0, "weight": 0},
                {"time": 3, "weight": 6},
                {"time": 9, "weight": 2},
                {"time": 12, "weight": 0},
            ],
        },
        {
            "workload_name": "flat",
            "workload_weight": 1,
            "queue_name": "b",
            "job_classes": [
                {
                    "class_name": "old",
                    "user_name": "cy",
                    "class_weight": 1.0,
                    "mtasks_avg": 4,
                    "mtasks_stddev": 2,
                    "rtasks_avg": 1,
                    "rtasks_stddev": 0,
                    "dur_avg": 30,
                    "dur_stddev": 8,
                    "mtime_avg": 800,
                    "mtime_stddev": 200,
                    "rtime_avg": 1500,
                    "rtime_stddev": 100,
                    "map_max_memory_avg": 1536,
                    "map_max_memory_stddev": 300,
                    "reduce_max_memory_avg": 2048,
                    "reduce_max_memory_stddev": 0.001,
                    "map_max_vcores_avg": 1,
                    "map_max_vcores_stddev": 0.5,
                    "reduce_max_vcores_avg": 2,
                    "reduce_max_vcores_stddev": 0.001,
                    "chance_of_reservation": 0.5,
                    "deadline_factor_avg": 3.0,
                    "deadline_factor_stddev": 0.2,
                }
            ],
            "time_distribution": [{"time": 2, "weight": 1}, {"time": 5, "weight": 1}],
        },
    ],
}


@pytest.fixture(scope="module")
def dump(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The java command that prints hadoop-sls's jobs for the files appended."""
    why = None
    for tool in ("java", "javac"):
        if shutil.which(tool) is None:
            why = f"no {tool}: SLS needs a JDK"
    if why is None:
        try:
            jars, _ = so.classpath(fetch=shutil.which("mvn") is not None)
        except so.SlsUnavailable as e:
            why = str(e)
    if why is not None:
        if os.environ.get("EMU_REQUIRE_HADOOP"):
            pytest.fail(f"EMU_REQUIRE_HADOOP is set but SLS cannot run: {why}")
        pytest.skip(f"Hadoop's SLS cannot run here: {why}")
    classes = tmp_path_factory.mktemp("synth-dump")
    cp = os.pathsep.join(jars)
    subprocess.run(
        ["javac", "-d", str(classes), "-cp", cp, str(DUMP_SOURCE)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return ["java", "-cp", cp + os.pathsep + str(classes), "SynthJobsDump"]


def _hadoop_jobs(dump: list[str], files: list[Path]) -> dict[str, list[dict[str, Any]]]:
    proc = subprocess.run(
        [*dump, *map(str, files)], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out: dict[str, list[dict[str, Any]]] = {str(f): [] for f in files}
    for line in proc.stdout.splitlines():
        job = json.loads(line)
        out[job["file"]].append(job)
    return out


def _emu_rows(path: Path) -> list[dict[str, Any]]:
    """emu's Workload in the shape the Java program prints (times back on
    SLS's absolute clock: emu starts the timeline at the first job)."""
    w = read_synth(path, container_default=Resource(1024, 1), am_default=Resource(1024, 1))
    index = {n.host: i for i, n in enumerate(w.trace_nodes)}
    rows = []
    for j in w.jobs:
        rows.append(
            {
                "job_id": j.job_id,
                "type": j.params["am_type"],
                "user": j.user,
                "queue": j.queue,
                "submission_ms": j.submit_ms,
                "duration_ms": j.end_ms - j.submit_ms,
                "deadline_ms": j.params.get("deadline_ms"),
                "params": j.params.get("job_params"),
                "tasks": [
                    [
                        t.task_type,
                        t.priority,
                        t.duration_ms,
                        t.resource.memory,
                        t.resource.vcores,
                        t.execution_type,
                        index[t.hosts[0]],
                    ]
                    for t in j.tasks
                ],
            }
        )
    return rows


def _hadoop_rows(jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """SLS's jobs relative to the first submission, as emu (and the SLSRunner
    that introduced SYNTH) time them, in emu's Workload order."""
    base = min(j["submission_ms"] for j in jobs)
    rows = [
        {
            "job_id": j["job_id"],
            "type": j["type"],
            "user": j["user"],
            "queue": j["queue"],
            "submission_ms": j["submission_ms"] - base,
            "duration_ms": j["duration_ms"],
            "deadline_ms": j["deadline_ms"] - base if j["deadline_ms"] > 0 else None,
            "params": j["params"],
            "tasks": j["tasks"],
        }
        for j in jobs
    ]
    return sorted(rows, key=lambda r: (r["submission_ms"], r["job_id"]))


def _specs(tmp_path: Path) -> list[Path]:
    """Hadoop's samples at their own seed and at others, and the mixed spec."""
    specs = []
    for name in SAMPLES:
        original = REFERENCE_DIR / "test-resources" / name
        specs.append(original)
        for seed in SEEDS:
            spec = json.loads(original.read_text())
            spec["rand_seed"] = seed
            path = tmp_path / f"{seed}-{name}"
            path.write_text(json.dumps(spec))
            specs.append(path)
    mixed = tmp_path / "mixed.json"
    mixed.write_text(json.dumps(MIXED))
    specs.append(mixed)
    return specs


@pytest.fixture(scope="module")
def drawn(
    dump: list[str], tmp_path_factory: pytest.TempPathFactory
) -> tuple[list[Path], dict[str, list[dict[str, Any]]]]:
    """The specs and the jobs hadoop-sls draws from each, in one JVM."""
    specs = _specs(tmp_path_factory.mktemp("synth-specs"))
    return specs, _hadoop_jobs(dump, specs)


def test_emu_draws_the_jobs_sls_draws(
    drawn: tuple[list[Path], dict[str, list[dict[str, Any]]]],
) -> None:
    specs, hadoop = drawn
    for spec in specs:
        want = _hadoop_rows(hadoop[str(spec)])
        assert want, f"hadoop drew no jobs from {spec.name}"
        got = _emu_rows(spec)
        assert [r["job_id"] for r in got] == [r["job_id"] for r in want], spec.name
        for g, w in zip(got, want, strict=True):
            assert g == w, f"{spec.name} {w['job_id']}"


def test_the_mixed_spec_exercises_what_it_claims(
    drawn: tuple[list[Path], dict[str, list[dict[str, Any]]]],
) -> None:
    """Ties in one second, both deadline outcomes, both queues and a task
    list of every kind: else the comparison above proves less than it says."""
    specs, hadoop = drawn
    jobs = hadoop[str(specs[-1])]
    assert len(jobs) == MIXED["num_jobs"]
    submissions = [j["submission_ms"] for j in jobs]
    assert len(set(submissions)) < len(submissions) / 3
    assert {j["queue"] for j in jobs} == {"a", "b"}
    assert {j["deadline_ms"] > 0 for j in jobs} == {True, False}
    types = {t[0] for j in jobs for t in j["tasks"]}
    assert types == {"map", "reduce", "stream"}
    assert any(t[5] == "OPPORTUNISTIC" for j in jobs for t in j["tasks"])

"""Resource calculators and resource types as Hadoop applies them, through
`emu sls` on small SLS traces.

One MapReduce job (a 1 GB / 1 vcore AM and six 60 s maps of 1 GB / 1 vcore,
optionally 1 gpu each) on one node. The DefaultResourceCalculator (and the
FifoScheduler) place by memory alone, so an <8 GB, 2 vcore> node runs the AM
and all six maps at once and the job takes ~64 s; the
DominantResourceCalculator counts vcores, so it runs one map at a time next
to the AM and the job takes six waves, ~370 s. The default calculator
grants no gpus (asks are normalized to memory and one vcore); DRF grants
and counts them. The FairScheduler, whose
container fit checks every type, runs two 1-gpu maps at a time on a node
with two gpus when the queue has no maxResources (unbounded in every type),
one at a time with `gpu=1` in maxResources.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from emu.cli import main

DRF_CALCULATOR = "org.apache.hadoop.yarn.util.resource.DominantResourceCalculator"
CAPACITY = "org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler"
FAIR = "org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairScheduler"
# The ends these tests bound were worked out with YARN's AM and NM timing (emu.timing):
# these tests are about the scheduler, so they replay with it, not SLS's.
YARN_TIMING = "--timing=yarn"


def _xml(path: Path, props: dict[str, object]) -> None:
    body = "".join(
        f"<property><name>{k}</name><value>{v}</value></property>\n" for k, v in props.items()
    )
    path.write_text(f"<?xml version='1.0'?>\n<configuration>\n{body}</configuration>\n")


def _trace(path: Path, queue: str, gpu: int) -> None:
    task = {
        "container.host": "/rack1/node1",
        "container.start.ms": 0,
        "container.end.ms": 60_000,
        "container.priority": 20,
        "container.type": "map",
        "container.memory-mb": 1024,
        "container.vcores": 1,
    }
    if gpu:
        task["container.gpu"] = gpu
    job = {
        "am.type": "mapreduce",
        "job.start.ms": 0,
        "job.end.ms": 60_000,
        "job.queue.name": queue,
        "job.id": "job_1",
        "job.user": "alice",
        "job.tasks": [task] * 6,
    }
    path.write_text(json.dumps(job, indent=1))


def replay(
    tmp_path: Path,
    scheduler: str,
    node: dict[str, int],
    gpu: int = 0,
    queue: str = "default",
    props: dict[str, object] | None = None,
    allocations: str | None = None,
) -> tuple[int, list[dict]]:
    """Run `emu sls` on the one-job trace; (job end ms, realtimetrack records)."""
    conf = tmp_path / "conf"
    conf.mkdir()
    _xml(
        conf / "sls-runner.xml",
        {
            "yarn.sls.nm.memory.mb": node["memory"],
            "yarn.sls.nm.vcores": node["vcores"],
            **({"yarn.sls.nm.gpu": node["gpu"]} if "gpu" in node else {}),
            "yarn.sls.am.heartbeat.interval.ms": 1000,
            "yarn.sls.nm.heartbeat.interval.ms": 1000,
        },
    )
    site = {"yarn.resourcemanager.scheduler.class": scheduler, **(props or {})}
    if "gpu" in node:
        site["yarn.resource-types"] = "gpu"
    if allocations is not None:
        (conf / "fair-scheduler.xml").write_text(
            f"<?xml version='1.0'?>\n<allocations>\n{allocations}\n</allocations>\n"
        )
        site["yarn.scheduler.fair.allocation.file"] = "fair-scheduler.xml"
    _xml(conf / "yarn-site.xml", site)
    (tmp_path / "nodes.json").write_text(
        json.dumps({"rack": "rack1", "nodes": [{"node": "node1"}]})
    )
    _trace(tmp_path / "trace.json", queue, gpu)
    out = tmp_path / "out"
    rc = main(
        [
            "sls",
            f"--conf-dir={conf}",
            "--tracetype=SLS",
            f"--tracelocation={tmp_path / 'trace.json'}",
            f"--nodes={tmp_path / 'nodes.json'}",
            f"--output-dir={out}",
            YARN_TIMING,
        ]
    )
    assert rc == 0
    summary = json.loads((out / "summary.json").read_text())
    [job] = summary["jobs"]
    assert job["state"] == "FINISHED"
    end = int((out / "jobruntime.csv").read_text().splitlines()[1].split(",")[4])
    return end, json.loads((out / "realtimetrack.json").read_text())


def running(records: list[dict]) -> list[int]:
    """Running containers, one sample per simulated second."""
    return [r["running.containers"] for r in records]


SMALL_NODE = {"memory": 8192, "vcores": 2}


@pytest.mark.parametrize("scheduler", [CAPACITY, "fifo"])
def test_default_calculator_places_by_memory_and_overcommits_vcores(tmp_path, capsys, scheduler):
    """AM + six maps start together on an <8 GB, 2 vcore> node: 7 vcores
    allocated out of 2, and the job ends after one wave of maps (~64 s, not
    the ~370 s a vcore-enforcing scheduler needs)."""
    end, records = replay(tmp_path, scheduler, SMALL_NODE)
    assert 60_000 < end < 66_000
    assert max(running(records)) == 7
    busy = records[10]
    assert busy["cluster.allocated.vcores"] == 7
    assert busy["cluster.available.vcores"] == -5
    assert busy["queue.root.default.allocated.memory"] == 7.0


def test_dominant_calculator_enforces_vcores(tmp_path, capsys):
    """With the DominantResourceCalculator the node holds two containers
    (the AM and one map): six waves of maps, the job ends after ~6 x 60 s,
    and allocated vcores never exceed the node's two."""
    props = {"yarn.scheduler.capacity.resource-calculator": DRF_CALCULATOR}
    end, records = replay(tmp_path, CAPACITY, SMALL_NODE, props=props)
    assert 360_000 < end < 380_000
    assert max(running(records)) == 2
    assert max(r["cluster.allocated.vcores"] for r in records) == 2
    assert {r["queue.root.default.allocated.memory"] for r in records[5:350]} == {2.0}


GPU_NODE = {"memory": 8192, "vcores": 8, "gpu": 2}


@pytest.mark.parametrize(
    ("scheduler", "props", "waves"),
    [
        ("fifo", {}, 1),
        (CAPACITY, {}, 1),
        (CAPACITY, {"yarn.scheduler.capacity.resource-calculator": DRF_CALCULATOR}, 3),
    ],
    ids=["fifo", "capacity-default", "capacity-drf"],
)
def test_custom_resource_type_with_fifo_and_capacity(tmp_path, capsys, scheduler, props, waves):
    """Maps asking for a gpu on a node with two: the DefaultResourceCalculator
    (FIFO, Capacity's default) grants memory and a vcore and places by
    memory, so all six run at once; the DominantResourceCalculator grants
    and counts the gpu, two maps at a time."""
    end, records = replay(tmp_path, scheduler, GPU_NODE, gpu=1, props=props)
    assert waves * 60_000 < end < waves * 60_000 + 8_000
    assert max(running(records)) == 1 + 6 // waves


@pytest.mark.parametrize("policy", ["fair", "drf"])
def test_fair_queue_without_max_resources_is_unbounded_in_custom_types(tmp_path, capsys, policy):
    """yarn.resource-types=gpu, two gpus per node, maps of 1 gpu, a queue
    with no maxResources: the run finishes, two maps at a time (fit checks
    every type), in three waves."""
    alloc = (
        f"<defaultQueueSchedulingPolicy>{policy}</defaultQueueSchedulingPolicy>"
        '<queue name="ml"><weight>1</weight></queue>'
    )
    end, records = replay(tmp_path, FAIR, GPU_NODE, gpu=1, queue="ml", allocations=alloc)
    assert 180_000 < end < 190_000
    assert max(running(records)) == 3
    assert max(r["queue.root.ml.allocated.memory"] for r in records) == 3.0


@pytest.mark.parametrize(
    "max_resources",
    ["memory-mb=8192, vcores=8, gpu=1", "gpu=1", "memory-mb=100%, vcores=100%, gpu=50%"],
)
def test_fair_max_resources_bounds_custom_types(tmp_path, capsys, max_resources):
    """maxResources naming gpu=1 (absolutely or as 50% of two) lets the queue
    run one 1-gpu map at a time; the types it does not name stay unbounded."""
    alloc = f'<queue name="ml"><maxResources>{max_resources}</maxResources></queue>'
    end, records = replay(tmp_path, FAIR, GPU_NODE, gpu=1, queue="ml", allocations=alloc)
    assert 360_000 < end < 380_000
    assert max(running(records)) == 2

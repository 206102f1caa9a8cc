"""A node label's capacities in resources, replayed: a queue's maximum in
a labelled partition is the amount it names there, so a gpu job of a
queue bounded to 4 GB of the gpu nodes runs at most that much there at
once, and finishes later than with the whole partition."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from emu import api

CS = "yarn.scheduler.capacity."


def _xml(props: dict[str, str]) -> str:
    body = "".join(
        f"  <property><name>{k}</name><value>{v}</value></property>\n" for k, v in props.items()
    )
    return f"<?xml version='1.0'?>\n<configuration>\n{body}</configuration>\n"


def _job(job_id: str, queue: str, start_ms: int, count: int) -> dict[str, object]:
    return {
        "am.type": "mapreduce",
        "job.start.ms": start_ms,
        "job.end.ms": start_ms + 600000,
        "job.queue.name": queue,
        "job.id": job_id,
        "job.user": "u",
        "job.label.expression": "gpu",
        "job.tasks": [
            {
                "count": count,
                "container.start.ms": 0,
                "container.end.ms": 20000,
                "container.priority": 20,
                "container.type": "map",
            }
        ],
    }


def _props(a_gpu_max: str) -> dict[str, str]:
    return {
        CS + "root.queues": "a,b",
        CS + "root.a.capacity": "[memory=8192,vcores=8]",
        CS + "root.b.capacity": "[memory=8192,vcores=8]",
        CS + "root.a.user-limit-factor": "10",
        CS + "root.b.user-limit-factor": "10",
        CS + "root.a.accessible-node-labels": "gpu",
        CS + "root.b.accessible-node-labels": "gpu",
        CS + "root.a.accessible-node-labels.gpu.capacity": "[memory=4096,vcores=4]",
        CS + "root.a.accessible-node-labels.gpu.maximum-capacity": a_gpu_max,
        CS + "root.b.accessible-node-labels.gpu.capacity": "[memory=12288,vcores=12]",
    }


def _run(tmp_path: Path, props: dict[str, str], gpu_nodes: int) -> tuple[int, float]:
    """Replay one gpu job of a (16 tasks of 1 GB, 20 s each) on `gpu_nodes`
    gpu nodes and two default ones (8 GB each): the memory a got on gpu
    nodes before its first tasks could end, and the job's finish time."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    trace = tmp_path / "trace.json"
    trace.write_text(json.dumps(_job("a_1", "a", 0, 16)))
    nodes = [{"node": f"g{i}", "labels": "gpu"} for i in range(gpu_nodes)]
    nodes += [{"node": f"d{i}"} for i in range(2)]
    topology = tmp_path / "nodes.json"
    topology.write_text(json.dumps({"rack": "r1", "nodes": nodes}))
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "capacity-scheduler.xml").write_text(_xml(props))
    (conf / "yarn-site.xml").write_text(_xml({"yarn.node-labels.enabled": "true"}))
    (conf / "sls-runner.xml").write_text(
        _xml({"yarn.sls.nm.memory.mb": "8192", "yarn.sls.nm.vcores": "8"})
    )
    result = api.replay(
        trace, nodes=topology, conf_dir=conf, output_dir=tmp_path / "out", container_log=True
    )
    assert result.complete and result.output_dir is not None
    first_wave = 0
    with (result.output_dir / "containers.csv").open() as f:
        for row in csv.DictReader(f):
            assert row["node"].startswith("g")  # a gpu job: gpu nodes only
            if int(row["time_ms"]) < 20000:
                first_wave += int(row["memory_mb"])
    (job,) = result.jobs
    return first_wave, float(job["finish_s"])


def test_a_labels_maximum_in_resources_bounds_the_queue_there(tmp_path):
    """a may use 4 GB of the 16 GB gpu partition: its job gets 4 GB at
    once there and takes four waves; allowed all of it, one wave."""
    bounded = _run(tmp_path / "bounded", _props("[memory=4096,vcores=4]"), 2)
    whole = _run(tmp_path / "whole", _props("[memory=16384,vcores=16]"), 2)
    assert bounded[0] == 4096
    assert whole[0] == 16384  # the whole partition
    assert bounded[1] > whole[1] + 60

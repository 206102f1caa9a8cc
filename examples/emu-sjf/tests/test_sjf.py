"""The plugins change what they say they change, on a trace where it shows:
a small job submitted after a big one finishes sooner than under FIFO."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from emu.api import replay

TRACE = [
    {"am.type": "mapreduce", "job.start.ms": 0, "job.end.ms": 60000, "job.queue.name": "q",
     "job.id": "big", "job.user": "a",
     "job.tasks": [{"count": 40, "container.start.ms": 0, "container.end.ms": 60000,
                    "container.priority": 20, "container.type": "map"}]},
    {"am.type": "mapreduce", "job.start.ms": 5000, "job.end.ms": 15000, "job.queue.name": "q",
     "job.id": "small", "job.user": "b",
     "job.tasks": [{"count": 2, "container.start.ms": 0, "container.end.ms": 10000,
                    "container.priority": 20, "container.type": "map"}]},
]  # fmt: skip
NODES = [{"rack": "r", "nodes": [{"node": "n1"}, {"node": "n2"}]}]


def _end_of_small(tmp_path: Path, **props: str) -> int:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "trace.json").write_text("\n".join(json.dumps(j) for j in TRACE))
    (tmp_path / "nodes.json").write_text(json.dumps(NODES))
    out = tmp_path / "out"
    replay(tmp_path / "trace.json", nodes=tmp_path / "nodes.json", properties=props, output_dir=out)
    with (out / "jobruntime.csv").open() as f:
        return next(int(r["simulate_end_time"]) for r in csv.DictReader(f) if r["JobID"] == "small")


def test_smallest_demand_first_lets_the_small_job_through(tmp_path: Path) -> None:
    cls = "yarn.resourcemanager.scheduler.class"
    fifo = _end_of_small(tmp_path / "fifo", **{cls: "fifo"})
    by_name = _end_of_small(tmp_path / "ep", **{cls: "smallest-demand-first"})
    by_path = _end_of_small(tmp_path / "path", **{cls: "emu_sjf:SmallestDemandFirst"})
    assert by_name == by_path < fifo


def test_the_policy_orders_a_fair_queue_by_demand(tmp_path: Path) -> None:
    def with_policy(name: str) -> int:
        d = tmp_path / name.replace(":", "-")
        d.mkdir()
        alloc = d / "fair-scheduler.xml"
        alloc.write_text(
            "<allocations><queue name='q'>"
            f"<schedulingPolicy>{name}</schedulingPolicy></queue></allocations>"
        )
        return _end_of_small(
            d,
            **{
                "yarn.resourcemanager.scheduler.class": "fair",
                "yarn.scheduler.fair.allocation.file": str(alloc),
            },
        )

    by_name = with_policy("smallest-demand")
    assert by_name == with_policy("emu_sjf:SmallestDemandPolicy")
    assert by_name < with_policy("fifo")

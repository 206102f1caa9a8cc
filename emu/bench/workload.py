"""The benchmark workload: a seeded generator of Hadoop-standard input files.

What users meet on a real cluster is a loaded one: hundreds of running apps,
most of memory allocated, jobs arriving all the time. This module writes
that workload as the files a Hadoop SLS user would bring, so the benchmark
runs through the same `emu sls` path they use:

- `nodes.json`: SLS topology, `--nodes` nodes in racks of 40;
- `trace.json`: SLS JSON, MapReduce jobs arriving as a seeded Poisson
  process over `--span-s`, sized to keep `--util` of memory allocated:
  50-150 maps of <2 GB, 1 vcore> lasting 60-180 s, 5-15 reduces of
  <4 GB, 1 vcore> lasting 30-90 s, a quarter of the jobs with a preferred
  host per map, users over 10 names and jobs over 4 queues;
- `fair/`, `capacity/`, `fifo/`: Hadoop configuration directories
  (yarn-site.xml, sls-runner.xml and the scheduler's own file) for the
  FairScheduler (four equal-weight queues, drf), the CapacityScheduler
  (four queues of 25 %) and the FifoScheduler; nodes of 32 GB / 16 vcores,
  NM and AM heartbeats every second.

    python -m emu.bench.workload OUT_DIR [--nodes 1000] [--span-s 3600] [--util 0.8]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import dataclass
from pathlib import Path

from emu.config.hadoop_xml import configuration_xml

NODE_MEMORY_MB = 32768
NODE_VCORES = 16
AM_MEMORY_MB = 1024
PER_RACK = 40
QUEUES = ("sls_queue_1", "sls_queue_2", "sls_queue_3", "sls_queue_4")
USERS = tuple(f"user{i}" for i in range(10))


@dataclass(frozen=True)
class Shape:
    """The job mix: task counts, sizes (MB) and durations (s), each uniform."""

    maps: tuple[int, int] = (50, 150)
    map_mb: int = 2048
    map_s: tuple[int, int] = (60, 180)
    reduces: tuple[int, int] = (5, 15)
    reduce_mb: int = 4096
    reduce_s: tuple[int, int] = (30, 90)
    local_share: float = 0.25

    def mean_job_mb_s(self) -> float:
        """Expected memory-seconds of one job, AM included (the AM lives about
        as long as its longest map plus its longest reduce)."""
        maps = sum(self.maps) / 2 * self.map_mb * sum(self.map_s) / 2
        reduces = sum(self.reduces) / 2 * self.reduce_mb * sum(self.reduce_s) / 2
        am = AM_MEMORY_MB * (self.map_s[1] + self.reduce_s[1])
        return maps + reduces + am


def node_names(nodes: int) -> list[tuple[str, str]]:
    """(rack, host) for each node: racks of 40, names sorted as numbered."""
    return [(f"rack{i // PER_RACK:03d}", f"host{i:05d}") for i in range(nodes)]


def jobs(
    nodes: int,
    span_s: float,
    util: float,
    seed: int,
    shape: Shape = Shape(),
    arrival_rate: float | None = None,
) -> list[dict]:
    """SLS JSON job objects. Arrivals are Poisson with the rate that keeps
    `util` of the cluster's memory allocated on average (or `arrival_rate`
    jobs per second when given)."""
    rng = random.Random(seed)
    names = node_names(nodes)
    rate = arrival_rate or util * nodes * NODE_MEMORY_MB / shape.mean_job_mb_s()
    out: list[dict] = []
    t = 0.0
    while True:
        t += rng.expovariate(rate)
        if t >= span_s:
            break
        start_ms = round(t * 1000)
        local = rng.random() < shape.local_share
        tasks = []
        for _ in range(rng.randint(*shape.maps)):
            task = {
                "container.start.ms": start_ms,
                "container.end.ms": start_ms + 1000 * rng.randint(*shape.map_s),
                "container.priority": 20,
                "container.type": "map",
                "container.memory-mb": shape.map_mb,
                "container.vcores": 1,
            }
            if local:
                rack, host = names[rng.randrange(nodes)]
                task["container.host"] = f"/{rack}/{host}"
            tasks.append(task)
        for _ in range(rng.randint(*shape.reduces)):
            tasks.append(
                {
                    "container.start.ms": start_ms,
                    "container.end.ms": start_ms + 1000 * rng.randint(*shape.reduce_s),
                    "container.priority": 10,
                    "container.type": "reduce",
                    "container.memory-mb": shape.reduce_mb,
                    "container.vcores": 1,
                }
            )
        index = len(out) + 1
        out.append(
            {
                "am.type": "mapreduce",
                "job.start.ms": start_ms,
                "job.end.ms": start_ms + 1000 * (shape.map_s[1] + shape.reduce_s[1]),
                "job.queue.name": QUEUES[rng.randrange(len(QUEUES))],
                "job.id": f"job_{index}",
                "job.user": USERS[rng.randrange(len(USERS))],
                "job.tasks": tasks,
            }
        )
    return out


BURST_TASK_MS = 60_000
"""How long each of the burst's maps runs."""


def burst(jobs_n: int, maps: int, seed: int) -> list[dict]:
    """`jobs_n` jobs of `maps` one-minute maps, all submitted at t=0: the
    scheduler's throughput at saturation (no reduces, no locality)."""
    rng = random.Random(seed)
    return [
        {
            "am.type": "mapreduce",
            "job.start.ms": 0,
            "job.end.ms": 60_000,
            "job.queue.name": QUEUES[j % len(QUEUES)],
            "job.id": f"job_{j + 1}",
            "job.user": USERS[rng.randrange(len(USERS))],
            "job.tasks": [
                {
                    "container.duration.ms": BURST_TASK_MS,
                    "container.priority": 20,
                    "container.type": "map",
                    "container.memory-mb": 2048,
                    "container.vcores": 1,
                }
                for _ in range(maps)
            ],
        }
        for j in range(jobs_n)
    ]


def _fair_allocations() -> str:
    queues = "".join(
        f'  <queue name="{q}">\n    <weight>1.0</weight>\n  </queue>\n' for q in QUEUES
    )
    return (
        '<?xml version="1.0"?>\n<allocations>\n'
        "  <defaultQueueSchedulingPolicy>drf</defaultQueueSchedulingPolicy>\n"
        f"{queues}</allocations>\n"
    )


def _capacity_props() -> dict[str, str]:
    props = {"yarn.scheduler.capacity.root.queues": ",".join(QUEUES)}
    for q in QUEUES:
        props[f"yarn.scheduler.capacity.root.{q}.capacity"] = "25"
        props[f"yarn.scheduler.capacity.root.{q}.maximum-capacity"] = "100"
    return props


_RM_SCHEDULER = "org.apache.hadoop.yarn.server.resourcemanager.scheduler."
SCHEDULERS = {
    "fair": _RM_SCHEDULER + "fair.FairScheduler",
    "capacity": _RM_SCHEDULER + "capacity.CapacityScheduler",
    "fifo": _RM_SCHEDULER + "fifo.FifoScheduler",
}


def write_conf_dirs(out: Path) -> dict[str, Path]:
    """One Hadoop configuration directory per scheduler under `out`."""
    sls_runner = {
        "yarn.sls.nm.memory.mb": str(NODE_MEMORY_MB),
        "yarn.sls.nm.vcores": str(NODE_VCORES),
        "yarn.sls.nm.heartbeat.interval.ms": "1000",
        "yarn.sls.am.heartbeat.interval.ms": "1000",
        "yarn.sls.am.container.memory": str(AM_MEMORY_MB),
        "yarn.sls.am.container.vcores": "1",
    }
    dirs = {}
    for name, cls in SCHEDULERS.items():
        d = out / name
        d.mkdir(parents=True, exist_ok=True)
        site = {"yarn.resourcemanager.scheduler.class": cls}
        if name == "fair":
            site["yarn.scheduler.fair.allocation.file"] = "fair-scheduler.xml"
            (d / "fair-scheduler.xml").write_text(_fair_allocations())
        if name == "capacity":
            (d / "capacity-scheduler.xml").write_text(configuration_xml(_capacity_props()))
        (d / "yarn-site.xml").write_text(configuration_xml(site))
        (d / "sls-runner.xml").write_text(configuration_xml(sls_runner))
        dirs[name] = d
    return dirs


def write_nodes(path: Path, nodes: int) -> None:
    """The SLS topology file: one JSON object per rack."""
    racks: dict[str, list[dict[str, str]]] = {}
    for rack, host in node_names(nodes):
        racks.setdefault(rack, []).append({"node": host})
    path.write_text(
        "\n".join(json.dumps({"rack": r, "nodes": hs}) for r, hs in racks.items()) + "\n"
    )


def write_trace(path: Path, job_list: list[dict]) -> None:
    """SLS JSON: one job object after another, one per line."""
    with path.open("w") as f:
        for job in job_list:
            f.write(json.dumps(job, separators=(",", ":")))
            f.write("\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m emu.bench.workload",
        description="Write the benchmark workload: nodes.json, trace.json and "
        "configuration directories fair/, capacity/, fifo/.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("out", type=Path, help="directory to write into")
    parser.add_argument("--nodes", type=int, default=1000, help="cluster size")
    parser.add_argument("--span-s", type=float, default=3600, help="arrival window (s)")
    parser.add_argument("--util", type=float, default=0.8, help="target memory allocated")
    parser.add_argument("--rate-factor", type=float, default=1.0, help="arrival rate multiplier")
    parser.add_argument("--seed", type=int, default=1, help="arrival and task seed")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    write_conf_dirs(args.out)
    write_nodes(args.out / "nodes.json", args.nodes)
    job_list = jobs(args.nodes, args.span_s, args.util * args.rate_factor, args.seed)
    write_trace(args.out / "trace.json", job_list)
    containers = sum(len(j["job.tasks"]) + 1 for j in job_list)
    print(f"{args.out}: {args.nodes} nodes, {len(job_list)} jobs, {containers} containers")
    return 0


if __name__ == "__main__":
    sys.exit(main())

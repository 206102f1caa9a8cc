"""Builders for small workloads and clusters used across tests."""

from __future__ import annotations

from emu.config.configuration import Configuration
from emu.resources import Resource
from emu.simulation import Simulation
from emu.workload import JobSpec, NodeSpec, TaskSpec, Workload


def mr_job(
    job_id: str,
    submit_ms: int = 0,
    maps: int = 4,
    reduces: int = 1,
    map_ms: int = 60_000,
    reduce_ms: int = 30_000,
    memory: int = 1024,
    hosts: tuple[str, ...] = (),
    queue: str = "default",
    user: str = "alice",
) -> JobSpec:
    tasks = [TaskSpec("map", 20, map_ms, Resource(memory, 1), hosts) for _ in range(maps)]
    tasks += [TaskSpec("reduce", 10, reduce_ms, Resource(memory, 1)) for _ in range(reduces)]
    return JobSpec(job_id, "mapreduce", submit_ms, queue, user, Resource(1024, 1), tuple(tasks))


def nodes(n: int = 4, per_rack: int = 2, memory: int = 8192, vcores: int = 8) -> list[NodeSpec]:
    return [
        NodeSpec(f"node{i + 1}", f"/rack{i // per_rack + 1}", Resource(memory, vcores))
        for i in range(n)
    ]


def fifo_conf(props: dict[str, object] | None = None) -> Configuration:
    conf = Configuration({"yarn.resourcemanager.scheduler.class": "fifo"})
    for k, v in (props or {}).items():
        conf.set(k, v)
    return conf


def simulation(jobs: list[JobSpec], n_nodes: int = 4, faults=None, conf=None, **kw) -> Simulation:
    """A cluster of `n_nodes` with the RM's state invariants checked as it
    runs and at the end (emu.metrics.cluster_invariants)."""
    kw.setdefault("check_invariants", True)
    return Simulation(
        conf=conf or fifo_conf(),
        nodes=nodes(n_nodes),
        workload=Workload(jobs),
        faults=faults or [],
        **kw,
    )

"""Builders for whole in-memory clusters and what they run: workloads,
node lists, asks and scenarios.

`simulation(jobs)` is a FIFO cluster of four nodes running the jobs
(`mr_job` builds a MapReduce-like one) on the virtual clock; `run()` it
inside trio and read its report. `scenario_simulation(name)` does the same
for a scenario file. Both check the RM's invariants as the cluster runs
(`emu.metrics.cluster_invariants`); `emu.simulation.run_virtual` runs one.
`ask` is one ResourceRequest as an AM sends it, for the scheduler harnesses,
and `run_on_virtual_clock` gives them the trio run they read the time from
outside pytest-trio.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import trio

from emu.clock import virtual_clock
from emu.config.configuration import Configuration
from emu.resources import Resource
from emu.scenario import native
from emu.simulation import Simulation
from emu.workload import JobSpec, NodeSpec, TaskSpec, Workload

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
"""The scenario files of emu's source tree: where `scenario_simulation`
looks up a bare name. An installed emu has no source tree; there the
scenario is given by its path."""


def run_on_virtual_clock(test: Callable[[], Any]) -> Any:
    """Call `test` (a plain or an async function) inside a trio run on emu's
    virtual clock and return its result: the RM reads the time from trio,
    so the harnesses need one, as pytest-trio's `autojump_clock` gives a
    test. Timers fire at once, in simulated time."""

    async def main() -> Any:
        result = test()
        if inspect.isawaitable(result):
            result = await result
        return result

    return trio.run(main, clock=virtual_clock())


def ask(
    priority: int,
    name: str,
    num: int,
    memory: int = 1024,
    vcores: int = 1,
    relax: bool = True,
    capability: dict[str, int] | None = None,
) -> dict[str, Any]:
    """One ResourceRequest as an AM sends it in `allocate`: `num` containers
    of <memory, vcores> (or `capability`, for extra resource types) at
    `priority` on `name` (a host, a rack or "*")."""
    return {
        "priority": priority,
        "resource_name": name,
        "capability": capability or {"memory-mb": memory, "vcores": vcores},
        "num_containers": num,
        "relax_locality": relax,
    }


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


def scenario_simulation(scenario: str | Path | native.Scenario, **kw: Any) -> Simulation:
    """The simulation of a scenario (a path, the name of one of the source
    tree's `scenarios/`, or one already loaded), with the RM's invariants
    checked as it runs."""
    if isinstance(scenario, native.Scenario):
        sc = scenario
    else:
        path = Path(scenario)
        if not path.is_file() and (SCENARIOS / path).is_file():
            path = SCENARIOS / path
        sc = native.load(path)
    kw.setdefault("check_invariants", True)
    return Simulation.of_scenario(sc, **kw)


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

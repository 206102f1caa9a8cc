"""The scenario-independent description of what a replay runs.

Every trace reader (SLS JSON, Rumen, SYNTH, native scenarios) produces a
`Workload`; the replay driver and the AMs consume it. Specs are plain data and
turn into msgpack-able maps (`to_wire`), because a job's task plan travels to
its AM inside the application submission context, as YARN's launch context
does, and the AM may live in another process.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from emu.resources import Resource

AM_TYPES = ("mapreduce", "stream", "generic")


@dataclass(frozen=True, slots=True)
class TaskSpec:
    """One container the AM will ask for and run.

    `hosts` are preferred host names (plain host names, not `/rack/host`);
    empty means anywhere. `duration_ms` is how long the container runs once
    started. `task_type` is "map", "reduce" or a free label for generic AMs.
    `request_delay_ms` is how long after the AM registers the task is asked
    for (the DAG/generic AM honours it; mapreduce asks maps at once).
    """

    task_type: str
    priority: int
    duration_ms: int
    resource: Resource
    hosts: tuple[str, ...] = ()
    execution_type: str = "GUARANTEED"
    allocation_id: int = -1
    request_delay_ms: int = 0

    def to_wire(self) -> dict[str, Any]:
        return {
            "type": self.task_type,
            "priority": self.priority,
            "duration_ms": self.duration_ms,
            "resource": self.resource.to_wire(),
            "hosts": list(self.hosts),
            "execution_type": self.execution_type,
            "allocation_id": self.allocation_id,
            "request_delay_ms": self.request_delay_ms,
        }

    @classmethod
    def from_wire(cls, m: dict[str, Any]) -> TaskSpec:
        return cls(
            task_type=m["type"],
            priority=m["priority"],
            duration_ms=m["duration_ms"],
            resource=Resource.from_wire(m["resource"]),
            hosts=tuple(m["hosts"]),
            execution_type=m.get("execution_type", "GUARANTEED"),
            allocation_id=m.get("allocation_id", -1),
            request_delay_ms=m.get("request_delay_ms", 0),
        )


@dataclass(frozen=True, slots=True)
class JobSpec:
    """One application: when it is submitted, where, by whom, and its tasks.

    `submit_ms` is the simulated submission time (SLS `job.start.ms`).
    `end_ms` is the trace's recorded end (SLS `job.end.ms`); the stream AM
    uses it as its lifetime, others only report it. `am_type` is one of
    AM_TYPES.
    """

    job_id: str
    am_type: str
    submit_ms: int
    queue: str
    user: str
    am_resource: Resource
    tasks: tuple[TaskSpec, ...]
    end_ms: int | None = None
    priority: int = 0
    params: dict[str, Any] = field(default_factory=dict)

    def to_wire(self) -> dict[str, Any]:
        return {
            "job_id": self.job_id,
            "am_type": self.am_type,
            "submit_ms": self.submit_ms,
            "end_ms": self.end_ms,
            "queue": self.queue,
            "user": self.user,
            "am_resource": self.am_resource.to_wire(),
            "priority": self.priority,
            "tasks": [t.to_wire() for t in self.tasks],
            "params": dict(self.params),
        }

    @classmethod
    def from_wire(cls, m: dict[str, Any]) -> JobSpec:
        return cls(
            job_id=m["job_id"],
            am_type=m["am_type"],
            submit_ms=m["submit_ms"],
            end_ms=m.get("end_ms"),
            queue=m["queue"],
            user=m["user"],
            am_resource=Resource.from_wire(m["am_resource"]),
            priority=m.get("priority", 0),
            tasks=tuple(TaskSpec.from_wire(t) for t in m["tasks"]),
            params=dict(m.get("params") or {}),
        )


@dataclass(frozen=True, slots=True)
class NodeSpec:
    """One NodeManager: host name, rack (e.g. "/default-rack"), its total
    resource (None = the cluster default) and node labels."""

    host: str
    rack: str
    resource: Resource | None = None
    labels: tuple[str, ...] = ()


@dataclass(slots=True)
class Workload:
    """Jobs sorted by (submit_ms, job_id), and the nodes the trace itself
    names (every `/rack/host` its tasks mention, first-seen order): SLS builds
    its cluster from those when no `--nodes` topology file is given."""

    jobs: list[JobSpec]
    trace_nodes: list[NodeSpec] = field(default_factory=list)

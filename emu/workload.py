"""The scenario-independent description of what a replay runs.

Every trace reader (SLS JSON, Rumen, SYNTH, native scenarios) produces a
`Workload`; the replay driver and the AMs consume it. Specs are plain data and
turn into msgpack-able maps (`to_wire`), because a job's task plan travels to
its AM inside the application submission context, as YARN's launch context
does, and the AM may live in another process.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any, Final

from emu.resources import Resource

AM_TYPES = ("mapreduce", "stream", "generic")


class TaskSpec:
    """One container the AM will ask for and run.

    `hosts` are preferred host names (plain host names, not `/rack/host`);
    empty means anywhere. `duration_ms` is how long the container runs once
    started. `task_type` is "map", "reduce" or a free label for generic AMs.
    `request_delay_ms` is how long after the AM registers the task is asked
    for (the DAG/generic AM honours it; mapreduce asks maps at once).

    Immutable value, equal and hashed by its fields. A plain class rather
    than a frozen dataclass: compiled, its construction, equality and hash
    are native, where a dataclass's are the Python functions `dataclasses`
    generates. Every AM builds its job's task plan from the submission
    context (~100 specs per job), and a trace reader builds one per task.
    """

    __slots__ = (
        "allocation_id",
        "duration_ms",
        "execution_type",
        "hosts",
        "priority",
        "request_delay_ms",
        "resource",
        "task_type",
    )

    def __init__(
        self,
        task_type: str,
        priority: int,
        duration_ms: int,
        resource: Resource,
        hosts: tuple[str, ...] = (),
        execution_type: str = "GUARANTEED",
        allocation_id: int = -1,
        request_delay_ms: int = 0,
    ) -> None:
        self.task_type: Final = task_type
        self.priority: Final = priority
        self.duration_ms: Final = duration_ms
        self.resource: Final = resource
        self.hosts: Final = hosts
        self.execution_type: Final = execution_type
        self.allocation_id: Final = allocation_id
        self.request_delay_ms: Final = request_delay_ms

    def _fields(self) -> tuple[str, int, int, Resource, tuple[str, ...], str, int, int]:
        return (
            self.task_type,
            self.priority,
            self.duration_ms,
            self.resource,
            self.hosts,
            self.execution_type,
            self.allocation_id,
            self.request_delay_ms,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TaskSpec):
            return NotImplemented
        return self is other or self._fields() == other._fields()

    def __ne__(self, other: object) -> bool:
        if not isinstance(other, TaskSpec):
            return NotImplemented
        return not self == other

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return (
            f"TaskSpec(task_type={self.task_type!r}, priority={self.priority!r}, "
            f"duration_ms={self.duration_ms!r}, resource={self.resource!r}, "
            f"hosts={self.hosts!r}, execution_type={self.execution_type!r}, "
            f"allocation_id={self.allocation_id!r}, request_delay_ms={self.request_delay_ms!r})"
        )

    def with_task_type(self, task_type: str) -> TaskSpec:
        """The same spec with another `task_type`."""
        f = self._fields()
        return TaskSpec(task_type, f[1], f[2], f[3], f[4], f[5], f[6], f[7])

    def to_wire(self, resource: dict[str, int] | None = None) -> dict[str, Any]:
        """The task's wire map; `resource`, if given, is the resource's wire
        map to use (shared between the tasks of one job). Keys at their
        defaults (no hosts, GUARANTEED, allocation id -1, no request delay)
        are left out, as `from_wire` reads them: a running app's plan stays
        in its submission context, a 4-key map is 184 bytes and the full
        8-key one with its empty host list 328."""
        m: dict[str, Any] = {
            "type": self.task_type,
            "priority": self.priority,
            "duration_ms": self.duration_ms,
            "resource": self.resource.to_wire() if resource is None else resource,
        }
        if self.hosts:
            m["hosts"] = list(self.hosts)
        if self.execution_type != "GUARANTEED":
            m["execution_type"] = self.execution_type
        if self.allocation_id != -1:
            m["allocation_id"] = self.allocation_id
        if self.request_delay_ms != 0:
            m["request_delay_ms"] = self.request_delay_ms
        return m

    @classmethod
    def from_wire(cls, m: dict[str, Any], shared: SpecCache | None = None) -> TaskSpec:
        """The spec of a wire map; with `shared`, equal specs (and their
        resources and host tuples) come back as one object."""
        resource = Resource.from_wire(m["resource"])
        hosts = tuple(m.get("hosts") or ())
        if shared is not None:
            resource, hosts = shared.resource(resource), shared.hosts(hosts)
        task = TaskSpec(
            m["type"],
            m["priority"],
            m["duration_ms"],
            resource,
            hosts,
            m.get("execution_type", "GUARANTEED"),
            m.get("allocation_id", -1),
            m.get("request_delay_ms", 0),
        )
        return task if shared is None else shared.task(task)


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
        """The job as the submission context carries it. Equal tasks share one
        task map, and equal resources one resource map: in one process the
        context is handed over as is, and a 100-task job whose tasks come in
        a few dozen shapes then costs a few dozen maps, not a hundred."""
        maps: dict[TaskSpec, dict[str, Any]] = {}
        resources: dict[Resource, dict[str, int]] = {}
        tasks = []
        for t in self.tasks:
            m = maps.get(t)
            if m is None:
                r = resources.get(t.resource)
                if r is None:
                    r = resources[t.resource] = t.resource.to_wire()
                m = maps[t] = t.to_wire(r)
            tasks.append(m)
        return {
            "job_id": self.job_id,
            "am_type": self.am_type,
            "submit_ms": self.submit_ms,
            "end_ms": self.end_ms,
            "queue": self.queue,
            "user": self.user,
            "am_resource": self.am_resource.to_wire(),
            "priority": self.priority,
            "tasks": tasks,
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
            tasks=_tasks_from_wire(m["tasks"]),
            params=dict(m.get("params") or {}),
        )


def _tasks_from_wire(maps: list[dict[str, Any]]) -> tuple[TaskSpec, ...]:
    """Equal task maps (the same map object, as `JobSpec.to_wire` shares
    them, or equal contents after a trip through bytes) give one TaskSpec."""
    shared = SpecCache()
    by_map: dict[int, TaskSpec] = {}
    out = []
    for m in maps:
        t = by_map.get(id(m))
        if t is None:
            t = by_map[id(m)] = TaskSpec.from_wire(m, shared)
        out.append(t)
    return tuple(out)


class SpecCache:
    """Equal specs shared as one object while a trace is read.

    Why: a benchmark trace of 640,000 tasks has a few hundred distinct
    (type, priority, duration, size) shapes plus one per preferred host;
    holding one TaskSpec, Resource, duration int and type string per task
    cost ~300 bytes each (~190 MB for P2's trace) where a shared reference
    costs 8. Specs are immutable, so sharing changes nothing but memory.
    """

    __slots__ = ("_hosts", "_resources", "_tasks")

    def __init__(self) -> None:
        self._resources: dict[Resource, Resource] = {}
        self._tasks: dict[TaskSpec, TaskSpec] = {}
        self._hosts: dict[tuple[str, ...], tuple[str, ...]] = {}

    def resource(self, r: Resource) -> Resource:
        return self._resources.setdefault(r, r)

    def hosts(self, hosts: tuple[str, ...]) -> tuple[str, ...]:
        if not hosts:
            return ()
        found = self._hosts.get(hosts)
        if found is None:
            found = self._hosts[hosts] = tuple(sys.intern(h) for h in hosts)
        return found

    def task(self, t: TaskSpec) -> TaskSpec:
        found = self._tasks.get(t)
        if found is None:
            kind = sys.intern(t.task_type)
            found = self._tasks[t] = t if kind is t.task_type else t.with_task_type(kind)
        return found


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

"""SLS's own trace format (`--tracetype=SLS`), read as SLS's AMRunner reads it.

An SLS file is a stream of concatenated JSON objects, not an array (Jackson's
`readValues`). Each object is a job:

    {"am.type": "mapreduce", "job.start.ms": 0, "job.end.ms": 95375,
     "job.queue.name": "sls_queue_1", "job.id": "job_1", "job.user": "default",
     "job.count": 1, "am.memory-mb": 1024, "am.vcores": 1,
     "job.tasks": [{"count": 1, "container.host": "/default-rack/node1",
                    "container.start.ms": 6664, "container.end.ms": 23707,
                    "container.priority": 20, "container.type": "map"}]}

Keys and defaults follow `AMDefinitionSLS` / `TaskContainerDefinition`:
- job: `am.type` (or `yarn.sls.am.type`, which is what current SLS actually
  reads and what `sls_dag.json` uses; default `mapreduce`), `job.start.ms`
  (default 0), `job.end.ms`, `job.queue.name` (default `default`), `job.id`
  (when absent or `job.count` > 1, SLS numbers AMs 0, 1, 2, ... across the
  whole run), `job.user` (default `default`), `job.count` (at least 1),
  `job.priority`, `job.label.expression`, `am.memory-mb`, `am.vcores`,
  `am.<resource-type>` over the AM default (declared types only, as for tasks).
- task: `count` (at least 1), `container.host` (`/rack/host`),
  `container.duration.ms` (or legacy `duration.ms`, or `container.end.ms` -
  `container.start.ms`; must be > 0), `container.priority` (default 20 for
  every type, as SLS), `container.type` (default `map`),
  `container.execution.type` (GUARANTEED | OPPORTUNISTIC),
  `container.allocation.id` (default -1), `container.request.delay` (the DAG
  AM's delay before asking, at least 0), `container.memory-mb`,
  `container.vcores`, and `container.<resource-type>` over the container
  default, for each type the cluster declares in `yarn.resource-types`
  (SLS's AMDefinitionSLS reads `container.` + each resource type's name and
  no other `container.` key, so `container.memory` is not memory; any other
  is left out as SLS leaves it, with one warning naming the key).
- an object with `num.nodes` (and optional `num.racks`) and no tasks adds
  generated nodes `/rack<i % racks>/node<i>` to the cluster, as SLS does.

Numbers may be JSON numbers or numeric strings (SLS parses `toString()`),
never fractions. Where SLS would log an error and silently drop the job
(no tasks, a task lasting <= 0 ms, a wrong type), this reader raises
`InputError` naming the file, the job's line and the key, so a replay never
runs a different workload than the file describes.

The helpers here (`iter_json_objects`, `JsonFields`, `split_host_path`,
`TraceNodes`) are shared by the other JSON readers of the SLS family.
"""

from __future__ import annotations

import bisect
import contextlib
import gzip
import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from emu.errors import InputError, warn_input
from emu.resources import MEMORY, VCORES, Resource
from emu.scenario.limits import JAVA_LONG_MAX, JAVA_LONG_MIN, shorten
from emu.workload import JobSpec, NodeSpec, SpecCache, TaskSpec, Workload

DEFAULT_RACK = "/default-rack"
DEFAULT_QUEUE = "default"
DEFAULT_USER = "default"
MAP_PRIORITY = 20
REDUCE_PRIORITY = 10
EXECUTION_TYPES = ("GUARANTEED", "OPPORTUNISTIC")

_TASK_KEYS = frozenset(
    {
        "container.host",
        "container.start.ms",
        "container.end.ms",
        "container.duration.ms",
        "container.priority",
        "container.type",
        "container.execution.type",
        "container.allocation.id",
        "container.request.delay",
        "container.memory-mb",
        "container.vcores",
    }
)
_AM_KEYS = frozenset({"am.type", "am.memory-mb", "am.vcores"})


def read_text(path: str, expected: str = "a file", encoding: str = "utf-8-sig") -> str:
    """An input file's text (gzip-compressed if it ends in `.gz`, as Rumen's
    JobTraceReader accepts), with InputError for a missing or non-UTF-8 file;
    `expected` names what a directory given instead should have been."""
    try:
        if path.endswith(".gz"):
            with gzip.open(path, "rb") as f:
                data = f.read()
        else:
            with open(path, "rb") as f:
                data = f.read()
    except FileNotFoundError:
        raise InputError(path, None, "no such file") from None
    except IsADirectoryError:
        raise InputError(path, None, f"is a directory, expected {expected}") from None
    except OSError as e:
        raise InputError(path, None, f"cannot read: {e.strerror}") from None
    except EOFError as e:
        raise InputError(path, None, f"cannot read: {e}") from None
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as e:
        raise InputError(path, None, f"not UTF-8 text (byte {e.start})") from None


def iter_json_objects(path: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield `(line, object)` for each top-level JSON object of a file that
    holds concatenated objects (Jackson `readValues`). A top-level array is
    read as its elements. Truncated or invalid JSON raises InputError at the
    line where parsing failed."""
    text = read_text(path)
    newlines = [m.start() for m in re.finditer("\n", text)]
    decoder = json.JSONDecoder()
    pos, end = 0, len(text)
    while True:
        while pos < end and text[pos] in " \t\r\n":
            pos += 1
        if pos >= end:
            return
        line = bisect.bisect_left(newlines, pos) + 1
        try:
            value, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as e:
            raise InputError(path, e.lineno, f"invalid JSON: {e.msg} (column {e.colno})") from None
        items = value if isinstance(value, list) else [value]
        for item in items:
            if not isinstance(item, dict):
                raise InputError(path, line, f"expected a JSON object, got {_kind(item)}")
            yield line, item


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the string {value!r}"
    return "an array" if isinstance(value, list) else "an object"


class JsonFields:
    """Typed reads of one JSON object's keys. Errors are InputError(path,
    line, "<what>: <key>: <problem>"), so the user sees the file, the line of
    the enclosing object, which job or task, and which key."""

    def __init__(self, path: str, line: int, obj: Mapping[str, Any], what: str) -> None:
        self.path = path
        self.line = line
        self.obj = obj
        self.what = what

    def error(self, key: str | None, message: str) -> InputError:
        where = f"{self.what}: {key}" if key else self.what
        return InputError(self.path, self.line, f"{where}: {message}")

    def has(self, key: str) -> bool:
        return self.obj.get(key) is not None

    def integer(self, key: str, default: int) -> int:
        """An integer, given as a JSON number or a numeric string; null or
        absent gives `default`."""
        return _as_int(self, key, self.obj.get(key), default)

    def string(self, key: str, default: str) -> str:
        """A string; numbers are accepted and turned into text (SLS reads
        most fields through `toString()`); null or absent gives `default`."""
        value = self.obj.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise self.error(key, f"expected a string, got {_kind(value)}")
        return str(value)

    def number(self, key: str, default: float) -> float:
        """A number (integer or fraction, or a numeric string)."""
        value = self.obj.get(key)
        return default if value is None else self.to_number(key, value)

    def to_number(self, key: str, value: Any) -> float:
        """`value`, found under `key` (or an array element so named), as a number."""
        if isinstance(value, bool):
            raise self.error(key, f"expected a number, got {_kind(value)}")
        if isinstance(value, (int, float)):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value)
            except ValueError:
                pass
        raise self.error(key, f"expected a number, got {_kind(value)}")

    def array(self, key: str) -> list[Any] | None:
        value = self.obj.get(key)
        if value is None:
            return None
        if not isinstance(value, list):
            raise self.error(key, f"expected an array, got {_kind(value)}")
        return value

    def object(self, key: str) -> dict[str, Any] | None:
        value = self.obj.get(key)
        if value is None:
            return None
        if not isinstance(value, dict):
            raise self.error(key, f"expected an object, got {_kind(value)}")
        return value

    def child(self, value: Any, what: str) -> JsonFields:
        """Fields of a nested object (a task of a job, ...)."""
        if not isinstance(value, dict):
            raise self.error(None, f"{what}: expected an object, got {_kind(value)}")
        return JsonFields(self.path, self.line, value, f"{self.what}, {what}")


def _as_int(fields: JsonFields, key: str, value: Any, default: int) -> int:
    """SLS reads these with Java's Long.parseLong: beyond a long is an error
    there too, and here it would only fail later, deep in the run."""
    if value is None:
        return default
    number: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str):
        with contextlib.suppress(ValueError):
            number = int(value.strip())
    if number is None:
        raise fields.error(key, f"expected an integer, got {_kind(value)}")
    if not JAVA_LONG_MIN <= number <= JAVA_LONG_MAX:
        raise fields.error(key, f"{shorten(str(number))} is out of range (a Java long)")
    return number


def split_host_path(name: str) -> tuple[str, str]:
    """`/rack/host` -> (`/rack`, `host`), as Hadoop's NodeBase splits a
    network path at its last `/` (`/a/b/host` -> (`/a/b`, `host`)). A name
    without a rack gets `/default-rack`."""
    path = name.strip().rstrip("/")
    rack, _, host = path.rpartition("/")
    return (rack if rack.strip("/") else DEFAULT_RACK), host


class TraceNodes:
    """The distinct nodes a trace mentions, in first-seen order (SLS builds
    its cluster from them when no `--nodes` file is given)."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str, str], NodeSpec] = {}

    def add(self, host_path: str) -> str:
        """Record a `/rack/host` name; returns the plain host name."""
        rack, host = split_host_path(host_path)
        if (rack, host) not in self._seen:
            self._seen[(rack, host)] = NodeSpec(host=host, rack=rack)
        return host

    def generate(self, num_nodes: int, num_racks: int) -> None:
        """SLS's `generateNodes`: `/rack<i % racks>/node<i>`."""
        racks = min(max(num_racks, 1), max(num_nodes, 1))
        for i in range(num_nodes):
            self.add(f"/rack{i % racks}/node{i}")

    @property
    def nodes(self) -> list[NodeSpec]:
        return list(self._seen.values())


def am_kind(am_type: str) -> str:
    """The emu AM kind for a trace's AM type name: SLS's `mapreduce` and
    `stream` have their own AMs; `dag` and anything else run as the generic
    AM driven by the task list."""
    return am_type if am_type in ("mapreduce", "stream") else "generic"


def sort_jobs(jobs: list[JobSpec]) -> list[JobSpec]:
    """The Workload order: by submission time, ties by job id."""
    return sorted(jobs, key=lambda j: (j.submit_ms, j.job_id))


class ResourceKeys:
    """The `<prefix><type>` keys a trace may size a container with. SLS reads
    one for each type the cluster declares (`yarn.resource-types`) and no
    other, so any other such key (a typo, or a type this cluster lacks) is
    left out as SLS leaves it, with one warning per key and file: read as a
    type, it would make an ask no node can hold."""

    def __init__(self, resource_types: Iterable[str]) -> None:
        self.types = frozenset(resource_types)
        self.warned: set[tuple[str, str]] = set()

    def undeclared(self, fields: JsonFields, key: str) -> None:
        if (fields.path, key) in self.warned:
            return
        self.warned.add((fields.path, key))
        declared = ", ".join(sorted(self.types)) or "none"
        warn_input(
            fields.path,
            fields.line,
            f"{fields.what}: {key}: not a field SLS reads and not a declared resource type "
            f"(yarn.resource-types: {declared}); left out, as SLS does",
        )


def resource_from(
    fields: JsonFields, base: Resource, prefix: str, reserved: frozenset[str], keys: ResourceKeys
) -> Resource:
    """`base` with `<prefix>memory-mb`, `<prefix>vcores` and
    `<prefix><type>` overrides for the declared types; keys in `reserved`
    are not resources."""
    memory = fields.integer(prefix + MEMORY, base.memory)
    vcores = fields.integer(prefix + VCORES, base.vcores)
    extra = dict(base.extra)
    for key in fields.obj:
        if key.startswith(prefix) and key not in reserved and fields.has(key):
            name = key[len(prefix) :]
            if name in keys.types:
                extra[name] = fields.integer(key, 0)
            else:
                keys.undeclared(fields, key)
    res = Resource(memory, vcores, extra)
    if res.any_negative():
        raise fields.error(None, f"negative resource {res!r}")
    return res


def read_sls(
    paths: Sequence[str | os.PathLike[str]],
    *,
    container_default: Resource,
    am_default: Resource,
    resource_types: Iterable[str],
) -> Workload:
    """Read SLS JSON traces into a Workload.

    `container_default` is the task size when a task gives none
    (`yarn.sls.container.memory.mb` / `vcores`); `am_default` the AM
    container size (`yarn.sls.am.container.memory` / `vcores`);
    `resource_types` the cluster's extra types (`yarn.resource-types`).
    """
    keys = ResourceKeys(resource_types)
    nodes = TraceNodes()
    jobs: list[JobSpec] = []
    first_seen: dict[str, str] = {}
    shared = SpecCache()
    am_index = 0
    for raw_path in paths:
        path = os.fspath(raw_path)
        for number, (line, obj) in enumerate(iter_json_objects(path), start=1):
            fields = JsonFields(path, line, obj, f"job {number}")
            if fields.has("num.nodes"):
                nodes.generate(fields.integer("num.nodes", 0), fields.integer("num.racks", 1))
                if not fields.has("job.tasks"):
                    continue
            for spec in _read_job(
                fields, nodes, container_default, am_default, am_index, shared, keys
            ):
                if spec.job_id in first_seen:
                    raise fields.error(
                        "job.id",
                        f"duplicate job id {spec.job_id!r} (first at {first_seen[spec.job_id]})",
                    )
                first_seen[spec.job_id] = f"{path}:{line}"
                jobs.append(spec)
                am_index += 1
    return Workload(jobs=sort_jobs(jobs), trace_nodes=nodes.nodes)


def _read_job(
    fields: JsonFields,
    nodes: TraceNodes,
    container_default: Resource,
    am_default: Resource,
    am_index: int,
    shared: SpecCache,
    keys: ResourceKeys,
) -> list[JobSpec]:
    am_type = fields.string("yarn.sls.am.type", fields.string("am.type", "mapreduce"))
    submit_ms = fields.integer("job.start.ms", 0)
    if submit_ms < 0:
        raise fields.error("job.start.ms", f"must be >= 0, got {submit_ms}")
    end_ms = fields.integer("job.end.ms", 0) if fields.has("job.end.ms") else None
    if end_ms is not None and end_ms < 0:
        raise fields.error("job.end.ms", f"must be >= 0, got {end_ms}")
    count = max(fields.integer("job.count", 1), 1)
    explicit_id = fields.string("job.id", "") if fields.has("job.id") else None
    params: dict[str, Any] = {"am_type": am_type}
    if fields.has("job.label.expression"):
        params["label_expression"] = fields.string("job.label.expression", "")

    task_list = fields.array("job.tasks")
    if not task_list:
        raise fields.error("job.tasks", "missing or empty: a job needs at least one task")
    tasks: list[TaskSpec] = []
    for i, raw_task in enumerate(task_list, start=1):
        task = fields.child(raw_task, f"task {i}")
        spec = shared.task(_read_task(task, nodes, container_default, shared, keys))
        tasks.extend([spec] * max(task.integer("count", 1), 1))

    common: dict[str, Any] = {
        "am_type": am_kind(am_type),
        "submit_ms": submit_ms,
        "end_ms": end_ms,
        "queue": fields.string("job.queue.name", DEFAULT_QUEUE),
        "user": fields.string("job.user", DEFAULT_USER),
        "am_resource": shared.resource(resource_from(fields, am_default, "am.", _AM_KEYS, keys)),
        "tasks": tuple(tasks),
        "priority": fields.integer("job.priority", 0),
    }
    if count == 1 and explicit_id is not None:
        return [JobSpec(job_id=explicit_id, params=params, **common)]
    return [JobSpec(job_id=str(am_index + k), params=dict(params), **common) for k in range(count)]


def _read_task(
    task: JsonFields,
    nodes: TraceNodes,
    container_default: Resource,
    shared: SpecCache,
    keys: ResourceKeys,
) -> TaskSpec:
    if task.has("container.duration.ms"):
        duration, key = task.integer("container.duration.ms", 0), "container.duration.ms"
    elif task.has("duration.ms"):
        duration, key = task.integer("duration.ms", 0), "duration.ms"
    elif task.has("container.start.ms") and task.has("container.end.ms"):
        start = task.integer("container.start.ms", 0)
        end = task.integer("container.end.ms", 0)
        if start < 0:
            raise task.error("container.start.ms", f"must be >= 0, got {start}")
        duration, key = end - start, "container.end.ms"
        if duration < 0:
            raise task.error(
                key, f"{end} is before container.start.ms {start}: negative duration {duration}"
            )
    else:
        raise task.error(
            None,
            "no duration: give container.duration.ms, or container.start.ms and container.end.ms",
        )
    if duration <= 0:
        raise task.error(key, f"task duration must be > 0 ms, got {duration}")

    execution_type = task.string("container.execution.type", "GUARANTEED")
    if execution_type not in EXECUTION_TYPES:
        raise task.error(
            "container.execution.type",
            f"expected one of {', '.join(EXECUTION_TYPES)}, got {execution_type!r}",
        )
    hosts: tuple[str, ...] = ()
    if task.has("container.host"):
        host_path = task.string("container.host", "")
        if not split_host_path(host_path)[1]:
            raise task.error("container.host", f"no host name in {host_path!r}")
        hosts = shared.hosts((nodes.add(host_path),))
    base = container_default
    return TaskSpec(
        task_type=task.string("container.type", "map"),
        priority=task.integer("container.priority", MAP_PRIORITY),
        duration_ms=duration,
        resource=shared.resource(resource_from(task, base, "container.", _TASK_KEYS, keys)),
        hosts=hosts,
        execution_type=execution_type,
        allocation_id=task.integer("container.allocation.id", -1),
        request_delay_ms=max(task.integer("container.request.delay", 0), 0),
    )

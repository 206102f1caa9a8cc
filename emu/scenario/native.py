"""emu's own scenario format: one TOML file with the cluster, the Hadoop
configuration, the workload and the faults.

TOML because it is in the standard library, readable, and its parser
reports the line of a syntax error. Semantic errors name the key path
(e.g. `jobs[2].tasks[0].duration_ms`). The format is documented in the
README ("Scenario files"); `scenarios/` holds examples.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from emu.config.configuration import Configuration
from emu.config.property_names import check_name
from emu.errors import InputError, check_keys
from emu.resources import Resource
from emu.scenario.limits import JAVA_INT_MAX, JAVA_LONG_MAX, MAX_TASKS, shorten
from emu.scenario.queues import check_capacity_queues
from emu.scenario.sls import read_text
from emu.scenario.topology import parse_labels
from emu.workload import JobSpec, NodeSpec, TaskSpec, Workload

FAULT_KINDS = (
    "nm_crash",
    "nm_restart",
    "am_hang",
    "am_crash",
    "kill_app",
    "decommission",
    "rm_restart",
)
JOB_FAULTS = ("am_hang", "am_crash", "kill_app")
CLUSTER_FAULTS = ("rm_restart",)
"""Faults without a target: the RM restarts (with recovery if
yarn.resourcemanager.recovery.enabled)."""
DEFAULT_PRIORITY = {"map": 20, "reduce": 10}
# Nodes one scenario may generate (10x DESIGN.md's largest in-process goal).
MAX_NODES = 100_000
TOP_KEYS = {
    "name",
    "description",
    "seed",
    "cluster",
    "config",
    "jobs",
    "faults",
    "changes",
    "trace",
}
CHANGE_KINDS = (
    "refresh_queues",
    "add_nodes",
    "remove_nodes",
    "add_node_labels",
    "remove_node_labels",
    "replace_labels_on_node",
)
_CHANGE_KEYS = {
    "refresh_queues": {"at_ms", "kind", "properties", "file"},
    "add_nodes": {"at_ms", "kind", "count", "memory_mb", "vcores", "rack", "prefix"},
    "remove_nodes": {"at_ms", "kind", "count", "nodes"},
    "add_node_labels": {"at_ms", "kind", "labels"},
    "remove_node_labels": {"at_ms", "kind", "labels"},
    "replace_labels_on_node": {"at_ms", "kind", "nodes", "fail_on_unknown"},
}
LABEL_CHANGES = ("add_node_labels", "remove_node_labels", "replace_labels_on_node")
"""Changes made through `yarn rmadmin`'s node-label commands, each written
as that command's argument (`gpu(exclusive=false),spare`, `node1=gpu node2=`)."""


@dataclass(frozen=True)
class Fault:
    """Something that goes wrong at `at_ms`: `target` is a host (nm_*,
    decommission), a job id (am_hang, am_crash, kill_app) or "" (rm_restart)."""

    at_ms: int
    kind: str
    target: str


@dataclass(frozen=True)
class Change:
    """A what-if at `at_ms`: the cluster or its configuration changes, as an
    operator would change it (`yarn rmadmin -refreshQueues`, NMs joining,
    nodes decommissioned). Everything before `at_ms` runs as without it.

    refresh_queues: `properties` (capacity-scheduler.xml names) or
    `allocations` (a fair-scheduler.xml's text) replace the queues' setup;
    add_nodes: `hosts` join on `rack`, each of `resource`;
    remove_nodes: `hosts` are decommissioned, or the last `count` nodes;
    add_node_labels: `labels` join the cluster, each (name, exclusive);
    remove_node_labels: the labels `names` leave it;
    replace_labels_on_node: each (node, label) of `mapping` (label "": none),
    refused for a node never seen if `fail_on_unknown`."""

    at_ms: int
    kind: str
    properties: tuple[tuple[str, str], ...] = ()
    allocations: str | None = None
    hosts: tuple[str, ...] = ()
    count: int = 0
    resource: Resource | None = None
    rack: str = "/default-rack"
    labels: tuple[tuple[str, bool], ...] = ()
    names: tuple[str, ...] = ()
    mapping: tuple[tuple[str, str], ...] = ()
    fail_on_unknown: bool = False
    where: str = ""
    """The file and entry it came from, for a refusal at run time."""


@dataclass
class Scenario:
    name: str
    description: str
    seed: int
    conf: Configuration
    nodes: list[NodeSpec]
    workload: Workload
    faults: list[Fault] = field(default_factory=list)
    am_heartbeat_ms: int = 1000
    changes: list[Change] = field(default_factory=list)
    path: str = ""
    """The scenario file it was read from ("" when built in code)."""


class _Reader:
    def __init__(self, path: str) -> None:
        self.path = path

    def fail(self, key: str, message: str) -> InputError:
        return InputError(self.path, key, message)

    def table(self, data: dict[str, Any], key: str, allowed: set[str]) -> dict[str, Any]:
        value = data.get(key.rsplit(".", 1)[-1].split("[")[0], {})
        if not isinstance(value, dict):
            raise self.fail(key, "expected a table")
        check_keys(self.path, value, allowed, f"{key}.")
        return value

    def int_(
        self,
        data: dict[str, Any],
        key: str,
        path: str,
        default: int | None = None,
        minimum: int = 0,
        maximum: int = JAVA_LONG_MAX,
    ) -> int:
        if key not in data:
            if default is None:
                raise self.fail(f"{path}{key}", "required key is missing")
            return default
        v = data[key]
        if not isinstance(v, int) or isinstance(v, bool):
            raise self.fail(f"{path}{key}", f"expected an integer, got {v!r}")
        if v < minimum:
            raise self.fail(f"{path}{key}", f"must be >= {minimum}, got {v}")
        if v > maximum:
            raise self.fail(f"{path}{key}", f"must be <= {maximum}, got {shorten(str(v))}")
        return v

    def str_(self, data: dict[str, Any], key: str, path: str, default: str | None = None) -> str:
        if key not in data:
            if default is None:
                raise self.fail(f"{path}{key}", "required key is missing")
            return default
        v = data[key]
        if not isinstance(v, str) or not v:
            raise self.fail(f"{path}{key}", f"expected a non-empty string, got {v!r}")
        return v

    def list_(self, data: dict[str, Any], key: str, path: str) -> list[Any]:
        v = data.get(key, [])
        if not isinstance(v, list):
            raise self.fail(f"{path}{key}", "expected an array")
        return v


def load(path: str | Path, overrides: dict[str, tuple[str, str]] | None = None) -> Scenario:
    """Read and validate a scenario file; InputError names what is wrong.
    `overrides` (property -> value and the flag that set it) go over its
    [config] before the jobs are checked against it.

    Sections are checked in file-independent order (top-level keys, config,
    cluster, jobs and trace, faults), so a file with several mistakes is
    always refused for the same one.
    """
    path = str(path)
    data = _read_toml(path)
    r = _Reader(path)
    check_keys(path, data, TOP_KEYS)
    name = r.str_(data, "name", "", Path(path).stem)
    seed = r.int_(data, "seed", "", 0)
    conf = _config(r, data)
    for prop, (value, source) in (overrides or {}).items():
        conf.set(prop, value, source)
    cluster = r.table(
        data,
        "cluster",
        {"racks", "nodes_per_rack", "node_memory_mb", "node_vcores", "nodes", "am_heartbeat_ms"},
    )
    mem = r.int_(cluster, "node_memory_mb", "cluster.", 8192, 1)
    vcores = r.int_(cluster, "node_vcores", "cluster.", 8, 1, JAVA_INT_MAX)
    nodes = _nodes(r, cluster, mem, vcores)
    am_hb = r.int_(cluster, "am_heartbeat_ms", "cluster.", 1000, 1)
    jobs = _workload_jobs(r, data, conf)
    faults = _faults(r, data, {n.host for n in nodes}, {j.job_id for j in jobs})
    changes = _changes(r, data, nodes, mem, vcores)
    return Scenario(
        name=name,
        description=str(data.get("description", "")),
        seed=seed,
        conf=conf,
        nodes=nodes,
        workload=Workload(jobs),
        faults=faults,
        am_heartbeat_ms=am_hb,
        changes=changes,
        path=str(path),
    )


def is_federation(path: str | Path) -> bool:
    """Whether `path` is a federation file (`emu.federation.description`):
    a TOML file with [[subclusters]]. Any problem reading it is left to the
    reader that reports it."""
    try:
        return "subclusters" in tomllib.loads(Path(path).read_text("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False


def _read_toml(path: str) -> dict[str, Any]:
    """The file's TOML document; InputError says why it cannot be read."""
    # TOML is UTF-8 without a byte-order mark, hence plain utf-8.
    text = read_text(path, "a scenario file", "utf-8")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        where = re.search(r"at line (\d+)", str(e))
        line = int(where.group(1)) if where else None
        raise InputError(path, line, f"not valid TOML: {e}") from None


def _config(r: _Reader, data: dict[str, Any]) -> Configuration:
    """[config]: Hadoop properties, their names checked for typos."""
    conf = Configuration()
    config = r.table(
        data,
        "config",
        set(data.get("config", {})) if isinstance(data.get("config"), dict) else set(),
    )
    return property_table(r, config, "config.", conf)


def property_table(
    r: _Reader, table: dict[str, Any], prefix: str, conf: Configuration
) -> Configuration:
    """A table of Hadoop properties set in `conf`, each name checked for
    typos and each value a string, number or boolean (as XML would hold
    it), its source the file and `prefix` + key; returns `conf`."""
    for k, v in table.items():
        typo = check_name(k)
        if typo is not None:
            raise r.fail(f"{prefix}{k}", typo)
        if isinstance(v, dict | list):
            raise r.fail(
                f"{prefix}{k}", "a Hadoop property value must be a string, number or boolean"
            )
        conf.set(k, str(v).lower() if isinstance(v, bool) else v, f"{r.path}: {prefix}{k}")
    return conf


def _workload_jobs(r: _Reader, data: dict[str, Any], conf: Configuration) -> list[JobSpec]:
    """[[jobs]] and [trace]'s jobs, in submission order; ids unique, queues
    known to a Capacity configuration."""
    keyed: list[tuple[str, JobSpec]] = []
    for j, job in enumerate(r.list_(data, "jobs", "")):
        keyed.extend((f"jobs[{j}].queue", spec) for spec in _jobs(r, job, f"jobs[{j}]."))
    trace = data.get("trace")
    if trace is not None:
        keyed.extend(
            (f"trace.files: job {spec.job_id}", spec)
            for spec in _trace_jobs(r, trace, Path(r.path).parent, conf)
        )
    jobs = [spec for _, spec in keyed]
    ids = [j.job_id for j in jobs]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise r.fail("jobs", f"duplicate job id {dup[0]!r}")
    if not jobs:
        raise r.fail("jobs", "the scenario has no jobs")
    check_capacity_queues(r.path, conf, keyed)
    jobs.sort(key=lambda j: (j.submit_ms, j.job_id))
    return jobs


def _faults(r: _Reader, data: dict[str, Any], hosts: set[str], ids: set[str]) -> list[Fault]:
    """[[faults]], each naming a node of the cluster or a job of the workload."""
    faults = []
    for i, f in enumerate(r.list_(data, "faults", "")):
        p = f"faults[{i}]."
        if not isinstance(f, dict):
            raise r.fail(f"faults[{i}]", "expected a table")
        kind = r.str_(f, "kind", p)
        if kind not in FAULT_KINDS:
            raise r.fail(
                p + "kind", f"unknown fault {kind!r} (expected one of {', '.join(FAULT_KINDS)})"
            )
        key = "job" if kind in JOB_FAULTS else "node"
        target = "" if kind in CLUSTER_FAULTS else r.str_(f, key, p)
        if kind not in CLUSTER_FAULTS and key == "node" and target not in hosts:
            raise r.fail(p + "node", f"no node {target!r} in the cluster")
        if kind not in CLUSTER_FAULTS and key == "job" and target not in ids:
            raise r.fail(p + "job", f"no job {target!r} in the workload")
        faults.append(Fault(r.int_(f, "at_ms", p), kind, target))
    faults.sort(key=lambda f: (f.at_ms, f.kind, f.target))
    return faults


def load_changes(path: str | Path, nodes: list[NodeSpec], node_default: Resource) -> list[Change]:
    """The [[changes]] of a file of their own (`emu sls --changes`), for a
    cluster of `nodes` whose nodes are `node_default` unless they say."""
    path = str(path)
    data = _read_toml(path)
    r = _Reader(path)
    for k in data:
        if k != "changes":
            raise r.fail(k, "unknown key (a changes file holds only [[changes]])")
    return _changes(r, data, nodes, node_default.memory, node_default.vcores)


def _changes(
    r: _Reader, data: dict[str, Any], nodes: list[NodeSpec], mem: int, vcores: int
) -> list[Change]:
    """[[changes]] in time order; hosts added or removed are checked against
    the cluster as the earlier changes leave it."""
    entries = r.list_(data, "changes", "")
    keyed = []
    for i, c in enumerate(entries):
        if not isinstance(c, dict):
            raise r.fail(f"changes[{i}]", "expected a table")
        keyed.append((r.int_(c, "at_ms", f"changes[{i}]."), i, c))
    keyed.sort(key=lambda k: (k[0], k[1]))
    hosts = [n.host for n in nodes]
    out: list[Change] = []
    for at_ms, i, c in keyed:
        p = f"changes[{i}]."
        kind = r.str_(c, "kind", p)
        if kind not in CHANGE_KINDS:
            raise r.fail(
                p + "kind", f"unknown change {kind!r} (expected one of {', '.join(CHANGE_KINDS)})"
            )
        for k in c:
            if k not in _CHANGE_KEYS[kind]:
                allowed = ", ".join(sorted(_CHANGE_KEYS[kind]))
                raise r.fail(p + k, f"unknown key for {kind} (expected one of {allowed})")
        if kind == "refresh_queues":
            out.append(_refresh_change(r, c, p, at_ms))
        elif kind in LABEL_CHANGES:
            out.append(_label_change(r, c, p, at_ms, kind))
        elif kind == "add_nodes":
            count = r.int_(c, "count", p, None, 1, MAX_NODES)
            prefix = r.str_(c, "prefix", p, "added-node-")
            rack = r.str_(c, "rack", p, "/default-rack")
            added = tuple(f"{prefix}{at_ms}-{k + 1}" for k in range(count))
            clash = sorted(set(added) & set(hosts))
            if clash:
                raise r.fail(p + "prefix", f"host {clash[0]!r} is already in the cluster")
            hosts += added
            resource = Resource(
                r.int_(c, "memory_mb", p, mem, 1), r.int_(c, "vcores", p, vcores, 1, JAVA_INT_MAX)
            )
            out.append(
                Change(
                    at_ms,
                    kind,
                    hosts=added,
                    resource=resource,
                    rack=rack if rack.startswith("/") else "/" + rack,
                )
            )
        else:
            named = r.list_(c, "nodes", p)
            if named and "count" in c:
                raise r.fail(p + "count", "give either nodes or count, not both")
            if named:
                for k, h in enumerate(named):
                    if not isinstance(h, str) or h not in hosts:
                        raise r.fail(f"{p}nodes[{k}]", f"no node {h!r} in the cluster")
                removed = tuple(named)
            else:
                count = r.int_(c, "count", p, None, 1, len(hosts))
                removed = tuple(hosts[-count:])
            hosts = [h for h in hosts if h not in removed]
            out.append(Change(at_ms, kind, hosts=removed, count=len(removed)))
    places = [f"{r.path}: changes[{i}]" for _, i, _ in keyed]
    return [replace(c, where=w) for c, w in zip(out, places, strict=True)]


def _label_change(r: _Reader, c: dict[str, Any], p: str, at_ms: int, kind: str) -> Change:
    """A node-label change, its argument in `yarn rmadmin`'s syntax."""
    from emu.rm import node_labels

    key = "nodes" if kind == "replace_labels_on_node" else "labels"
    text = r.str_(c, key, p)
    try:
        if kind == "add_node_labels":
            return Change(at_ms, kind, labels=tuple(node_labels.parse_add(text)))
        if kind == "remove_node_labels":
            return Change(at_ms, kind, names=tuple(node_labels.parse_names(text)))
        mapping = tuple(node_labels.parse_mapping(text))
    except ValueError as e:
        raise r.fail(p + key, str(e)) from None
    fail = c.get("fail_on_unknown", False)
    if not isinstance(fail, bool):
        raise r.fail(p + "fail_on_unknown", f"expected true or false, got {fail!r}")
    return Change(at_ms, kind, mapping=mapping, fail_on_unknown=fail)


def _refresh_change(r: _Reader, c: dict[str, Any], p: str, at_ms: int) -> Change:
    """refresh_queues: properties, or the queues of a capacity-scheduler.xml
    or fair-scheduler.xml (`file`, relative to the scenario's directory)."""
    props = r.table(c, p + "properties", set(c.get("properties") or {}))
    if "file" in c and props:
        raise r.fail(p + "file", "give either file or properties, not both")
    if "file" not in c:
        if not props:
            raise r.fail(p + "properties", "required: the properties to refresh with, or a file")
        return Change(at_ms, "refresh_queues", properties=_property_items(props))
    name = Path(r.str_(c, "file", p))
    path = name if name.is_absolute() else Path(r.path).parent / name
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise r.fail(p + "file", f"cannot read {path}: {e.strerror}") from None
    if "<allocations" in text:
        return Change(at_ms, "refresh_queues", allocations=text)
    from emu.config.hadoop_xml import load_xml

    conf = load_xml(path)
    props = {n: conf.get(n) or "" for n in conf if n.startswith("yarn.scheduler.capacity.")}
    if not props:
        raise r.fail(p + "file", f"{path} holds no yarn.scheduler.capacity.* property")
    return Change(at_ms, "refresh_queues", properties=_property_items(props))


def _property_items(props: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    return tuple(
        (str(k), str(v).lower() if isinstance(v, bool) else str(v)) for k, v in props.items()
    )


def _nodes(r: _Reader, cluster: dict[str, Any], mem: int, vcores: int) -> list[NodeSpec]:
    explicit = r.list_(cluster, "nodes", "cluster.")
    if explicit:
        nodes = []
        for i, n in enumerate(explicit):
            p = f"cluster.nodes[{i}]."
            if not isinstance(n, dict):
                raise r.fail(f"cluster.nodes[{i}]", "expected a table")
            rack = r.str_(n, "rack", p, "/default-rack")
            try:
                labels = parse_labels(r.str_(n, "labels", p, " "))
            except ValueError as e:
                raise r.fail(p + "labels", str(e)) from None
            nodes.append(
                NodeSpec(
                    r.str_(n, "host", p),
                    rack if rack.startswith("/") else "/" + rack,
                    Resource(
                        r.int_(n, "memory_mb", p, mem, 1),
                        r.int_(n, "vcores", p, vcores, 1, JAVA_INT_MAX),
                    ),
                    labels,
                )
            )
        hosts = [n.host for n in nodes]
        if len(set(hosts)) != len(hosts):
            raise r.fail("cluster.nodes", "duplicate host name")
        return nodes
    racks = r.int_(cluster, "racks", "cluster.", 1, 1, JAVA_INT_MAX)
    per_rack = r.int_(cluster, "nodes_per_rack", "cluster.", 4, 1, JAVA_INT_MAX)
    if racks * per_rack > MAX_NODES:
        raise r.fail("cluster", f"{racks * per_rack} nodes: emu runs at most {MAX_NODES}")
    return [
        NodeSpec(f"node{k * per_rack + i + 1}", f"/rack{k + 1}", Resource(mem, vcores))
        for k in range(racks)
        for i in range(per_rack)
    ]


def _jobs(r: _Reader, job: Any, p: str) -> list[JobSpec]:
    if not isinstance(job, dict):
        raise r.fail(p.rstrip("."), "expected a table")
    allowed = {
        "id", "type", "submit_ms", "queue", "user", "priority", "am_memory_mb", "am_vcores",
        "count", "tasks", "end_ms", "label",
    }  # fmt: skip
    check_keys(r.path, job, allowed, p)
    job_id = r.str_(job, "id", p)
    am_type = r.str_(job, "type", p, "mapreduce")
    if am_type not in ("mapreduce", "stream", "generic"):
        raise r.fail(
            p + "type", f"unknown AM type {am_type!r} (expected mapreduce, stream or generic)"
        )
    tasks: list[TaskSpec] = []
    for t, task in enumerate(r.list_(job, "tasks", p)):
        tp = f"{p}tasks[{t}]."
        if not isinstance(task, dict):
            raise r.fail(tp.rstrip("."), "expected a table")
        kind = r.str_(task, "type", tp, "map")
        spec = TaskSpec(
            task_type=kind,
            priority=r.int_(task, "priority", tp, DEFAULT_PRIORITY.get(kind, 20)),
            duration_ms=r.int_(task, "duration_ms", tp, minimum=1),
            resource=Resource(
                r.int_(task, "memory_mb", tp, 1024, 1),
                r.int_(task, "vcores", tp, 1, 1, JAVA_INT_MAX),
            ),
            hosts=tuple(str(h) for h in r.list_(task, "hosts", tp)),
            request_delay_ms=r.int_(task, "request_delay_ms", tp, 0),
        )
        count = r.int_(task, "count", tp, 1, 1, JAVA_INT_MAX)
        if len(tasks) + count > MAX_TASKS:
            raise r.fail(tp + "count", f"{count} tasks: a job holds at most {MAX_TASKS}")
        tasks.extend([spec] * count)
    if not tasks:
        raise r.fail(p + "tasks", "a job needs at least one task")
    count = r.int_(job, "count", p, 1, 1, JAVA_INT_MAX)
    if count * len(tasks) > MAX_TASKS:
        raise r.fail(p + "count", f"{count} jobs of {len(tasks)} tasks: more than {MAX_TASKS}")
    submit = r.int_(job, "submit_ms", p, 0)
    end_ms = r.int_(job, "end_ms", p, -1) if "end_ms" in job else None
    if end_ms is not None and end_ms <= submit:
        raise r.fail(p + "end_ms", f"{end_ms} is not after submit_ms {submit}")
    base = JobSpec(
        job_id=job_id,
        am_type=am_type,
        submit_ms=submit,
        queue=r.str_(job, "queue", p, "default"),
        user=r.str_(job, "user", p, "default"),
        am_resource=Resource(
            r.int_(job, "am_memory_mb", p, 1024, 1), r.int_(job, "am_vcores", p, 1, 1, JAVA_INT_MAX)
        ),
        tasks=tuple(tasks),
        end_ms=end_ms,
        priority=r.int_(job, "priority", p, 0),
        params={"label_expression": r.str_(job, "label", p)} if "label" in job else {},
    )
    if count == 1:
        return [base]
    return [replace(base, job_id=f"{job_id}_{i + 1}") for i in range(count)]


def _trace_jobs(r: _Reader, trace: Any, base: Path, conf: Configuration) -> list[JobSpec]:
    if not isinstance(trace, dict):
        raise r.fail("trace", "expected a table with type and files")
    from emu.rm.settings import extra_resource_types
    from emu.scenario import read_trace

    kind = r.str_(trace, "type", "trace.")
    files = [str(base / f) for f in r.list_(trace, "files", "trace.")]
    if not files:
        raise r.fail("trace.files", "name at least one trace file")
    workload = read_trace(
        kind,
        files,
        container_default=Resource(1024, 1),
        am_default=Resource(1024, 1),
        resource_types=extra_resource_types(conf),
    )
    return list(workload.jobs)

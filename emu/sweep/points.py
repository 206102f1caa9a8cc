"""The grid's points and the self-contained task each one runs.

A task is the `emu` arguments and the bytes of every file they name, by a
path relative to the directory the task runs in (`trace/`, `conf/`,
`nodes.json`, `scenario.toml`), so a worker on another host needs only emu
installed. A cluster size rewrites the topology: the trace's nodes file
(`emu sls --nodes`), or the scenario's [cluster] (`emu run`), its nodes
cycled (the base nodes first, under their own names, then copies named
`HOST-2`, `HOST-3`, ... on the same racks).
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from emu.errors import InputError
from emu.sweep.spec import Config, Spec, Trace

SCHEDULER_CLASS = "yarn.resourcemanager.scheduler.class"
ALLOCATION_FILE = "yarn.scheduler.fair.allocation.file"
DEFAULT_ALLOCATION_FILE = "fair-scheduler.xml"
OUT = "out"


@dataclass(frozen=True)
class Point:
    """One replay of the grid."""

    id: str
    trace: str
    config: str
    scheduler: str
    impl: str
    nodes: int | None
    """The cluster's size; None when the trace names its own nodes."""
    scale: float | None
    seed: int

    def params(self) -> dict[str, Any]:
        """The point's columns of the results table."""
        return {
            "point": self.id,
            "trace": self.trace,
            "config": self.config,
            "scheduler": self.scheduler,
            "impl": self.impl,
            "nodes": self.nodes,
            "scale": self.scale,
            "seed": self.seed,
        }


@dataclass(frozen=True)
class Task:
    """What a worker runs: `emu ARGV` in a directory holding `inputs`;
    the outputs land in its `out/`."""

    point: Point
    argv: list[str]
    inputs: dict[str, bytes]


def expand(spec: Spec) -> list[Task]:
    """Every point of the grid, traces x configs x sizes x seeds, in that
    nesting order."""
    tasks = []
    files = _Files()
    for trace in spec.traces:
        for size_nodes, size_scale in spec.sizes():
            topology = _topology(trace, size_nodes, size_scale)
            for config in spec.configs:
                for seed in spec.seeds:
                    tasks.append(_task(trace, config, topology, size_scale, seed, files))
    return tasks


@dataclass(frozen=True)
class _Topology:
    nodes: int | None
    files: dict[str, bytes]
    """nodes.json or scenario.toml and the files a scenario names."""


class _Files:
    """Each input file read once: the points share its bytes."""

    def __init__(self) -> None:
        self.data: dict[Path, bytes] = {}

    def read(self, path: Path) -> bytes:
        if path not in self.data:
            self.data[path] = path.read_bytes()
        return self.data[path]


def _task(
    trace: Trace, config: Config, topo: _Topology, scale: float | None, seed: int, files: _Files
) -> Task:
    scheduler = config.scheduler or dict(config.defines).get(SCHEDULER_CLASS, "")
    size = "" if topo.nodes is None else f"_n{topo.nodes}"
    pid = f"{trace.name}_{config.name}{size}_s{seed}"
    point = Point(pid, trace.name, config.name, scheduler, config.impl, topo.nodes, scale, seed)
    inputs = dict(topo.files)
    if trace.type == "SCENARIO":
        argv = ["run", "scenario.toml", "--output-dir", OUT, "--seed", str(seed)]
    else:
        names = _trace_files(trace, inputs, files)
        argv = [
            "sls", f"--tracetype={trace.type}", f"--tracelocation={','.join(names)}",
            "--output-dir", OUT, "--seed", str(seed),
        ]  # fmt: skip
        if "nodes.json" in inputs:
            argv += ["--nodes", "nodes.json"]
        if config.conf_dir is not None:
            for f in sorted(config.conf_dir.iterdir()):
                if f.is_file():
                    inputs[f"conf/{f.name}"] = files.read(f)
            argv += ["--conf-dir", "conf"]
    if config.scheduler:
        argv += ["-D", f"{SCHEDULER_CLASS}={config.scheduler}"]
    for prop, value in config.defines:
        argv += ["-D", f"{prop}={value}"]
    argv += ["--scheduler-impl", config.impl, "--progress", "never"]
    return Task(point, argv, inputs)


def _trace_files(trace: Trace, inputs: dict[str, bytes], files: _Files) -> list[str]:
    names = []
    for k, f in enumerate(trace.files):
        name = f"trace/{k}-{f.name}"
        inputs[name] = files.read(f)
        names.append(name)
    return names


def _topology(trace: Trace, nodes: int | None, scale: float | None) -> _Topology:
    if trace.type == "SCENARIO":
        return _scenario(trace.files[0], nodes, scale)
    if trace.nodes_file is None:
        return _Topology(None, {})
    racks = _read_nodes(trace.nodes_file)
    base = sum(len(ns) for _, ns in racks)
    count = _count(base, nodes, scale)
    if nodes is None and scale is None:
        return _Topology(base, {"nodes.json": trace.nodes_file.read_bytes()})
    flat = [(rack, n) for rack, ns in racks for n in ns]
    grouped: dict[Any, list[dict[str, Any]]] = {}
    for i in range(count):
        rack, node = flat[i % len(flat)]
        copy = dict(node)
        if i >= len(flat):
            copy["node"] = f"{node.get('node')}-{i // len(flat) + 1}"
        grouped.setdefault(rack, []).append(copy)
    text = "".join(
        json.dumps({**({"rack": r} if r is not None else {}), "nodes": ns}) + "\n"
        for r, ns in grouped.items()
    )
    return _Topology(count, {"nodes.json": text.encode()})


def _count(base: int, nodes: int | None, scale: float | None) -> int:
    if nodes is not None:
        return nodes
    if scale is not None:
        return max(1, round(base * scale))
    return base


def _read_nodes(path: Path) -> list[tuple[Any, list[dict[str, Any]]]]:
    """The racks of an SLS nodes file (concatenated JSON objects)."""
    from emu.scenario.sls import iter_json_objects

    racks = []
    for line, obj in iter_json_objects(str(path)):
        nodes = obj.get("nodes")
        if not isinstance(nodes, list) or not all(isinstance(n, dict) for n in nodes):
            raise InputError(str(path), line, "expected a rack object with a nodes array")
        racks.append((obj.get("rack"), nodes))
    if not any(ns for _, ns in racks):
        raise InputError(str(path), None, "names no node")
    return racks


def _scenario(path: Path, nodes: int | None, scale: float | None) -> _Topology:
    """The scenario resized, with the files it names shipped beside it."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise InputError(str(path), None, f"cannot read the scenario: {e}") from None
    files: dict[str, bytes] = {}
    base_dir = path.parent
    trace = data.get("trace")
    if isinstance(trace, dict) and isinstance(trace.get("files"), list):
        shipped = []
        for k, f in enumerate(trace["files"]):
            src = base_dir / str(f)
            name = f"trace/{k}-{src.name}"
            files[name] = _read(src, path, "trace.files")
            shipped.append(name)
        trace["files"] = shipped
    config = data.get("config")
    if isinstance(config, dict):
        alloc = config.get(ALLOCATION_FILE)
        if isinstance(alloc, str) and alloc:
            src = Path(alloc) if Path(alloc).is_absolute() else base_dir / alloc
            files[f"alloc/{src.name}"] = _read(src, path, f"config.{ALLOCATION_FILE}")
            config[ALLOCATION_FILE] = f"alloc/{src.name}"
        elif (base_dir / DEFAULT_ALLOCATION_FILE).is_file():
            files[DEFAULT_ALLOCATION_FILE] = (base_dir / DEFAULT_ALLOCATION_FILE).read_bytes()
    if "subclusters" in data:
        return _federation(path, data, files, nodes, scale)
    cluster = data.setdefault("cluster", {})
    if not isinstance(cluster, dict):
        raise InputError(str(path), "cluster", "expected a table")
    explicit = cluster.get("nodes")
    if isinstance(explicit, list) and explicit:
        base = len(explicit)
        count = _count(base, nodes, scale)
        cluster["nodes"] = [
            dict(explicit[i % base])
            | ({"host": f"{explicit[i % base].get('host')}-{i // base + 1}"} if i >= base else {})
            for i in range(count)
        ]
    else:
        racks = int(cluster.get("racks", 1))
        per_rack = int(cluster.get("nodes_per_rack", 4))
        count = _count(racks * per_rack, nodes, scale)
        if count != racks * per_rack:
            if count % racks == 0:
                cluster["nodes_per_rack"] = count // racks
            else:  # the same host names as [cluster] gives them, racks dealt in turn
                mem, vcores = cluster.get("node_memory_mb"), cluster.get("node_vcores")
                cluster.pop("racks", None)
                cluster.pop("nodes_per_rack", None)
                cluster["nodes"] = [
                    {"host": f"node{i + 1}", "rack": f"/rack{i % racks + 1}"}
                    | ({"memory_mb": mem} if mem is not None else {})
                    | ({"vcores": vcores} if vcores is not None else {})
                    for i in range(count)
                ]
    files["scenario.toml"] = dump_toml(data).encode()
    return _Topology(count, files)


def _federation(
    path: Path,
    data: dict[str, Any],
    files: dict[str, bytes],
    nodes: int | None,
    scale: float | None,
) -> _Topology:
    """A federation file (`emu.federation.description`) with the node files
    and configuration directories its sub-clusters name shipped beside it.
    Its sub-clusters are its own: a sweep over it sweeps properties
    (policies, weights, schedulers), not cluster sizes."""
    if nodes is not None or scale is not None:
        raise InputError(
            str(path),
            "subclusters",
            "a federation file keeps its sub-clusters: sweep it without nodes or scale",
        )
    subclusters = data["subclusters"]
    if not isinstance(subclusters, list):
        raise InputError(str(path), "subclusters", "expected an array of tables")
    total = 0
    for i, sc in enumerate(subclusters):
        if not isinstance(sc, dict):
            raise InputError(str(path), f"subclusters[{i}]", "expected a table")
        if isinstance(sc.get("nodes_file"), str):
            src = path.parent / sc["nodes_file"]
            files[f"sc{i}/{src.name}"] = _read(src, path, f"subclusters[{i}].nodes_file")
            sc["nodes_file"] = f"sc{i}/{src.name}"
        if isinstance(sc.get("conf_dir"), str):
            src = path.parent / sc["conf_dir"]
            if not src.is_dir():
                raise InputError(
                    str(path), f"subclusters[{i}].conf_dir", f"no such directory: {src}"
                )
            for f in sorted(src.iterdir()):
                if f.is_file():
                    files[f"sc{i}/conf/{f.name}"] = f.read_bytes()
            sc["conf_dir"] = f"sc{i}/conf"
        if isinstance(sc.get("nodes"), list):
            total += len(sc["nodes"])
        elif "nodes_file" not in sc:
            total += int(sc.get("racks", 1)) * int(sc.get("nodes_per_rack", 4))
    files["scenario.toml"] = dump_toml(data).encode()
    return _Topology(total or None, files)


def _read(src: Path, scenario: Path, key: str) -> bytes:
    try:
        return src.read_bytes()
    except OSError as e:
        raise InputError(str(scenario), key, f"cannot read {src}: {e.strerror or e}") from None


_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(k: str) -> str:
    return k if _BARE.match(k) else json.dumps(k)


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_key(k)} = {_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(f"cannot write {type(v).__name__} as TOML")


def _is_table_array(v: Any) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(x, dict) for x in v)


def dump_toml(data: dict[str, Any]) -> str:
    """TOML for what `tomllib` reads from a scenario (strings, numbers,
    booleans, arrays, tables and arrays of tables)."""
    lines: list[str] = []
    _table(lines, [], data)
    return "\n".join(lines) + "\n"


def _table(lines: list[str], path: list[str], d: dict[str, Any]) -> None:
    for k, v in d.items():
        if not isinstance(v, dict) and not _is_table_array(v):
            lines.append(f"{_key(k)} = {_value(v)}")
    for k, v in d.items():
        name = ".".join(_key(p) for p in [*path, k])
        if isinstance(v, dict):
            lines.append(f"[{name}]")
            _table(lines, [*path, k], v)
        elif _is_table_array(v):
            for item in v:
                lines.append(f"[[{name}]]")
                _table(lines, [*path, k], item)

"""The sweep spec: a TOML file naming the grid, read with errors that name
the file and the key.

    [sweep]
    name = "three-schedulers"        # default: the file's stem
    seeds = [1, 2]                   # default [0]
    nodes = [2, 4, 8]                # cluster sizes in nodes; or scale = [0.5, 1, 2]
    objective = "turnaround_p90_s"   # the column `emu report` ranks by
    goal = "min"                     # or "max"
    timeout_s = 3600                 # a point's wall-time limit (default one hour)

    [[trace]]                        # one or more
    name = "prod-dev"
    type = "SLS"                     # SLS, RUMEN or SYNTH: `emu sls`
    files = ["trace.json"]
    nodes_file = "nodes.json"        # the topology that `nodes`/`scale` resize
    # or: scenario = "../three-jobs.toml"   (emu's own format: `emu run`)

    [[config]]                       # one or more
    name = "fair"
    scheduler = "fair"               # yarn.resourcemanager.scheduler.class
    conf_dir = "conf"                # `emu sls` only
    impl = "emu"                     # or "hadoop": Hadoop's scheduler class
    defines = { "yarn.scheduler.minimum-allocation-mb" = 1024 }

    [target]                         # optional: the sizing question
    metric = "turnaround_p90_s"
    max = 300                        # or min = ...
    per_queue = true                 # every queue's value must meet it

Relative paths resolve against the spec file's directory.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from emu.errors import InputError, check_keys
from emu.sweep.figures import METRICS

TRACE_TYPES = ("SLS", "RUMEN", "SYNTH")
IMPLS = ("emu", "hadoop")
GOALS = ("min", "max")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")
_SWEEP_KEYS = {"name", "seeds", "nodes", "scale", "objective", "goal", "timeout_s"}
_TRACE_KEYS = {"name", "type", "files", "nodes_file", "scenario"}
_CONFIG_KEYS = {"name", "scheduler", "conf_dir", "impl", "defines"}
_TARGET_KEYS = {"metric", "max", "min", "per_queue", "queue"}


@dataclass(frozen=True)
class Trace:
    name: str
    type: str
    """SLS, RUMEN or SYNTH (`emu sls`), or SCENARIO (`emu run`)."""
    files: tuple[Path, ...]
    nodes_file: Path | None = None


@dataclass(frozen=True)
class Config:
    name: str
    scheduler: str | None = None
    conf_dir: Path | None = None
    impl: str = "emu"
    defines: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Target:
    metric: str
    bound: float
    upper: bool
    """True: the metric must be at most `bound`; False: at least."""
    per_queue: bool = False
    queue: str | None = None

    def describe(self) -> str:
        what = self.metric
        if self.queue:
            what = f"{self.queue}:{what}"
        elif self.per_queue:
            what = f"every queue's {what}"
        return f"{what} {'<=' if self.upper else '>='} {self.bound:g}"


@dataclass(frozen=True)
class Spec:
    path: Path
    name: str
    traces: tuple[Trace, ...]
    configs: tuple[Config, ...]
    seeds: tuple[int, ...]
    nodes: tuple[int, ...] = ()
    scale: tuple[float, ...] = ()
    objective: str = "makespan_s"
    goal: str = "min"
    target: Target | None = None
    timeout_s: float = 3600.0
    extra: dict[str, Any] = field(default_factory=dict)

    def sizes(self) -> list[tuple[int | None, float | None]]:
        """The cluster sizes: (nodes, None), (None, scale), or one (None,
        None) when the spec keeps every trace's own cluster."""
        if self.nodes:
            return [(n, None) for n in self.nodes]
        if self.scale:
            return [(None, s) for s in self.scale]
        return [(None, None)]


class _Reader:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.base = path.parent

    def fail(self, key: str, message: str) -> InputError:
        return InputError(str(self.path), key, message)

    def table(self, data: Any, key: str, allowed: set[str]) -> dict[str, Any]:
        if not isinstance(data, dict):
            raise self.fail(key, "expected a table")
        check_keys(str(self.path), data, allowed, f"{key}.")
        return data

    def name(self, data: dict[str, Any], key: str, default: str | None = None) -> str:
        v = data.get("name", default)
        if not isinstance(v, str) or not _NAME.match(v):
            raise self.fail(
                f"{key}.name", "expected a name of letters, digits and . _ + - (it names files)"
            )
        return v

    def file(self, value: Any, key: str, directory: bool = False) -> Path:
        if not isinstance(value, str) or not value:
            raise self.fail(key, "expected a path")
        p = Path(value)
        p = p if p.is_absolute() else self.base / p
        if directory and not p.is_dir():
            raise self.fail(key, f"no such directory: {p}")
        if not directory and not p.is_file():
            raise self.fail(key, f"no such file: {p}")
        return p

    def numbers(
        self, data: dict[str, Any], key: str, kind: type, positive: bool
    ) -> tuple[Any, ...]:
        v = data.get(key)
        if v is None:
            return ()
        if not isinstance(v, list) or not v:
            raise self.fail(f"sweep.{key}", "expected a non-empty array")
        out = []
        for i, x in enumerate(v):
            ok = isinstance(x, kind) or (kind is float and isinstance(x, int))
            if not ok or isinstance(x, bool) or (positive and not x > 0):
                what = "a positive " + ("integer" if kind is int else "number")
                raise self.fail(f"sweep.{key}[{i}]", f"expected {what}, got {x!r}")
            out.append(kind(x))
        if len(set(out)) != len(out):
            raise self.fail(f"sweep.{key}", "a value is listed twice")
        return tuple(out)


def _metric_ok(name: str) -> bool:
    return name.rpartition(":")[2] in METRICS


def load(path: str | Path) -> Spec:
    """Read and check a sweep spec; InputError names the file and the key."""
    p = Path(path)
    r = _Reader(p)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except OSError as e:
        raise InputError(str(p), None, f"cannot read the sweep spec: {e.strerror or e}") from None
    except tomllib.TOMLDecodeError as e:
        raise InputError(str(p), None, f"not valid TOML: {e}") from None
    r.table(data, "", {"sweep", "trace", "config", "target"})
    sweep = r.table(data.get("sweep", {}), "sweep", _SWEEP_KEYS)
    name = r.name(sweep, "sweep", p.stem)
    seeds = r.numbers(sweep, "seeds", int, False) or (0,)
    nodes = r.numbers(sweep, "nodes", int, True)
    scale = r.numbers(sweep, "scale", float, True)
    if nodes and scale:
        raise r.fail("sweep.scale", "give either nodes or scale, not both")
    objective = sweep.get("objective", "makespan_s")
    if not isinstance(objective, str) or not _metric_ok(objective):
        raise r.fail("sweep.objective", f"expected one of {', '.join(METRICS)} (or QUEUE:METRIC)")
    goal = sweep.get("goal", "min")
    if goal not in GOALS:
        raise r.fail("sweep.goal", "expected min or max")
    timeout = sweep.get("timeout_s", 3600.0)
    if not isinstance(timeout, int | float) or isinstance(timeout, bool) or not timeout > 0:
        raise r.fail("sweep.timeout_s", "expected a positive number of seconds")

    traces = _traces(r, data.get("trace"), bool(nodes or scale))
    configs = _configs(r, data.get("config"), traces)
    target = _target(r, data["target"]) if "target" in data else None
    return Spec(
        path=p,
        name=name,
        traces=traces,
        configs=configs,
        seeds=seeds,
        nodes=nodes,
        scale=scale,
        objective=objective,
        goal=goal,
        target=target,
        timeout_s=float(timeout),
    )


def _entries(r: _Reader, raw: Any, key: str) -> list[Any]:
    if raw is None:
        raise r.fail(key, f"missing: give at least one [[{key}]]")
    if not isinstance(raw, list) or not raw:
        raise r.fail(key, f"expected one or more [[{key}]] tables")
    return raw


def _traces(r: _Reader, raw: Any, resized: bool) -> tuple[Trace, ...]:
    out: list[Trace] = []
    for i, t in enumerate(_entries(r, raw, "trace")):
        key = f"trace[{i}]"
        t = r.table(t, key, _TRACE_KEYS)
        if "scenario" in t:
            for k in ("type", "files", "nodes_file"):
                if k in t:
                    raise r.fail(f"{key}.{k}", "a scenario holds its own workload and cluster")
            scenario = r.file(t["scenario"], f"{key}.scenario")
            out.append(Trace(r.name(t, key, scenario.stem), "SCENARIO", (scenario,)))
            continue
        kind = t.get("type")
        if not isinstance(kind, str) or kind.upper() not in TRACE_TYPES:
            raise r.fail(
                f"{key}.type", f"expected one of {', '.join(TRACE_TYPES)} (or give scenario)"
            )
        files = t.get("files")
        if not isinstance(files, list) or not files:
            raise r.fail(f"{key}.files", "expected a non-empty array of trace files")
        paths = tuple(r.file(f, f"{key}.files[{k}]") for k, f in enumerate(files))
        nodes = r.file(t["nodes_file"], f"{key}.nodes_file") if "nodes_file" in t else None
        if resized and nodes is None:
            raise r.fail(
                f"{key}.nodes_file", "sweep.nodes/scale resize a nodes file: name the trace's"
            )
        out.append(Trace(r.name(t, key), kind.upper(), paths, nodes))
    names = [t.name for t in out]
    if len(set(names)) != len(names):
        raise r.fail("trace", "two traces have the same name")
    return tuple(out)


def _configs(r: _Reader, raw: Any, traces: tuple[Trace, ...]) -> tuple[Config, ...]:
    out: list[Config] = []
    for i, c in enumerate(_entries(r, raw, "config")):
        key = f"config[{i}]"
        c = r.table(c, key, _CONFIG_KEYS)
        scheduler = c.get("scheduler")
        if scheduler is not None and (not isinstance(scheduler, str) or not scheduler):
            raise r.fail(f"{key}.scheduler", "expected a scheduler name or Hadoop class")
        conf_dir = None
        if "conf_dir" in c:
            if any(t.type == "SCENARIO" for t in traces):
                raise r.fail(
                    f"{key}.conf_dir", "a scenario trace takes its configuration from [config]"
                )
            conf_dir = r.file(c["conf_dir"], f"{key}.conf_dir", directory=True)
        impl = c.get("impl", "emu")
        if impl not in IMPLS:
            raise r.fail(f"{key}.impl", f"expected one of {', '.join(IMPLS)}")
        defines = c.get("defines", {})
        if not isinstance(defines, dict):
            raise r.fail(f"{key}.defines", "expected a table of property = value")
        pairs = []
        for prop, value in defines.items():
            if isinstance(value, dict | list):
                raise r.fail(f"{key}.defines.{prop}", "expected a string, number or boolean")
            pairs.append((prop, str(value).lower() if isinstance(value, bool) else str(value)))
        name = r.name(c, key, scheduler if isinstance(scheduler, str) else None)
        out.append(Config(name, scheduler, conf_dir, impl, tuple(pairs)))
    names = [c.name for c in out]
    if len(set(names)) != len(names):
        raise r.fail("config", "two configs have the same name")
    return tuple(out)


def _target(r: _Reader, raw: Any) -> Target:
    t = r.table(raw, "target", _TARGET_KEYS)
    metric = t.get("metric")
    if not isinstance(metric, str) or metric not in METRICS:
        raise r.fail("target.metric", f"expected one of {', '.join(METRICS)}")
    if ("max" in t) == ("min" in t):
        raise r.fail("target", "give either max or min")
    bound = t.get("max", t.get("min"))
    if not isinstance(bound, int | float) or isinstance(bound, bool):
        raise r.fail("target.max" if "max" in t else "target.min", "expected a number")
    per_queue = t.get("per_queue", False)
    if not isinstance(per_queue, bool):
        raise r.fail("target.per_queue", "expected true or false")
    queue = t.get("queue")
    if queue is not None and (not isinstance(queue, str) or per_queue):
        raise r.fail("target.queue", "expected one queue name (and per_queue unset)")
    return Target(metric, float(bound), "max" in t, per_queue, queue)

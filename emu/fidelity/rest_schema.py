"""emu's REST API against a real YARN ResourceManager's, field by field.

Clients written for YARN (dashboards, yarn-api-client, autoscalers) read
fields by name and type: a field emu leaves out, or gives as a string where
YARN gives a number, breaks them even when every value is plausible. This
module asks a real RM and emu the same questions, in the same situation (one
node, one app RUNNING and holding a container, under the FIFO, Capacity or
Fair scheduler), and compares the *schemas* of the answers: for every field
path YARN returns (through objects and the first element of arrays), emu
must return the same name with the same JSON type. Values may differ, and
emu may give fields YARN does not.

The real RM is Hadoop's MiniYARNCluster (`emu/fidelity/minicluster/pom.xml`,
the same pinned release as the scheduler backend), driven by
`emu/fidelity/java/emu/fidelity/RestProbe.java` in a JVM of its own. Starting it
takes tens of seconds, so its answers are cached per Hadoop version and
scheduler (and probe source) in emu's cache; emu's side is a short replay on
the virtual clock whose mid-run snapshot is served by emu's own web server.

`python -m emu.fidelity.rest_schema [--refresh] [fifo capacity fair]` prints
the Markdown section for docs/fidelity.md and exits 1 if a field is missing
or of another type; --refresh asks the real RM again instead of the cache.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from emu.errors import InputError
from emu.hadoop import classpath as hcp
from emu.rm.settings import JAVA_CLASSES

SCHEDULER_CLASSES = JAVA_CLASSES
PATHS = (
    "/ws/v1/cluster/info",
    "/ws/v1/cluster/metrics",
    "/ws/v1/cluster/scheduler",
    "/ws/v1/cluster/nodes",
    "/ws/v1/cluster/apps",
    "/ws/v1/cluster/apps/{id}",
    "/ws/v1/cluster/apps/{id}/appattempts",
)
"""What RestProbe.java fetches, `{id}` standing for the running app's id."""

HERE = Path(__file__).resolve().parent
MINICLUSTER_POM = HERE / "minicluster" / "pom.xml"
PROBE_SOURCE = HERE / "java" / "emu" / "fidelity" / "RestProbe.java"
PROBE_TIMEOUT_S = 300
"""The whole probe JVM's limit: about 30 s for the first cluster, 15 s for
each next one on an idle machine; generous for a loaded one."""
JAVA_OPENS = ("--add-opens=java.base/java.lang=ALL-UNNAMED",)
"""Guice 4's class generation (the RM's web app) needs java.lang open on Java 17."""

NODE_MB, NODE_VCORES = 4096, 4
"""The one node of both clusters (RestProbe.java sets the same)."""
EMU_SCENARIO = """\
name = "rest-schema"
description = "One node, one job holding a container: what the REST schema check reads"
seed = 1

[cluster]
racks = 1
nodes_per_rack = 1
node_memory_mb = {mb}
node_vcores = {vcores}

[config]
"yarn.resourcemanager.scheduler.class" = "{cls}"
"yarn.scheduler.minimum-allocation-mb" = 128

[[jobs]]
id = "rest_schema"
type = "generic"
submit_ms = 0
user = "emu"
am_memory_mb = 512
  [[jobs.tasks]]
  type = "task"
  count = 1
  duration_ms = 60000
  memory_mb = 256
"""


# --- schemas -------------------------------------------------------------------------------
def json_type(value: Any) -> str:
    """The JSON type name: number (int or float alike), string, bool, object,
    array or null."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    return "null"


def schema(value: Any, prefix: str = "") -> dict[str, str]:
    """Every field path in `value` with its JSON type, through objects and the
    first element of arrays (written `name[]`), in document order."""
    out: dict[str, str] = {}
    if isinstance(value, dict):
        for k, v in value.items():
            path = f"{prefix}.{k}" if prefix else k
            out[path] = json_type(v)
            out.update(schema(v, path))
    elif isinstance(value, list) and value:
        out.update(schema(value[0], prefix + "[]"))
    return out


@dataclass(frozen=True)
class Mismatch:
    field: str
    yarn: str
    emu: str


@dataclass
class PathResult:
    """One REST path: what YARN gave that emu did not, or gave as another type."""

    path: str
    yarn_fields: int = 0
    missing: list[str] = field(default_factory=list)
    mismatched: list[Mismatch] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    """Fields emu gives and YARN did not (allowed)."""

    @property
    def ok(self) -> bool:
        return not self.missing and not self.mismatched


def _under(path: str, parents: Iterable[str]) -> bool:
    return any(path.startswith(p + ".") or path.startswith(p + "[]") for p in parents)


def compare(path: str, yarn: Any, emu: Any) -> PathResult:
    """emu's answer for `path` against YARN's, schema only.

    A missing (or extra) object or array is reported once, not with each of
    its fields; a YARN null says nothing of the type, so any type matches it.
    """
    want, got = schema(yarn), schema(emu)
    result = PathResult(path, len(want))
    for name, kind in want.items():
        if _under(name, result.missing) or _under(name, (m.field for m in result.mismatched)):
            continue
        if name not in got:
            result.missing.append(name)
        elif kind != got[name] and kind != "null":
            result.mismatched.append(Mismatch(name, kind, got[name]))
    for name in got:
        if name not in want and not _under(name, result.extra):
            result.extra.append(name)
    return result


@dataclass
class SchedulerResult:
    scheduler: str
    paths: list[PathResult]

    @property
    def ok(self) -> bool:
        return all(p.ok for p in self.paths)


def compare_all(scheduler: str, yarn: dict[str, Any], emu: dict[str, Any]) -> SchedulerResult:
    """Every probed path of one scheduler; a path emu did not answer counts
    as all of YARN's top-level fields missing."""
    return SchedulerResult(
        scheduler, [compare(p, yarn[p], emu.get(p, {})) for p in PATHS if p in yarn]
    )


# --- the real ResourceManager ------------------------------------------------------------
def minicluster_classpath(fetch: bool = True) -> hcp.Classpath:
    """MiniYARNCluster's classpath, resolved by Maven once (downloading on
    first use) and kept in emu's cache, beside the scheduler backend's."""
    try:
        entries = hcp.cached_classpath(MINICLUSTER_POM, "minicluster-classpath", fetch)
    except hcp.JavaBuildError as e:
        why = (
            "needs Maven to fetch Hadoop's MiniYARNCluster"
            if e.no_tool
            else (f"Maven could not fetch Hadoop {hcp.HADOOP_VERSION}'s MiniYARNCluster ({e})")
        )
        raise InputError("the REST schema check", None, why) from None
    if entries is None:
        raise InputError("MiniYARNCluster", None, "not fetched yet")
    return hcp.Classpath(
        tuple(entries), f"Apache Hadoop {hcp.HADOOP_VERSION} MiniYARNCluster from Maven Central"
    )


def probe_classes(cp: hcp.Classpath) -> Path:
    """RestProbe.java compiled against `cp`, once per source and classpath."""
    key = hashlib.sha256(PROBE_SOURCE.read_bytes() + cp.text().encode()).hexdigest()[:16]
    try:
        return hcp.javac([PROBE_SOURCE], cp.text(), hcp.cache_dir() / "restprobe" / key)
    except hcp.JavaBuildError as e:
        if e.no_tool:
            raise InputError("the REST schema check", None, str(e)) from None
        raise InputError(cp.source, None, f"RestProbe.java does not compile: {e}") from None


def _probe_key() -> str:
    return hashlib.sha256(PROBE_SOURCE.read_bytes()).hexdigest()[:12]


def _cached_file(scheduler: str) -> Path:
    return hcp.cache_dir() / "rest" / f"{hcp.HADOOP_VERSION}-{scheduler}.json"


def _cached(scheduler: str) -> dict[str, Any] | None:
    f = _cached_file(scheduler)
    try:
        data = json.loads(f.read_text())
    except (OSError, ValueError):
        return None
    if data.get("hadoop") != hcp.HADOOP_VERSION or data.get("probe") != _probe_key():
        return None
    responses: dict[str, Any] = data["responses"]
    return responses


def yarn_responses(schedulers: Sequence[str], refresh: bool = False) -> dict[str, dict[str, Any]]:
    """Per scheduler, what a real RM answered on each of PATHS: from the cache,
    or from one probe JVM for all the schedulers not cached yet."""
    out: dict[str, dict[str, Any]] = {}
    todo = []
    for s in schedulers:
        hit = None if refresh else _cached(s)
        if hit is None:
            todo.append(s)
        else:
            out[s] = hit
    if not todo:
        return out
    cp = minicluster_classpath()
    classes = probe_classes(cp)
    java = hcp.java_home_tool("java")
    if java is None:
        raise InputError("the REST schema check", None, "needs Java: install OpenJDK 17")
    level = os.environ.get("EMU_HADOOP_LOG", "OFF").upper()
    with tempfile.TemporaryDirectory(prefix="emu-restprobe-") as work:
        # MiniYARNCluster keeps its directories under ./target.
        try:
            done = subprocess.run(
                [java, *JAVA_OPENS, f"-Dlog4j.configuration={hcp.LOG4J.as_uri()}",
                 f"-Demu.hadoop.log.level={level}", "-cp", f"{classes}{os.pathsep}{cp.text()}",
                 "emu.fidelity.RestProbe", str(PROBE_TIMEOUT_S),
                 *(SCHEDULER_CLASSES[s] for s in todo)],
                cwd=work, capture_output=True, text=True, check=False,
                timeout=PROBE_TIMEOUT_S + 30,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            raise InputError("RestProbe", None, "did not finish in time") from None
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
    if done.returncode != 0 or len(lines) != len(todo):
        said = [ln for ln in done.stderr.splitlines() if ln.startswith("RestProbe:")]
        why = said[-1] if said else (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise InputError("RestProbe", None, f"exit {done.returncode}: {why[:500]}")
    for s, line in zip(todo, lines, strict=True):
        responses = json.loads(line)
        f = _cached_file(s)
        f.parent.mkdir(parents=True, exist_ok=True)
        record = {"hadoop": hcp.HADOOP_VERSION, "probe": _probe_key(), "responses": responses}
        f.write_text(json.dumps(record, indent=1) + "\n")
        out[s] = responses
    return out


# --- emu -----------------------------------------------------------------------------------
def emu_responses(scheduler: str) -> dict[str, Any]:
    """What emu's REST API answers on each of PATHS, in the probe's situation:
    a one-node replay (virtual clock) whose snapshot is taken when its app is
    RUNNING with a task container, then served by emu's own web server."""
    import httpx

    from emu.scenario import native
    from emu.simulation import Simulation, run_virtual
    from emu.web.live import LiveView
    from emu.web.server import WebServer
    from emu.web.view import snapshot

    live = LiveView()

    def observe(rm: Any) -> None:
        if live.latest is not None:
            return
        snap = snapshot(rm)
        if any(a["state"] == "RUNNING" and a["runningContainers"] >= 2 for a in snap.apps):
            live.latest = snap

    with tempfile.TemporaryDirectory(prefix="emu-rest-schema-") as d:
        path = Path(d) / "rest-schema.toml"
        path.write_text(
            EMU_SCENARIO.format(mb=NODE_MB, vcores=NODE_VCORES, cls=SCHEDULER_CLASSES[scheduler])
        )
        sim = Simulation.of_scenario(native.load(path), on_tick=observe)
        run_virtual(sim)
    taken = live.latest
    if taken is None:
        raise RuntimeError(f"emu ({scheduler}): the app never ran with a task container")
    app_id = next(a["id"] for a in taken.apps if a["state"] == "RUNNING")
    live.close()
    server = WebServer(live, port=0)
    url = server.start()
    try:
        with httpx.Client(base_url=url, headers={"Accept": "application/json"}) as http:
            out = {}
            for p in PATHS:
                r = http.get(p.replace("{id}", app_id))
                r.raise_for_status()
                out[p] = r.json()
            return out
    finally:
        server.stop()


# --- both ----------------------------------------------------------------------------------
def check(
    schedulers: Sequence[str] = ("fifo", "capacity", "fair"), refresh: bool = False
) -> list[SchedulerResult]:
    """The comparison per scheduler (see the module docstring)."""
    yarn = yarn_responses(schedulers, refresh)
    return [compare_all(s, yarn[s], emu_responses(s)) for s in schedulers]


def markdown(results: Sequence[SchedulerResult]) -> str:
    """The REST API section of docs/fidelity.md."""
    lines = [
        "## REST API schema",
        "",
        f"emu's `/ws/v1/cluster/...` answers against Apache Hadoop {hcp.HADOOP_VERSION}'s "
        "ResourceManager (MiniYARNCluster, one node, one app RUNNING with a container), "
        "field by field: every field YARN returns (through objects and the first element "
        "of arrays) must come back from emu with the same name and JSON type; values may "
        "differ, and emu may add fields. `python -m emu.fidelity.rest_schema` regenerates "
        "this section.",
        "",
        "| scheduler | path | YARN fields | missing | type mismatches | emu-only |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    details: list[str] = []
    for r in results:
        for p in r.paths:
            lines.append(
                f"| {r.scheduler} | `{p.path}` | {p.yarn_fields} "
                f"| {len(p.missing)} | {len(p.mismatched)} | {len(p.extra)} |"
            )
            for name in p.missing:
                details.append(f"- {r.scheduler} `{p.path}`: missing `{name}`")
            for m in p.mismatched:
                details.append(
                    f"- {r.scheduler} `{p.path}`: `{m.field}` is {m.emu} in emu, {m.yarn} in YARN"
                )
    lines.append("")
    if details:
        lines += ["Differences:", "", *details, ""]
    else:
        lines += ["Nothing YARN returns is missing from emu or of another type.", ""]
    extras: dict[tuple[str, str], list[str]] = {}
    for r in results:
        for p in r.paths:
            for name in p.extra:
                extras.setdefault((p.path, name), []).append(r.scheduler)
    if extras:
        lines += ["Fields only emu gives (allowed; older clients' names or emu's own):", ""]
        for (path, name), where in extras.items():
            lines.append(f"- `{path}`: `{name}` ({', '.join(where)})")
        lines.append("")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    refresh = "--refresh" in args
    schedulers = [a for a in args if a != "--refresh"] or ["fifo", "capacity", "fair"]
    unknown = [s for s in schedulers if s not in SCHEDULER_CLASSES]
    if unknown:
        print(f"unknown scheduler {unknown[0]!r}: fifo, capacity or fair", file=sys.stderr)
        return 2
    try:
        results = check(schedulers, refresh)
    except InputError as e:
        print(f"emu: error: {e}", file=sys.stderr)
        return 2
    print(markdown(results))
    return 0 if all(r.ok for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())

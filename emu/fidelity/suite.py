"""The fidelity suite's cases: what each one replays and how.

A case is a trace, a nodes file and a Hadoop configuration directory (only
Hadoop's own file formats), plus `-D` properties, listed in
`scenarios/fidelity/suite.toml`. Paths there are relative to that file. A
case may instead name a generated workload (`generate = "bench"`): the
benchmark generator's trace, nodes and configuration directories written
into the case's work directory, so a 300-node trace need not be committed.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from emu.errors import InputError

SUITE_FILE = Path(__file__).resolve().parents[2] / "scenarios" / "fidelity" / "suite.toml"
TRACE_TYPES = ("SLS", "RUMEN", "SYNTH")
SCHEDULER = "yarn.resourcemanager.scheduler.class"


@dataclass(frozen=True)
class Generated:
    """The benchmark workload generator's inputs (emu.bench.workload)."""

    nodes: int
    span_s: float
    util: float = 0.8
    seed: int = 1
    scheduler: str = "fair"
    """Which of the generator's configuration directories (fifo, capacity, fair)."""
    local_share: float = 0.25
    """The share of jobs whose maps name preferred hosts."""


@dataclass(frozen=True)
class Case:
    """One fidelity case; see the module docstring."""

    name: str
    what: str
    """The mechanism it exercises or the reference it replays, in a phrase."""
    tracetype: str = "SLS"
    traces: tuple[Path, ...] = ()
    nodes: Path | None = None
    conf: Path | None = None
    properties: dict[str, str] = field(default_factory=dict)
    changes: Path | None = None
    """A TOML file of [[changes]] applied during the replay (`emu sls --changes`)."""
    generate: Generated | None = None
    ci: bool = False
    """In the subset `.ci/run` checks after the tests (short cases)."""
    sls: bool = False
    """Short enough to run through Hadoop's own SLS (which runs on the wall clock)."""
    exact: bool = False
    """emu's port agreed exactly with Hadoop's scheduler when last measured: a
    change that breaks the agreement fails `emu.fidelity --check`."""
    explained: str = ""
    """Why emu's port differs from Hadoop's scheduler on this case, with the
    Hadoop source lines that say so, when the difference is left as it is."""

    @property
    def scheduler(self) -> str:
        """fifo, capacity or fair (from the properties or the generator)."""
        if self.generate is not None:
            return self.generate.scheduler
        name = self.properties.get(SCHEDULER, "")
        return name.rsplit(".", 1)[-1].replace("Scheduler", "").lower() or "capacity"

    def materialize(self, workdir: Path) -> Case:
        """The case with generated inputs written under `workdir` (itself if none)."""
        if self.generate is None:
            return self
        from emu.bench import workload as W

        g = self.generate
        inputs = workdir / "inputs"
        inputs.mkdir(parents=True, exist_ok=True)
        dirs = W.write_conf_dirs(inputs)
        W.write_nodes(inputs / "nodes.json", g.nodes)
        shape = W.Shape(local_share=g.local_share)
        W.write_trace(inputs / "trace.json", W.jobs(g.nodes, g.span_s, g.util, g.seed, shape))
        return Case(
            name=self.name,
            what=self.what,
            tracetype="SLS",
            traces=(inputs / "trace.json",),
            nodes=inputs / "nodes.json",
            conf=dirs[g.scheduler],
            properties=dict(self.properties),
            changes=self.changes,
            ci=self.ci,
            sls=self.sls,
            exact=self.exact,
            explained=self.explained,
        )

    def sls_args(self) -> list[str]:
        """The `emu sls` arguments that replay this case (inputs materialized)."""
        if self.generate is not None:
            raise ValueError(f"{self.name}: materialize the generated inputs first")
        args = ["--tracetype", self.tracetype, "--tracelocation", ",".join(map(str, self.traces))]
        if self.nodes is not None:
            args += ["--nodes", str(self.nodes)]
        if self.conf is not None:
            args += ["--conf-dir", str(self.conf)]
        for k, v in self.properties.items():
            args += ["-D", f"{k}={v}"]
        if self.changes is not None:
            args += ["--changes", str(self.changes)]
        return args


def load(path: Path = SUITE_FILE) -> list[Case]:
    """The cases in `path`, in file order; a bad entry is an InputError naming it."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise InputError(str(path), None, str(e)) from None
    base = path.parent
    cases: list[Case] = []
    seen: set[str] = set()
    for i, raw in enumerate(data.get("case", [])):
        where = f"case #{i + 1}"
        try:
            case = _case(raw, base)
        except (KeyError, TypeError, ValueError) as e:
            raise InputError(str(path), where, f"bad entry: {e}") from None
        if case.name in seen:
            raise InputError(str(path), case.name, "case name used twice")
        seen.add(case.name)
        cases.append(case)
    return cases


def _case(raw: dict, base: Path) -> Case:
    def rel(p: str) -> Path:
        return (base / p).resolve()

    unknown = set(raw) - {
        "name", "what", "tracetype", "trace", "nodes", "conf", "properties",
        "changes", "generate", "ci", "sls", "exact", "explained",
    }  # fmt: skip
    if unknown:
        raise ValueError(f"unknown keys {sorted(unknown)}")
    tracetype = str(raw.get("tracetype", "SLS")).upper()
    if tracetype not in TRACE_TYPES:
        raise ValueError(f"tracetype {tracetype!r} is not one of {TRACE_TYPES}")
    traces = raw.get("trace", [])
    if isinstance(traces, str):
        traces = [traces]
    gen = raw.get("generate")
    generated = Generated(**gen) if gen is not None else None
    if generated is None and not traces:
        raise ValueError("needs trace or generate")
    if "changes" in raw and raw.get("sls", False):
        raise ValueError("Hadoop's own SLS cannot apply changes: a case with changes has no sls")
    return Case(
        name=str(raw["name"]),
        what=str(raw["what"]),
        tracetype=tracetype,
        traces=tuple(rel(t) for t in traces),
        nodes=rel(raw["nodes"]) if "nodes" in raw else None,
        conf=rel(raw["conf"]) if "conf" in raw else None,
        properties={str(k): str(v) for k, v in raw.get("properties", {}).items()},
        changes=rel(raw["changes"]) if "changes" in raw else None,
        generate=generated,
        ci=bool(raw.get("ci", False)),
        sls=bool(raw.get("sls", False)),
        exact=bool(raw.get("exact", False)),
        explained=str(raw.get("explained", "")).strip(),
    )

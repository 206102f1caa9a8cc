"""emu from Python: run a scenario or replay a trace, get the results as data.

    from emu.api import replay

    result = replay(
        "scenarios/fidelity/cases/cap-max-capacity/trace.json",
        nodes="scenarios/fidelity/cases/cap-max-capacity/nodes.json",
        conf_dir="scenarios/fidelity/cases/cap-max-capacity/conf",
        properties={"yarn.scheduler.capacity.root.a.maximum-capacity": 100},
    )
    print(result.makespan_s, result.jobs[0]["turnaround_s"])

Both entry points go through the same code as `emu run` and `emu sls`
(`emu.scenario_run`, `emu.sls`, and before either `emu.preflight`): the
same checks and errors (`emu.errors.InputError` names the file and the
key), the same files in
`output_dir`, and the same summary data, which `Result` lays out as rows.

Each call is one simulation on its own virtual clock. Nothing a run sets
outlives it: its settings (shortcuts included) are its configuration's,
trio's scheduler is put back as it was found, and the schedulers keep their
caches on their own objects. So a notebook can replay, change one
property, replay again, and compare; the same inputs and seed give the same
results in any order.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from emu.config import support
from emu.rm.settings import SCHEDULER_CLASS, SCHEDULER_IMPL

__all__ = ["Result", "replay", "run_scenario"]

Properties = Mapping[str, str | int | float | bool]


@dataclass(frozen=True)
class Result:
    """One finished run.

    `summary` is what summary.json holds; the attributes below lay it out
    as rows (lists of dicts, one key per column), ready for `to_pandas`.
    Times are simulated seconds from the start of the run."""

    summary: dict[str, Any]
    output_dir: Path | None
    """Where the run's files are (None: a scenario run without one)."""

    @property
    def complete(self) -> bool:
        """Every job ended (False: the run stalled or was stopped; see
        `summary["incomplete_reason"]`)."""
        return bool(self.summary.get("complete"))

    @property
    def makespan_s(self) -> float:
        """Simulated seconds from the start to the last job's end."""
        return float(self.summary["simulated_ms"]) / 1000

    @property
    def jobs(self) -> list[dict[str, Any]]:
        """One row per job: job_id, app_id, queue, user, state, final_status,
        diagnostics, attempts, preempted_am_containers,
        preempted_non_am_containers, submit_s, start_s, finish_s, wait_s,
        turnaround_s (None where the job never got that far)."""
        rows = []
        for j in self.summary["jobs"]:
            row = {k: j.get(k) for k in _JOB_KEYS}
            row["state"] = None if row["state"] is None else str(row["state"])
            for key in _JOB_TIMES:
                ms = j.get(f"{key}_ms")
                row[f"{key}_s"] = None if ms is None else ms / 1000
            rows.append(row)
        return rows

    @property
    def timeline(self) -> list[dict[str, Any]]:
        """One row per sample of the whole cluster: t_s, memory_used,
        vcores_used, memory_total, vcores_total, jain_dominant_share (Jain's
        index over the queues' dominant shares), running_apps."""
        t = self.summary["timeline"]
        running = self._running_apps(None)
        return [
            {
                "t_s": ms / 1000,
                "memory_used": t["memory_used"][i],
                "vcores_used": t["vcores_used"][i],
                "memory_total": t["memory_total"][i],
                "vcores_total": t["vcores_total"][i],
                "jain_dominant_share": t["jain_dominant_share"][i],
                "running_apps": running[i],
            }
            for i, ms in enumerate(t["t_ms"])
        ]

    @property
    def queue_timeline(self) -> list[dict[str, Any]]:
        """One row per sample and leaf queue: t_s, queue, memory, vcores
        (allocated), share_memory (fair share, guarantee or the cluster, by
        scheduler), pending_memory, running_apps."""
        t = self.summary["timeline"]
        rows = []
        for name, q in t["queues"].items():
            running = self._running_apps(name)
            for i, ms in enumerate(t["t_ms"]):
                row: dict[str, Any] = {"t_s": ms / 1000, "queue": name}
                row.update((k, v[i]) for k, v in q.items())
                row["running_apps"] = running[i]
                rows.append(row)
        return rows

    @property
    def partition_timeline(self) -> list[dict[str, Any]]:
        """With node labels, one row per realtimetrack.json record (each
        simulated second) and partition: t_s, partition ("" the default
        one), memory_used, vcores_used, memory_total, vcores_total (MB and
        vcores; total = the partition's nodes). Empty when the run had no
        labelled node or wrote no realtimetrack.json."""
        rows = []
        for t_s, name, values in self._partition_records():
            used_mb, used_vc = values["allocated.memory"], values["allocated.vcores"]
            rows.append(
                {
                    "t_s": t_s,
                    "partition": name,
                    "memory_used": used_mb,
                    "vcores_used": used_vc,
                    "memory_total": used_mb + values["available.memory"],
                    "vcores_total": used_vc + values["available.vcores"],
                }
            )
        return rows

    @property
    def partition_queue_timeline(self) -> list[dict[str, Any]]:
        """With node labels, one row per realtimetrack.json record, partition
        and leaf queue: t_s, partition ("" the default one), queue (full
        name), memory, vcores (allocated there), pending_memory,
        pending_vcores (what its apps ask of the partition); MB and vcores."""
        rows = []
        for t_s, name, values in self._partition_records():
            for key, mb in values.items():
                if key.startswith("queue.") and key.endswith(".allocated.memory"):
                    queue = key[len("queue.") : -len(".allocated.memory")]
                    row = {"t_s": t_s, "partition": name, "queue": queue, "memory": mb}
                    row["vcores"] = values[f"queue.{queue}.allocated.vcores"]
                    row["pending_memory"] = values.get(f"queue.{queue}.pending.memory", 0)
                    row["pending_vcores"] = values.get(f"queue.{queue}.pending.vcores", 0)
                    rows.append(row)
        return rows

    def _partition_records(self) -> list[tuple[float, str, dict[str, int]]]:
        """(t_s, partition, its `partition.<p>.` gauges in MB and vcores) per
        realtimetrack.json record, from the run's start."""
        from emu.metrics.sls import DEFAULT_PARTITION_KEY, GB

        path = self.output_dir / "realtimetrack.json" if self.output_dir is not None else None
        if path is None or not path.is_file():
            return []
        text = path.read_text(encoding="utf-8")
        if '"partition.' not in text:
            return []
        records = json.loads(text)
        t0 = records[0]["time"] if records else 0
        out = []
        for r in records:
            by_partition: dict[str, dict[str, int]] = {}
            for key, value in r.items():
                if not key.startswith("partition."):
                    continue
                name, _, field = key[len("partition.") :].partition(".")
                if field.startswith("cluster."):
                    field = field[len("cluster.") :]
                raw = round(value * GB) if field.endswith("memory") else int(value)
                by_partition.setdefault(name, {})[field] = raw
            t_s = (r["time"] - t0) / 1000
            for name, values in by_partition.items():
                out.append((t_s, "" if name == DEFAULT_PARTITION_KEY else name, values))
        return out

    @property
    def why_pending(self) -> dict[str, list[dict[str, Any]]]:
        """Per job id, the scheduler's recent decisions about its app:
        t_s, what it decided (e.g. "allocated", "queue at max capacity") and
        the node, oldest first (emu's equivalent of YARN's app activities)."""
        out = {}
        for j in self.summary["jobs"]:
            recent = (j.get("why_pending") or {}).get("recent") or []
            out[j["job_id"]] = [{"t_s": e[0] / 1000, "why": e[1], "node": e[2]} for e in recent]
        return out

    @property
    def faults(self) -> dict[str, Any]:
        """The faults injected and what recovered (empty for a replay)."""
        return dict(self.summary.get("faults") or {})

    @property
    def files(self) -> dict[str, Path]:
        """The run's files by name (metrics/*.csv as "metrics/NAME")."""
        if self.output_dir is None:
            return {}
        return {
            str(p.relative_to(self.output_dir)): p
            for p in sorted(self.output_dir.rglob("*"))
            if p.is_file()
        }

    def to_pandas(self, table: str = "jobs") -> Any:
        """`jobs`, `timeline`, `queue_timeline`, `partition_timeline` or
        `partition_queue_timeline` as a pandas DataFrame (pandas is
        optional: `pip install 'emu[pandas]'`)."""
        if table not in TABLES:
            raise ValueError(f"unknown table {table!r} ({', '.join(TABLES)})")
        try:
            import pandas as pd  # type: ignore[import-untyped]
        except ImportError:
            raise ImportError(
                "Result.to_pandas needs pandas: pip install 'emu[pandas]' (or pandas)"
            ) from None
        return pd.DataFrame(getattr(self, table))

    def _running_apps(self, queue: str | None) -> list[int]:
        """Apps started and not yet finished at each sample (of `queue`, or all)."""
        t_ms = self.summary["timeline"]["t_ms"]
        counts = [0] * len(t_ms)
        for j in self.summary["jobs"]:
            start, finish = j.get("start_ms"), j.get("finish_ms")
            if start is None or (queue is not None and j.get("queue") != queue):
                continue
            for i, ms in enumerate(t_ms):
                if start <= ms and (finish is None or ms < finish):
                    counts[i] += 1
        return counts


TABLES = ("jobs", "timeline", "queue_timeline", "partition_timeline", "partition_queue_timeline")

_JOB_KEYS = (
    "job_id",
    "app_id",
    "queue",
    "user",
    "state",
    "final_status",
    "diagnostics",
    "attempts",
    "preempted_am_containers",
    "preempted_non_am_containers",
)
_JOB_TIMES = ("submit", "start", "finish", "wait", "turnaround")


def run_scenario(
    path: str | Path,
    *,
    properties: Properties | None = None,
    scheduler: str | None = None,
    impl: str | None = None,
    seed: int | None = None,
    output_dir: str | Path | None = None,
    allow_unsupported: bool = False,
) -> Result:
    """Replay an emu scenario file (scenarios/*.toml) as `emu run` does.

    `properties` go over the scenario's [config] as `-D` does (Hadoop
    property names); `scheduler` sets yarn.resourcemanager.scheduler.class
    (fifo, capacity, fair or a Hadoop class name) and `impl` whose code
    schedules (`emu`, or `hadoop` for Hadoop's own classes, which needs
    Java). `seed` overrides the scenario's. With `output_dir`, the files
    `emu run` writes are written there. A property emu's scheduler does not
    emulate (docs/configuration.md) raises `emu.errors.InputError`, as a bad
    scenario or configuration does, unless `allow_unsupported`: then the run
    goes without it and `summary["unsupported"]` lists it."""
    from emu.scenario import native
    from emu.scenario_run import run_scenario as run

    scenario = native.load(
        path, _overrides(properties, scheduler, impl, "properties", allow_unsupported)
    )
    done = run(scenario, scenario.seed if seed is None else seed, output_dir)
    return Result(done.summary, done.output_dir)


def replay(
    traces: str | Path | Iterable[str | Path],
    *,
    tracetype: str = "SLS",
    nodes: str | Path | None = None,
    conf_dir: str | Path | None = None,
    properties: Properties | None = None,
    scheduler: str | None = None,
    impl: str | None = None,
    seed: int | None = None,
    output_dir: str | Path | None = None,
    container_log: bool = False,
    changes: str | Path | None = None,
    allow_unsupported: bool = False,
    timing: str = "sls",
) -> Result:
    """Replay SLS, Rumen or SYNTH traces as `emu sls` does.

    `tracetype` is SLS, RUMEN or SYNTH; `nodes` an SLS topology file;
    `conf_dir` a Hadoop configuration directory (sls-runner.xml,
    yarn-site.xml, capacity-scheduler.xml, fair-scheduler.xml), as
    `--conf-dir`, else $HADOOP_CONF_DIR, else Hadoop's defaults;
    `properties` go over it as `-D` does. `scheduler`, `impl` and `seed` as
    in `run_scenario`. The outputs of `emu sls` (jobruntime.csv,
    summary.json, realtimetrack.json, metrics/, and containers.csv with
    `container_log`) go to `output_dir`, or to a new temporary directory
    that is left for the caller (`Result.output_dir`). `changes` names a
    TOML file of [[changes]] (queues refreshed, nodes added or removed, node
    labels changed at simulated times), as `emu sls --changes`. Raises
    `emu.errors.InputError` for a bad trace, topology or configuration, and
    for what emu's scheduler does not emulate unless `allow_unsupported`
    (as in `run_scenario`). `timing` is `sls` (SLS's simulated AMs and NMs,
    as `emu sls`) or `yarn` (YARN's), as `--timing` (emu/timing.py)."""
    from emu import sls
    from emu.timing import TIMINGS

    if timing not in TIMINGS:
        raise ValueError(f"timing must be one of {', '.join(sorted(TIMINGS))}, not {timing!r}")

    paths = [traces] if isinstance(traces, str | Path) else list(traces)
    out = Path(output_dir) if output_dir is not None else Path(tempfile.mkdtemp(prefix="emu-"))
    opts = sls.SlsOptions(
        tracetype=tracetype.upper(),
        traces=[str(p) for p in paths],
        output_dir=out,
        nodes_file=str(nodes) if nodes is not None else None,
        conf_dir=str(conf_dir) if conf_dir is not None else None,
        overrides={
            k: v
            for k, (v, _) in _overrides(
                properties, scheduler, impl, "-D", allow_unsupported
            ).items()
        },
        seed=seed,
        container_log=container_log,
        changes_file=str(changes) if changes is not None else None,
        timing=TIMINGS[timing],
    )
    done = sls.run(opts)
    return Result(done.summary, out)


def _overrides(
    properties: Properties | None,
    scheduler: str | None,
    impl: str | None,
    source: str,
    allow_unsupported: bool = False,
) -> dict[str, tuple[str, str]]:
    """Property -> (value as Hadoop's files write it, where it came from)."""
    out = {}
    for name, value in (properties or {}).items():
        text = str(value).lower() if isinstance(value, bool) else str(value)
        out[str(name)] = (text, source)
    if scheduler is not None:
        out[SCHEDULER_CLASS] = (scheduler, "scheduler=")
    if impl is not None:
        out[SCHEDULER_IMPL] = (impl, "impl=")
    if allow_unsupported:
        out[support.ALLOW] = ("true", "allow_unsupported=")
    return out

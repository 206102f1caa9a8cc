"""One replay of a federation file (`emu run FEDERATION.toml`): the
federation in one process, and the files it leaves.

Federated outputs at the top of the output directory (`jobruntime.csv`
with every job, `summary.json` with the federation's section), and per
sub-cluster a directory of its own (`<id>/jobruntime.csv` and
`<id>/summary.json` for the jobs homed there, `<id>/events.jsonl` its RM's
events), so the tools that read one cluster's outputs read each part.
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from emu import outdir
from emu.federation import description
from emu.federation.description import Federation
from emu.federation.simulation import FederatedSimulation, FederationResult, run_federation
from emu.metrics import outputs
from emu.metrics.eventlog import EventLog
from emu.metrics.outputs import percentile
from emu.metrics.progress import trace_span_ms
from emu.metrics.timeline import Timeline, sample_every_s
from emu.rm.actor import ResourceManager


@dataclass
class FederationRun:
    summary: dict[str, Any]
    result: FederationResult
    output_dir: Path | None


def run_federation_file(
    fed: Federation, seed: int, output_dir: str | Path | None = None
) -> FederationRun:
    """Replay `fed` with `seed`; with `output_dir`, write the outputs there.
    Each sub-cluster's configuration is checked first, as `emu run` checks
    a scenario's (InputError names the sub-cluster)."""
    description.check_configurations(fed)
    out = outdir.make(output_dir) if output_dir is not None else None
    with ExitStack() as files:
        events: dict[str, EventLog] = {}
        partials: list[tuple[Path, Path]] = []
        if out is not None:
            for sc in fed.subclusters:
                d = out / sc.id
                d.mkdir(exist_ok=True)
                partial = d / "events.jsonl.partial"
                events[sc.id] = EventLog(files.enter_context(partial.open("w")))
                partials.append((partial, d / "events.jsonl"))
        every = sample_every_s(trace_span_ms(fed.workload))
        timelines = {sc.id: Timeline(every) for sc in fed.subclusters}

        def tick(rms: dict[str, ResourceManager]) -> None:
            for sid, rm in rms.items():
                timelines[sid].tick(rm)

        try:
            result = run_federation(FederatedSimulation(fed, seed, events, on_tick=tick))
        except BaseException:
            for partial, _ in partials:
                partial.unlink(missing_ok=True)
            raise
    for partial, final in partials:
        partial.replace(final)
    data = outputs.summary(
        fed.name, seed, result.jobs, result.metrics, result.simulated_ms, result.stalled
    )
    data["federation"] = federation_section(fed, result)
    data["federation"]["load_imbalance"] = load_imbalance(timelines)
    if out is not None:
        outputs.write_jobruntime(out / "jobruntime.csv", result.jobs)
        outputs.write_summary(out / "summary.json", data)
        for sc in fed.subclusters:
            homed = [j for j in result.jobs if j["home"] == sc.id]
            part = next(p for p in result.subclusters if p.id == sc.id)
            sub = outputs.summary(
                f"{fed.name}/{sc.id}",
                seed,
                homed,
                part.metrics,
                result.simulated_ms,
                result.stalled,
            )
            sub["timeline"] = timelines[sc.id].to_json()
            outputs.write_jobruntime(out / sc.id / "jobruntime.csv", homed)
            outputs.write_summary(out / sc.id / "summary.json", sub)
    return FederationRun(data, result, out)


def load_imbalance(timelines: dict[str, Timeline]) -> dict[str, Any]:
    """How unevenly the sub-clusters are loaded over time: at each sample,
    each one's share of its memory allocated, and the spread (most loaded
    minus least loaded); its mean and maximum over the run."""
    ids = list(timelines)
    first = timelines[ids[0]]
    n = min(len(t.t_ms) for t in timelines.values())
    shares = {
        sid: [
            round(t.memory_used[i] / t.memory_total[i], 6) if t.memory_total[i] else 0.0
            for i in range(n)
        ]
        for sid, t in timelines.items()
    }
    spread = [
        round(max(shares[s][i] for s in ids) - min(shares[s][i] for s in ids), 6) for i in range(n)
    ]
    return {
        "t_ms": first.t_ms[:n],
        "memory_allocated_share": shares,
        "spread": spread,
        "spread_mean": round(sum(spread) / n, 6) if n else 0.0,
        "spread_max": max(spread, default=0.0),
    }


def federation_section(fed: Federation, result: FederationResult) -> dict[str, Any]:
    """What the federation did: its policies, and per sub-cluster the jobs
    homed there, their waits and turnarounds, the containers it gave AMs
    homed elsewhere, and its use of its capacity."""
    per: dict[str, Any] = {}
    for part in result.subclusters:
        homed = outputs.job_rows([j for j in result.jobs if j["home"] == part.id])
        waits = [r["wait_ms"] for r in homed if r["wait_ms"] is not None]
        turns = [r["turnaround_ms"] for r in homed if r["turnaround_ms"] is not None]
        m = part.metrics
        per[part.id] = {
            "nodes": m["active_nodes"],
            "total": m["total"],
            "jobs_homed": len(homed),
            "wait_ms": {
                "p50": percentile(waits, 0.5),
                "p90": percentile(waits, 0.9),
                "max": max(waits, default=0),
            },
            "turnaround_ms": {"p50": percentile(turns, 0.5), "p90": percentile(turns, 0.9)},
            "containers_total": m["containers_total"],
            "containers_for_other_homes": result.stats.containers_from_secondaries.get(part.id, 0),
            "utilization": m["utilization"],
            "heartbeats": part.heartbeats,
            "invalid_transitions": sum(part.invalid_transitions.values()),
        }
    refused = sum(1 for j in result.jobs if not j["home"])
    return {
        "policy_manager": fed.policy.name,
        "router_policy": fed.policy.router_name,
        "amrmproxy_policy": fed.policy.amrm_name,
        "sub_clusters": per,
        "unmanaged_ams": result.stats.unmanaged_ams,
        "containers_across_sub_clusters": sum(result.stats.containers_from_secondaries.values()),
        "submissions_retried": result.retries,
        "submissions_refused": refused,
        "splits_refused": result.stats.split_refused,
    }


def format_federation(section: dict[str, Any]) -> str:
    """The federation's lines under the run's summary table."""
    spread = section["load_imbalance"]
    lines = [
        f"federation: {section['policy_manager']} (router {section['router_policy']}, "
        f"AMRMProxy {section['amrmproxy_policy']}); {section['unmanaged_ams']} unmanaged AMs, "
        f"{section['containers_across_sub_clusters']} containers across sub-clusters; "
        f"load spread (most minus least memory allocated) mean "
        f"{spread['spread_mean']:.2f}, max {spread['spread_max']:.2f}",
        f"{'sub-cluster':<14}{'nodes':>7}{'jobs':>6}{'wait p50 s':>12}{'wait p90 s':>12}"
        f"{'containers':>12}{'for others':>12}{'mem util':>10}",
    ]
    for sid, s in section["sub_clusters"].items():
        lines.append(
            f"{sid:<14}{s['nodes']:>7}{s['jobs_homed']:>6}{s['wait_ms']['p50'] / 1000:>12.1f}"
            f"{s['wait_ms']['p90'] / 1000:>12.1f}{s['containers_total']:>12}"
            f"{s['containers_for_other_homes']:>12}{s['utilization'].get('memory', 0.0):>10.2f}"
        )
    if section["submissions_refused"]:
        lines.append(
            f"{section['submissions_refused']} submissions no sub-cluster took (see summary.json)"
        )
    return "\n".join(lines)

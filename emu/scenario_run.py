"""One replay of an emu scenario file (`emu run`, `emu.api.run_scenario`):
the in-process cluster, its timeline, and the files it leaves.

The command line and the Python API both come here, so a run from a
notebook writes what `emu run` writes and returns the same summary data.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from emu import outdir, preflight
from emu.config import support
from emu.errors import InputError, SchedulerFailed, find_in_group
from emu.metrics import outputs
from emu.metrics.progress import trace_span_ms
from emu.metrics.timeline import Timeline, sample_every_s
from emu.scenario.native import Scenario
from emu.simulation import RunResult, Simulation, run_virtual
from emu.watch import Watch, chain


@dataclass
class ScenarioRun:
    """A finished replay: its summary data (what summary.json holds), the
    simulation's result, and where its files are (None: none written)."""

    summary: dict[str, Any]
    result: RunResult
    output_dir: Path | None


def run_scenario(
    scenario: Scenario,
    seed: int,
    output_dir: str | Path | None = None,
    rate: float | None = None,
    watch: Watch | None = None,
    check_invariants: bool = False,
) -> ScenarioRun:
    """Replay `scenario` with `seed`; with `output_dir`, write events.jsonl,
    jobruntime.csv and summary.json there (a failed run leaves no
    half-written result, but keeps Hadoop's failure.json when Hadoop's
    scheduler stopped it). Raises InputError for a configuration or input
    `emu.preflight` refuses (as `emu sls` and `emu rm` refuse it), and
    ClusterInvariantBroken when asked to check the RM's state and it breaks."""
    checked = preflight.check_configuration(scenario.conf)
    source = scenario.path or scenario.name
    preflight.check_inputs(
        checked,
        scenario.conf,
        nodes_source=source,
        nodes=scenario.nodes,
        jobs_source=source,
        jobs=scenario.workload.jobs,
        fields=preflight.SCENARIO_FIELDS,
        refreshes=[(c.where, c.properties) for c in scenario.changes if c.properties],
    )
    watch = watch if watch is not None else Watch("never")
    timeline = Timeline(sample_every_s(trace_span_ms(scenario.workload)))
    watching = watch.start(scenario.workload)
    sim = Simulation.of_scenario(
        scenario,
        seed=seed,
        on_tick=timeline.tick if watching is None else chain(timeline.tick, watching),
        check_invariants=check_invariants,
    )
    created = output_dir is not None and not Path(output_dir).exists()
    out = outdir.make(output_dir) if output_dir is not None else None
    try:
        if out is not None:
            partial = out / "events.jsonl.partial"
            try:
                with partial.open("w") as events:
                    result = run_virtual(sim, events, rate)
            except BaseException as exc:
                if _record_failure(exc, out, partial):
                    raise
                partial.unlink(missing_ok=True)  # no half-written file that looks like a result
                if created:
                    out.rmdir()
                raise
            partial.replace(out / "events.jsonl")
        else:
            result = run_virtual(sim, rate=rate)
    except BaseException as e:  # a refused change arrives wrapped in trio's group
        refused = find_in_group(e, InputError)
        if refused is not None and refused is not e:
            raise refused from None
        raise
    finally:
        watch.stop()
    data = outputs.summary(
        scenario.name,
        seed,
        result.jobs,
        result.metrics,
        result.simulated_ms,
        incomplete=result.stalled,
        faults=result.faults,
    )
    data["timeline"] = timeline.to_json()
    outputs.add_why_pending(data, result.why_pending)
    support.add_to_summary(data, checked.unsupported)
    if out is not None:
        outputs.write_jobruntime(out / "jobruntime.csv", result.jobs)
        outputs.write_summary(out / "summary.json", data)
    return ScenarioRun(data, result, out)


def _record_failure(exc: BaseException, out: Path, partial: Path) -> bool:
    """If the scheduler failed the run (Hadoop's, or a plugin), keep the event
    log so far and write `failure.json` (its message and the simulated time)."""
    failed = find_in_group(exc, SchedulerFailed)
    if not isinstance(failed, SchedulerFailed):
        return False
    partial.replace(out / "events.jsonl")
    outputs.write_failure(out, failed)
    return True

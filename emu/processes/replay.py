"""`emu replay`: submit a workload to a running RM and wait for it."""

from __future__ import annotations

import argparse
import math
import time
import tomllib
from dataclasses import replace
from pathlib import Path
from typing import Any

import structlog
import trio

from emu import outdir, security
from emu.client import RMClient, RMRequestError
from emu.clock import ScaledWallClock
from emu.errors import InputError
from emu.metrics import outputs
from emu.msg.codec import CODEC
from emu.processes import common as C
from emu.replay import Replayer
from emu.transport import TransportError, connect
from emu.workload import Workload

log = structlog.get_logger("emu.replay")

TRACE_TYPES = ("SLS", "RUMEN", "SYNTH", "NATIVE")
FINAL = ("FINISHED", "FAILED", "KILLED")
CALL_TIMEOUT_S = 5.0
"""Wall seconds a request may go unanswered before it is sent again."""

HELP = """Submit a workload to a running ResourceManager at its submission times
(relative to now, on the cluster clock), wait until every job has ended, and
write jobruntime.csv and summary.json to --output-dir, as `emu run` does.

TRACE is an emu scenario (.toml; its jobs and trace are used, its cluster,
configuration and faults are the running cluster's business and ignored) or
SLS/RUMEN/SYNTH trace files (--tracetype; container sizes and the AM
heartbeat come from sls-runner.xml in --conf-dir, as for `emu sls`).

The replay rides out an RM restart: requests are retried until answered.
Exit codes: 0 every job finished, 1 one failed or was killed, 2 bad input.
"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "replay",
        help="submit a trace or scenario to a running RM",
        description=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("traces", nargs="+", metavar="TRACE", help="trace or scenario files")
    p.add_argument("--rm", required=True, metavar="HOST[:PORT_BASE]", help="the ResourceManager")
    p.add_argument(
        "--tracetype",
        metavar="SLS|RUMEN|SYNTH|native",
        help="the trace format (default: native for .toml, else SLS)",
    )
    p.add_argument(
        "--output-dir",
        "-o",
        metavar="DIR",
        help="where to write outputs (default: print only)",
    )
    p.add_argument(
        "--conf-dir",
        metavar="DIR",
        help="Hadoop configuration (sls-runner.xml; default: $HADOOP_CONF_DIR, else none)",
    )
    C.add_conf_option(p, "set a configuration property")
    p.add_argument("--seed", type=int, help="SYNTH seed (default: the file's rand_seed)")
    C.add_client_keys_options(p)
    p.add_argument(
        "--poll-ms",
        type=int,
        default=1000,
        help="simulated ms between progress checks (default 1000)",
    )
    p.add_argument(
        "--connect-timeout",
        type=float,
        default=60.0,
        help="wall seconds to wait for the RM (default 60)",
    )
    p.add_argument(
        "--log-level", default="warning", help="debug|info|warning|error (default: warning)"
    )
    p.add_argument(
        "--workload-only",
        action="store_true",
        help="replay a scenario file's jobs even though the running cluster ignores its "
        "[config] and [cluster] (without it, such a scenario is refused)",
    )
    p.add_argument("--parent-pid", type=int, help=argparse.SUPPRESS)
    p.set_defaults(func=C.command(main))


def is_scenario(path: str, tracetype: str | None) -> bool:
    """Whether `path` is an emu scenario file (TOML) rather than a trace."""
    return (tracetype or ("NATIVE" if path.endswith(".toml") else "SLS")).upper() == "NATIVE"


def _ignored_by_a_running_cluster(path: str, scenario: Any) -> list[str]:
    """What of a scenario a replay onto a running cluster cannot apply: its
    [config] (the RM has its own) and its [cluster] nodes (the cluster has
    its own); the AM heartbeat in [cluster] travels with each job."""
    with open(path, "rb") as f:
        cluster = tomllib.load(f).get("cluster", {})
    ignored = []
    names = list(scenario.conf)
    if names:
        shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
        ignored.append(f"[config] ({shown})")
    shape = sorted(k for k in cluster if k != "am_heartbeat_ms")
    if shape:
        ignored.append(f"[cluster] ({', '.join(shape)})")
    return ignored


def read_workload(args: argparse.Namespace) -> tuple[str, Workload, int, dict[str, str]]:
    """(name, workload, AM heartbeat ms, host -> rack from the trace)."""
    kind = "NATIVE" if is_scenario(args.traces[0], args.tracetype) else args.tracetype or "SLS"
    kind = kind.upper()
    if kind not in TRACE_TYPES:
        raise InputError("--tracetype", args.tracetype, f"expected one of {', '.join(TRACE_TYPES)}")
    name = ",".join(Path(t).name for t in args.traces)
    if kind == "NATIVE":
        from emu.scenario import native

        if len(args.traces) != 1:
            raise InputError("emu replay", None, "give one scenario file")
        scenario = native.load(args.traces[0])
        ignored = _ignored_by_a_running_cluster(args.traces[0], scenario)
        if ignored and not args.workload_only:
            raise InputError(
                args.traces[0],
                None,
                f"a running cluster keeps its own configuration and nodes, so this replay "
                f"would ignore {' and '.join(ignored)}; start a cluster from the scenario "
                "with emu cluster up --trace FILE, run it in one process with emu run FILE, "
                "or pass --workload-only to replay its jobs here anyway",
            )
        if scenario.faults:
            C.warn("the scenario's faults are ignored by `emu replay` (inject them by hand)")
        racks = {n.host: n.rack for n in scenario.nodes}
        return scenario.name, scenario.workload, scenario.am_heartbeat_ms, racks
    from emu.config.sls_runner import SlsSettings
    from emu.rm.settings import RMSettings
    from emu.scenario import read_trace

    conf = C.load_configuration(args.conf_dir, C.parse_overrides(args.conf))
    types = RMSettings.from_conf(conf).resource_types
    settings = SlsSettings.from_conf(conf, types)
    workload = read_trace(
        kind,
        args.traces,
        container_default=settings.container_resource,
        am_default=settings.am_container_resource,
        resource_types=types,
        seed=args.seed,
    )
    jobs = []
    for job in workload.jobs:
        am_type = job.params.get("am_type")
        if am_type is not None:
            am_kind = settings.am_kind(am_type)
            if am_kind is None:
                raise InputError(
                    name, f"job {job.job_id}", f"AM type {am_type!r} has no simulator configured"
                )
            job = replace(job, am_type=am_kind)
        jobs.append(job)
    workload.jobs = jobs
    racks = {n.host: n.rack for n in workload.trace_nodes}
    return name, workload, settings.am_heartbeat_interval_ms, racks


class RetryingClient(RMClient):
    """An RMClient that sends a request again until the RM answers (it may
    be restarting), and takes "already submitted" for a resubmission as done."""

    async def call(self, mtype: str, **fields: Any) -> dict[str, Any]:
        attempt = 0
        while True:
            attempt += 1
            try:
                return await super().call(mtype, **fields)
            except TransportError as e:
                if attempt == 1 or attempt % 10 == 0:
                    log.warning("RM not answering, retrying", request=mtype, error=str(e))
            except RMRequestError as e:
                if attempt > 1 and mtype == "submit_application" and "already submitted" in str(e):
                    return {"app_id": fields["app_id"]}
                raise
            await trio.sleep(C.sim_seconds(0.5))


def main(args: argparse.Namespace) -> int:
    C.configure_logging(args.log_level)
    name, workload, am_heartbeat_ms, trace_racks = read_workload(args)
    if not workload.jobs:
        raise InputError(",".join(args.traces), None, "no job to replay")
    rm = C.rm_addresses(args.rm)
    keys = (
        security.load(args.keys, serving=False, client_key=args.client_key) if args.keys else None
    )
    security.install(keys)
    epoch, rate = C.cluster_clock(rm.client, keys.client if keys else None, args.connect_timeout)
    out = outdir.make(args.output_dir) if args.output_dir else None
    result: dict[str, Any] = {}
    wall_start = time.perf_counter()

    async def run(nursery: trio.Nursery) -> None:
        timeout = C.sim_seconds(CALL_TIMEOUT_S)
        async with connect(rm.client, identity="", codec=CODEC) as conn:
            client = RetryingClient(conn, timeout=timeout)
            racks = dict(trace_racks)
            racks.update({n["host"]: n["rack"] for n in await client.list_nodes()})
            t0 = math.ceil(trio.current_time())
            t0_ms = t0 * 1000
            shifted = Workload(
                [
                    replace(
                        j,
                        submit_ms=j.submit_ms + t0_ms,
                        end_ms=None if j.end_ms is None else j.end_ms + t0_ms,
                    )
                    for j in workload.jobs
                ],
                workload.trace_nodes,
            )
            replayer = Replayer(client, shifted, racks, am_heartbeat_ms, args.poll_ms)
            nursery.start_soon(_submit_all, replayer)
            reports = await _wait(client, replayer, len(shifted.jobs), args.poll_ms)
            result["reports"] = reports
            result["metrics"] = await client.cluster_metrics()
            result["t0_ms"] = t0_ms
            result["end_ms"] = round(trio.current_time() * 1000)
            result["app_of_job"] = dict(replayer.app_of_job)

    why = trio.run(C.until_signal, run, args.parent_pid, clock=ScaledWallClock(epoch, rate))
    if why is not None:
        C.warn(f"replay interrupted ({why})")
        return 130
    t0_ms = result["t0_ms"]
    by_app = {r["app_id"]: r for r in result["reports"]}
    jobs = []
    for job in workload.jobs:
        app_id = result["app_of_job"][job.job_id]
        if app_id not in by_app:
            raise RuntimeError(
                f"the RM has no report of {app_id} (job {job.job_id}) at the end of the replay: "
                "it restarted without recovery (yarn.resourcemanager.recovery.enabled)"
            )
        report = dict(by_app[app_id])
        for key in ("submit_ms", "started_ms", "finished_ms"):
            if report[key] >= 0:
                report[key] -= t0_ms
        report["job_id"] = job.job_id
        report["trace_queue"] = job.queue
        jobs.append(report)
    simulated_ms = result["end_ms"] - t0_ms
    data = outputs.summary(name, args.seed or 0, jobs, result["metrics"], simulated_ms)
    if out is not None:
        outputs.write_jobruntime(out / "jobruntime.csv", jobs, round(epoch * 1000) + t0_ms)
        outputs.write_summary(out / "summary.json", data)
    wall = time.perf_counter() - wall_start
    return outputs.print_report(
        data,
        f"wall {wall:.2f} s at rate {rate:g}; replayed against {rm.client}"
        + (f"; outputs in {out}" if out is not None else ""),
        rate=rate,
    )


async def _submit_all(replayer: Replayer) -> None:
    for job in sorted(replayer.workload.jobs, key=lambda j: (j.submit_ms, j.job_id)):
        await trio.sleep_until(max(job.submit_ms / 1000, trio.current_time()))
        await replayer.submit(job)


async def _wait(
    client: RetryingClient, replayer: Replayer, total: int, poll_ms: int
) -> list[dict[str, Any]]:
    """Until every job of ours was submitted and has ended; their reports.

    Applications the RM no longer knows (three polls in a row) mean it
    restarted without recovery: that is an error, not something to wait for.
    """
    missing_polls = 0
    ended: dict[str, dict[str, Any]] = {}
    while True:
        await trio.sleep(poll_ms / 1000)
        # Both taken before the request: a submission that completes while
        # it is in flight must wait for the next poll, not end the wait
        # without its app's report.
        ours = set(replayer.app_of_job.values())
        all_submitted = len(ours) >= total
        # A finished app's report is kept as soon as seen: the RM removes the
        # oldest finished apps (yarn.resourcemanager.max-completed-applications).
        listed = {r["app_id"]: r for r in await client.list_apps() if r["app_id"] in ours}
        ended.update((a, r) for a, r in listed.items() if r["state"] in FINAL)
        reports = list({**ended, **listed}.values())
        missing = ours - {r["app_id"] for r in reports}
        missing_polls = missing_polls + 1 if missing else 0
        if missing_polls >= 3:
            raise RuntimeError(
                f"the RM no longer knows {len(missing)} of this replay's applications "
                f"(e.g. {min(missing)}): it restarted without recovery "
                "(yarn.resourcemanager.recovery.enabled)"
            )
        if not all_submitted:
            continue
        if not missing and all(r["state"] in FINAL for r in reports):
            return reports

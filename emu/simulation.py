"""A whole cluster in one process on the virtual clock.

Builds the RM, one NodeManager host serving every node, the AM runner and
the replayer, on `mem://` endpoints by default, injects the scenario's faults at
their times, and runs until every job has ended. The actors are the same
ones a multi-process cluster runs; only the addresses and the clock differ
(a test runs this same assembly over ZeroMQ on loopback, on scaled wall time).
"""

from __future__ import annotations

import gc
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import IO, Any

import trio

from emu.am import AMDriver, AMFaults, run_am
from emu.client import RMClient
from emu.clock import ScaledWallClock, poll_io_sparsely, run_deterministically, virtual_clock
from emu.config.configuration import Configuration
from emu.errors import InputError
from emu.metrics.cluster_invariants import ClusterInvariantBroken, check_final, check_state
from emu.metrics.eventlog import EventLog
from emu.metrics.fault_report import FaultReport, ObservedEventLog
from emu.msg.codec import CODEC
from emu.nm import NMNode, NodeManagerHost
from emu.replay import Replayer
from emu.resources import Resource
from emu.rm import app as app_sm
from emu.rm import recovery, stall
from emu.rm.actor import ResourceManager, RMAddresses
from emu.rm.app import REPORT_KEYS, RMApp
from emu.rm.scheduler.activities import Entry, wait_entry
from emu.scenario.native import LABEL_CHANGES, Change, Fault, Scenario
from emu.timing import YARN, Timing
from emu.transport import connect, in_process
from emu.workload import NodeSpec, Workload

DEFAULT_NODE = Resource(8192, 8)


# The cyclic collector's young-generation threshold during a run. A replay
# allocates hundreds of thousands of short-lived messages and records, freed
# by reference counting as soon as they are done with; at Python's default
# (700, 10, 10) the collector ran ~750 times in a 10-minute P1 replay and,
# with the full collections those trigger over a 90 MB heap, took 5-15 % of
# its CPU (P1 capacity quick: 75x at the default, 92x at this setting). The
# older generations keep their default ratios, so full collections still
# come (every ~2 M allocations) and a long run's cyclic garbage stays
# bounded (P1 capacity, whole hour: peak RSS 165 MB, 173 MB at (50,000, 20,
# 100), whose full collections hardly ever run).
RUN_GC_THRESHOLD = (20_000, 10, 10)


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Python's cyclic garbage collector at `RUN_GC_THRESHOLD` for the
    duration (it changes when garbage is found, never what a run does),
    and what is alive when the run starts (the workload read from its
    trace, the configuration: at 10,000 nodes hundreds of MB) moved out of
    its reach (`gc.freeze`): a full collection then walks only what the run
    made, not the inputs again each time. No collection first (in a test
    process with many runs it cost more than it saved): cyclic garbage
    already there waits for the end of the run."""
    before = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(*RUN_GC_THRESHOLD)
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()


@dataclass
class RunResult:
    """What a finished run knows: final app reports keyed by job, metrics."""

    jobs: list[dict[str, Any]]
    metrics: dict[str, Any]
    nodes: list[dict[str, Any]]
    simulated_ms: int
    wall_seconds: float
    heartbeats: int
    rm_requests: dict[str, int]
    invalid_transitions: dict[str, int]
    stalled: str | None = None
    """Why the run stopped before every job ended (it could never make
    progress); None when every job ended."""
    why_pending: dict[str, dict[str, list[list[Any]]]] = field(default_factory=dict)
    """Apps the scheduler held back, with their recent decisions (see
    `emu.rm.scheduler.activities`)."""
    faults: dict[str, Any] = field(default_factory=dict)
    """What was injected and what recovered (emu.metrics.fault_report)."""


LOST_IN_RESTART = (
    "Application lost in a ResourceManager restart without recovery "
    "(yarn.resourcemanager.recovery.enabled is false)"
)


class RemovedApps:
    """What the outputs need of the apps the RM no longer knows at the end
    of a run: those it removed (`emu.rm.retention`) and those an RM restart
    lost. Their final reports are kept as tuples (a 24-hour run removes
    thousands), with why the scheduler held them back."""

    __slots__ = ("_reports", "_waits", "rm")

    def __init__(self, rm: ResourceManager) -> None:
        self.rm = rm
        self._reports: dict[str, tuple[Any, ...]] = {}
        self._waits: dict[str, tuple[tuple[Entry, ...], tuple[Entry, ...]]] = {}
        self.attach()

    def attach(self) -> None:
        """Listen to the RM's current context (again after a restart)."""
        self.rm.ctx.completed_apps.listeners.append(self._removing)

    def _removing(self, app: RMApp) -> None:
        self._reports[app.app_id] = tuple(app.report().values())
        held = self.rm.ctx.scheduler.activities.held_back(app.app_id)
        if held is not None:
            self._waits[app.app_id] = held

    def restarting(self, recovery: bool) -> int:
        """The RM is about to lose its memory. Keep every finished app's
        report (the state store may hold fewer) and the scheduler's decision
        logs (never stored); without recovery, every unfinished app is lost:
        it ends FAILED, saying why (YARN's clients would be told it does not
        exist). Returns how many apps were unfinished."""
        ctx = self.rm.ctx
        now = ctx.now_ms()
        unfinished = 0
        for app in ctx.apps.values():
            if app.state in app_sm.FINAL:
                self._reports[app.app_id] = tuple(app.report().values())
                continue
            unfinished += 1
            if not recovery:
                report = app.report()
                report.update(
                    state=app_sm.FAILED,
                    final_status="FAILED",
                    finished_ms=now,
                    diagnostics=LOST_IN_RESTART,
                )
                self._reports[app.app_id] = tuple(report.values())
        activities = ctx.scheduler.activities
        for app_id in ctx.apps:
            held = activities.held_back(app_id)
            if held is not None:
                self._waits[app_id] = held
        return unfinished

    def reports(self) -> dict[str, dict[str, Any]]:
        """App id -> final report of every removed app."""
        keys = REPORT_KEYS
        return {app_id: dict(zip(keys, v, strict=True)) for app_id, v in self._reports.items()}

    def waits(self) -> dict[str, dict[str, list[list[Any]]]]:
        """`Activities.waits()` of every app, removed or retained, by app id."""
        merged = {app_id: wait_entry(*held) for app_id, held in self._waits.items()}
        merged.update(self.rm.ctx.scheduler.activities.waits())
        return dict(sorted(merged.items()))


@dataclass
class Simulation:
    conf: Configuration
    nodes: list[NodeSpec]
    workload: Workload
    faults: list[Fault]
    seed: int = 0
    am_heartbeat_ms: int = 1000
    node_default: Resource = DEFAULT_NODE
    events: EventLog | None = None
    on_tick: Callable[[ResourceManager], None] | None = None
    on_start: Callable[[ResourceManager], None] | None = None
    """Called with the RM once it is built, before anything runs (SLS's
    scheduler wrapper hooks in here)."""
    rm_addresses: RMAddresses | None = None
    nm_address: str = "mem://nm-0"
    check_invariants: bool = False
    """Check the RM's state invariants (emu.metrics.cluster_invariants) every
    `invariant_interval_ms` and at the end; a broken one ends the run with
    ClusterInvariantBroken. Every 5 simulated seconds costs a few percent of
    a small run's time (every second: about 20 %)."""
    invariant_interval_ms: int = 5000
    changes: list[Change] = field(default_factory=list)
    """What-ifs at their times (`emu.scenario.native.Change`): queues
    refreshed, nodes added or decommissioned."""
    timing: Timing = YARN
    """When the AMs and NMs act and what a job's end is: YARN's, or SLS's
    (emu.timing; `emu sls`'s default)."""
    am_driver: bool = True
    """On `mem://`, step every AM from one task (`emu.am.driver`); False, or
    over ZeroMQ: a task per AM, as an NM process runs them. The driver runs
    the AMs in the order their tasks would run, so both paths give the same
    outputs (tests/integration/test_am_driver.py); the driver is cheaper."""
    nm_host: NodeManagerHost | None = field(default=None, init=False)
    """The NodeManager host serving every node, once it serves."""
    rm_bound: RMAddresses | None = field(default=None, init=False)
    """Where the RM's services listen, once they do (port 0 resolved)."""

    @classmethod
    def of_scenario(cls, scenario: Scenario, **kw: Any) -> Simulation:
        """The simulation of an emu scenario file: its configuration, cluster,
        workload, faults, seed and AM heartbeat; `kw` sets the other fields
        (or overrides these, e.g. `seed`)."""
        fields: dict[str, Any] = {
            "conf": scenario.conf,
            "nodes": scenario.nodes,
            "workload": scenario.workload,
            "faults": scenario.faults,
            "seed": scenario.seed,
            "am_heartbeat_ms": scenario.am_heartbeat_ms,
            "changes": scenario.changes,
        }
        return cls(**{**fields, **kw})

    async def run(self) -> RunResult:
        with fewer_collections():
            if not recovery.enabled(self.conf):
                return await self._run(self.conf)
            # A run of its own must never recover another run's apps: its state
            # store lives (and dies) with it, wherever the configuration points.
            with tempfile.TemporaryDirectory(prefix="emu-rmstore-") as store:
                conf = Configuration()
                conf.update(self.conf)
                conf.set(recovery.STORE_URI, store, "emu: the run's own state store")
                return await self._run(conf)

    async def _run(self, conf: Configuration) -> RunResult:
        started = time.perf_counter()
        poll_io_sparsely()
        fault_report = FaultReport()
        rm = ResourceManager(
            conf,
            self.rm_addresses or RMAddresses.in_memory(),
            ObservedEventLog(self.events or EventLog(), fault_report.observe),
        )
        removed = RemovedApps(rm)
        if self.on_start is not None:
            self.on_start(rm)
        am_faults = AMFaults()

        async def am_runner(am: dict[str, Any], node_id: str) -> None:
            await run_am(am, am_faults)

        nm_nodes = [
            NMNode(n.host, n.host, n.rack, n.resource or self.node_default, n.labels)
            for n in self.nodes
        ]
        racks = {n.host: n.rack for n in self.nodes}
        broken: list[ClusterInvariantBroken] = []
        async with trio.open_nursery() as nursery:
            addrs = self.rm_bound = await nursery.start(rm.run)
            local = all(map(in_process, (self.nm_address, addrs.am_protocol)))
            nm = NodeManagerHost(
                nm_nodes,
                addrs.resource_tracker,
                self.nm_address,
                am_runner,
                self.seed,
                am_driver=AMDriver(am_faults) if self.am_driver and local else None,
                first_heartbeat_after_interval=self.timing.nm_first_heartbeat_after_interval,
            )
            await nursery.start(nm.run)
            self.nm_host = nm
            async with (
                connect(addrs.client, identity="replayer", codec=CODEC) as conn,
                connect(addrs.admin, identity="admin", codec=CODEC) as admin_conn,
            ):
                client = RMClient(conn)
                replayer = Replayer(
                    client, self.workload, racks, self.am_heartbeat_ms, timing=self.timing
                )
                faults_done = trio.Event()
                if self.faults:
                    nursery.start_soon(
                        self._inject,
                        self.faults,
                        rm,
                        removed,
                        nm,
                        am_faults,
                        replayer,
                        RMClient(admin_conn),
                        fault_report,
                        faults_done,
                    )
                else:
                    faults_done.set()
                changes_done = trio.Event()
                if self.changes:
                    nursery.start_soon(
                        self._change, self.changes, nm, RMClient(admin_conn), changes_done
                    )
                else:
                    changes_done.set()
                if self.on_tick is not None:
                    nursery.start_soon(self._ticks, rm)
                if self.check_invariants:
                    nursery.start_soon(self._watch_invariants, rm, nursery.cancel_scope, broken)
                stalled: list[str] = []
                with trio.CancelScope() as replay_scope:
                    nursery.start_soon(
                        self._watch_stall,
                        rm,
                        replayer,
                        (faults_done, changes_done),
                        stalled,
                        replay_scope,
                    )
                    reports = await replayer.run()
                if stalled:
                    reports = await client.list_apps()
                metrics = await client.cluster_metrics()
                nodes = await client.list_nodes()
            nursery.cancel_scope.cancel()
        if broken:
            raise broken[0]
        if self.check_invariants and not stalled:
            check_final(rm.ctx)
        by_app = removed.reports()
        by_app.update((r["app_id"], r) for r in reports)
        jobs = []
        for job in self.workload.jobs:
            report = dict(by_app[replayer.app_of_job[job.job_id]])
            report["job_id"] = job.job_id
            report["trace_queue"] = job.queue
            if self.timing.end_at_unregister and report.get("unregistered_ms", -1) >= 0:
                # SLS's jobruntime.csv ends a job when its AM unregistered.
                report["finished_ms"] = report["unregistered_ms"]
            jobs.append(report)
        return RunResult(
            jobs=jobs,
            metrics=metrics,
            nodes=nodes,
            simulated_ms=round(trio.current_time() * 1000),
            wall_seconds=time.perf_counter() - started,
            heartbeats=nm.heartbeats,
            rm_requests=dict(rm.services.requests),
            invalid_transitions=dict(rm.ctx.invalid_transitions),
            stalled=stalled[0] if stalled else None,
            why_pending=removed.waits(),
            faults=fault_report.to_dict(jobs, am_faults.tasks_rerun),
        )

    async def _watch_invariants(
        self, rm: ResourceManager, scope: trio.CancelScope, broken: list[ClusterInvariantBroken]
    ) -> None:
        """Check the RM's state between events; the first broken invariant
        stops the run (raised once the nursery has unwound)."""
        while True:
            await trio.sleep(self.invariant_interval_ms / 1000)
            try:
                check_state(rm.ctx)
            except ClusterInvariantBroken as e:
                broken.append(e)
                scope.cancel()
                return

    async def _ticks(self, rm: ResourceManager) -> None:
        assert self.on_tick is not None
        while True:
            self.on_tick(rm)
            await trio.sleep(1)

    async def _watch_stall(
        self,
        rm: ResourceManager,
        replayer: Replayer,
        scheduled: tuple[trio.Event, ...],
        stalled: list[str],
        replay_scope: trio.CancelScope,
    ) -> None:
        """Stop the replay, with the reason in `stalled`, once the RM has been
        idle (`emu.rm.stall`) for a whole window after the last submission,
        fault and change (`scheduled`: each set when its kind is all done).
        It only reads the RM, a few times per window."""
        window = stall.window_ms(rm.ctx)
        idle_since: int | None = None
        ctx = rm.ctx
        best = stall.progress_mark(ctx)
        looping_since: tuple[int, int] | None = None  # (time, preempted then)
        ended = stall.finished_mark(ctx)
        while True:
            await trio.sleep(window / 4000)
            now = round(trio.current_time() * 1000)
            if rm.ctx is not ctx:  # a new one after an RM restart, counting afresh
                ctx = rm.ctx
                best = (-1, -1)
                looping_since = None
            before, ended = ended, stall.finished_mark(ctx)
            if ended[:2] != before[:2] or ended[2] == before[2]:
                looping_since = None  # work ended, or nothing was preempted
            elif looping_since is None:
                looping_since = (now, before[2])
            elif now - looping_since[0] >= window:
                preempted = ended[2] - looping_since[1]
                stalled.append(stall.explain_loop(ctx, now - looping_since[0], preempted))
                replay_scope.cancel()
                return
            mark = stall.progress_mark(ctx)
            # Progress is a mark above the best seen: an AM container's attempt
            # is counted before its container, so a loop of AM preemptions moves
            # the mark down and up again without passing its best.
            progressed = mark[0] > best[0] or mark[1] > best[1]
            best = (max(mark[0], best[0]), max(mark[1], best[1]))
            submitted = len(replayer.app_of_job) == len(self.workload.jobs)
            done = all(e.is_set() for e in scheduled)
            if progressed or not (submitted and done and stall.idle(ctx)):
                idle_since = None
            elif idle_since is None:
                idle_since = now
            elif now - idle_since >= window:
                stalled.append(stall.explain(ctx, now - idle_since))
                replay_scope.cancel()
                return

    async def _change(
        self, changes: list[Change], nm: NodeManagerHost, admin: RMClient, done: trio.Event
    ) -> None:
        """Apply each what-if at its time through the RM's admin service, as an
        operator would (`yarn rmadmin`), or by starting NMs. A refresh the
        scheduler refuses stops the run with its reason."""
        for change in changes:
            await trio.sleep_until(max(change.at_ms / 1000, trio.current_time()))
            if self.events is not None:
                self.events.emit("change", kind=change.kind, hosts=list(change.hosts))
            if change.kind == "refresh_queues":
                reply = await admin.call(
                    "refresh_queues",
                    properties=dict(change.properties),
                    allocations=change.allocations,
                )
                if not reply.get("ok"):
                    raise InputError(
                        change.where or "changes",
                        f"refresh_queues at {change.at_ms} ms",
                        str(reply.get("reason")),
                    )
            elif change.kind in LABEL_CHANGES:
                await self._label_change(change, admin)
            elif change.kind == "add_nodes":
                assert change.resource is not None
                for host in change.hosts:
                    nm.add_node(NMNode(host, host, change.rack, change.resource, ()))
            elif change.kind == "remove_nodes":
                for host in change.hosts:
                    await admin.call("decommission_node", node_id=nm.by_host[host].node_id)
        done.set()

    async def _label_change(self, change: Change, admin: RMClient) -> None:
        """A node-label change through the admin service, as `yarn rmadmin`
        makes it; a refusal stops the run with Hadoop's reason."""
        if change.kind == "add_node_labels":
            reply = await admin.call("add_node_labels", labels=[list(p) for p in change.labels])
            field = "labels"
        elif change.kind == "remove_node_labels":
            reply = await admin.call("remove_node_labels", names=list(change.names))
            field = "labels"
        else:
            reply = await admin.call(
                "replace_labels_on_node",
                mapping=[list(p) for p in change.mapping],
                fail_on_unknown=change.fail_on_unknown,
            )
            field = "nodes"
        if reply.get("type") == "error" or not reply.get("ok"):
            reason = reply.get("reason") or reply.get("message")
            raise InputError(
                change.where or "changes",
                field,
                f"{change.kind} at {change.at_ms} ms refused: {reason}",
            )

    async def _inject(
        self,
        faults: list[Fault],
        rm: ResourceManager,
        removed: RemovedApps,
        nm: NodeManagerHost,
        am_faults: AMFaults,
        replayer: Replayer,
        admin: RMClient,
        report: FaultReport,
        done: trio.Event,
    ) -> None:
        for fault in faults:
            await trio.sleep_until(max(fault.at_ms / 1000, trio.current_time()))
            report.injected[fault.kind] += 1
            if rm_events := self.events:
                rm_events.emit("fault", kind=fault.kind, target=fault.target)
            if fault.kind == "nm_crash":
                nm.crash_node(fault.target)
            elif fault.kind == "nm_restart":
                nm.restart_node(fault.target)
            elif fault.kind == "am_hang":
                am_faults.hang_jobs.add(fault.target)
            elif fault.kind == "am_crash":
                am_faults.crash_jobs.add(fault.target)
            elif fault.kind == "decommission":
                await admin.call("decommission_node", node_id=fault.target)
            elif fault.kind == "rm_restart":
                recovering = rm.ctx.recovery is not None
                unfinished = removed.restarting(recovering)
                # YARN's cluster timestamp is the RM's start time: new app ids.
                rm.restart(cluster_timestamp=max(fault.at_ms, rm.ctx.cluster_timestamp + 1))
                removed.attach()
                report.rm_restarted(recovering, unfinished)
            elif fault.kind == "kill_app":
                while fault.target not in replayer.app_of_job:
                    await trio.sleep(0.001)
                await replayer.client.call(
                    "kill_application", app_id=replayer.app_of_job[fault.target]
                )
        done.set()


def run_virtual(
    sim: Simulation, events_stream: IO[str] | None = None, rate: float | None = None
) -> RunResult:
    """Run a simulation on the virtual clock, deterministically for its seed,
    or with `rate` on scaled wall time (rate simulated seconds per wall second,
    to watch it go)."""
    if events_stream is not None:
        sim.events = EventLog(events_stream)
    clock = ScaledWallClock(time.time(), rate) if rate else virtual_clock()
    return run_deterministically(sim.run, clock)

"""A whole federation in one process on the virtual clock.

Per sub-cluster: an emu RM (its own configuration and scheduler, emu's or
Hadoop's), a NodeManager host for its nodes with the AMRMProxy enabled, and
that AMRMProxy; for the federation: the Router (the replayer's client
service), the state store, and the sub-clusters' membership heartbeats into
it. The actors are the ones a single cluster runs, on `mem://` addresses
named after their sub-cluster; the run is deterministic for its seed (the
policies' random draws come from it, `emu.federation.policies.Draws`).

Sub-clusters are members of the federation (SC_RUNNING) from the start, as
in a federation that was up before the trace began; each RM heartbeats its
metrics into the store every `yarn.federation.state-store.heartbeat-interval-secs`.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import trio

from emu.am import AMDriver, AMFaults, run_am
from emu.client import RMClient
from emu.clock import poll_io_sparsely, run_deterministically, virtual_clock
from emu.federation.amrmproxy import (
    CONNECT_MAX_WAIT,
    CONNECT_MAX_WAIT_DEFAULT_MS,
    SUBCLUSTER_TIMEOUT,
    SUBCLUSTER_TIMEOUT_DEFAULT_MS,
    AMRMProxy,
    FederationStats,
)
from emu.federation.description import Federation
from emu.federation.gpg import PolicyGenerator, global_policy
from emu.federation.policies import Draws, PolicyFacade, Resolver
from emu.federation.router import SUBMIT_RETRY, SUBMIT_RETRY_DEFAULT, Router
from emu.federation.state_store import (
    CLEANER_INTERVAL,
    CLEANER_INTERVAL_DEFAULT_MS,
    HEARTBEAT_EXPIRATION,
    HEARTBEAT_EXPIRATION_DEFAULT_MS,
    HEARTBEAT_INTERVAL,
    HEARTBEAT_INTERVAL_DEFAULT_S,
    INITIAL_DELAY,
    INITIAL_DELAY_DEFAULT_MS,
    LOST,
    NEW,
    RUNNING,
    FederationStateStore,
)
from emu.metrics.eventlog import EventLog
from emu.msg.codec import CODEC
from emu.nm import NMNode, NodeManagerHost
from emu.replay import Replayer
from emu.rm import app as app_sm
from emu.rm import recovery, stall
from emu.rm.actor import ResourceManager, RMAddresses
from emu.rm.scheduler.abstract_scheduler import RM_EPOCH
from emu.simulation import DEFAULT_NODE, RemovedApps, fewer_collections
from emu.transport import connect, serve

CLUSTER_ID = "yarn.resourcemanager.cluster-id"
FEDERATION_ENABLED = "yarn.federation.enabled"
ROUTER_ADDRESS = "mem://router/client"


@dataclass
class SubClusterResult:
    """One sub-cluster's part of a finished run."""

    id: str
    metrics: dict[str, Any]
    nodes: list[dict[str, Any]]
    heartbeats: int
    rm_requests: dict[str, int]
    invalid_transitions: dict[str, int]


@dataclass
class FederationResult:
    """What a finished federated run knows."""

    jobs: list[dict[str, Any]]
    """Final app reports keyed by job (`job_id`, `home` added)."""
    metrics: dict[str, Any]
    """The Router's merged cluster metrics."""
    subclusters: list[SubClusterResult]
    simulated_ms: int
    wall_seconds: float
    stats: FederationStats
    retries: int
    stalled: str | None = None


@dataclass
class FederatedSimulation:
    fed: Federation
    seed: int = 0
    events: dict[str, EventLog] = field(default_factory=dict)
    """Sub-cluster id -> its RM's event log (none: a log kept in memory)."""
    on_tick: Callable[[dict[str, ResourceManager]], None] | None = None
    gpg: PolicyGenerator | None = field(default=None, init=False)
    """The Global Policy Generator, once the run has built it."""

    async def run(self) -> FederationResult:
        # A run's sub-cluster RMs keep their state stores (with recovery on)
        # in a directory of the run's own: they must never recover another
        # run's apps, nor each other's.
        with fewer_collections(), tempfile.TemporaryDirectory(prefix="emu-fedstore-") as stores:
            for sc in self.fed.subclusters:
                if recovery.enabled(sc.conf):
                    sc.conf.set(
                        recovery.STORE_URI, str(Path(stores) / sc.id), "emu: the run's own store"
                    )
            return await self._run()

    async def _run(self) -> FederationResult:
        started = time.perf_counter()
        poll_io_sparsely()
        fed = self.fed
        store = FederationStateStore()
        draws = Draws.seeded(self.seed)
        resolver = Resolver.of((n.host, sc.id, n.rack) for sc in fed.subclusters for n in sc.nodes)
        stats = FederationStats()
        facade = PolicyFacade(fed.policy, store.policies, draws, resolver, fed.conf)
        gpg_policy, gpg_interval_ms, readonly, blacklist = global_policy(fed.conf, fed.path)
        gpg = PolicyGenerator(gpg_policy, readonly, blacklist, store.policies)
        self.gpg = gpg
        rms: dict[str, ResourceManager] = {}
        for i, sc in enumerate(fed.subclusters):
            conf = sc.conf
            if conf.get(CLUSTER_ID) is None:
                conf.set(CLUSTER_ID, sc.id, "emu: the sub-cluster's id")
            conf.set(FEDERATION_ENABLED, "true", "emu: a federation's sub-cluster")
            if conf.get(RM_EPOCH) is None:
                # Container ids apart: an AM's containers from its home and
                # from its unmanaged AMs share its attempt id.
                conf.set(RM_EPOCH, str(i), "emu: the sub-cluster's place in the federation")
            rms[sc.id] = ResourceManager(
                conf,
                RMAddresses.in_memory(f"{sc.id}/rm"),
                self.events.get(sc.id) or EventLog(),
                cluster_timestamp=i + 1,
            )
            store.register(sc.id, 0)
        removed = {sid: RemovedApps(rm) for sid, rm in rms.items()}

        am_faults = AMFaults()

        async def am_runner(am: dict[str, Any], node_id: str) -> None:
            await run_am(am, am_faults)

        nm_hosts: dict[str, NodeManagerHost] = {}
        stalled: list[str] = []
        async with trio.open_nursery() as nursery, AsyncExitStack() as stack:
            bound = {sid: await nursery.start(rm.run) for sid, rm in rms.items()}
            am_conns = {
                sid: await stack.enter_async_context(
                    connect(b.am_protocol, identity="amrmproxy", codec=CODEC)
                )
                for sid, b in bound.items()
            }
            client_conns = {
                sid: await stack.enter_async_context(
                    connect(b.client, identity="federation", codec=CODEC)
                )
                for sid, b in bound.items()
            }
            for sid, rm in rms.items():
                metrics = rm.services.client.metrics()
                store.heartbeat(sid, 0, _capability(metrics))
            for sc in fed.subclusters:
                proxy = AMRMProxy(
                    sc.id,
                    am_conns,
                    client_conns,
                    store.membership,
                    lambda home, queue: facade.amrm(queue, home),
                    stats,
                    fed.conf.get_int(SUBCLUSTER_TIMEOUT, SUBCLUSTER_TIMEOUT_DEFAULT_MS),
                    sc.conf.get_int(CONNECT_MAX_WAIT, CONNECT_MAX_WAIT_DEFAULT_MS),
                )
                proxy_address = f"mem://{sc.id}/amrmproxy"
                await nursery.start(partial(serve, proxy_address, proxy.handle, codec=CODEC))
                nm = NodeManagerHost(
                    [
                        NMNode(n.host, n.host, n.rack, n.resource or DEFAULT_NODE, n.labels)
                        for n in sc.nodes
                    ],
                    bound[sc.id].resource_tracker,
                    f"mem://{sc.id}/nm",
                    am_runner,
                    self.seed,
                    am_driver=AMDriver(am_faults),
                    amrmproxy=proxy_address,
                )
                await nursery.start(nm.run)
                nm_hosts[sc.id] = nm
            router = Router(
                client_conns,
                facade,
                store.membership,
                draws,
                lambda: round(trio.current_time() * 1000),
                fed.conf.get_int(SUBMIT_RETRY, SUBMIT_RETRY_DEFAULT),
                store.homes,
            )
            await nursery.start(partial(serve, ROUTER_ADDRESS, router.handle, codec=CODEC))
            interval_s = fed.conf.get_int(HEARTBEAT_INTERVAL, HEARTBEAT_INTERVAL_DEFAULT_S)
            down: set[str] = set()
            nursery.start_soon(self._membership_heartbeats, rms, store, interval_s, down)
            nursery.start_soon(self._clean_subclusters, store)
            faults_done = trio.Event()
            if fed.faults:
                nursery.start_soon(
                    self._inject, nursery, rms, removed, store, down, interval_s, faults_done
                )
            else:
                faults_done.set()
            if gpg_interval_ms > 0 and gpg_policy.name != "NoOpGlobalPolicy":
                nursery.start_soon(self._generate_policies, gpg, rms, store, gpg_interval_ms)
            if self.on_tick is not None:
                nursery.start_soon(self._ticks, rms)
            racks = {n.host: n.rack for sc in fed.subclusters for n in sc.nodes}
            async with connect(ROUTER_ADDRESS, identity="replayer", codec=CODEC) as conn:
                client = RMClient(conn)
                replayer = Replayer(client, fed.workload, racks, fed.am_heartbeat_ms)
                with trio.CancelScope() as replay_scope:
                    nursery.start_soon(
                        self._watch_stall, rms, replayer, stalled, replay_scope, faults_done
                    )
                    reports = await replayer.run()
                if stalled:
                    reports = await client.list_apps()
                metrics = await client.cluster_metrics()
                parts = []
                for sid, rm in rms.items():
                    nodes = (await RMClient(client_conns[sid]).call("list_nodes"))["nodes"]
                    parts.append(
                        SubClusterResult(
                            sid,
                            rm.services.client.metrics(),
                            nodes,
                            nm_hosts[sid].heartbeats,
                            dict(rm.services.requests),
                            dict(rm.ctx.invalid_transitions),
                        )
                    )
            nursery.cancel_scope.cancel()
        homes = router.routing.homes
        by_app: dict[str, dict[str, Any]] = {}
        for sid, r in removed.items():
            by_app.update((a, rep) for a, rep in r.reports().items() if homes.get(a) == sid)
        by_app.update((r["app_id"], r) for r in reports)
        jobs = []
        for job in fed.workload.jobs:
            app_id = replayer.app_of_job[job.job_id]
            report = dict(by_app[app_id])
            report["job_id"] = job.job_id
            report["trace_queue"] = job.queue
            report["home"] = homes.get(app_id, "")
            jobs.append(report)
        return FederationResult(
            jobs=jobs,
            metrics=metrics,
            subclusters=parts,
            simulated_ms=round(trio.current_time() * 1000),
            wall_seconds=time.perf_counter() - started,
            stats=stats,
            retries=router.routing.retries,
            stalled=stalled[0] if stalled else None,
        )

    async def _membership_heartbeats(
        self,
        rms: dict[str, ResourceManager],
        store: FederationStateStore,
        interval_s: int,
        down: set[str],
    ) -> None:
        """Each running RM's FederationStateStoreHeartbeat: its metrics, every
        interval (an RM that is down sends none)."""
        interval_s = interval_s if interval_s > 0 else HEARTBEAT_INTERVAL_DEFAULT_S
        while True:
            await trio.sleep(interval_s)
            now = round(trio.current_time() * 1000)
            for sid, rm in rms.items():
                # A rejoining RM (SC_NEW) first heartbeats after its initial delay.
                if sid not in down and store.members[sid].state != NEW:
                    store.heartbeat(sid, now, _capability(rm.services.client.metrics()))

    async def _clean_subclusters(self, store: FederationStateStore) -> None:
        """The Router's SubClusterCleaner: every `yarn.router.subcluster.cleaner.interval.time`,
        a member whose last heartbeat is older than `...heartbeat.expiration.time`
        is marked SC_LOST (the Router and AMRMProxy stop choosing it)."""
        conf = self.fed.conf
        interval = conf.get_time_ms(CLEANER_INTERVAL, CLEANER_INTERVAL_DEFAULT_MS)
        expiry = conf.get_time_ms(HEARTBEAT_EXPIRATION, HEARTBEAT_EXPIRATION_DEFAULT_MS)
        if interval <= 0:
            return
        while True:
            await trio.sleep(interval / 1000)
            now = round(trio.current_time() * 1000)
            for sid, m in store.members.items():
                if m.state == RUNNING and now - m.last_heartbeat_ms > expiry:
                    store.mark(sid, LOST)

    async def _inject(
        self,
        nursery: trio.Nursery,
        rms: dict[str, ResourceManager],
        removed: dict[str, RemovedApps],
        store: FederationStateStore,
        down: set[str],
        interval_s: int,
        done: trio.Event,
    ) -> None:
        """Sub-clusters going down and coming back at their times. Down: the
        RM process is gone (its memory lost; nothing answers; no membership
        heartbeat). Back: a new RM process on the same addresses, recovering
        its apps if `yarn.resourcemanager.recovery.enabled`, joining the
        federation as SC_NEW and heartbeating SC_RUNNING after
        `yarn.federation.state-store.heartbeat.initial-delay` (30 s)."""
        ids = list(rms)
        for fault in self.fed.faults:
            await trio.sleep_until(max(fault.at_ms / 1000, trio.current_time()))
            sid = fault.target
            rm = rms[sid]
            events = self.events.get(sid)
            if events is not None:
                events.emit("fault", kind=fault.kind, target=sid)
            if fault.kind == "subcluster_down":
                removed[sid].restarting(rm.ctx.recovery is not None)
                down.add(sid)
                assert rm.ctx.stop_rm is not None
                rm.ctx.stop_rm()
                continue
            n = len(ids)
            rm.renew(n + 1 + fault.at_ms * n + ids.index(sid))
            removed[sid].attach()
            await nursery.start(rm.run)
            down.discard(sid)
            store.register(sid, round(trio.current_time() * 1000), NEW)
            nursery.start_soon(self._rejoin, sid, rm, store, down)
        done.set()

    async def _rejoin(
        self, sid: str, rm: ResourceManager, store: FederationStateStore, down: set[str]
    ) -> None:
        delay = self.fed.conf.get_time_ms(INITIAL_DELAY, INITIAL_DELAY_DEFAULT_MS)
        await trio.sleep(max(delay, 1) / 1000)
        if sid not in down:
            now = round(trio.current_time() * 1000)
            store.heartbeat(sid, now, _capability(rm.services.client.metrics()))

    async def _generate_policies(
        self,
        gpg: PolicyGenerator,
        rms: dict[str, ResourceManager],
        store: FederationStateStore,
        interval_ms: int,
    ) -> None:
        """The Global Policy Generator at a fixed rate from the start, reading
        each RM's queues and pending apps as its REST views show them then."""

        def parent_queues() -> set[str]:
            names: set[str] = set()
            for rm in rms.values():
                names |= rm.ctx.scheduler.parent_queue_names()
            return names

        def pending(sid: str) -> int:
            return int(rms[sid].services.client.metrics()["apps_pending"])

        while True:
            gpg.run(round(trio.current_time() * 1000), store.active(), parent_queues, pending)
            await trio.sleep(interval_ms / 1000)

    async def _ticks(self, rms: dict[str, ResourceManager]) -> None:
        assert self.on_tick is not None
        while True:
            self.on_tick(rms)
            await trio.sleep(1)

    async def _watch_stall(
        self,
        rms: dict[str, ResourceManager],
        replayer: Replayer,
        stalled: list[str],
        scope: trio.CancelScope,
        faults_done: trio.Event,
    ) -> None:
        """Stop the replay, saying why, once every sub-cluster with unfinished
        apps has been idle (`emu.rm.stall`) and none has made progress for a
        whole window after the last submission."""
        window = max(stall.window_ms(rm.ctx) for rm in rms.values())
        best = {sid: stall.progress_mark(rm.ctx) for sid, rm in rms.items()}
        idle_since: int | None = None
        while True:
            await trio.sleep(window / 4000)
            now = round(trio.current_time() * 1000)
            progressed = False
            for sid, rm in rms.items():
                mark = stall.progress_mark(rm.ctx)
                if mark > best[sid]:
                    progressed = True
                    best[sid] = mark
            submitted = len(replayer.app_of_job) == len(self.fed.workload.jobs)
            submitted = submitted and faults_done.is_set()
            waiting = [sid for sid, rm in rms.items() if stall.idle(rm.ctx)]
            busy = any(
                not stall.idle(rm.ctx)
                and any(a.state not in app_sm.FINAL for a in rm.ctx.apps.values())
                for rm in rms.values()
            )
            if progressed or not submitted or not waiting or busy:
                idle_since = None
            elif idle_since is None:
                idle_since = now
            elif now - idle_since >= window:
                stalled.append(
                    "; ".join(
                        f"sub-cluster {sid}: {stall.explain(rms[sid].ctx, now - idle_since)}"
                        for sid in waiting
                    )
                )
                scope.cancel()
                return


def _capability(metrics: dict[str, Any]) -> dict[str, Any]:
    """What of a sub-cluster's membership heartbeat (Hadoop's
    ClusterMetricsInfo) a policy reads: its available memory (the
    load-based router policy's; the GPG reads the RMs' metrics live)."""
    return {"available_mb": metrics["available"].get("memory-mb", 0)}


def run_federation(sim: FederatedSimulation) -> FederationResult:
    """Run a federation on the virtual clock, deterministically for its seed."""
    return run_deterministically(sim.run, virtual_clock())

"""The ResourceManager actor: serves the four RM services on their
addresses, runs the liveness monitors, and launches AM containers.

This is the only part of the RM that touches transports. It hands each
request, as the transport delivers it (a malformed one as an `Invalid`
message, answered with an error), to `RMServices.serve` and returns its
reply. AM launches the RM core queues are carried out here, as YARN's
AMLauncher does, by calling `start_containers` on the node's NodeManager.

With `yarn.resourcemanager.recovery.enabled` the RM rebuilds its apps from
the state store before it serves, and its services apply the
work-preserving recovery additions (`emu.rm.recovery`). `cluster_metrics` replies also carry
the cluster clock (`epoch`, `rate`: a process joining the cluster starts its
own clock from them) and what the transport refused (`transport`, `auth`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import structlog
import trio

from emu.clock import advance_alone, after_everything_at
from emu.config.configuration import Configuration
from emu.metrics.eventlog import EventLog
from emu.msg import catalogue as C
from emu.msg.codec import CODEC
from emu.msg.types import Map, Message, ProtocolError, request
from emu.rm import recovery as rec
from emu.rm.context import RMContext
from emu.rm.scheduler import create as create_scheduler
from emu.rm.services import RMServices
from emu.rm.settings import RMSettings
from emu.timeouts import network_timeout
from emu.transport import (
    Connection,
    ServerStats,
    TransportError,
    connect,
    never_waits,
    serve,
    with_direct,
)

log = structlog.get_logger("emu.rm")

LAUNCH_TIMEOUT_S = 30.0


@dataclass
class RMAddresses:
    """Where each service listens. YARN's defaults are ports 8031 (resource
    tracker), 8030 (scheduler / AM protocol), 8032 (client), 8033 (admin)."""

    resource_tracker: str
    am_protocol: str
    client: str
    admin: str

    @classmethod
    def in_memory(cls, prefix: str = "rm") -> RMAddresses:
        return cls(
            f"mem://{prefix}/resource-tracker",
            f"mem://{prefix}/scheduler",
            f"mem://{prefix}/client",
            f"mem://{prefix}/admin",
        )

    @classmethod
    def tcp(cls, host: str, base: dict[str, int] | None = None) -> RMAddresses:
        ports = {"resource_tracker": 8031, "am_protocol": 8030, "client": 8032, "admin": 8033}
        ports.update(base or {})
        if ":" in host and not host.startswith("["):
            host = f"[{host}]"
        return cls(**{k: f"tcp://{host}:{p}" for k, p in ports.items()})

    @classmethod
    def from_port_base(cls, host: str, base: int = 8030) -> RMAddresses:
        """YARN's layout from a first port: AM protocol `base`, resource
        tracker `base+1`, client `base+2`, admin `base+3` (8030-8033)."""
        return cls.tcp(
            host,
            {
                "am_protocol": base,
                "resource_tracker": base + 1,
                "client": base + 2,
                "admin": base + 3,
            },
        )

    def items(self) -> list[tuple[str, str]]:
        return [
            (C.RESOURCE_TRACKER, self.resource_tracker),
            (C.AM_PROTOCOL, self.am_protocol),
            (C.CLIENT, self.client),
            (C.ADMIN, self.admin),
        ]


@dataclass
class ResourceManager:
    """The RM actor. Build it, then `await nursery.start(rm.run)`."""

    conf: Configuration
    addresses: RMAddresses
    events: EventLog = field(default_factory=EventLog)
    epoch: float = 0.0
    rate: float = 0.0
    cluster_timestamp: int = 0
    recovery_meta: dict[str, Any] | None = None
    """The state store's RM record (`emu.rm.recovery.open_meta`), when the
    caller opened it to pick the clock; opened here if recovery is on."""
    monitor: bool = False
    """Count each service's connection events (ZeroMQ: refused handshakes,
    oversize messages, peers that do not speak ZMTP)."""
    auth: Any = None
    """The ZAP handler's `emu.security.AuthStats`, reported in metrics."""

    def __post_init__(self) -> None:
        self._build()
        self.stats: dict[str, ServerStats] = {}
        self.connection_events: dict[str, Counter[str] | None] = {}
        self._launch_wakeup = trio.Event()
        self._async_wakeup = trio.Event()
        self._async_idle = False
        """The asynchronous-scheduling loop waits for `_async_wakeup`."""

    def _build(self) -> None:
        """The RM's whole in-memory state, new: context, scheduler, services."""
        settings = RMSettings.from_conf(self.conf)
        self.ctx = RMContext(settings, self.conf, self.events, self.cluster_timestamp)
        self.ctx.attach_scheduler(create_scheduler(self.ctx))
        self.services = RMServices(self.ctx, self.epoch, self.rate)
        if rec.enabled(self.conf):
            meta = self.recovery_meta
            if meta is None:
                meta = rec.open_meta(self.conf, self.epoch, self.rate, self.cluster_timestamp)
            self.ctx.recovery = rec.RMRecovery.from_conf(self.ctx, self.conf, meta)

    def restart(self, cluster_timestamp: int) -> None:
        """Restart in place, as a new RM process on the same addresses would
        start: everything in memory is lost (apps, nodes, the scheduler's
        state, queued AM launches); with recovery on, apps come back from
        the state store and keep the stored cluster timestamp, otherwise the
        new RM takes `cluster_timestamp` (YARN's is the RM's start time), so
        its application ids differ from the lost ones. The servers and
        loops keep running and reach the new state (ZeroMQ peers would
        reconnect; `mem://` ones never notice), so the restart takes no
        simulated time."""
        address = self.ctx.am_service_address
        self.renew(cluster_timestamp)
        self.ctx.am_service_address = address
        if self.ctx.recovery is not None:
            self.ctx.recovery.recover()

    def renew(self, cluster_timestamp: int) -> None:
        """The state a new RM process starts with (as `restart`), for an RM
        that stopped (crashed) and will `run` again: `run` recovers the
        stored apps when it starts serving."""
        self.cluster_timestamp = cluster_timestamp
        self.recovery_meta = None
        if rec.enabled(self.conf):
            # As `emu rm` starts: the store's identity wins (ids stay valid).
            self.recovery_meta = rec.open_meta(self.conf, self.epoch, self.rate, cluster_timestamp)
            self.cluster_timestamp = self.recovery_meta["cluster_timestamp"]
        labels = self.ctx.node_labels
        self._build()
        # Hadoop's node-label store is a file the new RM reads back.
        self.ctx.node_labels = labels.restarted()

    async def run(
        self, *, task_status: trio.TaskStatus[RMAddresses] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Serve until cancelled; reports the bound addresses once listening."""
        if self.ctx.recovery is not None:
            self.ctx.recovery.recover()
        async with trio.open_nursery() as nursery:
            self.ctx.stop_rm = nursery.cancel_scope.cancel
            bound = {}
            for service, address in self.addresses.items():
                stats = self.stats[service] = ServerStats()
                events = self.connection_events[service] = Counter() if self.monitor else None
                bound[service] = await nursery.start(
                    partial(
                        serve,
                        address,
                        self._handler(service),
                        stats=stats,
                        monitor=events,
                        codec=CODEC,
                    )
                )
            actual = RMAddresses(
                bound[C.RESOURCE_TRACKER], bound[C.AM_PROTOCOL], bound[C.CLIENT], bound[C.ADMIN]
            )
            self.ctx.am_service_address = actual.am_protocol
            for name, monitor in (
                ("nm", self.ctx.nm_liveness),
                ("am", self.ctx.am_liveness),
                ("container", self.ctx.container_expiry),
            ):
                nursery.start_soon(self._monitor_loop, name, monitor.check_interval_ms)
            if self.ctx.scheduler.update_interval_ms:
                nursery.start_soon(self._scheduler_loop, self.ctx.scheduler.update_interval_ms)
            if self.ctx.scheduler.node_sort_interval_ms > 0:
                nursery.start_soon(self._sort_loop, self.ctx.scheduler.node_sort_interval_ms)
            if self.ctx.scheduler.async_scheduling is not None:
                nursery.start_soon(self._async_loop)
            nursery.start_soon(self._launcher)
            task_status.started(actual)
        if self.ctx.failure is not None:
            raise self.ctx.failure

    def process_metrics(self) -> dict[str, Any]:
        """What this RM process adds to `cluster_metrics`: its clock and what
        its transport and ZAP handler refused."""
        out: dict[str, Any] = {
            "epoch": self.epoch,
            "rate": self.rate,
            "cluster_timestamp": self.ctx.cluster_timestamp,
            "errors": dict(sorted(self.services.errors.items())),
            "transport": {
                service: {
                    "requests": st.requests,
                    "replies": st.replies,
                    "dropped": st.dropped,
                    "handler_errors": st.handler_errors,
                    **dict(sorted((self.connection_events.get(service) or {}).items())),
                }
                for service, st in self.stats.items()
            },
        }
        if self.auth is not None:
            out["auth"] = self.auth.to_dict()
        if self.ctx.recovery is not None:
            out["recovery"] = self.ctx.recovery.metrics()
        return out

    async def local_request(self, service: str, msg: dict[str, Any]) -> dict[str, Any]:
        """A request from inside this process (the REST API), encoded and
        handled exactly as one from the wire, so it is validated, counted,
        recovered and wakes the AM launcher like any other."""
        reply = await self._handler(service)(CODEC.decode_request(CODEC.encode(Map(msg))))
        return CODEC.decode(CODEC.encode(reply)).to_map()

    def _handler(self, service: str) -> Callable[[Message], Awaitable[Message]]:
        async def handle(message: Message) -> Message:
            # Looked up per request: `restart` replaces the services.
            reply = self.services.serve(service, message)
            self._wake_launcher()
            if reply.type == "cluster_metrics_reply":
                reply.to_map()["metrics"].update(self.process_metrics())
            return reply

        # Every request is handled synchronously (see emu.rm.services).
        handler = never_waits(handle)
        if service == C.AM_PROTOCOL:

            def allocate_nothing(attempt_id: str, response_id: int) -> int | None:
                # As `handle` does for an allocate: looked up per call.
                rid = self.services.allocate_nothing(attempt_id, response_id)
                if rid is not None:
                    self._wake_launcher()
                return rid

            with_direct(handler, {"allocate_nothing": allocate_nothing})
        return handler

    def _wake_launcher(self) -> None:
        """A request may have allocated AM containers: the launcher starts
        them. It may also have given the asynchronous passes work."""
        if self.ctx.am_launches:
            self._launch_wakeup.set()
        if self._async_idle and self.ctx.scheduler.async_wanted():
            self._async_idle = False
            self._async_wakeup.set()

    async def _async_loop(self) -> None:
        """CapacityScheduler's asynchronous scheduling threads on emu's clock:
        a pass at each multiple of the interval while one could change
        anything (`Scheduler.async_wanted`), asleep otherwise until a
        request, a monitor or the scheduler's own update gives it work. The
        pass at an instant runs once everything else due then is done, so
        whether the loop slept until the instant or was woken at it, the
        pass sees the same state."""
        last = -1
        alone = 0
        while True:
            scheduler = self.ctx.scheduler
            passes = scheduler.async_scheduling
            if passes is None:
                return
            if not scheduler.async_wanted():
                self._async_idle = True
                await self._async_wakeup.wait()
                self._async_wakeup = trio.Event()
                continue
            tick = passes.tick_from(max(self.ctx.now_ms(), last + 1))
            # Nothing else due before the tick: the clock moves there at
            # once (the same instant, the same state), yielding to trio's
            # loop at least every thousand ticks all the same.
            if alone < 1000 and advance_alone(tick):
                alone += 1
            else:
                alone = 0
                await after_everything_at(tick)
            last = tick
            if scheduler.async_wanted():
                self.services.async_pass(tick)
                if self.ctx.am_launches:
                    self._launch_wakeup.set()

    async def _monitor_loop(self, name: str, interval_ms: int) -> None:
        while True:
            await trio.sleep(interval_ms / 1000)
            self.services.check_monitor(name)
            self._wake_launcher()

    async def _sort_loop(self, interval_ms: int) -> None:
        """The multi-node sorter's thread on emu's clock: a resort at each
        multiple of the interval from the RM's start (its first run, at the
        start, finds no node). It runs among the instant's other tasks, so
        always before an asynchronous pass at the same instant (which waits
        for all of them)."""
        tick = 0
        while True:
            tick += interval_ms
            await trio.sleep_until(tick / 1000)
            self.services.sort_nodes()
            self._wake_launcher()

    async def _scheduler_loop(self, interval_ms: int) -> None:
        while True:
            await trio.sleep(interval_ms / 1000)
            self.services.scheduler_update()
            self._wake_launcher()

    async def _launcher(self) -> None:
        """Carry out queued AM launches (YARN's AMLauncher)."""
        conns: dict[str, Connection] = {}
        async with AsyncExitStack() as stack:
            while True:
                await self._launch_wakeup.wait()
                self._launch_wakeup = trio.Event()
                for nm_address, node_id, launch in self.services.take_am_launches():
                    attempt_id = launch["am"]["attempt_id"]
                    error = None
                    try:
                        conn = conns.get(nm_address)
                        if conn is None:
                            conn = conns[nm_address] = await stack.enter_async_context(
                                connect(nm_address, identity="rm-am-launcher", codec=CODEC)
                            )
                        req = request("start_containers", 0, node_id=node_id, containers=[launch])
                        answer = await conn.request(
                            Map(req), timeout=network_timeout(nm_address, LAUNCH_TIMEOUT_S, 5.0)
                        )
                        reply = answer.to_map()
                        if reply["type"] == "error":
                            error = f"{reply['code']}: {reply['message']}"
                        elif reply["failed"]:
                            error = reply["failed"][0]["reason"]
                    except (TransportError, ProtocolError) as e:
                        error = f"{type(e).__name__}: {e}"
                    if error is not None:
                        log.warning(
                            "am launch failed", attempt=attempt_id, node=node_id, error=error
                        )
                    self.services.am_launch_result(attempt_id, error)

"""NodeManager actors, many per process.

A `NodeManagerHost` serves any number of nodes from one task and one timer
heap: each node keeps its own identity, resources, containers, response id
and heartbeat schedule, but no node costs a trio task. That is what lets one
process emulate thousands of NMs.

Containers are timers: a container started with `duration_ms` completes at
start + duration. Completions are found when the node next heartbeats and
reported exactly once, as YARN's NM does; RUNNING is reported once too, in
the first heartbeat after the start. A container with an AM launch context
runs an ApplicationMaster inside this process (where YARN runs it: on the
node that got the AM container); the AM is supplied by the caller as
`am_runner`, so this module imports no AM code.

Told RESYNC by the RM (it restarted, or lost track of the node), a node
re-registers. If the RM announced work-preserving recovery at registration,
the node keeps its containers and lists them in the new registration, so
the RM can rebuild its view of them (YARN's NM does the same when
`yarn.resourcemanager.work-preserving-recovery.enabled`); otherwise it drops
them first, as YARN's NM does without it.

In-process the host sends one request at a time, which keeps replays on the
virtual clock deterministic; over the network `max_in_flight` lets many
nodes' heartbeats be outstanding at once, so one process can keep
thousands of nodes on schedule despite network round trips. The nodes due
at once go to the RM as one `NodeHeartbeats` (a tuple per node; the common
replies come back as bare response ids), since a quiet node's heartbeat is
the commonest message of a large replay.
"""

from __future__ import annotations

import heapq
import math
import random
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol, cast

import structlog
import trio

from emu.alarm import Alarm
from emu.msg import catalogue as C
from emu.msg import types as P
from emu.msg.codec import CODEC
from emu.msg.types import Invalid, Map, Message, NodeHeartbeats, NodeHeartbeatsReply
from emu.resources import Resource
from emu.timeouts import network_timeout
from emu.transport import (
    Connection,
    ServerStats,
    TransportError,
    connect,
    never_waits,
    serve,
)
from emu.trio_time import current_time

log = structlog.get_logger("emu.nm")

AMRunner = Callable[[dict[str, Any], str], Awaitable[None]]
"""`await am_runner(am_launch_context, node_id)`: runs one AM to its end."""


class AMKill(Protocol):
    """How an AM container's AM is killed: a trio cancel scope around its
    task, or the `AMStepper`'s handle of it."""

    def cancel(self) -> None: ...


class AMStepper(Protocol):
    """Steps every AM of this process from one task (`emu.am.driver.AMDriver`),
    in place of an `AMRunner` task per AM; for `mem://` only (nothing an
    AM calls may wait)."""

    def launch(
        self, am: dict[str, Any], node_id: str, on_exit: Callable[[BaseException | None], None]
    ) -> AMKill:
        """Start an AM now; `on_exit(error)` once it ends by itself."""
        ...

    async def run(self) -> None:
        """Step the launched AMs until cancelled."""
        ...


HEARTBEAT_TIMEOUT_S = 30.0
REGISTER_RETRY_S = 1.0


class LatencyHistogram:
    """Wall-clock request latencies in logarithmic buckets (about 2% wide).

    Cheap to feed from a hot loop, mergeable across processes (`to_dict`,
    `merge`), and precise enough for p50/p99.
    """

    STEP = 1.02
    FLOOR_S = 1e-6

    def __init__(self) -> None:
        self.buckets: dict[int, int] = {}
        self.count = 0
        self.max_s = 0.0
        self._log_step = math.log(self.STEP)

    def add(self, seconds: float) -> None:
        b = int(math.log(max(seconds, self.FLOOR_S) / self.FLOOR_S) / self._log_step)
        self.buckets[b] = self.buckets.get(b, 0) + 1
        self.count += 1
        if seconds > self.max_s:
            self.max_s = seconds

    def merge(self, other: dict[str, Any]) -> None:
        for b, n in other.get("buckets", {}).items():
            self.buckets[int(b)] = self.buckets.get(int(b), 0) + n
        self.count += other.get("count", 0)
        self.max_s = max(self.max_s, other.get("max_s", 0.0))

    def quantile(self, q: float) -> float:
        """Seconds below which a fraction `q` of the samples fall (bucket upper bound)."""
        if not self.count:
            return 0.0
        rank = q * self.count
        seen = 0
        for b in sorted(self.buckets):
            seen += self.buckets[b]
            if seen >= rank:
                return min(self.FLOOR_S * self.STEP ** (b + 1), self.max_s)
        return self.max_s

    def to_dict(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "max_s": self.max_s,
            "p50_ms": round(self.quantile(0.5) * 1000, 3),
            "p99_ms": round(self.quantile(0.99) * 1000, 3),
            "buckets": {str(b): n for b, n in sorted(self.buckets.items())},
        }


@dataclass(slots=True)
class NMContainer:
    container_id: str
    app_id: str
    resource: Resource
    end_ms: int  # -1: runs until stopped (AM containers, long-running tasks)
    am_scope: AMKill | None = None
    priority: int = 0


@dataclass(slots=True)
class NMNode:
    """One emulated NodeManager (slots: a process may host 10,000)."""

    node_id: str
    host: str
    rack: str
    resource: Resource
    labels: tuple[str, ...] = ()
    containers: dict[str, NMContainer] = field(default_factory=dict)
    ends: list[tuple[int, str]] = field(default_factory=list)
    new_running: list[str] = field(default_factory=list)
    completed: list[dict[str, Any]] = field(default_factory=list)
    response_id: int = 0
    registered: bool = False
    stopped: bool = False
    generation: int = 0
    heartbeats: int = 0
    inflight: list[dict[str, Any]] | None = None
    """Statuses of a heartbeat that got no answer: sent again, unchanged,
    until one comes (the RM answers a repeat with its first reply, so newer
    statuses must wait for the next heartbeat or they would be lost)."""

    def finish(self, cid: str, exit_status: int, diagnostics: str) -> None:
        """Remove a container and queue its completion for the next heartbeat."""
        c = self.containers.pop(cid, None)
        if c is None:
            return
        if c.am_scope is not None:
            c.am_scope.cancel()
        if cid in self.new_running:
            self.new_running.remove(cid)
        self.completed.append(
            {
                "container_id": cid,
                "state": "COMPLETE",
                "exit_status": exit_status,
                "diagnostics": diagnostics,
            }
        )


@dataclass
class NodeManagerHost:
    """Hosts `nodes`, registers them with the RM's resource tracker at
    `rm_address`, and serves container management at `address`."""

    nodes: list[NMNode]
    rm_address: str
    address: str
    am_runner: AMRunner | None = None
    seed: int = 0
    stagger_quantum_ms: int = 10
    """Nodes start heartbeating at a seeded random offset within the first
    interval (as SLS's NMs do), rounded to this quantum: nodes sharing an
    instant are served in one pass of the timer heap, which keeps a
    thousand-node replay from paying a clock jump per heartbeat."""
    advertise_host: str | None = None
    """The host the RM and AMs should use to reach this NM (`nm_address`);
    None: the bound address as is."""
    max_in_flight: int = 1
    """Requests to the RM outstanding at once (heartbeats, registrations)."""
    latency: LatencyHistogram | None = None
    """If set, every heartbeat's wall-clock round trip is recorded here."""
    max_batch: int = 256
    """Heartbeats at most in one node_heartbeats message."""
    align_ms: int = 0
    """If set, heartbeats are due on multiples of this many ms, so nodes
    share messages; 0 keeps each node's exact interval (in-process)."""
    align_phase: float = 0.0
    """Where in each `align_ms` step this host's grid lies (0 <= phase < 1):
    NM processes given different phases reach the RM at different moments
    instead of all at once on the shared clock."""
    on_clock: Callable[[float, float], None] | None = None
    """Called with (epoch, rate) when a registration reply announces a clock
    different from the one seen before (a restarted RM without recovery)."""
    am_driver: AMStepper | None = None
    """If set, AMs launched here are stepped by it (one task, started with
    the first AM) instead of a task each running `am_runner`: in-process only."""
    first_heartbeat_after_interval: bool = False
    """A node's first heartbeat after its first registration comes one
    interval after its random offset, as an SLS NMSimulator's does (its
    firstStep does nothing; emu.timing); False: at the offset."""
    amrmproxy: str | None = None
    """The AMRMProxy's address when `yarn.nodemanager.amrmproxy.enabled`:
    the AMs started here are given it as their scheduler's address (YARN's
    NM rewrites the AM's scheduler address to its local proxy)."""

    def __post_init__(self) -> None:
        self.by_id = {n.node_id: n for n in self.nodes}
        self.by_host = {n.host: n for n in self.nodes}
        self.stats = ServerStats()
        self.bound_address = self.address
        self.heartbeat_ms = 1000
        self.epoch = 0.0
        self.rate = 0.0
        self.heartbeats = 0
        self.errors = 0
        self.refused: Counter[str] = Counter()
        """Container-management requests answered with an error, by code."""
        self._due: dict[float, list[tuple[NMNode, int]]] = {}
        """Due time -> (node, its generation then), in the order scheduled:
        nodes share due times (the stagger quantum, one interval for a
        batch), so a list per time and a heap of the distinct times cost
        less than a heap entry per heartbeat, in the same order."""
        self._times: list[float] = []
        """The keys of `_due`, as a heap."""
        self._waiting = False
        """The heartbeat loop waits on `_alarm` (only then must a newly
        scheduled node wake it: otherwise it looks at `_due` before waiting)."""
        self._seq = 0
        self._nursery: trio.Nursery | None = None
        self._driving = False
        self._rng = random.Random(self.seed)
        self._alarm = Alarm()
        self._timeout: float | None = None
        self.nm_address = self.address
        self.work_preserving = False
        self.registrations = 0
        self.resyncs = 0
        self.all_registered_wall_s: float | None = None
        self._registered_once: set[str] = set()
        self._started_wall = time.perf_counter()

    async def run(self, *, task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED) -> None:
        self._timeout = network_timeout(self.rm_address, HEARTBEAT_TIMEOUT_S, 2.0)
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            self.bound_address = await nursery.start(
                partial(
                    serve, self.address, never_waits(self._handle), stats=self.stats, codec=CODEC
                )
            )
            self.nm_address = _advertised(self.bound_address, self.advertise_host)
            async with connect(
                self.rm_address, identity=f"nm-host-{self.nm_address}", codec=CODEC
            ) as rm:
                if self.max_in_flight <= 1:
                    for node in self.nodes:
                        await self._register(rm, node)
                else:
                    limiter = trio.CapacityLimiter(self.max_in_flight)

                    async def register(node: NMNode) -> None:
                        async with limiter:
                            await self._register(rm, node)

                    async with trio.open_nursery() as registering:
                        for node in self.nodes:
                            registering.start_soon(register, node)
                task_status.started(self.bound_address)
                await self._heartbeat_loop(rm)

    # --- registration and heartbeats -----------------------------------------------------
    async def _register(self, rm: Connection, node: NMNode) -> None:
        req = P.request(
            "register_node",
            self._next_id(),
            node_id=node.node_id,
            host=node.host,
            rack=node.rack,
            resource=node.resource.to_wire(),
            nm_address=self.nm_address,
            containers=self._container_report(node),
            labels=list(node.labels),
        )
        try:
            reply = (await rm.request(Map(req), timeout=self._timeout)).to_map()
        except (TransportError, P.ProtocolError) as e:
            log.warning("register failed", node=node.node_id, error=str(e))
            self._schedule(node, current_time() + REGISTER_RETRY_S)
            return
        if node.stopped:
            return
        if reply["type"] == "error":
            log.warning("register refused", node=node.node_id, error=reply["message"])
            self._schedule(node, current_time() + REGISTER_RETRY_S)
            return
        if reply["action"] == P.SHUTDOWN:
            self._reset(node, "registration refused: SHUTDOWN")
            node.stopped = True
            return
        # What the registration listed has been reported.
        node.completed.clear()
        node.new_running.clear()
        node.inflight = None
        node.registered = True
        node.response_id = 0
        self.registrations += 1
        if self.all_registered_wall_s is None:
            self._registered_once.add(node.node_id)
            if len(self._registered_once) == len(self.nodes):
                self.all_registered_wall_s = time.perf_counter() - self._started_wall
        self.heartbeat_ms = reply["next_heartbeat_ms"] or self.heartbeat_ms
        self.work_preserving = bool(reply.get("work_preserving"))
        epoch, rate = reply["epoch"], reply["rate"]
        if (epoch, rate) != (self.epoch, self.rate):
            if self.on_clock is not None and self.rate:
                self.on_clock(epoch, rate)
            self.epoch, self.rate = epoch, rate
        quantum = max(1, self.stagger_quantum_ms)
        offset_ms = self._rng.randrange(0, max(quantum, self.heartbeat_ms), quantum)
        if self.first_heartbeat_after_interval and node.heartbeats == 0:
            offset_ms += self.heartbeat_ms
        self._schedule(node, current_time() + offset_ms / 1000)

    @staticmethod
    def _running_status(node: NMNode, cid: str) -> dict[str, Any]:
        c = node.containers.get(cid)
        st: dict[str, Any] = {
            "container_id": cid,
            "state": "RUNNING",
            "exit_status": P.EXIT_INVALID,
        }
        if c is not None:
            st.update(app_id=c.app_id, resource=c.resource.to_wire(), priority=c.priority)
        return st

    def _container_report(self, node: NMNode) -> list[dict[str, Any]]:
        """What a (re-)registering node still runs, and completions not yet
        reported (YARN's NMContainerStatus list). Empty for a fresh node."""
        if not node.containers and not node.completed:
            return []
        _collect_ends(node, round(current_time() * 1000))
        report = [
            {
                "container_id": cid,
                "state": "RUNNING",
                "exit_status": P.EXIT_INVALID,
                "app_id": c.app_id,
                "resource": c.resource.to_wire(),
                "priority": c.priority,
            }
            for cid, c in sorted(node.containers.items())
        ]
        report.extend(node.completed)
        return report

    def _schedule(self, node: NMNode, at: float) -> None:
        due = self._due.get(at)
        if due is None:
            self._due[at] = [(node, node.generation)]
            heapq.heappush(self._times, at)
            if self._waiting and self._times[0] == at:
                self._alarm.wake()
        else:
            due.append((node, node.generation))

    def _schedule_all(self, due: list[tuple[NMNode, int]], at: float) -> None:
        """`_schedule` each (node, its generation) of `due`, in order."""
        entries = self._due.get(at)
        if entries is None:
            self._due[at] = due
            heapq.heappush(self._times, at)
            if self._waiting and self._times[0] == at:
                self._alarm.wake()
        else:
            entries.extend(due)

    def scheduled(self) -> list[tuple[float, NMNode]]:
        """Every pending (due time, node), in the order they will be served
        (stale entries of reset or stopped nodes included: they are skipped
        when due)."""
        return [(at, node) for at in sorted(self._due) for node, _ in self._due[at]]

    async def _heartbeat_loop(self, rm: Connection) -> None:
        # The nodes due at once go in one node_heartbeats message; the RM
        # handles each as its own heartbeat, in the same order as one by one.
        if self.max_in_flight <= 1:
            await self._due_batches(partial(self._serve_batch, rm))
            return
        # Over the network several messages may be outstanding.
        send, receive = trio.open_memory_channel[list[NMNode]](0)
        async with trio.open_nursery() as nursery:
            for _ in range(self.max_in_flight):
                nursery.start_soon(self._worker, rm, receive.clone())
            await self._due_batches(send.send)

    async def _worker(
        self, rm: Connection, receive: trio.MemoryReceiveChannel[list[NMNode]]
    ) -> None:
        async with receive:
            async for batch in receive:
                await self._serve_batch(rm, batch)

    async def _serve_batch(self, rm: Connection, batch: list[NMNode]) -> None:
        """Register the nodes that need it; heartbeat the others, together in
        one node_heartbeats message."""
        beats = []
        for node in batch:
            if node.registered:
                beats.append(node)
            else:
                await self._register(rm, node)
        if beats:
            await self._heartbeats(rm, beats)

    async def _due_batches(self, handle: Callable[[list[NMNode]], Awaitable[None]]) -> None:
        """Hand every node due now to `handle`, up to `max_batch` at a time."""
        times, dues = self._times, self._due
        room = self.max_batch
        while True:
            if not times or times[0] > current_time():
                # Nothing due yet: wait for the first due time, or until
                # `_schedule` brings an earlier one (or the first of all).
                self._waiting = True
                try:
                    await self._alarm.wait(times[0] if times else math.inf)
                finally:
                    self._waiting = False
                continue
            now = current_time()
            batch: list[NMNode] = []
            while times and times[0] <= now and len(batch) < room:
                at = times[0]
                due = dues[at]
                taken = 0
                for node, generation in due:
                    if len(batch) >= room:
                        break
                    taken += 1
                    if not node.stopped and generation == node.generation:
                        batch.append(node)
                if taken == len(due):
                    del dues[at]
                    heapq.heappop(times)
                else:
                    del due[:taken]
            if batch:
                await handle(batch)

    def _statuses(self, node: NMNode, now_ms: int | None = None) -> list[dict[str, Any]]:
        """The container statuses a heartbeat of `node` sends now (new ones,
        or the unanswered ones again), kept as in flight."""
        statuses = node.inflight
        if statuses is None:
            ends = node.ends
            if ends:
                if now_ms is None:
                    now_ms = round(current_time() * 1000)
                if ends[0][0] <= now_ms:
                    _collect_ends(node, now_ms)
            if not node.new_running and not node.completed:
                # A quiet node (most of them, most of the time).
                statuses = []
            elif self.work_preserving:
                # What a recovering RM needs to rebuild a container it missed.
                statuses = [self._running_status(node, cid) for cid in node.new_running]
            else:
                statuses = [
                    {"container_id": cid, "state": "RUNNING", "exit_status": P.EXIT_INVALID}
                    for cid in node.new_running
                ]
            statuses.extend(node.completed)
        node.inflight = statuses
        return statuses

    async def _heartbeats(self, rm: Connection, nodes: list[NMNode]) -> None:
        """The heartbeats of `nodes` in one `NodeHeartbeats`, and their replies
        applied: the common ones (bare response ids) without a map per node."""
        now_ms = round(current_time() * 1000)
        beats = []
        for node in nodes:
            st = node.inflight
            if st is None:
                ends = node.ends
                if node.new_running or node.completed or (ends and ends[0][0] <= now_ms):
                    st = self._statuses(node, now_ms)
                else:
                    # A quiet node (most of them, most of the time).
                    st = node.inflight = []
            beats.append((node.node_id, node.response_id, st))
        latency = self.latency
        sent = time.perf_counter() if latency is not None else 0.0
        try:
            answer = await rm.request(NodeHeartbeats(self._next_id(), beats), timeout=self._timeout)
        except (TransportError, P.ProtocolError) as e:
            for node in nodes:
                self._heartbeat_failed(node, str(e))
            return
        if latency is not None:
            elapsed = time.perf_counter() - sent
            for _ in nodes:
                latency.add(elapsed)
        if answer.type != "node_heartbeats_reply":
            refusal = answer.to_map()
            for node in nodes:
                self._heartbeat_failed(node, f"{refusal.get('code')}: {refusal.get('message')}")
            return
        reply = cast(NodeHeartbeatsReply, answer)
        if len(reply.replies) != len(nodes):
            for node in nodes:
                self._heartbeat_failed(node, "node_heartbeats_reply: wrong number of replies")
            return
        now = current_time()
        at = now + reply.next_heartbeat_ms / 1000
        if self.align_ms:
            at = self._aligned(at, now)
        # Nodes given the common reply (NORMAL, nothing to clean up) are due
        # again together: scheduled in one go, in order, before any node
        # whose reply is a map is applied (it may be scheduled at `at` too).
        due: list[tuple[NMNode, int]] = []
        for node, sub in zip(nodes, reply.replies, strict=True):
            if isinstance(sub, dict):
                if due:
                    self._schedule_all(due, at)
                    due = []
                self._heartbeat_reply(node, sub, now)
                continue
            if node.stopped:
                continue
            self.heartbeats += 1
            node.heartbeats += 1
            if node.inflight:
                _acknowledged(node, node.inflight)
            else:
                node.inflight = None
            node.response_id = sub
            due.append((node, node.generation))
        if due:
            self._schedule_all(due, at)

    def _heartbeat_failed(self, node: NMNode, error: str) -> None:
        """Tried again next interval. Logged at the 1st, 10th, 100th, ...
        failure: an RM down for minutes fails every node's every heartbeat."""
        self.errors += 1
        if _power_of_ten(self.errors):
            log.warning("heartbeat failed", node=node.node_id, error=error, failures=self.errors)
        self._schedule(node, current_time() + self.heartbeat_ms / 1000)

    def _heartbeat_reply(
        self, node: NMNode, reply: dict[str, Any], now: float | None = None
    ) -> None:
        """Apply one node's reply; `now`: the current time, when the caller
        read it for a batch (on the virtual clock it does not move while
        the batch's replies are applied)."""
        statuses = node.inflight or []
        if node.stopped:
            return
        self.heartbeats += 1
        node.heartbeats += 1
        if reply["type"] == "error":
            self.errors += 1
            log.warning("heartbeat refused", node=node.node_id, error=reply["message"])
            self._schedule(node, current_time() + self.heartbeat_ms / 1000)
            return
        action = reply["action"]
        if action == P.RESYNC:
            self.resyncs += 1
            if self.work_preserving:
                log.info("node resyncs, keeping its containers", node=node.node_id)
            else:
                self._reset(node, "RESYNC from the ResourceManager")
            node.registered = False
            self._schedule(node, current_time())
            return
        if action == P.SHUTDOWN:
            self._reset(node, "node shut down by the ResourceManager")
            node.stopped = True
            return
        _acknowledged(node, statuses)
        node.response_id = reply["response_id"]
        for cid in reply["containers_to_cleanup"]:
            node.finish(cid, P.EXIT_KILLED_BY_RM, "Container killed by the ResourceManager")
        if reply["apps_to_cleanup"]:
            gone = set(reply["apps_to_cleanup"])
            for cid in sorted(c.container_id for c in node.containers.values() if c.app_id in gone):
                node.finish(cid, P.EXIT_KILLED_BY_RM, "Container of a finished application")
        if now is None:
            now = current_time()
        at = now + reply["next_heartbeat_ms"] / 1000
        if self.align_ms:
            at = self._aligned(at, now)
        self._schedule(node, at)

    def _aligned(self, at: float, now: float) -> float:
        """Keep nodes on a grid, so those due together go in one message
        (to the nearest point: intervals stay right on average)."""
        step = self.align_ms / 1000
        phase = self.align_phase * step
        at = round((at - phase) / step) * step + phase
        if at <= now:
            at = math.floor((now - phase) / step) * step + step + phase
        return at

    def _reset(self, node: NMNode, why: str) -> None:
        """Drop every container (non-work-preserving restart/shutdown)."""
        for cid in sorted(node.containers):
            c = node.containers.pop(cid)
            if c.am_scope is not None:
                c.am_scope.cancel()
        node.ends.clear()
        node.new_running.clear()
        node.completed.clear()
        node.inflight = None
        node.generation += 1
        log.info("node reset", node=node.node_id, why=why)

    def _next_id(self) -> int:
        self._seq += 1
        return self._seq

    # --- container management ----------------------------------------------------------------
    async def _handle(self, message: Message) -> Message:
        """Container management: answered synchronously (AMs are started in
        the host's nursery, not awaited), so it is served `never_waits`."""
        if message.type == P.INVALID_TYPE:
            e = cast(Invalid, message).error
            return self._refuse(e.code, e.message, e.request_id)
        msg = message.to_map()
        mtype = msg["type"]
        if mtype not in C.SERVICES[C.CONTAINER_MANAGEMENT]:
            return self._refuse(
                P.WRONG_SERVICE, f"{mtype} is not served by a NodeManager", msg.get("id")
            )
        node = self.by_id.get(msg["node_id"])
        if node is None or node.stopped or not node.registered:
            return self._refuse(P.NOT_FOUND, f"no running node {msg['node_id']} here", msg["id"])
        if mtype == "start_containers":
            return Map(self._start(node, msg))
        ok, failed = [], []
        for cid in msg["container_ids"]:
            if cid in node.containers:
                node.finish(cid, P.EXIT_KILLED_BY_AM, "Container stopped by the ApplicationMaster")
                ok.append(cid)
            else:
                failed.append({"container_id": cid, "reason": "no such container"})
        return Map(P.reply(msg, succeeded=ok, failed=failed))

    def _refuse(self, code: str, message: str, request_id: int | None) -> Map:
        self.refused[code] += 1
        return Map(P.error(code, message, request_id))

    def _start(self, node: NMNode, msg: dict[str, Any]) -> dict[str, Any]:
        now_ms = round(current_time() * 1000)
        ok, failed = [], []
        for launch in msg["containers"]:
            cid = launch["container_id"]
            if cid in node.containers:
                failed.append({"container_id": cid, "reason": "container already running"})
                continue
            am = launch.get("am")
            if am is not None and self.amrmproxy is not None:
                am = {**am, "rm_address": self.amrmproxy}
            if am is not None and (
                self._nursery is None or (self.am_runner is None and self.am_driver is None)
            ):
                failed.append({"container_id": cid, "reason": "this NodeManager cannot run AMs"})
                continue
            duration = launch["duration_ms"]
            end = now_ms + duration if duration >= 0 and am is None else -1
            c = NMContainer(
                cid,
                launch["app_id"],
                Resource.from_wire(launch["resource"]),
                end,
                priority=launch.get("priority") or 0,
            )
            node.containers[cid] = c
            node.new_running.append(cid)
            if end >= 0:
                heapq.heappush(node.ends, (end, cid))
            if am is not None and self.am_driver is not None:
                if not self._driving:
                    # Started with the first AM, as that AM's task would be:
                    # trio runs tasks woken together in an order fixed by
                    # creation (emu.clock), so the AMs keep their place
                    # among the other tasks.
                    self._driving = True
                    self._nursery.start_soon(self.am_driver.run)  # type: ignore[union-attr]
                c.am_scope = self.am_driver.launch(
                    am, node.node_id, partial(self._am_ended, node, c)
                )
            elif am is not None:
                c.am_scope = trio.CancelScope()
                self._nursery.start_soon(self._run_am, node, c, am)  # type: ignore[union-attr]
            ok.append(cid)
        return P.reply(msg, succeeded=ok, failed=failed)

    async def _run_am(self, node: NMNode, c: NMContainer, am: dict[str, Any]) -> None:
        assert self.am_runner is not None and isinstance(c.am_scope, trio.CancelScope)
        error: Exception | None = None
        with c.am_scope:
            try:
                await self.am_runner(am, node.node_id)
            except Exception as e:
                error = e
        if not c.am_scope.cancelled_caught:
            self._am_ended(node, c, error)

    def _am_ended(self, node: NMNode, c: NMContainer, error: BaseException | None) -> None:
        """An AM ended by itself (not killed): its container completes,
        successfully unless the AM raised."""
        exit_status, diagnostics = P.EXIT_SUCCESS, ""
        if error is not None:
            if getattr(error, "injected", False):  # a fault the harness asked for, not a bug
                log.info("AM crashed", container=c.container_id, why=str(error))
            else:
                log.error("AM failed", container=c.container_id, exc_info=error)
            exit_status, diagnostics = 1, f"AM failed: {type(error).__name__}: {error}"
        if node.containers.get(c.container_id) is not c:
            return
        node.finish(c.container_id, exit_status, diagnostics)

    # --- faults (the replay harness drives these) ---------------------------------------------
    def crash_node(self, host: str) -> None:
        """The NM and everything on it dies: no more heartbeats, AMs gone."""
        node = self.by_host[host]
        self._reset(node, "crashed")
        node.stopped = True

    def restart_node(self, host: str) -> None:
        """A crashed NM comes back empty and registers again."""
        node = self.by_host[host]
        node.stopped = False
        node.registered = False
        node.response_id = 0
        self._schedule(node, current_time())

    def add_node(self, node: NMNode) -> None:
        """A new NM starts here now and registers, as a node joining a running
        cluster does (a scenario's add_nodes change)."""
        self.nodes.append(node)
        self.by_id[node.node_id] = node
        self.by_host[node.host] = node
        self._schedule(node, current_time())


def _acknowledged(node: NMNode, sent: list[dict[str, Any]]) -> None:
    """Forget the statuses the RM has taken in; keep those queued since."""
    node.inflight = None
    done = 0
    running = None
    for st in sent:
        if st["state"] == "COMPLETE":
            done += 1
        elif running is None:
            running = {st["container_id"]}
        else:
            running.add(st["container_id"])
    if running is not None:
        node.new_running[:] = [c for c in node.new_running if c not in running]
    if done:
        # `completed` only grows between heartbeats: what was sent is its head.
        del node.completed[:done]


def _collect_ends(node: NMNode, now_ms: int) -> None:
    """Complete the node's containers whose time is up."""
    ends = node.ends
    while ends and ends[0][0] <= now_ms:
        _, cid = heapq.heappop(ends)
        if cid in node.containers:
            node.finish(cid, P.EXIT_SUCCESS, "")


def _power_of_ten(n: int) -> bool:
    while n % 10 == 0 and n > 1:
        n //= 10
    return n == 1


def _advertised(bound: str, host: str | None) -> str:
    """`bound` (tcp://ip:port) with its host replaced by `host`, if given."""
    if not host or not bound.startswith("tcp://"):
        return bound
    port = bound.rsplit(":", 1)[1]
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"tcp://{host}:{port}"

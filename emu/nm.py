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
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import structlog
import trio

from emu import protocol as P
from emu.resources import Resource
from emu.transport import (
    Connection,
    ServerStats,
    TransportError,
    connect,
    request_timeout,
    serve,
)

log = structlog.get_logger("emu.nm")

AMRunner = Callable[[dict[str, Any], str], Awaitable[None]]
"""`await am_runner(am_launch_context, node_id)`: runs one AM to its end."""

HEARTBEAT_TIMEOUT_S = 30.0


@dataclass(slots=True)
class NMContainer:
    container_id: str
    app_id: str
    resource: Resource
    end_ms: int  # -1: runs until stopped (AM containers, long-running tasks)
    am_scope: trio.CancelScope | None = None


@dataclass
class NMNode:
    """One emulated NodeManager."""

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
        self._heap: list[tuple[float, int, str, int]] = []
        self._seq = 0
        self._nursery: trio.Nursery | None = None
        self._rng = random.Random(self.seed)
        self._wakeup = trio.Event()
        self._timeout = request_timeout(self.rm_address, HEARTBEAT_TIMEOUT_S)

    async def run(self, *, task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED) -> None:
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            self.bound_address = await nursery.start(
                partial(serve, self.address, self._handle, stats=self.stats)
            )
            async with connect(self.rm_address, identity=f"nm-host-{self.bound_address}") as rm:
                for node in self.nodes:
                    await self._register(rm, node)
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
            nm_address=self.bound_address,
            containers=[],
            labels=list(node.labels),
        )
        try:
            reply = P.decode(await rm.request(P.encode(req), timeout=self._timeout))
        except (TransportError, P.ProtocolError) as e:
            log.warning("register failed", node=node.node_id, error=str(e))
            self._schedule(node, trio.current_time() + 1.0)
            return
        if reply["type"] == "error" or reply["action"] == P.SHUTDOWN:
            node.stopped = True
            return
        node.registered = True
        node.response_id = 0
        self.heartbeat_ms = reply["next_heartbeat_ms"] or self.heartbeat_ms
        self.epoch, self.rate = reply["epoch"], reply["rate"]
        quantum = max(1, self.stagger_quantum_ms)
        offset_ms = self._rng.randrange(0, max(quantum, self.heartbeat_ms), quantum)
        self._schedule(node, trio.current_time() + offset_ms / 1000)

    def _schedule(self, node: NMNode, at: float) -> None:
        self._seq += 1
        heapq.heappush(self._heap, (at, self._seq, node.node_id, node.generation))
        self._wakeup.set()

    async def _heartbeat_loop(self, rm: Connection) -> None:
        heap = self._heap
        while True:
            if not heap:
                await self._wakeup.wait()
                self._wakeup = trio.Event()
                continue
            at, _, node_id, generation = heap[0]
            if at > trio.current_time():
                with trio.move_on_at(at):
                    await self._wakeup.wait()
                self._wakeup = trio.Event()
                continue
            heapq.heappop(heap)
            node = self.by_id[node_id]
            if node.stopped or generation != node.generation:
                continue
            if not node.registered:
                await self._register(rm, node)
                continue
            await self._heartbeat(rm, node)

    async def _heartbeat(self, rm: Connection, node: NMNode) -> None:
        now_ms = round(trio.current_time() * 1000)
        ends = node.ends
        while ends and ends[0][0] <= now_ms:
            _, cid = heapq.heappop(ends)
            if cid in node.containers:
                node.finish(cid, P.EXIT_SUCCESS, "")
        statuses = [
            {"container_id": cid, "state": "RUNNING", "exit_status": P.EXIT_INVALID}
            for cid in node.new_running
        ]
        statuses.extend(node.completed)
        req = P.request(
            "node_heartbeat",
            self._next_id(),
            node_id=node.node_id,
            response_id=node.response_id,
            containers=statuses,
            healthy=True,
        )
        try:
            reply = P.decode(await rm.request(P.encode(req), timeout=self._timeout))
        except (TransportError, P.ProtocolError) as e:
            self.errors += 1
            log.warning("heartbeat failed", node=node.node_id, error=str(e))
            self._schedule(node, trio.current_time() + self.heartbeat_ms / 1000)
            return
        if node.stopped:
            return
        self.heartbeats += 1
        node.heartbeats += 1
        if reply["type"] == "error":
            self.errors += 1
            log.warning("heartbeat refused", node=node.node_id, error=reply["message"])
            self._schedule(node, trio.current_time() + self.heartbeat_ms / 1000)
            return
        action = reply["action"]
        if action == P.RESYNC:
            self._reset(node, "RESYNC from the ResourceManager")
            node.registered = False
            self._schedule(node, trio.current_time())
            return
        if action == P.SHUTDOWN:
            self._reset(node, "node shut down by the ResourceManager")
            node.stopped = True
            return
        node.new_running.clear()
        node.completed.clear()
        node.response_id = reply["response_id"]
        for cid in reply["containers_to_cleanup"]:
            node.finish(cid, P.EXIT_KILLED_BY_RM, "Container killed by the ResourceManager")
        if reply["apps_to_cleanup"]:
            gone = set(reply["apps_to_cleanup"])
            for cid in sorted(c.container_id for c in node.containers.values() if c.app_id in gone):
                node.finish(cid, P.EXIT_KILLED_BY_RM, "Container of a finished application")
        self._schedule(node, trio.current_time() + reply["next_heartbeat_ms"] / 1000)

    def _reset(self, node: NMNode, why: str) -> None:
        """Drop every container (non-work-preserving restart/shutdown)."""
        for cid in sorted(node.containers):
            c = node.containers.pop(cid)
            if c.am_scope is not None:
                c.am_scope.cancel()
        node.ends.clear()
        node.new_running.clear()
        node.completed.clear()
        node.generation += 1
        log.info("node reset", node=node.node_id, why=why)

    def _next_id(self) -> int:
        self._seq += 1
        return self._seq

    # --- container management ----------------------------------------------------------------
    async def _handle(self, payload: bytes) -> bytes:
        try:
            msg = P.decode(payload)
        except P.ProtocolError as e:
            return P.encode(P.error(e.code, e.message, e.request_id))
        mtype = msg["type"]
        if mtype not in P.SERVICES[P.CONTAINER_MANAGEMENT]:
            return P.encode(
                P.error(P.WRONG_SERVICE, f"{mtype} is not served by a NodeManager", msg.get("id"))
            )
        node = self.by_id.get(msg["node_id"])
        if node is None or node.stopped or not node.registered:
            return P.encode(
                P.error(P.NOT_FOUND, f"no running node {msg['node_id']} here", msg["id"])
            )
        if mtype == "start_containers":
            return P.encode(self._start(node, msg))
        ok, failed = [], []
        for cid in msg["container_ids"]:
            if cid in node.containers:
                node.finish(cid, P.EXIT_KILLED_BY_AM, "Container stopped by the ApplicationMaster")
                ok.append(cid)
            else:
                failed.append({"container_id": cid, "reason": "no such container"})
        return P.encode(P.reply(msg, succeeded=ok, failed=failed))

    def _start(self, node: NMNode, msg: dict) -> dict:
        now_ms = round(trio.current_time() * 1000)
        ok, failed = [], []
        for launch in msg["containers"]:
            cid = launch["container_id"]
            if cid in node.containers:
                failed.append({"container_id": cid, "reason": "container already running"})
                continue
            am = launch.get("am")
            if am is not None and (self.am_runner is None or self._nursery is None):
                failed.append({"container_id": cid, "reason": "this NodeManager cannot run AMs"})
                continue
            duration = launch["duration_ms"]
            end = now_ms + duration if duration >= 0 and am is None else -1
            c = NMContainer(cid, launch["app_id"], Resource.from_wire(launch["resource"]), end)
            node.containers[cid] = c
            node.new_running.append(cid)
            if end >= 0:
                heapq.heappush(node.ends, (end, cid))
            if am is not None:
                c.am_scope = trio.CancelScope()
                self._nursery.start_soon(self._run_am, node, c, am)  # type: ignore[union-attr]
            ok.append(cid)
        return P.reply(msg, succeeded=ok, failed=failed)

    async def _run_am(self, node: NMNode, c: NMContainer, am: dict[str, Any]) -> None:
        assert self.am_runner is not None and c.am_scope is not None
        exit_status, diagnostics = P.EXIT_SUCCESS, ""
        with c.am_scope:
            try:
                await self.am_runner(am, node.node_id)
            except Exception as e:
                log.exception("AM failed", container=c.container_id)
                exit_status, diagnostics = 1, f"AM failed: {type(e).__name__}: {e}"
        if c.am_scope.cancelled_caught or node.containers.get(c.container_id) is not c:
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
        self._schedule(node, trio.current_time())

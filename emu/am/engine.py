"""The ApplicationMaster engine shared by every AM type.

It behaves as YARN's AMRMClient-driven AMs (and SLS's AM simulators) do:
register, then call `allocate` every AM heartbeat with the full current ask
table for any priority whose asks changed (YARN replaces asks by priority and
resource name, so the AM always states absolute counts); start each
allocated container on its NodeManager with the task's duration; take
completions from allocate replies; ask again for tasks whose containers were
lost, preempted or killed; unregister once every task has succeeded. With SLS's timing (emu.timing,
asked for in the launch context) its heartbeats fall on its submission +
k * interval and each allocate response is acted on at the next heartbeat,
as SLS's AM simulators do.

The AM talks only through the protocol: to the RM's AM service and to the
NodeManagers named in its allocations.

It outlives a restarting RM, as YARN's AMRMClient does: a request that gets
no answer is sent again, unchanged, until one comes (the RM answers a
repeated allocate with the reply it already gave, so nothing is lost or
doubled); told RESYNC, or refused because the RM no longer knows it as
registered, it registers again and re-sends its whole ask table.
"""

from __future__ import annotations

import heapq
import math
from contextlib import AsyncExitStack, suppress
from dataclasses import dataclass, field
from typing import Any, cast

import structlog
import trio

from emu.am.policies import POLICIES
from emu.msg import types as P
from emu.msg.codec import CODEC
from emu.msg.types import Allocate, AllocateReply, Map, Message
from emu.timeouts import network_timeout
from emu.transport import Connection, TransportError, connect
from emu.trio_time import current_time
from emu.workload import JobSpec

log = structlog.get_logger("emu.am")

WAIT, PENDING, RUNNING, DONE = 0, 1, 2, 3
REQUEST_TIMEOUT_S = 60.0
NM_REQUEST_TIMEOUT_S = 10.0
TASK_TIMEOUT_S = 600.0
"""MapReduce's `mapreduce.task.timeout` (default 600,000 ms): a task attempt
not heard of for this long after it should have ended is failed and run
again. YARN's AM learns this from the task's own pings; emu's tasks report
only their end, so a task whose completion never comes (its container was
on a node lost just before an RM restart: the old RM queued the completion,
the new one never knew the container) is declared lost this long after
its duration."""
DEFAULT_RACK = "/default-rack"
Cap = tuple[tuple[str, int], ...]
"""A capability as an ask table keeps it: its wire map's items, sorted."""
_NO_RACKS: frozenset[str] = frozenset()


@dataclass
class AMFaults:
    """Faults injected into the AMs of this process by a replay harness:
    the current AM of each job in `hang_jobs` stops calling allocate, and of
    each job in `crash_jobs` dies (each once). `tasks_rerun` counts, for the
    harness's fault report, tasks whose container was lost, preempted or
    killed and that were asked for again."""

    hang_jobs: set[str] = field(default_factory=set)
    crash_jobs: set[str] = field(default_factory=set)
    tasks_rerun: int = 0


class AMCrash(Exception):
    """An injected AM crash: the AM container exits with a failure. The NM
    (which must not import AM code) logs it without a traceback because it
    is `injected`."""

    injected = True


class AMShutdown(Exception):
    """The RM told the AM to go away."""


class AMFailed(Exception):
    """The AM cannot go on (the RM refused an ask as invalid): it unregisters
    with final status FAILED and this message as diagnostics, as a YARN AM
    that gets an InvalidResourceRequestException from allocate fails its job."""


_EMPTY_REPLY = AllocateReply(0, 0, [], [], None, 0)
"""What an allocate answered directly is recorded as: a reply with nothing
placed or completed (`ApplicationMaster._answered_directly`); never changed."""


class ApplicationMaster:
    """One AM attempt. `am` is the launch context the RM sent with the AM
    container: attempt id, RM address, and `context` (the job's task plan)."""

    def __init__(self, am: dict[str, Any], faults: AMFaults | None = None) -> None:
        self.attempt_id: str = am["attempt_id"]
        self._app_id: str | None = None
        self.rm_address: str = am["rm_address"]
        context = am["context"]
        self.job = JobSpec.from_wire(context["job"])
        self.racks: dict[str, str] = context.get("racks") or {}
        self.heartbeat_s: float = context.get("am_heartbeat_ms", 1000) / 1000
        # SLS's AM timing (emu.timing), when the replayer asked for it: the
        # heartbeats fall on submission + k * interval; responses are acted
        # on at the next heartbeat.
        self.submitted_s: float | None = (
            context.get("submitted_s") if context.get("ticks_from_submission") else None
        )
        self.replies_next_heartbeat: bool = bool(context.get("replies_next_heartbeat"))
        self._queued: list[AllocateReply] = []
        """Responses not acted on yet (`replies_next_heartbeat`)."""
        self.policy = POLICIES[self.job.am_type]()
        self.faults = faults or AMFaults()
        self.tasks = self.job.tasks
        self.state = [WAIT] * len(self.tasks)
        # Kept as the states change, so a heartbeat where nothing happened
        # costs no pass over the tasks: which are done (the policy's view)
        # and how many, how many still wait, the pending tasks by priority
        # (rebuilt once a task becomes pending; entries that left PENDING are
        # skipped when read) and the ask table they call for.
        self.done = [False] * len(self.tasks)
        self.done_count = 0
        self.waiting = len(self.tasks)
        self._last_release: list[int] | None = None
        self._pending: dict[int, list[int]] | None = None
        self._desired_table: dict[int, dict[str, tuple[int, Cap]]] | None = None
        # The racks of each task's preferred hosts, for matching containers.
        # One shared empty set for the (usual) tasks without preferred hosts,
        # and one set per distinct rack set (a job's hundred host-preferring
        # maps name a few dozen racks).
        rack_sets: dict[frozenset[str], frozenset[str]] = {}
        self.task_racks = [
            rack_sets.setdefault(racks, racks)
            if (racks := frozenset(self.racks.get(h, DEFAULT_RACK) for h in t.hosts))
            else _NO_RACKS
            for t in self.tasks
        ]
        self._any_hosts = any(t.hosts for t in self.tasks)
        self.container_task: dict[str, int] = {}
        self._deadlines: list[tuple[float, int, str]] = []
        """(time a task's completion is overdue by TASK_TIMEOUT_S, task,
        container) per launch; entries of tasks since ended are skipped."""
        self.sent: dict[int, dict[str, tuple[int, Cap]]] = {}
        self._in_step: dict[int, dict[str, tuple[int, Cap]]] | None = None
        """The desired table `sent` was made equal to by the last
        `_ask_changes`, while `sent` has not changed since (a placement or
        a RESYNC changes it): a heartbeat with that same table has nothing
        to restate, and skips the comparisons."""
        self.releases: list[str] = []
        self.response_id = 0
        self.start_time = 0.0
        self.request_id = 0
        self.lost = 0
        self.resyncs = 0
        self.rm_retries = 0
        self._registered = False
        self._nms: dict[str, Connection] = {}
        self._stack: AsyncExitStack
        self._rm: Connection

    def _req(self, mtype: str, **fields: Any) -> Map:
        self.request_id += 1
        return Map(P.request(mtype, self.request_id, **fields))

    async def _rpc(self, conn: Connection, mtype: str, **fields: Any) -> dict[str, Any]:
        """One request to the RM, sent again (same content) until it is answered."""
        return (await self._send(conn, self._req(mtype, **fields))).to_map()

    async def _send(self, conn: Connection, message: Message) -> Message:
        """`message` to the RM, sent again until it is answered (over the
        network the RM may be restarting; in one process a server that is
        gone stays gone, so the error is raised)."""
        timeout = network_timeout(conn.address, REQUEST_TIMEOUT_S, 3.0)
        while True:
            try:
                reply: Message = await conn.request(message, timeout=timeout)
                return reply
            except TransportError as e:
                if not conn.lossy:
                    raise
                self.rm_retries += 1
                if self.rm_retries == 1 or self.rm_retries % 10 == 0:
                    log.warning("RM unreachable, retrying", attempt=self.attempt_id, error=str(e))
                await trio.sleep(self.heartbeat_s)

    def _progress(self) -> float:
        """What allocate reports as the AM's progress: the share of tasks done."""
        return self.done_count / len(self.state) if self.state else 1.0

    async def _register(self, rm: Connection, again: bool = False) -> None:
        """register_am; `again` after a RESYNC, when a refusal because the
        attempt is already registered (it was only a response-id mismatch)
        is no reason to stop."""
        reply = await self._rpc(
            rm, "register_am", attempt_id=self.attempt_id, host="", tracking_url=""
        )
        if reply["type"] == "error" and not (again and reply["code"] == P.INVALID):
            raise AMShutdown(f"register_am refused: {reply['code']}: {reply['message']}")

    async def open(self, stack: AsyncExitStack) -> None:
        """Connect to the RM. The connections the AM opens later (to the
        NodeManagers it starts containers on) go on `stack` too: closing it
        closes them all."""
        self._stack = stack
        self._rm = await stack.enter_async_context(
            connect(self.rm_address, identity=self.attempt_id, codec=CODEC)
        )

    async def step(self) -> float | None:
        """One turn of the AM's loop, after `open`: register (the first
        turn), then one heartbeat (an allocate round or two, and the
        container starts they lead to); once every task has succeeded,
        unregister. Returns the seconds until the next turn (`math.inf`:
        hung by an injected fault, until its container is killed), or None
        once the AM has ended (finished, failed or shut down by the RM).
        An injected crash raises `AMCrash`, as any unexpected error does."""
        rm = self._rm
        try:
            if not self._registered:
                await self._register(rm)
                self._registered = True
                self.start_time = current_time()
                wait = self._until_tick()
                if wait > 0:
                    return wait
            if self.job.job_id in self.faults.hang_jobs:
                self.faults.hang_jobs.discard(self.job.job_id)
                log.info("AM hangs (injected fault)", attempt=self.attempt_id)
                return math.inf
            if self.job.job_id in self.faults.crash_jobs:
                self.faults.crash_jobs.discard(self.job.job_id)
                raise AMCrash(f"AM of {self.job.job_id} crashed (injected fault)")
            if not await self._heartbeat(rm, self._nms, self._stack):
                return self.heartbeat_s
            await self._finish(rm)
        except AMFailed as e:
            log.info("AM failed", attempt=self.attempt_id, why=str(e))
            with suppress(AMShutdown):
                await self._finish(rm, "FAILED", str(e))
        except AMShutdown as shutdown:  # not `e`: compiled, a name keeps one type
            log.info("AM shut down", attempt=self.attempt_id, why=str(shutdown))
        return None

    def _until_tick(self) -> float:
        """Seconds from now to the first heartbeat after registration: 0
        (at once), or with `submitted_s`, to the first of submission + k *
        interval (k >= 1) not before now, as SLS's AM simulator task ticks
        from its submission (emu.timing)."""
        if self.submitted_s is None:
            return 0.0
        interval_ms = round(self.heartbeat_s * 1000)
        if interval_ms <= 0:
            return 0.0
        now_ms = round(current_time() * 1000)
        since = now_ms - round(self.submitted_s * 1000)
        ticks = max(1, -(-since // interval_ms))
        return (ticks * interval_ms - since) / 1000

    async def run(self) -> None:
        """Run to the end in a task of its own, sleeping between turns (the
        path over the network; in-process AMs are stepped by `AMDriver`)."""
        async with AsyncExitStack() as stack:
            await self.open(stack)
            while (delay := await self.step()) is not None:
                await trio.sleep(delay)

    async def _finish(
        self, rm: Connection, final_status: str = "SUCCEEDED", diagnostics: str = ""
    ) -> None:
        """finish_am; an RM that restarted since the last allocate first
        needs the AM to register again."""
        for retry in (True, False):
            reply = await self._rpc(
                rm,
                "finish_am",
                attempt_id=self.attempt_id,
                final_status=final_status,
                diagnostics=diagnostics,
            )
            if reply["type"] != "error":
                return
            if not (retry and reply["code"] == P.INVALID):
                raise AMShutdown(f"finish_am refused: {reply['code']}: {reply['message']}")
            await self._register(rm, again=True)

    def _set_state(self, i: int, new: int) -> None:
        """Move task `i` to `new`, keeping the derived bookkeeping right."""
        old = self.state[i]
        self.state[i] = new
        if old == WAIT:
            self.waiting -= 1
        if new == DONE:
            self.done[i] = True
            self.done_count += 1
        if new == PENDING:
            self._pending = None
        if PENDING in (old, new):
            self._desired_table = None

    # --- one allocate round ------------------------------------------------------------------
    async def _heartbeat(
        self, rm: Connection, nms: dict[str, Connection], stack: AsyncExitStack
    ) -> bool:
        if self._queued:
            # SLS: the responses the last heartbeat got are acted on now,
            # before this heartbeat's asks; the last completion ends the AM
            # at once, without another allocate.
            queued, self._queued = self._queued, []
            for reply in queued:
                await self._consume(reply, nms, stack)
            if self.done_count == len(self.state):
                return True
        if self.waiting:
            elapsed = round((current_time() - self.start_time) * 1000)
            released = self.policy.release(self.tasks, self.done, elapsed)
            # A policy handing back the very list it gave last time (as the
            # MapReduce one does) releases nothing new: no task returns to WAIT.
            if released is not self._last_release:
                self._last_release = released
                for i in released:
                    if self.state[i] == WAIT:
                        self._set_state(i, PENDING)
        desired = self._desired()
        if desired is self._in_step:
            # `sent` still mirrors this very table: nothing to restate.
            # Releases go in a call of their own; without any, an allocate of
            # nothing may be answered directly.
            if self.releases or not self._answered_directly(rm):
                await self._round(rm, nms, stack, [])
            return self.done_count == len(self.state)
        if not self.replies_next_heartbeat and self._outstanding() and self._changes_any(desired):
            # Asks are absolute. Restating `*` while the RM may hold
            # containers placed for us since the last call would ask for
            # those again: collect them first, then state the new count.
            if not await self._round(rm, nms, stack, []):
                return False
            desired = self._desired()
        await self._round(rm, nms, stack, self._ask_changes(desired))
        return self.done_count == len(self.state)

    async def _round(
        self,
        rm: Connection,
        nms: dict[str, Connection],
        stack: AsyncExitStack,
        asks: list[dict[str, Any]],
    ) -> bool:
        """One allocate call and its consequences; False after a RESYNC."""
        releases, self.releases = self.releases, []
        self.request_id += 1
        answer = await self._send(
            rm,
            Allocate(
                self.request_id,
                self.attempt_id,
                self.response_id,
                asks,
                releases,
                [],
                [],
                self._progress(),
            ),
        )
        if answer.type != "allocate_reply":
            _refusal_raised("allocate", answer.to_map())
        reply = cast(AllocateReply, answer)
        command = reply.command
        if command == P.SHUTDOWN:
            raise AMShutdown("SHUTDOWN command")
        self.response_id = reply.response_id
        if command == P.RESYNC:
            # The RM did not take this call in: register again (it may have
            # restarted), then state every ask afresh and repeat the releases.
            self.resyncs += 1
            log.info("AM resyncs with the RM", attempt=self.attempt_id)
            await self._register(rm, again=True)
            self.sent.clear()
            self._in_step = None
            self.releases = releases + self.releases
            return False
        if self.replies_next_heartbeat:
            self._queued.append(reply)
            return True
        allocated = self._take(reply)
        if allocated:
            await self._launch(allocated, nms, stack)
        return True

    def _answered_directly(self, rm: Connection) -> bool:
        """An allocate of nothing (no asks, no releases) made as a direct
        call when the RM is in this process (`Connection.call_direct`):
        True when the RM answered it (its reply would have carried nothing:
        the new response id is all there is), and it is recorded as
        `_round` records an empty reply. False: make the call."""
        rid = rm.call_direct("allocate_nothing", self.attempt_id, self.response_id)
        if rid is None:
            return False
        self.request_id += 1
        self.response_id = cast(int, rid)
        if self.replies_next_heartbeat:
            self._queued.append(_EMPTY_REPLY)
        else:
            self._expire_overdue()  # all `_take` does with a reply of nothing
        return True

    async def _consume(
        self, reply: AllocateReply, nms: dict[str, Connection], stack: AsyncExitStack
    ) -> None:
        """Act on an allocate response: completions, then the allocated
        containers started on their nodes."""
        allocated = self._take(reply)
        if allocated:
            await self._launch(allocated, nms, stack)

    def _take(self, reply: AllocateReply) -> list[dict[str, Any]]:
        """An allocate response's completions and placements, recorded;
        returns the containers to start (a plain call: the heartbeat path
        awaits only when there is something to launch)."""
        for st in reply.completed:
            i = self.container_task.pop(st["container_id"], None)
            if i is None or self.state[i] != RUNNING:
                continue
            if st["exit_status"] == P.EXIT_SUCCESS:
                self._set_state(i, DONE)
            else:
                self._set_state(i, PENDING)
                self.lost += 1
                self.faults.tasks_rerun += 1
        # After the reply: completions the RM still had are in it.
        self._expire_overdue()
        allocated = reply.allocated
        for c in allocated:
            self._expect_placed(c)
        return allocated

    def _expire_overdue(self) -> None:
        """Fail and re-ask the running tasks whose completion is overdue by
        TASK_TIMEOUT_S (as MapReduce's task timeout), releasing their
        containers. Called after every allocate reply: mostly nothing is due."""
        deadlines = self._deadlines
        if not deadlines:
            return
        now = current_time()
        while deadlines and deadlines[0][0] <= now:
            _, i, cid = heapq.heappop(deadlines)
            if self.container_task.get(cid) != i or self.state[i] != RUNNING:
                continue
            del self.container_task[cid]
            log.info(
                "task timed out: no completion reported", attempt=self.attempt_id, container=cid
            )
            self._set_state(i, PENDING)
            self.lost += 1
            self.faults.tasks_rerun += 1
            self.releases.append(cid)

    def _pending_by_priority(self) -> dict[int, list[int]]:
        """Pending task indices by priority, in task order; may still hold
        tasks that have left PENDING since (readers skip them), never misses
        one that became pending."""
        if self._pending is None:
            by_priority: dict[int, list[int]] = {}
            for i, s in enumerate(self.state):
                if s == PENDING:
                    by_priority.setdefault(self.tasks[i].priority, []).append(i)
            self._pending = by_priority
        return self._pending

    def _desired(self) -> dict[int, dict[str, tuple[int, Cap]]]:
        """The ask table the pending tasks call for, by priority and name.
        Tasks of one priority are asked for one capability at a time (the
        first pending task's): asks are keyed by priority and name only.
        Kept until a task enters or leaves PENDING; callers only read it."""
        if self._desired_table is not None:
            return self._desired_table
        state = self.state
        current: dict[int, dict[str, tuple[int, Cap]]] = {}
        for priority, listed in self._pending_by_priority().items():
            idxs = [i for i in listed if state[i] == PENDING]
            if not idxs:
                continue
            first = self.tasks[idxs[0]].resource
            group = [i for i in idxs if self.tasks[i].resource == first]
            cap = tuple(sorted(first.to_wire().items()))
            table: dict[str, list[Any]] = {"*": [0, cap]}
            for i in group:
                table["*"][0] += 1
                racks = set()
                for host in self.tasks[i].hosts:
                    table.setdefault(host, [0, cap])[0] += 1
                    racks.add(self.racks.get(host, DEFAULT_RACK))
                for rack in racks:
                    table.setdefault(rack, [0, cap])[0] += 1
            current[priority] = {k: (v[0], v[1]) for k, v in table.items()}
        self._desired_table = current
        return current

    def _outstanding(self) -> bool:
        """Whether the RM may still be placing containers for our asks."""
        return any(t.get("*", (0,))[0] > 0 for t in self.sent.values())

    def _changes_any(self, desired: dict[int, dict[str, tuple[int, Cap]]]) -> bool:
        return any(
            desired.get(p, {}).get("*") != self.sent.get(p, {}).get("*")
            for p in set(desired) | set(self.sent)
        )

    def _expect_placed(self, c: dict[str, Any]) -> None:
        """Follow the RM's own bookkeeping of a placed container: it took one
        off the host, rack and `*` asks (node-local), the rack and `*` asks
        (rack-local) or `*` alone (off-switch). `sent` then mirrors what the
        RM still holds, so only real changes are sent again."""
        table = self.sent.get(c["priority"])
        if not table:
            return
        self._in_step = None
        host = c["node_id"]
        rack = self.racks.get(host, DEFAULT_RACK)
        if table.get(host, (0,))[0] > 0:
            names: tuple[str, ...] = (host, rack, "*")
        elif table.get(rack, (0,))[0] > 0:
            names = (rack, "*")
        else:
            names = ("*",)
        for name in names:
            entry = table.get(name)
            if entry is None:
                continue
            if entry[0] > 1:
                table[name] = (entry[0] - 1, entry[1])
            else:
                del table[name]
        if not table:
            del self.sent[c["priority"]]

    def _ask_changes(self, desired: dict[int, dict[str, tuple[int, Cap]]]) -> list[dict[str, Any]]:
        """Asks for the (priority, name) entries that differ from what the RM
        holds; unchanged entries, `*` above all, are not restated."""
        asks: list[dict[str, Any]] = []
        for priority in sorted(set(desired) | set(self.sent)):
            now = desired.get(priority, {})
            before = self.sent.get(priority, {})
            if now == before:
                continue
            for name in sorted(set(now) | set(before)):
                if now.get(name) == before.get(name):
                    continue
                num, cap = now.get(name) or (0, before[name][1])
                asks.append(
                    {
                        "priority": priority,
                        "resource_name": name,
                        "capability": dict(cap),
                        "num_containers": num,
                        "relax_locality": True,
                    }
                )
            if now:
                self.sent[priority] = dict(now)
            else:
                self.sent.pop(priority, None)
        self._in_step = desired
        return asks

    def _match(self, container: dict[str, Any]) -> int | None:
        """The pending task this container suits best: same host, same rack, any."""
        priority = container["priority"]
        host = container["node_id"]
        rack = self.racks.get(host, DEFAULT_RACK)
        listed = self._pending_by_priority().get(priority)
        if not listed:
            return None
        state = self.state
        # Tasks at the front that have left PENDING only come back to it
        # through `_set_state`, which drops these lists: forget them, so each
        # placed container does not walk past every task placed before it.
        k, n = 0, len(listed)
        while k < n and state[listed[k]] != PENDING:
            k += 1
        if k:
            del listed[:k]
        if not self._any_hosts:
            # No task prefers a host (nor so a rack): the first pending one.
            return listed[0] if listed else None
        rack_match = any_match = None
        for i in listed:
            if state[i] != PENDING:
                continue
            if host in self.tasks[i].hosts:
                return i
            if rack_match is None and rack in self.task_racks[i]:
                rack_match = i
            if any_match is None:
                any_match = i
        return rack_match if rack_match is not None else any_match

    async def _launch(
        self, allocated: list[dict[str, Any]], nms: dict[str, Connection], stack: AsyncExitStack
    ) -> None:
        per_node: dict[tuple[str, str], list[dict[str, Any]]] = {}
        now = current_time()
        for c in allocated:
            i = self._match(c)
            if i is None:
                self.releases.append(c["container_id"])
                continue
            self._set_state(i, RUNNING)
            self.container_task[c["container_id"]] = i
            task = self.tasks[i]
            if task.duration_ms >= 0:
                heapq.heappush(
                    self._deadlines,
                    (now + task.duration_ms / 1000 + TASK_TIMEOUT_S, i, c["container_id"]),
                )
            per_node.setdefault((c["nm_address"], c["node_id"]), []).append(
                {
                    "container_id": c["container_id"],
                    "resource": c["resource"],
                    "duration_ms": task.duration_ms,
                    "app_id": self.attempt_app_id(),
                    "am": None,
                    "priority": c["priority"],
                }
            )
        for (address, node_id), launches in per_node.items():
            failed: list[str] = []
            try:
                conn = nms.get(address)
                if conn is None:
                    conn = nms[address] = await stack.enter_async_context(
                        connect(address, identity=self.attempt_id, codec=CODEC)
                    )
                answer = await conn.request(
                    self._req("start_containers", node_id=node_id, containers=launches),
                    timeout=network_timeout(address, NM_REQUEST_TIMEOUT_S, 3.0),
                )
                reply = answer.to_map()
                if reply["type"] == "error":
                    failed = [x["container_id"] for x in launches]
                else:
                    failed = [f["container_id"] for f in reply["failed"]]
            except (TransportError, P.ProtocolError):
                failed = [x["container_id"] for x in launches]
            for cid in failed:
                i = self.container_task.pop(cid)
                self._set_state(i, PENDING)
                self.releases.append(cid)

    def attempt_app_id(self) -> str:
        """The app id of this attempt, built once: every container launch
        carries it, and the NM keeps it per running container."""
        if self._app_id is None:
            _, ts, seq, _ = self.attempt_id.split("_")
            self._app_id = f"application_{ts}_{seq}"
        return self._app_id


def _refusal_raised(mtype: str, reply: dict[str, Any]) -> dict[str, Any]:
    """`reply`, unless it is an error: an invalid ask fails the AM (as a
    YARN AM that gets an InvalidResourceRequestException from allocate
    fails its job), any other refusal shuts it down."""
    if reply["type"] == "error" and reply["code"] == P.INVALID_RESOURCE_REQUEST:
        raise AMFailed(reply["message"])
    if reply["type"] == "error":
        raise AMShutdown(f"{mtype} refused: {reply['code']}: {reply['message']}")
    return reply


async def run_am(am: dict[str, Any], faults: AMFaults | None = None) -> None:
    """Run one AM to its end (the NodeManager host's AM runner calls this)."""
    await ApplicationMaster(am, faults).run()

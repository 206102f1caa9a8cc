"""The AMRMProxy: an AM's scheduler address on its node, spreading the AM
over the federation's sub-clusters (YARN's FederationInterceptor).

An NM with the AMRMProxy enabled gives the AMs it starts its own address as
their scheduler's. Each AM's register, allocate and finish come here: the
home sub-cluster (the one the AM runs in) gets them as they are; the asks
are split by the federation's AMRMProxy policy, and where a part goes to
another sub-cluster, an unmanaged AM is submitted there under the same
application id and registered, and from then on every allocate of the AM
heartbeats it too. What the secondary sub-clusters allocate or complete
reaches the AM merged into the reply of its next allocate (Hadoop sends to
them asynchronously and merges the responses that have arrived); the AM
starts those containers on the secondaries' NMs itself. A release goes to
the sub-cluster that allocated the container; finishing the AM finishes
the unmanaged ones first.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

import structlog
import trio

from emu.federation.policies import AMRMProxyPolicy, Membership, PolicyError
from emu.msg import types as P
from emu.msg.types import Allocate, AllocateReply, Invalid, Map, Message
from emu.resources import Resource
from emu.transport import Connection, TransportError

log = structlog.get_logger()
UNAVAILABLE = "unavailable"

SUBCLUSTER_TIMEOUT = "yarn.federation.amrmproxy.subcluster.timeout.ms"
SUBCLUSTER_TIMEOUT_DEFAULT_MS = 60_000
CONNECT_MAX_WAIT = "yarn.resourcemanager.connect.max-wait.ms"
CONNECT_MAX_WAIT_DEFAULT_MS = 900_000
RETRY_INTERVAL_S = 30.0  # yarn.resourcemanager.connect.retry-interval.ms


@dataclass
class _Secondary:
    """An unmanaged AM of one attempt in another sub-cluster."""

    attempt_id: str
    response_id: int = 0
    registered: bool = False
    submitted: bool = False
    request_id: int = 0
    finished: bool = False
    asks: dict[tuple[int, str, int], dict[str, Any]] = field(default_factory=dict)
    """The asks this sub-cluster holds, by (priority, name, allocation id):
    stated again when its RM lost them (Hadoop's AMRMClientRelayer)."""
    last_ok_ms: int = 0
    """When its RM last answered an allocate."""


@dataclass
class _Interceptor:
    """One AM attempt's state (Hadoop's FederationInterceptor)."""

    attempt_id: str
    app_id: str
    queue: str
    user: str
    name: str
    policy: AMRMProxyPolicy
    secondaries: dict[str, _Secondary] = field(default_factory=dict)
    owner: dict[str, str] = field(default_factory=dict)
    """Container id -> the sub-cluster that allocated it (secondaries only)."""
    allocated: list[dict[str, Any]] = field(default_factory=list)
    completed: list[dict[str, Any]] = field(default_factory=list)
    """What the secondaries answered, for the AM's next reply."""
    available: dict[str, Resource] = field(default_factory=dict)
    nodes: dict[str, int] = field(default_factory=dict)


@dataclass
class FederationStats:
    """What the AMRMProxies did, for a run's outputs."""

    unmanaged_ams: int = 0
    containers_from_secondaries: Counter[str] = field(default_factory=Counter)
    """Sub-cluster -> containers it gave AMs homed elsewhere."""
    split_refused: int = 0


class AMRMProxy:
    """The AMRMProxy of the NMs of sub-cluster `home`, serving the AM
    protocol. `rms` are open connections to every sub-cluster RM's AM
    protocol and `clients` to their client services; `membership` reads the
    federation state store; `policy_for` makes an attempt's AMRMProxy policy."""

    def __init__(
        self,
        home: str,
        rms: dict[str, Connection],
        clients: dict[str, Connection],
        membership: Callable[[], Membership],
        policy_for: Callable[[str, str], AMRMProxyPolicy],
        stats: FederationStats,
        subcluster_timeout_ms: int = SUBCLUSTER_TIMEOUT_DEFAULT_MS,
        connect_max_wait_ms: int = CONNECT_MAX_WAIT_DEFAULT_MS,
    ) -> None:
        self.subcluster_timeout_ms = subcluster_timeout_ms
        self.connect_max_wait_ms = connect_max_wait_ms
        self.home = home
        self.rms = rms
        self.clients = clients
        self.membership = membership
        self.policy_for = policy_for
        self.stats = stats
        self.attempts: dict[str, _Interceptor] = {}
        self._id = 0

    async def handle(self, message: Message) -> Message:
        if message.type == P.INVALID_TYPE:
            e = cast(Invalid, message).error
            return Map(P.error(e.code, e.message, e.request_id))
        if message.type == "allocate":
            return await self._allocate(cast(Allocate, message))
        msg = message.to_map()
        mtype = msg["type"]
        if mtype == "register_am":
            return await self._register(message, msg)
        if mtype == "finish_am":
            return await self._finish(message, msg)
        return Map(
            P.error(P.WRONG_SERVICE, f"{mtype} is not served by the AMRMProxy", msg.get("id"))
        )

    async def _call(self, conn: Connection, mtype: str, **fields: Any) -> dict[str, Any]:
        """One request; an RM that is down answers as a refused connection."""
        self._id += 1
        try:
            reply: dict[str, Any] = (
                await conn.request(Map(P.request(mtype, self._id, **fields)))
            ).to_map()
        except TransportError as e:
            return P.error(UNAVAILABLE, str(e), self._id)
        return reply

    async def _home(self, message: Message) -> Message:
        """A request to the home RM, tried again every retry interval while
        it does not answer, for at most `yarn.resourcemanager.connect.max-wait.ms`
        (YARN's RMProxy retry policy): the AM's call waits meanwhile."""
        waited = 0.0
        while True:
            try:
                return await self.rms[self.home].request(message)
            except TransportError as e:
                if waited * 1000 >= self.connect_max_wait_ms:
                    request_id = message.to_map().get("id")
                    return Map(
                        P.error(UNAVAILABLE, f"the home RM does not answer: {e}", request_id)
                    )
                step = min(RETRY_INTERVAL_S, self.connect_max_wait_ms / 1000 - waited)
                await trio.sleep(max(step, 0.001))
                waited += max(step, 0.001)

    async def _register(self, message: Message, msg: dict[str, Any]) -> Message:
        """The AM registers with its home RM; the proxy learns its app."""
        reply = await self._home(message)
        if reply.type == "error":
            return reply
        attempt_id = msg["attempt_id"]
        if attempt_id not in self.attempts:
            app_id = "application_" + "_".join(attempt_id.split("_")[1:3])
            report = await self._call(self.clients[self.home], "application_report", app_id=app_id)
            r = report.get("report") or {}
            self.attempts[attempt_id] = _Interceptor(
                attempt_id,
                app_id,
                r.get("queue", "default"),
                r.get("user", ""),
                r.get("name", app_id),
                self.policy_for(self.home, r.get("queue", "default")),
            )
        return reply

    async def _allocate(self, req: Allocate) -> Message:
        it = self.attempts.get(req.attempt_id)
        if it is None:  # not registered through this proxy: the home RM decides
            return await self._home(req)
        members = self.membership()
        now = round(trio.current_time() * 1000)
        timed_out = [
            sid
            for sid, sec in it.secondaries.items()
            if sec.registered and now - sec.last_ok_ms > self.subcluster_timeout_ms
        ]
        try:
            split = it.policy.split(req.asks, members, timed_out) if req.asks else {}
        except PolicyError as e:
            self.stats.split_refused += 1
            return Map(P.error(P.INVALID, f"AMRMProxy policy: {e}", req.request_id))
        releases: dict[str, list[str]] = {}
        for cid in req.releases:
            releases.setdefault(it.owner.get(cid, self.home), []).append(cid)
        for sid in sorted(set(split) | set(releases) | set(it.secondaries)):
            if sid == self.home:
                continue
            await self._secondary(it, sid, split.get(sid, []), releases.get(sid, []), req)
        home = Allocate(
            req.request_id,
            req.attempt_id,
            req.response_id,
            split.get(self.home, []) if req.asks else [],
            releases.get(self.home, []),
            req.blacklist_add,
            req.blacklist_remove,
            req.progress,
        )
        answer = await self._home(home)
        if answer.type != "allocate_reply":
            return answer
        reply = cast(AllocateReply, answer)
        it.policy.notify(self.home, _memory(reply.available))
        if reply.command is not None or not it.secondaries:
            return reply  # what the secondaries gave waits for a reply the AM acts on
        available = _resource(reply.available)
        nodes = reply.num_cluster_nodes
        for sid, res in it.available.items():
            available = available + res
            nodes += it.nodes.get(sid, 0)
        merged = AllocateReply(
            reply.request_id,
            reply.response_id,
            reply.allocated + it.allocated,
            reply.completed + it.completed,
            available,
            nodes,
            reply.preemption,
            reply.command,
        )
        it.allocated, it.completed = [], []
        return merged

    async def _secondary(
        self,
        it: _Interceptor,
        sid: str,
        asks: list[dict[str, Any]],
        releases: list[str],
        req: Allocate,
    ) -> None:
        """One allocate of the AM forwarded to sub-cluster `sid`: its unmanaged
        AM submitted and registered first if it has none (again, with every
        ask it holds, after its RM lost it). An RM that does not answer is
        skipped this time; one silent for `subcluster.timeout.ms` counts as
        timed out for the policy's splits."""
        sec = it.secondaries.get(sid)
        if sec is None:
            if not asks:
                return
            sec = it.secondaries[sid] = _Secondary(
                it.attempt_id.rsplit("_", 1)[0] + "_000001",
                last_ok_ms=round(trio.current_time() * 1000),
            )
        for a in asks:
            key = (a.get("priority", 0), a["resource_name"], a.get("allocation_request_id", 0))
            sec.asks[key] = a
        if sec.finished:
            return
        if not sec.submitted and not await self._submit_unmanaged(it, sid, sec):
            return
        if not sec.registered:
            registered = await self._call(
                self.rms[sid], "register_am", attempt_id=sec.attempt_id, host="", tracking_url=""
            )
            if registered["type"] == "error":
                if registered["code"] == P.NOT_FOUND:
                    sec.submitted = False  # its RM restarted without it: submit again
                return  # not launched yet, or its RM is down: tried again next time
            sec.registered = True
            sec.response_id = 0
            asks = [a for a in sec.asks.values() if a["num_containers"] > 0]
        sec.request_id += 1
        try:
            answer = await self.rms[sid].request(
                Allocate(
                    sec.request_id,
                    sec.attempt_id,
                    sec.response_id,
                    asks,
                    releases,
                    req.blacklist_add,
                    req.blacklist_remove,
                    req.progress,
                )
            )
        except TransportError:
            return
        if answer.type != "allocate_reply":
            code = answer.to_map().get("code")
            if code in (P.NOT_FOUND, P.INVALID):
                # The RM restarted: lost the app (not found) or has it back
                # waiting for its AM (not registered).
                sec.registered = False
                sec.submitted = code != P.NOT_FOUND
            return
        reply = cast(AllocateReply, answer)
        if reply.command is not None:
            if reply.command == P.SHUTDOWN:
                sec.finished = True
            elif reply.command == P.RESYNC:
                sec.registered = False
            return
        sec.response_id = reply.response_id
        sec.last_ok_ms = round(trio.current_time() * 1000)
        it.policy.notify(sid, _memory(reply.available))
        for c in reply.allocated:
            it.owner[c["container_id"]] = sid
        if reply.allocated:
            self.stats.containers_from_secondaries[sid] += len(reply.allocated)
        it.allocated.extend(reply.allocated)
        it.completed.extend(reply.completed)
        it.available[sid] = _resource(reply.available)
        it.nodes[sid] = reply.num_cluster_nodes

    async def _submit_unmanaged(self, it: _Interceptor, sid: str, sec: _Secondary) -> bool:
        """The unmanaged AM of `it`'s app submitted to sub-cluster `sid`."""
        submitted = await self._call(
            self.clients[sid],
            "submit_application",
            app_id=it.app_id,
            name=it.name,
            queue=it.queue,
            user=it.user,
            priority=0,
            am_resource=Resource().to_wire(),
            am_type="unmanaged",
            context={},
            unmanaged_am=True,
        )
        if submitted["type"] == "error":
            if submitted["code"] != UNAVAILABLE:
                log.warning(
                    "unmanaged AM refused", sub_cluster=sid, app=it.app_id, why=submitted["message"]
                )
                sec.finished = True
            return False
        sec.submitted = True
        sec.registered = False
        self.stats.unmanaged_ams += 1
        return True

    async def _finish(self, message: Message, msg: dict[str, Any]) -> Message:
        """finish_am: the unmanaged AMs finish first, then the home one."""
        it = self.attempts.get(msg["attempt_id"])
        if it is not None:
            for sid, sec in sorted(it.secondaries.items()):
                if sec.registered and not sec.finished:
                    await self._call(
                        self.rms[sid],
                        "finish_am",
                        attempt_id=sec.attempt_id,
                        final_status=msg["final_status"],
                        diagnostics=msg["diagnostics"],
                    )
                    sec.finished = True
        reply = await self._home(message)
        if reply.type != "error" and it is not None:
            del self.attempts[it.attempt_id]
        return reply


def _resource(available: Any) -> Resource:
    return available if isinstance(available, Resource) else Resource.from_wire(available)


def _memory(available: Any) -> int | None:
    if available is None:
        return None
    return _resource(available).memory

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

from emu.federation.policies import AMRMProxyPolicy, Membership, PolicyError
from emu.msg import types as P
from emu.msg.types import Allocate, AllocateReply, Invalid, Map, Message
from emu.resources import Resource
from emu.transport import Connection

log = structlog.get_logger()

AMRMPROXY_ENABLED = "yarn.nodemanager.amrmproxy.enabled"


@dataclass
class _Secondary:
    """An unmanaged AM of one attempt in another sub-cluster."""

    attempt_id: str
    response_id: int = 0
    registered: bool = False
    request_id: int = 0
    finished: bool = False


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
    ) -> None:
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
        self._id += 1
        reply: dict[str, Any] = (
            await conn.request(Map(P.request(mtype, self._id, **fields)))
        ).to_map()
        return reply

    async def _register(self, message: Message, msg: dict[str, Any]) -> Message:
        """The AM registers with its home RM; the proxy learns its app."""
        reply = await self.rms[self.home].request(message)
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
            return await self.rms[self.home].request(req)
        members = self.membership()
        try:
            split = it.policy.split(req.asks, members) if req.asks else {}
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
        answer = await self.rms[self.home].request(home)
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
        """One allocate of the AM forwarded to sub-cluster `sid`, its unmanaged
        AM submitted and registered first if it has none yet."""
        sec = it.secondaries.get(sid)
        if sec is None:
            if not asks:
                return
            sec = it.secondaries[sid] = _Secondary(it.attempt_id.rsplit("_", 1)[0] + "_000001")
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
                log.warning(
                    "unmanaged AM refused", sub_cluster=sid, app=it.app_id, why=submitted["message"]
                )
                sec.finished = True
                return
            self.stats.unmanaged_ams += 1
        if sec.finished:
            return
        if not sec.registered:
            registered = await self._call(
                self.rms[sid], "register_am", attempt_id=sec.attempt_id, host="", tracking_url=""
            )
            if registered["type"] == "error":
                return  # not launched yet (its queue holds it): asked again next time
            sec.registered = True
        sec.request_id += 1
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
        if answer.type != "allocate_reply":
            return
        reply = cast(AllocateReply, answer)
        if reply.command is not None:
            if reply.command == P.SHUTDOWN:
                sec.finished = True
            return
        sec.response_id = reply.response_id
        it.policy.notify(sid, _memory(reply.available))
        for c in reply.allocated:
            it.owner[c["container_id"]] = sid
        if reply.allocated:
            self.stats.containers_from_secondaries[sid] += len(reply.allocated)
        it.allocated.extend(reply.allocated)
        it.completed.extend(reply.completed)
        it.available[sid] = _resource(reply.available)
        it.nodes[sid] = reply.num_cluster_nodes

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
        reply = await self.rms[self.home].request(message)
        if reply.type != "error" and it is not None:
            del self.attempts[it.attempt_id]
        return reply


def _resource(available: Any) -> Resource:
    return available if isinstance(available, Resource) else Resource.from_wire(available)


def _memory(available: Any) -> int | None:
    if available is None:
        return None
    return _resource(available).memory

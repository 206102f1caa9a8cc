"""ApplicationMasterService: AMs register, allocate and unregister."""

from __future__ import annotations

from typing import Any

from emu.msg import types as P
from emu.msg.types import Allocate, AllocateReply
from emu.resources import Resource
from emu.rm import attempt as attempt_sm
from emu.rm.scheduler.abstract_scheduler import SchedulerError
from emu.rm.services.service import Refused, Service


class ApplicationMasterService(Service):
    """The ApplicationMasterProtocol: one attempt's register/allocate/finish."""

    def _attempt(self, msg: dict[str, Any]) -> attempt_sm.RMAppAttempt:
        a = self.ctx.attempts.get(msg["attempt_id"])
        if a is None:
            raise Refused(P.NOT_FOUND, f"unknown attempt {msg['attempt_id']}")
        return a

    def register_am(self, msg: dict[str, Any]) -> dict[str, Any]:
        ctx = self.ctx
        a = self._attempt(msg)
        if a.state not in (attempt_sm.LAUNCHED, attempt_sm.ALLOCATED):
            raise Refused(P.INVALID, f"attempt {a.attempt_id} cannot register in state {a.state}")
        ctx.dispatch("attempt", attempt_sm.AttemptEvent.REGISTERED, a.attempt_id, msg["host"])
        ctx.dispatcher.drain()
        app = ctx.apps[a.app_id]
        return P.reply(
            msg,
            max_capability=ctx.scheduler.maximum.to_wire(),
            queue=app.queue,
            cluster_resource=ctx.scheduler.cluster.to_wire(),
        )

    def allocate(self, req: Allocate) -> AllocateReply:
        """One allocate: hands the asks, releases and blacklist changes to
        the scheduler and answers with what it has for the AM since the
        last call (the reply is kept for a repeat of the call)."""
        ctx = self.ctx
        a = ctx.attempts.get(req.attempt_id)
        if a is None:
            raise Refused(P.NOT_FOUND, f"unknown attempt {req.attempt_id}")
        recovery = ctx.recovery
        if recovery is not None:
            resync = recovery.allocate_resync(req)
            if resync is not None:
                return resync
        if a.state in attempt_sm.FINAL or a.state == attempt_sm.FINISHING:
            return self._command(req, a, P.SHUTDOWN)
        if a.state != attempt_sm.RUNNING:
            raise Refused(P.INVALID, f"attempt {a.attempt_id} is not registered (state {a.state})")
        rid = req.response_id
        if rid + 1 == a.response_id and a.last_reply is not None:
            return a.last_reply.answering(req.request_id)
        if rid != a.response_id:
            return self._command(req, a, P.RESYNC)
        ctx.am_liveness.ping(a.attempt_id, ctx.now_ms())
        try:
            alloc = ctx.scheduler.allocate(
                a.attempt_id, req.asks, req.releases, req.blacklist_add, req.blacklist_remove
            )
        except SchedulerError as e:
            raise Refused(P.INVALID_RESOURCE_REQUEST, str(e)) from None
        ctx.dispatcher.drain()
        allocated = []
        if alloc.containers:
            nodes = ctx.nodes
            for c in alloc.containers:
                node = nodes.get(c.node_id)
                allocated.append(
                    {
                        "container_id": c.container_id,
                        "node_id": c.node_id,
                        "nm_address": node.nm_address if node is not None else "",
                        "resource": c.resource.to_wire(),
                        "priority": c.priority,
                    }
                )
        completed, a.just_finished = a.just_finished, []
        a.response_id += 1
        reply = AllocateReply(
            req.request_id,
            a.response_id,
            allocated,
            completed,
            alloc.headroom,
            len(ctx.scheduler.nodes),
            {"containers": alloc.preempt} if alloc.preempt else None,
        )
        a.last_reply = reply
        return reply

    def _command(self, req: Allocate, a: attempt_sm.RMAppAttempt, command: str) -> AllocateReply:
        """The reply that only tells the AM to RESYNC or SHUTDOWN."""
        return AllocateReply(
            req.request_id,
            a.response_id,
            [],
            [],
            Resource(),
            len(self.ctx.scheduler.nodes),
            None,
            command,
        )

    def finish_am(self, msg: dict[str, Any]) -> dict[str, Any]:
        a = self._attempt(msg)
        if a.state == attempt_sm.FINISHING:
            return P.reply(msg, unregistered=True)
        if a.state != attempt_sm.RUNNING:
            raise Refused(P.INVALID, f"attempt {a.attempt_id} cannot unregister in state {a.state}")
        status = msg["final_status"]
        if status not in ("SUCCEEDED", "FAILED", "KILLED", "UNDEFINED"):
            raise Refused(P.INVALID, f"unknown final status {status!r}")
        self.ctx.dispatch(
            "attempt",
            attempt_sm.AttemptEvent.UNREGISTERED,
            a.attempt_id,
            (status, msg.get("diagnostics") or ""),
        )
        return P.reply(msg, unregistered=True)

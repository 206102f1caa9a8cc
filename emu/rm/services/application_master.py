"""ApplicationMasterService: AMs register, allocate and unregister."""

from __future__ import annotations

from typing import Any

from emu.msg import types as P
from emu.msg.types import Allocate, AllocateReply
from emu.resources import Resource
from emu.rm import attempt as attempt_sm
from emu.rm.scheduler.abstract_scheduler import SchedulerError
from emu.rm.services.service import Refused, Service

NOTHING = AllocateReply(0, 0, [], [], Resource(), 0)
"""An attempt's last reply when its last allocate was one of nothing
answered directly (`allocate_nothing`): a repeat of it gets that reply
made then. Never sent."""


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
            if a.last_reply is NOTHING:
                # The repeat of an allocate of nothing answered directly.
                return self._nothing(req, a)
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

    def allocate_nothing(self, attempt_id: str, response_id: int) -> int | None:
        """An allocate that asks, releases and blacklists nothing, made
        cheaper for an AM in this process (`Connection.call_direct`): when
        its reply would carry nothing either (no container placed or
        completed, nothing to preempt, no command) and the scheduler's
        allocate would change nothing (`Scheduler.allocate_nothing`, which
        counts it as a call), it is taken in as `allocate` takes it (the
        liveness ping, the response id) and the new response id is the
        answer, with no message either way. None: make the call (the reply
        has something, the attempt is not running or out of step, or the RM
        recovers state). Most allocates of a busy cluster are these: an AM
        waiting for its running tasks to end."""
        ctx = self.ctx
        if ctx.recovery is not None or ctx.settings.plugin:
            return None
        a = ctx.attempts.get(attempt_id)
        if (
            a is None
            or a.state != attempt_sm.RUNNING
            or response_id != a.response_id
            or a.just_finished
            or not ctx.scheduler.allocate_nothing(attempt_id)
        ):
            return None
        ctx.am_liveness.ping(attempt_id, ctx.now_ms())
        a.response_id += 1
        a.last_reply = NOTHING
        return a.response_id

    def _nothing(self, req: Allocate, a: attempt_sm.RMAppAttempt) -> AllocateReply:
        """The reply an allocate of nothing would have had (for its repeat)."""
        sched = self.ctx.scheduler
        sapp = sched.apps.get(a.attempt_id)
        headroom = sched.headroom(sapp) if sapp is not None else Resource()
        return AllocateReply(
            req.request_id, a.response_id, [], [], headroom, len(sched.nodes), None
        )

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

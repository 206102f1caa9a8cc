"""ApplicationMasterService: AMs register, allocate and unregister."""

from __future__ import annotations

from typing import Any

from emu import protocol as P
from emu.resources import Resource
from emu.rm import attempt as attempt_sm
from emu.rm.scheduler.abstract_scheduler import Allocation, SchedulerError
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

    def allocate(self, msg: dict[str, Any]) -> dict[str, Any]:
        ctx = self.ctx
        a = self._attempt(msg)
        if a.state in attempt_sm.FINAL or a.state == attempt_sm.FINISHING:
            return self._allocate_command(msg, a, P.SHUTDOWN)
        if a.state != attempt_sm.RUNNING:
            raise Refused(P.INVALID, f"attempt {a.attempt_id} is not registered (state {a.state})")
        rid = msg["response_id"]
        if rid + 1 == a.response_id and a.last_reply is not None:
            last = a.last_reply
            if type(last) is P.IdleAllocateReply:
                return {**last.reply_map(), "id": msg["id"]}
            assert isinstance(last, dict)
            return {**last, "id": msg["id"]}
        if rid != a.response_id:
            return self._allocate_command(msg, a, P.RESYNC)
        ctx.am_liveness.ping(a.attempt_id, ctx.now_ms())
        try:
            alloc = ctx.scheduler.allocate(
                a.attempt_id,
                msg["asks"],
                msg["releases"],
                msg["blacklist_add"],
                msg["blacklist_remove"],
            )
        except SchedulerError as e:
            raise Refused(P.INVALID_RESOURCE_REQUEST, str(e)) from None
        ctx.dispatcher.drain()
        return self._answer(msg["id"], a, alloc)

    def idle_allocate(self, req: P.IdleAllocate) -> P.IdleAllocateReply | dict[str, Any]:
        """`allocate` for a lean in-process call that hands over nothing
        (`P.IdleAllocate`), handled exactly as `allocate` would its map.
        When the RM has nothing for the AM either, the answer is the lean
        `P.IdleAllocateReply`, kept as the attempt's last reply for a
        repeat; otherwise `allocate`'s reply map. An attempt not running,
        a repeat or a response id out of step takes `allocate` itself."""
        ctx = self.ctx
        a = ctx.attempts.get(req.attempt_id)
        if a is None or a.state != attempt_sm.RUNNING or req.response_id != a.response_id:
            msg = req.to_msg()
            del msg["v"]
            return self.allocate(msg)
        ctx.am_liveness.ping(a.attempt_id, ctx.now_ms())
        alloc = ctx.scheduler.allocate(a.attempt_id, [], [], [], [])
        ctx.dispatcher.drain()
        if alloc.containers or alloc.preempt or a.just_finished:
            return self._answer(req.request_id, a, alloc)
        a.response_id += 1
        reply = P.IdleAllocateReply(
            req.request_id, a.response_id, alloc.headroom, len(ctx.scheduler.nodes)
        )
        a.last_reply = reply
        return reply

    def _answer(
        self, request_id: int, a: attempt_sm.RMAppAttempt, alloc: Allocation
    ) -> dict[str, Any]:
        """The allocate reply map that hands `alloc` and the completions
        since the last call to the AM; kept as its last reply."""
        nodes = self.ctx.nodes
        allocated = []
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
        reply = {
            "response_id": a.response_id,
            "allocated": allocated,
            "completed": completed,
            "available": alloc.headroom.to_wire(),
            "num_cluster_nodes": len(self.ctx.scheduler.nodes),
            "preemption": {"containers": alloc.preempt} if alloc.preempt else None,
            "command": None,
            "type": "allocate_reply",
            "id": request_id,
        }
        a.last_reply = reply
        return reply

    def _allocate_command(
        self, msg: dict[str, Any], a: attempt_sm.RMAppAttempt, command: str
    ) -> dict[str, Any]:
        return P.reply(
            msg,
            response_id=a.response_id,
            allocated=[],
            completed=[],
            available=Resource().to_wire(),
            num_cluster_nodes=len(self.ctx.scheduler.nodes),
            preemption=None,
            command=command,
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

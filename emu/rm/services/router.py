"""`RMServices`: routes each request to the service that serves it
(emu.rm.services), keeps the counts, and runs the RM's periodic work.

Its own module, not the package's `__init__`, so that it is compiled with
the rest of the RM (emu/native.py compiles no package `__init__`): every
node heartbeat and AM allocate passes through it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any, cast

import structlog

from emu.msg import catalogue as C
from emu.msg import types as P
from emu.msg.codec import from_map
from emu.msg.types import (
    Allocate,
    Invalid,
    Map,
    Message,
    NodeHeartbeats,
    NodeHeartbeatsReply,
)
from emu.rm import attempt as attempt_sm
from emu.rm import node as node_sm
from emu.rm.context import RMContext
from emu.rm.scheduler.events import SchedulerEvent
from emu.rm.services.admin import AdminService
from emu.rm.services.application_master import ApplicationMasterService
from emu.rm.services.client_rm import ClientRMService
from emu.rm.services.resource_tracker import ResourceTrackerService
from emu.rm.services.service import Refused, Service

log = structlog.get_logger("emu.rm")


class RMServices:
    """The four services over one RMContext, and the RM's periodic work."""

    def __init__(self, ctx: RMContext, epoch: float = 0.0, rate: float = 0.0) -> None:
        self.ctx = ctx
        self.requests: Counter[str] = Counter()
        self.answered_directly = 0
        """Of the `allocate` requests, those answered as direct calls."""
        self.errors: Counter[str] = Counter()
        self.tracker = ResourceTrackerService(ctx, self.errors, epoch, rate)
        self.am = ApplicationMasterService(ctx, self.errors)
        self.client = ClientRMService(ctx, self.errors)
        self.admin = AdminService(ctx, self.errors)
        by_family: dict[str, Service] = {
            C.RESOURCE_TRACKER: self.tracker,
            C.AM_PROTOCOL: self.am,
            C.CLIENT: self.client,
            C.ADMIN: self.admin,
        }
        self.handlers: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
            name: getattr(svc, name)
            for family, svc in by_family.items()
            for name in C.SERVICES[family]
            if hasattr(svc, name)
        }
        # For a request map: the messages whose service method takes the
        # object, and register_node with the recovery additions.
        self.handlers["allocate"] = self._allocate_map
        self.handlers["node_heartbeats"] = self._node_heartbeats_map
        self.handlers["register_node"] = self._register_node

    def serve(self, service: str, message: Message) -> Message:
        """One request on `service` -> its reply: the RM's one entry for
        every message, whatever transport brought it. Node heartbeats and
        allocates are handled as their objects; anything else as its map."""
        mtype = message.type
        if mtype == "node_heartbeats" and service == C.RESOURCE_TRACKER:
            return self.node_heartbeats(cast(NodeHeartbeats, message))
        if mtype == "allocate" and service == C.AM_PROTOCOL:
            return self.allocate(cast(Allocate, message))
        if mtype == P.INVALID_TYPE:
            return Map(self.error_reply(cast(Invalid, message).error))
        msg = message.to_map()
        if mtype not in C.CATALOGUE:
            return Map(
                self.error_reply(
                    P.ProtocolError(P.UNKNOWN_TYPE, f"{mtype} is not a request", msg.get("id"))
                )
            )
        return Map(self.handle(service, msg))

    def handle(self, service: str, msg: dict[str, Any]) -> dict[str, Any]:
        """One request map on `service` -> its reply map."""
        mtype = msg["type"]
        if mtype not in C.SERVICES[service]:
            self.errors[P.WRONG_SERVICE] += 1
            return P.error(P.WRONG_SERVICE, f"{mtype} is not served by {service}", msg["id"])
        self.requests[mtype] += 1
        try:
            reply = self.handlers[mtype](msg)
        except Exception as e:
            return self._failed(mtype, e, msg["id"])
        finally:
            self.ctx.dispatcher.drain()
        return reply

    def node_heartbeats(self, batch: NodeHeartbeats) -> NodeHeartbeatsReply:
        """A `node_heartbeats` batch: each entry handled, counted and
        drained as a `node_heartbeat` of its own, in order
        (`ResourceTrackerService.heartbeats`)."""
        self.requests["node_heartbeat"] += len(batch.beats)
        return self.tracker.heartbeats(batch, self._failed)

    def allocate(self, req: Allocate) -> Message:
        """An `allocate`: counted, guarded and drained as `handle` does a map."""
        self.requests["allocate"] += 1
        try:
            return self.am.allocate(req)
        except Exception as e:
            return Map(self._failed("allocate", e, req.request_id))
        finally:
            self.ctx.dispatcher.drain()

    def allocate_nothing(self, attempt_id: str, response_id: int) -> int | None:
        """An allocate of nothing answered without its messages
        (`ApplicationMasterService.allocate_nothing`), counted as an
        `allocate` when answered."""
        rid = self.am.allocate_nothing(attempt_id, response_id)
        if rid is not None:
            self.requests["allocate"] += 1
            self.answered_directly += 1
        return rid

    def _allocate_map(self, msg: dict[str, Any]) -> dict[str, Any]:
        """`allocate` for a request map (`handle`)."""
        return self.am.allocate(cast(Allocate, from_map(msg))).to_map()

    def _node_heartbeats_map(self, msg: dict[str, Any]) -> dict[str, Any]:
        """`node_heartbeats` for a request map (`handle`)."""
        return self.node_heartbeats(cast(NodeHeartbeats, from_map(msg))).to_map()

    def _register_node(self, msg: dict[str, Any]) -> dict[str, Any]:
        """`register_node`, with the recovery additions when recovery is on
        (taken in once the node has joined the scheduler)."""
        recovery = self.ctx.recovery
        if recovery is None:
            return self.tracker.register_node(msg)
        return recovery.register_node(self._node_registered, msg)

    def _node_registered(self, msg: dict[str, Any]) -> dict[str, Any]:
        """`register_node` and everything it sets off."""
        try:
            return self.tracker.register_node(msg)
        finally:
            self.ctx.dispatcher.drain()

    def _failed(self, mtype: str, e: Exception, request_id: int) -> dict[str, Any]:
        """The error reply to a request whose handler raised: a refusal with
        its code, anything else logged and answered INTERNAL; counted."""
        if isinstance(e, Refused):
            self.errors[e.code] += 1
            return P.error(e.code, e.message, request_id)
        self.errors[P.INTERNAL] += 1
        log.exception("request failed", type=mtype)
        # Not a refusal: emu's RM or scheduler is wrong (noise never gets
        # here: tests/integration/test_fuzz.py). What it had done is
        # unknown, so the RM stops, as Hadoop's does on a scheduler error,
        # rather than answer on from a state nobody can trust.
        self.ctx.fail_inside(e, f"handling {mtype}")
        return P.error(P.INTERNAL, f"{type(e).__name__}: {e}", request_id)

    def error_reply(self, err: P.ProtocolError) -> dict[str, Any]:
        self.errors[err.code] += 1
        return P.error(err.code, err.message, err.request_id)

    # --- periodic work and launch outcomes -------------------------------------------------------
    def check_monitor(self, name: str) -> list[str]:
        """Expire whatever the named monitor finds quiet; returns the ids."""
        ctx = self.ctx
        now = ctx.now_ms()
        if name == "nm":
            gone = ctx.nm_liveness.expired(now)
            for node_id in gone:
                ctx.dispatch("node", node_sm.NodeEvent.EXPIRE, node_id)
        elif name == "am":
            gone = ctx.am_liveness.expired(now)
            for attempt_id in gone:
                ctx.dispatch("attempt", attempt_sm.AttemptEvent.EXPIRE, attempt_id)
        else:
            gone = ctx.container_expiry.expired(now)
            for cid in gone:
                ctx.dispatch("scheduler", SchedulerEvent.CONTAINER_EXPIRED, cid)
        ctx.dispatcher.drain()
        return gone

    def scheduler_update(self) -> None:
        """The scheduler's periodic work (fair shares, preemption)."""
        self.ctx.scheduler.update()
        self.ctx.dispatcher.drain()

    def sort_nodes(self) -> None:
        """A run of the multi-node sorter (emu.rm.scheduler.capacity.multi_node)."""
        self.ctx.scheduler.sort_nodes()
        self.ctx.dispatcher.drain()

    def async_pass(self, tick_ms: int) -> None:
        """The tick `tick_ms` of asynchronous scheduling (emu.rm.scheduler.async_scheduling)."""
        self.ctx.scheduler.async_pass(tick_ms)
        self.ctx.dispatcher.drain()

    def take_am_launches(self) -> list[tuple[str, str, dict[str, Any]]]:
        launches, self.ctx.am_launches = self.ctx.am_launches, []
        return launches

    def am_launch_result(self, attempt_id: str, error: str | None) -> None:
        if error is None:
            self.ctx.dispatch("attempt", attempt_sm.AttemptEvent.LAUNCHED, attempt_id)
        else:
            self.ctx.dispatch("attempt", attempt_sm.AttemptEvent.LAUNCH_FAILED, attempt_id, error)
        self.ctx.dispatcher.drain()

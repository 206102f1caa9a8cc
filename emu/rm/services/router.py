"""`RMServices`: routes each protocol request to the service that serves it
(emu.rm.services), keeps the counts, and runs the RM's periodic work.

Its own module, not the package's `__init__`, so that it is compiled with
the rest of the RM (emu/native.py compiles no package `__init__`): every
node heartbeat and AM allocate passes through it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import structlog

from emu import protocol as P
from emu.rm import attempt as attempt_sm
from emu.rm import node as node_sm
from emu.rm.context import RMContext
from emu.rm.scheduler.events import SchedulerEvent
from emu.rm.services.admin import AdminService
from emu.rm.services.application_master import ApplicationMasterService
from emu.rm.services.client_rm import ClientRMService
from emu.rm.services.resource_tracker import ResourceTrackerService, count_quiet
from emu.rm.services.service import Refused, Service

log = structlog.get_logger("emu.rm")


class RMServices:
    """The four services over one RMContext, and the RM's periodic work."""

    def __init__(self, ctx: RMContext, epoch: float = 0.0, rate: float = 0.0) -> None:
        self.ctx = ctx
        self.requests: Counter[str] = Counter()
        self.errors: Counter[str] = Counter()
        self.tracker = ResourceTrackerService(ctx, self.errors, epoch, rate)
        self.am = ApplicationMasterService(ctx, self.errors)
        self.client = ClientRMService(ctx, self.errors)
        self.admin = AdminService(ctx, self.errors)
        by_family: dict[str, Service] = {
            P.RESOURCE_TRACKER: self.tracker,
            P.AM_PROTOCOL: self.am,
            P.CLIENT: self.client,
            P.ADMIN: self.admin,
        }
        self.handlers: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
            name: getattr(svc, name)
            for family, svc in by_family.items()
            for name in P.SERVICES[family]
            if hasattr(svc, name)
        }

    def handle(self, service: str, msg: dict[str, Any]) -> dict[str, Any]:
        """One validated request on `service` -> its reply map."""
        mtype = msg["type"]
        if mtype not in P.SERVICES[service]:
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

    def idle_allocate(self, req: P.IdleAllocate) -> P.IdleAllocateReply | dict[str, Any]:
        """`allocate` for a lean in-process call that hands over nothing
        (`P.IdleAllocate`, from an AM in this process): counted, guarded
        and drained as `handle` does the map
        (`ApplicationMasterService.idle_allocate`)."""
        self.requests["allocate"] += 1
        try:
            return self.am.idle_allocate(req)
        except Exception as e:
            return self._failed("allocate", e, req.request_id)
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
        return P.error(P.INTERNAL, f"{type(e).__name__}: {e}", request_id)

    def node_heartbeats(self, msg: dict[str, Any]) -> list[dict[str, Any]]:
        """The replies to a validated `node_heartbeats` batch: each entry
        handled, counted and drained exactly as `handle` would a
        `node_heartbeat` of its own, in order, without first copying it into
        a request map (the in-process hot path: one entry per node per
        second)."""
        rid = msg["id"]
        beats = msg["heartbeats"]
        beat = self.tracker.beat
        dispatcher = self.ctx.dispatcher
        self.requests["node_heartbeat"] += len(beats)
        now_ms = self.ctx.now_ms()
        replies = []
        for hb in beats:
            try:
                replies.append(beat(hb, rid, now_ms))
            except Exception as e:
                replies.append(self._failed("node_heartbeat", e, rid))
            if dispatcher.depth:
                dispatcher.drain()
        return replies

    def lean_heartbeats(self, batch: P.Heartbeats) -> P.HeartbeatReplies:
        """`node_heartbeats` for a lean in-process batch (`P.Heartbeats`,
        built by an NM host in this process): the same handling, counts and
        drains, entry by entry, on the tuples as they are, and the common
        replies as bare response ids (`ResourceTrackerService.beat_lean`)."""
        ctx = self.ctx
        rid = batch.request_id
        beats = batch.beats
        # Called as methods, not through bound-method objects: compiled,
        # that is a direct call instead of one through Python's calling
        # convention (two per heartbeat, ~1 % of a 10,000-node replay).
        tracker = self.tracker
        dispatcher = ctx.dispatcher
        self.requests["node_heartbeat"] += len(beats)
        now_ms = ctx.now_ms()
        replies: list[int | dict[str, Any]] = []
        # The quiet heartbeat, inline: what beat_lean does for a heartbeat
        # with no status from a RUNNING node with nothing to clean up that
        # the scheduler proves it can skip (`_quiet_node`), its event
        # counts added once for the batch (nothing reads them in between).
        nodes, pings = ctx.nodes, ctx.nm_liveness.last_pings
        scheduler = ctx.scheduler
        skipping = ctx.settings.shortcuts
        running = node_sm.RUNNING
        quiet = 0
        for node_id, response_id, statuses in beats:
            try:
                node = nodes.get(node_id)
                may_skip = True
                if (
                    skipping
                    and not statuses
                    and node is not None
                    and node.response_id == response_id
                    and node.state is running
                    and not node.containers_to_cleanup
                    and not node.apps_to_cleanup
                    and not dispatcher.depth
                ):
                    if scheduler.skip_quiet_node_update(node_id):
                        node.last_heartbeat_ms = now_ms
                        if node_id in pings:
                            pings[node_id] = now_ms
                        node.health_report = ""
                        response_id += 1
                        node.response_id = node.last_reply = response_id
                        replies.append(response_id)
                        quiet += 1
                        continue
                    # Asked already (a refusal leaves nothing behind): the pass runs.
                    may_skip = False
                replies.append(
                    tracker.beat_lean(node_id, response_id, statuses, rid, now_ms, may_skip)
                )
            except Exception as e:
                replies.append(self._failed("node_heartbeat", e, rid))
            if dispatcher.depth:
                dispatcher.drain()
        if quiet:
            count_quiet(dispatcher, quiet)
        return P.HeartbeatReplies(rid, replies, ctx.settings.nm_heartbeat_ms)

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

    def take_am_launches(self) -> list[tuple[str, str, dict[str, Any]]]:
        launches, self.ctx.am_launches = self.ctx.am_launches, []
        return launches

    def am_launch_result(self, attempt_id: str, error: str | None) -> None:
        if error is None:
            self.ctx.dispatch("attempt", attempt_sm.AttemptEvent.LAUNCHED, attempt_id)
        else:
            self.ctx.dispatch("attempt", attempt_sm.AttemptEvent.LAUNCH_FAILED, attempt_id, error)
        self.ctx.dispatcher.drain()

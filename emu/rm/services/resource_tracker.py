"""ResourceTrackerService: NodeManagers register, heartbeat and leave."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from typing import Any, Final

from emu.msg import types as P
from emu.msg.types import Beat, NodeHeartbeats, NodeHeartbeatsReply
from emu.resources import Resource
from emu.rm import node as node_sm
from emu.rm.context import RMContext
from emu.rm.node import RMNode
from emu.rm.scheduler.events import SchedulerEvent
from emu.rm.services.service import Refused, Service

_NOTHING: Final[tuple[list[str], list[dict[str, Any]]]] = ([], [])
"""A NODE_UPDATE's report of nothing (no container launched or completed):
read by the handler, never changed."""


class ResourceTrackerService(Service):
    """Node registration and heartbeats; a registering node learns the RM's
    clock (`epoch`, `rate`) from the reply."""

    def __init__(
        self, ctx: RMContext, errors: Counter[str], epoch: float = 0.0, rate: float = 0.0
    ) -> None:
        super().__init__(ctx, errors)
        self.epoch = epoch
        self.rate = rate

    def register_node(self, msg: dict[str, Any]) -> dict[str, Any]:
        ctx = self.ctx
        node_id = msg["node_id"]
        resource = Resource.from_wire(msg["resource"])
        minimum = ctx.settings.minimum_allocation
        if resource.memory < minimum.memory or resource.vcores < minimum.vcores:
            # YARN's ResourceTrackerService.registerNodeManager: a node that
            # cannot hold the smallest container is told to shut down.
            self.errors["node_below_minimum"] += 1
            return P.reply(
                msg,
                action=P.SHUTDOWN,
                next_heartbeat_ms=0,
                epoch=self.epoch,
                rate=self.rate,
                diagnostics=f"NodeManager from {msg['host']} doesn't satisfy minimum "
                f"allocations: {resource!r} < {minimum!r}",
            )
        now = ctx.now_ms()
        existing = ctx.nodes.get(node_id)
        if existing is not None:
            existing.nm_address = msg["nm_address"]
            existing.response_id = 0
            existing.last_reply = None
            ctx.nm_liveness.ping(node_id, now)
            ctx.dispatch("node", node_sm.NodeEvent.RECONNECTED, node_id, resource)
        else:
            old = ctx.inactive_nodes.pop(node_id, None)
            if old is not None and old.state == node_sm.DECOMMISSIONED:
                ctx.inactive_nodes[node_id] = old
                return P.reply(
                    msg, action=P.SHUTDOWN, next_heartbeat_ms=0, epoch=self.epoch, rate=self.rate
                )
            node = RMNode(
                node_id,
                msg["host"],
                msg["rack"],
                resource,
                msg["nm_address"],
                ctx.node_labels.registered(node_id, msg["host"], tuple(msg.get("labels") or ())),
                now,
            )
            ctx.nodes[node_id] = node
            ctx.dispatch("node", node_sm.NodeEvent.STARTED, node_id)
        return P.reply(
            msg,
            action=P.NORMAL,
            next_heartbeat_ms=ctx.settings.nm_heartbeat_ms,
            epoch=self.epoch,
            rate=self.rate,
        )

    def node_heartbeat(self, msg: dict[str, Any]) -> dict[str, Any]:
        """One node's `node_heartbeat` (a peer that sends them one by one):
        handled as a batch of one."""
        health = None
        if not msg["healthy"] or msg.get("health_report"):
            health = [(bool(msg["healthy"]), msg.get("health_report") or "")]
        batch = NodeHeartbeats(
            msg["id"], [(msg["node_id"], msg["response_id"], msg["containers"])], health
        )
        replies = self.heartbeats(batch)
        return replies.entry(replies.replies[0])

    def heartbeats(
        self,
        batch: NodeHeartbeats,
        failed: Callable[[str, Exception, int], dict[str, Any]] | None = None,
    ) -> NodeHeartbeatsReply:
        """Every node heartbeat the RM takes in, in order, each as a
        heartbeat of its own. The common reply (NORMAL, nothing to clean
        up) is the new response id alone, kept as that int for a repeat;
        anything else is the reply map. A heartbeat that raises gets
        `failed`'s error map (None: the exception propagates). The time is
        read once for the batch: the virtual clock does not move while it
        is handled, a wall clock by microseconds, well inside the liveness
        expiry."""
        ctx = self.ctx
        request_id = batch.request_id
        now_ms = ctx.now_ms()
        replies: list[int | dict[str, Any]] = []
        health = batch.health
        if health is None:
            self._take(batch.beats, True, "", request_id, now_ms, replies, failed)
        else:
            # Rare (only a peer that reports health sends it): beat by beat,
            # each with its own.
            for beat, (healthy, report) in zip(batch.beats, health, strict=True):
                self._take([beat], healthy, report, request_id, now_ms, replies, failed)
        return NodeHeartbeatsReply(request_id, replies, ctx.settings.nm_heartbeat_ms)

    def _take(
        self,
        beats: list[Beat],
        healthy: bool,
        report: str,
        request_id: int,
        now_ms: int,
        replies: list[int | dict[str, Any]],
        failed: Callable[[str, Exception, int], dict[str, Any]] | None,
    ) -> None:
        """`heartbeats` for `beats` of the same health: their answers added
        to `replies`.

        A heartbeat in step with its node takes one path: the node's
        heartbeat bookkeeping (last heartbeat, liveness, health report),
        its STATUS_UPDATE and everything that sets off, handled before the
        reply is built, then the response id and the reply.

        Made cheaper for every healthy heartbeat to a RUNNING node (most of
        them: 1 s apart, while containers run for minutes): its
        STATUS_UPDATE does one thing (`node._status`), raise a NODE_UPDATE
        with the containers it reports launched and completed, so while
        nothing else is queued (nothing would be handled between them) the
        pair is handled at once: the scheduler takes the NODE_UPDATE as its
        event handler would (`Scheduler.node_update`), and the dispatcher
        counts both events (`Dispatcher.handled_at_once`; SLS's
        scheduler-operation counters), sparing two events their queueing
        and routing. The scheduler decides, as on every node update,
        whether the pass would change anything
        (`Scheduler.skip_quiet_node_update`). With the shortcuts off
        (`RMSettings.shortcuts`), for a plugin scheduler (its handler is
        guarded: `RMContext.attach_scheduler`), and for a report while the
        RM recovers state, both events go through the queue."""
        ctx = self.ctx
        dispatcher = ctx.dispatcher
        nodes, pings = ctx.nodes, ctx.nm_liveness.last_pings
        settings, recovery = ctx.settings, ctx.recovery
        at_once = healthy and settings.shortcuts and not settings.plugin
        scheduler = ctx.scheduler
        running, final = node_sm.RUNNING, node_sm.FINAL
        clock = time.perf_counter
        status_updates = node_updates = 0
        update_seconds = 0.0
        # Whether nothing is queued: true at the start of every heartbeat
        # but perhaps the first, as each one leaves the queue drained.
        idle = not dispatcher.depth
        try:
            for node_id, rid, statuses in beats:
                try:
                    node = nodes.get(node_id)
                    if node is None or rid != node.response_id:
                        replies.append(self._out_of_step(node_id, node, rid, request_id))
                        if dispatcher.depth:
                            dispatcher.drain()
                    else:
                        node.last_heartbeat_ms = now_ms
                        if node_id in pings:
                            pings[node_id] = now_ms
                        node.health_report = report
                        if (
                            at_once
                            and idle
                            and node.state is running
                            and (not statuses or recovery is None)
                        ):
                            status_updates += 1
                            start = clock()
                            scheduler.node_update(
                                node_id, _reported(statuses) if statuses else _NOTHING
                            )
                            update_seconds += clock() - start
                            node_updates += 1
                            if dispatcher.depth:
                                dispatcher.drain()
                        else:
                            if recovery is not None and statuses and recovery.live_recovered:
                                recovery.heartbeat_statuses(node_id, statuses)
                            _status_update(ctx, node_id, healthy, statuses)
                        rid += 1
                        node.response_id = rid
                        if (
                            node.containers_to_cleanup
                            or node.apps_to_cleanup
                            or node.state in final
                        ):
                            replies.append(self._answer(node, request_id))
                        else:
                            node.last_reply = rid
                            replies.append(rid)
                except Exception as e:
                    if failed is None:
                        raise
                    replies.append(failed("node_heartbeat", e, request_id))
                    if dispatcher.depth:
                        dispatcher.drain()
                idle = True
        finally:
            dispatcher.handled_at_once("node", node_sm.NodeEvent.STATUS_UPDATE, status_updates, 0.0)
            dispatcher.handled_at_once(
                "scheduler", SchedulerEvent.NODE_UPDATE, node_updates, update_seconds
            )

    def _out_of_step(
        self, node_id: str, node: RMNode | None, rid: int, request_id: int
    ) -> dict[str, Any]:
        """The answer to a heartbeat from a node the RM does not know
        (RESYNC, or SHUTDOWN once decommissioned), a repeat of the last one
        (its reply again), or one too far behind (RESYNC)."""
        ctx = self.ctx
        if node is None:
            old = ctx.inactive_nodes.get(node_id)
            action = (
                P.SHUTDOWN if old is not None and old.state == node_sm.DECOMMISSIONED else P.RESYNC
            )
            return self._node_reply(request_id, rid, [], [], action)
        if rid + 1 == node.response_id and node.last_reply is not None:
            last = node.last_reply
            if isinstance(last, dict):
                return {**last, "id": request_id}
            return self._node_reply(request_id, last, [], [], P.NORMAL)
        # YARN: "too far behind rm response id"; the node is REBOOTED
        # (out of the scheduler) until it registers again.
        ctx.dispatch("node", node_sm.NodeEvent.REBOOTING, node_id)
        ctx.dispatcher.drain()
        return self._node_reply(request_id, rid, [], [], P.RESYNC)

    def _answer(self, node: RMNode, request_id: int) -> dict[str, Any]:
        """The reply to a heartbeat just taken in (response id already
        advanced): what the node must clean up, SHUTDOWN for a node in a
        final state; kept as the node's last reply for a repeat."""
        cleanup, node.containers_to_cleanup = node.containers_to_cleanup, []
        apps, node.apps_to_cleanup = node.apps_to_cleanup, []
        action = P.SHUTDOWN if node.state in node_sm.FINAL else P.NORMAL
        reply = self._node_reply(request_id, node.response_id, cleanup, apps, action)
        node.last_reply = reply
        return reply

    def _node_reply(
        self, request_id: int, rid: int, cleanup: list[str], apps: list[str], action: str
    ) -> dict[str, Any]:
        return {
            "response_id": rid,
            "containers_to_cleanup": cleanup,
            "apps_to_cleanup": apps,
            "action": action,
            "next_heartbeat_ms": self.ctx.settings.nm_heartbeat_ms,
            "type": "node_heartbeat_reply",
            "id": request_id,
        }

    def unregister_node(self, msg: dict[str, Any]) -> dict[str, Any]:
        node = self.ctx.nodes.get(msg["node_id"])
        if node is None:
            raise Refused(P.NOT_FOUND, f"unknown node {msg['node_id']}")
        self.ctx.dispatch("node", node_sm.NodeEvent.SHUTDOWN, node.node_id)
        return P.reply(msg)


def _reported(statuses: list[dict[str, Any]]) -> tuple[list[str], list[dict[str, Any]]]:
    """A heartbeat's container statuses as its NODE_UPDATE reports them:
    the ids of those launched, the statuses of those completed."""
    launched: list[str] = []
    completed: list[dict[str, Any]] = []
    for st in statuses:
        if st["state"] == "COMPLETE":
            completed.append(st)
        else:
            launched.append(st["container_id"])
    return launched, completed


def _status_update(
    ctx: RMContext, node_id: str, healthy: bool, statuses: list[dict[str, Any]]
) -> None:
    """The heartbeat's STATUS_UPDATE (launch reports and completions apart)
    and everything it sets off, handled before the reply is built."""
    launched, completed = _reported(statuses)
    ctx.dispatch("node", node_sm.NodeEvent.STATUS_UPDATE, node_id, (healthy, launched, completed))
    ctx.dispatcher.drain()

"""ResourceTrackerService: NodeManagers register, heartbeat and leave."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from emu.msg import types as P
from emu.msg.types import Beat, NodeHeartbeats, NodeHeartbeatsReply
from emu.resources import Resource
from emu.rm import node as node_sm
from emu.rm.context import RMContext
from emu.rm.dispatcher import Dispatcher
from emu.rm.node import RMNode
from emu.rm.scheduler.events import SchedulerEvent
from emu.rm.services.service import Refused, Service


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
        expiry.

        Shortcut: a heartbeat that reports no container, from a healthy
        running node with nothing to clean up, on which the scheduler can
        provably do nothing (`Scheduler.skip_quiet_node_update`), is
        answered without dispatching its STATUS_UPDATE and NODE_UPDATE
        (most heartbeats of a busy cluster: they are 1 s apart and
        containers run for minutes). Everything those two events leave
        behind is kept: the node stays RUNNING, liveness and response id
        advance, and the dispatcher's counts (SLS's scheduler-operation
        counters) go up as if both had been handled."""
        ctx = self.ctx
        request_id = batch.request_id
        now_ms = ctx.now_ms()
        replies: list[int | dict[str, Any]] = []
        health = batch.health
        if health is None:
            quiet = self._take(batch.beats, True, "", request_id, now_ms, replies, failed)
        else:
            # Rare (only a peer that reports health sends it): beat by beat,
            # each with its own.
            quiet = 0
            for beat, (healthy, report) in zip(batch.beats, health, strict=True):
                quiet += self._take([beat], healthy, report, request_id, now_ms, replies, failed)
        if quiet:
            count_quiet(ctx.dispatcher, quiet)
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
    ) -> int:
        """`heartbeats` for `beats` of the same health: their answers added
        to `replies`; returns how many were quiet."""
        ctx = self.ctx
        dispatcher = ctx.dispatcher
        nodes, pings = ctx.nodes, ctx.nm_liveness.last_pings
        scheduler = ctx.scheduler
        skipping = ctx.settings.shortcuts and healthy
        running = node_sm.RUNNING
        quiet = 0
        for node_id, rid, statuses in beats:
            try:
                node = nodes.get(node_id)
                if node is None or rid != node.response_id:
                    replies.append(self._out_of_step(node_id, node, rid, request_id))
                elif (
                    skipping
                    and not statuses
                    and node.state is running
                    and not node.containers_to_cleanup
                    and not node.apps_to_cleanup
                    and not dispatcher.depth
                    and scheduler.skip_quiet_node_update(node_id)
                ):
                    node.last_heartbeat_ms = now_ms
                    if node_id in pings:
                        pings[node_id] = now_ms
                    node.health_report = report
                    rid += 1
                    node.response_id = node.last_reply = rid
                    replies.append(rid)
                    quiet += 1
                    continue  # nothing was dispatched
                else:
                    replies.append(
                        self._beat(node, rid, statuses, healthy, report, request_id, now_ms)
                    )
            except Exception as e:
                if failed is None:
                    raise
                replies.append(failed("node_heartbeat", e, request_id))
            if dispatcher.depth:
                dispatcher.drain()
        return quiet

    def _beat(
        self,
        node: RMNode,
        rid: int,
        statuses: list[dict[str, Any]],
        healthy: bool,
        report: str,
        request_id: int,
        now_ms: int,
    ) -> int | dict[str, Any]:
        """A heartbeat in step with the node (`rid` is its response id),
        taken in with its STATUS_UPDATE: `heartbeats`' answer."""
        ctx = self.ctx
        node_id = node.node_id
        node.last_heartbeat_ms = now_ms
        ctx.nm_liveness.ping(node_id, now_ms)
        node.health_report = report
        recovery = ctx.recovery
        if recovery is not None and statuses and recovery.live_recovered:
            recovery.heartbeat_statuses(node_id, statuses)
        _status_update(ctx, node_id, healthy, statuses)
        rid += 1
        node.response_id = rid
        if node.containers_to_cleanup or node.apps_to_cleanup or node.state in node_sm.FINAL:
            return self._answer(node, request_id)
        node.last_reply = rid
        return rid

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


def _status_update(
    ctx: RMContext, node_id: str, healthy: bool, statuses: list[dict[str, Any]]
) -> None:
    """The heartbeat's STATUS_UPDATE (launch reports and completions apart)
    and everything it sets off, handled before the reply is built."""
    launched: list[str] = []
    completed: list[dict[str, Any]] = []
    for st in statuses:
        if st["state"] == "COMPLETE":
            completed.append(st)
        else:
            launched.append(st["container_id"])
    ctx.dispatch("node", node_sm.NodeEvent.STATUS_UPDATE, node_id, (healthy, launched, completed))
    ctx.dispatcher.drain()


def count_quiet(dispatcher: Dispatcher, n: int) -> None:
    """Count `n` skipped quiet heartbeats (see `heartbeats`) as handled STATUS_UPDATE and
    NODE_UPDATE events (SLS's scheduler-operation counters), each of which
    would have queued one event at a time."""
    dispatcher.counts("node", node_sm.NodeEvent.STATUS_UPDATE).count += n
    dispatcher.counts("scheduler", SchedulerEvent.NODE_UPDATE).count += n
    if dispatcher.max_depth < 1:
        dispatcher.max_depth = 1

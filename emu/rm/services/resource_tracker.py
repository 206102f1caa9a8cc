"""ResourceTrackerService: NodeManagers register, heartbeat and leave."""

from __future__ import annotations

from collections import Counter
from typing import Any

from emu import protocol as P
from emu.resources import Resource
from emu.rm import node as node_sm
from emu.rm.context import RMContext
from emu.rm.node import RMNode
from emu.rm.scheduler import shortcuts
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
                tuple(msg.get("labels") or ()),
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
        ctx = self.ctx
        node_id = msg["node_id"]
        node = ctx.nodes.get(node_id)
        if node is None:
            old = ctx.inactive_nodes.get(node_id)
            action = (
                P.SHUTDOWN if old is not None and old.state == node_sm.DECOMMISSIONED else P.RESYNC
            )
            return self._node_reply(msg, msg["response_id"], [], [], action)
        rid = msg["response_id"]
        if rid + 1 == node.response_id and node.last_reply is not None:
            return {**node.last_reply, "id": msg["id"]}
        if rid != node.response_id:
            # YARN: "too far behind rm response id"; the node is REBOOTED
            # (out of the scheduler) until it registers again.
            ctx.dispatch("node", node_sm.NodeEvent.REBOOTING, node_id)
            ctx.dispatcher.drain()
            return self._node_reply(msg, rid, [], [], P.RESYNC)
        now = ctx.now_ms()
        node.last_heartbeat_ms = now
        ctx.nm_liveness.ping(node_id, now)
        launched: list[str] = []
        completed: list[dict[str, Any]] = []
        for st in msg["containers"]:
            if st["state"] == "COMPLETE":
                completed.append(st)
            else:
                launched.append(st["container_id"])
        node.health_report = msg.get("health_report") or ""
        if not _quiet_heartbeat(ctx, node, msg):
            ctx.dispatch(
                "node",
                node_sm.NodeEvent.STATUS_UPDATE,
                node_id,
                (msg["healthy"], launched, completed),
            )
            ctx.dispatcher.drain()
        node.response_id = rid + 1
        action = P.SHUTDOWN if node.state in node_sm.FINAL else P.NORMAL
        cleanup, node.containers_to_cleanup = node.containers_to_cleanup, []
        apps, node.apps_to_cleanup = node.apps_to_cleanup, []
        reply = self._node_reply(msg, node.response_id, cleanup, apps, action)
        node.last_reply = reply
        return reply

    def _node_reply(
        self, msg: dict[str, Any], rid: int, cleanup: list[str], apps: list[str], action: str
    ) -> dict[str, Any]:
        return P.reply(
            msg,
            response_id=rid,
            containers_to_cleanup=cleanup,
            apps_to_cleanup=apps,
            action=action,
            next_heartbeat_ms=self.ctx.settings.nm_heartbeat_ms,
        )

    def unregister_node(self, msg: dict[str, Any]) -> dict[str, Any]:
        node = self.ctx.nodes.get(msg["node_id"])
        if node is None:
            raise Refused(P.NOT_FOUND, f"unknown node {msg['node_id']}")
        self.ctx.dispatch("node", node_sm.NodeEvent.SHUTDOWN, node.node_id)
        return P.reply(msg)


def _quiet_heartbeat(ctx: RMContext, node: RMNode, msg: dict[str, Any]) -> bool:
    """Shortcut: a heartbeat that reports no container, from a healthy
    running node with nothing to clean up, on which the scheduler can
    provably do nothing, is answered without dispatching its STATUS_UPDATE
    and NODE_UPDATE (most heartbeats of a busy cluster: they are 1 s apart
    and containers run for minutes). Everything those two events leave
    behind is kept: the node stays RUNNING, liveness and response id are
    advanced by the caller, and the dispatcher's counts (SLS's
    scheduler-operation counters) go up as if both had been handled."""
    dispatcher = ctx.dispatcher
    if (
        msg["containers"]
        or not msg["healthy"]
        or node.state != node_sm.RUNNING
        or node.containers_to_cleanup
        or node.apps_to_cleanup
        or dispatcher.depth
        or not shortcuts.enabled()
        or not ctx.scheduler.skip_quiet_node_update(node.node_id)
    ):
        return False
    handled = dispatcher.handled
    handled[_NODE_STATUS_UPDATE] += 1
    handled[_SCHEDULER_NODE_UPDATE] += 1
    dispatcher.max_depth = max(dispatcher.max_depth, 1)
    return True


_NODE_STATUS_UPDATE = f"node.{node_sm.NodeEvent.STATUS_UPDATE}"
_SCHEDULER_NODE_UPDATE = f"scheduler.{SchedulerEvent.NODE_UPDATE}"

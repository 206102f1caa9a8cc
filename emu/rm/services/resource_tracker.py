"""ResourceTrackerService: NodeManagers register, heartbeat and leave."""

from __future__ import annotations

from collections import Counter
from typing import Any

from emu import protocol as P
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
        return self.beat(msg, msg["id"])

    def beat(
        self, msg: dict[str, Any], request_id: int, now_ms: int | None = None
    ) -> dict[str, Any]:
        """One node's heartbeat: `msg` holds its fields (a `node_heartbeat`
        request, or one entry of a `node_heartbeats` batch, taken as it is,
        without a copy that would add the type and id); the reply answers
        `request_id`. `now_ms`: the time, when the caller read it once for a
        batch (the virtual clock does not move while one is handled; a wall
        clock moves by microseconds, well inside the liveness expiry)."""
        ctx = self.ctx
        node_id = msg["node_id"]
        node = ctx.nodes.get(node_id)
        if node is None:
            old = ctx.inactive_nodes.get(node_id)
            action = (
                P.SHUTDOWN if old is not None and old.state == node_sm.DECOMMISSIONED else P.RESYNC
            )
            return self._node_reply(request_id, msg["response_id"], [], [], action)
        rid = msg["response_id"]
        if rid + 1 == node.response_id and node.last_reply is not None:
            last = node.last_reply
            if type(last) is int:
                # The common reply, kept as its response id (see beat_lean).
                return self._node_reply(request_id, last, [], [], P.NORMAL)
            return {**last, "id": request_id}  # type: ignore[dict-item]
        if rid != node.response_id:
            # YARN: "too far behind rm response id"; the node is REBOOTED
            # (out of the scheduler) until it registers again.
            ctx.dispatch("node", node_sm.NodeEvent.REBOOTING, node_id)
            ctx.dispatcher.drain()
            return self._node_reply(request_id, rid, [], [], P.RESYNC)
        now = ctx.now_ms() if now_ms is None else now_ms
        node.last_heartbeat_ms = now
        ctx.nm_liveness.ping(node_id, now)
        containers = msg["containers"]
        node.health_report = msg.get("health_report") or ""
        if containers or not _quiet_heartbeat(ctx, node, msg):
            _status_update(ctx, node_id, msg["healthy"], containers)
        node.response_id = rid + 1
        return self._answer(node, request_id)

    def beat_lean(
        self,
        node_id: str,
        rid: int,
        statuses: list[dict[str, Any]],
        request_id: int,
        now_ms: int,
        may_skip: bool = True,
    ) -> int | dict[str, Any]:
        """One entry of a lean in-process batch (`P.Heartbeats`): a healthy
        node without a health report sending `statuses`, handled exactly as
        `beat` would its map. The common answer (NORMAL, nothing to clean
        up) comes back as the new response id alone, and is kept as that
        int for a repeat; anything else is `beat`'s reply map. `may_skip`
        False: the caller has already seen the scheduler refuse to skip
        this heartbeat's pass (asking again would only repeat the work)."""
        ctx = self.ctx
        node = ctx.nodes.get(node_id)
        if node is None or rid != node.response_id:
            # Unknown, a repeat, or too far behind: rare, the full path.
            return self.beat(
                {"node_id": node_id, "response_id": rid, "containers": statuses, "healthy": True},
                request_id,
                now_ms,
            )
        node.last_heartbeat_ms = now_ms
        ctx.nm_liveness.ping(node_id, now_ms)
        node.health_report = ""
        if statuses or not may_skip or not _quiet_node(ctx, node):
            _status_update(ctx, node_id, True, statuses)
        rid += 1
        node.response_id = rid
        if node.containers_to_cleanup or node.apps_to_cleanup or node.state in node_sm.FINAL:
            return self._answer(node, request_id)
        node.last_reply = rid
        return rid

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


def _quiet_heartbeat(ctx: RMContext, node: RMNode, msg: dict[str, Any]) -> bool:
    """Shortcut: a heartbeat that reports no container, from a healthy
    running node with nothing to clean up, on which the scheduler can
    provably do nothing, is answered without dispatching its STATUS_UPDATE
    and NODE_UPDATE (most heartbeats of a busy cluster: they are 1 s apart
    and containers run for minutes). Everything those two events leave
    behind is kept: the node stays RUNNING, liveness and response id are
    advanced by the caller, and the dispatcher's counts (SLS's
    scheduler-operation counters) go up as if both had been handled."""
    if msg["containers"] or not msg["healthy"]:
        return False
    return _quiet_node(ctx, node)


def _quiet_node(ctx: RMContext, node: RMNode) -> bool:
    """`_quiet_heartbeat` for a heartbeat already known to report no
    container from a healthy node; counts the skipped events if quiet."""
    dispatcher = ctx.dispatcher
    if (
        node.state != node_sm.RUNNING
        or node.containers_to_cleanup
        or node.apps_to_cleanup
        or dispatcher.depth
        or not ctx.settings.shortcuts
        or not ctx.scheduler.skip_quiet_node_update(node.node_id)
    ):
        return False
    count_quiet(dispatcher, 1)
    return True


def count_quiet(dispatcher: Dispatcher, n: int) -> None:
    """Count `n` skipped quiet heartbeats as handled STATUS_UPDATE and
    NODE_UPDATE events (SLS's scheduler-operation counters), each of which
    would have queued one event at a time."""
    dispatcher.counts("node", node_sm.NodeEvent.STATUS_UPDATE).count += n
    dispatcher.counts("scheduler", SchedulerEvent.NODE_UPDATE).count += n
    if dispatcher.max_depth < 1:
        dispatcher.max_depth = 1

"""RMNode: the RM's view of one NodeManager, as YARN's RMNodeImpl.

A status update is where everything about a node starts: newly running and
completed containers are handed to the scheduler with NODE_UPDATE, which is
the only moment containers are placed on the node. Cleanup lists fill up here
and drain into the next heartbeat reply.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from emu.resources import Resource
from emu.rm.statemachine import StateMachine

if TYPE_CHECKING:
    from emu.rm.context import RMContext

NEW, RUNNING, UNHEALTHY, DECOMMISSIONING = "NEW", "RUNNING", "UNHEALTHY", "DECOMMISSIONING"
DECOMMISSIONED, LOST, REBOOTED, SHUTDOWN = "DECOMMISSIONED", "LOST", "REBOOTED", "SHUTDOWN"
STATES = (NEW, RUNNING, UNHEALTHY, DECOMMISSIONING, DECOMMISSIONED, LOST, REBOOTED, SHUTDOWN)
FINAL = (DECOMMISSIONED, LOST, REBOOTED, SHUTDOWN)


class RMNode:
    """A registered node: identity, resource, heartbeat bookkeeping."""

    __slots__ = (
        "apps_to_cleanup",
        "containers_to_cleanup",
        "health_report",
        "host",
        "labels",
        "last_heartbeat_ms",
        "last_reply",
        "nm_address",
        "node_id",
        "rack",
        "registered_ms",
        "resource",
        "resource_updated_ms",
        "response_id",
        "running_apps",
        "state",
    )

    def __init__(
        self,
        node_id: str,
        host: str,
        rack: str,
        resource: Resource,
        nm_address: str,
        labels: tuple[str, ...],
        now_ms: int,
    ) -> None:
        self.node_id = node_id
        self.host = host
        self.rack = rack
        self.resource = resource
        self.nm_address = nm_address
        self.labels = labels
        self.state = NEW
        self.response_id = 0
        self.last_reply: bytes | None = None
        self.registered_ms = now_ms
        self.last_heartbeat_ms = now_ms
        self.containers_to_cleanup: list[str] = []
        self.apps_to_cleanup: list[str] = []
        self.running_apps: set[str] = set()
        self.health_report = ""
        self.resource_updated_ms = -1
        """When an admin last changed the resource: containers placed before
        may run on over a smaller total, as in YARN (nothing new is placed)."""

    def report(self, used: Resource, num_containers: int) -> dict[str, Any]:
        return {
            "node_id": self.node_id,
            "host": self.host,
            "rack": self.rack,
            "state": self.state,
            "nm_address": self.nm_address,
            "total": self.resource.to_wire(),
            "used": used.to_wire(),
            "num_containers": num_containers,
            "last_heartbeat_ms": self.last_heartbeat_ms,
            "health_report": self.health_report,
            "labels": list(self.labels),
        }


def _started(ctx: RMContext, n: RMNode, data: Any) -> None:
    ctx.nm_liveness.register(n.node_id, ctx.now_ms())
    ctx.dispatch("scheduler", "NODE_ADDED", n.node_id, n)


def _status(ctx: RMContext, n: RMNode, data: Any) -> str:
    """data = (healthy, launched ids, completed statuses)."""
    healthy, launched, completed = data
    if healthy:
        ctx.dispatch("scheduler", "NODE_UPDATE", n.node_id, (launched, completed))
        return RUNNING
    ctx.dispatch("scheduler", "NODE_UPDATE", n.node_id, (launched, completed))
    ctx.dispatch("scheduler", "NODE_REMOVED", n.node_id, n)
    return UNHEALTHY


def _status_unhealthy(ctx: RMContext, n: RMNode, data: Any) -> str:
    healthy, launched, completed = data
    if not completed and not launched and not healthy:
        return UNHEALTHY
    if healthy:
        ctx.dispatch("scheduler", "NODE_ADDED", n.node_id, n)
        ctx.dispatch("scheduler", "NODE_UPDATE", n.node_id, (launched, completed))
        return RUNNING
    return UNHEALTHY


def _status_decommissioning(ctx: RMContext, n: RMNode, data: Any) -> str:
    _, launched, completed = data
    ctx.dispatch("scheduler", "NODE_UPDATE", n.node_id, (launched, completed))
    if ctx.scheduler.node_container_count(n.node_id) <= len(completed):
        _deactivate(ctx, n, None)
        return DECOMMISSIONED
    return DECOMMISSIONING


def _deactivate(ctx: RMContext, n: RMNode, data: Any) -> None:
    """The node leaves the cluster: the scheduler forgets it and its containers."""
    ctx.nm_liveness.unregister(n.node_id)
    ctx.dispatch("scheduler", "NODE_REMOVED", n.node_id, n)
    ctx.deactivate_node(n)


def _deactivate_unhealthy(ctx: RMContext, n: RMNode, data: Any) -> None:
    """Already out of the scheduler while unhealthy; just leave the cluster."""
    ctx.nm_liveness.unregister(n.node_id)
    ctx.deactivate_node(n)


def _resource_update(ctx: RMContext, n: RMNode, data: Any) -> None:
    n.resource = data
    n.resource_updated_ms = ctx.now_ms()
    ctx.dispatch("scheduler", "NODE_RESOURCE_UPDATE", n.node_id, n)


def _cleanup_container(ctx: RMContext, n: RMNode, data: Any) -> None:
    n.containers_to_cleanup.append(data)


def _cleanup_app(ctx: RMContext, n: RMNode, data: Any) -> None:
    n.running_apps.discard(data)
    n.apps_to_cleanup.append(data)


def _reconnected(ctx: RMContext, n: RMNode, data: Any) -> None:
    """Same node registered again while we thought it ran: YARN's
    ReconnectNodeTransition removes and re-adds it, dropping its containers."""
    ctx.dispatch("scheduler", "NODE_REMOVED", n.node_id, n)
    n.resource = data
    ctx.dispatch("scheduler", "NODE_ADDED", n.node_id, n)


_ACTIVE = (RUNNING, UNHEALTHY, DECOMMISSIONING)
_LATE = (
    "STATUS_UPDATE",
    "EXPIRE",
    "CLEANUP_CONTAINER",
    "CLEANUP_APP",
    "DECOMMISSION",
    "RESOURCE_UPDATE",
    "SHUTDOWN",
    "REBOOTING",
    "GRACEFUL_DECOMMISSION",
    "RECOMMISSION",
)

MACHINE = StateMachine(
    "Node",
    STATES,
    NEW,
    FINAL,
    [
        (NEW, "STARTED", RUNNING, _started),
        (NEW, "RESOURCE_UPDATE", NEW, None),
        (RUNNING, "STATUS_UPDATE", (RUNNING, UNHEALTHY), _status),
        (UNHEALTHY, "STATUS_UPDATE", (UNHEALTHY, RUNNING), _status_unhealthy),
        (
            DECOMMISSIONING,
            "STATUS_UPDATE",
            (DECOMMISSIONING, DECOMMISSIONED),
            _status_decommissioning,
        ),
        ((RUNNING, DECOMMISSIONING), "EXPIRE", LOST, _deactivate),
        (UNHEALTHY, "EXPIRE", LOST, _deactivate_unhealthy),
        ((RUNNING, DECOMMISSIONING), "DECOMMISSION", DECOMMISSIONED, _deactivate),
        (UNHEALTHY, "DECOMMISSION", DECOMMISSIONED, _deactivate_unhealthy),
        ((RUNNING, UNHEALTHY), "GRACEFUL_DECOMMISSION", DECOMMISSIONING, None),
        (DECOMMISSIONING, "RECOMMISSION", RUNNING, None),
        ((RUNNING, DECOMMISSIONING), "REBOOTING", REBOOTED, _deactivate),
        (UNHEALTHY, "REBOOTING", REBOOTED, _deactivate_unhealthy),
        ((RUNNING, DECOMMISSIONING), "SHUTDOWN", SHUTDOWN, _deactivate),
        (UNHEALTHY, "SHUTDOWN", SHUTDOWN, _deactivate_unhealthy),
        ((RUNNING, DECOMMISSIONING), "RESOURCE_UPDATE", RUNNING, _resource_update),
        (UNHEALTHY, "RESOURCE_UPDATE", UNHEALTHY, _resource_update),
        (_ACTIVE, "CLEANUP_CONTAINER", None, _cleanup_container),
        (_ACTIVE, "CLEANUP_APP", None, _cleanup_app),
        (RUNNING, "RECONNECTED", RUNNING, _reconnected),
    ],
    ignored={s: _LATE for s in FINAL},
)

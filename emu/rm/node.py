"""RMNode: the RM's view of one NodeManager, as YARN's RMNodeImpl.

A status update is where everything about a node starts: newly running and
completed containers are handed to the scheduler with NODE_UPDATE, which is
the only moment containers are placed on the node. Cleanup lists fill up here
and drain into the next heartbeat reply.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from emu.resources import Resource
from emu.rm.enums import NodeEvent as NodeEvent
from emu.rm.enums import NodeState as NodeState
from emu.rm.scheduler.events import SchedulerEvent
from emu.rm.statemachine import StateMachine

if TYPE_CHECKING:
    from emu.rm.entity_context import EntityContext


NEW, RUNNING, UNHEALTHY = NodeState.NEW, NodeState.RUNNING, NodeState.UNHEALTHY
DECOMMISSIONED, LOST, SHUTDOWN = NodeState.DECOMMISSIONED, NodeState.LOST, NodeState.SHUTDOWN
REBOOTED = NodeState.REBOOTED
FINAL = (DECOMMISSIONED, LOST, SHUTDOWN, REBOOTED)


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
        self.last_reply: dict[str, Any] | int | None = None
        """The last heartbeat's reply, for a repeat; an int stands for the
        common one (NORMAL, nothing to clean up) with that response id."""
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


def _started(ctx: EntityContext, n: RMNode, data: Any) -> None:
    ctx.nm_liveness.register(n.node_id, ctx.now_ms())
    ctx.dispatch("scheduler", SchedulerEvent.NODE_ADDED, n.node_id, n)


def _status(ctx: EntityContext, n: RMNode, data: Any) -> str:
    """data = (healthy, launched ids, completed statuses). Healthy, the
    one effect is the NODE_UPDATE: for a report of nothing the heartbeat
    path hands it to the scheduler at once instead
    (ResourceTrackerService._take)."""
    healthy, launched, completed = data
    if healthy:
        ctx.dispatch("scheduler", SchedulerEvent.NODE_UPDATE, n.node_id, (launched, completed))
        return RUNNING
    ctx.dispatch("scheduler", SchedulerEvent.NODE_UPDATE, n.node_id, (launched, completed))
    ctx.dispatch("scheduler", SchedulerEvent.NODE_REMOVED, n.node_id, n)
    return UNHEALTHY


def _status_unhealthy(ctx: EntityContext, n: RMNode, data: Any) -> str:
    healthy, launched, completed = data
    if not completed and not launched and not healthy:
        return UNHEALTHY
    if healthy:
        ctx.dispatch("scheduler", SchedulerEvent.NODE_ADDED, n.node_id, n)
        ctx.dispatch("scheduler", SchedulerEvent.NODE_UPDATE, n.node_id, (launched, completed))
        return RUNNING
    return UNHEALTHY


def _deactivate(ctx: EntityContext, n: RMNode, data: Any) -> None:
    """The node leaves the cluster: the scheduler forgets it and its containers."""
    ctx.nm_liveness.unregister(n.node_id)
    ctx.dispatch("scheduler", SchedulerEvent.NODE_REMOVED, n.node_id, n)
    ctx.deactivate_node(n)


def _deactivate_unhealthy(ctx: EntityContext, n: RMNode, data: Any) -> None:
    """Already out of the scheduler while unhealthy; just leave the cluster."""
    ctx.nm_liveness.unregister(n.node_id)
    ctx.deactivate_node(n)


def _resource_update(ctx: EntityContext, n: RMNode, data: Any) -> None:
    n.resource = data
    n.resource_updated_ms = ctx.now_ms()
    ctx.dispatch("scheduler", SchedulerEvent.NODE_RESOURCE_UPDATE, n.node_id, n)


def _cleanup_container(ctx: EntityContext, n: RMNode, data: Any) -> None:
    n.containers_to_cleanup.append(data)


def _cleanup_app(ctx: EntityContext, n: RMNode, data: Any) -> None:
    n.running_apps.discard(data)
    n.apps_to_cleanup.append(data)


def _reconnected(ctx: EntityContext, n: RMNode, data: Any) -> None:
    """Same node registered again while we thought it ran: YARN's
    ReconnectNodeTransition removes and re-adds it, dropping its containers."""
    ctx.dispatch("scheduler", SchedulerEvent.NODE_REMOVED, n.node_id, n)
    n.resource = data
    ctx.dispatch("scheduler", SchedulerEvent.NODE_ADDED, n.node_id, n)


E = NodeEvent
_ACTIVE = (RUNNING, UNHEALTHY)
_LATE = (
    E.STATUS_UPDATE,
    E.EXPIRE,
    E.CLEANUP_CONTAINER,
    E.CLEANUP_APP,
    E.DECOMMISSION,
    E.RESOURCE_UPDATE,
    E.SHUTDOWN,
    E.REBOOTING,
)

MACHINE: StateMachine = StateMachine(
    "Node",
    NodeState,
    NodeEvent,
    NEW,
    FINAL,
    [
        (NEW, E.STARTED, RUNNING, _started),
        (NEW, E.RESOURCE_UPDATE, NEW, None),
        (RUNNING, E.STATUS_UPDATE, (RUNNING, UNHEALTHY), _status),
        (UNHEALTHY, E.STATUS_UPDATE, (UNHEALTHY, RUNNING), _status_unhealthy),
        (RUNNING, E.EXPIRE, LOST, _deactivate),
        (UNHEALTHY, E.EXPIRE, LOST, _deactivate_unhealthy),
        (RUNNING, E.DECOMMISSION, DECOMMISSIONED, _deactivate),
        (UNHEALTHY, E.DECOMMISSION, DECOMMISSIONED, _deactivate_unhealthy),
        (RUNNING, E.SHUTDOWN, SHUTDOWN, _deactivate),
        (UNHEALTHY, E.SHUTDOWN, SHUTDOWN, _deactivate_unhealthy),
        (RUNNING, E.REBOOTING, REBOOTED, _deactivate),
        (UNHEALTHY, E.REBOOTING, REBOOTED, _deactivate_unhealthy),
        (RUNNING, E.RESOURCE_UPDATE, RUNNING, _resource_update),
        (UNHEALTHY, E.RESOURCE_UPDATE, UNHEALTHY, _resource_update),
        (_ACTIVE, E.CLEANUP_CONTAINER, None, _cleanup_container),
        (_ACTIVE, E.CLEANUP_APP, None, _cleanup_app),
        (RUNNING, E.RECONNECTED, RUNNING, _reconnected),
    ],
    ignored={s: _LATE for s in FINAL},
)

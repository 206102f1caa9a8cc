"""RMContainer: one allocated container's life, as YARN's RMContainerImpl.

The scheduler creates containers and fires their events synchronously (as
YARN's schedulers call `rmContainer.handle`); the hooks here tell the attempt,
through the dispatcher, and keep the allocation-expiry monitor current.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from emu.msg.types import EXIT_KILLED_EXPIRED, EXIT_PREEMPTED
from emu.resources import Resource
from emu.rm.enums import AttemptEvent
from emu.rm.enums import ContainerEvent as ContainerEvent
from emu.rm.enums import ContainerState as ContainerState
from emu.rm.statemachine import StateMachine

if TYPE_CHECKING:
    from emu.rm.entity_context import EntityContext


S = ContainerState
NEW, RESERVED, ALLOCATED, ACQUIRED, RUNNING = S.NEW, S.RESERVED, S.ALLOCATED, S.ACQUIRED, S.RUNNING
COMPLETED, RELEASED, KILLED, EXPIRED = S.COMPLETED, S.RELEASED, S.KILLED, S.EXPIRED
FINAL = (COMPLETED, RELEASED, KILLED, EXPIRED)


class RMContainer:
    """A container the RM handed out (or reserved) on a node for an attempt."""

    __slots__ = (
        "allocated_ms",
        "app_id",
        "attempt_id",
        "container_id",
        "diagnostics",
        "exit_status",
        "finished_ms",
        "is_am",
        "locality",
        "node_id",
        "priority",
        "resource",
        "state",
    )

    def __init__(
        self,
        container_id: str,
        attempt_id: str,
        app_id: str,
        node_id: str,
        resource: Resource,
        priority: int,
        locality: str,
        is_am: bool,
        now_ms: int,
    ) -> None:
        self.container_id = container_id
        self.attempt_id = attempt_id
        self.app_id = app_id
        self.node_id = node_id
        self.resource = resource
        self.priority = priority
        self.locality = locality
        self.is_am = is_am
        self.state = NEW
        self.allocated_ms = now_ms
        self.finished_ms = -1
        self.exit_status = 0
        self.diagnostics = ""

    def status(self) -> dict[str, Any]:
        """The completed-container status handed to the AM."""
        return {
            "container_id": self.container_id,
            "state": "COMPLETE",
            "exit_status": self.exit_status,
            "diagnostics": self.diagnostics,
        }


def _allocated(ctx: EntityContext, c: RMContainer, data: Any) -> None:
    ctx.container_expiry.register(c.container_id, ctx.now_ms())
    if c.is_am:
        ctx.dispatch("attempt", AttemptEvent.CONTAINER_ALLOCATED, c.attempt_id, c.container_id)


def _launched(ctx: EntityContext, c: RMContainer, data: Any) -> None:
    ctx.container_expiry.unregister(c.container_id)


def _finished(ctx: EntityContext, c: RMContainer, data: Any) -> None:
    """Terminal: record the exit, tell the attempt. `data` is (exit, diagnostics)."""
    ctx.container_expiry.unregister(c.container_id)
    c.exit_status, c.diagnostics = data
    c.finished_ms = ctx.now_ms()
    if c.state != NEW:  # it held resources (a reservation or a never-placed one did not)
        app = ctx.apps.get(c.app_id)
        if app is not None:
            app.charge(
                c.resource, c.finished_ms - c.allocated_ms, c.is_am, c.exit_status == EXIT_PREEMPTED
            )
    ctx.dispatch("attempt", AttemptEvent.CONTAINER_FINISHED, c.attempt_id, c)


def _expired(ctx: EntityContext, c: RMContainer, data: Any) -> None:
    _finished(ctx, c, (EXIT_KILLED_EXPIRED, "Container expired since it was unused"))


E = ContainerEvent
_TERMINAL_LATE = (E.FINISHED, E.KILL, E.RELEASED, E.EXPIRE, E.LAUNCHED, E.ACQUIRED)

MACHINE: StateMachine = StateMachine(
    "Container",
    ContainerState,
    ContainerEvent,
    NEW,
    FINAL,
    [
        (NEW, E.START, ALLOCATED, _allocated),
        (NEW, E.RECOVER, RUNNING, None),
        (NEW, E.RESERVED, RESERVED, None),
        (NEW, E.KILL, KILLED, _finished),
        (RESERVED, E.RESERVED, RESERVED, None),
        (RESERVED, E.START, ALLOCATED, _allocated),
        (RESERVED, E.KILL, KILLED, None),
        (RESERVED, E.RELEASED, RELEASED, None),
        (ALLOCATED, E.ACQUIRED, ACQUIRED, None),
        (ALLOCATED, E.EXPIRE, EXPIRED, _expired),
        (ALLOCATED, E.KILL, KILLED, _finished),
        (ALLOCATED, E.RELEASED, RELEASED, _finished),
        (ACQUIRED, E.LAUNCHED, RUNNING, _launched),
        (ACQUIRED, E.FINISHED, COMPLETED, _finished),
        (ACQUIRED, E.RELEASED, RELEASED, _finished),
        (ACQUIRED, E.KILL, KILLED, _finished),
        (ACQUIRED, E.EXPIRE, EXPIRED, _expired),
        (RUNNING, E.FINISHED, COMPLETED, _finished),
        (RUNNING, E.RELEASED, RELEASED, _finished),
        (RUNNING, E.KILL, KILLED, _finished),
    ],
    ignored={
        RUNNING: (E.ACQUIRED, E.LAUNCHED, E.EXPIRE),
        **{s: _TERMINAL_LATE for s in FINAL},
    },
)

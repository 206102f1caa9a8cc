"""RMContainer: one allocated container's life, as YARN's RMContainerImpl.

The scheduler creates containers and fires their events synchronously (as
YARN's schedulers call `rmContainer.handle`); the hooks here tell the attempt,
through the dispatcher, and keep the allocation-expiry monitor current.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from emu.protocol import EXIT_KILLED_EXPIRED
from emu.resources import Resource
from emu.rm.statemachine import StateMachine

if TYPE_CHECKING:
    from emu.rm.context import RMContext

NEW, RESERVED, ALLOCATED, ACQUIRED, RUNNING = "NEW", "RESERVED", "ALLOCATED", "ACQUIRED", "RUNNING"
COMPLETED, RELEASED, KILLED, EXPIRED = "COMPLETED", "RELEASED", "KILLED", "EXPIRED"
STATES = (NEW, RESERVED, ALLOCATED, ACQUIRED, RUNNING, COMPLETED, RELEASED, KILLED, EXPIRED)
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


def _allocated(ctx: RMContext, c: RMContainer, data: Any) -> None:
    ctx.container_expiry.register(c.container_id, ctx.now_ms())
    if c.is_am:
        ctx.dispatch("attempt", "CONTAINER_ALLOCATED", c.attempt_id, c.container_id)


def _launched(ctx: RMContext, c: RMContainer, data: Any) -> None:
    ctx.container_expiry.unregister(c.container_id)


def _finished(ctx: RMContext, c: RMContainer, data: Any) -> None:
    """Terminal: record the exit, tell the attempt. `data` is (exit, diagnostics)."""
    ctx.container_expiry.unregister(c.container_id)
    c.exit_status, c.diagnostics = data
    c.finished_ms = ctx.now_ms()
    ctx.dispatch("attempt", "CONTAINER_FINISHED", c.attempt_id, c)


def _expired(ctx: RMContext, c: RMContainer, data: Any) -> None:
    _finished(ctx, c, (EXIT_KILLED_EXPIRED, "Container expired since it was unused"))


_TERMINAL_LATE = ("FINISHED", "KILL", "RELEASED", "EXPIRE", "LAUNCHED", "ACQUIRED")

MACHINE = StateMachine(
    "Container",
    STATES,
    NEW,
    FINAL,
    [
        (NEW, "START", ALLOCATED, _allocated),
        (NEW, "RECOVER", RUNNING, None),
        (NEW, "RESERVED", RESERVED, None),
        (NEW, "KILL", KILLED, _finished),
        (RESERVED, "RESERVED", RESERVED, None),
        (RESERVED, "START", ALLOCATED, _allocated),
        (RESERVED, "KILL", KILLED, None),
        (RESERVED, "RELEASED", RELEASED, None),
        (ALLOCATED, "ACQUIRED", ACQUIRED, None),
        (ALLOCATED, "EXPIRE", EXPIRED, _expired),
        (ALLOCATED, "KILL", KILLED, _finished),
        (ALLOCATED, "RELEASED", RELEASED, _finished),
        (ACQUIRED, "LAUNCHED", RUNNING, _launched),
        (ACQUIRED, "FINISHED", COMPLETED, _finished),
        (ACQUIRED, "RELEASED", RELEASED, _finished),
        (ACQUIRED, "KILL", KILLED, _finished),
        (ACQUIRED, "EXPIRE", EXPIRED, _expired),
        (RUNNING, "FINISHED", COMPLETED, _finished),
        (RUNNING, "RELEASED", RELEASED, _finished),
        (RUNNING, "KILL", KILLED, _finished),
    ],
    ignored={
        RUNNING: ("ACQUIRED", "LAUNCHED", "EXPIRE"),
        **{s: _TERMINAL_LATE for s in FINAL},
    },
)

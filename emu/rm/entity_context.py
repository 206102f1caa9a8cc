"""What the entities' transition hooks use of the RM's context.

`emu.rm.context.RMContext` holds every entity and imports their modules to
build its dispatcher; the entities (`app`, `attempt`, `container`, `node`)
see it only through this Protocol, so none of them imports the context, and
a test or a plugin can hand the hooks any object with these members.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from collections import Counter

    from emu.metrics.eventlog import EventLog
    from emu.rm.app import RMApp
    from emu.rm.attempt import RMAppAttempt
    from emu.rm.container import RMContainer
    from emu.rm.monitors import ExpiryMonitor
    from emu.rm.node import RMNode
    from emu.rm.recovery import RMRecovery
    from emu.rm.scheduler.abstract_scheduler import Scheduler


class EntityContext(Protocol):
    """The members of `RMContext` that app, attempt, container and node
    hooks read or call; see `RMContext` for what each one is. The hooks
    change what these hold (the registries, the monitors) but never
    rebind them, so they are read-only here."""

    @property
    def apps(self) -> dict[str, RMApp]: ...
    @property
    def attempts(self) -> dict[str, RMAppAttempt]: ...
    @property
    def containers(self) -> dict[str, RMContainer]: ...
    @property
    def nodes(self) -> dict[str, RMNode]: ...
    @property
    def app_nodes(self) -> dict[str, set[str]]: ...
    @property
    def nm_liveness(self) -> ExpiryMonitor: ...
    @property
    def am_liveness(self) -> ExpiryMonitor: ...
    @property
    def container_expiry(self) -> ExpiryMonitor: ...
    @property
    def am_launches(self) -> list[tuple[str, str, dict[str, Any]]]: ...
    @property
    def am_service_address(self) -> str: ...
    @property
    def cluster_timestamp(self) -> int: ...
    @property
    def final_apps(self) -> Counter[str]: ...
    @property
    def events(self) -> EventLog: ...
    @property
    def recovery(self) -> RMRecovery | None: ...
    @property
    def scheduler(self) -> Scheduler: ...

    def now_ms(self) -> int:
        """Simulated milliseconds since the run's start."""
        ...

    def dispatch(self, kind: str, etype: str, target: str, data: Any = None) -> None:
        """Queue an event for an entity or the scheduler."""
        ...

    def fire(self, kind: str, entity: Any, etype: str, data: Any = None) -> bool:
        """Apply an event to an entity's state machine now."""
        ...

    def deactivate_node(self, node: RMNode) -> None:
        """Move a node that left the cluster to the inactive ones."""
        ...

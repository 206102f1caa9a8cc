"""RMContext: the ResourceManager's registry of shared state.

Everything inside the RM (state machine hooks, the scheduler, services)
reaches the rest through this object: entity registries, the dispatcher,
the monitors, the clock, the event log, and the outbox of AM launches the
actor layer carries out. What happens to an app or attempt over its life
lives with the entity (`emu.rm.app`, `emu.rm.attempt`), not here. It holds
no transport: RM internals never do I/O. This module imports the entities;
they see the context only through `emu.rm.entity_context.EntityContext`.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

import structlog

from emu import plugins
from emu.errors import SchedulerFailed, describe
from emu.rm import app as app_sm
from emu.rm import attempt as attempt_sm
from emu.rm import container as container_sm
from emu.rm import node as node_sm
from emu.rm.dispatcher import Dispatcher, Event
from emu.rm.monitors import ExpiryMonitor
from emu.rm.node_labels import ENABLED, NodeLabels
from emu.rm.retention import CompletedApps
from emu.rm.settings import RMSettings
from emu.rm.statemachine import StateMachine
from emu.trio_time import current_time

if TYPE_CHECKING:
    from collections.abc import Callable

    from emu.config.configuration import Configuration
    from emu.metrics.eventlog import EventLog
    from emu.rm.app import RMApp
    from emu.rm.attempt import RMAppAttempt
    from emu.rm.container import RMContainer
    from emu.rm.entity_context import EntityContext
    from emu.rm.node import RMNode
    from emu.rm.recovery import RMRecovery
    from emu.rm.scheduler.abstract_scheduler import Scheduler

_log = structlog.get_logger("emu.rm")

MACHINES: dict[str, StateMachine] = {
    "app": app_sm.MACHINE,
    "attempt": attempt_sm.MACHINE,
    "container": container_sm.MACHINE,
    "node": node_sm.MACHINE,
}


class RMContext:
    """The RM's state; see the module docstring."""

    def __init__(
        self,
        settings: RMSettings,
        conf: Configuration,
        events: EventLog,
        cluster_timestamp: int = 0,
    ) -> None:
        self.settings = settings
        self.conf = conf
        self.events = events
        self.cluster_timestamp = cluster_timestamp
        self.dispatcher = Dispatcher()
        self.dispatcher.on_error = self._event_failed
        self.apps: dict[str, RMApp] = {}
        self.attempts: dict[str, RMAppAttempt] = {}
        self.containers: dict[str, RMContainer] = {}
        self.nodes: dict[str, RMNode] = {}
        self.inactive_nodes: dict[str, RMNode] = {}
        self.app_nodes: dict[str, set[str]] = {}
        """The nodes each app has had a container on (`RMNode.running_apps`
        gets it then): where its cleanup may be due when it ends, without
        a look at every node (10,000 of them at P2, per app)."""
        self.nm_liveness = ExpiryMonitor("nm-liveness", settings.nm_expiry_ms)
        self.am_liveness = ExpiryMonitor("am-liveness", settings.am_expiry_ms)
        self.container_expiry = ExpiryMonitor("container-allocation", settings.container_expiry_ms)
        self.am_launches: list[tuple[str, str, dict[str, Any]]] = []
        self.invalid_transitions: Counter[str] = Counter()
        self.final_apps: Counter[str] = Counter()
        self.app_seq = 0
        self.completed_apps = CompletedApps.from_conf(conf)
        """Finished apps, oldest first, and the removal of those beyond
        yarn.resourcemanager.max-completed-applications."""
        self.am_service_address = ""
        self.node_labels = NodeLabels(conf.get_bool(ENABLED, False))
        """The cluster's node labels and which node has which (RMNodeLabelsManager)."""
        self.recovery: RMRecovery | None = None
        """Set when RM recovery is on: saves apps and attempts as they change."""
        self.reload_conf: Callable[[], Configuration] | None = None
        """Set by an RM process started from configuration files: reads them
        again from disk, for a refresh of the queues without new properties."""
        self.failure: Exception | None = None
        """What ended the RM (`fail`): raised by the RM actor once it has stopped."""
        self.stop_rm: Callable[[], None] | None = None
        """Set by the running RM actor: stops it (cancels its services)."""
        self.scheduler: Scheduler
        for kind in MACHINES:
            self.dispatcher.register(kind, self._entity_handler(kind))

    # --- time and events ---------------------------------------------------------
    @staticmethod
    def now_ms() -> int:
        """Simulated milliseconds since the run's start, from trio's clock."""
        return round(current_time() * 1000)

    def fail(self, failure: Exception) -> None:
        """End the RM with `failure` (a scheduler that can no longer be
        trusted). Request handlers answer any exception with an error reply
        and go on, which is right for a bad request and wrong here: the RM
        stops serving, and its run raises `failure` once it has unwound."""
        if self.failure is None:
            self.failure = failure
        if self.stop_rm is not None:
            self.stop_rm()

    def _event_failed(self, event: Event, e: Exception) -> None:
        """An event handler raised: the RM fails, as Hadoop's exits on an
        error in its dispatcher (yarn.dispatcher.exit-on-error)."""
        _log.error("rm.event_failed", kind=event.kind, type=event.type, exc_info=e)
        self.fail_inside(e, f"handling {event.kind} event {event.type} of {event.target}")

    def fail_inside(self, e: Exception, doing: str) -> None:
        """emu's RM or its scheduler raised while `doing`: the RM fails
        (`fail`) naming the exception, where it was raised and what was being
        done, blaming the scheduler plugin if one is loaded."""
        message, now = f"{describe(e)} {doing}", self.now_ms()
        plugin = self.settings.plugin
        if plugin:
            self.fail(plugins.PluginFailed(plugin, message, now))
        else:
            self.fail(SchedulerFailed("emu's ResourceManager", message, now))

    def dispatch(self, kind: str, etype: str, target: str, data: Any = None) -> None:
        self.dispatcher.dispatch(Event(kind, etype, target, data))

    def attach_scheduler(self, scheduler: Scheduler) -> None:
        self.scheduler = scheduler
        handle: Callable[[Event], None] = scheduler.handle
        if self.settings.plugin:
            handle = self._guarded(handle, self.settings.plugin)
        self.dispatcher.register("scheduler", handle)

    def _guarded(self, handle: Callable[[Event], None], plugin: str) -> Callable[[Event], None]:
        """A plugin scheduler's event handler: an exception from the plugin
        fails the run with the plugin's name and message (`PluginFailed`),
        and no event reaches it afterwards."""

        def guarded(event: Event) -> None:
            if self.failure is not None:
                return
            try:
                handle(event)
            except Exception as e:
                self.fail(plugins.PluginFailed(plugin, describe(e), self.now_ms()))

        return guarded

    def _entity_handler(self, kind: str) -> Any:
        registries: dict[str, dict[str, Any]] = {
            "app": self.apps,
            "attempt": self.attempts,
            "container": self.containers,
            "node": self.nodes,
        }
        registry = registries[kind]
        events = self.events
        log_states = kind != "container"
        completed = self.completed_apps.completed if kind == "app" else None

        def handle(event: Event) -> None:
            entity = registry.get(event.target)
            if entity is None and kind == "node":
                entity = self.inactive_nodes.get(event.target)
            if entity is None:
                self.invalid_transitions[f"{kind}.{event.type}.unknown"] += 1
                return
            before = entity.state
            if not self.fire(kind, entity, event.type, event.data):
                return
            if log_states and entity.state != before:
                events.emit(kind, id=event.target, on=event.type, frm=before, to=entity.state)
                if self.recovery is not None:
                    self.recovery.state_changed(kind, entity)
                if completed is not None and entity.state in app_sm.FINAL:
                    completed(self, entity)

        return handle

    def fire(self, kind: str, entity: Any, etype: str, data: Any = None) -> bool:
        """Apply an event to an entity's state machine now (the scheduler does
        this for containers, as YARN's schedulers call rmContainer.handle)."""
        ok = MACHINES[kind].fire(self, entity, etype, data)
        if not ok:
            key = f"{kind}:{entity.state}:{etype}"
            self.invalid_transitions[key] += 1
            self.events.emit(
                "invalid_transition", kind=kind, id=_ident(entity), state=entity.state, on=etype
            )
        return ok

    # --- ids ----------------------------------------------------------------------
    def new_app_id(self) -> str:
        self.app_seq += 1
        if self.recovery is not None:
            self.recovery.app_id_issued(self.app_seq)
        return f"application_{self.cluster_timestamp}_{self.app_seq:04d}"

    # --- registry changes --------------------------------------------------------
    def deactivate_node(self, node: RMNode) -> None:
        self.nodes.pop(node.node_id, None)
        self.inactive_nodes[node.node_id] = node
        self.node_labels.unregistered(node.node_id)


if TYPE_CHECKING:

    def _is_an_entity_context(ctx: RMContext) -> EntityContext:
        """For mypy: the entities' hooks may be handed an RMContext."""
        return ctx


def _ident(entity: Any) -> str:
    for attr in ("container_id", "attempt_id", "app_id", "node_id"):
        v = getattr(entity, attr, None)
        if v:
            return str(v)
    return "?"

"""RMApp: an application's life across its attempts, as YARN's RMAppImpl.

State saving (NEW_SAVING, FINAL_SAVING) is where YARN writes to its state
store; without recovery configured the save completes at once, so the hooks
raise the *_SAVED event straight away, keeping the same states and order.
With recovery on, `emu.rm.recovery` writes the store synchronously as the app
enters these states, so the save has completed when the *_SAVED event is
handled. After an RM restart an unfinished app comes back through RECOVER
(YARN's RMAppRecoveredTransition): it rejoins the scheduler as if just
saved, and its last attempt is resumed rather than replaced.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from emu.resources import Resource
from emu.rm.attempt import RMAppAttempt
from emu.rm.diagnostics import attempts_exhausted, invalid_request
from emu.rm.enums import AppEvent as AppEvent
from emu.rm.enums import AppState as AppState
from emu.rm.enums import AttemptEvent, NodeEvent
from emu.rm.scheduler.events import SchedulerEvent
from emu.rm.statemachine import StateMachine

if TYPE_CHECKING:
    from emu.rm.entity_context import EntityContext


S = AppState
NEW, NEW_SAVING, SUBMITTED, ACCEPTED, RUNNING = (
    S.NEW,
    S.NEW_SAVING,
    S.SUBMITTED,
    S.ACCEPTED,
    S.RUNNING,
)
FINAL_SAVING, FINISHING, FINISHED, FAILED, KILLED = (
    S.FINAL_SAVING,
    S.FINISHING,
    S.FINISHED,
    S.FAILED,
    S.KILLED,
)
FINAL = (FINISHED, FAILED, KILLED)
REPORT_KEYS = (
    "app_id",
    "name",
    "queue",
    "user",
    "state",
    "final_status",
    "submit_ms",
    "started_ms",
    "finished_ms",
    "attempts",
    "diagnostics",
    "am_type",
    "preempted_am",
    "preempted_non_am",
    "unregistered_ms",
)
"""The keys of `RMApp.report()`, in order."""


class RMApp:
    """A submitted application: identity, queue, AM needs, attempts, times."""

    __slots__ = (
        "am_resource",
        "am_type",
        "app_id",
        "attempt_finished_while_saving",
        "attempts",
        "context",
        "diagnostics",
        "final_status",
        "final_target",
        "finished_ms",
        "max_attempts",
        "memory_seconds",
        "name",
        "preempted_am",
        "preempted_mb",
        "preempted_memory_seconds",
        "preempted_non_am",
        "preempted_vcore_seconds",
        "preempted_vcores",
        "priority",
        "queue",
        "started_ms",
        "state",
        "submit_ms",
        "unmanaged",
        "unregistered_ms",
        "user",
        "vcore_seconds",
    )

    def __init__(
        self,
        app_id: str,
        name: str,
        queue: str,
        user: str,
        priority: int,
        am_resource: Resource,
        am_type: str,
        context: dict[str, Any],
        max_attempts: int,
        now_ms: int,
    ) -> None:
        self.app_id = app_id
        self.name = name
        self.queue = queue
        self.user = user
        self.priority = priority
        self.am_resource = am_resource
        self.am_type = am_type
        self.context = context
        self.max_attempts = max_attempts
        self.state = NEW
        self.attempts: list[str] = []
        self.submit_ms = now_ms
        self.started_ms = -1
        self.finished_ms = -1
        self.unregistered_ms = -1  # when its AM unregistered (-1: not yet, or never)
        # An unmanaged AM (YARN's ApplicationSubmissionContext.unmanagedAM) runs
        # outside the cluster: no AM container; its attempt waits for it to
        # register as soon as it is scheduled (the AMRMProxy's secondary
        # sub-cluster apps are such).
        self.unmanaged = False
        self.final_status = "UNDEFINED"
        self.final_target = ""
        self.attempt_finished_while_saving = False
        self.diagnostics = ""
        # YARN's RMAppMetrics: resource-seconds of the app's ended containers,
        # and what preemption took from it.
        self.memory_seconds = 0
        self.vcore_seconds = 0
        self.preempted_mb = 0
        self.preempted_vcores = 0
        self.preempted_am = 0
        self.preempted_non_am = 0
        self.preempted_memory_seconds = 0
        self.preempted_vcore_seconds = 0

    def charge(self, resource: Resource, used_ms: int, is_am: bool, preempted: bool) -> None:
        """Add one ended container, as YARN's RMAppAttemptMetrics does when a
        container completes (MB x ms / 1000 per container, truncated)."""
        mem_s = resource.memory * used_ms // 1000
        vc_s = resource.vcores * used_ms // 1000
        self.memory_seconds += mem_s
        self.vcore_seconds += vc_s
        if preempted:
            self.preempted_mb += resource.memory
            self.preempted_vcores += resource.vcores
            self.preempted_memory_seconds += mem_s
            self.preempted_vcore_seconds += vc_s
            if is_am:
                self.preempted_am += 1
            else:
                self.preempted_non_am += 1

    @property
    def current_attempt(self) -> str | None:
        return self.attempts[-1] if self.attempts else None

    def report(self) -> dict[str, Any]:
        return {
            "app_id": self.app_id,
            "name": self.name,
            "queue": self.queue,
            "user": self.user,
            "state": self.state,
            "final_status": self.final_status,
            "submit_ms": self.submit_ms,
            "started_ms": self.started_ms,
            "finished_ms": self.finished_ms,
            "attempts": len(self.attempts),
            "diagnostics": self.diagnostics,
            "am_type": self.am_type,
            # RMAppMetrics' numAMContainersPreempted / numNonAMContainersPreempted,
            # which YARN's application summary log line carries.
            "preempted_am": self.preempted_am,
            "preempted_non_am": self.preempted_non_am,
            # When the AM unregistered: the end SLS's jobruntime.csv records.
            "unregistered_ms": self.unregistered_ms,
        }


def _save_new(ctx: EntityContext, app: RMApp, data: Any) -> None:
    ctx.dispatch("app", AppEvent.APP_NEW_SAVED, app.app_id)


def _saved(ctx: EntityContext, app: RMApp, data: Any) -> None:
    """Hand the app to the scheduler, unless its AM container could never be
    granted (RMAppManager's validation of the AM request)."""
    maximum = ctx.scheduler.maximum
    refusal = (
        None
        if app.unmanaged
        else invalid_request(app.am_resource, maximum, ctx.scheduler.configured_maximum)
    )
    if refusal is not None:
        ctx.dispatch("app", AppEvent.APP_REJECTED, app.app_id, refusal)
        return
    ctx.dispatch("scheduler", SchedulerEvent.APP_ADDED, app.app_id, app)


def _accepted(ctx: EntityContext, app: RMApp, data: Any) -> None:
    start_new_attempt(ctx, app)


def _final_save(ctx: EntityContext, app: RMApp, target: str, diagnostics: str = "") -> None:
    app.final_target = target
    if diagnostics:
        app.diagnostics = diagnostics
    ctx.dispatch("app", AppEvent.APP_UPDATE_SAVED, app.app_id)


def _rejected(ctx: EntityContext, app: RMApp, reason: Any) -> None:
    app.final_status = "FAILED"
    _final_save(ctx, app, FAILED, str(reason))


def _registered(ctx: EntityContext, app: RMApp, data: Any) -> None:
    if app.started_ms < 0:
        app.started_ms = ctx.now_ms()


def _unregistered(ctx: EntityContext, app: RMApp, attempt_id: Any) -> None:
    attempt = ctx.attempts[attempt_id]
    app.final_status = attempt.final_status or "SUCCEEDED"
    app.unregistered_ms = ctx.now_ms()
    _final_save(ctx, app, FINISHING, attempt.diagnostics)


def _attempt_failed(ctx: EntityContext, app: RMApp, attempt_id: Any) -> str:
    """Retry while failures that count stay under
    yarn.resourcemanager.am.max-attempts (a preempted AM or one lost with its
    node does not count, as in YARN)."""
    attempt = ctx.attempts[attempt_id]
    failures = sum(1 for aid in app.attempts if ctx.attempts[aid].counts_as_failure)
    if failures < app.max_attempts:
        start_new_attempt(ctx, app)
        return ACCEPTED
    app.final_status = "FAILED"
    _final_save(ctx, app, FAILED, attempts_exhausted(app.app_id, failures, attempt.diagnostics))
    return FINAL_SAVING


def _kill(ctx: EntityContext, app: RMApp, data: Any) -> None:
    app.final_status = "KILLED"
    if app.current_attempt is not None:
        ctx.dispatch("attempt", AttemptEvent.KILL, app.current_attempt)
    _final_save(ctx, app, KILLED, "Application killed by user")


def _killed_before_scheduling(ctx: EntityContext, app: RMApp, data: Any) -> None:
    app.final_status = "KILLED"
    app.finished_ms = ctx.now_ms()
    _completed(ctx, app, KILLED)


def _update_saved(ctx: EntityContext, app: RMApp, data: Any) -> str:
    target = app.final_target
    if target == FINISHING and app.attempt_finished_while_saving:
        target = FINISHED
    if target != FINISHING:
        app.finished_ms = ctx.now_ms()
        _completed(ctx, app, target)
    return target


def _attempt_finished_while_saving(ctx: EntityContext, app: RMApp, data: Any) -> None:
    app.attempt_finished_while_saving = True


def _finished(ctx: EntityContext, app: RMApp, data: Any) -> None:
    app.finished_ms = ctx.now_ms()
    _completed(ctx, app, FINISHED)


def start_new_attempt(ctx: EntityContext, app: RMApp) -> None:
    """Create the app's next attempt and start it, unless RM recovery
    resumes the last one instead."""
    if ctx.recovery is not None and ctx.recovery.resume_attempt(app):
        return
    number = len(app.attempts) + 1
    # The app's own cluster timestamp (an app submitted with another RM's id,
    # a federation's unmanaged AM, keeps it, as YARN's ApplicationAttemptId).
    _, ts, seq = app.app_id.split("_")
    attempt_id = f"appattempt_{ts}_{seq}_{number:06d}"
    ctx.attempts[attempt_id] = RMAppAttempt(attempt_id, app.app_id, number, ctx.now_ms())
    app.attempts.append(attempt_id)
    ctx.dispatch("attempt", AttemptEvent.START, attempt_id)


def _completed(ctx: EntityContext, app: RMApp, final_state: str) -> None:
    """The app reached a final state: the scheduler forgets it, nodes that
    ran it are told to clean up, and its summary goes to the event log."""
    # Only AM launches read the submission context (the AM's task plan),
    # and a finished app launches none: a long run keeps thousands of
    # finished apps' reports, not their plans (found by `make soak`).
    app.context = {}
    ctx.dispatch("scheduler", SchedulerEvent.APP_REMOVED, app.app_id, final_state)
    ctx.final_apps[final_state] += 1
    # In node id order, the nodes running the app (`RMNode.running_apps`
    # only ever gets it where `app_nodes` records it).
    nodes = ctx.nodes
    for node_id in sorted(ctx.app_nodes.pop(app.app_id, ())):
        node = nodes.get(node_id)
        if node is not None and app.app_id in node.running_apps:
            ctx.dispatch("node", NodeEvent.CLEANUP_APP, node_id, app.app_id)
    ctx.events.emit(
        "app_summary",
        id=app.app_id,
        name=app.name,
        queue=app.queue,
        user=app.user,
        state=final_state,
        final_status=app.final_status,
        submit_ms=app.submit_ms,
        started_ms=app.started_ms,
        finished_ms=app.finished_ms,
        attempts=len(app.attempts),
        preempted_am=app.preempted_am,
        preempted_non_am=app.preempted_non_am,
        diagnostics=app.diagnostics,
    )


E = AppEvent
_LATE = (
    E.KILL,
    E.ATTEMPT_FINISHED,
    E.ATTEMPT_FAILED,
    E.ATTEMPT_KILLED,
    E.ATTEMPT_REGISTERED,
    E.ATTEMPT_UNREGISTERED,
    E.APP_UPDATE_SAVED,
    E.APP_ACCEPTED,
    E.APP_REJECTED,
)

MACHINE: StateMachine = StateMachine(
    "App",
    AppState,
    AppEvent,
    NEW,
    FINAL,
    [
        (NEW, E.START, NEW_SAVING, _save_new),
        (NEW, E.RECOVER, SUBMITTED, _saved),
        (NEW, E.KILL, KILLED, _killed_before_scheduling),
        (NEW_SAVING, E.APP_NEW_SAVED, SUBMITTED, _saved),
        (NEW_SAVING, E.KILL, KILLED, _killed_before_scheduling),
        (SUBMITTED, E.APP_ACCEPTED, ACCEPTED, _accepted),
        (SUBMITTED, E.APP_REJECTED, FINAL_SAVING, _rejected),
        ((SUBMITTED, ACCEPTED, RUNNING), E.KILL, FINAL_SAVING, _kill),
        ((ACCEPTED, RUNNING), E.ATTEMPT_REGISTERED, RUNNING, _registered),
        ((ACCEPTED, RUNNING), E.ATTEMPT_FAILED, (ACCEPTED, FINAL_SAVING), _attempt_failed),
        (RUNNING, E.ATTEMPT_UNREGISTERED, FINAL_SAVING, _unregistered),
        (
            FINAL_SAVING,
            E.APP_UPDATE_SAVED,
            (FINISHING, FINISHED, FAILED, KILLED),
            _update_saved,
        ),
        (FINAL_SAVING, E.ATTEMPT_FINISHED, FINAL_SAVING, _attempt_finished_while_saving),
        (FINISHING, E.ATTEMPT_FINISHED, FINISHED, _finished),
        (FINISHING, E.ATTEMPT_FAILED, FINISHED, _finished),
    ],
    ignored={
        FINAL_SAVING: (E.KILL, E.ATTEMPT_FAILED, E.ATTEMPT_KILLED, E.ATTEMPT_REGISTERED),
        FINISHING: (E.KILL, E.ATTEMPT_KILLED),
        **{s: _LATE for s in FINAL},
    },
)

"""RMAppAttempt: one try at running an application's AM, as RMAppAttemptImpl.

An attempt asks the scheduler for its AM container, has the RM launch the AM
on the node it got, waits for the AM to register, and ends when the AM
container exits (after the AM unregistered: FINISHED; before: FAILED), when
the AM stops calling allocate (EXPIRE -> FAILED), or when killed.

After an RM restart with recovery, the app's last attempt comes back through
RECOVER (YARN's AttemptRecoveredTransition): if its AM container had been
allocated it waits as LAUNCHED for the AM to register again (or to expire),
otherwise it asks for its AM container again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from emu.msg import types as P
from emu.msg.types import AllocateReply
from emu.rm.enums import AppEvent, ContainerEvent
from emu.rm.enums import AttemptEvent as AttemptEvent
from emu.rm.enums import AttemptState as AttemptState
from emu.rm.scheduler.events import SchedulerEvent
from emu.rm.statemachine import StateMachine

if TYPE_CHECKING:
    from emu.rm.container import RMContainer
    from emu.rm.entity_context import EntityContext


S = AttemptState
NEW, SUBMITTED, SCHEDULED, ALLOCATED = S.NEW, S.SUBMITTED, S.SCHEDULED, S.ALLOCATED
LAUNCHED, RUNNING, FINISHING = S.LAUNCHED, S.RUNNING, S.FINISHING
FINISHED, FAILED, KILLED = S.FINISHED, S.FAILED, S.KILLED
FINAL = (FINISHED, FAILED, KILLED)


# AM container exits that are not the application's fault and do not count
# toward yarn.resourcemanager.am.max-attempts (YARN's
# shouldCountTowardsMaxAttemptRetry): preempted, lost with its node or
# aborted by the RM, failed disks, killed by the RM.
NOT_THE_AMS_FAULT = frozenset(
    (P.EXIT_PREEMPTED, P.EXIT_ABORTED, P.EXIT_DISKS_FAILED, P.EXIT_KILLED_BY_RM)
)


class RMAppAttempt:
    """One attempt: its AM container, registration, and what the AM has yet
    to be told (completed container statuses)."""

    __slots__ = (
        "am_container_id",
        "am_host",
        "app_id",
        "attempt_id",
        "counts_as_failure",
        "diagnostics",
        "final_status",
        "finished_ms",
        "just_finished",
        "last_reply",
        "launched_ms",
        "number",
        "registered_ms",
        "response_id",
        "started_ms",
        "state",
    )

    def __init__(self, attempt_id: str, app_id: str, number: int, now_ms: int) -> None:
        self.attempt_id = attempt_id
        self.app_id = app_id
        self.number = number
        self.state = NEW
        self.counts_as_failure = True
        self.am_container_id = ""
        self.am_host = ""
        self.started_ms = now_ms
        self.launched_ms = -1
        self.registered_ms = -1
        self.finished_ms = -1
        self.response_id = 0
        self.last_reply: AllocateReply | None = None
        self.just_finished: list[dict[str, Any]] = []
        self.final_status = ""
        self.diagnostics = ""


def _start(ctx: EntityContext, a: RMAppAttempt, data: Any) -> None:
    ctx.dispatch("scheduler", SchedulerEvent.APP_ATTEMPT_ADDED, a.attempt_id, a)


def _recover(ctx: EntityContext, a: RMAppAttempt, data: Any) -> str:
    """Rejoin the scheduler; wait for the AM if one may be running."""
    ctx.dispatch("scheduler", SchedulerEvent.APP_ATTEMPT_ADDED, a.attempt_id, a)
    if not a.am_container_id:
        return SUBMITTED
    ctx.am_liveness.register(a.attempt_id, ctx.now_ms())
    return LAUNCHED


def _schedule(ctx: EntityContext, a: RMAppAttempt, data: Any) -> str:
    """Ask for the AM container: priority 0, anywhere, the app's AM resource.
    An unmanaged AM has none: its attempt is launched at once and waits for
    the AM to register (RMAppAttemptImpl's LAUNCHED_UNMANAGED_SAVING)."""
    app = ctx.apps[a.app_id]
    if app.unmanaged:
        _launched(ctx, a, None)
        return LAUNCHED
    ctx.scheduler.request_am_container(a.attempt_id, app.am_resource)
    return SCHEDULED


def _am_allocated(ctx: EntityContext, a: RMAppAttempt, container_id: Any) -> None:
    """The attempt itself acquires its AM container and has the RM launch it."""
    container = ctx.containers[container_id]
    ctx.fire("container", container, ContainerEvent.ACQUIRED)
    a.am_container_id = container_id
    _request_am_launch(ctx, a, container)


def _request_am_launch(ctx: EntityContext, a: RMAppAttempt, container: RMContainer) -> None:
    """Queue the AM container's launch for the actor layer (YARN's AMLauncher)."""
    app = ctx.apps[a.app_id]
    node = ctx.nodes[container.node_id]
    launch = {
        "container_id": container.container_id,
        "resource": container.resource.to_wire(),
        "duration_ms": -1,
        "app_id": app.app_id,
        "am": {
            "attempt_id": a.attempt_id,
            "am_type": app.am_type,
            "queue": app.queue,
            "user": app.user,
            "rm_address": ctx.am_service_address,
            "context": app.context,
        },
    }
    ctx.am_launches.append((node.nm_address, node.node_id, launch))


def _launched(ctx: EntityContext, a: RMAppAttempt, data: Any) -> None:
    a.launched_ms = ctx.now_ms()
    ctx.am_liveness.register(a.attempt_id, a.launched_ms)


def _registered(ctx: EntityContext, a: RMAppAttempt, data: Any) -> None:
    a.registered_ms = ctx.now_ms()
    a.am_host = data or ""
    ctx.am_liveness.ping(a.attempt_id, a.registered_ms)
    ctx.dispatch("app", AppEvent.ATTEMPT_REGISTERED, a.app_id, a.attempt_id)


def _registered_before_launch_reply(ctx: EntityContext, a: RMAppAttempt, data: Any) -> None:
    """Over a network the AM can register before the NM's reply to the
    launch reaches the RM: the registration proves the launch."""
    _launched(ctx, a, None)
    _registered(ctx, a, data)


def _unregistered(ctx: EntityContext, a: RMAppAttempt, data: Any) -> str:
    """The AM unregistered: the attempt waits for its AM container to exit,
    or, unmanaged (no container), is finished at once."""
    a.final_status, a.diagnostics = data
    ctx.am_liveness.unregister(a.attempt_id)
    ctx.dispatch("app", AppEvent.ATTEMPT_UNREGISTERED, a.app_id, a.attempt_id)
    if ctx.apps[a.app_id].unmanaged:
        _end(ctx, a, AppEvent.ATTEMPT_FINISHED, "")
        return FINISHED
    return FINISHING


def _end(ctx: EntityContext, a: RMAppAttempt, app_event: str, diagnostics: str) -> None:
    a.finished_ms = ctx.now_ms()
    if diagnostics and not a.diagnostics:
        a.diagnostics = diagnostics
    ctx.am_liveness.unregister(a.attempt_id)
    ctx.dispatch("scheduler", SchedulerEvent.APP_ATTEMPT_REMOVED, a.attempt_id, a)
    ctx.dispatch("app", app_event, a.app_id, a.attempt_id)


def _killed(ctx: EntityContext, a: RMAppAttempt, data: Any) -> None:
    _end(ctx, a, AppEvent.ATTEMPT_KILLED, "attempt killed")


def _launch_failed(ctx: EntityContext, a: RMAppAttempt, data: Any) -> None:
    _end(ctx, a, AppEvent.ATTEMPT_FAILED, f"AM container launch failed: {data}")


def _expired(ctx: EntityContext, a: RMAppAttempt, data: Any) -> None:
    _end(
        ctx,
        a,
        AppEvent.ATTEMPT_FAILED,
        f"ApplicationMaster for attempt {a.attempt_id} timed out",
    )


def _container_finished(ctx: EntityContext, a: RMAppAttempt, c: RMContainer) -> str:
    """The AM container exiting ends the attempt; other completions are
    queued for the AM's next allocate."""
    if c.container_id == a.am_container_id:
        if a.state == FINISHING:
            _end(ctx, a, AppEvent.ATTEMPT_FINISHED, "")
            return FINISHED
        a.counts_as_failure = c.exit_status not in NOT_THE_AMS_FAULT
        _end(
            ctx,
            a,
            AppEvent.ATTEMPT_FAILED,
            # RMAppAttemptImpl's message, on one line (YARN breaks it after the code).
            f"AM Container for {a.attempt_id} exited with  exitCode: {c.exit_status} "
            f"Failing this attempt.Diagnostics: {c.diagnostics}",
        )
        return FAILED
    a.just_finished.append(c.status())
    return a.state


def _am_expired_after_unregister(ctx: EntityContext, a: RMAppAttempt, data: Any) -> None:
    _end(ctx, a, AppEvent.ATTEMPT_FINISHED, "")


E = AttemptEvent
_LATE = (E.CONTAINER_FINISHED, E.EXPIRE, E.KILL, E.LAUNCHED, E.LAUNCH_FAILED, E.CONTAINER_ALLOCATED)

MACHINE: StateMachine = StateMachine(
    "AppAttempt",
    AttemptState,
    AttemptEvent,
    NEW,
    FINAL,
    [
        (NEW, E.START, SUBMITTED, _start),
        (NEW, E.RECOVER, (SUBMITTED, LAUNCHED), _recover),
        (NEW, E.KILL, KILLED, None),
        (SUBMITTED, E.ATTEMPT_ADDED, (SCHEDULED, LAUNCHED), _schedule),
        (SCHEDULED, E.CONTAINER_ALLOCATED, ALLOCATED, _am_allocated),
        (ALLOCATED, E.LAUNCHED, LAUNCHED, _launched),
        (ALLOCATED, E.LAUNCH_FAILED, FAILED, _launch_failed),
        (
            (SCHEDULED, ALLOCATED, LAUNCHED, RUNNING),
            E.CONTAINER_FINISHED,
            (SCHEDULED, ALLOCATED, LAUNCHED, RUNNING, FAILED),
            _container_finished,
        ),
        (LAUNCHED, E.REGISTERED, RUNNING, _registered),
        (ALLOCATED, E.REGISTERED, RUNNING, _registered_before_launch_reply),
        ((LAUNCHED, RUNNING), E.EXPIRE, FAILED, _expired),
        (RUNNING, E.UNREGISTERED, (FINISHING, FINISHED), _unregistered),
        (FINISHING, E.CONTAINER_FINISHED, (FINISHING, FINISHED), _container_finished),
        (FINISHING, E.EXPIRE, FINISHED, _am_expired_after_unregister),
        ((SUBMITTED, SCHEDULED, ALLOCATED, LAUNCHED, RUNNING), E.KILL, KILLED, _killed),
    ],
    ignored={
        LAUNCHED: (E.ATTEMPT_ADDED,),
        RUNNING: (E.LAUNCHED, E.LAUNCH_FAILED),
        FINISHING: (E.KILL, E.LAUNCHED),
        **{s: _LATE for s in FINAL},
    },
)

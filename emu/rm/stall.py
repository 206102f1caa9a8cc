"""Telling a run that can never make progress from one that is merely slow.

A replay ends when every job has ended. A job whose AM or task asks for more
than any node has (but within the maximum allocation, so nothing refuses
it), or whose queue can never give it room, would keep that replay going
forever while the clock jumps from heartbeat to heartbeat. YARN itself
would wait; a simulation should stop and say which app waits for what.

The test is cheap and coarse, meant to run every few simulated minutes, never
per heartbeat: the RM is *idle* when some app is unfinished and every live
container is an AM container (an AM cannot end before its tasks run, so
nothing running will end on its own). A run that stays idle, with nothing
allocated, for longer than every liveness expiry (an AM that hung, a node
that died, a container never acquired all resolve within those) plus many
heartbeats (delay scheduling gives up locality after a bounded number of
missed opportunities) has stalled for good. A run that progresses never
matches, so its outputs do not change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from emu.rm import app as app_sm

if TYPE_CHECKING:
    from emu.resources import Resource
    from emu.rm.context import RMContext
    from emu.rm.scheduler.scheduler_app import SchedulerApp

ANY = "*"


def window_ms(ctx: RMContext) -> int:
    """How long the RM must stay idle, with nothing allocated, to count as
    stalled: longer than any expiry that could still free or retry work,
    plus at least 100 NM heartbeats and 4 simulated minutes."""
    s = ctx.settings
    expiries = max(s.am_expiry_ms, s.nm_expiry_ms, s.container_expiry_ms)
    return expiries + max(240_000, 100 * s.nm_heartbeat_ms)


def progress_mark(ctx: RMContext) -> tuple[int, int]:
    """Changes whenever a container is allocated or an app ends, except an AM
    container for an app's second or later attempt: an AM preempted and
    placed again, over and over, moves nothing forward (its tasks never
    run), and YARN does not count a preempted AM against the app's attempts,
    so such a loop would otherwise never end."""
    retried = sum(max(len(a.attempts) - 1, 0) for a in ctx.apps.values())
    return ctx.scheduler.container_total - retried, sum(ctx.final_apps.values())


def finished_mark(ctx: RMContext) -> tuple[int, int, int]:
    """(work kept, apps ended, containers preempted): a run whose first two
    stay put while the third grows preempts and places the same work again
    and again. Containers killed with a preempted AM's attempt end too, but
    no work of theirs is done; and what a new attempt finishes only counts
    once it passes what an earlier attempt of the app had finished
    (`kept_work`), so an AM preempted over and over while its attempts
    redo their first tasks is a loop too."""
    sched = ctx.scheduler
    return sched.kept_work, sum(ctx.final_apps.values()), sched.preempted_total


def explain_loop(ctx: RMContext, waited_ms: int, preempted: int, limit: int = 3) -> str:
    """Why a run that preempts without progress was stopped, and which apps wait."""
    waiting = [a for a in ctx.apps.values() if a.state not in app_sm.FINAL]
    names = ", ".join(f"{a.app_id} ({a.name}) in {a.queue}" for a in waiting[:limit])
    more = f" and {len(waiting) - limit} more" if len(waiting) > limit else ""
    return (
        f"the run cannot make progress: in {waited_ms / 1000:.0f} simulated s no container "
        f"finished its work and no app ended, while {preempted} were preempted; "
        f"unfinished: {names}{more}"
    )


def idle(ctx: RMContext) -> bool:
    """Some app is unfinished and nothing but AM containers is running.
    Containers first: a busy run has a task container near the front."""
    for c in ctx.containers.values():
        attempt = ctx.attempts.get(c.attempt_id)
        if attempt is None or attempt.am_container_id != c.container_id:
            return False
    return any(a.state not in app_sm.FINAL for a in ctx.apps.values())


def explain(ctx: RMContext, waited_ms: int, limit: int = 3) -> str:
    """Which apps wait, and for what, in submission order."""
    waiting = [a for a in ctx.apps.values() if a.state not in app_sm.FINAL]
    reasons = [f"{a.app_id} ({a.name}) {_why(ctx, a.app_id, a.queue)}" for a in waiting[:limit]]
    more = f"; and {len(waiting) - limit} more apps" if len(waiting) > limit else ""
    return (
        f"the run cannot make progress: nothing was allocated in {waited_ms / 1000:.0f} "
        "simulated s and no running container can end; " + "; ".join(reasons) + more
    )


def _why(ctx: RMContext, app_id: str, queue: str) -> str:
    sched = ctx.scheduler
    app = ctx.apps[app_id]
    sapp = sched.apps.get(app.current_attempt or "")
    if sapp is None:
        return f"is {app.state} with no attempt asking for containers"
    ask = _largest_pending(sapp)
    if ask is None:
        return f"is {app.state} and asks for nothing"
    what = "its AM container" if sapp.am_pending else "containers"
    largest = max(
        (n.total for n in sched.nodes.values()), key=lambda r: (r.memory, r.vcores), default=None
    )
    if largest is None:
        return f"asks for {what} of {ask} but the cluster has no node"
    if not any(sched.calc.fits(ask, n.total) for n in sched.nodes.values()):
        return f"asks for {what} of {ask}, more than any node has (largest: {largest})"
    return (
        f"asks for {what} of {ask}, which a node could hold, but queue {queue} never "
        "has room for it (its maximum capacity or resources, or its AM resource limit, "
        "are below the ask)"
    )


def _largest_pending(sapp: SchedulerApp) -> Resource | None:
    """The largest off-switch ask still wanted (every ask has an `*` entry)."""
    found = None
    for priority in sapp.info.priorities:
        ask = sapp.info.get(priority, ANY)
        if ask is not None and ask.num > 0:
            cap = ask.capability
            if found is None or (cap.memory, cap.vcores) > (found.memory, found.vcores):
                found = cap
    return found

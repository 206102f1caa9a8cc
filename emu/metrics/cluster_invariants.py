"""Invariants of the ResourceManager's own state, checked while a run goes.

Hadoop's `MetricsInvariantChecker` (emu.metrics.invariants) checks what the
metrics say; these check what the RM holds, the properties a scheduler must
never break however messages, faults and timings interleave:

- no container is allocated twice: every live container is on exactly one
  node (the node its record names) and held by at most one attempt; a node
  holds no other container but one the scheduler ended that its NM has not
  yet reported completed (`Scheduler.holds_launched`);
- no node holds more than its capacity, in the resource types the
  scheduler's calculator enforces (`calc.fits`: the CapacityScheduler's
  memory-only DefaultResourceCalculator may let vcores over-commit), except
  containers placed before an admin shrank the node (YARN lets those run);
- each queue's allocation equals the sum of the containers charged to it,
  and each attempt's the sum of its own;
- no allocated, pending or reserved amount, and no count, is negative;
- at the end, every submitted app is FINISHED, FAILED or KILLED, and a
  FAILED or KILLED one says why (diagnostics).

A check walks the live containers once (O(containers + nodes + queues)) and
keeps nothing between checks, so it costs the same in hour one and hour 24.
The first broken invariant raises `ClusterInvariantBroken` with the
simulated time and the entities involved.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import TYPE_CHECKING

from emu.resources import ZERO, Resource
from emu.rm import app as app_sm

if TYPE_CHECKING:
    from emu.rm.container import RMContainer
    from emu.rm.context import RMContext
    from emu.rm.scheduler.abstract_scheduler import Scheduler


class ClusterInvariantBroken(Exception):
    """An invariant of the RM's state did not hold: what, and when."""

    def __init__(self, what: str, time_ms: int) -> None:
        self.what = what
        self.time_ms = time_ms
        super().__init__(f"invariant broken at simulated time {time_ms / 1000:.3f} s: {what}")


def check_state(ctx: RMContext) -> None:
    """Check every running invariant now; raise ClusterInvariantBroken."""
    problem = _containers(ctx) or _nodes(ctx) or _queues(ctx.scheduler)
    if problem is not None:
        raise ClusterInvariantBroken(problem, ctx.now_ms())


def check_final(ctx: RMContext) -> None:
    """Check the end-of-run invariants (after `check_state`): every app has
    ended, and an app that did not finish says why."""
    check_state(ctx)
    for app_id in sorted(ctx.apps):
        app = ctx.apps[app_id]
        if app.state not in app_sm.FINAL:
            problem = f"{app_id} ended the run in state {app.state}, not FINISHED/FAILED/KILLED"
        elif app.state != app_sm.FINISHED and not app.diagnostics:
            problem = f"{app_id} is {app.state} without diagnostics"
        else:
            continue
        raise ClusterInvariantBroken(problem, ctx.now_ms())


def _containers(ctx: RMContext) -> str | None:
    scheduler = ctx.scheduler
    seen: dict[str, str] = {}
    for node_id, node in scheduler.nodes.items():
        for cid, c in node.containers.items():
            if cid in seen:
                return f"{cid} is allocated on both {seen[cid]} and {node_id}"
            seen[cid] = node_id
            if c.node_id != node_id:
                return f"{cid} is held by {node_id} but its record names {c.node_id}"
    holders: dict[str, str] = {}
    for attempt_id, sapp in scheduler.apps.items():
        for cid in sapp.live:
            if cid in holders:
                return f"{cid} is held by both {holders[cid]} and {attempt_id}"
            holders[cid] = attempt_id
    for cid, c in ctx.containers.items():
        if c.node_id in scheduler.nodes and cid not in seen:
            return f"{cid} is live on {c.node_id} but that node does not hold it"
    if len(seen) > len(ctx.containers):
        # an ended container its node keeps until its NM reports it
        # (Scheduler.holds_launched) is no stray
        strays = sorted(set(seen) - set(ctx.containers) - set(scheduler.held_on_node))
        if strays:
            return f"{strays[0]} is held by {seen[strays[0]]} but is no longer a live container"
    return None


def _sum(containers: Iterable[RMContainer]) -> Resource:
    total = ZERO
    for c in containers:
        total = total + c.resource
    return total


def _holder(
    owner: str,
    counted: Resource,
    what: str,
    containers: Iterable[RMContainer],
    kept: Resource,
    kept_what: str,
) -> str | None:
    """What is wrong with the totals a node or an app keeps beside the
    containers it holds: `counted` (its `what`) must equal their sum, and
    `kept` (its `kept_what`) must not go below zero."""
    held = _sum(containers)
    if not _same(held, counted):
        return f"{owner} counts {counted!r} {what}, its containers {held!r}"
    if kept.any_negative():
        return f"{owner} has negative {kept_what} {kept!r}"
    return None


def _nodes(ctx: RMContext) -> str | None:
    scheduler = ctx.scheduler
    calc = scheduler.calc
    for node_id, node in scheduler.nodes.items():
        allocated = node.allocated
        wrong = _holder(
            node_id, allocated, "allocated", node.containers.values(), allocated, "allocation"
        )
        if wrong is not None:
            return wrong
        if not calc.fits(node.allocated, node.total):
            rmnode = ctx.nodes.get(node_id)
            shrunk_ms = rmnode.resource_updated_ms if rmnode is not None else -1
            if all(c.allocated_ms <= shrunk_ms for c in node.containers.values()):
                continue
            return (
                f"{node_id} holds {node.allocated!r}, above its capacity {node.total!r} "
                f"({calc.name} calculator)"
            )
    return None


def _queues(scheduler: Scheduler) -> str | None:
    charged: dict[str, Resource] = defaultdict(lambda: ZERO)
    counts: dict[str, int] = defaultdict(int)
    for attempt_id, sapp in scheduler.apps.items():
        wrong = _holder(attempt_id, sapp.used, "used", sapp.live.values(), sapp.pending, "pending")
        if wrong is not None:
            return wrong
    for c in scheduler.ctx.containers.values():
        queue = scheduler._queue_of(c)
        if queue is not None:
            charged[queue] = charged[queue] + c.resource
            counts[queue] += 1
    for name in sorted(scheduler.queues):
        q = scheduler.queues[name]
        for field in ("allocated", "pending", "reserved"):
            value: Resource = getattr(q, field)
            if value.any_negative():
                return f"queue {name}: {field} is negative: {value!r}"
        for field in ("allocated_containers", "apps_running", "apps_pending"):
            if getattr(q, field) < 0:
                return f"queue {name}: {field} is negative: {getattr(q, field)}"
        if not _same(q.allocated, charged[name]) or q.allocated_containers != counts[name]:
            return (
                f"queue {name} counts {q.allocated!r} in {q.allocated_containers} containers, "
                f"its apps hold {charged[name]!r} in {counts[name]}"
            )
    return None


def _same(a: Resource, b: Resource) -> bool:
    """Equal amounts, whether or not a zero extra type is spelt out."""
    return (a - b).is_zero()

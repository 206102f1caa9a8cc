"""Reservable (plan) queues, as Hadoop's CapacitySchedulerQueueManager
builds them with or without a reservation system: a reservable leaf becomes
a PlanQueue whose only child is its default ReservationQueue,
`<name>-default`, which takes every app submitted to the plan. That queue
gets the whole plan (capacity and maximum 1.0), the plan's user limits, and
an AM resource percent of 0 (ReservationQueue never loads it), so only the
one-AM-always rule of activateApplications starts its apps: one at a time.
"""

from __future__ import annotations

import pytest

from emu.errors import InputError
from emu.resources import Resource
from emu.rm.scheduler.capacity import placement
from emu.testing.capacity import GB, Harness, Q

PLAN: dict[str, object] = {
    Q + "root.queues": "plan,other",
    Q + "root.plan.capacity": 25,
    Q + "root.plan.maximum-capacity": 100,
    Q + "root.plan.reservable": True,
    Q + "root.plan.minimum-user-limit-percent": 50,
    Q + "root.other.capacity": 75,
}
AM = Resource(GB, 1)


def test_reservable_leaf_is_a_plan_with_a_default_reservation_queue() -> None:
    h = Harness(PLAN)
    cs = h.sched.cs
    plan = cs.queues["root.plan"]
    child = cs.queues["root.plan.plan-default"]
    assert plan.plan and not plan.is_leaf
    assert plan.children == ("root.plan.plan-default",)
    assert child.is_leaf
    assert child.capacity == 100 and child.maximum_capacity == 100
    assert child.absolute_capacity == pytest.approx(0.25)
    assert child.absolute_maximum_capacity == pytest.approx(1.0)
    assert child.maximum_am_percent == 0.0
    assert child.user_limit_percent == 50  # the plan's
    # An app submitted to the plan, by short or full name, runs in its default queue.
    assert placement.resolve(cs, "plan") == ("root.plan.plan-default", "")
    assert placement.resolve(cs, "root.plan") == ("root.plan.plan-default", "")


async def test_default_reservation_queue_activates_one_app_at_a_time(autojump_clock) -> None:
    h = Harness(PLAN)
    h.node("n1", 100 * GB)
    first = h.submit("plan", "u", AM)
    second = h.submit("plan", "u", AM)
    leaf = h.leaf("root.plan.plan-default")
    assert first.queue == second.queue == "root.plan.plan-default"
    # The AM limit is 0: the first app starts only because none is active.
    assert leaf.active == [first] and leaf.pending == [second]
    h.finish(first)
    assert leaf.active == [second] and leaf.pending == []


def test_only_leaves_can_be_reservable() -> None:
    props = {**PLAN, Q + "root.plan.queues": "x", Q + "root.plan.x.capacity": 100}
    with pytest.raises(InputError, match="only leaf queues can be reservable"):
        Harness(props)

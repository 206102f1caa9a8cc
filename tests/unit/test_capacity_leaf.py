"""Leaf queues against Hadoop's TestLeafQueue and TestApplicationLimits:
user limits, user-limit-factor, headroom, and activation of pending apps
under the AM resource limits.

TestLeafQueue's queues are a (8.5 %, max 20 %), b (80 %, max 99 %),
c (1.5 %), d (9 %) and e (1 %), without reservations-continue-looking, as
in its setUp; each test says what it changes. One
`assign_leaf` call is one `LeafQueue.assignContainers` (one container at
most), as in those tests.
"""

from __future__ import annotations

import dataclasses

import pytest

from emu.resources import Resource
from emu.rm.attempt import RMAppAttempt
from emu.testing.capacity import GB, Harness, Q, used

LEAF_QUEUES: dict[str, object] = {
    Q + "reservations-continue-look-all-nodes": False,  # as TestLeafQueue's setUp
    Q + "root.queues": "a,b,c,d,e",
    Q + "root.a.capacity": 8.5,
    Q + "root.a.maximum-capacity": 20,
    Q + "root.b.capacity": 80,
    Q + "root.b.maximum-capacity": 99,
    Q + "root.c.capacity": 1.5,
    Q + "root.c.maximum-capacity": 10,
    Q + "root.c.queues": "c1",
    Q + "root.c.c1.capacity": 100,
    Q + "root.d.capacity": 9,
    Q + "root.d.maximum-capacity": 11,
    Q + "root.e.capacity": 1,
    Q + "root.e.maximum-capacity": 1,
}
DRF = "org.apache.hadoop.yarn.util.resource.DominantResourceCalculator"
SETTINGS = {
    "yarn.scheduler.maximum-allocation-mb": 16 * GB,
    "yarn.scheduler.maximum-allocation-vcores": 32,
}


def harness(**queue_props: object) -> Harness:
    props = dict(LEAF_QUEUES)
    for k, v in queue_props.items():
        props[Q + k.replace("__", ".").replace("_", "-")] = v
    return Harness(props, **SETTINGS)


async def test_single_queue_with_one_user(autojump_clock) -> None:
    """TestLeafQueue.testSingleQueueWithOneUser: the guarantee (0.085 * 8 GB)
    is below one container, so the user limit is one minimum allocation, and
    a user may exceed the limit by one container; user-limit-factor 10 lets
    the user grow; maximum-capacity stops the queue; releases free it."""
    h = harness(**{"root__a__maximum_capacity": 100})
    node = h.node("n0", 8 * GB)
    app0 = h.submit("a", "user_0")
    app1 = h.submit("a", "user_0")
    h.ask(app0, GB, 3)
    h.ask(app1, GB, 2)
    a = h.leaf("a")

    assert h.assign_leaf("a", node).assigned
    assert (a.used.memory, used(app0), used(app1)) == (1 * GB, 1 * GB, 0)
    assert a.metrics.allocated.memory == 1 * GB
    assert h.assign_leaf("a", node).assigned  # one more than the user limit
    assert (a.used.memory, used(app0)) == (2 * GB, 2 * GB)
    assert not h.assign_leaf("a", node).assigned  # user limit
    assert a.used.memory == 2 * GB

    assert h.sched.refresh({Q + "root.a.user-limit-factor": 10}) is None
    h.assign_leaf("a", node)
    assert (a.used.memory, used(app0), used(app1)) == (3 * GB, 3 * GB, 0)
    h.assign_leaf("a", node)
    assert (a.used.memory, used(app0), used(app1)) == (4 * GB, 3 * GB, 1 * GB)

    assert h.sched.refresh({Q + "root.a.maximum-capacity": 50}) is None
    assert not h.assign_leaf("a", node).assigned  # at max capacity (4 GB)
    assert a.used.memory == 4 * GB

    h.release_all(app0)
    assert (a.used.memory, a.metrics.allocated.memory) == (1 * GB, 1 * GB)
    h.release_all(app1)
    assert (a.used.memory, a.metrics.allocated.memory, a.metrics.reserved.memory) == (0, 0, 0)


async def test_user_limits_two_users_at_50_percent(autojump_clock) -> None:
    """TestLeafQueue.testUserLimits: minimum-user-limit-percent 50 and
    user-limit-factor 2 with two active users."""
    h = harness(
        **{
            "root__a__maximum_capacity": 100,
            "root__a__minimum_user_limit_percent": 50,
            "root__a__user_limit_factor": 2,
        }
    )
    n0, n1 = h.node("n0", 8 * GB), h.node("n1", 8 * GB)
    app0, app1 = h.submit("a", "user_0"), h.submit("a", "user_1")
    h.ask(app0, 3 * GB, 2)
    h.ask(app1, 1 * GB, 2)
    a = h.leaf("a")
    assert a.num_active_users() == 2

    h.assign_leaf("a", n0)  # 1 container to user_0
    assert (a.used.memory, used(app0), used(app1)) == (3 * GB, 3 * GB, 0)
    # user_0 (3 GB) is above the user limit (2 GB): app_1 goes first
    h.assign_leaf("a", n0)
    assert (a.used.memory, used(app0), used(app1)) == (4 * GB, 3 * GB, 1 * GB)
    # user limit = ceil((4 + 1) / 2) rounded up = 3 GB; user_0 is at it
    assert a.user_limit(h.sched).memory == 3 * GB
    h.assign_leaf("a", n1)
    assert (a.used.memory, used(app0), used(app1)) == (7 * GB, 6 * GB, 1 * GB)
    # app_0 has nothing outstanding: one active user
    assert a.num_active_users() == 1


async def test_disabled_user_limit_factor(autojump_clock) -> None:
    """TestLeafQueue.testDisabledUserLimitFactor: user-limit-factor -1 caps
    users at the queue's maximum instead of factor * guarantee."""
    h = harness(
        **{
            "root__a__maximum_capacity": 100,
            "root__a__minimum_user_limit_percent": 50,
            "root__a__user_limit_factor": 1,
        }
    )
    n0, n1 = h.node("n0", 8 * GB), h.node("n1", 8 * GB)
    app0, app1 = h.submit("a", "user0"), h.submit("a", "user1")
    h.ask(app0, 3 * GB, 2)
    h.ask(app1, 1 * GB, 2)
    a = h.leaf("a")
    h.assign_leaf("a", n0)
    assert (a.used.memory, used(app0), used(app1)) == (3 * GB, 3 * GB, 0)
    h.assign_leaf("a", n0)
    assert (a.used.memory, used(app0), used(app1)) == (4 * GB, 3 * GB, 1 * GB)
    assert h.sched.refresh({Q + "root.a.user-limit-factor": -1}) is None
    h.assign_leaf("a", n1)
    assert (a.used.memory, used(app0), used(app1)) == (7 * GB, 6 * GB, 1 * GB)


async def test_compute_user_limit_and_headroom(autojump_clock) -> None:
    """TestLeafQueue.testComputeUserLimitAndSetHeadroom: headroom is
    min(user limit - user usage, queue limit - queue usage); reserved
    resources count as usage and keep their user active."""
    h = harness(**{"root__b__maximum_capacity": 100})
    n0, n1 = h.node("n0", 8 * GB), h.node("n1", 8 * GB)
    b = h.leaf("b")

    # 1. one user owns the queue: user limit 13 GB (0.8 * 16 GB, rounded up)
    app0 = h.submit("b", "user_0")
    h.ask(app0, 4 * GB, 1)
    h.assign_leaf("b", n0)
    assert h.sched.headroom(app0).memory == 9 * GB

    # 2. a second user arrives: the queue's 16 GB maximum minus 8 GB used
    app2 = h.submit("b", "user_1")
    h.ask(app2, 4 * GB, 1, priority=2)
    h.assign_leaf("b", n1)
    assert b.used.memory == 8 * GB
    assert h.sched.headroom(app0).memory == 8 * GB
    assert h.sched.headroom(app2).memory == 8 * GB

    # 3. 50 % minimum user limit: 6.5 GB rounded up to 7 GB per user
    h.release_all(app0)
    h.release_all(app2)
    h.finish(app0)
    h.finish(app2)
    assert h.sched.refresh({Q + "root.b.minimum-user-limit-percent": 50}) is None
    app1, app3 = h.submit("b", "user_0"), h.submit("b", "user_1")
    h.ask(app1, 2 * GB, 1)
    h.ask(app3, 2 * GB, 1, priority=2)
    h.assign_leaf("b", n0)
    h.assign_leaf("b", n0)
    assert b.used.memory == 4 * GB
    assert h.sched.headroom(app3).memory == 5 * GB
    assert h.sched.headroom(app1).memory == 5 * GB

    # 4. n1 is half busy (another queue), so user_0's 6 GB ask reserves it:
    # the reservation counts as user_0's usage and user_0 stays active, so
    # the user limit is (8 + 1) / 1 = 9 GB and user_0's headroom 1 GB
    filler = h.submit("d", "other")
    h.sched.refresh({Q + "root.d.maximum-capacity": 100})
    h.ask(filler, 4 * GB, 1)
    h.assign_leaf("d", n1)
    app4 = h.submit("b", "user_0")
    h.ask(app4, 6 * GB, 1)
    assert h.assign_leaf("b", n1).outcome == "RESERVED"
    assert b.used.memory == 10 * GB
    assert b.user_limit(h.sched).memory == 9 * GB
    assert h.sched.headroom(app4).memory == 1 * GB


async def test_headroom_shrinks_when_other_queues_use_the_cluster(autojump_clock) -> None:
    """LeafQueue.getHeadroom with the limit its parent offers
    (ParentQueue.getResourceLimitsOfChild): what the siblings use is not
    available, whatever the user limit says."""
    h = harness(
        **{
            "root__a__maximum_capacity": 100,
            "root__a__user_limit_factor": 100,
            "root__b__maximum_capacity": 100,
        }
    )
    n0 = h.node("n0", 8 * GB)
    other = h.submit("a", "x")
    h.ask(other, 6 * GB, 1)
    h.assign_leaf("a", n0)
    app = h.submit("b", "u")
    h.ask(app, GB, 1)
    assert h.leaf("b").user_limit(h.sched).memory == 7 * GB
    assert h.sched.headroom(app).memory == 2 * GB


A_TENTH_TWO_USERS = {
    Q + "root.queues": "a,b",
    Q + "root.a.capacity": 10,
    Q + "root.b.capacity": 90,
    Q + "root.a.minimum-user-limit-percent": 50,
    Q + "root.a.user-limit-factor": 5.0,
}
"""TestApplicationLimits' queues: a has 10 %, half of it guaranteed per user."""


async def test_am_resource_limit_and_user_am_limit(autojump_clock) -> None:
    """TestApplicationLimits.testAMResourceLimit: the AM limit is 10 % of the
    queue's usable capacity (80 GB cluster: 8 GB); a user's share of it is
    4 GB with one active user and 2 GB (50 %) with two; pending apps are
    activated as limits allow."""
    h = Harness(A_TENTH_TWO_USERS, **SETTINGS)
    for i in range(5):
        h.node(f"n{i}", 16 * GB, 8)
    a = h.leaf("a")
    assert a.am_limit(h.sched, h.sched.current_limit(a)).memory == 8 * GB
    assert a.user_am_limit(h.sched, Resource(8 * GB, 1)).memory == 4 * GB

    def counts(user: str | None = None) -> tuple[int, int]:
        def mine(apps: list) -> int:
            return sum(1 for x in apps if user is None or x.user == user)

        return mine(a.active), mine(a.pending)

    am = Resource(2 * GB, 1)
    app0 = h.submit("a", "user_0", am)
    assert counts() == (1, 0)
    h.ask(app0, GB, 1)  # user_0 becomes active
    h.submit("a", "user_0", am)
    assert counts("user_0") == (2, 0)
    app2 = h.submit("a", "user_1", am)
    assert counts() == (3, 0)
    h.ask(app2, GB, 1)  # two active users: 2 GB per user
    assert a.user_am_limit(h.sched, Resource(8 * GB, 1)).memory == 2 * GB
    h.submit("a", "user_1", am)
    assert counts() == (3, 1)
    assert counts("user_1") == (1, 1)
    h.finish(app2)
    assert counts() == (3, 0)
    assert counts("user_1") == (1, 0)


async def test_active_application_limits(autojump_clock) -> None:
    """TestApplicationLimits.testActiveApplicationLimits: 160 GB cluster,
    queue a 10 %: AM limit 16 GB, 8 GB per user; apps queue while either
    limit is reached and start when others finish."""
    h = Harness(A_TENTH_TWO_USERS, **SETTINGS)
    for i in range(10):
        h.node(f"n{i}", 16 * GB, 32)
    a = h.leaf("a")
    limit = a.am_limit(h.sched, h.sched.current_limit(a))
    assert limit.memory == 16 * GB
    assert a.user_am_limit(h.sched, limit).memory == 8 * GB

    def counts(user: str) -> tuple[int, int]:
        return (
            sum(1 for x in a.active if x.user == user),
            sum(1 for x in a.pending if x.user == user),
        )

    am4, am8 = Resource(4 * GB, 0), Resource(8 * GB, 0)
    app0 = h.submit("a", "user_0", am4)
    h.submit("a", "user_0", am4)
    assert (len(a.active), len(a.pending)) == (2, 0)
    h.submit("a", "user_0", am4)  # user AM limit reached
    assert (len(a.active), len(a.pending)) == (2, 1)
    h.finish(app0)  # app_2 starts
    assert (len(a.active), len(a.pending)) == (2, 0)
    h.submit("a", "user_0", am4)
    assert counts("user_0") == (2, 1)
    app4 = h.submit("a", "user_1", am8)
    assert counts("user_1") == (1, 0)
    h.submit("a", "user_2", am8)  # queue AM limit reached
    assert (len(a.active), len(a.pending)) == (3, 2)
    assert counts("user_2") == (0, 1)
    h.finish(app4)  # user_2's app starts, user_0's still waits
    assert (len(a.active), len(a.pending)) == (3, 1)
    assert counts("user_2") == (1, 0)
    assert counts("user_0") == (2, 1)


async def test_am_limit_reads_the_limit_last_published(autojump_clock) -> None:
    """activateApplications reads the queue's current limit as it was last
    published (queueResourceLimitsInfo: by the last cluster update, or when
    the queue last looked at an app), not one computed now: b was handed the
    whole 10 GB node when it came, and a taking 8 GB since does not shrink
    b's AM limit (half of 10 GB) until b is offered a node again."""
    h = Harness(
        {
            Q + "root.queues": "a,b",
            Q + "root.a.capacity": 50,
            Q + "root.b.capacity": 50,
            Q + "root.a.user-limit-factor": 2,
            Q + "root.b.maximum-am-resource-percent": 0.5,
        },
        **SETTINGS,
    )
    n0 = h.node("n0", 10 * GB)
    app_a = h.submit("a", "u")
    h.ask(app_a, GB, 8)
    for _ in range(8):
        assert h.assign_root(n0).assigned
    b = h.leaf("b")
    h.submit("b", "v", Resource(2 * GB, 1))
    h.submit("b", "w", Resource(3 * GB, 1))
    # Computed now, b's limit is 2 GB and its AM limit 3 GB (half its
    # 5 GB guarantee, rounded up): the second AM would wait.
    assert (len(b.active), len(b.pending)) == (2, 0)


async def test_a_queue_whose_only_asks_wait_for_activation_still_publishes_its_limit(
    autojump_clock,
) -> None:
    """A queue's pending resource counts the asks of apps not yet activated
    (AppSchedulingInfo adds every attempt's), so a heartbeat offers it the
    node (hasPendingResourceRequest) and the leaf looks at its active apps,
    publishing the limit it was offered (computeUserLimitAndSetHeadroom)
    though none of them asks: once b has let go of its 5 GB, that limit is
    the whole 10 GB node and a's AM limit half of it, enough for the AM
    that waited."""
    h = Harness(
        {
            Q + "root.queues": "a,b",
            Q + "root.a.capacity": 50,
            Q + "root.b.capacity": 50,
            Q + "root.a.user-limit-factor": 2,
            Q + "root.b.user-limit-factor": 2,
            Q + "root.a.maximum-am-resource-percent": 0.5,
        },
        **SETTINGS,
    )
    n0 = h.node("n0", 10 * GB)
    app_b = h.submit("b", "x")
    h.ask(app_b, GB, 5)
    for _ in range(5):
        assert h.assign_root(n0).assigned
    a = h.leaf("a")
    first = h.submit("a", "u", Resource(GB, 1))
    h.ask(first, GB, 1)
    assert h.assign_root(n0).assigned  # a is offered 5 GB: its AM limit is 3 GB
    waiting = h.submit("a", "v", Resource(3 * GB, 1))
    h.ask(waiting, 3 * GB, 1)
    assert waiting in a.pending
    h.release_all(app_b)
    h.heartbeat(n0)
    h.submit("a", "w", Resource(GB, 1))
    assert waiting in a.active


async def test_one_app_always_starts_even_above_the_am_limit(autojump_clock) -> None:
    """LeafQueue.activateApplications: with no active app, enforcement is
    skipped so at least one application runs."""
    h = Harness(
        {Q + "root.queues": "a,b", Q + "root.a.capacity": 10, Q + "root.b.capacity": 90},
        **SETTINGS,
    )
    h.node("n0", 16 * GB)
    a = h.leaf("a")
    h.submit("a", "u", Resource(8 * GB, 1))
    h.submit("a", "u", Resource(8 * GB, 1))
    assert (len(a.active), len(a.pending)) == (1, 1)


async def test_the_am_limit_reads_the_limit_the_leaf_last_published(autojump_clock) -> None:
    """AbstractLeafQueue.calculateAndGetAMResourceLimitPerPartition reads
    queueResourceLimitsInfo's current limit: what the leaf was offered when
    it last looked at an app, or what its parent gave it when the queues'
    resources were last recomputed (here, the node joining: 12 GB). b has
    looked at no app since a took 4 GB, so its AM limit is still 10 % of
    12 GB, rounded up to 2 GB, and a second 1 GB AM starts; worked out from
    today's usage (8 GB) it would be 1 GB and the app would wait."""
    h = Harness(
        {
            Q + "root.queues": "a,b",
            Q + "root.a.capacity": 50,
            Q + "root.b.capacity": 50,
            Q + "root.b.maximum-capacity": 100,
        },
        **SETTINGS,
    )
    n0 = h.node("n0", 12 * GB)
    b = h.leaf("b")
    h.submit("b", "u", Resource(GB, 1))
    mine = h.submit("a", "v")
    h.ask(mine, 4 * GB, 1)
    h.heartbeat(n0)
    assert used(mine) == 4 * GB
    h.submit("b", "w", Resource(GB, 1))
    assert (len(b.active), len(b.pending)) == (2, 0)


async def test_user_am_limit_starts_from_the_truncated_guarantee(autojump_clock) -> None:
    """getUserAMResourceLimitPerPartition multiplies getEffectiveCapacity,
    the effective minimum resource Resources.multiply truncates (3.2 % of
    96 GB: 3145 MB), not the guarantee rounded up to the minimum
    allocation (4096 MB): with AM percent 0.2 and user-limit-factor 1.5 a
    user may have 943.5 MB of AMs, rounded up to 1 GB. A second user's
    2 GB AM waits while the first app runs."""
    h = Harness(
        {
            Q + "root.queues": "a,b",
            Q + "root.a.capacity": 3.2,
            Q + "root.b.capacity": 96.8,
            Q + "root.a.user-limit-factor": 1.5,
            Q + "root.a.maximum-am-resource-percent": 0.2,
        },
        **SETTINGS,
    )
    for i in range(6):
        h.node(f"n{i}", 16 * GB, 4)
    a = h.leaf("a")
    limit = a.am_limit(h.sched, h.sched.current_limit(a))
    assert a.user_am_limit(h.sched, limit).memory == GB
    first = h.submit("a", "bob", Resource(2 * GB, 1))
    h.ask(first, GB, 1)
    h.submit("a", "carol", Resource(2 * GB, 1))
    assert (len(a.active), len(a.pending)) == (1, 1)


async def test_fifo_order_by_priority_then_submission(autojump_clock) -> None:
    """FifoOrderingPolicy: higher application priority first, then the older
    app (priorities are capped at yarn.cluster.max-application-priority)."""
    h = harness(**{"root__b__maximum_capacity": 100})
    h.sched.cs = dataclasses.replace(h.sched.cs, max_application_priority=10)
    n0 = h.node("n0", 8 * GB)
    first = h.submit("b", "u", priority=1)
    urgent = h.submit("b", "u", priority=5)
    for app in (first, urgent):
        h.ask(app, GB, 1)
    h.assign_leaf("b", n0)
    assert (used(first), used(urgent)) == (0, GB)


async def test_fair_ordering_policy_serves_the_least_used_app(autojump_clock) -> None:
    """FairOrderingPolicy (ordering-policy fair): least used app first."""
    h = harness(**{"root__b__ordering_policy": "fair", "root__b__maximum_capacity": 100})
    n0 = h.node("n0", 16 * GB)
    x, y = h.submit("b", "u"), h.submit("b", "u")
    h.ask(x, GB, 4)
    h.ask(y, GB, 4)
    for _ in range(4):
        h.assign_leaf("b", n0)
    assert (used(x), used(y)) == (2 * GB, 2 * GB)


async def test_fair_ordering_puts_a_new_attempt_after_older_attempts(autojump_clock) -> None:
    """FairOrderingPolicy's FairComparator breaks a usage tie by the
    attempt's getStartTime (when the attempt was made) before the
    application id: x's second attempt, made after y's attempt, waits
    behind y though x is the older app."""
    h = harness(**{"root__b__ordering_policy": "fair", "root__b__maximum_capacity": 100})
    n0 = h.node("n0", 16 * GB)
    x, y = h.submit("b", "u"), h.submit("b", "u")
    h.sched.on_APP_ATTEMPT_REMOVED(x.attempt_id, h.ctx.attempts[x.attempt_id])
    second = "appattempt_0_0001_000002"
    h.ctx.attempts[second] = RMAppAttempt(second, x.app_id, 2, h.ctx.now_ms())
    h.ctx.apps[x.app_id].attempts.append(second)
    h.sched.on_APP_ATTEMPT_ADDED(second, h.ctx.attempts[second])
    x2 = h.sched.apps[second]
    h.ask(x2, GB, 1)
    h.ask(y, GB, 1)
    h.assign_leaf("b", n0)
    assert (used(x2), used(y)) == (0, GB)


async def test_fair_ordering_walks_the_usage_each_app_was_last_sorted_by(
    autojump_clock,
) -> None:
    """AbstractComparatorOrderingPolicy.getAssignmentIterator re-sorts only
    the apps whose containers came or went (entitiesToReorder) and walks
    the rest by the usage they were last sorted by; an allocation from a
    reservation re-sorts nothing (AbstractLeafQueue.apply). x (sorted at
    0, holding 3 GB after a reservation was fulfilled) goes before y (2
    GB, sorted since)."""
    h = harness(**{"root__b__ordering_policy": "fair", "root__b__maximum_capacity": 100})
    n0 = h.node("n0", 16 * GB)
    x, y = h.submit("b", "u"), h.submit("b", "u")
    h.ask(y, GB, 2)
    for _ in range(2):
        h.assign_leaf("b", n0)
    assert (used(x), used(y)) == (0, 2 * GB)
    leaf = h.leaf("b")
    h.assign_leaf("b", n0)  # y re-sorted at 2 GB, x at 0
    # x's 3 GB, as a fulfilled reservation leaves it: no re-sort
    h.sched.alloc.fulfilling = True
    h.ask(x, 3 * GB, 1)
    h.assign_leaf("b", n0)
    h.sched.alloc.fulfilling = False
    assert (used(x), used(y)) == (3 * GB, 2 * GB)
    assert x.attempt_id not in leaf.fair_changed
    h.ask(x, GB, 1)
    h.ask(y, GB, 1)
    h.assign_leaf("b", n0)
    assert (used(x), used(y)) == (4 * GB, 2 * GB)


async def test_drf_user_limits(autojump_clock) -> None:
    """TestLeafQueue.testDRFUserLimits: with the DominantResourceCalculator
    a memory-heavy and a vcores-heavy user share queue b by dominant share,
    and together fill it (absolute used capacity > 0.95)."""
    h = Harness(
        {
            **LEAF_QUEUES,
            Q + "resource-calculator": DRF,
            Q + "root.b.maximum-capacity": 100,
            Q + "root.b.minimum-user-limit-percent": 50,
            Q + "root.b.user-limit-factor": 2,
        },
        **{**SETTINGS, "yarn.scheduler.maximum-allocation-vcores": 64},
    )
    nodes = [h.node("n0", 8 * GB, 100), h.node("n1", 8 * GB, 100)]
    app0, app2 = h.submit("b", "user_0"), h.submit("b", "user_1")
    h.ask(app0, 1 * GB, 10, vcores=40)
    h.ask(app2, 2 * GB, 10, vcores=10)
    b = h.leaf("b")
    assert b.num_active_users() == 2
    for n in nodes:
        while True:
            a = h.assign_leaf("b", n)
            if not a.assigned or a.outcome == "RESERVED":
                break
    assert used(app0) > 0 and used(app2) > 0
    assert b.absolute_used_capacity(h.sched) > 0.95


async def test_queue_metrics_count_pending_and_running_apps(autojump_clock) -> None:
    """TestLeafQueue.testAppAttemptMetrics / QueueMetrics: an app is pending
    until its AM container is allocated, then running, then completed; an
    app held back by the AM limit stays pending."""
    h = Harness(
        {
            Q + "root.queues": "a,b",
            Q + "root.a.capacity": 10,
            Q + "root.b.capacity": 90,
            Q + "root.a.maximum-am-resource-percent": 0.1,
        },
        **SETTINGS,
    )
    n0 = h.node("n0", 16 * GB)
    a = h.leaf("a")
    am = Resource(1 * GB, 1)
    first, second = h.submit("a", "u", am), h.submit("a", "u", am)
    for app in (first, second):
        h.sched.request_am_container(app.attempt_id, am)
    assert (len(a.active), len(a.pending)) == (1, 1)  # AM limit: 2 GB * 0.1 -> 1 GB
    m = a.metrics
    assert (m.apps_submitted, m.apps_pending, m.apps_running) == (2, 2, 0)
    h.heartbeat(n0)
    assert (m.apps_pending, m.apps_running) == (1, 1)
    h.release_all(first)
    h.finish(first)
    assert (m.apps_pending, m.apps_running, m.apps_completed) == (1, 0, 1)
    h.heartbeat(n0)
    assert (m.apps_pending, m.apps_running) == (0, 1)


async def test_fair_ordering_keeps_an_app_in_place_when_its_reservation_is_filled(
    autojump_clock,
) -> None:
    """FairOrderingPolicy orders by the usage an app had when its queue last
    re-sorted it; AbstractLeafQueue.apply tells the policy of new
    allocations and reservations, not of a container given from a
    reservation. y, sorted while it held only a reservation, keeps sorting
    as using nothing once that reservation becomes its container, so it
    comes before x, which uses as much and was submitted first."""
    h = harness(
        **{
            "root__b__ordering_policy": "fair",
            "root__b__maximum_capacity": 100,
            "root__b__user_limit_factor": 10,
        }
    )
    n0 = h.node("n0", 5 * GB)
    h.node("n1", 8 * GB)
    x, y = h.submit("b", "u"), h.submit("b", "u")
    b = h.leaf("b")
    h.ask(x, GB, 4)
    for _ in range(4):
        h.heartbeat(n0)
    h.ask(y, 2 * GB, 1)
    h.heartbeat(n0)
    assert n0.reserved is not None and n0.reserved.app_id == y.app_id
    assert h.sched._scheduling_order(b) == [y, x]  # an assignment pass sorts y
    for cid in sorted(x.live)[:2]:
        h.sched.complete_container(x.live[cid], 0, "", "KILL")
    h.heartbeat(n0)  # y's reservation becomes its container
    assert (used(x), used(y)) == (2 * GB, 2 * GB)
    assert h.sched._scheduling_order(b) == [y, x]


async def test_one_user_am_limit_per_partition_in_one_activation(autojump_clock) -> None:
    """activateApplications keeps the user AM limit it computes in a map
    keyed by partition only (userAmPartitionLimit): the first pending app
    to reach the user check sets it with its user's weight, and every
    later app that call is held to it. light (weight 0.25, 1 GB) is first
    and waits; heavy's 2 GB AM is then held to light's 1 GB and waits too,
    though its own limit (4 GB) would let it start."""
    h = Harness(
        {
            Q + "root.queues": "a,b",
            Q + "root.a.capacity": 50,
            Q + "root.b.capacity": 50,
            Q + "root.a.maximum-am-resource-percent": 0.5,
            Q + "root.a.user-settings.light.weight": 0.25,
        },
        **SETTINGS,
    )
    h.node("n0", 16 * GB, 16)
    a = h.leaf("a")
    h.submit("a", "other", Resource(GB, 1))
    assert a.user_am_limit(h.sched, Resource(8 * GB, 1), 0.25).memory == GB
    light = h.submit("a", "light", Resource(2 * GB, 1))
    heavy = h.submit("a", "heavy", Resource(2 * GB, 1))
    assert a.pending == [light, heavy]


async def test_a_user_whose_last_runnable_app_leaves_stops_counting_as_active(
    autojump_clock,
) -> None:
    """AbstractLeafQueue.removeApplicationAttempt drops the User once it has
    no runnable attempt (UsersManager.removeUser), though an app of its
    held back by max-parallel-apps still asks: the user limit then divides
    among no active user (activeUsersTimesWeights 0) and is the queue's
    guarantee, until the user's asks stop and start again."""
    h = harness(
        **{
            "root__b__maximum_capacity": 100,
            "root__b__user_limit_factor": 2,
            "root__b__max_parallel_apps": 1,
        }
    )
    n0 = h.node("n0", 16 * GB)
    first, second = h.submit("b", "u"), h.submit("b", "u")
    b = h.leaf("b")
    h.ask(first, GB, 8)
    h.ask(second, GB, 8)
    for _ in range(12):
        h.heartbeat(n0)
    assert used(first) > 0 and used(second) == 0
    assert b.limit_users == {"u"}
    h.release_all(first)
    h.finish(first)  # second becomes runnable; u had no runnable attempt left
    assert second in b.active or second in b.pending
    assert b.limit_users == set()
    h.ask(second, GB, 8)  # still asking: u stays out
    assert b.limit_users == set()
    h.ask(second, GB, 0)
    h.ask(second, GB, 8)  # asks stop and start again: u is active once more
    assert b.limit_users == {"u"}


async def test_user_limit_reads_the_queue_usage_ratio_kept_in_floats(autojump_clock) -> None:
    """UsersManager keeps the queue's usage ratio as a Java float moved by
    each user's change of ratio (updateUserResourceUsage): 6 of 40 vcores
    is the float 0.15000001. computeUserLimit scales the partition by it
    with multiplyAndNormalizeUp, whose product the dominant calculator
    rounds to a float before its ceiling (Math.ceil((float) (v * by))):
    163840 MB * 0.15000001 is 24576.001 as a double but exactly 24576 as a
    float, and 40 vcores give exactly 6, so consumed is <24576 MB, 6
    vcores> and the limit that plus the minimum allocation, <25600 MB, 7
    vcores>, not <26624 MB, 8 vcores> from ceilings of the doubles."""
    h = Harness(
        {
            Q + "resource-calculator": DRF,
            Q + "root.queues": "a,b",
            Q + "root.a.capacity": 10,
            Q + "root.a.user-limit-factor": 10,
            Q + "root.b.capacity": 90,
        }
    )
    nodes = [h.node(f"n{i}", 16 * GB, vcores=4) for i in range(10)]
    app = h.submit("a", "u")
    h.ask(app, GB, 6)
    for n in nodes[:6]:
        h.assign_leaf("a", n)
    assert app.used == Resource(6 * GB, 6)
    leaf = h.leaf("a")
    assert leaf.usage_ratio == pytest.approx(0.15000000596046448, abs=0)
    assert leaf.user_limit(h.sched.default_env) == Resource(25 * GB, 7)

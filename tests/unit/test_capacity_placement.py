"""CapacityScheduler queue placement: leaf names, mappings, ACLs, queue state
and application limits, driven through emu.testing.capacity."""

from __future__ import annotations

from emu.resources import Resource
from emu.testing.capacity import GB, Harness, Q, used

# --- placement ---------------------------------------------------------------------------
TWO_LEVEL = {
    Q + "root.queues": "eng,ops",
    Q + "root.eng.capacity": 60,
    Q + "root.ops.capacity": 40,
    Q + "root.eng.queues": "alice,default",
    Q + "root.eng.alice.capacity": 50,
    Q + "root.eng.default.capacity": 50,
}


async def test_apps_name_a_leaf_by_short_name_or_full_path(autojump_clock) -> None:
    """CapacityScheduler.addApplication: leaf by short name or full path;
    parents and unknown queues are refused with YARN's diagnostics."""
    h = Harness(TWO_LEVEL)
    assert h.submit("ops", "u").queue == "root.ops"
    assert h.submit("root.eng.alice", "u").queue == "root.eng.alice"
    assert "to non-leaf queue: eng" in str(h.try_submit("eng", "u"))
    assert "to non-leaf queue: root" in str(h.try_submit("root", "u"))
    assert "to unknown queue: nope" in str(h.try_submit("nope", "u"))


async def test_ambiguous_short_name_is_refused(autojump_clock) -> None:
    """CapacitySchedulerQueueManager: a leaf name used twice needs its full path."""
    h = Harness(
        {**TWO_LEVEL, Q + "root.ops.queues": "default", Q + "root.ops.default.capacity": 100}
    )
    assert "ambiguous queue: default" in str(h.try_submit("default", "u"))
    assert h.submit("root.ops.default", "u").queue == "root.ops.default"


WITH_DEFAULT = {
    Q + "root.queues": "eng,ops,default",
    Q + "root.eng.capacity": 50,
    Q + "root.ops.capacity": 30,
    Q + "root.default.capacity": 20,
    Q + "root.eng.queues": "alice,sales,dev",
    Q + "root.eng.alice.capacity": 50,
    Q + "root.eng.sales.capacity": 25,
    Q + "root.eng.dev.capacity": 25,
}


async def test_the_first_matching_mapping_decides_else_root_default(autojump_clock) -> None:
    """CSMappingPlacementRule with the converted legacy rules (checked against
    Hadoop 3.4.2 on the fidelity case cap-queue-mapping-fallback): u:/g: rules
    left to right; the first rule that matches the user or a group decides;
    a queue it names that is not a leaf and cannot be created sends the app
    to root.default (placeDefault), never to a later rule."""
    h = Harness(
        {
            **WITH_DEFAULT,
            Q + "queue-mappings": "g:ops:ops,u:%user:%user,u:bob:alice",
            "hadoop.user.group.static.mapping.overrides": "carol=ops;dave=eng,x",
        }
    )
    assert h.submit("default", "alice").queue == "root.eng.alice"  # %user exists
    assert h.submit("default", "carol").queue == "root.ops"  # group rule
    assert h.submit("default", "bob").queue == "root.default"  # no queue bob
    assert h.submit("default", "dave").queue == "root.default"
    # without override, an explicitly named queue is kept
    assert h.submit("ops", "alice").queue == "root.ops"


async def test_mapping_variables_and_empty_parts_fall_back(autojump_clock) -> None:
    """%primary_group is the first group; %secondary_group the first other
    group naming a queue (under the path before it), else empty, and a path
    with an empty part is not valid; dots in names become _dot_."""
    h = Harness(
        {
            **WITH_DEFAULT,
            Q + "queue-mappings": (
                "u:erin:root.eng.%secondary_group,u:frank:%secondary_group,"
                "u:gus:%primary_group,u:%user:%user"
            ),
            "hadoop.user.group.static.mapping.overrides": (
                "erin=staff,nope,dev,sales;frank=staff;gus=my.team"
            ),
        }
    )
    assert h.submit("default", "erin").queue == "root.eng.dev"  # dev before sales
    assert h.submit("default", "frank").queue == "root.default"  # no second group
    assert h.submit("default", "gus").queue == "root.default"  # my_dot_team: none


async def test_a_mapping_fallback_without_root_default_rejects(autojump_clock) -> None:
    """placeToDefault: root.default is not a leaf queue here, so a mapping
    that names no queue rejects the app in Hadoop's words."""
    h = Harness({**TWO_LEVEL, Q + "queue-mappings": "u:%user:%user"})
    assert h.submit("default", "alice").queue == "root.eng.alice"
    assert "rejected by a mapping rule" in str(h.try_submit("default", "carol"))


async def test_mapping_override_applies_to_named_queues(autojump_clock) -> None:
    """queue-mappings-override.enable: mappings win over the submitted queue."""
    h = Harness(
        {
            **TWO_LEVEL,
            Q + "queue-mappings": "u:alice:ops",
            Q + "queue-mappings-override.enable": True,
        }
    )
    assert h.submit("root.eng.alice", "alice").queue == "root.ops"
    assert h.submit("root.eng.alice", "bob").queue == "root.eng.alice"


async def test_submit_acls_are_inherited_and_admin_implies_submit(autojump_clock) -> None:
    """TestQueueACLs / ConfiguredYarnAuthorizer: with yarn.acl.enable, a user
    may submit if the queue or an ancestor allows it; ' ' is no one, '*' anyone,
    'users groups' lists both; the administer ACL also allows submitting."""
    h = Harness(
        {
            **TWO_LEVEL,
            "yarn.acl.enable": True,
            Q + "root.acl_submit_applications": " ",
            Q + "root.acl_administer_queue": " ",
            Q + "root.eng.acl_submit_applications": "alice devs",
            Q + "root.ops.acl_submit_applications": " ",
            Q + "root.ops.acl_administer_queue": "root-op",
            "hadoop.user.group.static.mapping.overrides": "erin=devs",
        }
    )
    assert h.submit("root.eng.alice", "alice").queue == "root.eng.alice"
    assert h.submit("root.eng.default", "erin").queue == "root.eng.default"
    assert "does not have permission" in str(h.try_submit("root.eng.alice", "mallory"))
    assert "does not have permission" in str(h.try_submit("ops", "alice"))
    assert h.submit("ops", "root-op").queue == "root.ops"


async def test_acls_are_not_enforced_unless_enabled(autojump_clock) -> None:
    """QueueACLsManager.checkAccess: yarn.acl.enable defaults to false."""
    h = Harness({**TWO_LEVEL, Q + "root.acl_submit_applications": " "})
    assert h.submit("ops", "anyone").queue == "root.ops"


async def test_stopped_queue_refuses_new_apps_and_drains(autojump_clock) -> None:
    """TestQueueState: a STOPPED queue refuses submissions; running apps go on."""
    h = Harness(TWO_LEVEL)
    n = h.node("n1", 8 * GB)
    app = h.submit("ops", "u")
    h.ask(app, GB, 2)
    reason = h.sched.refresh({Q + "root.ops.state": "STOPPED"})
    assert reason is None
    assert "Queue root.ops is STOPPED" in str(h.try_submit("ops", "u"))
    h.heartbeat(n)
    assert used(app) > 0


async def test_maximum_applications_per_queue_and_user(autojump_clock) -> None:
    """TestApplicationLimits.testLimitsComputation: maximum-applications and
    the per-user share of it, (int)(max * user-limit% * user-limit-factor)."""
    h = Harness(
        {
            **TWO_LEVEL,
            Q + "root.ops.maximum-applications": 4,
            Q + "root.ops.minimum-user-limit-percent": 50,
        }
    )
    ops = h.leaf("ops")
    assert (ops.max_applications, ops.max_applications_per_user) == (4, 2)
    h.submit("ops", "a")
    h.submit("ops", "a")
    assert "already has 2 applications from user a" in str(h.try_submit("ops", "a"))
    h.submit("ops", "b")
    h.submit("ops", "b")
    assert "already has 4 applications" in str(h.try_submit("ops", "c"))
    # default: (int)(maximum-applications 10000 * absolute capacity)
    assert h.leaf("root.eng.alice").max_applications == int(10000 * 0.6 * 0.5)


async def test_zero_applications_per_user_refuses_a_new_user(autojump_clock) -> None:
    """AbstractLeafQueue.validateSubmitApplication takes the user through
    getUserAndAddIfAbsent: a user with no applications yet is refused when
    maxApplicationsPerUser is (int)(1 * 50 / 100.0f * 1) = 0."""
    h = Harness(
        {
            **TWO_LEVEL,
            Q + "root.ops.maximum-applications": 1,
            Q + "root.ops.minimum-user-limit-percent": 50,
        }
    )
    ops = h.leaf("ops")
    assert (ops.max_applications, ops.max_applications_per_user) == (1, 0)
    assert "already has 0 applications from user a" in str(h.try_submit("ops", "a"))


async def test_a_user_with_only_pending_apps_shares_the_user_am_limit(autojump_clock) -> None:
    """UsersManager.getNumActiveUsers adds the users whose apps all wait for
    activation (activeUsersWithOnlyPendingApps, counted when the user limit
    is recomputed) to the active ones, which getUserAMResourceLimitPerPartition
    divides the AM limit by: a's guarantee 8 GB, AM percent 0.25, so 2 GB of
    AMs; dave's 2 GB AM waits, and with him counted carol may have 1 GB of
    AMs (0.5 of 2 GB), so her second 1 GB AM waits too."""
    h = Harness(
        {
            Q + "root.queues": "a,b",
            Q + "root.a.capacity": 50,
            Q + "root.a.maximum-capacity": 50,
            Q + "root.a.minimum-user-limit-percent": 50,
            Q + "root.a.maximum-am-resource-percent": 0.25,
            Q + "root.b.capacity": 50,
        }
    )
    n = h.node("n1", 16 * GB)
    a = h.leaf("a")
    first = h.submit("a", "carol", Resource(GB, 1))
    h.ask(first, GB, 4)
    h.submit("a", "dave", Resource(2 * GB, 1))
    assert (len(a.active), len(a.pending)) == (1, 1)
    h.heartbeat(n)
    h.heartbeat(n)
    assert used(first) > 0
    h.submit("a", "carol", Resource(GB, 1))
    assert (len(a.active), len(a.pending)) == (1, 2)


async def test_user_limit_of_no_applications_refuses_a_new_user(autojump_clock) -> None:
    """AbstractLeafQueue.validateSubmitApplication: a user new to the queue
    (getUserAndAddIfAbsent, 0 applications) is refused too when
    maxApplicationsPerUser truncates to 0: (int)(2 * 25% * 1) = 0."""
    h = Harness(
        {
            **TWO_LEVEL,
            Q + "root.ops.maximum-applications": 2,
            Q + "root.ops.minimum-user-limit-percent": 25,
        }
    )
    assert h.leaf("ops").max_applications_per_user == 0
    reason = str(h.try_submit("ops", "bob"))
    assert reason == (
        "Queue root.ops already has 0 applications from user bob "
        "cannot accept submission of application: application_0_0001"
    )


async def test_system_maximum_applications_counts_every_queue(autojump_clock) -> None:
    """CapacityScheduler.addApplication/isSystemAppsLimitReached: once the
    root holds yarn.scheduler.capacity.maximum-applications apps, any
    submission is refused, whatever its queue's own limits; a finished app
    frees its place."""
    h = Harness(
        {
            **TWO_LEVEL,
            Q + "maximum-applications": 3,
            Q + "root.ops.maximum-applications": 10,
            Q + "root.eng.alice.maximum-applications": 10,
        }
    )
    first = h.submit("ops", "a")
    h.submit("ops", "b")
    h.submit("alice", "a")
    reason = str(h.try_submit("ops", "c"))
    assert reason.startswith("Maximum system application limit reached,cannot accept")
    h.finish(first)
    assert h.submit("ops", "c").queue == "root.ops"

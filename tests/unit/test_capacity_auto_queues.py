"""CapacityScheduler auto-created queues (legacy managed parents and flexible
auto-queue-creation-v2), driven through emu.testing.capacity: creation at
submission, template settings, sizes, limits, removal of idle queues and
admin refreshes."""

from __future__ import annotations

import pytest
import trio

from emu.resources import Resource
from emu.testing.capacity import GB, Harness, Q, used

LEGACY = {
    Q + "root.queues": "default,users",
    Q + "root.default.capacity": 20,
    Q + "root.users.capacity": 80,
    Q + "root.users.auto-create-child-queue.enabled": True,
    Q + "root.users.leaf-queue-template.capacity": 30,
    Q + "root.users.leaf-queue-template.maximum-capacity": 40,
    Q + "root.users.leaf-queue-template.user-limit-factor": 2,
    Q + "queue-mappings": "u:%user:users.%user",
}

FLEXIBLE = {
    Q + "root.queues": "default,users",
    Q + "root.default.capacity": 20,
    Q + "root.users.capacity": 80,
    Q + "root.users.auto-queue-creation-v2.enabled": True,
    Q + "queue-mappings": "u:%user:users.%user",
}

DELETION = {
    "yarn.resourcemanager.scheduler.monitor.enable": True,
    "yarn.resourcemanager.scheduler.monitor.policies": "org.apache.hadoop.yarn.server."
    "resourcemanager.scheduler.capacity.AutoCreatedQueueDeletionPolicy",
    Q + "auto-queue-creation-v2.queue-expiration-time": 30,
}


# --- legacy -----------------------------------------------------------------------
async def test_legacy_leaf_is_created_from_the_template(autojump_clock) -> None:
    """ManagedParentQueue: the mapping's queue is created on first submission
    with the template's settings; the same user's next app reuses it."""
    h = Harness(LEGACY)
    assert h.sched.cs.queues["root.users"].auto_create == "legacy"
    assert not h.sched.cs.queues["root.users"].is_leaf
    assert h.submit("default", "alice").queue == "root.users.alice"
    q = h.sched.cs.queues["root.users.alice"]
    assert q.dynamic
    assert (q.capacity, q.maximum_capacity, q.user_limit_factor) == (30, 40, 2)
    assert q.absolute_capacity == pytest.approx(0.24)
    assert q.absolute_maximum_capacity == pytest.approx(0.4)  # of users' 100 % maximum
    assert h.submit("default", "alice").queue == "root.users.alice"
    assert h.sched.tree["root.users"].children[0].path == "root.users.alice"
    assert [i["name"] for i in h.sched.queue_info("root.users.alice")] == ["root.users.alice"]


async def test_legacy_guarantee_is_the_template_while_it_fits_then_zero(autojump_clock) -> None:
    """GuaranteedOrZeroCapacityOverTimePolicy.getInitialLeafQueueConfiguration:
    three 24 % leaves fit in users' 80 %, the fourth gets no guarantee but
    the template's maximum, and its user limit is capped by that maximum
    (UsersManager: a queue without capacity), not by zero."""
    h = Harness(LEGACY)
    h.node("n1", 100 * GB, 100)
    for user in ("a", "b", "c", "d"):
        h.submit("default", user)
    caps = {u: h.sched.cs.queues[f"root.users.{u}"].absolute_capacity for u in "abcd"}
    assert caps == pytest.approx({"a": 0.24, "b": 0.24, "c": 0.24, "d": 0.0})
    d = h.sched.cs.queues["root.users.d"]
    assert d.absolute_maximum_capacity == pytest.approx(0.4)
    h = Harness(LEGACY)
    node = h.node("n1", 100 * GB, 100)
    apps = [h.submit("default", user) for user in ("a", "b", "c", "d")]
    h.ask(apps[3], 1 * GB, 60)
    for _ in range(60):  # one off-switch container per heartbeat
        h.heartbeat(node)
    assert used(apps[3]) == 40 * GB  # the queue's maximum


async def test_legacy_leaf_takes_apps_only_through_a_mapping(autojump_clock) -> None:
    """CapacityScheduler.addApplication: an AutoCreatedLeafQueue named directly
    refuses the app, and has no maximum-applications limit."""
    h = Harness({**LEGACY, Q + "root.users.leaf-queue-template.maximum-applications": 1})
    h.submit("default", "alice")
    h.submit("default", "alice")  # no limit
    refused = str(h.try_submit("root.users.alice", "alice"))
    assert "to specified queue : root.users.alice  is prohibited" in refused


async def test_legacy_max_queues_rejects_with_hadoops_reason(autojump_clock) -> None:
    h = Harness({**LEGACY, Q + "root.users.auto-create-child-queue.max-queues": 1})
    h.submit("default", "alice")
    refused = str(h.try_submit("default", "bob"))
    assert "to  queue : root.users.bob failed : Cannot auto create leaf queue" in refused
    assert "Max Child Queue limit exceeded which is configured as : 1" in refused
    assert "root.users.bob" not in h.sched.tree


# --- flexible ---------------------------------------------------------------------
async def test_flexible_queues_share_the_parent_by_weight(autojump_clock) -> None:
    """ParentQueue.addDynamicChildQueue: each created queue weighs 1w unless
    a template says otherwise; siblings' shares are renormalised."""
    h = Harness({**FLEXIBLE, Q + "root.users.auto-queue-creation-v2.template.capacity": "1w"})
    h.submit("default", "alice")
    assert h.sched.cs.queues["root.users.alice"].absolute_capacity == pytest.approx(0.8)
    h.submit("default", "bob")
    for u in ("alice", "bob"):
        q = h.sched.cs.queues[f"root.users.{u}"]
        assert (q.weight, q.capacity) == (1.0, 50.0)
        assert q.absolute_capacity == pytest.approx(0.4)
    assert h.leaf("users.alice").guaranteed(h.sched) == h.leaf("users.bob").guaranteed(h.sched)


async def test_flexible_templates_leaf_parent_and_wildcards(autojump_clock) -> None:
    """AutoCreatedQueueTemplate: leaf-template beats template, a wildcard path
    applies one level down, and a property set for the queue itself wins over
    the templates (but not a user-limit-factor, which
    AbstractLeafQueue.parseAndSetDynamicTemplates overwrites with -1)."""
    h = Harness(
        {
            **FLEXIBLE,
            Q + "queue-mappings": "u:%user:users.%primary_group.%user",
            "hadoop.user.group.static.mapping.overrides": "alice=eng;bob=eng",
            Q + "root.users.auto-queue-creation-v2.template.maximum-capacity": 50,
            Q + "root.users.auto-queue-creation-v2.parent-template.capacity": "3w",
            Q + "root.users.*.auto-queue-creation-v2.template.user-limit-factor": 3,
            Q + "root.users.*.auto-queue-creation-v2.leaf-template.user-limit-factor": 4,
            Q + "root.users.eng.bob.user-limit-factor": 5,
            Q + "root.users.eng.bob.maximum-capacity": 30,
        }
    )
    assert h.submit("default", "alice").queue == "root.users.eng.alice"
    assert h.submit("default", "bob").queue == "root.users.eng.bob"
    eng = h.sched.cs.queues["root.users.eng"]
    assert eng.dynamic and eng.auto_create == "flexible" and eng.weight == 3
    assert eng.maximum_capacity == 50
    assert h.sched.cs.queues["root.users.eng.alice"].user_limit_factor == 4
    bob = h.sched.cs.queues["root.users.eng.bob"]
    assert (bob.user_limit_factor, bob.maximum_capacity) == (-1, 30)


async def test_flexible_leaf_has_no_user_limit_factor_and_a_full_am_share(autojump_clock) -> None:
    """AbstractLeafQueue.parseAndSetDynamicTemplates: a flexible dynamic leaf
    gets user-limit-factor -1 and maximum-am-resource-percent 1.0 unless a
    template sets them; a value configured for the leaf's own path is
    overwritten. A legacy leaf keeps the scheduler's defaults."""
    h = Harness({**FLEXIBLE, Q + "root.users.bob.maximum-am-resource-percent": 0.2})
    h.node("n1", 10 * GB, 10)
    for user in ("alice", "bob"):
        h.submit("default", user)
        q = h.sched.cs.queues[f"root.users.{user}"]
        assert (q.user_limit_factor, q.maximum_am_percent) == (-1, 1.0)
    # Both AMs start: 4 GB of AMs in alice's 4 GB guarantee.
    apps = [h.submit("default", "alice", am=Resource(2 * GB, 1)) for _ in range(2)]
    assert h.leaf("users.alice").active[-2:] == apps
    h = Harness(
        {
            **FLEXIBLE,
            Q + "root.users.auto-queue-creation-v2.template.user-limit-factor": 2,
            Q + "root.users.auto-queue-creation-v2.leaf-template.maximum-am-resource-percent": 0.3,
        }
    )
    h.submit("default", "alice")
    q = h.sched.cs.queues["root.users.alice"]
    assert (q.user_limit_factor, q.maximum_am_percent) == (2, 0.3)
    h = Harness(LEGACY)
    h.submit("default", "alice")
    q = h.sched.cs.queues["root.users.alice"]
    assert (q.user_limit_factor, q.maximum_am_percent) == (2, pytest.approx(0.1))


async def test_flexible_depth_and_weights_are_enforced(autojump_clock) -> None:
    """determineMissingParents: at most two levels below the configured
    parent; legacy queue mode: siblings must all use weights."""
    h = Harness({**FLEXIBLE, Q + "queue-mappings": ""})
    assert h.submit("root.users.a.b", "u").queue == "root.users.a.b"
    assert "unknown queue: root.users.x.y.z" in str(h.try_submit("root.users.x.y.z", "u"))
    h = Harness(
        {
            **FLEXIBLE,
            Q + "root.users.queues": "fixed",
            Q + "root.users.fixed.capacity": 100,
        }
    )
    refused = str(h.try_submit("default", "alice"))
    assert "are using weight-based capacity. Failed to created queue" in refused


async def test_flexible_max_queues(autojump_clock) -> None:
    h = Harness({**FLEXIBLE, Q + "root.users.auto-queue-creation-v2.max-queues": 2})
    h.submit("default", "a")
    h.submit("default", "b")
    assert "Max Child Queue limit exceeded which is configured as: 2" in str(
        h.try_submit("default", "c")
    )


async def test_idle_flexible_queue_is_removed_after_two_passes(autojump_clock) -> None:
    """AutoCreatedQueueDeletionPolicy: an app-less dynamic queue is marked in
    one pass and removed in the next if idle longer than the expiry; a
    queue with an app stays, and the survivors' shares grow back."""
    h = Harness({**FLEXIBLE, **DELETION})
    assert h.sched.update_interval_ms == 30000
    alice = h.submit("default", "alice")
    h.submit("default", "bob")
    h.finish(alice)
    await trio.sleep(29.5)
    carol = h.submit("default", "carol")
    await trio.sleep(0.4)
    h.finish(carol)
    await trio.sleep(0.1)
    h.sched.update()  # 30 s: alice and carol marked
    assert {"root.users.alice", "root.users.carol"} <= set(h.sched.tree)
    await trio.sleep(30)
    h.sched.update()  # 60 s: alice idle 60 s goes; carol idle 30.5 s (30 s) stays
    assert "root.users.alice" not in h.sched.tree
    assert "root.users.alice" not in h.sched.cs.queues
    assert "root.users.carol" in h.sched.tree
    await trio.sleep(30)
    h.sched.update()  # 90 s: carol, sent in vain at 60 s, is marked afresh
    assert "root.users.carol" in h.sched.tree
    await trio.sleep(30)
    h.sched.update()
    assert [c.path for c in h.sched.tree["root.users"].children] == ["root.users.bob"]
    assert h.sched.cs.queues["root.users.bob"].absolute_capacity == pytest.approx(0.8)
    assert h.submit("default", "alice").queue == "root.users.alice"  # created again


async def test_queue_auto_removal_can_be_disabled_by_template(autojump_clock) -> None:
    h = Harness(
        {
            **FLEXIBLE,
            **DELETION,
            Q + "root.users.auto-queue-creation-v2.template."
            "auto-queue-creation-v2.queue-auto-removal.enable": False,
        }
    )
    h.finish(h.submit("default", "alice"))
    for _ in range(4):
        await trio.sleep(30)
        h.sched.update()
    assert "root.users.alice" in h.sched.tree


async def test_refresh_keeps_created_queues(autojump_clock) -> None:
    h = Harness(FLEXIBLE)
    alice = h.submit("default", "alice")
    assert h.sched.refresh({Q + "root.default.capacity": 30, Q + "root.users.capacity": 70}) is None
    q = h.sched.cs.queues["root.users.alice"]
    assert q.absolute_capacity == pytest.approx(0.7)
    assert h.sched.tree["root.users.alice"].num_apps == 1
    h.finish(alice)


async def test_a_user_without_groups_keeps_primary_group_literally(autojump_clock) -> None:
    """CSMappingPlacementRule: a failed group lookup leaves %primary_group
    undefined, and the flexible parent creates a queue by that name (as
    Hadoop's scheduler does for a user with no groups)."""
    h = Harness(
        {
            **FLEXIBLE,
            Q + "queue-mappings": "u:%user:users.%primary_group.%user",
            "hadoop.user.group.static.mapping.overrides": "alice=eng",
        }
    )
    assert h.submit("default", "alice").queue == "root.users.eng.alice"
    assert h.submit("default", "erin").queue == "root.users.%primary_group.erin"


async def test_a_created_queue_is_checked_against_its_template_acls(autojump_clock) -> None:
    """With yarn.acl.enable the would-be queue's ACLs (from the template) and
    its ancestors' decide, before anything is created."""
    h = Harness(
        {
            **LEGACY,
            "yarn.acl.enable": True,
            Q + "root.acl_submit_applications": " ",
            Q + "root.acl_administer_queue": " ",
            Q + "root.users.leaf-queue-template.acl_submit_applications": "alice",
        }
    )
    assert h.submit("default", "alice").queue == "root.users.alice"
    refused = str(h.try_submit("default", "bob"))
    assert refused.startswith("User bob does not have permission to submit")
    assert "root.users.bob" not in h.sched.tree


async def test_preemption_runs_beside_an_empty_creating_parent(autojump_clock) -> None:
    """A parent that creates queues and has none yet is an empty parent for
    the preemption policy too."""
    h = Harness(
        {
            **FLEXIBLE,
            Q + "queue-mappings": "",
            "yarn.resourcemanager.scheduler.monitor.enable": True,
        }
    )
    node = h.node("n1", 8 * GB, 8)
    app = h.submit("default", "alice")
    h.ask(app, 1 * GB, 4)
    h.heartbeat(node)
    await trio.sleep(3)
    h.sched.update()
    assert h.sched.tree["root.users"].children == []
    assert used(app) > 0


async def test_a_fixed_mapping_may_name_a_queue_to_create(autojump_clock) -> None:
    """A mapping without variables to a queue below a creating parent is no
    configuration error: the queue is created on first use."""
    h = Harness({**LEGACY, Q + "queue-mappings": "u:alice:users.team"})
    assert h.submit("default", "alice").queue == "root.users.team"

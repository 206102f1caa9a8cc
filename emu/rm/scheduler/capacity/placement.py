"""Which leaf queue an application joins, as the CapacityScheduler decides
at submission: queue mappings, queue names, ACLs and queue state.

- `queue-mappings` (`u:user:queue`, `g:group:queue`, with `%user`,
  `%primary_group` and `%secondary_group`) are tried left to right when the
  app was submitted to `default`, or always with
  `queue-mappings-override.enable`; the first rule whose queue resolves to
  an existing leaf wins, a rule that resolves to nothing is skipped.
- A queue is named by its full path (`root.a.b`) or, if no other queue has
  the same last segment, by that short name.
- Users' groups come from Hadoop's static mapping property
  `hadoop.user.group.static.mapping.overrides` (`user1=g1,g2;user2=g3`);
  the first group is the primary group. Emu has no operating-system users,
  so a user not listed there has no groups.
- With `yarn.acl.enable`, a user may submit if the submit or administer ACL
  of the queue or of any ancestor allows it (root allows everyone unless
  configured otherwise), as YARN's ConfiguredYarnAuthorizer does.
- A STOPPED queue refuses new applications.
- An app submitted to a reservable (plan) queue joins the plan's default
  reservation queue, `<queue>-default` (emu has no reservations).

Rejection reasons use YARN's wording.
"""

from __future__ import annotations

from emu.rm.scheduler.capacity.config import (
    DEFAULT_QUEUE,
    RUNNING,
    CapacityConf,
    QueueMapping,
)


def resolve(cs: CapacityConf, name: str) -> tuple[str | None, str]:
    """A queue name -> (full path, "") or (None, what is wrong)."""
    if name in cs.queues:
        path = name
    else:
        found = cs.by_short_name(name)
        if not found:
            return None, "unknown"
        if len(found) > 1:
            return None, "ambiguous"
        path = found[0]
    if cs.queues[path].plan:
        # CapacityScheduler.resolveReservationQueueName: an app without a
        # reservation runs in the plan's default reservation queue.
        path = cs.queues[path].children[0]
    if not cs.queues[path].is_leaf:
        return None, "non-leaf"
    return path, ""


def _target(m: QueueMapping, user: str, groups: tuple[str, ...]) -> str | None:
    if m.kind == "u" and m.source not in ("%user", user):
        return None
    if m.kind == "g" and m.source not in groups:
        return None
    queue = m.queue.replace("%user", user)
    if "%primary_group" in queue:
        if not groups:
            return None
        queue = queue.replace("%primary_group", groups[0])
    if "%secondary_group" in queue:
        if len(groups) < 2:
            return None
        queue = queue.replace("%secondary_group", groups[1])
    return queue


def mapped_queue(cs: CapacityConf, queue: str, user: str) -> str:
    """The queue after applying queue mappings (unchanged if none applies)."""
    if not cs.mappings or not (cs.mappings_override or queue == DEFAULT_QUEUE):
        return queue
    groups = cs.groups_of(user)
    for m in cs.mappings:
        target = _target(m, user, groups)
        if target is not None and resolve(cs, target)[0] is not None:
            return target
    return queue


def may_submit(cs: CapacityConf, path: str, user: str) -> bool:
    if not cs.acl_enabled:
        return True
    groups = cs.groups_of(user)
    q = cs.queues.get(path)
    while q is not None:
        if q.submit_acl.allows(user, groups) or q.admin_acl.allows(user, groups):
            return True
        q = cs.queues.get(q.parent) if q.parent else None
    return False


def place(cs: CapacityConf, queue: str, user: str, app_id: str) -> tuple[str | None, str]:
    """(leaf path, "") or (None, rejection reason)."""
    queue = mapped_queue(cs, queue, user)
    path, problem = resolve(cs, queue)
    if path is None:
        if problem == "ambiguous":
            return None, (
                f"Application {app_id} submitted by user {user} to ambiguous queue: "
                f"{queue} please use full queue path instead."
            )
        return None, f"Application {app_id} submitted by user {user} to {problem} queue: {queue}"
    if not may_submit(cs, path, user):
        return None, f"User {user} does not have permission to submit {app_id} to queue {path}"
    if cs.queues[path].state != RUNNING:
        return None, f"Queue {path} is STOPPED. Cannot accept submission of application: {app_id}"
    return path, ""

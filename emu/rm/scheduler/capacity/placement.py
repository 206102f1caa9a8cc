"""Which leaf queue an application joins, as the CapacityScheduler decides
at submission: queue mappings, queue names, ACLs and queue state.

- `queue-mappings` (`u:user:queue`, `g:group:queue`, with `%user`,
  `%primary_group` and `%secondary_group`) are tried left to right when the
  app was submitted to `default`, or always with
  `queue-mappings-override.enable`; the first rule that matches the user
  (or one of their groups) decides: its queue if that is a leaf or can be
  created, else root.default, the fallback of every legacy rule (the app
  is rejected if root.default is not a leaf).
- A queue is named by its full path (`root.a.b`) or, if no other queue has
  the same last segment, by that short name.
- Users' groups come from Hadoop's static mapping property
  `hadoop.user.group.static.mapping.overrides` (`user1=g1,g2;user2=g3`);
  the first group is the primary group. Emu has no operating-system users,
  so a user not listed there has no groups: Hadoop's lookup fails for such
  a user and `%primary_group` stays in the path as written.
- With `yarn.acl.enable`, a user may submit if the submit or administer ACL
  of the queue or of any ancestor allows it (root allows everyone unless
  configured otherwise), as YARN's ConfiguredYarnAuthorizer does.
- A queue that does not exist but whose parent (or grandparent) creates
  queues is created for the app (`auto_queues`), whether a mapping or the
  submission named it; `u:%user:parent.%user` is the usual mapping.
- A STOPPED queue refuses new applications.
- An app submitted to a reservable (plan) queue joins the plan's default
  reservation queue, `<queue>-default` (emu has no reservations).

Rejection reasons use YARN's wording.
"""

from __future__ import annotations

from emu.rm.scheduler.capacity import auto_queues
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


FALLBACK_QUEUE = "root.default"
"""Where a matching rule whose queue is not valid places the app: every
legacy rule's fallback is placeDefault, and `%default` is root.default
(CSMappingPlacementRule.createVariableContext)."""
REJECTED_BY_MAPPING = (
    "Application submission have been rejected by a mapping rule. Please see the logs for details"
)


def _clean(name: str) -> str:
    """CSMappingPlacementRule.cleanName: a dot in a user or group name
    would be a queue path separator."""
    return name.replace(".", "_dot_")


def _matches(m: QueueMapping, user: str, groups: tuple[str, ...]) -> bool:
    if m.kind == "u":
        return m.source in ("%user", user)
    return m.source in groups


def _exists(cs: CapacityConf, name: str) -> bool:
    """CSQueueStore.get: a full path, or a short name only one queue has."""
    return name in cs.queues or len(cs.by_short_name(name)) == 1


def _target(cs: CapacityConf, m: QueueMapping, user: str, groups: tuple[str, ...]) -> str:
    """The rule's queue with its variables replaced (VariableContext.replacePathVariables).
    Without groups (the lookup failed) the group variables are undefined and
    stay in the path as written. `%secondary_group` is the first group after
    the primary one that names a queue (under the path before it, if any),
    or empty."""
    queue = m.queue.replace("%user", _clean(user))
    if not groups:
        return queue
    parts = queue.replace("%primary_group", _clean(groups[0])).split(".")
    for i, part in enumerate(parts):
        if part == "%secondary_group":
            prefix = "".join(p + "." for p in parts[:i])
            found = [g for g in map(_clean, groups[1:]) if _exists(cs, prefix + g)]
            parts[i] = found[0] if found else ""
    return ".".join(parts)


def _valid(cs: CapacityConf, target: str) -> str | None:
    """The queue a rule's result names, normalized, or None when it is not
    one an app can be placed in (validateAndNormalizeQueue): a path with an
    empty part, a queue that does not exist and cannot be created, a parent."""
    if not target or "" in target.split("."):
        return None
    if resolve(cs, target)[0] is not None:
        return target
    full = auto_queues.normalize(cs, target)
    if resolve(cs, full)[0] is not None or auto_queues.creatable(cs, full):
        return full
    return None


def mapped_queue(cs: CapacityConf, queue: str, user: str) -> tuple[str | None, bool]:
    """(the queue after applying queue mappings, whether a mapping placed
    it); unchanged if no rule matches the user. The first rule that matches
    decides (CSMappingPlacementRule with the converted legacy rules): its
    queue if valid, which includes one it may create under a parent that
    creates queues, else its fallback, root.default; (None, True) when that
    is not a leaf queue either: the app is rejected."""
    if not cs.mappings or not (cs.mappings_override or queue == DEFAULT_QUEUE):
        return queue, False
    groups = cs.groups_of(user)
    for m in cs.mappings:
        if not _matches(m, user, groups):
            continue
        valid = _valid(cs, _target(cs, m, user, groups))
        if valid is not None:
            return valid, True
        if resolve(cs, FALLBACK_QUEUE)[0] == FALLBACK_QUEUE:
            return FALLBACK_QUEUE, True
        return None, True
    return queue, False


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


class Placement:
    """Where an application goes: `path` (a leaf, or with `create` a queue
    to create first), or `reason` it is rejected. `mapped`: a queue mapping
    placed it (Hadoop's placement context is set)."""

    __slots__ = ("create", "mapped", "path", "reason")

    def __init__(
        self, path: str | None, reason: str = "", create: bool = False, mapped: bool = False
    ) -> None:
        self.path = path
        self.reason = reason
        self.create = create
        self.mapped = mapped


def place(cs: CapacityConf, queue: str, user: str, app_id: str) -> Placement:
    """Where the app goes, or why not (CapacityScheduler.addApplication's
    checks before the queue's own)."""
    mapped_to, mapped = mapped_queue(cs, queue, user)
    if mapped_to is None:
        return Placement(None, REJECTED_BY_MAPPING)
    queue = mapped_to
    path, problem = resolve(cs, queue)
    if path is None and problem == "unknown" and "." in queue and _may_create(cs, queue):
        # getOrCreateQueueFromPlacementContext: a missing queue with a parent
        # part is created, whether or not a mapping named it.
        return Placement(queue, create=True, mapped=mapped)
    if path is None:
        if problem == "ambiguous":
            return Placement(
                None,
                f"Application {app_id} submitted by user {user} to ambiguous queue: "
                f"{queue} please use full queue path instead.",
            )
        return Placement(
            None, f"Application {app_id} submitted by user {user} to {problem} queue: {queue}"
        )
    if not may_submit(cs, path, user):
        return Placement(
            None, f"User {user} does not have permission to submit {app_id} to queue {path}"
        )
    if cs.queues[path].state != RUNNING:
        return Placement(
            None, f"Queue {path} is STOPPED. Cannot accept submission of application: {app_id}"
        )
    return Placement(path, mapped=mapped)


def _may_create(cs: CapacityConf, path: str) -> bool:
    """Some ancestor of `path` creates queues: creation is attempted (and
    may still fail, with Hadoop's reason)."""
    q = path.rsplit(".", 1)[0]
    while q:
        if auto_queues.may_create_under(cs.queues.get(q)):
            return True
        q = q.rsplit(".", 1)[0] if "." in q else ""
    return False

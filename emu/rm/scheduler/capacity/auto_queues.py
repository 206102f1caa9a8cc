"""Queues the CapacityScheduler creates for an application at submission,
and removes again when they sit idle.

Two kinds, as Hadoop 3.4 has them:

- **Legacy** (`<parent>.auto-create-child-queue.enabled`): the parent is a
  ManagedParentQueue and every child is an AutoCreatedLeafQueue, configured
  from `<parent>.leaf-queue-template.*` (each template property is copied to
  the new leaf's own path, as ManagedParentQueue.setLeafQueueConfigs does).
  Its guarantee comes from GuaranteedOrZeroCapacityOverTimePolicy's initial
  configuration: the template capacity while the parent's absolute capacity
  still holds it beside the already activated children, zero otherwise; the
  maximum capacity is the template's either way. Such a leaf is exempt from
  the maximum-applications checks (AbstractLeafQueue.validateSubmitApplication).
  `auto-create-child-queue.max-queues` caps the children, and
  `auto-create-child-queue.fail-on-exceeding-parent-capacity` refuses a leaf
  whose template capacity no longer fits.
- **Flexible** (`<parent>.auto-queue-creation-v2.enabled`): any missing part
  of the path is created, parents included, at most
  `auto-queue-creation-v2.maximum-queue-depth` (2) levels below the first
  configured parent (CapacitySchedulerQueueManager.determineMissingParents).
  A created queue's capacity is a weight, `1w` unless a template says
  otherwise, and all its siblings must use weights too (the legacy queue
  mode's rule in ParentQueue.addDynamicChildQueue); siblings' shares are
  renormalised on each creation and removal. Properties come from the
  parent's `auto-queue-creation-v2.template.*`, `.leaf-template.*` and
  `.parent-template.*` (also given for wildcard paths such as `root.*`),
  set on the new queue's path unless configured there
  (AutoCreatedQueueTemplate). `auto-queue-creation-v2.max-queues` caps each
  parent's children.

Removal (AutoCreatedQueueDeletionPolicy, a scheduling monitor policy that
runs every `auto-queue-creation-v2.queue-expiration-time` seconds): a
flexible dynamic queue without applications (a parent: without children)
and with `queue-auto-removal.enable` is marked in one pass and, if still so
in the next, removed once it has been idle (no application submitted, for a
parent no child created) for longer than the expiration time.
"""

from __future__ import annotations

from dataclasses import replace

from emu.config.configuration import Configuration
from emu.resources import Resource
from emu.rm.scheduler.capacity.config import (
    AUTO_V2,
    FLEXIBLE,
    LEGACY,
    LEGACY_TEMPLATE,
    PREFIX,
    ROOT,
    CapacityConf,
    QueueConf,
    absolute_share,
    build_queue,
)

LEGACY_MAX_QUEUES = 1000  # DEFAULT_AUTO_CREATE_QUEUE_MAX_QUEUES
FLEXIBLE_MAX_QUEUES = 1000  # DEFAULT_AUTO_QUEUE_CREATION_V2_MAX_QUEUES
MAXIMUM_DEPTH = 2  # DEFAULT_MAXIMUM_QUEUE_DEPTH
EPSILON = 0.001  # CSQueueUtils.EPSILON, GuaranteedOrZeroCapacityOverTimePolicy's slack
_TEMPLATE = AUTO_V2 + "template."
_LEAF_TEMPLATE = AUTO_V2 + "leaf-template."
_PARENT_TEMPLATE = AUTO_V2 + "parent-template."


class CreationError(Exception):
    """Why a queue could not be created (Hadoop's SchedulerDynamicEditException)."""


def _parent_of(path: str) -> str:
    return path.rsplit(".", 1)[0] if "." in path else ""


def may_create_under(q: QueueConf | None) -> bool:
    """Whether `q` creates children at run time (a managed parent, a parent
    with auto-queue-creation-v2 or a created parent)."""
    return q is not None and bool(q.auto_create)


def creatable(cs: CapacityConf, path: str) -> bool:
    """MappingRuleValidationHelper.validateQueuePathAutoCreation's CREATABLE:
    the queue does not exist and its parent creates children, or the parent
    is missing and the grandparent creates flexible children."""
    if path in cs.queues:
        return False
    parent = _parent_of(path)
    if not parent:
        return False
    pq = cs.queues.get(parent)
    if pq is not None:
        return may_create_under(pq)
    grand = _parent_of(parent)
    gq = cs.queues.get(grand) if grand else None
    return gq is not None and gq.auto_create == FLEXIBLE


def normalize(cs: CapacityConf, path: str) -> str:
    """A mapping target's full path: a first part naming a queue by its
    short name is replaced by that queue's path
    (MappingRuleValidationHelper.normalizeQueuePathRoot)."""
    head, _, rest = path.partition(".")
    if head == ROOT or head in cs.queues or not rest:
        return path
    found = cs.by_short_name(head)
    if len(found) == 1:
        return f"{found[0]}.{rest}"
    return path


# --- creation -------------------------------------------------------------------
def create(
    conf: Configuration, cs: CapacityConf, path: str, minimum: Resource, maximum: Resource
) -> tuple[Configuration, CapacityConf, list[str]]:
    """Create leaf `path` (and any missing parents): the configuration with
    the new queues' properties, the new queue settings and the created
    paths, parents first. Raises CreationError."""
    parent = _parent_of(path)
    pq = cs.queues.get(parent)
    if pq is not None and pq.auto_create == LEGACY:
        return _create_legacy(conf, cs, path, pq, minimum, maximum)
    return _create_flexible(conf, cs, path, minimum, maximum)


def _create_legacy(
    conf: Configuration,
    cs: CapacityConf,
    path: str,
    parent: QueueConf,
    minimum: Resource,
    maximum: Resource,
) -> tuple[Configuration, CapacityConf, list[str]]:
    """ManagedParentQueue.addChildQueue with the initial configuration of
    GuaranteedOrZeroCapacityOverTimePolicy."""
    pp = f"{PREFIX}{parent.path}."
    limit = conf.get_int(pp + "auto-create-child-queue.max-queues", LEGACY_MAX_QUEUES)
    if len(parent.children) >= limit:
        raise CreationError(
            f"Cannot auto create leaf queue {path}.Max Child Queue limit exceeded which is "
            f"configured as : {limit} and number of child queues is : {len(parent.children)}"
        )
    leaf = path.rsplit(".", 1)[1]
    head = pp + LEGACY_TEMPLATE + "."
    out = Configuration()
    out.update(conf)
    for name in conf:
        if name.startswith(head):
            value = conf.get(name) or ""
            out.set(pp + leaf + "." + name[len(head) :], value, "leaf-queue-template")
    template_capacity = out.get_float(pp + LEGACY_TEMPLATE + ".capacity", 0.0)
    template_abs = parent.absolute_capacity * template_capacity / 100
    # The policy's record of activated children: created ones only.
    activated = sum(cs.queues[c].absolute_capacity for c in parent.children if cs.queues[c].dynamic)
    fail_key = pp + "auto-create-child-queue.fail-on-exceeding-parent-capacity"
    if conf.get_bool(fail_key, False) and template_abs + activated > parent.absolute_capacity:
        raise CreationError(
            f"Cannot auto create leaf queue {path}. Child queues capacities have reached "
            f"parent queue : {parent.path}'s guaranteed capacity"
        )
    qc = build_queue(out, path, parent, template_capacity, minimum, maximum)
    if parent.absolute_capacity - activated + EPSILON < template_abs:
        qc = replace(qc, capacity=0.0, absolute_capacity=0.0)
    qc = replace(qc, dynamic=True)
    return out, _with_child(cs, parent, qc), [path]


def _create_flexible(
    conf: Configuration, cs: CapacityConf, path: str, minimum: Resource, maximum: Resource
) -> tuple[Configuration, CapacityConf, list[str]]:
    """CapacitySchedulerQueueManager.createAutoQueue: the missing parents,
    then the leaf, each through ParentQueue.addDynamicChildQueue."""
    missing = _missing_parents(conf, cs, path)
    out = Configuration()
    out.update(conf)
    created = []
    for p in [*missing, path]:
        leaf = p == path
        parent = cs.queues[_parent_of(p)]
        _check_room(out, parent, p)
        templated = _apply_templates(out, parent.path, p, leaf)
        if leaf:
            _dynamic_leaf_defaults(out, p, templated)
        weight = _weight(out, p)
        qc = build_queue(out, p, parent, 0.0, minimum, maximum, dynamic_parent=not leaf)
        qc = replace(qc, dynamic=True, weight=weight)
        cs = _with_child(cs, parent, qc)
        created.append(p)
    return out, cs, created


def _missing_parents(conf: Configuration, cs: CapacityConf, path: str) -> list[str]:
    """determineMissingParents: the parents to create, highest first, within
    the maximum depth below the first configured (static) parent."""
    parent = _parent_of(path)
    if not parent:
        raise CreationError(f"Can not auto create queue {path} due to missing ParentQueue path.")
    missing: list[str] = []
    distance = 1
    candidate = parent
    first_existing = cs.queues.get(candidate)
    static = first_existing
    while (static is None or static.dynamic) and candidate:
        distance += 1
        if first_existing is None:
            missing.insert(0, candidate)
        candidate = _parent_of(candidate)
        if first_existing is None:
            first_existing = cs.queues.get(candidate)
        static = cs.queues.get(candidate)
    if first_existing is None or static is None:
        raise CreationError(f"Could not auto-create queue {path} parent queue does not exist.")
    depth = conf.get_int(
        f"{PREFIX}{static.path}.{AUTO_V2}maximum-queue-depth",
        conf.get_int(PREFIX + AUTO_V2 + "maximum-queue-depth", MAXIMUM_DEPTH),
    )
    if distance > depth:
        raise CreationError(
            f"Could not auto create queue {path}. The distance of the LeafQueue from the first "
            f"static ParentQueue is {distance}, which is above the limit."
        )
    if first_existing.is_leaf:
        raise CreationError(
            f"Could not auto create hierarchy of {path}. Queue {parent} is not a ParentQueue."
        )
    if first_existing.auto_create != FLEXIBLE:
        raise CreationError(
            f"Auto creation of queue {path} is not enabled under parent {first_existing.path}"
        )
    return missing


def _check_room(conf: Configuration, parent: QueueConf, path: str) -> None:
    """ParentQueue.addDynamicChildQueue's checks: the parent's max-queues,
    and weights among the existing children."""
    limit = conf.get_int(f"{PREFIX}{parent.path}.{AUTO_V2}max-queues", FLEXIBLE_MAX_QUEUES)
    if len(parent.children) >= limit:
        raise CreationError(
            f"Cannot auto create queue {path}. Max Child Queue limit exceeded which is "
            f"configured as: {limit} and number of child queues is: {len(parent.children)}"
        )


def _check_weights(cs: CapacityConf, parent: QueueConf, path: str) -> None:
    if any(cs.queues[c].weight < 0 for c in parent.children):
        raise CreationError(
            f"Trying to create new queue={path} but not all the queues under "
            f"parent={parent.path} are using weight-based capacity. Failed to created queue"
        )


def _weight(conf: Configuration, path: str) -> float:
    """A created queue's weight: its capacity if a template gave one as a
    weight, else 1 (AbstractParentQueue.updateClusterResourceLegacyMode)."""
    raw = (conf.get(f"{PREFIX}{path}.capacity") or "").strip()
    if raw.endswith("w"):
        try:
            return max(0.0, float(raw[:-1]))
        except ValueError:
            pass
    return 1.0


def template_properties(conf: Configuration, parent: str) -> tuple[dict[str, str], ...]:
    """(template, leaf-template, parent-template) properties of `parent`,
    the most specific path first, then with its last parts replaced by `*`
    (AutoCreatedQueueTemplate.setTemplateConfigEntries)."""
    general: dict[str, str] = {}
    leaf: dict[str, str] = {}
    parents: dict[str, str] = {}
    parts = parent.split(".")
    if len(parts) <= 1 and parent != ROOT:
        return general, leaf, parents
    depth = conf.get_int(
        f"{PREFIX}{parent}.{AUTO_V2}maximum-queue-depth",
        conf.get_int(PREFIX + AUTO_V2 + "maximum-queue-depth", MAXIMUM_DEPTH),
    )
    levels = 0 if parent == ROOT else min(len(parts) - 1, depth)
    for level in range(levels + 1):
        head = PREFIX + ".".join(parts) + "."
        for name in sorted(conf):
            if not name.startswith(head):
                continue
            key, value = name[len(head) :], conf.get(name) or ""
            for prefix, store in (
                (_TEMPLATE, general),
                (_LEAF_TEMPLATE, leaf),
                (_PARENT_TEMPLATE, parents),
            ):
                if key.startswith(prefix):
                    store.setdefault(key[len(prefix) :], value)
        parts[len(parts) - 1 - level] = "*"
    return general, leaf, parents


def _apply_templates(conf: Configuration, parent: str, child: str, leaf: bool) -> set[str]:
    """AutoCreatedQueueTemplate.setTemplateEntriesForChild: the kind-specific
    template, then the general one, never over a property set for `child`.
    Returns the properties the templates set."""
    general, leaf_only, parent_only = template_properties(conf, parent)
    specific = leaf_only if leaf else parent_only
    head = f"{PREFIX}{child}."
    already = {name[len(head) :] for name in conf if name.startswith(head)}
    templated: set[str] = set()
    for key, value in specific.items():
        if key not in already:
            conf.set(head + key, value, "auto-queue-creation-v2 template")
            templated.add(key)
    for key, value in general.items():
        if key not in already and key not in specific:
            conf.set(head + key, value, "auto-queue-creation-v2 template")
            templated.add(key)
    return templated


_DYNAMIC_LEAF_DEFAULTS = (("user-limit-factor", "-1"), ("maximum-am-resource-percent", "1"))
"""What AbstractLeafQueue.parseAndSetDynamicTemplates sets on a flexible
dynamic leaf's own path: user-limit-factor -1 (disabled) and
maximum-am-resource-percent 1.0."""


def _dynamic_leaf_defaults(conf: Configuration, path: str, templated: set[str]) -> None:
    """AbstractLeafQueue.parseAndSetDynamicTemplates writes
    `user-limit-factor` -1 and `maximum-am-resource-percent` 1 on the leaf's
    path before the parent's templates are applied
    (AbstractCSQueue.parseAndSetDynamicTemplates). The templates decide what
    is already set from the configuration's cached properties
    (CapacitySchedulerConfiguration.getConfigurationProperties, built before
    the queue existed), so a template value still replaces these two, while a
    value configured for the leaf's path itself is overwritten and no
    template replaces it."""
    head = f"{PREFIX}{path}."
    for key, value in _DYNAMIC_LEAF_DEFAULTS:
        if key not in templated:
            conf.set(head + key, value, "dynamic leaf default")


def _with_child(cs: CapacityConf, parent: QueueConf, child: QueueConf) -> CapacityConf:
    queues = dict(cs.queues)
    new_parent = replace(parent, children=(*parent.children, child.path))
    queues[parent.path] = new_parent
    queues[child.path] = child
    if child.weight >= 0:
        _check_weights(cs, parent, child.path)
        _reweigh(queues, parent.path)
    return replace(cs, queues=queues)


# --- sizes ------------------------------------------------------------------------
def _reweigh(queues: dict[str, QueueConf], path: str) -> None:
    """Recompute the shares of `path`'s weighted children from their
    weights, and the absolute capacities below them."""
    parent = queues[path]
    kids = [queues[c] for c in parent.children]
    if not kids or any(k.weight < 0 for k in kids):
        return
    total = sum(k.weight for k in kids)
    for k in kids:
        capacity = 100.0 * k.weight / total if total > 1e-6 else 0.0
        _resize(queues, k.path, capacity)


def _resize(queues: dict[str, QueueConf], path: str, capacity: float) -> None:
    q = queues[path]
    assert q.parent is not None
    parent = queues[q.parent]
    queues[path] = replace(
        q,
        capacity=capacity,
        absolute_capacity=absolute_share(parent.absolute_capacity, capacity),
        absolute_maximum_capacity=absolute_share(
            parent.absolute_maximum_capacity, q.maximum_capacity
        ),
    )
    if q.children:
        weighted = all(queues[c].weight >= 0 for c in q.children)
        for c in q.children:
            if weighted:
                _reweigh(queues, path)
                break
            _resize(queues, c, queues[c].capacity)


# --- removal ----------------------------------------------------------------------
def removal_enabled(conf: Configuration, path: str) -> bool:
    """isAutoExpiredDeletionEnabled for the queue itself (a template may set it)."""
    return conf.get_bool(f"{PREFIX}{path}.{AUTO_V2}queue-auto-removal.enable", True)


def remove(cs: CapacityConf, path: str) -> CapacityConf:
    """The settings without dynamic queue `path` (ParentQueue.removeChildQueue),
    its weighted siblings' shares renormalised."""
    q = cs.queues[path]
    assert q.parent is not None and q.dynamic
    queues = dict(cs.queues)
    del queues[path]
    parent = queues[q.parent]
    queues[q.parent] = replace(parent, children=tuple(c for c in parent.children if c != path))
    _reweigh(queues, q.parent)
    return replace(cs, queues=queues)

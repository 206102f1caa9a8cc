"""capacity-scheduler.xml, read as Hadoop's CapacitySchedulerConfiguration
reads it, into an immutable tree of queue settings.

The properties come from the RM's Configuration (yarn-site and
capacity-scheduler merged). Everything is validated here, once: a value
that does not parse, a capacity out of range, children whose capacities do
not sum to 100, a queue property for a queue that no `queues` list defines,
a RUNNING queue under a STOPPED parent, a queue mapping to a queue that does
not exist. Each raises `InputError` naming the property, so the user knows
which line to fix; the same checks make an admin refresh refuse a bad
configuration.

Supported per queue (`yarn.scheduler.capacity.<queue-path>.`): `queues`,
`capacity` (percent, a weight such as `2w` when every sibling uses
weights, or resources such as `[memory=10240,vcores=10]` when every sibling
and the parent, unless root, uses resources), `maximum-capacity` (percent,
or resources for a queue whose capacity is in resources), `minimum-user-limit-percent`,
`user-limit-factor` (-1 disables it), `maximum-allocation-mb`,
`maximum-allocation-vcores`, `maximum-applications`,
`maximum-am-resource-percent`, `state`, `acl_submit_applications`,
`user-settings.<user>.weight` (inherited by the queues below),
`acl_administer_queue`, `disable_preemption`,
`intra-queue-preemption.disable_preemption`, `ordering-policy` (leaf:
fifo or fair, with `ordering-policy.fair.enable-size-based-weight`; parent:
utilization or priority-utilization), `priority` and `reservable` (a
reservable leaf becomes a plan queue with its default reservation queue,
as CapacitySchedulerQueueManager builds it), and node labels:
`accessible-node-labels`, `accessible-node-labels.<label>.capacity` and
`.maximum-capacity` (percent, or resources for a queue in resources),
`default-node-label-expression`. A queue with
`auto-create-child-queue.enabled` or `auto-queue-creation-v2.enabled` is a
parent even without children (`auto_queues` creates them). What is not
emulated (other per-label settings, ...) is decided by `emu.config.support`: such a
property is refused by name, or skipped when `emu.allow-unsupported` is set.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from emu.config import support
from emu.config.configuration import Configuration
from emu.errors import InputError
from emu.hadoop.classpath import VERSION_PROPERTY
from emu.resources import ZERO, Resource, calculator
from emu.rm.scheduler import javahash
from emu.rm.scheduler.capacity import multi_node
from emu.rm.scheduler.capacity.multi_node import MultiNodeConf
from emu.rm.scheduler.capacity.resource_math import f32

PREFIX = "yarn.scheduler.capacity."
ROOT = "root"
DEFAULT_QUEUE = "default"
PRECISION = 0.05  # percent; Hadoop's ParentQueue allows 0.0005 of the parent

# ReservationConstants.DEFAULT_QUEUE_SUFFIX: the leaf a reservable (plan)
# queue gets for apps submitted without a reservation.
RESERVATION_DEFAULT_SUFFIX = "-default"

# The two kinds of queue auto-creation (QueueConf.auto_create).
LEGACY, FLEXIBLE = "legacy", "flexible"
LEGACY_TEMPLATE = "leaf-queue-template"
AUTO_V2 = "auto-queue-creation-v2."
DELETION_POLICY = "AutoCreatedQueueDeletionPolicy"

GROUP_MAPPING = "hadoop.user.group.static.mapping.overrides"
ACL_ENABLE = "yarn.acl.enable"
MONITOR_ENABLE = "yarn.resourcemanager.scheduler.monitor.enable"
MONITOR_POLICIES = "yarn.resourcemanager.scheduler.monitor.policies"
PREEMPTION_PREFIX = "yarn.resourcemanager.monitor.capacity.preemption."
POLICY_CLASS = "ProportionalCapacityPreemptionPolicy"

# Per-queue suffixes this reader understands; a property with one of these
# suffixes for a queue no `queues` list defines is an error.
QUEUE_SUFFIXES = support.CAPACITY_QUEUE_KEYS
# CapacitySchedulerConfiguration.DEFAULT_MAX_PARALLEL_APPLICATIONS
UNLIMITED_PARALLEL_APPS = 2147483647
RUNNING, STOPPED = "RUNNING", "STOPPED"
INTRA_PREFIX = PREEMPTION_PREFIX + "intra-queue-preemption."
USERLIMIT_FIRST, PRIORITY_FIRST = "userlimit_first", "priority_first"
ANY_LABEL = "*"
LABELS_KEY = "accessible-node-labels"
_LABEL_KEY = re.compile(
    re.escape(PREFIX) + r"(root(?:\.[^.]+)*?)\.accessible-node-labels\.([^.]+)\.(.+)$"
)
_LABEL_PROPERTY = re.compile(
    re.escape(PREFIX)
    + r"(root(?:\.[^.]+)*?)\.accessible-node-labels\.([^.]+)\.(capacity|maximum-capacity)$"
)


def _fail(conf: Configuration, name: str, message: str) -> InputError:
    return InputError(conf.sources.get(name, "configuration"), name, message)


def _raw(conf: Configuration, name: str) -> str | None:
    """A property's value untrimmed: Hadoop reads ACLs with `get`, not
    `getTrimmed`, so a leading space (no users, only groups) is meaningful.
    Configuration's public getters strip values, hence the direct read."""
    return conf._props.get(name)


@dataclass(frozen=True)
class Acl:
    """A Hadoop AccessControlList: `*` is everyone, otherwise
    `user1,user2 group1,group2`; a lone space is no one."""

    everyone: bool = False
    users: frozenset[str] = frozenset()
    groups: frozenset[str] = frozenset()
    text: str = " "

    @classmethod
    def parse(cls, raw: str) -> Acl:
        parts = raw.split(" ", 1)
        if any(p.strip() == "*" for p in parts):
            return cls(everyone=True, text="*")
        users = frozenset(u.strip() for u in parts[0].split(",") if u.strip())
        groups: frozenset[str] = frozenset()
        if len(parts) == 2:
            groups = frozenset(g.strip() for g in parts[1].split(",") if g.strip())
        return cls(False, users, groups, raw)

    def allows(self, user: str, groups: tuple[str, ...]) -> bool:
        return self.everyone or user in self.users or any(g in self.groups for g in groups)


EVERYONE = Acl(everyone=True, text="*")
NO_ONE = Acl()


@dataclass(frozen=True)
class QueueConf:
    """One queue's settings, with its capacities made absolute."""

    path: str
    parent: str | None
    children: tuple[str, ...]
    capacity: float
    maximum_capacity: float
    absolute_capacity: float
    absolute_maximum_capacity: float
    state: str
    user_limit_percent: float
    user_limit_factor: float
    maximum_allocation: Resource
    maximum_applications: int
    maximum_am_percent: float
    submit_acl: Acl
    admin_acl: Acl
    preemption_disabled: bool
    ordering_policy: str
    fair_size_based_weight: bool
    priority: int
    respects_priority: bool
    plan: bool = False
    """A reservable leaf, made by Hadoop a PlanQueue: a parent whose only
    child is its default reservation queue (`children[0]`)."""
    max_parallel_apps: int = UNLIMITED_PARALLEL_APPS
    """How many of the queue's apps may run at once
    (getMaxParallelAppsForQueue); the others wait, non-runnable."""
    min_resource: Resource | None = None
    """`capacity` given in resources ([memory=...,vcores=...]): the queue is
    in absolute mode, its guarantee follows from this and the cluster's size
    (`capacity`/`absolute_capacity` then are 0 until the scheduler derives
    them, as AbstractCSQueue.deriveCapacityFromAbsoluteConfigurations does)."""
    max_resource: Resource | None = None
    """An absolute queue's configured maximum: its `maximum-capacity` in
    resources, or else its parent's configured maximum
    (updateConfigurableResourceLimits); None: none configured."""
    children_min: Resource | None = None
    """A parent of absolute children: the sum of their configured minimums,
    against which a short guarantee is shared out (recalculateEffectiveMinRatio)."""
    user_weights: dict[str, float] = field(default_factory=dict)
    """`user-settings.<user>.weight` of this queue and its ancestors (the
    nearest wins): a user's share of the user limit."""
    auto_create: str = ""
    """LEGACY for a managed parent (`auto-create-child-queue.enabled`),
    FLEXIBLE for a parent with `auto-queue-creation-v2.enabled`, else "".
    Such a queue is a parent even with no children, as
    CapacitySchedulerQueueManager.parseQueue makes it one."""
    dynamic: bool = False
    """Created at run time for an application (auto-created)."""
    weight: float = -1.0
    """The configured weight (`2w`), -1 when the capacity is a percentage:
    siblings' capacities are renormalised when a queue is created or removed
    among weighted siblings."""
    intra_disabled_in_hierarchy: bool = True
    """Intra-queue preemption is off here: off system-wide, or this queue's
    (or, unset here, its parent's) `intra-queue-preemption.disable_preemption`
    (CSQueuePreemptionSettings.isIntraQueueHierarchyPreemptionDisabled)."""

    @property
    def intra_preemption_disabled(self) -> bool:
        """getIntraQueuePreemptionDisabled: a queue that cross-queue
        preemption may not touch is not preempted within either."""
        return self.intra_disabled_in_hierarchy or self.preemption_disabled

    accessible_labels: frozenset[str] = frozenset({ANY_LABEL})
    """The node labels (partitions) the queue may use besides the default
    one (`accessible-node-labels`, inherited from the parent; root: `*`,
    every label)."""
    label_capacity: dict[str, tuple[float, float, float, float]] = field(default_factory=dict)
    """Per configured label: (capacity %, maximum-capacity %, absolute
    capacity, absolute maximum capacity), as QueueCapacities holds them per
    partition; a label not listed has capacity 0 and maximum 100 %."""
    default_label: str = ""
    """`default-node-label-expression`: the partition of the asks of an app
    that names none (inherited as QueueNodeLabelsSettings does)."""
    label_resources: dict[str, tuple[Resource, Resource | None]] = field(default_factory=dict)
    """A queue in resources, per configured label: its configured minimum
    and maximum there (the maximum inherited from the parent's when unset,
    None when neither sets one), as QueueResourceQuotas holds them per
    partition. Its capacities there (`label_capacity`) are placeholders
    until the scheduler derives them from the partition's resource."""

    def can_access(self, label: str) -> bool:
        """QueueNodeLabelsSettings.isAccessibleToPartition."""
        return not label or ANY_LABEL in self.accessible_labels or label in self.accessible_labels

    def absolute_in(self, label: str) -> tuple[float, float]:
        """(absolute capacity, absolute maximum capacity) in a partition."""
        if not label:
            return self.absolute_capacity, self.absolute_maximum_capacity
        c = self.label_capacity.get(label)
        if c is None:
            return 0.0, 0.0  # QueueCapacities has nothing for the label
        return c[2], c[3]

    @property
    def name(self) -> str:
        return self.path.rsplit(".", 1)[-1]

    @property
    def is_leaf(self) -> bool:
        return not self.children and not self.auto_create


@dataclass(frozen=True)
class QueueMapping:
    """One `u:`/`g:` rule of `queue-mappings`."""

    kind: str
    source: str
    queue: str


@dataclass(frozen=True)
class PreemptionConf:
    """ProportionalCapacityPreemptionPolicy settings (YARN's defaults)."""

    enabled: bool = False
    observe_only: bool = False
    monitoring_interval_ms: int = 3000
    max_wait_before_kill_ms: int = 15000
    total_preemption_per_round: float = 0.1
    max_ignored_over_capacity: float = 0.1
    natural_termination_factor: float = 0.2
    intra_queue_enabled: bool = False
    """`intra-queue-preemption.enabled`: IntraQueueCandidatesSelector runs
    after the cross-queue selector, within each leaf."""
    intra_minimum_threshold: float = 0.5
    """A leaf is looked at only when its used capacity reaches this."""
    intra_max_allowable_limit: float = 0.2
    """What one round may take within a leaf, as a part of its guarantee."""
    intra_order_policy: str = USERLIMIT_FIRST
    intra_conservative_drf: bool = True


@dataclass(frozen=True)
class CapacityConf:
    queues: dict[str, QueueConf]
    calculator: str = "default"
    maximum_applications: int = 10000
    global_queue_max_applications: int = -1
    node_locality_delay: int = 40
    rack_locality_additional_delay: int = -1
    rack_locality_full_reset: bool = True
    offswitch_per_heartbeat: int = 1
    multiple_assignments: bool = True
    max_assignments_per_heartbeat: int = 100
    reservations_continue_looking: bool = True
    async_scheduling: bool = False
    """`schedule-asynchronously.enable`: passes over every node each
    `async_interval_ms` instead of allocation on node heartbeats
    (emu.rm.scheduler.async_scheduling); the default is the Hadoop
    release's (`emu.hadoop.version`): false in 3.4.2, true in 3.5.0."""
    async_interval_ms: int = 5
    async_threads: int = 1
    multi_node: MultiNodeConf = field(default_factory=MultiNodeConf)
    """Global scheduling with multi-node placement (emu.rm.scheduler.capacity.multi_node)."""
    request_checked_once: bool = False
    """RegularContainerAllocator checks an ask against the queue's headroom
    (and counts a missed non-partitioned opportunity) once per priority,
    before looking at nodes, and the node's partition after (3.5.0); 3.4.2
    checks all of it for each node, the partition first."""
    mappings: tuple[QueueMapping, ...] = ()
    mappings_override: bool = False
    groups: dict[str, tuple[str, ...]] = field(default_factory=dict)
    acl_enabled: bool = False
    max_application_priority: int = 0
    preemption: PreemptionConf = PreemptionConf()
    user_max_parallel_apps: dict[str, int] = field(default_factory=dict)
    default_user_max_parallel_apps: int = UNLIMITED_PARALLEL_APPS
    absolute: bool = False
    """Some queue's capacity is in resources: effective capacities follow the
    cluster's size (`queues.update_absolute`)."""
    auto_deletion: bool = False
    """AutoCreatedQueueDeletionPolicy runs as a scheduling monitor policy."""
    auto_expiry_ms: int = 300000
    """`auto-queue-creation-v2.queue-expiration-time` (seconds in the
    file): how long a dynamic queue stays idle before it is removed, and
    the deletion policy's interval."""
    labels: frozenset[str] = frozenset()
    """Every node label the queues configure (ConfiguredNodeLabels): those
    named in `accessible-node-labels` lists and label capacities."""
    label_absolute: frozenset[str] = frozenset()
    """The labels in which some queue's capacity is in resources: their
    queues' effective capacities follow the partition's size
    (`queues.update_absolute_labels`)."""

    def max_parallel_apps_for_user(self, user: str) -> int:
        """CapacitySchedulerConfiguration.getMaxParallelAppsForUser."""
        return self.user_max_parallel_apps.get(user, self.default_user_max_parallel_apps)

    def leaves(self) -> list[str]:
        return [p for p, q in self.queues.items() if q.is_leaf]

    def by_short_name(self, name: str) -> list[str]:
        return [p for p in self.queues if p.rsplit(".", 1)[-1] == name]

    def groups_of(self, user: str) -> tuple[str, ...]:
        return self.groups.get(user, ())


ASYNC = PREFIX + "schedule-asynchronously"
ASYNC_BY_DEFAULT = frozenset({"3.5.0"})
"""The Hadoop releases whose CapacitySchedulerConfiguration has
DEFAULT_SCHEDULE_ASYNCHRONOUSLY_ENABLE true (YARN-7327)."""


REQUEST_CHECKED_ONCE = frozenset({"3.5.0"})
"""The releases whose RegularContainerAllocator.allocate runs preCheckRequest
once per priority and preCheckForNode per node (`CapacityConf.request_checked_once`)."""


def hadoop_version(conf: Configuration) -> str:
    """The Hadoop release whose defaults apply (`emu.hadoop.version`)."""
    return (conf.get(VERSION_PROPERTY) or "").strip()


def async_default(conf: Configuration) -> bool:
    """Whether the chosen Hadoop release (`emu.hadoop.version`) schedules
    asynchronously unless told otherwise."""
    return hadoop_version(conf) in ASYNC_BY_DEFAULT


def _at_least_one(conf: Configuration, key: str, default: int, unit: str = "") -> int:
    """The integer `key` (or `default`); below 1 it is refused, naming `key`."""
    value = conf.get_int(key, default)
    if value < 1:
        raise _fail(conf, key, f"must be at least 1{unit}, got {value}")
    return value


def parse(conf: Configuration, minimum: Resource, maximum: Resource) -> CapacityConf:
    """Read and validate the capacity scheduler's configuration."""
    calc_key = PREFIX + "resource-calculator"
    calc_name = conf.get_str(calc_key, "default")
    try:
        calc = calculator(calc_name)
    except ValueError as e:
        raise _fail(conf, calc_key, str(e)) from None

    paths = queue_paths(conf)
    _check_stray_properties(conf, paths)
    queues: dict[str, QueueConf] = {}
    by_queue = _configured_labels(conf, paths)
    labels = tuple(sorted(set().union(*by_queue.values()))) if by_queue else ()
    _build(
        conf,
        ROOT,
        None,
        paths,
        queues,
        {},
        {},
        calc.name,
        minimum,
        maximum,
        labels=labels,
        by_queue=by_queue,
    )
    _check_label_sums(conf, queues, calc.name)

    offswitch = _at_least_one(conf, PREFIX + "per-node-heartbeat.maximum-offswitch-assignments", 1)
    async_interval = _at_least_one(
        conf,
        ASYNC + ".scheduling-interval-ms",
        5,
        " ms (a pass takes no time on emu's clock)",
    )
    cs = CapacityConf(
        queues=queues,
        calculator=calc.name,
        maximum_applications=conf.get_int(PREFIX + "maximum-applications", 10000),
        global_queue_max_applications=conf.get_int(PREFIX + "global-queue-max-application", -1),
        node_locality_delay=conf.get_int(PREFIX + "node-locality-delay", 40),
        rack_locality_additional_delay=conf.get_int(PREFIX + "rack-locality-additional-delay", -1),
        rack_locality_full_reset=conf.get_bool(PREFIX + "rack-locality-full-reset", True),
        offswitch_per_heartbeat=offswitch,
        multiple_assignments=conf.get_bool(
            PREFIX + "per-node-heartbeat.multiple-assignments-enabled", True
        ),
        max_assignments_per_heartbeat=conf.get_int(
            PREFIX + "per-node-heartbeat.maximum-container-assignments", 100
        ),
        reservations_continue_looking=conf.get_bool(
            PREFIX + "reservations-continue-look-all-nodes", True
        ),
        async_scheduling=conf.get_bool(ASYNC + ".enable", async_default(conf)),
        async_interval_ms=async_interval,
        async_threads=max(1, conf.get_int(ASYNC + ".maximum-threads", 1)),
        multi_node=multi_node.parse(conf, list(queues), support.hadoop_decides(conf)),
        request_checked_once=hadoop_version(conf) in REQUEST_CHECKED_ONCE,
        mappings=_mappings(conf),
        mappings_override=conf.get_bool(PREFIX + "queue-mappings-override.enable", False),
        groups=_groups(conf),
        acl_enabled=conf.get_bool(ACL_ENABLE, False),
        max_application_priority=conf.get_int("yarn.cluster.max-application-priority", 0),
        preemption=_preemption(conf),
        user_max_parallel_apps=_user_max_parallel_apps(conf),
        default_user_max_parallel_apps=conf.get_int(
            PREFIX + "user.max-parallel-apps", UNLIMITED_PARALLEL_APPS
        ),
        absolute=any(q.min_resource is not None for q in queues.values()),
        auto_deletion=_monitor_policy(conf, DELETION_POLICY),
        auto_expiry_ms=_expiry_ms(conf),
        labels=frozenset(labels),
        label_absolute=frozenset(lb for q in queues.values() for lb in q.label_resources),
    )
    _check_mappings(conf, cs)
    return cs


# --- the queue tree -----------------------------------------------------------
def _children(conf: Configuration, path: str) -> list[str]:
    key = f"{PREFIX}{path}.queues"
    raw = conf.get(key)
    if raw is None or raw == "":
        if path == ROOT:
            # No queues at all: Hadoop's shipped capacity-scheduler.xml has
            # one leaf, root.default, at 100 %.
            return [DEFAULT_QUEUE]
        return []
    names = [n.strip() for n in raw.split(",") if n.strip()]
    seen: set[str] = set()
    for n in names:
        if n in seen:
            raise _fail(conf, key, f"queue {n!r} is listed twice")
        if any(c.isspace() for c in n) or "." in n:
            raise _fail(conf, key, f"invalid queue name {n!r}")
        seen.add(n)
    return names


def auto_kind(conf: Configuration, path: str) -> str:
    """LEGACY, FLEXIBLE or "": how `path` creates children at run time
    (isAutoCreateChildQueueEnabled wins, as parseQueue checks it first)."""
    if conf.get_bool(f"{PREFIX}{path}.auto-create-child-queue.enabled", False):
        return LEGACY
    if conf.get_bool(f"{PREFIX}{path}.{AUTO_V2}enabled", False):
        return FLEXIBLE
    return ""


def is_reservable(conf: Configuration, path: str) -> bool:
    """CapacitySchedulerConfiguration.isReservable."""
    return conf.get_bool(f"{PREFIX}{path}.reservable", False)


def queue_paths(conf: Configuration) -> dict[str, list[str]]:
    """Every defined queue path -> its children's short names. A reservable
    leaf gets one child, its default reservation queue, as
    CapacitySchedulerQueueManager.parseQueue makes it a PlanQueue and adds
    PlanQueue.initializeDefaultInternalQueue's ReservationQueue (with or
    without a reservation system)."""
    out: dict[str, list[str]] = {}
    todo = [ROOT]
    while todo:
        path = todo.pop()
        kids = _children(conf, path)
        if not kids and path != ROOT and is_reservable(conf, path) and not auto_kind(conf, path):
            kids = [path.rsplit(".", 1)[-1] + RESERVATION_DEFAULT_SUFFIX]
        out[path] = kids
        todo.extend(f"{path}.{k}" for k in reversed(kids))
    return out


def _check_stray_properties(conf: Configuration, paths: dict[str, list[str]]) -> None:
    """A queue property for a queue no `queues` list defines is almost always
    a typo or a missing parent; Hadoop would silently ignore it."""
    head = PREFIX + ROOT + "."
    allow = support.allowed(conf) or support.hadoop_decides(conf)
    for name in conf:
        if not name.startswith(head):
            continue
        rule = support.refused_rule(name, conf.get(name), support.CAPACITY)
        if rule is not None:
            if allow and rule.optional:
                continue
            raise _fail(conf, name, support.refusal(rule, support.CAPACITY))
        known = support.rule_for(name, conf.get(name))
        if known is not None and known.status != support.EMULATED:
            continue  # accepted without effect (docs/configuration.md)
        if f".{LEGACY_TEMPLATE}." in name or f".{AUTO_V2}" in name:
            continue  # a template, or a setting of auto-creation
        rest = name[len(PREFIX) :]
        if ".user-settings." in rest:
            queue = rest.split(".user-settings.", 1)[0]
            if queue not in paths:
                raise _fail(conf, name, f"queue {queue!r} is not defined")
            continue
        label_property = _LABEL_PROPERTY.match(name)
        if label_property is not None:
            queue = label_property.group(1)
        else:
            for suffix in QUEUE_SUFFIXES:
                if rest.endswith("." + suffix):
                    queue = rest[: -len(suffix) - 1]
                    break
            else:
                continue
        if queue in paths:
            continue
        parent = queue.rsplit(".", 1)[0]
        if any(auto_kind(conf, q) for q in (parent, parent.rsplit(".", 1)[0]) if q in paths):
            continue  # a queue that will be auto-created, configured ahead
        if parent not in paths:
            raise _fail(conf, name, f"unknown parent queue {parent!r} for queue {queue!r}")
        raise _fail(
            conf,
            name,
            f"queue {queue!r} is not defined: {PREFIX}{parent}.queues does not list "
            f"{queue.rsplit('.', 1)[-1]!r}",
        )


def _percent(conf: Configuration, key: str, default: float) -> float | str | Resource:
    """A capacity: a float percent, the string form of a weight (`2w`), or
    resources (`[memory=10240,vcores=10]`)."""
    v = conf.get(key)
    if v is None or v == "":
        return default
    if v.startswith("["):
        return parse_resources(conf, key, v)
    if v.endswith("w"):
        try:
            w = float(v[:-1])
        except ValueError:
            raise _fail(conf, key, f"expected a weight such as 2w, got {v!r}") from None
        if w < 0:
            raise _fail(conf, key, f"a weight must not be negative, got {v!r}")
        return v
    return conf.get_float(key, default)


_MEMORY_NAMES = ("memory", "memory-mb")


def parse_resources(conf: Configuration, key: str, value: str) -> Resource:
    """`[memory=10240,vcores=10]`, as CapacitySchedulerConfiguration's
    getMinimumResourceRequirement reads it: each listed type in its own
    unit (MB for memory), any type not listed is 0."""
    body = value.strip()
    if not (body.startswith("[") and body.endswith("]")):
        raise _fail(
            conf, key, f"expected resources such as [memory=10240,vcores=10], got {value!r}"
        )
    memory = vcores = 0
    extra: dict[str, int] = {}
    for part in (p.strip() for p in body[1:-1].split(",")):
        if not part:
            continue
        name, sep, amount = (x.strip() for x in part.partition("="))
        if not sep or not amount.isdigit():
            raise _fail(
                conf, key, f"expected name=amount (a whole number) in {value!r}, got {part!r}"
            )
        if name in _MEMORY_NAMES:
            memory = int(amount)
        elif name == "vcores":
            vcores = int(amount)
        elif name in conf.get_list("yarn.resource-types"):
            extra[name] = int(amount)
        else:
            raise _fail(
                conf,
                key,
                f"unknown resource type {name!r} in {value!r} (memory, vcores or one "
                "yarn.resource-types declares)",
            )
    return Resource(memory, vcores, extra)


def _greater(calc_name: str, a: Resource, b: Resource) -> bool:
    """Resources.greaterThan as Hadoop checks configured resources, before
    any node registered: memory alone under the default calculator; under
    the dominant one, any type above (an empty cluster gives no shares)."""
    if calc_name == "default":
        return a.memory > b.memory
    bm = b.to_wire()
    return any(v > bm.get(k, 0) for k, v in a.to_wire().items())


def _text(r: Resource) -> str:
    """A Resource as Hadoop prints it (`<memory:8192, vCores:8>`)."""
    out = f"<memory:{r.memory}, vCores:{r.vcores}"
    for k, v in r.extra:
        out += f", {k}: {v}"
    return out + ">"


def _build(
    conf: Configuration,
    path: str,
    parent: QueueConf | None,
    paths: dict[str, list[str]],
    out: dict[str, QueueConf],
    capacities: dict[str, float],
    mins: dict[str, Resource],
    calc_name: str,
    minimum: Resource,
    cluster_maximum: Resource,
    dynamic_parent: bool = False,
    labels: tuple[str, ...] = (),
    by_queue: dict[str, frozenset[str]] | None = None,
) -> None:
    """Build `path` and its subtree; `capacities` holds each queue's capacity
    (percent of its parent) and `mins` each absolute queue's configured
    minimum, filled by the parent before its children.
    `dynamic_parent`: an auto-created parent, which may create children
    itself (AbstractParentQueue.isEligibleForAutoQueueCreation).

    Each setting is read and checked in the order below, so a file with
    several mistakes is refused for the same one every time.
    """
    p = f"{PREFIX}{path}."
    kids = paths[path]
    auto = auto_kind(conf, path) or (FLEXIBLE if dynamic_parent else "")
    plan = path != ROOT and is_reservable(conf, path)
    if plan and (conf.get(p + "queues") or auto):
        # CapacitySchedulerQueueManager.parseQueue
        raise _fail(conf, p + "reservable", f"only leaf queues can be reservable: {path}")
    capacity = 100.0 if parent is None else capacities[path]
    min_res = mins.get(path)
    max_res: Resource | None = None
    if plan and min_res is not None:
        raise _fail(
            conf,
            p + "reservable",
            f"a reservable queue with a capacity in resources is not emulated: {path}",
        )
    in_plan = parent is not None and parent.plan
    if in_plan:
        # The default reservation queue: ReservationQueue.initializeEntitlements
        # gives it the whole plan (capacity and maximum 1.0, whatever its own
        # properties say); its user limits are the plan's
        # (PlanQueue.getUserLimitForReservation / getUserLimitFactor), and its
        # maximum-am-resource-percent stays 0, since ReservationQueue's
        # setupConfigurableCapacities never loads it: its AM limit is 0 and
        # only the one-AM-always rule of activateApplications starts apps.
        assert parent is not None
        max_cap = 100.0
        abs_cap, abs_max = parent.absolute_capacity, parent.absolute_maximum_capacity
        ulp, ulf = parent.user_limit_percent, parent.user_limit_factor
        am_pct = 0.0
    elif min_res is not None:
        assert parent is not None
        max_cap, abs_cap, abs_max, max_res = _absolute_limits(
            conf, path, parent, min_res, calc_name
        )
    else:
        max_cap, abs_cap, abs_max = _capacity_limits(conf, path, parent, capacity)
    state = _state(conf, path, parent)
    if not in_plan:
        ulp, ulf = _user_limits(conf, p)
    max_alloc = _maximum_allocation(conf, p, parent, minimum, cluster_maximum)
    if not in_plan:
        am_key = p + "maximum-am-resource-percent"
        am_pct = conf.get_float(am_key, conf.get_float(PREFIX + "maximum-am-resource-percent", 0.1))
    submit_acl, admin_acl = (
        _acl(conf, p + kind, parent) for kind in ("acl_submit_applications", "acl_administer_queue")
    )
    preempt_key = p + "disable_preemption"
    disabled = conf.get_bool(preempt_key, parent.preemption_disabled if parent else False)
    intra_off = not conf.get_bool(INTRA_PREFIX + "enabled", False) or conf.get_bool(
        p + "intra-queue-preemption.disable_preemption",
        parent.intra_disabled_in_hierarchy if parent else False,
    )
    policy_key = p + "ordering-policy"
    is_parent = bool(kids) or bool(auto)
    policy_raw = conf.get_str(policy_key, "utilization" if is_parent else "fifo")
    policy = _ordering_policy(conf, policy_key, policy_raw, leaf=not is_parent)
    weight = -1.0
    if parent is not None and not in_plan:
        raw_capacity = _percent(conf, p + "capacity", 0.0)
        if isinstance(raw_capacity, str):
            weight = float(raw_capacity[:-1])

    max_apps = conf.get_int(p + "maximum-applications", -1)
    fair_sized = conf.get_bool(policy_key + ".fair.enable-size-based-weight", False)
    priority = conf.get_int(p + "priority", 0)
    max_parallel = conf.get_int(
        p + "max-parallel-apps",
        conf.get_int(PREFIX + "max-parallel-apps", UNLIMITED_PARALLEL_APPS),
    )
    weights = _user_weights(conf, path, parent, ulp, leaf=not is_parent)
    child_caps: dict[str, float] = {}
    child_mins: dict[str, Resource] = {}
    children_min: Resource | None = None
    own = labels if parent is None else tuple(sorted((by_queue or {}).get(path, ())))
    if plan:
        child_caps[f"{path}.{kids[0]}"] = 100.0
    elif kids:
        child_caps, child_mins = _child_capacities(
            conf, path, capacity, min_res, kids, calc_name, own, by_queue or {}
        )
        if child_mins:
            children_min = ZERO
            for r in child_mins.values():
                children_min = children_min + r
    if parent is not None:
        _check_one_mode_across_labels(conf, path, min_res is not None, own)
    accessible, label_capacity, default_label, label_res = _label_settings(
        conf, path, parent, own, min_res is not None, calc_name
    )
    q = QueueConf(
        path=path,
        parent=parent.path if parent else None,
        children=tuple(f"{path}.{k}" for k in kids),
        capacity=capacity,
        maximum_capacity=max_cap,
        absolute_capacity=abs_cap,
        absolute_maximum_capacity=abs_max,
        state=state,
        user_limit_percent=ulp,
        user_limit_factor=ulf,
        maximum_allocation=max_alloc,
        maximum_applications=max_apps,
        maximum_am_percent=am_pct,
        submit_acl=submit_acl,
        admin_acl=admin_acl,
        preemption_disabled=disabled,
        ordering_policy=policy,
        fair_size_based_weight=fair_sized,
        priority=priority,
        respects_priority=parent is not None and parent.ordering_policy == "priority-utilization",
        plan=plan,
        max_parallel_apps=max_parallel,
        min_resource=min_res,
        max_resource=max_res,
        user_weights=weights,
        children_min=children_min,
        auto_create=auto,
        weight=weight,
        intra_disabled_in_hierarchy=intra_off,
        accessible_labels=accessible,
        label_capacity=label_capacity,
        default_label=default_label,
        label_resources=label_res,
    )
    capacities.update(child_caps)
    mins.update(child_mins)
    out[path] = q
    for k in kids:
        _build(
            conf,
            f"{path}.{k}",
            q,
            paths,
            out,
            capacities,
            mins,
            calc_name,
            minimum,
            cluster_maximum,
            labels=labels,
            by_queue=by_queue,
        )


def build_queue(
    conf: Configuration,
    path: str,
    parent: QueueConf,
    capacity: float,
    minimum: Resource,
    maximum: Resource,
    dynamic_parent: bool = False,
) -> QueueConf:
    """The settings of one queue created at run time under `parent`, read
    from `conf` as a configured queue's are, with `capacity` percent of the
    parent."""
    out: dict[str, QueueConf] = {}
    calc_name = calculator(conf.get_str(PREFIX + "resource-calculator", "default")).name
    _build(
        conf,
        path,
        parent,
        {path: []},
        out,
        {path: capacity},
        {},
        calc_name,
        minimum,
        maximum,
        dynamic_parent=dynamic_parent,
    )
    return out[path]


def _configured_labels(
    conf: Configuration, paths: dict[str, list[str]]
) -> dict[str, frozenset[str]]:
    """Each queue's configured labels, as getConfiguredNodeLabelsByQueue
    finds them: the labels of its `accessible-node-labels.<label>.*`
    properties (a label only in an `accessible-node-labels` list gets no
    capacities). Root has capacities for all of them."""
    found: dict[str, set[str]] = {}
    for name in conf:
        m = _LABEL_KEY.match(name)
        if m is not None and m.group(1) in paths:
            found.setdefault(m.group(1), set()).add(m.group(2))
    return {path: frozenset(labels) for path, labels in found.items()}


def _check_label_sums(conf: Configuration, queues: dict[str, QueueConf], calc_name: str) -> None:
    """AbstractParentQueue.setChildQueues, per label: children in percent
    have capacities summing to 100, or to 0 under a parent with none there,
    and a parent with none there has children with none; children in
    resources need no more than their parent's minimum there."""
    for q in queues.values():
        if not q.children or q.plan:
            continue
        kids = [queues[c] for c in q.children]
        if any(k.min_resource is not None or k.label_resources for k in kids):
            for label, (parent_min, _) in q.label_resources.items():
                wanted = ZERO
                for k in kids:
                    r = k.label_resources.get(label)
                    if r is not None:
                        wanted = wanted + r[0]
                if _greater(calc_name, wanted, parent_min):
                    raise _fail(
                        conf,
                        f"{PREFIX}{q.path}.queues",
                        f"Parent Queues capacity: {_text(parent_min)} is less than to "
                        f"its children:{_text(wanted)} for queue:{q.name}",
                    )
            continue
        for label, (own, *_) in q.label_capacity.items():
            total = sum(_capacity_of(queues[c], label) for c in q.children)
            if abs(total - 100) <= PRECISION:
                bad = own <= 0
            else:
                bad = abs(total) > PRECISION or own > PRECISION
            if bad:
                listing = ", ".join(
                    f"{c.rsplit('.', 1)[-1]}={_capacity_of(queues[c], label):g}" for c in q.children
                )
                raise _fail(
                    conf,
                    f"{PREFIX}{q.path}.queues",
                    f"capacities for label {label} of the children of {q.path} sum to "
                    f"{total:g} under a parent with {own:g} there; they must sum to 100, or "
                    f"to 0 under a parent with none ({listing})",
                )


def _capacity_of(q: QueueConf, label: str) -> float:
    c = q.label_capacity.get(label)
    return c[0] if c is not None else 0.0


def _check_one_mode_across_labels(
    conf: Configuration, path: str, absolute: bool, labels: tuple[str, ...]
) -> None:
    """AbstractCSQueue.updateCapacityConfigType in legacy queue mode: a
    queue other than root gives its capacity in percent (or a weight) in
    every partition it configures, or in resources in every one."""
    for label in labels:
        key = f"{PREFIX}{path}.{LABELS_KEY}.{label}.capacity"
        if (conf.get_str(key, "").strip().startswith("[")) != absolute:
            raise _fail(
                conf,
                key,
                f"Queue '{path}' should use either percentage based capacity "
                "configuration or absolute resource.",
            )


def _label_settings(
    conf: Configuration,
    path: str,
    parent: QueueConf | None,
    labels: tuple[str, ...],
    absolute: bool,
    calc_name: str,
) -> tuple[
    frozenset[str],
    dict[str, tuple[float, float, float, float]],
    str,
    dict[str, tuple[Resource, Resource | None]],
]:
    """The queue's node-label settings (QueueNodeLabelsSettings, and its
    per-label QueueCapacities): accessible labels, inherited when unset and
    `*` for root; per label, capacity (default 0, root 100) and maximum
    capacity (default 100), made absolute along the path; the default label
    expression, inherited from a parent whose labels it can all access.
    A queue in resources (`absolute`) has, per label, its configured
    minimum and maximum resources instead (updateConfigurableResourceLimits)."""
    p = f"{PREFIX}{path}."
    raw = conf.get(p + LABELS_KEY)
    accessible: frozenset[str]
    if parent is None:
        accessible = frozenset({ANY_LABEL})
    elif raw is None:
        accessible = parent.accessible_labels
    else:
        names = {n.strip() for n in raw.split(",") if n.strip()}
        accessible = frozenset({ANY_LABEL}) if ANY_LABEL in names else frozenset(names)
    capacities: dict[str, tuple[float, float, float, float]] = {}
    resources: dict[str, tuple[Resource, Resource | None]] = {}
    for label in labels:
        lp = f"{p}{LABELS_KEY}.{label}."
        if absolute and parent is not None:
            resources[label] = _label_resources(conf, path, parent, label, calc_name)
            capacities[label] = (0.0, 100.0, 0.0, 0.0)
            continue
        max_key = lp + "maximum-capacity"
        raw_max = conf.get(max_key)
        if raw_max is not None and raw_max.startswith("["):
            # A queue in percent reads a maximum in resources as 100 %
            # (internalGetLabeledQueueCapacity).
            parse_resources(conf, max_key, raw_max)
            raw_max = None
        cap = 100.0 if parent is None else conf.get_float(lp + "capacity", 0.0)
        max_cap = 100.0 if parent is None or raw_max is None else conf.get_float(max_key, 100.0)
        for key, value in ((lp + "capacity", cap), (lp + "maximum-capacity", max_cap)):
            if not 0 <= value <= 100:
                raise _fail(conf, key, f"must be in [0, 100], got {value:g}")
        # Unlike the default partition's, a label's capacity may exceed its
        # maximum: Hadoop 3.4.2 checks that only in methods tests call.
        parent_abs, parent_max = parent.absolute_in(label) if parent else (1.0, 1.0)
        abs_cap, abs_max = absolute_share(parent_abs, cap), absolute_share(parent_max, max_cap)
        capacities[label] = (cap, max_cap, abs_cap, abs_max)
    default = (conf.get(p + "default-node-label-expression") or "").strip()
    if (
        conf.get(p + "default-node-label-expression") is None
        and parent is not None
        and (raw is None or accessible >= parent.accessible_labels)
    ):
        default = parent.default_label
    return accessible, capacities, default, resources


def _label_resources(
    conf: Configuration, path: str, parent: QueueConf, label: str, calc_name: str
) -> tuple[Resource, Resource | None]:
    """(configured minimum, configured maximum) of a queue in resources in
    `label`'s partition, checked as updateConfigurableResourceLimits does:
    a maximum no larger than the parent's there, which it inherits when
    unset; a minimum no larger than the maximum."""
    lp = f"{PREFIX}{path}.{LABELS_KEY}.{label}."
    min_key, max_key = lp + "capacity", lp + "maximum-capacity"
    min_res = parse_resources(conf, min_key, conf.get_str(min_key, ""))
    raw_max = conf.get(max_key)
    max_res: Resource | None = None
    if raw_max is not None and raw_max.startswith("["):
        max_res = parse_resources(conf, max_key, raw_max)
    elif raw_max is not None:
        value = conf.get_float(max_key, 100.0)
        if not 0 <= value <= 100:
            raise _fail(conf, max_key, f"must be in [0, 100], got {value:g}")
    inherited = parent.label_resources.get(label)
    parent_max = inherited[1] if inherited is not None else None
    _check_max_within_parent(conf, max_key, calc_name, path, max_res, parent_max)
    if max_res is None:
        max_res = parent_max
    if max_res is not None and _greater(calc_name, min_res, max_res):
        raise _fail(
            conf,
            min_key,
            f"Min resource configuration {_text(min_res)} is greater than its max "
            f"value:{_text(max_res)} in queue:{path}",
        )
    return min_res, max_res


def absolute_share(parent_absolute: float, percent: float) -> float:
    """A queue's share of the whole cluster from its parent's and its own
    percentage, as QueueCapacities holds it: Java floats
    (CSQueueUtils.updateAbsoluteCapacitiesByNodeLabels), so a maximum of
    90 % of 40,960 MB is 36,863 MB, not 36,864."""
    return f32(f32(percent / 100) * parent_absolute)


def _capacity_limits(
    conf: Configuration, path: str, parent: QueueConf | None, capacity: float
) -> tuple[float, float, float]:
    """(maximum-capacity %, absolute capacity, absolute maximum capacity) of
    `path`, whose capacity is `capacity` % of its parent's."""
    p = f"{PREFIX}{path}."
    max_key = p + "maximum-capacity"
    raw_max = conf.get(max_key)
    if raw_max is not None and raw_max.startswith("["):
        # A queue in percent reads a maximum in resources as 100 %
        # (getNonLabeledQueueMaximumCapacity); only queues in resources
        # are bounded by one.
        parse_resources(conf, max_key, raw_max)
        raw_max = None
    max_cap = conf.get_float(max_key, -1.0) if path != ROOT and raw_max is not None else 100.0
    if max_cap == -1.0:
        max_cap = 100.0
    if not 0 < max_cap <= 100:
        raise _fail(conf, max_key, f"must be in (0, 100] or -1, got {max_cap:g}")
    if parent is None:
        abs_cap, abs_max = 1.0, 1.0
    else:
        abs_cap = absolute_share(parent.absolute_capacity, capacity)
        abs_max = absolute_share(parent.absolute_maximum_capacity, max_cap)
    return max_cap, abs_cap, abs_max


def _absolute_limits(
    conf: Configuration, path: str, parent: QueueConf, min_res: Resource, calc_name: str
) -> tuple[float, float, float, Resource | None]:
    """(maximum-capacity %, absolute capacity, absolute maximum capacity,
    configured maximum resources) of `path`, whose capacity is `min_res`.
    The percentages are placeholders until the scheduler derives them from
    the cluster; a maximum in percent is read and, as in Hadoop, does not
    bound an absolute queue (AbstractCSQueue.updateEffectiveResources)."""
    max_key = f"{PREFIX}{path}.maximum-capacity"
    raw = conf.get(max_key)
    max_res: Resource | None = None
    max_cap = 100.0
    if raw is not None and raw.startswith("["):
        max_res = parse_resources(conf, max_key, raw)
    else:
        max_cap = conf.get_float(max_key, -1.0)
        if max_cap == -1.0:
            max_cap = 100.0
        if not 0 < max_cap <= 100:
            raise _fail(conf, max_key, f"must be in (0, 100] or -1, got {max_cap:g}")
    parent_max = parent.max_resource
    _check_max_within_parent(conf, max_key, calc_name, path, max_res, parent_max)
    if max_res is None and parent_max is not None:
        max_res = parent_max
    if max_res is not None and _greater(calc_name, min_res, max_res):
        raise _fail(
            conf,
            f"{PREFIX}{path}.capacity",
            f"Min resource configuration {_text(min_res)} is greater than its max "
            f"value:{_text(max_res)} in queue:{path}",
        )
    abs_max = absolute_share(parent.absolute_maximum_capacity, max_cap)
    return max_cap, 0.0, abs_max, max_res


def _user_weights(
    conf: Configuration, path: str, parent: QueueConf | None, ulp: float, leaf: bool
) -> dict[str, float]:
    """The queue's `user-settings.<user>.weight`s over its parent's
    (AbstractCSQueue.getUserWeightsFromHierarchy); a leaf refuses a weight
    outside [0, 100 / minimum-user-limit-percent] (UserWeights.validateForLeafQueue)."""
    weights = dict(parent.user_weights) if parent is not None else {}
    head, tail = f"{PREFIX}{path}.user-settings.", ".weight"
    for name in conf:
        if name.startswith(head) and name.endswith(tail) and len(name) > len(head + tail):
            user = name[len(head) : -len(tail)]
            weights[user] = conf.get_float(name, 1.0)
    if leaf:
        for user, w in weights.items():
            if w < 0 or (ulp > 0 and w > 100 / ulp):
                key = _weight_key(conf, path, user)
                raise _fail(
                    conf,
                    key,
                    f"weight {w:g} for user {user!r} must be between 0 and 100 / {ulp:g} "
                    f"(minimum-user-limit-percent of {path})",
                )
    return weights


def _weight_key(conf: Configuration, path: str, user: str) -> str:
    """The property that set `user`'s weight for `path`: its own, or the
    nearest ancestor's."""
    q = path
    while True:
        key = f"{PREFIX}{q}.user-settings.{user}.weight"
        if conf.get(key) is not None or "." not in q:
            return key
        q = q.rsplit(".", 1)[0]


def _state(conf: Configuration, path: str, parent: QueueConf | None) -> str:
    """RUNNING or STOPPED, inherited from the parent; a RUNNING child of a
    STOPPED parent is refused."""
    state_key = f"{PREFIX}{path}.state"
    state = (conf.get(state_key) or "").upper() or (parent.state if parent else RUNNING)
    if state not in (RUNNING, STOPPED):
        raise _fail(conf, state_key, f"expected RUNNING or STOPPED, got {conf.get(state_key)!r}")
    if parent is not None and parent.state == STOPPED and state == RUNNING:
        raise _fail(
            conf, state_key, f"{path} cannot be RUNNING under the STOPPED queue {parent.path}"
        )
    return state


def _user_limits(conf: Configuration, p: str) -> tuple[float, float]:
    """(minimum-user-limit-percent, user-limit-factor) of the queue whose
    property prefix is `p`, defaulting to the scheduler-wide values."""
    ulp_key = p + "minimum-user-limit-percent"
    ulp = conf.get_float(ulp_key, conf.get_float(PREFIX + "minimum-user-limit-percent", 100.0))
    if not 0 <= ulp <= 100:
        raise _fail(conf, ulp_key, f"must be in [0, 100], got {ulp:g}")
    ulf_key = p + "user-limit-factor"
    ulf = conf.get_float(ulf_key, conf.get_float(PREFIX + "user-limit-factor", 1.0))
    if ulf <= 0 and ulf != -1:
        raise _fail(conf, ulf_key, f"must be positive or -1, got {ulf:g}")
    return ulp, ulf


def _maximum_allocation(
    conf: Configuration,
    p: str,
    parent: QueueConf | None,
    minimum: Resource,
    cluster_maximum: Resource,
) -> Resource:
    """The queue's maximum container: at most its parent's (the cluster's for
    root), at least the scheduler's minimum."""
    parent_max = parent.maximum_allocation if parent else cluster_maximum
    mem_key, vc_key = p + "maximum-allocation-mb", p + "maximum-allocation-vcores"
    max_alloc = Resource(
        conf.get_int(mem_key, parent_max.memory),
        conf.get_int(vc_key, parent_max.vcores),
        cluster_maximum.extra,
    )
    for key, value, limit in (
        (mem_key, max_alloc.memory, parent_max.memory),
        (vc_key, max_alloc.vcores, parent_max.vcores),
    ):
        if value > limit:
            raise _fail(
                conf, key, f"{value} is larger than the parent's or cluster's maximum {limit}"
            )
    if max_alloc.memory < minimum.memory or max_alloc.vcores < minimum.vcores:
        raise _fail(conf, mem_key, f"maximum allocation {max_alloc} is below the minimum {minimum}")
    return max_alloc


def _acl(conf: Configuration, key: str, parent: QueueConf | None) -> Acl:
    """The ACL at `key`; unset, root allows everyone and any other queue no
    one beyond what its ancestors allow (as Hadoop's defaults)."""
    raw = _raw(conf, key)
    if raw is None:
        return EVERYONE if parent is None else NO_ONE
    return Acl.parse(raw)


def _child_capacities(
    conf: Configuration,
    parent_path: str,
    parent_capacity: float,
    parent_min: Resource | None,
    kids: list[str],
    calc_name: str,
    labels: tuple[str, ...] = (),
    by_queue: dict[str, frozenset[str]] | None = None,
) -> tuple[dict[str, float], dict[str, Resource]]:
    """Children's capacities (percent of the parent), validated to sum to 100,
    and the configured minimums of those given in resources.

    Percentages, weights and resources do not mix among siblings, nor
    resources between a parent (other than root) and its children
    (AbstractParentQueue.setChildQueues in legacy queue mode); children's
    resources must fit in their parent's."""
    implicit = parent_path == ROOT and not conf.get(f"{PREFIX}{ROOT}.queues")
    default = 100.0 if implicit else 0.0
    values = {k: _percent(conf, f"{PREFIX}{parent_path}.{k}.capacity", default) for k in kids}
    weights = {k: v for k, v in values.items() if isinstance(v, str)}
    absolutes = {k: v for k, v in values.items() if isinstance(v, Resource)}
    queues_key = f"{PREFIX}{parent_path}.queues"
    if absolutes or parent_min is not None:
        if labels:
            # Hadoop builds each child, checking its one mode across its
            # labels, before its parent checks the children together.
            for k in kids:
                q = f"{parent_path}.{k}"
                own = tuple(sorted((by_queue or {}).get(q, ())))
                _check_one_mode_across_labels(conf, q, isinstance(values[k], Resource), own)
        _check_absolute_mix(
            conf, parent_path, parent_min is not None and not parent_min.is_zero(), values, labels
        )
        mins = {f"{parent_path}.{k}": r for k, r in absolutes.items()}
        caps = {
            f"{parent_path}.{k}": 0.0 if isinstance(v, Resource) else float(v)
            for k, v in values.items()
        }
        if parent_min is not None:
            total = ZERO
            for r in absolutes.values():
                total = total + r
            if _greater(calc_name, total, parent_min):
                raise _fail(
                    conf,
                    queues_key,
                    f"Parent Queues capacity: {_text(parent_min)} is less than to "
                    f"its children:{_text(total)} for queue:{parent_path.rsplit('.', 1)[-1]}",
                )
        return caps, mins
    if weights and len(weights) != len(values):
        raise _fail(
            conf,
            queues_key,
            f"children of {parent_path} mix weights and percentages; use one kind",
        )
    out: dict[str, float] = {}
    if weights:
        total_w = sum(float(w[:-1]) for w in weights.values())
        for k in kids:
            w = float(str(values[k])[:-1])
            out[f"{parent_path}.{k}"] = 100.0 * w / total_w if total_w else 0.0
        return out, {}
    for k, v in values.items():
        key = f"{PREFIX}{parent_path}.{k}.capacity"
        assert isinstance(v, float)
        if not 0 <= v <= 100:
            raise _fail(conf, key, f"must be in [0, 100], got {v:g}")
        out[f"{parent_path}.{k}"] = v
    pct_total = sum(out.values())
    ok = abs(pct_total - 100) <= PRECISION or (parent_capacity == 0 and pct_total == 0)
    if not ok:
        listing = ", ".join(f"{k}={v:g}" for k, v in zip(kids, out.values(), strict=True))
        raise _fail(
            conf,
            queues_key,
            f"capacities of the children of {parent_path} sum to {pct_total:g}, "
            f"not 100 ({listing})",
        )
    return out, {}


def _check_max_within_parent(
    conf: Configuration,
    max_key: str,
    calc_name: str,
    path: str,
    max_res: Resource | None,
    parent_max: Resource | None,
) -> None:
    """AbstractCSQueue.updateConfigurableResourceLimits: a maximum in
    resources above the parent's (in the same partition) is refused."""
    if max_res is not None and parent_max is not None and _greater(calc_name, max_res, parent_max):
        raise _fail(
            conf,
            max_key,
            f"Max resource configuration {_text(max_res)} is greater than parents max "
            f"value:{_text(parent_max)} in queue:{path}",
        )


def _check_absolute_mix(
    conf: Configuration,
    parent_path: str,
    parent_absolute: bool,
    values: dict[str, float | str | Resource],
    labels: tuple[str, ...] = (),
) -> None:
    """Refuse resources mixed with percentages or weights, among the
    children of `parent_path` or between it and them, as Hadoop's legacy queue
    mode does, naming the queue (its words, in its order of checks).

    Hadoop's sibling check forgets a percentage seen before a queue in
    resources (getCapacityConfigurationTypeForQueues), so it lets
    `a=50, b=[...]` through while refusing `a=[...], b=50`; so does emu.
    The queue in percent then keeps its share (of its parent's derived one),
    outside the children's sum of resources.

    With node labels (`labels`, the parent's), each child is looked at in
    each of them as well, in the order Hadoop's HashSet of the parent's
    labels gives."""
    pct = weight = absolute = False
    details = []
    names = javahash.hash_order(["", *labels], javahash.string_hash, len(labels) + 1)
    for k, v in values.items():
        q = f"{parent_path}.{k}"
        for label in names:
            if label:
                v = _label_capacity_kind(conf, f"{PREFIX}{q}.{LABELS_KEY}.{label}.capacity")
            if isinstance(v, float) and v > 0:
                pct = True
            if isinstance(v, str):
                weight = True
                details.append(f"{{Queue={q}, label={label} uses weight mode}}. ")
            # A minimum of no resources is Resources.none(): not "absolute"
            # to getCapacityConfigurationTypeForQueues.
            if isinstance(v, Resource) and not v.is_zero():
                absolute = True
                pct = False
                details.append(f"{{Queue={q}, label={label} uses absolute mode}}. ")
            if pct:
                details.append(f"{{Queue={q}, label={label} uses percentage mode}}. ")
    queues_key = f"{PREFIX}{parent_path}.queues"
    if pct + weight + absolute > 1:
        raise _fail(
            conf,
            queues_key,
            f"Parent queue '{parent_path}' have children queue used mixed of  weight mode, "
            "percentage and absolute mode, it is not allowed, please double check, "
            "details:" + "".join(details).rstrip(),
        )
    children_absolute = absolute and not weight
    if parent_path != ROOT and children_absolute != parent_absolute:
        raise _fail(
            conf,
            queues_key,
            f"Parent={parent_path}: When absolute minResource is used, we must make sure both "
            "parent and child all use absolute minResource",
        )


def _label_capacity_kind(conf: Configuration, key: str) -> float | str | Resource:
    """A label capacity as the mix check sees it: resources, a weight, or a
    percentage (0 when unset or unreadable)."""
    raw = conf.get_str(key, "").strip()
    if raw.startswith("["):
        return parse_resources(conf, key, raw)
    if raw.endswith("w"):
        return raw
    try:
        return float(raw) if raw else 0.0
    except ValueError:
        return 0.0


def _ordering_policy(conf: Configuration, key: str, raw: str, leaf: bool) -> str:
    name = raw.strip()
    if leaf:
        if name in ("fifo", "fifo-with-partitions", "fifo-for-pending-apps") or name.endswith(
            ("FifoOrderingPolicy", "FifoOrderingPolicyWithExclusivePartitions")
        ):
            return "fifo"
        if name == "fair" or name.endswith("FairOrderingPolicy"):
            return "fair"
        raise _fail(
            conf, key, f"unknown application ordering policy {raw!r} (expected fifo or fair)"
        )
    if name in ("utilization", "priority-utilization"):
        return name
    raise _fail(
        conf,
        key,
        f"unknown queue ordering policy {raw!r} (expected utilization or priority-utilization)",
    )


# --- placement and users ------------------------------------------------------
def _mappings(conf: Configuration) -> tuple[QueueMapping, ...]:
    key = PREFIX + "queue-mappings"
    raw = conf.get(key)
    if not raw:
        return ()
    out = []
    for entry in (e.strip() for e in raw.split(",")):
        if not entry:
            continue
        parts = [x.strip() for x in entry.split(":")]
        if len(parts) != 3 or parts[0] not in ("u", "g") or not parts[1] or not parts[2]:
            raise _fail(
                conf, key, f"malformed mapping {entry!r} (expected u:user:queue or g:group:queue)"
            )
        out.append(QueueMapping(parts[0], parts[1], parts[2]))
    return tuple(out)


def _check_mappings(conf: Configuration, cs: CapacityConf) -> None:
    """A mapping to a fixed queue must name a leaf (Hadoop refuses to start
    otherwise); mappings with %user or %primary_group are checked when used."""
    key = PREFIX + "queue-mappings"
    for m in cs.mappings:
        if "%" in m.queue:
            continue
        target = m.queue if m.queue in cs.queues else None
        if target is None:
            found = cs.by_short_name(m.queue)
            target = found[0] if len(found) == 1 else None
        if target is None and _below_creating_parent(cs, m.queue):
            continue  # created at the first submission
        if target is None or not cs.queues[target].is_leaf:
            raise _fail(
                conf,
                key,
                f"mapping {m.kind}:{m.source}:{m.queue} names a queue that is not a leaf queue",
            )


def _below_creating_parent(cs: CapacityConf, queue: str) -> bool:
    """`queue` (a path, possibly starting with a short name) lies one or two
    levels below a queue that creates queues at submission."""
    parts = queue.split(".")
    for up in (1, 2):
        if len(parts) <= up:
            return False
        parent = ".".join(parts[:-up])
        found = [parent] if parent in cs.queues else cs.by_short_name(parent)
        if len(found) == 1 and cs.queues[found[0]].auto_create:
            return True
    return False


def _user_max_parallel_apps(conf: Configuration) -> dict[str, int]:
    """`yarn.scheduler.capacity.user.<user>.max-parallel-apps`, per user."""
    head, tail = PREFIX + "user.", ".max-parallel-apps"
    out = {}
    for name in conf:
        if name.startswith(head) and name.endswith(tail) and len(name) > len(head + tail):
            out[name[len(head) : -len(tail)]] = conf.get_int(name, UNLIMITED_PARALLEL_APPS)
    return out


def _groups(conf: Configuration) -> dict[str, tuple[str, ...]]:
    """Hadoop's static user->groups mapping: `user1=group1,group2;user2=`."""
    raw = conf.get(GROUP_MAPPING) or "dr.who=;"
    out: dict[str, tuple[str, ...]] = {}
    for entry in (e.strip() for e in raw.split(";")):
        if not entry:
            continue
        if "=" not in entry:
            raise _fail(
                conf, GROUP_MAPPING, f"malformed entry {entry!r} (expected user=group1,group2)"
            )
        user, groups = entry.split("=", 1)
        out[user.strip()] = tuple(g.strip() for g in groups.split(",") if g.strip())
    return out


def _monitor_policy(conf: Configuration, name: str) -> bool:
    """Whether the scheduling monitor runs the policy whose class is `name`."""
    policies = conf.get_list(
        MONITOR_POLICIES,
        [
            "org.apache.hadoop.yarn.server.resourcemanager.monitor.capacity."
            "ProportionalCapacityPreemptionPolicy"
        ],
    )
    return conf.get_bool(MONITOR_ENABLE, False) and any(x.endswith(name) for x in policies)


def _expiry_ms(conf: Configuration) -> int:
    key = PREFIX + AUTO_V2 + "queue-expiration-time"
    seconds = conf.get_int(key, 300)
    if seconds <= 0:
        raise _fail(conf, key, f"must be positive, got {seconds}")
    return seconds * 1000


def _preemption(conf: Configuration) -> PreemptionConf:
    p = PREEMPTION_PREFIX
    enabled = _monitor_policy(conf, POLICY_CLASS)
    pc = PreemptionConf(
        enabled=enabled,
        observe_only=conf.get_bool(p + "observe_only", False),
        monitoring_interval_ms=conf.get_time_ms(p + "monitoring_interval", 3000),
        max_wait_before_kill_ms=conf.get_time_ms(p + "max_wait_before_kill", 15000),
        total_preemption_per_round=conf.get_float(p + "total_preemption_per_round", 0.1),
        max_ignored_over_capacity=conf.get_float(p + "max_ignored_over_capacity", 0.1),
        natural_termination_factor=conf.get_float(p + "natural_termination_factor", 0.2),
        intra_queue_enabled=conf.get_bool(INTRA_PREFIX + "enabled", False),
        intra_minimum_threshold=conf.get_float(INTRA_PREFIX + "minimum-threshold", 0.5),
        intra_max_allowable_limit=conf.get_float(INTRA_PREFIX + "max-allowable-limit", 0.2),
        intra_order_policy=conf.get_str(
            INTRA_PREFIX + "preemption-order-policy", USERLIMIT_FIRST
        ).lower(),
        intra_conservative_drf=conf.get_bool(INTRA_PREFIX + "conservative-drf", True),
    )
    if pc.intra_order_policy not in (USERLIMIT_FIRST, PRIORITY_FIRST):
        raise _fail(
            conf,
            INTRA_PREFIX + "preemption-order-policy",
            f"must be {USERLIMIT_FIRST} or {PRIORITY_FIRST}, got {pc.intra_order_policy!r}",
        )
    if pc.monitoring_interval_ms <= 0:
        raise _fail(conf, p + "monitoring_interval", "must be positive")
    for name, value in (
        ("total_preemption_per_round", pc.total_preemption_per_round),
        ("natural_termination_factor", pc.natural_termination_factor),
    ):
        if not 0 < value <= 1:
            raise _fail(conf, p + name, f"must be in (0, 1], got {value:g}")
    if pc.max_ignored_over_capacity < 0:
        raise _fail(conf, p + "max_ignored_over_capacity", "must not be negative")
    return pc

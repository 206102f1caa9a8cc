"""The FairScheduler allocation file (`fair-scheduler.xml`), read the way
Hadoop's AllocationFileLoaderService, AllocationFileParser and
AllocationFileQueueParser read it.

Accepted, as in Hadoop: nested `queue` or `pool` elements (`type="parent"`
makes a childless queue a parent; a top-level `root` queue must be alone),
with `minResources`, `maxResources`, `maxChildResources` (absolute
`X mb, Y vcores`, `memory-mb=X, vcores=Y`, `N%`, `X% memory, Y% cpu` or
`memory-mb=X%, vcores=Y%`), `maxRunningApps`, `maxAMShare`,
`maxContainerAllocation`, `weight`, `schedulingPolicy`/`schedulingMode`,
`aclSubmitApps`, `aclAdministerApps`, `minSharePreemptionTimeout`,
`fairSharePreemptionTimeout` (seconds), `fairSharePreemptionThreshold`,
`allowPreemptionFrom`, `reservation`; `user` elements with
`maxRunningApps`; the defaults `userMaxAppsDefault`, `queueMaxAppsDefault`,
`queueMaxResourcesDefault`, `queueMaxAMShareDefault`,
`defaultQueueSchedulingPolicy`/`Mode`, `defaultMinSharePreemptionTimeout`,
`defaultFairSharePreemptionTimeout` (or the older top-level
`fairSharePreemptionTimeout`), `defaultFairSharePreemptionThreshold`; and
`queuePlacementPolicy`. Elements Hadoop ignores (unknown top-level
elements, unknown fields in a queue or user, reservation-system knobs) are
ignored here too, so production files load unchanged.

Every value Hadoop would fail to load (a number that does not parse, a bad
resource string, a queue name with a period, a policy name it does not
know, a placement policy whose rules cannot all be reached) raises
`InputError(path, line, "<element>: reason")`. Two things Hadoop accepts
but cannot use are refused as well: a percentage `minResources` (Hadoop
would later fail on it) and a `fifo` policy on a parent queue, or a `drf`
queue under a `fair` parent (Hadoop refuses to create such queues).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from xml.parsers import expat

from emu.errors import InputError
from emu.resources import MEMORY, VCORES, ZERO, Resource
from emu.rm.scheduler import javahash
from emu.rm.scheduler.fair import placement, policies
from emu.rm.scheduler.fair.arith import INT_MAX, LONG_MAX, f32, jlong, unbounded
from emu.rm.scheduler.fair.placement import ConfiguredQueues, Groups, PlacementPolicy, Rule
from emu.rm.scheduler.fair.policies import Policy

ROOT = "root"
SUBMIT, ADMINISTER = "SUBMIT_APPLICATIONS", "ADMINISTER_QUEUE"


# --- the XML tree, with line numbers -----------------------------------------------------------
@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    line: int
    children: list[Element] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    first_is_text: bool = False

    @property
    def text(self) -> str | None:
        """The first child's text, as Hadoop's `getFirstChild()` sees it
        (None when the element is empty or starts with a child element)."""
        return "".join(self.texts) if self.first_is_text else None


def _read_tree(path: Path) -> Element:
    stack: list[Element] = []
    root: list[Element] = []
    parser = expat.ParserCreate()

    def start(tag: str, attrs: dict[str, str]) -> None:
        el = Element(tag, dict(attrs), parser.CurrentLineNumber)
        if stack:
            parent = stack[-1]
            parent.children.append(el)
        else:
            root.append(el)
        stack.append(el)

    def end(tag: str) -> None:
        stack.pop()

    def chars(data: str) -> None:
        if not stack:
            return
        el = stack[-1]
        if not el.children:
            el.first_is_text = True
            el.texts.append(data)

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = chars
    try:
        with open(path, "rb") as f:
            parser.ParseFile(f)
    except expat.ExpatError as e:
        raise InputError(
            str(path), e.lineno, f"malformed XML: {expat.ErrorString(e.code)}"
        ) from None
    except OSError as e:
        raise InputError(
            str(path), None, f"cannot read the allocation file: {e.strerror}"
        ) from None
    return root[0]


# --- values ------------------------------------------------------------------------------------
class ConfigurableResource:
    """A configured resource: absolute, or fractions of the cluster per type
    (`ConfigurableResource.getResource(cluster)`)."""

    __slots__ = ("fractions", "resource")

    def __init__(
        self, resource: Resource | None = None, fractions: dict[str, float] | None = None
    ) -> None:
        self.resource = resource
        self.fractions = fractions

    def get(self, cluster: Resource) -> Resource:
        if self.fractions is None:
            assert self.resource is not None
            return self.resource
        f = self.fractions
        extra = {k: jlong(v * f.get(k, 1.0)) for k, v in cluster.extra}
        return Resource(
            jlong(cluster.memory * f.get(MEMORY, 1.0)),
            min(jlong(cluster.vcores * f.get(VCORES, 1.0)), INT_MAX),
            extra,
        )

    def __repr__(self) -> str:
        return f"ConfigurableResource({self.resource or self.fractions})"


UNBOUNDED_CONF = ConfigurableResource(unbounded())
"""No maxResources on a cluster without extra resource types; with them, see
`AllocationConfiguration.for_types`."""
_BAD = "Error reading resource config--invalid resource definition:"
_OLD = {unit: re.compile(r"(-?\d+)(\.\d*)?\s*" + unit) for unit in ("mb", "vcores")}


def _find_percentage(text: str, units: str) -> float:
    m = re.search(r"(-?(\d+)(\.\d*)?)\s*%\s*" + units, text)
    if m is None:
        raise ValueError(
            f"Invalid percentage: {text}" if not units else f"Missing resource: {units}"
        )
    pct = float(m.group(1)) / 100.0
    if pct < 0:
        raise ValueError(f"Invalid percentage: {text}, percentage should not be negative!")
    return pct


def parse_resource(
    text: str, missing: int = LONG_MAX, types: tuple[str, ...] = ()
) -> ConfigurableResource:
    """`FairSchedulerConfiguration.parseResourceConfigValue`; ValueError says why."""
    if not text.strip():
        raise ValueError("Error reading resource config--the resource string is empty.")
    known = (MEMORY, VCORES, *types)
    if "=" in text:
        as_percent = "%" in text
        values: dict[str, int] = dict.fromkeys(known, missing)
        fractions: dict[str, float] = {}
        for part in text.split(","):
            pieces = part.split("=")
            if len(pieces) != 2:
                raise ValueError(f"{_BAD} {text}. Every resource must be of the form: name=value.")
            name, raw = pieces[0].strip(), pieces[1].strip()
            if name not in known:
                raise ValueError(f'{_BAD} {text}. The resource name, "{name}" was not recognized.')
            if as_percent:
                try:
                    fractions[name] = _find_percentage(raw, "")
                except ValueError:
                    raise ValueError(
                        f'{_BAD} {text}. The resource values must all be percentages. "{raw}" is '
                        "either not a non-negative number or does not include the '%' symbol."
                    ) from None
            else:
                if not re.fullmatch(r"[+-]?\d+", raw):
                    raise ValueError(
                        f"{_BAD} {text}. The resource values must all be integers. "
                        f'"{raw}" is not an integer.'
                    )
                v = int(raw)
                if v < 0:
                    raise ValueError(f"Invalid value of {name}: {v}, value should not be negative!")
                values[name] = v
        if as_percent:
            return ConfigurableResource(fractions=fractions)
        extra = {t: values[t] for t in types}
        return ConfigurableResource(Resource(values[MEMORY], values[VCORES], extra))
    low = text.lower()
    if "%" in text:
        parts = low.split(",")
        if len(parts) == 1:
            pct = _find_percentage(parts[0], "")
            return ConfigurableResource(fractions=dict.fromkeys(known, pct))
        fractions = dict.fromkeys(types, 0.0)
        fractions[MEMORY] = _find_percentage(low, "memory")
        fractions[VCORES] = _find_percentage(low, "cpu")
        return ConfigurableResource(fractions=fractions)
    amounts = []
    for unit, pattern in _OLD.items():
        m = pattern.search(low)
        if m is None:
            raise ValueError(f"Missing resource: {unit}")
        v = int(m.group(1))
        if v > INT_MAX or v < -INT_MAX - 1:
            raise ValueError(f"Error reading resource config: {m.group(1)} is out of range")
        if v < 0:
            name = "memory" if unit == "mb" else unit
            raise ValueError(f"Invalid value of {name}: {v}, value should not be negative!")
        amounts.append(v)
    return ConfigurableResource(Resource(amounts[0], amounts[1]))


def _java_integer(text: str, maximum: int, kind: str) -> int:
    """Integer.parseInt / Long.parseLong: digits with an optional sign, within
    [-maximum - 1, maximum], with Java's NumberFormatException message."""
    if not re.fullmatch(r"[+-]?\d+", text):
        raise ValueError(f'For input string: "{text}"')
    v = int(text)
    if v > maximum or v < -maximum - 1:
        raise ValueError(f'For input string: "{text}" (out of {kind} range)')
    return v


def _java_int(text: str) -> int:
    return _java_integer(text, INT_MAX, "int")


def _java_long(text: str) -> int:
    return _java_integer(text, LONG_MAX, "long")


_FLOAT = re.compile(r"[+-]?(NaN|Infinity|((\d+\.?\d*|\.\d+)([eE][+-]?\d+)?))[fFdD]?")


def _java_double(text: str) -> float:
    if not _FLOAT.fullmatch(text):
        raise ValueError(f'For input string: "{text}"')
    t = text.rstrip("fFdD")
    return float(t.replace("Infinity", "inf"))


def _java_float(text: str) -> float:
    return f32(_java_double(text))


class AccessControlList:
    """Hadoop's AccessControlList: "users groups", "*" for everyone, " " for nobody."""

    __slots__ = ("all", "groups", "text", "users")

    def __init__(self, text: str) -> None:
        self.text = text
        parts = text.split(" ", 1)
        self.all = any("*" in p and p.strip() == "*" for p in parts)
        self.users: frozenset[str] = frozenset()
        self.groups: frozenset[str] = frozenset()
        if not self.all:
            self.users = frozenset(u.strip() for u in parts[0].split(",") if u.strip())
            if len(parts) == 2:
                self.groups = frozenset(g.strip() for g in parts[1].split(",") if g.strip())

    def allows(self, user: str, groups: tuple[str, ...]) -> bool:
        return self.all or user in self.users or any(g in self.groups for g in groups)


EVERYBODY = AccessControlList("*")
NOBODY = AccessControlList(" ")


# --- the parsed configuration ------------------------------------------------------------------
@dataclass
class AllocationConfiguration:
    """Hadoop's AllocationConfiguration: per-queue properties by full queue
    name, with the file's defaults for queues it does not mention."""

    source: str = ""
    min_resources: dict[str, Resource] = field(default_factory=dict)
    max_resources: dict[str, ConfigurableResource] = field(default_factory=dict)
    max_child_resources: dict[str, ConfigurableResource] = field(default_factory=dict)
    max_container_allocation: dict[str, Resource] = field(default_factory=dict)
    queue_max_apps: dict[str, int] = field(default_factory=dict)
    queue_max_am_shares: dict[str, float] = field(default_factory=dict)
    weights: dict[str, float] = field(default_factory=dict)
    queue_policies: dict[str, Policy] = field(default_factory=dict)
    min_share_timeouts: dict[str, int] = field(default_factory=dict)
    fair_share_timeouts: dict[str, int] = field(default_factory=dict)
    fair_share_thresholds: dict[str, float] = field(default_factory=dict)
    acls: dict[str, dict[str, AccessControlList]] = field(default_factory=dict)
    reservable: set[str] = field(default_factory=set)
    non_preemptable: set[str] = field(default_factory=set)
    user_max_apps: dict[str, int] = field(default_factory=dict)
    user_max_apps_default: int = INT_MAX
    queue_max_apps_default: int = INT_MAX
    queue_max_resources_default: ConfigurableResource = UNBOUNDED_CONF
    queue_max_am_share_default: float = f32(0.5)
    default_policy: Policy = policies.FAIR
    configured: ConfiguredQueues = field(
        default_factory=lambda: ConfiguredQueues(frozenset(), frozenset())
    )
    placement_rules: list[Rule] | None = None
    queue_lines: dict[str, int] = field(default_factory=dict)

    @classmethod
    def for_types(
        cls, resource_types: tuple[str, ...], source: str = ""
    ) -> AllocationConfiguration:
        """An empty configuration for a cluster declaring `resource_types`: a
        queue without maxResources is unbounded in every declared type, as
        `Resources.unbounded()` is in Hadoop."""
        return cls(
            source=source,
            queue_max_resources_default=ConfigurableResource(unbounded(resource_types)),
        )

    def weight(self, q: str) -> float:
        return self.weights.get(q, 1.0)

    def min_share(self, q: str) -> Resource:
        return self.min_resources.get(q, ZERO)

    def max_share(self, q: str) -> ConfigurableResource:
        return self.max_resources.get(q, self.queue_max_resources_default)

    def max_apps(self, q: str) -> int:
        return self.queue_max_apps.get(q, self.queue_max_apps_default)

    def max_am_share(self, q: str) -> float:
        return self.queue_max_am_shares.get(q, self.queue_max_am_share_default)

    def user_max(self, user: str) -> int:
        return self.user_max_apps.get(user, self.user_max_apps_default)

    def policy(self, q: str) -> Policy:
        return self.queue_policies.get(q, self.default_policy)

    def min_share_timeout(self, q: str) -> int:
        return self.min_share_timeouts.get(q, -1)

    def fair_share_timeout(self, q: str) -> int:
        return self.fair_share_timeouts.get(q, -1)

    def fair_share_threshold(self, q: str) -> float:
        return self.fair_share_thresholds.get(q, -1.0)

    def acl(self, q: str, kind: str) -> AccessControlList | None:
        return self.acls.get(q, {}).get(kind)

    def placement_policy(
        self, groups: Groups, allow_undeclared: bool, user_as_default: bool
    ) -> PlacementPolicy:
        if self.placement_rules is not None:
            return PlacementPolicy(self.placement_rules, self.configured, groups)
        return PlacementPolicy.from_settings(
            allow_undeclared, user_as_default, self.configured, groups
        )


# --- the loader --------------------------------------------------------------------------------
_TOP_TEXT = {
    "queueMaxResourcesDefault",
    "userMaxAppsDefault",
    "defaultFairSharePreemptionTimeout",
    "fairSharePreemptionTimeout",
    "defaultMinSharePreemptionTimeout",
    "queueMaxAppsDefault",
    "defaultFairSharePreemptionThreshold",
    "queueMaxAMShareDefault",
    "reservation-planner",
    "reservation-agent",
    "reservation-policy",
}


class _Loader:
    def __init__(self, path: Path, resource_types: tuple[str, ...]) -> None:
        self.path = str(path)
        self.types = resource_types
        self.conf = AllocationConfiguration.for_types(resource_types, self.path)
        self.leaves: list[str] = []
        self.parents: list[str] = []

    def fail(self, el: Element, message: str) -> InputError:
        return InputError(self.path, el.line, f"<{el.tag}>: {message}")

    def text(self, el: Element) -> str:
        t = el.text
        if t is None or not t.strip():
            raise self.fail(el, "has no value")
        return t.strip()

    def number(self, el: Element, parse: Callable[[str], float]) -> float:
        raw = self.text(el)
        try:
            return parse(raw)
        except ValueError as e:
            raise self.fail(el, f"not a number: {e}") from None

    def resource(self, el: Element, missing: int = LONG_MAX) -> ConfigurableResource:
        try:
            return parse_resource(self.text(el), missing, self.types)
        except ValueError as e:
            raise self.fail(el, str(e)) from None

    def policy(self, el: Element) -> Policy:
        try:
            return policies.parse(self.text(el))
        except ValueError as e:
            raise self.fail(el, str(e)) from None

    def load(self, root: Element) -> AllocationConfiguration:
        conf = self.conf
        if root.tag != "allocations":
            raise self.fail(
                root, "Bad fair scheduler config file: top-level element not <allocations>"
            )
        queue_elements: list[Element] = []
        placement_el: Element | None = None
        text_values: dict[str, Element] = {}
        for el in root.children:
            if el.tag in ("queue", "pool"):
                queue_elements.append(el)
            elif el.tag == "user":
                self.user(el)
            elif el.tag in ("defaultQueueSchedulingPolicy", "defaultQueueSchedulingMode"):
                policy = self.policy(el)
                if policy is policies.FIFO:
                    raise self.fail(
                        el,
                        "defaultQueueSchedulingPolicy or defaultQueueSchedulingMode can't be FIFO.",
                    )
                conf.default_policy = policy
            elif el.tag == "queuePlacementPolicy":
                placement_el = el
            elif el.tag in _TOP_TEXT:
                text_values[el.tag] = el
        self.defaults(text_values)
        for el in queue_elements:
            parent: str | None = ROOT
            if el.attrs.get("name", "").lower() == ROOT:
                if len(queue_elements) > 1:
                    raise self.fail(
                        el, "If configuring root queue, no other queues can be placed alongside it."
                    )
                parent = None
            self.queue(parent, el)
        conf.configured = ConfiguredQueues(
            frozenset(self.leaves),
            frozenset(self.parents),
            _hash_set_order(self.leaves),
            _hash_set_order(self.parents),
        )
        self.check_policies(root)
        if placement_el is not None:
            conf.placement_rules = self.placement(placement_el)
        return conf

    def defaults(self, values: dict[str, Element]) -> None:
        conf = self.conf
        if "queueMaxResourcesDefault" in values:
            conf.queue_max_resources_default = self.resource(values["queueMaxResourcesDefault"])
        if "userMaxAppsDefault" in values:
            conf.user_max_apps_default = int(self.number(values["userMaxAppsDefault"], _java_int))
        if "queueMaxAppsDefault" in values:
            conf.queue_max_apps_default = int(self.number(values["queueMaxAppsDefault"], _java_int))
        if "queueMaxAMShareDefault" in values:
            conf.queue_max_am_share_default = min(
                self.number(values["queueMaxAMShareDefault"], _java_float), 1.0
            )
        fair_timeout = values.get("defaultFairSharePreemptionTimeout") or values.get(
            "fairSharePreemptionTimeout"
        )
        conf.fair_share_timeouts[ROOT] = (
            int(self.number(fair_timeout, _java_long)) * 1000
            if fair_timeout is not None
            else LONG_MAX
        )
        min_timeout = values.get("defaultMinSharePreemptionTimeout")
        conf.min_share_timeouts[ROOT] = (
            int(self.number(min_timeout, _java_long)) * 1000
            if min_timeout is not None
            else LONG_MAX
        )
        threshold = values.get("defaultFairSharePreemptionThreshold")
        conf.fair_share_thresholds[ROOT] = (
            max(min(self.number(threshold, _java_float), 1.0), 0.0)
            if threshold is not None
            else f32(0.5)
        )

    def user(self, el: Element) -> None:
        name = el.attrs.get("name", "")
        for field_el in el.children:
            if field_el.tag == "maxRunningApps":
                self.conf.user_max_apps[name] = int(self.number(field_el, _java_int))

    def queue(self, parent: str | None, el: Element) -> None:
        """Read one <queue> (or <pool>) and its subtree, as
        AllocationFileQueueParser.loadQueue does: each child element goes to
        its handler in `_QUEUE_ELEMENTS`; unknown elements are ignored."""
        conf = self.conf
        name = self.queue_name(el)
        full = f"{parent}.{name}" if parent is not None else name
        conf.queue_lines[full] = el.line
        q = _QueueRead(full)
        for f in el.children:
            handler = _QUEUE_ELEMENTS.get(f.tag)
            if handler is not None:
                handler(self, q, f)
        if "min" in q.timeouts:
            conf.min_share_timeouts[full] = q.timeouts["min"]
        if "fair" in q.timeouts:
            conf.fair_share_timeouts[full] = q.timeouts["fair"]
        if q.is_leaf and el.attrs.get("type") != "parent":
            if not q.reservable:
                self.leaves.append(full)
        else:
            if q.reservable or q.max_am_set:
                what = "reservation" if q.reservable else "maxAMShare"
                raise self.fail(
                    el,
                    f"The configuration settings for {full} are invalid. A queue element that "
                    "contains child queue elements or that has the type='parent' attribute cannot "
                    f"also include a {what} element.",
                )
            self.parents.append(full)
        acls = conf.acls.setdefault(full, {})
        for kind in (SUBMIT, ADMINISTER):
            acls.setdefault(kind, EVERYBODY if full == ROOT else NOBODY)

    def queue_name(self, el: Element) -> str:
        """The queue's own name (its `name` attribute, trimmed), refused if it
        is empty or has a period."""
        name = el.attrs.get("name", "").strip()
        if "." in name:
            raise self.fail(
                el, f"Bad fair scheduler config file: queue name ({name}) shouldn't contain period."
            )
        if not name:
            raise self.fail(
                el,
                "Bad fair scheduler config file: queue name shouldn't be empty or consist only of "
                "whitespace.",
            )
        return name

    # --- one handler per element inside <queue>, in `_QUEUE_ELEMENTS` --------------------
    def q_min_resources(self, q: _QueueRead, f: Element) -> None:
        r = self.resource(f, 0)
        if r.resource is None:
            raise self.fail(f, "minResources must be absolute, not a percentage of the cluster")
        self.conf.min_resources[q.full] = r.resource

    def q_max_resources(self, q: _QueueRead, f: Element) -> None:
        self.conf.max_resources[q.full] = self.resource(f)

    def q_max_child_resources(self, q: _QueueRead, f: Element) -> None:
        self.conf.max_child_resources[q.full] = self.resource(f)

    def q_max_running_apps(self, q: _QueueRead, f: Element) -> None:
        self.conf.queue_max_apps[q.full] = int(self.number(f, _java_int))

    def q_max_am_share(self, q: _QueueRead, f: Element) -> None:
        self.conf.queue_max_am_shares[q.full] = min(self.number(f, _java_float), 1.0)
        q.max_am_set = True

    def q_max_container_allocation(self, q: _QueueRead, f: Element) -> None:
        r = self.resource(f)
        if r.resource is None:
            raise self.fail(f, "maxContainerAllocation must be absolute, not a percentage")
        self.conf.max_container_allocation[q.full] = r.resource

    def q_weight(self, q: _QueueRead, f: Element) -> None:
        self.conf.weights[q.full] = f32(self.number(f, _java_double))

    def q_min_share_timeout(self, q: _QueueRead, f: Element) -> None:
        q.timeouts["min"] = int(self.number(f, _java_long)) * 1000

    def q_fair_share_timeout(self, q: _QueueRead, f: Element) -> None:
        q.timeouts["fair"] = int(self.number(f, _java_long)) * 1000

    def q_fair_share_threshold(self, q: _QueueRead, f: Element) -> None:
        self.conf.fair_share_thresholds[q.full] = max(min(self.number(f, _java_float), 1.0), 0.0)

    def q_policy(self, q: _QueueRead, f: Element) -> None:
        self.conf.queue_policies[q.full] = self.policy(f)

    def q_submit_acl(self, q: _QueueRead, f: Element) -> None:
        self.conf.acls.setdefault(q.full, {})[SUBMIT] = AccessControlList(f.text or "")

    def q_administer_acl(self, q: _QueueRead, f: Element) -> None:
        self.conf.acls.setdefault(q.full, {})[ADMINISTER] = AccessControlList(f.text or "")

    def q_reservation(self, q: _QueueRead, f: Element) -> None:
        q.reservable = True
        self.conf.reservable.add(q.full)
        self.parents.append(q.full)

    def q_allow_preemption_from(self, q: _QueueRead, f: Element) -> None:
        if self.text(f).lower() != "true":
            self.conf.non_preemptable.add(q.full)

    def q_child(self, q: _QueueRead, f: Element) -> None:
        self.queue(q.full, f)
        q.is_leaf = False

    def check_policies(self, root: Element) -> None:
        """Parents cannot be fifo; a fair parent cannot have drf children."""
        conf = self.conf
        parents = set(self.parents) | {ROOT}
        for name in sorted(parents):
            policy = conf.policy(name)
            if policy.leaf_only and name not in conf.reservable:
                line = conf.queue_lines.get(name, root.line)
                raise InputError(
                    self.path,
                    line,
                    f"<queue name={name!r}>: the fifo policy is only allowed on leaf queues",
                )
        for name in sorted({*self.leaves, *self.parents}):
            parent = name.rsplit(".", 1)[0] if "." in name else None
            if parent is None:
                continue
            if not conf.policy(parent).child_allowed(conf.policy(name)):
                raise InputError(
                    self.path,
                    conf.queue_lines.get(name, root.line),
                    f"<queue name={name!r}>: policy {conf.policy(name).name} is not allowed under "
                    f"parent {parent} with policy {conf.policy(parent).name}",
                )

    def placement(self, el: Element) -> list[Rule]:
        rules = [self.rule(r) for r in el.children]
        bad = PlacementPolicy.check(rules)
        if bad is not None:
            index, message = bad
            at = el.children[index] if index < len(el.children) else el
            raise self.fail(at, message)
        return rules

    def rule(self, el: Element) -> Rule:
        kind = el.attrs.get("name", "")
        if not kind:
            raise self.fail(el, "No name provided for a rule element")
        create = el.attrs.get("create", "true").lower() == "true"
        args = {k: v for k, v in el.attrs.items() if k not in ("name", "create")}
        if kind == placement.NestedUserQueue.kind:
            nested = next((c for c in el.children if c.tag == "rule"), None)
            if nested is None:
                raise self.fail(el, "No nested rule specified in <nestedUserQueue> rule")
            return placement.NestedUserQueue(self.rule(nested), create, args)
        rule_class = placement.RULES.get(kind)
        if rule_class is None:
            raise self.fail(el, f"No rule class found for {kind}")
        return rule_class(create, args)


@dataclass
class _QueueRead:
    """What reading one <queue> element has found so far."""

    full: str
    is_leaf: bool = True
    reservable: bool = False
    max_am_set: bool = False
    timeouts: dict[str, int] = field(default_factory=dict)


_QUEUE_ELEMENTS: dict[str, Callable[[_Loader, _QueueRead, Element], None]] = {
    "minResources": _Loader.q_min_resources,
    "maxResources": _Loader.q_max_resources,
    "maxChildResources": _Loader.q_max_child_resources,
    "maxRunningApps": _Loader.q_max_running_apps,
    "maxAMShare": _Loader.q_max_am_share,
    "maxContainerAllocation": _Loader.q_max_container_allocation,
    "weight": _Loader.q_weight,
    "minSharePreemptionTimeout": _Loader.q_min_share_timeout,
    "fairSharePreemptionTimeout": _Loader.q_fair_share_timeout,
    "fairSharePreemptionThreshold": _Loader.q_fair_share_threshold,
    "schedulingPolicy": _Loader.q_policy,
    "schedulingMode": _Loader.q_policy,
    "aclSubmitApps": _Loader.q_submit_acl,
    "aclAdministerApps": _Loader.q_administer_acl,
    "reservation": _Loader.q_reservation,
    "allowPreemptionFrom": _Loader.q_allow_preemption_from,
    "queue": _Loader.q_child,
    "pool": _Loader.q_child,
}
"""Element name inside <queue> -> how it is read (AllocationFileQueueParser's
if-chain as a table); an element not listed is ignored."""


def load(path: Path, resource_types: tuple[str, ...] = ()) -> AllocationConfiguration:
    """Read and validate an allocation file; raises InputError."""
    loader = _Loader(path, resource_types)
    return loader.load(_read_tree(path))


def _hash_set_order(names: list[str]) -> tuple[str, ...]:
    """`names` (in the order they were added) as a java.util.HashSet of them
    iterates."""
    unique = list(dict.fromkeys(names))
    return tuple(javahash.hash_order(unique, javahash.string_hash, len(unique)))

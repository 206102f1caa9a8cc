"""What emu's own schedulers do with each configuration property: one table.

A what-if run that accepts a setting and quietly runs without it answers a
different question than the one asked, and looks right. So every property
emu reads is in `RULES`, with one of three outcomes:

- emulated: emu's scheduler (or RM, or simulator) reads it and it takes effect;
- refused: Hadoop's scheduler would act on it and emu's port does not. The run
  stops with one line naming the file and the property, unless
  `emu.allow-unsupported` (`--allow-unsupported`) is set: then it runs
  without it, with one warning each, listed in summary.json's `unsupported`;
- no effect: accepted, and changes nothing here (a knob of SLS's Java
  machinery, or of a feature whose inputs emu never produces).

A property no rule names is not read at all (`--print-simulation` lists it
as ignored), and one whose name is close to a name Hadoop or emu knows gets a
warning with the likely name (`typo`). With Hadoop's own scheduler
(`emu.scheduler.impl=hadoop`) nothing is refused: Hadoop decides.

The same table renders docs/configuration.md (`markdown`), so the document
cannot drift from the code that decides.
"""

from __future__ import annotations

import difflib
import os
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from xml.parsers import expat

from emu.config.configuration import Configuration
from emu.config.hadoop_names import NAMES, QUEUE_KEYS
from emu.errors import InputError

EMULATED, REFUSED, NO_EFFECT = "emulated", "refused", "no effect"
ALLOW = "emu.allow-unsupported"
"""Run without what emu does not emulate (one warning each) instead of refusing."""
CAPACITY, FAIR, FIFO = "capacity", "fair", "fifo"
SCHEDULER_NAMES = {CAPACITY: "CapacityScheduler", FAIR: "FairScheduler", FIFO: "FifoScheduler"}
CAPACITY_QUEUE_KEYS = (
    "queues",
    "capacity",
    "maximum-capacity",
    "minimum-user-limit-percent",
    "user-limit-factor",
    "maximum-allocation-mb",
    "maximum-allocation-vcores",
    "maximum-applications",
    "maximum-am-resource-percent",
    "state",
    "acl_submit_applications",
    "acl_administer_queue",
    "intra-queue-preemption.disable_preemption",
    "disable_preemption",
    "ordering-policy",
    "priority",
    "reservable",
    "max-parallel-apps",
    "accessible-node-labels",
    "default-node-label-expression",
    "multi-node-sorting.policy",
)
"""The per-queue keys emu's CapacityScheduler reads (`capacity.config`); one
of these for a queue no `queues` list defines is an error there. A key
ending in another key comes before it: the first suffix that matches names
the queue."""

_CS = "yarn.scheduler.capacity."
_FS = "yarn.scheduler.fair."
_PREEMPT = "yarn.resourcemanager.monitor.capacity.preemption."
_TRUE = r"(?i)\s*true\s*$"
_FALSE = r"(?i)\s*false\s*$"
_JSON = r"(?i)\s*json\s*$"
_POSITIVE = r"\s*\+?0*[1-9]"
_WHEN_TEXT = {
    _TRUE: "is true",
    _FALSE: "is false",
    _JSON: "is json",
    _POSITIVE: "is positive",
}
# Placeholders of a rule's pattern: a queue path (root, root.a, root.a.b),
# the rest of a name, and (any other <...>) one name component.
_PLACEHOLDERS = {"<queue>": r"root(?:\.[^.]+)*?", "*": r".+"}
_COMPONENT = r"[^.]+"


@dataclass(frozen=True)
class Rule:
    """Properties matching `pattern` (`<queue>` a queue path, `<x>` one name
    component, `*` the rest), when their value matches `when` (a regex;
    empty: any value), for `scheduler` (empty: any of emu's)."""

    pattern: str
    status: str
    scheduler: str = ""
    feature: str = ""
    """Refused: what emu does not emulate, as the refusal names it."""
    note: str = ""
    """No effect: why. Emulated: what it does, when the name does not say."""
    when: str = ""
    optional: bool = True
    """Refused: --allow-unsupported may run without it (False: no run
    without it would answer the question, e.g. capacities in resources)."""
    instead: str = ""
    """Refused and not optional: what else to do besides Hadoop's scheduler."""
    regex: re.Pattern[str] = field(init=False, repr=False, compare=False)
    value_regex: re.Pattern[str] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        parts = re.split(r"(<queue>|<[a-z-]+>|\*)", self.pattern)
        body = "".join(
            _PLACEHOLDERS.get(p, _COMPONENT) if p.startswith("<") or p == "*" else re.escape(p)
            for p in parts
        )
        object.__setattr__(self, "regex", re.compile(body + "$"))
        object.__setattr__(self, "value_regex", re.compile(self.when) if self.when else None)

    def applies(self, name: str, value: str | None) -> bool:
        if self.regex.match(name) is None:
            return False
        return self.value_regex is None or self.value_regex.match(value or "") is not None

    def for_scheduler(self, scheduler: str) -> bool:
        return not self.scheduler or self.scheduler == scheduler


def _e(pattern: str, scheduler: str = "", note: str = "") -> Rule:
    return Rule(pattern, EMULATED, scheduler, note=note)


def _r(pattern: str, feature: str, scheduler: str = "", when: str = "") -> Rule:
    return Rule(pattern, REFUSED, scheduler, feature=feature, when=when)


def _n(pattern: str, note: str, scheduler: str = "") -> Rule:
    return Rule(pattern, NO_EFFECT, scheduler, note=note)


AS_HADOOP = "with any other value, emu behaves as Hadoop does with it"
LABELS_ENABLED = "yarn.node-labels.enabled"
_NO_RESERVATIONS = (
    "emu's inputs submit no reservations, so the reservation system never acts; "
    "reservable queues are emulated as plan queues with their default queue"
)

_QUEUE_NOTES = {
    "capacity": (
        "percent, a weight (2w), or resources ([memory=10240,vcores=10]: the guarantee "
        "follows the cluster's size, scaled down when the parent's cannot cover its children's)"
    ),
    "maximum-capacity": "percent, or resources for a queue whose capacity is in resources",
}

RULES: tuple[Rule, ...] = (
    # --- refused: Hadoop's scheduler acts on these, emu's port does not -------------------
    _e(
        _CS + "<queue>.accessible-node-labels.<label>.capacity",
        CAPACITY,
        note=(
            "percent, or resources ([memory=...,vcores=...]) for a queue whose capacity is "
            "in resources: the guarantee in the partition follows the partition's size, "
            "scaled down when the parent's there cannot cover its children's"
        ),
    ),
    _e(
        _CS + "<queue>.accessible-node-labels.<label>.maximum-capacity",
        CAPACITY,
        note=(
            "percent, or resources for a queue whose label capacity is in resources "
            "(a queue in percent reads resources here as 100 %)"
        ),
    ),
    _r(
        _CS + "<queue>.accessible-node-labels.<label>.*",
        "per-label queue settings besides capacity and maximum-capacity",
        CAPACITY,
    ),
    _e(
        "yarn.resourcemanager.node-labels.am.allow-non-exclusive-allocation",
        CAPACITY,
        note="an AM container may take an idle non-exclusive node's resources",
    ),
    _e(
        LABELS_ENABLED,
        CAPACITY,
        note="node labels in the topology file or the trace need it true, as in Hadoop",
    ),
    _r(_CS + "<queue>.maximum-application-lifetime", "application lifetimes", CAPACITY, _POSITIVE),
    _r(_CS + "<queue>.default-application-lifetime", "application lifetimes", CAPACITY, _POSITIVE),
    _e(
        _CS + "multi-node-placement-enabled",
        CAPACITY,
        note="global scheduling: each offer is a partition's recently heartbeated nodes, "
        "walked in each app's sorting-policy order",
    ),
    _e(_CS + "multi-node-sorting.policy.names", CAPACITY, note="the policies a sorter runs for"),
    _e(
        _CS + "multi-node-sorting.policy.*",
        CAPACITY,
        note="a policy's class (ResourceUsageMultiNodeLookupPolicy; `default` needs none) "
        "and sorting-interval.ms (1,000; 0 sorts on every use), on emu's clock",
    ),
    _e(
        _CS + "multi-node-sorting.policy",
        CAPACITY,
        note="the sorting policy of queues that name none",
    ),
    _r(_FS + "continuous-scheduling-enabled", "continuous scheduling", FAIR, _TRUE),
    _r(_CS + "lazy-preemption-enabled", "lazy preemption", CAPACITY, _TRUE),
    _r(_CS + "legacy-queue-mode.enabled", "the non-legacy queue mode", CAPACITY, _FALSE),
    _r(
        "yarn.resourcemanager.scheduler.monitor.policies",
        "QueueManagementDynamicEditPolicy (re-sizing legacy auto-created queues over time)",
        CAPACITY,
        r"(?s).*QueueManagementDynamicEditPolicy",
    ),
    _r(_CS + "mapping-rule-format", "JSON placement rules", CAPACITY, _JSON),
    _r(
        _CS + "skip-allocate-on-nodes-with-reserved-containers",
        "skipping nodes with reserved containers",
        CAPACITY,
        _TRUE,
    ),
    _r(
        _CS + "<queue>.default-application-priority",
        "queue default application priorities",
        CAPACITY,
        _POSITIVE,
    ),
    _r(
        _CS + "<queue>.maximum-allocation",
        "a queue's maximum-allocation as a resource string (use maximum-allocation-mb/-vcores)",
        CAPACITY,
    ),
    _r(_FS + "am.preemption", "AM containers exempt from preemption", FAIR, _FALSE),
    _r(_FS + "am.preemption.*", "AM containers exempt from preemption", FAIR, _FALSE),
    # --- no effect ---------------------------------------------------------------------------
    _n(
        _CS + "<queue>.auto-create-child-queue.management-policy",
        "legacy auto-created queues are sized by GuaranteedOrZeroCapacityOverTimePolicy's "
        "initial configuration; the queue-management monitor policy does not run",
        CAPACITY,
    ),
    _n(_CS + "mapping-rule-json", "read only with mapping-rule-format=json", CAPACITY),
    _n(_CS + "mapping-rule-json-file", "read only with mapping-rule-format=json", CAPACITY),
    _e(
        _CS + "schedule-asynchronously.enable",
        CAPACITY,
        note="passes over every node each interval on emu's clock; default false in 3.4.2, "
        "true in 3.5.0 (emu.hadoop.version)",
    ),
    _e(_CS + "schedule-asynchronously.scheduling-interval-ms", CAPACITY, note="at least 1"),
    _e(_CS + "schedule-asynchronously.maximum-threads", CAPACITY, note="passes per tick"),
    _n(
        _CS + "schedule-asynchronously.maximum-pending-backlogs",
        "emu commits each proposal as it is made: the backlog is always empty",
        CAPACITY,
    ),
    _e("yarn.scheduler.skip.node.multiplier", note="asynchronous passes skip quiet nodes"),
    _e("emu.scheduler.async-seed", note="start nodes of asynchronous passes"),
    _n(_FS + "continuous-scheduling-sleep-ms", "acts only with continuous scheduling", FAIR),
    _n(_FS + "locality-delay-node-ms", "acts only with continuous scheduling", FAIR),
    _n(_FS + "locality-delay-rack-ms", "acts only with continuous scheduling", FAIR),
    _n("yarn.resourcemanager.reservation-system.*", _NO_RESERVATIONS),
    _n(_CS + "<queue>.show-reservations-as-queues", _NO_RESERVATIONS, CAPACITY),
    _n(_CS + "<queue>.reservation-<knob>", _NO_RESERVATIONS, CAPACITY),
    _n(_CS + "<queue>.instantaneous-max-capacity", _NO_RESERVATIONS, CAPACITY),
    _n(_CS + "<queue>.average-capacity", _NO_RESERVATIONS, CAPACITY),
    _n(_CS + "<queue>.acl_<reservation-acl>_reservations", _NO_RESERVATIONS, CAPACITY),
    _n(
        "org.apache.hadoop.yarn.server.resourcemanager.scheduler.*",
        "sls-runner.xml's table of SLS's scheduler metrics classes; emu records metrics itself",
    ),
    _n("yarn.sls.runner.pool.size", "emu runs every NM and AM in one trio loop, no thread pool"),
    _n("yarn.sls.dns.caching.enabled", "emu resolves no host names"),
    _n("yarn.sls.metrics.web.address.port", "emu serves /simulate and /track only on --web-port"),
    _n("yarn.sls.metrics.timer.window.size", "timecosts are per-second means"),
    _n("yarn.sls.metrics.output", "use --output-dir"),
    _n("yarn.sls.scheduler.class", "use yarn.resourcemanager.scheduler.class"),
    _n("yarn.sls.nm.resource.utilization.ratio", "emu does not model NM resource utilization"),
    # --- emulated: the RM, the simulator and emu's own settings ---------------------------
    _e("yarn.resourcemanager.scheduler.class", note="fifo, capacity, fair or Hadoop's class"),
    _e("emu.scheduler.impl", note="emu (emu's port) or hadoop (Hadoop's scheduler)"),
    _e("emu.scheduler.shortcuts"),
    _e("emu.hadoop.classpath"),
    _e("emu.hadoop.version", note="3.4.2 (the default) or 3.5.0: whose defaults and jars"),
    _e("emu.state-store.fsync"),
    _e(ALLOW, note="run without refused properties, one warning each"),
    _e("yarn.resource-types"),
    _e("yarn.resource-types.<type>.minimum-allocation"),
    _e("yarn.resource-types.<type>.maximum-allocation"),
    _e("yarn.scheduler.minimum-allocation-mb"),
    _e("yarn.scheduler.minimum-allocation-vcores"),
    _e("yarn.scheduler.maximum-allocation-mb"),
    _e("yarn.scheduler.maximum-allocation-vcores"),
    _e("yarn.resourcemanager.nodemanagers.heartbeat-interval-ms"),
    _e("yarn.nm.liveness-monitor.expiry-interval-ms"),
    _e("yarn.am.liveness-monitor.expiry-interval-ms"),
    _e("yarn.resourcemanager.am.max-attempts"),
    _e("yarn.resourcemanager.rm.container-allocation.expiry-interval-ms"),
    _e("yarn.resourcemanager.recovery.enabled"),
    _e("yarn.resourcemanager.work-preserving-recovery.enabled"),
    _e("yarn.resourcemanager.fs.state-store.uri"),
    _e("yarn.resourcemanager.leveldb-state-store.path"),
    _e("hadoop.tmp.dir", note="where the state store goes when no store path is set"),
    _e("yarn.resourcemanager.max-completed-applications"),
    _e("yarn.resourcemanager.state-store.max-completed-applications"),
    _e(
        "yarn.resourcemanager.scheduler.monitor.enable",
        note="runs the monitor policies: preemption, invariant checks",
    ),
    _e("yarn.resourcemanager.scheduler.monitor.policies"),
    _e("yarn.resourcemanager.invariant-checker.file"),
    _e("hadoop.user.group.static.mapping.overrides", note="users' groups"),
    _e("yarn.sls.nm.memory.mb"),
    _e("yarn.sls.nm.vcores"),
    _e("yarn.sls.nm.heartbeat.interval.ms"),
    _e("yarn.sls.nm.<type>", note="a node's amount of another resource type"),
    _e("yarn.sls.am.heartbeat.interval.ms"),
    _e("yarn.sls.am.type.<name>"),
    _e("yarn.sls.am.container.memory"),
    _e("yarn.sls.am.container.vcores"),
    _e("yarn.sls.container.memory.mb"),
    _e("yarn.sls.container.vcores"),
    _e("yarn.sls.metrics.switch"),
    _e("yarn.sls.metrics.record.interval.ms"),
    # --- emulated: emu's CapacityScheduler ----------------------------------------------------
    *(
        _e(_CS + "<queue>." + key, CAPACITY, note=note)
        for key, note in (
            ("auto-create-child-queue.enabled", "a managed parent: legacy auto-created leaves"),
            ("auto-create-child-queue.max-queues", ""),
            ("auto-create-child-queue.fail-on-exceeding-parent-capacity", ""),
            ("leaf-queue-template.*", "the settings of a legacy auto-created leaf"),
            ("auto-queue-creation-v2.enabled", "flexible auto-created queues (weights)"),
            ("auto-queue-creation-v2.template.*", "settings of flexible auto-created queues"),
            ("auto-queue-creation-v2.leaf-template.*", "settings of flexible auto-created leaves"),
            (
                "auto-queue-creation-v2.parent-template.*",
                "settings of flexible auto-created parents",
            ),
            ("auto-queue-creation-v2.max-queues", ""),
            ("auto-queue-creation-v2.maximum-queue-depth", ""),
            (
                "auto-queue-creation-v2.queue-auto-removal.enable",
                "AutoCreatedQueueDeletionPolicy removes the idle queue",
            ),
        )
    ),
    _e(_CS + "auto-queue-creation-v2.maximum-queue-depth", CAPACITY),
    _e(
        _CS + "auto-queue-creation-v2.queue-expiration-time",
        CAPACITY,
        note="seconds an auto-created queue stays idle before AutoCreatedQueueDeletionPolicy "
        "removes it; also that policy's interval",
    ),
    *(
        _e(_CS + key, CAPACITY)
        for key in (
            "resource-calculator",
            "maximum-applications",
            "maximum-am-resource-percent",
            "minimum-user-limit-percent",
            "user-limit-factor",
            "max-parallel-apps",
            "user.max-parallel-apps",
            "user.<user>.max-parallel-apps",
            "global-queue-max-application",
            "node-locality-delay",
            "rack-locality-additional-delay",
            "rack-locality-full-reset",
            "per-node-heartbeat.maximum-offswitch-assignments",
            "per-node-heartbeat.multiple-assignments-enabled",
            "per-node-heartbeat.maximum-container-assignments",
            "reservations-continue-look-all-nodes",
            "queue-mappings-override.enable",
        )
    ),
    _e(
        _CS + "queue-mappings",
        CAPACITY,
        note=(
            "u:/g: rules; the first that matches the user decides: its queue, or root.default "
            "when that queue is not a leaf and cannot be created (the app is rejected "
            "without a root.default leaf)"
        ),
    ),
    *(
        _e(_CS + "<queue>." + key, CAPACITY, note=_QUEUE_NOTES.get(key, ""))
        for key in (*CAPACITY_QUEUE_KEYS, "ordering-policy.fair.enable-size-based-weight")
    ),
    _e(
        _CS + "<queue>.user-settings.<user>.weight",
        CAPACITY,
        note="the user's share of the user limit; a parent's weights hold for its queues below",
    ),
    _e("yarn.acl.enable", CAPACITY),
    _e("yarn.cluster.max-application-priority", CAPACITY),
    *(
        _e(_PREEMPT + key, CAPACITY)
        for key in (
            "observe_only",
            "monitoring_interval",
            "max_wait_before_kill",
            "total_preemption_per_round",
            "max_ignored_over_capacity",
            "natural_termination_factor",
            "intra-queue-preemption.enabled",
            "intra-queue-preemption.minimum-threshold",
            "intra-queue-preemption.max-allowable-limit",
            "intra-queue-preemption.preemption-order-policy",
            "intra-queue-preemption.conservative-drf",
        )
    ),
    # --- emulated: emu's FairScheduler ----------------------------------------------------------
    *(
        _e(_FS + key, FAIR)
        for key in (
            "allocation.file",
            "assignmultiple",
            "dynamic.max.assign",
            "max.assign",
            "locality.threshold.node",
            "locality.threshold.rack",
            "sizebasedweight",
            "preemption",
            "preemption.cluster-utilization-threshold",
            "waitTimeBeforeKill",
            "waitTimeBeforeNextStarvationCheck",
            "update-interval-ms",
            "allow-undeclared-pools",
            "user-as-default-queue",
            "reservable-nodes",
        )
    ),
    _e("yarn.scheduler.increment-allocation-mb", FAIR),
    _e("yarn.scheduler.increment-allocation-vcores", FAIR),
    _e("yarn.resource-types.<type>.increment-allocation", FAIR),
    _e("yarn.scheduler.reservation-threshold.increment-multiple", FAIR),
)

FAIR_ELEMENTS_NO_EFFECT = {
    "reservation-agent": _NO_RESERVATIONS,
    "reservation-planner": _NO_RESERVATIONS,
    "reservation-policy": _NO_RESERVATIONS,
    "aclSubmitReservations": _NO_RESERVATIONS,
    "aclAdministerReservations": _NO_RESERVATIONS,
    "aclListReservations": _NO_RESERVATIONS,
}
"""Allocation-file elements Hadoop reads and emu's FairScheduler does not:
each only acts on reservation requests."""


def allocation_file_notes(path: str | os.PathLike[str]) -> list[tuple[str, str]]:
    """(element with its line, why it has no effect) for each allocation-file
    element of `FAIR_ELEMENTS_NO_EFFECT` in `path`; the file's other problems
    are the FairScheduler's loader's to report, so a file that does not parse
    gives nothing here."""
    found: list[tuple[str, str]] = []
    parser = expat.ParserCreate()

    def start(tag: str, attrs: dict[str, str]) -> None:
        why = FAIR_ELEMENTS_NO_EFFECT.get(tag)
        if why is not None:
            found.append((f"{path}:{parser.CurrentLineNumber}: <{tag}>", why))

    parser.StartElementHandler = start
    try:
        with open(path, "rb") as f:
            parser.ParseFile(f)
    except (OSError, expat.ExpatError):
        return []
    return found


def _check_table(rules: tuple[Rule, ...]) -> None:
    """Refuse a table in which a rule can never apply: listed twice, or
    shadowed by an earlier rule that holds for every value (checked on a
    sample name of the rule's pattern); and refusals and rules without
    effect must say why."""
    for i, rule in enumerate(rules):
        sample = re.sub(r"<[a-z-]+>|\*", "x", rule.pattern.replace("<queue>", "root.q"))
        for earlier in rules[:i]:
            if not earlier.when and earlier.applies(sample, None):
                raise ValueError(f"support table: {rule.pattern} is shadowed by {earlier.pattern}")
        if rule.status == REFUSED and not rule.feature:
            raise ValueError(f"support table: refused {rule.pattern} names no feature")
        if rule.status == NO_EFFECT and not rule.note:
            raise ValueError(f"support table: {rule.pattern} has no effect without a reason")


_check_table(RULES)


_AS_HADOOP = {
    rule.pattern: Rule(rule.pattern, EMULATED, rule.scheduler, note="the feature is off")
    for rule in RULES
    if rule.status == REFUSED and rule.when
}


def rule_for(name: str, value: str | None) -> Rule | None:
    """The first rule for `name` with `value`, or None (emu does not read it).
    A property refused only for some values is emulated for the others (the
    feature is off, as emu runs)."""
    for rule in RULES:
        if rule.applies(name, value):
            return rule
    for rule in RULES:
        if rule.when and rule.status == REFUSED and rule.regex.match(name) is not None:
            return _AS_HADOOP[rule.pattern]
    return None


def refused_rule(name: str, value: str | None, scheduler: str) -> Rule | None:
    """The refusal `name` = `value` meets under emu's `scheduler`, or None."""
    rule = rule_for(name, value)
    if rule is None or rule.status != REFUSED or not rule.for_scheduler(scheduler):
        return None
    return rule


def refusal(rule: Rule, scheduler: str) -> str:
    """The refusal's message: what is not emulated, and what to do."""
    who = SCHEDULER_NAMES.get(scheduler, "scheduler")
    text = (
        f"emu's {who} does not emulate {rule.feature}; "
        "run Hadoop's own scheduler with --scheduler-impl hadoop"
    )
    if rule.optional:
        return text + ", or pass --allow-unsupported to run without it"
    return text + f", or {rule.instead}"


def allowed(conf: Configuration) -> bool:
    """Whether the run goes without refused properties (`emu.allow-unsupported`)."""
    return conf.get_bool(ALLOW, False)


def hadoop_decides(conf: Configuration) -> bool:
    """Hadoop's own scheduler decides (`emu.scheduler.impl=hadoop`): nothing is refused."""
    return conf.get_str("emu.scheduler.impl", "emu").strip().lower() == "hadoop"


# --- the check before a run ------------------------------------------------------------------
@dataclass
class Unsupported:
    """One refused property a run goes without (--allow-unsupported)."""

    property: str
    source: str
    feature: str

    def to_json(self) -> dict[str, str]:
        return {"property": self.property, "source": self.source, "feature": self.feature}


def check(
    conf: Configuration, scheduler: str, warn: Callable[[str], None] | None = None
) -> list[Unsupported]:
    """Refuse the properties emu's `scheduler` does not emulate, or, when
    allowed, warn once per property and return them (for summary.json).
    Also warns about likely misspelt property names.

    Raises InputError for the first refusal when not allowed, or for one
    that no run could go without."""
    say = warn if warn is not None else _stderr
    for line in typos(conf):
        say(line)
    if hadoop_decides(conf):
        return []
    found: list[Unsupported] = []
    for name in conf:
        rule = refused_rule(name, conf.get(name), scheduler)
        if rule is None:
            continue
        source = conf.sources.get(name, "configuration")
        if not allowed(conf) or not rule.optional:
            raise InputError(source, name, refusal(rule, scheduler))
        found.append(Unsupported(name, source, rule.feature))
    for u in found:
        say(_going_without(u))
    return found


def check_changes(
    conf: Configuration,
    scheduler: str,
    refreshes: Iterable[tuple[str, Iterable[tuple[str, str]]]],
    warn: Callable[[str], None] | None = None,
) -> list[Unsupported]:
    """`check` for the properties of queue refreshes a run will make
    ((where, properties) each), before it starts rather than mid-run."""
    found: list[Unsupported] = []
    for where, props in refreshes:
        changed = Configuration(dict(props), where)
        for flag in (ALLOW, "emu.scheduler.impl"):
            if flag in conf:
                changed.set(flag, conf.get(flag), conf.sources.get(flag, "configuration"))
        found += check(changed, scheduler, warn)
    return found


def check_labels(
    conf: Configuration,
    scheduler: str,
    source: str,
    where: str,
    key: str,
    warn: Callable[[str], None] | None = None,
) -> list[Unsupported]:
    """The same for node labels in an input file rather than a property: a
    topology file's node `labels` or a trace job's `job.label.expression`
    (`where` names the first node or job that has them, `key` the field).
    emu's CapacityScheduler emulates them, and as Hadoop's RM refuses them
    unless `yarn.node-labels.enabled` is true, so does it."""
    if hadoop_decides(conf):
        return []
    if scheduler == CAPACITY:
        if not conf.get_bool(LABELS_ENABLED, False):
            raise InputError(
                source,
                f"{where}: {key}",
                f"node labels need {LABELS_ENABLED}=true (Hadoop's RM refuses them without it)",
            )
        return []
    if not allowed(conf):
        message = refusal(_r(key, "node labels"), scheduler)
        raise InputError(source, f"{where}: {key}", message)
    found = Unsupported(key, source, "node labels")
    (warn if warn is not None else _stderr)(_going_without(found))
    return [found]


def _going_without(u: Unsupported) -> str:
    return f"{u.source}: {u.property}: {u.feature} not emulated, running without it"


def _stderr(line: str) -> None:
    print(f"emu: warning: {line}", file=sys.stderr)


def add_to_summary(data: dict[str, Any], unsupported: list[Unsupported]) -> None:
    """summary.json's `unsupported` list, only when the run went without something."""
    if unsupported:
        data["unsupported"] = [u.to_json() for u in unsupported]


# --- --print-simulation ----------------------------------------------------------------------
def classify(
    conf: Configuration, scheduler: str
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(ignored, accepted-without-effect) properties: the first with where
    each came from, the second with why it changes nothing. Refused
    properties a run goes without count as without effect."""
    hadoop = hadoop_decides(conf)
    ignored: list[tuple[str, str]] = []
    no_effect: list[tuple[str, str]] = []
    for name in conf:
        rule = rule_for(name, conf.get(name))
        if rule is None:
            ignored.append((name, conf.sources.get(name, "")))
        elif not rule.for_scheduler(scheduler) and not hadoop:
            who = SCHEDULER_NAMES[rule.scheduler]
            no_effect.append((name, f"only the {who} reads it; the scheduler is {scheduler}"))
        elif rule.status == NO_EFFECT and not hadoop:
            no_effect.append((name, rule.note))
        elif rule.status == REFUSED and not hadoop:
            no_effect.append((name, f"{rule.feature} not emulated (--allow-unsupported)"))
    return ignored, no_effect


# --- likely typos ----------------------------------------------------------------------------
_QUEUE_PREFIX = _CS + "root."
_EMU_QUEUE_KEYS = frozenset(
    r.pattern[len(_CS + "<queue>.") :] for r in RULES if r.pattern.startswith(_CS + "<queue>.")
)
_LITERAL_NAMES = frozenset(
    r.pattern for r in RULES if "<" not in r.pattern and "*" not in r.pattern
)
_KNOWN: dict[tuple[str, int], list[str]] = {}
"""Known names by (first component, number of components): a typo inside a
component keeps both, and comparing within the group keeps the check cheap."""
for _name in sorted(NAMES | _LITERAL_NAMES):
    _KNOWN.setdefault((_name.split(".", 1)[0], _name.count(".")), []).append(_name)
_LEAVES = tuple(
    sorted({k.rsplit(".", 1)[-1] for k in QUEUE_KEYS | _EMU_QUEUE_KEYS if "<" not in k})
)
SIMILARITY = 0.9
"""How close an unknown name must be to a known one to be taken for its typo
(one wrong letter in a 30-letter name scores about 0.97)."""
LEAF_SIMILARITY = 0.8
"""The same for the key after a queue path, a shorter word."""


def likely_name(name: str) -> str | None:
    """The known property `name` is probably a misspelling of, or None if
    `name` is known or close to nothing known."""
    if name in NAMES or rule_for(name, None) is not None or _ends_in_queue_key(name):
        return None
    if name.startswith(_QUEUE_PREFIX):
        head, _, leaf = name.rpartition(".")
        close = difflib.get_close_matches(leaf, _LEAVES, n=1, cutoff=LEAF_SIMILARITY)
        return f"{head}.{close[0]}" if close else None
    group = _KNOWN.get((name.split(".", 1)[0], name.count(".")), [])
    close = difflib.get_close_matches(name, group, n=1, cutoff=SIMILARITY)
    return close[0] if close else None


def _ends_in_queue_key(name: str) -> bool:
    if not name.startswith(_QUEUE_PREFIX):
        return False
    parts = name.split(".")
    return any(".".join(parts[i:]) in QUEUE_KEYS for i in range(4, len(parts)))


def typos(conf: Configuration) -> list[str]:
    """One warning per property whose name looks like a misspelt known one."""
    out = []
    for name in conf:
        guess = likely_name(name)
        if guess is not None:
            source = conf.sources.get(name, "configuration")
            out.append(
                f"{source}: {name}: not a property Hadoop or emu knows; did you mean {guess}?"
            )
    return out


# --- docs/configuration.md -------------------------------------------------------------------
def markdown() -> str:
    """The table as Markdown, for docs/configuration.md."""
    lines = [
        "# Configuration: what emu's schedulers emulate",
        "",
        "Generated from `emu/config/support.py` by `make docs`; do not edit.",
        "",
        "Every property emu reads from yarn-site.xml, capacity-scheduler.xml,",
        "sls-runner.xml, a scenario's [config] or `-D` is listed here. **emulated**:",
        "it takes effect. **refused**: Hadoop's scheduler acts on it and emu's does",
        "not; the run stops with one line naming the file and the property (exit 2),",
        "unless `--allow-unsupported` (`emu.allow-unsupported=true`) is given: then",
        "the run goes without it, with one warning each, listed in summary.json's",
        "`unsupported`. With `--scheduler-impl hadoop` Hadoop's own scheduler decides",
        "and nothing is refused. **no effect**: accepted, changes nothing here.",
        "A property not listed is not read (`emu sls --print-simulation` lists it",
        "as ignored); one whose name is close to a name Hadoop 3.4.2 or emu knows",
        "gets a warning with the likely name.",
        "",
        "`<queue>` is a queue path (`root.a.b`), `<x>` one name component, `*` the rest.",
        "",
        "Defaults are those of the Hadoop release `--hadoop-version` names",
        "(`emu.hadoop.version`: 3.4.2, the default, or 3.5.0). They differ in one",
        "place: 3.5.0's CapacityScheduler schedules asynchronously",
        "(`yarn.scheduler.capacity.schedule-asynchronously.enable` true), in passes",
        "over every node each `scheduling-interval-ms` (5) rather than on node",
        "heartbeats; 3.4.2's allocates on each heartbeat. Either can be set",
        "explicitly under either release.",
        "",
        "| property | scheduler | outcome | notes |",
        "|---|---|---|---|",
    ]
    for rule in RULES:
        who = SCHEDULER_NAMES.get(rule.scheduler, "all")
        outcome = rule.status
        if rule.when:
            outcome += f" when the value {_WHEN_TEXT.get(rule.when, rule.when)}"
        if rule.status == REFUSED:
            note = rule.feature + ("" if rule.optional else f" (no run without it: {rule.instead})")
            if rule.when:
                note += f"; {AS_HADOOP}"
        else:
            note = rule.note
        lines.append(f"| `{rule.pattern}` | {who} | {outcome} | {note} |")
    lines += [
        "",
        "## FairScheduler allocation file",
        "",
        "Every element Hadoop's AllocationFileLoaderService reads is read, except:",
        "",
        "| element | outcome | notes |",
        "|---|---|---|",
    ]
    lines += [f"| `<{el}>` | no effect | {why} |" for el, why in FAIR_ELEMENTS_NO_EFFECT.items()]
    lines += [
        "",
        "## SLS inputs",
        "",
        "A topology file node's `labels` and a trace job's `job.label.expression` are",
        "emulated by emu's CapacityScheduler (node partitions, exclusive or not) and",
        "refused by its other schedulers, with the same `--allow-unsupported` and",
        "`--scheduler-impl hadoop` choices.",
        "",
        "Labels changed at run time (`emu admin add-node-labels`, `remove-node-labels`,",
        "`replace-labels-on-node`, or the `[[changes]]` kinds of the same names) are",
        "emulated: the CapacityScheduler moves a relabelled node's running containers'",
        "usage to its new partition; FIFO and Fair accept the changes and ignore them, as",
        "Hadoop's do. They need `yarn.node-labels.enabled` true, as in Hadoop.",
        "",
    ]
    return "\n".join(lines)

"""The FairScheduler's yarn-site properties (Hadoop's
FairSchedulerConfiguration), read once from the RM's Configuration.

User -> group membership, which the primaryGroup and
secondaryGroupExistingQueue placement rules and queue ACLs need, comes from
Hadoop's static mapping property `hadoop.user.group.static.mapping.overrides`
(`user1=group1,group2;user2=;user3=group3`), the first group being the
primary one. Hadoop would ask the operating system about users the property
does not list; emu has no such users, so they have no groups: a
primaryGroup rule then rejects their apps, as Hadoop does for an unknown
user ("No groups returned for user").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from emu.config.configuration import Configuration
from emu.errors import InputError
from emu.resources import Resource
from emu.rm.scheduler.fair.arith import f32

P = "yarn.scheduler.fair."
ALLOCATION_FILE = P + "allocation.file"
DEFAULT_ALLOCATION_FILE = "fair-scheduler.xml"
GROUP_MAPPING = "hadoop.user.group.static.mapping.overrides"
INCREMENT_MB = "yarn.scheduler.increment-allocation-mb"
INCREMENT_VCORES = "yarn.scheduler.increment-allocation-vcores"
UPDATE_INTERVAL_MS = P + "update-interval-ms"
DEFAULT_UPDATE_INTERVAL_MS = 500

_UNITS = {"": 1, "k": 1 / 1024, "m": 1, "g": 1024, "t": 1024 * 1024}
_UNITS.update({"ki": 1 / 1024, "mi": 1, "gi": 1024, "ti": 1024 * 1024})
_VALUE_UNIT = re.compile(r"^(\d+)\s*([a-zA-Z]*)$")


@dataclass(frozen=True)
class FairSettings:
    """The properties; names and defaults are Hadoop's."""

    allocation_file: Path | None
    allocation_file_explicit: bool
    assign_multiple: bool = False
    dynamic_max_assign: bool = True
    max_assign: int = -1
    locality_threshold_node: float = -1.0
    locality_threshold_rack: float = -1.0
    size_based_weight: bool = False
    preemption: bool = False
    preemption_utilization_threshold: float = f32(0.8)
    wait_time_before_kill_ms: int = 15_000
    wait_time_before_next_starvation_check_ms: int = 10_000
    update_interval_ms: int = DEFAULT_UPDATE_INTERVAL_MS
    allow_undeclared_pools: bool = True
    user_as_default_queue: bool = True
    increment: Resource = field(default_factory=lambda: Resource(1024, 1))
    reservation_threshold_multiple: float = f32(2.0)
    reservable_nodes: float = f32(0.05)
    groups: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def groups_of(self, user: str) -> tuple[str, ...]:
        return self.groups.get(user, ())

    @classmethod
    def from_conf(cls, conf: Configuration, minimum: Resource, maximum: Resource) -> FairSettings:
        path, explicit = allocation_file_path(conf)
        interval = conf.get_int(UPDATE_INTERVAL_MS, DEFAULT_UPDATE_INTERVAL_MS)
        settings = cls(
            allocation_file=path,
            allocation_file_explicit=explicit,
            assign_multiple=conf.get_bool(P + "assignmultiple", False),
            dynamic_max_assign=conf.get_bool(P + "dynamic.max.assign", True),
            max_assign=conf.get_int(P + "max.assign", -1),
            locality_threshold_node=f32(conf.get_float(P + "locality.threshold.node", -1.0)),
            locality_threshold_rack=f32(conf.get_float(P + "locality.threshold.rack", -1.0)),
            size_based_weight=conf.get_bool(P + "sizebasedweight", False),
            preemption=conf.get_bool(P + "preemption", False),
            preemption_utilization_threshold=f32(
                conf.get_float(P + "preemption.cluster-utilization-threshold", 0.8)
            ),
            wait_time_before_kill_ms=conf.get_int(P + "waitTimeBeforeKill", 15_000),
            wait_time_before_next_starvation_check_ms=conf.get_int(
                P + "waitTimeBeforeNextStarvationCheck", 10_000
            ),
            update_interval_ms=interval if interval >= 0 else DEFAULT_UPDATE_INTERVAL_MS,
            allow_undeclared_pools=conf.get_bool(P + "allow-undeclared-pools", True),
            user_as_default_queue=conf.get_bool(P + "user-as-default-queue", True),
            increment=_increment(conf),
            reservation_threshold_multiple=f32(
                conf.get_float("yarn.scheduler.reservation-threshold.increment-multiple", 2.0)
            ),
            reservable_nodes=f32(conf.get_float(P + "reservable-nodes", 0.05)),
            groups=parse_group_mapping(conf),
        )
        _validate(conf, minimum, maximum, settings.increment)
        return settings


def _where(conf: Configuration, key: str) -> str:
    return conf.sources.get(key, "configuration")


def _validate(conf: Configuration, minimum: Resource, maximum: Resource, inc: Resource) -> None:
    """FairScheduler.validateConf: sane minimum/maximum, positive increments."""
    if minimum.memory < 0 or minimum.memory > maximum.memory:
        key = "yarn.scheduler.minimum-allocation-mb"
        raise InputError(_where(conf, key), key, "Invalid resource scheduler memory allocation")
    if minimum.vcores < 0 or minimum.vcores > maximum.vcores:
        key = "yarn.scheduler.minimum-allocation-vcores"
        raise InputError(_where(conf, key), key, "Invalid resource scheduler vcores allocation")
    if inc.memory <= 0:
        raise InputError(_where(conf, INCREMENT_MB), INCREMENT_MB, "values must be greater than 0")
    if inc.vcores <= 0:
        raise InputError(
            _where(conf, INCREMENT_VCORES), INCREMENT_VCORES, "values must be greater than 0"
        )


def _increment(conf: Configuration) -> Resource:
    """`yarn.resource-types.{memory-mb,vcores}.increment-allocation` win over
    the older `yarn.scheduler.increment-allocation-{mb,vcores}`."""
    memory = conf.get_int(INCREMENT_MB, 1024)
    vcores = conf.get_int(INCREMENT_VCORES, 1)
    for rtype in ("memory-mb", "vcores"):
        key = f"yarn.resource-types.{rtype}.increment-allocation"
        raw = conf.get(key)
        if raw is None or raw == "":
            continue
        m = _VALUE_UNIT.match(raw)
        unit = m.group(2).lower() if m else None
        if m is None or unit not in _UNITS or (rtype == "vcores" and unit):
            raise InputError(_where(conf, key), key, f'not in "value [unit]" format: {raw!r}')
        v = int(m.group(1))
        if rtype == "memory-mb":
            memory = int(v * _UNITS[unit])
        else:
            vcores = v
    return Resource(memory, vcores)


def parse_group_mapping(conf: Configuration) -> dict[str, tuple[str, ...]]:
    """`user1=group1,group2;user2=;...` (Hadoop's static mapping overrides)."""
    raw = conf.get(GROUP_MAPPING) or ""
    groups: dict[str, tuple[str, ...]] = {}
    for entry in raw.split(";"):
        entry = entry.strip()
        if not entry:
            continue
        user, sep, names = entry.partition("=")
        if not sep or not user.strip():
            raise InputError(
                _where(conf, GROUP_MAPPING),
                GROUP_MAPPING,
                f"invalid entry {entry!r} (expected user=g1,g2)",
            )
        groups[user.strip()] = tuple(g.strip() for g in names.split(",") if g.strip())
    return groups


def allocation_file_path(conf: Configuration) -> tuple[Path | None, bool]:
    """Where the allocation file is and whether it was named explicitly.

    A relative path resolves against the directory of the file that set the
    property (a Hadoop XML file or a scenario), else the working directory.
    Unset, the default name is looked for, as on Hadoop's classpath, beside
    the files the configuration came from (yarn-site.xml's directory first),
    then in the working directory; if there is none, the scheduler runs with
    Hadoop's defaults and no allocation file."""
    raw = conf.get(ALLOCATION_FILE)
    if raw:
        path = Path(raw)
        if not path.is_absolute():
            base = _source_dir(conf.sources.get(ALLOCATION_FILE, ""))
            path = (base if base is not None else Path.cwd()) / path
        return path, True
    dirs: list[Path] = []
    first = _source_dir(conf.sources.get("yarn.resourcemanager.scheduler.class", ""))
    if first is not None:
        dirs.append(first)
    for name in conf:
        d = _source_dir(conf.sources.get(name, ""))
        if d is not None and d not in dirs:
            dirs.append(d)
    dirs.append(Path.cwd())
    for d in dirs:
        candidate = d / DEFAULT_ALLOCATION_FILE
        if candidate.is_file():
            return candidate, False
    return None, False


def _source_dir(source: str) -> Path | None:
    """The directory of a Configuration source: "path:line" (Hadoop XML) or
    "path: config.key" (a scenario); None for other sources."""
    if not source:
        return None
    head = source.split(": config.", 1)[0]
    m = re.match(r"^(.*):\d+$", head)
    if m:
        head = m.group(1)
    p = Path(head)
    if p.suffix.lower() in (".xml", ".toml", ".json") and p.is_file():
        return p.parent
    return None

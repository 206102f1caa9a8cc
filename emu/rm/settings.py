"""The RM's settings, read from Hadoop property names.

Only what the RM core itself needs; each scheduler reads its own properties
(capacity-scheduler.xml, the fair allocation file) from the same
Configuration. Defaults are YARN's.
"""

from __future__ import annotations

from dataclasses import dataclass

from emu import plugins
from emu.config.configuration import Configuration
from emu.errors import InputError
from emu.resources import Resource
from emu.rm.scheduler import registry
from emu.rm.scheduler.registry import JAVA_CLASSES as JAVA_CLASSES
from emu.rm.scheduler.registry import SCHEDULER_CLASSES as SCHEDULER_CLASSES

SCHEDULER_CLASS = "yarn.resourcemanager.scheduler.class"
SHORTCUTS = "emu.scheduler.shortcuts"
"""Whether the schedulers take their output-preserving shortcuts (caches and
skipped work that leave every output byte for byte as without them); off
tells a suspected shortcut bug from a scheduling one. The CLI sets it from
EMU_SHORTCUTS=0, the one place the environment is read."""
SCHEDULER_IMPL = "emu.scheduler.impl"
"""Whose code schedules: `emu` (emu's own port, the default) or `hadoop`
(Hadoop's scheduler class itself, through `emu.hadoop`)."""
IMPLS = ("emu", "hadoop")
HADOOP_VERSION = "emu.hadoop.version"
"""Which Apache Hadoop release: whose jars `--scheduler-impl hadoop` loads
and whose defaults emu's port applies (3.5.0 schedules the
CapacityScheduler asynchronously by default)."""


@dataclass(frozen=True)
class RMSettings:
    scheduler: str
    """A short name in `emu.rm.scheduler.registry` (fifo, capacity, fair or
    one registered); `custom` for another Hadoop class (hadoop impl only)."""
    minimum_allocation: Resource
    maximum_allocation: Resource
    nm_heartbeat_ms: int
    nm_expiry_ms: int
    am_expiry_ms: int
    am_max_attempts: int
    container_expiry_ms: int
    resource_types: tuple[str, ...]
    impl: str = "emu"
    java_class: str = ""
    """With impl `hadoop`: the scheduler class Hadoop loads."""
    shortcuts: bool = True
    """See `SHORTCUTS`: one simulation's choice, never the process's."""
    plugin: str = ""
    """A scheduler plugin (`package.module:Class` or an entry point name;
    docs/plugins.md); `scheduler` is then the kind it inherits (fifo,
    capacity, fair), which REST and the timeline show it as."""
    hadoop_version: str = "3.4.2"
    """`HADOOP_VERSION`: one of `emu.hadoop.classpath.VERSIONS`."""

    @classmethod
    def from_conf(cls, conf: Configuration) -> RMSettings:
        name = conf.get_str(SCHEDULER_CLASS, "capacity")
        impl = conf.get_str(SCHEDULER_IMPL, "emu").strip().lower()
        if impl not in IMPLS:
            raise InputError(
                conf.sources.get(SCHEDULER_IMPL, "configuration"),
                SCHEDULER_IMPL,
                f"unknown scheduler implementation {impl!r} (expected emu or hadoop)",
            )
        scheduler = registry.lookup(name)
        java_class = ""
        if impl == "emu" and conf.get("emu.hadoop.classpath"):
            raise InputError(
                conf.sources.get("emu.hadoop.classpath", "configuration"),
                "emu.hadoop.classpath",
                "Hadoop jars are given but emu's own scheduler would run, which does not "
                "read them: add --scheduler-impl hadoop (emu.scheduler.impl=hadoop)",
            )
        if impl == "hadoop":
            java_class = JAVA_CLASSES.get(scheduler or "", name.strip())
            scheduler = scheduler or "custom"
        plugin = ""
        if scheduler is None and plugins.is_plugin_name(name, plugins.SCHEDULERS):
            try:
                kind = registry.plugin_kind(registry.plugin_class(name))
            except plugins.PluginError as e:
                raise InputError(
                    conf.sources.get(SCHEDULER_CLASS, "configuration"),
                    SCHEDULER_CLASS,
                    f"scheduler plugin: {e}",
                ) from None
            plugin, scheduler = name.strip(), kind
        if scheduler is None:
            raise InputError(
                conf.sources.get(SCHEDULER_CLASS, "configuration"),
                SCHEDULER_CLASS,
                f"unknown scheduler {name!r} "
                f"(expected {', '.join(registry.SCHEDULERS)}, a Hadoop class name, or a "
                "Python plugin as package.module:Class; another class runs with "
                "--scheduler-impl hadoop)",
            )
        types = extra_resource_types(conf)
        version = hadoop_version(conf)
        min_extra = {
            t: conf.get_int(f"yarn.resource-types.{t}.minimum-allocation", 0) for t in types
        }
        max_extra = {
            t: conf.get_int(f"yarn.resource-types.{t}.maximum-allocation", 1 << 31) for t in types
        }
        minimum = Resource(
            conf.get_int("yarn.scheduler.minimum-allocation-mb", 1024),
            conf.get_int("yarn.scheduler.minimum-allocation-vcores", 1),
            min_extra,
        )
        maximum = Resource(
            conf.get_int("yarn.scheduler.maximum-allocation-mb", 8192),
            conf.get_int("yarn.scheduler.maximum-allocation-vcores", 4),
            max_extra,
        )
        if not minimum.fits_in(maximum):
            raise InputError(
                conf.sources.get("yarn.scheduler.minimum-allocation-mb", "configuration"),
                "yarn.scheduler.minimum-allocation-mb",
                f"minimum allocation {minimum} exceeds maximum {maximum}",
            )
        hb = conf.get_int(
            "yarn.resourcemanager.nodemanagers.heartbeat-interval-ms",
            conf.get_int("yarn.sls.nm.heartbeat.interval.ms", 1000),
        )
        return cls(
            scheduler=scheduler,
            minimum_allocation=minimum,
            maximum_allocation=maximum,
            nm_heartbeat_ms=hb,
            nm_expiry_ms=conf.get_int("yarn.nm.liveness-monitor.expiry-interval-ms", 600_000),
            am_expiry_ms=conf.get_int("yarn.am.liveness-monitor.expiry-interval-ms", 600_000),
            am_max_attempts=conf.get_int("yarn.resourcemanager.am.max-attempts", 2),
            container_expiry_ms=conf.get_int(
                "yarn.resourcemanager.rm.container-allocation.expiry-interval-ms", 600_000
            ),
            resource_types=types,
            impl=impl,
            java_class=java_class,
            shortcuts=conf.get_bool(SHORTCUTS, True),
            plugin=plugin,
            hadoop_version=version,
        )


def hadoop_version(conf: Configuration) -> str:
    """The release `HADOOP_VERSION` names (default 3.4.2); another is an
    InputError naming where it was set."""
    from emu.hadoop.classpath import HADOOP_VERSION as DEFAULT
    from emu.hadoop.classpath import check_version

    given = conf.get(HADOOP_VERSION)
    if not given:
        return DEFAULT
    return check_version(given, conf.sources.get(HADOOP_VERSION, "configuration"))


def extra_resource_types(conf: Configuration) -> tuple[str, ...]:
    """The types `yarn.resource-types` declares beyond memory and vcores:
    what nodes offer and what asks (and an SLS trace) may name."""
    return tuple(
        t for t in conf.get_list("yarn.resource-types") if t not in ("memory-mb", "vcores")
    )

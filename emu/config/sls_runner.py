"""The simulator's own settings: every `yarn.sls.*` key of `sls-runner.xml`.

Names and defaults are those of Hadoop's `SLSConfiguration`, so a user's
`sls-runner.xml` means the same here as under `slsrun.sh`. Values are read
with the same getters SLS uses (plain integers where SLS calls `getInt`), and
a bad value raises `InputError` naming the property and the file line it came
from.

Some keys only tune SLS's Java machinery (the runner thread pool, DNS
caching, the scheduler-metrics timer window); they are accepted and kept so a
production `sls-runner.xml` loads unchanged, but change nothing here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from emu.config.configuration import Configuration
from emu.errors import InputError
from emu.resources import Resource

PREFIX = "yarn.sls."
RUNNER_POOL_SIZE = "yarn.sls.runner.pool.size"
RM_SCHEDULER = "yarn.sls.scheduler.class"
DNS_CACHING_ENABLED = "yarn.sls.dns.caching.enabled"
METRICS_SWITCH = "yarn.sls.metrics.switch"
METRICS_WEB_ADDRESS_PORT = "yarn.sls.metrics.web.address.port"
METRICS_OUTPUT_DIR = "yarn.sls.metrics.output"
METRICS_TIMER_WINDOW_SIZE = "yarn.sls.metrics.timer.window.size"
METRICS_RECORD_INTERVAL_MS = "yarn.sls.metrics.record.interval.ms"
NM_PREFIX = "yarn.sls.nm."
NM_MEMORY_MB = "yarn.sls.nm.memory.mb"
NM_VCORES = "yarn.sls.nm.vcores"
NM_HEARTBEAT_INTERVAL_MS = "yarn.sls.nm.heartbeat.interval.ms"
NM_RESOURCE_UTILIZATION_RATIO = "yarn.sls.nm.resource.utilization.ratio"
AM_HEARTBEAT_INTERVAL_MS = "yarn.sls.am.heartbeat.interval.ms"
AM_TYPE_PREFIX = "yarn.sls.am.type."
AM_CONTAINER_MEMORY = "yarn.sls.am.container.memory"
AM_CONTAINER_VCORES = "yarn.sls.am.container.vcores"
CONTAINER_MEMORY_MB = "yarn.sls.container.memory.mb"
CONTAINER_VCORES = "yarn.sls.container.vcores"

# SLS's AM simulator classes and the emu AM kind that behaves like each.
_AM_CLASS_KINDS = {
    "MRAMSimulator": "mapreduce",
    "StreamAMSimulator": "stream",
    "DAGAMSimulator": "generic",
}
# The AM types SLS's own test sls-runner.xml declares; used when a
# configuration declares none, so a run without sls-runner.xml still works.
DEFAULT_AM_TYPES = {
    "mapreduce": "org.apache.hadoop.yarn.sls.appmaster.MRAMSimulator",
    "stream": "org.apache.hadoop.yarn.sls.appmaster.StreamAMSimulator",
    "dag": "org.apache.hadoop.yarn.sls.appmaster.DAGAMSimulator",
}


@dataclass(slots=True)
class SlsSettings:
    """SLS runner settings with `SLSConfiguration`'s defaults.

    `nm_resource` includes `yarn.sls.nm.<type>` for every extra resource type
    the cluster declares (`yarn.resource-types`; SLS's default for those is
    0). `am_types` maps an SLS AM type name (`yarn.sls.am.type.<name>`) to the
    Java class SLS would load for it; a configuration that declares none gets
    `DEFAULT_AM_TYPES` (mapreduce, stream, dag).
    """

    runner_pool_size: int = 10
    scheduler_class: str | None = None
    dns_caching_enabled: bool = False
    metrics_switch: bool = True
    metrics_web_port: int = 10001
    metrics_output_dir: str | None = None
    metrics_timer_window_size: int = 100
    metrics_record_interval_ms: int = 1000
    nm_resource: Resource = field(default_factory=lambda: Resource(10240, 10))
    nm_heartbeat_interval_ms: int = 1000
    nm_resource_utilization_ratio: float = -1.0
    am_heartbeat_interval_ms: int = 1000
    am_types: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_AM_TYPES))
    am_container_resource: Resource = field(default_factory=lambda: Resource(1024, 1))
    container_resource: Resource = field(default_factory=lambda: Resource(1024, 1))

    @classmethod
    def from_conf(cls, conf: Configuration, resource_types: Iterable[str] = ()) -> SlsSettings:
        """Read the settings from a loaded `sls-runner.xml`.

        `resource_types` are the extra resource names from
        `yarn.resource-types` (yarn-site.xml); each gets its per-node amount
        from `yarn.sls.nm.<name>`, as SLS's NMRunner reads it.
        """
        extra = {name: _non_negative(conf, NM_PREFIX + name, 0) for name in resource_types}
        return cls(
            runner_pool_size=conf.get_int(RUNNER_POOL_SIZE, 10),
            scheduler_class=conf.get(RM_SCHEDULER) or None,
            dns_caching_enabled=conf.get_bool(DNS_CACHING_ENABLED, False),
            metrics_switch=conf.get_bool(METRICS_SWITCH, True),
            metrics_web_port=conf.get_int(METRICS_WEB_ADDRESS_PORT, 10001),
            metrics_output_dir=conf.get(METRICS_OUTPUT_DIR) or None,
            metrics_timer_window_size=conf.get_int(METRICS_TIMER_WINDOW_SIZE, 100),
            metrics_record_interval_ms=_positive(conf, METRICS_RECORD_INTERVAL_MS, 1000),
            nm_resource=Resource(
                _non_negative(conf, NM_MEMORY_MB, 10240),
                _non_negative(conf, NM_VCORES, 10),
                extra,
            ),
            nm_heartbeat_interval_ms=_positive(conf, NM_HEARTBEAT_INTERVAL_MS, 1000),
            nm_resource_utilization_ratio=conf.get_float(NM_RESOURCE_UTILIZATION_RATIO, -1.0),
            am_heartbeat_interval_ms=_positive(conf, AM_HEARTBEAT_INTERVAL_MS, 1000),
            am_types={
                name[len(AM_TYPE_PREFIX) :]: conf.get_str(name, "")
                for name in conf
                if name.startswith(AM_TYPE_PREFIX) and len(name) > len(AM_TYPE_PREFIX)
            }
            or dict(DEFAULT_AM_TYPES),
            am_container_resource=Resource(
                _non_negative(conf, AM_CONTAINER_MEMORY, 1024),
                _non_negative(conf, AM_CONTAINER_VCORES, 1),
            ),
            container_resource=Resource(
                _non_negative(conf, CONTAINER_MEMORY_MB, 1024),
                _non_negative(conf, CONTAINER_VCORES, 1),
            ),
        )

    def am_kind(self, am_type: str) -> str | None:
        """The emu AM kind (`mapreduce`, `stream`, `generic`) for an SLS AM
        type name, judged by the simulator class configured for it; None when
        `yarn.sls.am.type.<am_type>` is not configured, where SLS would fail
        to create the AM. Unknown classes are driven by their task list."""
        cls_name = self.am_types.get(am_type)
        if cls_name is None:
            return None
        return _AM_CLASS_KINDS.get(cls_name.rsplit(".", 1)[-1], "generic")


def _non_negative(conf: Configuration, name: str, default: int) -> int:
    value = conf.get_int(name, default)
    if value < 0:
        raise InputError(
            conf.sources.get(name, "configuration"), name, f"must be >= 0, got {value}"
        )
    return value


def _positive(conf: Configuration, name: str, default: int) -> int:
    value = conf.get_int(name, default)
    if value <= 0:
        raise InputError(conf.sources.get(name, "configuration"), name, f"must be > 0, got {value}")
    return value

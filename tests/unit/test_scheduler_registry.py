"""The scheduler registry and the Fair policy registry: the names Hadoop
accepts select emu's implementations, and another implementation plugs in
with `register`."""

from __future__ import annotations

import pytest

from emu.config.configuration import Configuration
from emu.errors import InputError
from emu.metrics.eventlog import EventLog
from emu.rm.context import RMContext
from emu.rm.scheduler import create, registry
from emu.rm.scheduler.capacity import CapacityScheduler
from emu.rm.scheduler.fair import FairScheduler, policies
from emu.rm.scheduler.fifo import FifoScheduler
from emu.rm.settings import JAVA_CLASSES, SCHEDULER_CLASSES, RMSettings

YARN = "org.apache.hadoop.yarn.server.resourcemanager.scheduler."
SLS = "org.apache.hadoop.yarn.sls.scheduler."


def context(name: str) -> RMContext:
    conf = Configuration({"yarn.resourcemanager.scheduler.class": name})
    return RMContext(RMSettings.from_conf(conf), conf, EventLog())


@pytest.mark.parametrize(
    ("name", "short", "cls"),
    [
        ("fifo", "fifo", FifoScheduler),
        ("FIFO", "fifo", FifoScheduler),
        (YARN + "fifo.FifoScheduler", "fifo", FifoScheduler),
        ("capacity", "capacity", CapacityScheduler),
        (YARN + "capacity.CapacityScheduler", "capacity", CapacityScheduler),
        (SLS + "SLSCapacityScheduler", "capacity", CapacityScheduler),
        ("Fair", "fair", FairScheduler),
        (YARN + "fair.FairScheduler", "fair", FairScheduler),
        (SLS + "SLSFairScheduler", "fair", FairScheduler),
    ],
)
def test_yarn_and_emu_names_select_a_scheduler(name: str, short: str, cls: type) -> None:
    ctx = context(name)
    assert ctx.settings.scheduler == short
    assert type(create(ctx)) is cls


def test_the_tables_the_settings_read() -> None:
    assert list(registry.SCHEDULERS) == ["fifo", "capacity", "fair"]
    assert JAVA_CLASSES == {
        "fifo": YARN + "fifo.FifoScheduler",
        "capacity": YARN + "capacity.CapacityScheduler",
        "fair": YARN + "fair.FairScheduler",
    }
    assert SCHEDULER_CLASSES[SLS + "SLSFairScheduler"] == "fair"
    assert registry.SCHEDULERS["capacity"].class_names == (
        YARN + "capacity.CapacityScheduler",
        SLS + "SLSCapacityScheduler",
    )


def test_an_unknown_name_is_refused_as_before() -> None:
    with pytest.raises(InputError, match="expected fifo, capacity, fair, a Hadoop class"):
        context("com.example.Nope")


class PluginScheduler(FifoScheduler):
    """Another implementation: here FIFO under another name."""


def test_a_registered_scheduler_plugs_in() -> None:
    registry.register(
        "plugin",
        PluginScheduler,
        java_class="com.example.PluginScheduler",
        class_names=("com.example.sls.SLSPluginScheduler",),
    )
    try:
        for name in ("plugin", "PLUGIN", "com.example.PluginScheduler"):
            ctx = context(name)
            assert ctx.settings.scheduler == "plugin"
            assert type(create(ctx)) is PluginScheduler
        assert context("com.example.sls.SLSPluginScheduler").settings.scheduler == "plugin"
        assert JAVA_CLASSES["plugin"] == "com.example.PluginScheduler"
        with pytest.raises(InputError, match="expected fifo, capacity, fair, plugin, a Hadoop"):
            context("nope")
    finally:
        registry.unregister("plugin")
    assert "plugin" not in JAVA_CLASSES
    assert "com.example.PluginScheduler" not in SCHEDULER_CLASSES


def test_a_factory_named_by_a_string_is_imported_when_used() -> None:
    registry.register("plugin", f"{__name__}:PluginScheduler")
    try:
        assert type(create(context("plugin"))) is PluginScheduler
    finally:
        registry.unregister("plugin")


def test_a_taken_name_needs_replace() -> None:
    with pytest.raises(ValueError, match="already names the 'fair' scheduler"):
        registry.register("other", PluginScheduler, class_names=(SLS + "SLSFairScheduler",))
    with pytest.raises(ValueError, match="'fifo' already names"):
        registry.register("fifo", PluginScheduler)
    assert "other" not in registry.SCHEDULERS
    registry.register(
        "other", PluginScheduler, class_names=(SLS + "SLSFairScheduler",), replace=True
    )
    try:
        assert context(SLS + "SLSFairScheduler").settings.scheduler == "other"
        assert context("fair").settings.scheduler == "fair"
        assert registry.SCHEDULERS["fair"].class_names == (YARN + "fair.FairScheduler",)
    finally:
        registry.unregister("other")
        registry.register(
            "fair",
            "emu.rm.scheduler.fair:FairScheduler",
            YARN + "fair.FairScheduler",
            (SLS + "SLSFairScheduler",),
            replace=True,
        )
    assert list(registry.SCHEDULERS) == ["fifo", "capacity", "fair"]


# --- Fair policies -----------------------------------------------------------------------------

PKG = "org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.policies."


@pytest.mark.parametrize(
    ("text", "policy"),
    [
        ("fair", policies.FAIR),
        ("FAIR", policies.FAIR),
        ("Drf", policies.DRF),
        ("fifo", policies.FIFO),
        (PKG + "FairSharePolicy", policies.FAIR),
        (PKG + "DominantResourceFairnessPolicy", policies.DRF),
        (PKG + "FifoPolicy", policies.FIFO),
    ],
)
def test_policy_names_as_hadoop_parses_them(text: str, policy: policies.Policy) -> None:
    assert policies.parse(text) is policy


def test_a_class_name_is_matched_exactly() -> None:
    with pytest.raises(ValueError, match="SchedulingPolicy class not found!"):
        policies.parse(PKG.upper() + "FAIRSHAREPOLICY")


def test_a_registered_policy_plugs_in() -> None:
    class LatestFirst(policies.FifoPolicy):
        name = "latest"

    mine = LatestFirst()
    policies.register(mine, "latest", "com.example.LatestFirstPolicy")
    try:
        assert policies.parse("Latest") is mine
        assert policies.parse("com.example.LatestFirstPolicy") is mine
        with pytest.raises(ValueError, match="already registered"):
            policies.register(mine, "fair")
        assert policies.parse("fair") is policies.FAIR
    finally:
        for name in ("latest", "com.example.LatestFirstPolicy"):
            policies._BY_NAME.pop(name)

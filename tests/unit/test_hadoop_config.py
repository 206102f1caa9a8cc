"""Hadoop configuration XML and sls-runner settings, against Hadoop's own files."""

from __future__ import annotations

import getpass
from pathlib import Path

import pytest

from emu.config.configuration import Configuration
from emu.config.hadoop_xml import fair_allocation_file, load_conf_dir, load_xml
from emu.config.sls_runner import DEFAULT_AM_TYPES, SlsSettings
from emu.errors import InputError
from emu.resources import Resource
from tests.reference import REFERENCE_DIR

# Properties each file sets, counted with `grep -c '<property'` minus the
# properties whose <value> is empty (`grep -c '<value></value>'`), which
# Hadoop does not set: rm-allocation-files/capacity-scheduler.xml has 21
# properties, two of them empty (queue-mappings, workflow-priority-mappings).
PROPERTY_FILES = {
    "rm-allocation-files/capacity-scheduler.xml": 19,
    "rm-allocation-files/cs-validation-pass-capacity-scheduler.xml": 7,
    "sample-conf/capacity-scheduler.xml": 7,
    "sample-conf/sls-runner.xml": 13,
    "sample-conf/yarn-site.xml": 10,
    "test-resources/capacity-scheduler.xml": 9,
    "test-resources/sls-runner.xml": 15,
    "test-resources/yarn-site.xml": 10,
}
# FairScheduler allocation files: <allocations> documents, not property files.
ALLOCATION_FILES = [
    "rm-allocation-files/fair-scheduler-conversion.xml",
    "rm-allocation-files/test-fair-scheduler.xml",
    "sample-conf/fair-scheduler.xml",
    "test-resources/fair-scheduler.xml",
]


def write(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / name
    path.write_text(f'<?xml version="1.0"?>\n<configuration>\n{body}\n</configuration>\n')
    return path


def test_every_reference_xml_is_classified() -> None:
    """No XML under the reference dir escapes the two lists below."""
    found = {str(p.relative_to(REFERENCE_DIR)) for p in REFERENCE_DIR.rglob("*.xml")}
    assert found == set(PROPERTY_FILES) | set(ALLOCATION_FILES)


@pytest.mark.parametrize(("name", "count"), sorted(PROPERTY_FILES.items()))
def test_reference_property_file_loads(name: str, count: int) -> None:
    """Each property file loads and every source points at its <property> line."""
    path = REFERENCE_DIR / name
    conf = load_xml(path)
    assert len(conf) == count
    lines = path.read_text().splitlines()
    for prop in conf:
        file, _, line = conf.sources[prop].rpartition(":")
        assert file == str(path)
        assert "<property" in lines[int(line) - 1]


@pytest.mark.parametrize("name", ALLOCATION_FILES)
def test_allocation_file_is_not_a_property_file(name: str) -> None:
    """An <allocations> file is rejected by name and line, not read as empty."""
    with pytest.raises(InputError) as err:
        load_xml(REFERENCE_DIR / name)
    assert str(REFERENCE_DIR / name) in str(err.value)
    assert isinstance(err.value.where, int)
    assert "<allocations>" in str(err.value)


def test_values_names_and_empty_values_follow_hadoop() -> None:
    """Names are trimmed (cs-validation-pass wraps one before </name>); empty
    values set nothing; values are read as written."""
    cs = load_xml(REFERENCE_DIR / "rm-allocation-files/cs-validation-pass-capacity-scheduler.xml")
    assert cs.get("yarn.scheduler.capacity.root.default.maximum-am-resource-percent") == "1.0"
    assert cs.get("yarn.scheduler.capacity.root.auto-create-child-queue.enabled") == "true"
    rm = load_xml(REFERENCE_DIR / "rm-allocation-files/capacity-scheduler.xml")
    assert "yarn.scheduler.capacity.queue-mappings" not in rm
    assert rm.get_float("yarn.scheduler.capacity.maximum-am-resource-percent", 0) == 0.1
    sls = load_xml(REFERENCE_DIR / "sample-conf/sls-runner.xml")
    assert sls.sources["yarn.sls.nm.memory.mb"].endswith("sample-conf/sls-runner.xml:26")


@pytest.mark.parametrize("conf_dir", ["sample-conf", "test-resources"])
def test_conf_dir_loads_property_files_and_finds_allocation_file(conf_dir: str) -> None:
    d = REFERENCE_DIR / conf_dir
    confs = load_conf_dir(d)
    assert sorted(confs) == ["capacity-scheduler.xml", "sls-runner.xml", "yarn-site.xml"]
    assert fair_allocation_file(d, confs["yarn-site.xml"]) == d / "fair-scheduler.xml"


def test_allocation_file_follows_yarn_site(tmp_path: Path) -> None:
    (tmp_path / "alloc.xml").write_text("<allocations/>")
    site = Configuration({"yarn.scheduler.fair.allocation.file": "alloc.xml"})
    assert fair_allocation_file(tmp_path, site) == tmp_path / "alloc.xml"
    assert fair_allocation_file(tmp_path) is None


def test_variables_expand_like_hadoop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EMU_TEST_DIR", "/data")
    monkeypatch.delenv("EMU_TEST_UNSET", raising=False)
    monkeypatch.setenv("EMU_TEST_EMPTY", "")
    path = write(
        tmp_path,
        "site.xml",
        """
        <property><name>base</name><value>/opt</value></property>
        <property><name>derived</name><value>${base}/logs</value></property>
        <property><name>chained</name><value>${derived}/rm</value></property>
        <property><name>env</name><value>${env.EMU_TEST_DIR}/x</value></property>
        <property><name>env.default</name><value>${env.EMU_TEST_UNSET:-fallback}</value></property>
        <property><name>env.empty</name><value>${env.EMU_TEST_EMPTY:-fallback}</value></property>
        <property><name>env.dash</name><value>${env.EMU_TEST_EMPTY-fallback}</value></property>
        <property><name>unbound</name><value>${nowhere}/x</value></property>
        <property><name>loop</name><value>a${loop}</value></property>
        <property><name>user</name><value>${user.name}</value></property>
        """,
    )
    conf = load_xml(path)
    assert conf.get("derived") == "/opt/logs"
    assert conf.get("chained") == "/opt/logs/rm"
    assert conf.get("env") == "/data/x"
    assert conf.get("env.default") == "fallback"
    assert conf.get("env.empty") == "fallback"
    assert conf.get("env.dash") == ""
    assert conf.get("unbound") == "${nowhere}/x"
    assert conf.get("loop") == "a${loop}"
    assert conf.get("user") == getpass.getuser()


def test_variables_resolve_across_conf_dir(tmp_path: Path) -> None:
    write(tmp_path, "sls-runner.xml", "<property><name>d</name><value>/var/sls</value></property>")
    write(tmp_path, "yarn-site.xml", "<property><name>out</name><value>${d}/out</value></property>")
    assert load_conf_dir(tmp_path)["yarn-site.xml"].get("out") == "/var/sls/out"


def test_final_property_is_not_overridden(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "site.xml",
        """
        <property><name>a</name><value>1</value><final>true</final></property>
        <property><name>a</name><value>2</value></property>
        <property><name>b</name><value>1</value></property>
        <property><name>b</name><value>2</value></property>
        <property name="c" value="short"/>
        """,
    )
    conf = load_xml(path)
    assert (conf.get("a"), conf.get("b"), conf.get("c")) == ("1", "2", "short")
    assert conf.sources["b"] == f"{path}:7"


def test_include_and_fallback(tmp_path: Path) -> None:
    write(tmp_path, "part.xml", "<property><name>inc</name><value>yes</value></property>")
    path = write(
        tmp_path,
        "site.xml",
        """
        <xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="part.xml"/>
        <xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="absent.xml">
          <xi:fallback><property><name>fb</name><value>used</value></property></xi:fallback>
        </xi:include>
        """,
    )
    conf = load_xml(path)
    assert conf.get("inc") == "yes"
    assert conf.sources["inc"] == f"{tmp_path / 'part.xml'}:3"
    assert conf.get("fb") == "used"
    bad = write(tmp_path, "bad.xml", '<xi:include xmlns:xi="x" href="absent.xml"/>')
    with pytest.raises(InputError, match="included file not found"):
        load_xml(bad)


def test_malformed_xml_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.xml"
    path.write_text("<configuration>\n<property>\n<name>a</name>\n<value>1</valu>\n</property>\n")
    with pytest.raises(InputError) as err:
        load_xml(path)
    assert err.value.where == 4
    assert str(err.value).startswith(f"{path}:4: malformed XML")


def test_property_without_name_names_its_line(tmp_path: Path) -> None:
    path = write(tmp_path, "site.xml", "<property>\n<value>1</value>\n</property>")
    with pytest.raises(InputError) as err:
        load_xml(path)
    assert str(err.value) == f"{path}:3: <property> without a <name>"


def test_missing_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        load_xml(tmp_path / "absent.xml")
    with pytest.raises(InputError, match="no such directory"):
        load_conf_dir(tmp_path / "absent")


def test_sls_settings_from_reference_runner_conf() -> None:
    conf = load_xml(REFERENCE_DIR / "test-resources/sls-runner.xml")
    s = SlsSettings.from_conf(conf)
    assert s.runner_pool_size == 100
    assert s.nm_resource == Resource(100240, 100)
    assert (s.nm_heartbeat_interval_ms, s.am_heartbeat_interval_ms) == (1000, 1000)
    assert s.container_resource == Resource(1024, 1)
    assert s.am_container_resource == Resource(1024, 1)
    assert s.metrics_switch is True
    assert s.metrics_web_port == 10001
    assert sorted(s.am_types) == ["dag", "mapreduce", "stream"]
    assert [s.am_kind(t) for t in ("mapreduce", "stream", "dag", "other")] == [
        "mapreduce",
        "stream",
        "generic",
        None,
    ]
    sample = SlsSettings.from_conf(load_xml(REFERENCE_DIR / "sample-conf/sls-runner.xml"))
    assert sample.nm_resource == Resource(10240, 10)
    assert list(sample.am_types) == ["mapreduce"]


def test_sls_settings_defaults_are_slsconfiguration_defaults() -> None:
    s = SlsSettings.from_conf(Configuration())
    assert s == SlsSettings()
    assert s.nm_resource == Resource(10240, 10)
    assert s.am_types == DEFAULT_AM_TYPES
    assert (s.metrics_timer_window_size, s.metrics_record_interval_ms) == (100, 1000)
    assert s.nm_resource_utilization_ratio == -1.0
    assert s.metrics_output_dir is None and s.scheduler_class is None


def test_sls_settings_resource_types_and_am_container(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "sls-runner.xml",
        """
        <property><name>yarn.sls.nm.gpu</name><value>4</value></property>
        <property><name>yarn.sls.am.container.memory</name><value>2048</value></property>
        <property><name>yarn.sls.am.container.vcores</name><value>2</value></property>
        <property><name>yarn.sls.metrics.switch</name><value>OFF</value></property>
        """,
    )
    s = SlsSettings.from_conf(load_xml(path), resource_types=["gpu", "fpga"])
    assert s.nm_resource == Resource(10240, 10, {"gpu": 4, "fpga": 0})
    assert s.am_container_resource == Resource(2048, 2)
    assert s.metrics_switch is False


@pytest.mark.parametrize(
    ("name", "value", "problem"),
    [
        ("yarn.sls.nm.memory.mb", "lots", "expected an integer"),
        ("yarn.sls.nm.heartbeat.interval.ms", "0", "must be > 0"),
        ("yarn.sls.container.vcores", "-1", "must be >= 0"),
        ("yarn.sls.metrics.switch", "maybe", "expected true or false"),
    ],
)
def test_bad_sls_setting_names_property_and_line(
    tmp_path: Path, name: str, value: str, problem: str
) -> None:
    path = write(
        tmp_path,
        "sls-runner.xml",
        f"<property><name>{name}</name><value>{value}</value></property>",
    )
    with pytest.raises(InputError) as err:
        SlsSettings.from_conf(load_xml(path))
    assert str(err.value).startswith(f"{path}:3: {name}: {problem}")

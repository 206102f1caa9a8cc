"""`emu admin` against a running `emu rm` process: refresh-queues applies a
valid capacity change, refuses an invalid one with the reason (the running
configuration stays), and decommissions a node."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from emu.processes.cluster import emu_argv
from tests.multiprocess.procs import LocalCluster

CAPACITY = {
    "yarn.resourcemanager.scheduler.class": "capacity",
    "yarn.scheduler.capacity.root.queues": "a,b",
    "yarn.scheduler.capacity.root.a.capacity": "50",
    "yarn.scheduler.capacity.root.b.capacity": "50",
}


@pytest.fixture
def cluster(tmp_path: Path):
    c = LocalCluster(tmp_path, conf=CAPACITY)
    yield c
    c.stop()


def admin(cluster: LocalCluster, *args: object) -> subprocess.CompletedProcess[str]:
    argv = emu_argv("admin", args[0], "--rm", cluster.rm_spec, *args[1:])
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)


def queue_names(cluster: LocalCluster) -> set[str]:
    return {q["name"] for q in cluster.call("queue_info", queue="")["queues"]}


def test_refresh_queues_applies_valid_and_refuses_invalid_changes(cluster, tmp_path) -> None:
    cluster.start_rm()
    cluster.start_nm("nm", 2)
    cluster.wait_nodes(2)
    xml = tmp_path / "capacity-scheduler.xml"
    xml.write_text(
        "<configuration>"
        "<property><name>yarn.scheduler.capacity.root.queues</name><value>a,b,c</value></property>"
        "<property><name>yarn.scheduler.capacity.root.a.capacity</name><value>40</value></property>"
        "<property><name>yarn.scheduler.capacity.root.b.capacity</name><value>40</value></property>"
        "<property><name>yarn.scheduler.capacity.root.c.capacity</name><value>20</value></property>"
        "</configuration>"
    )
    ok = admin(cluster, "refresh-queues", "--file", xml)
    assert ok.returncode == 0, ok.stderr
    assert any(name.endswith("c") for name in queue_names(cluster))

    bad = admin(cluster, "refresh-queues", "-D", "yarn.scheduler.capacity.root.c.capacity=50")
    assert bad.returncode == 1
    assert "refused" in bad.stderr and "100" in bad.stderr
    assert any(name.endswith("c") for name in queue_names(cluster))  # still running as before

    gone = admin(cluster, "decommission", "nm-1")
    assert gone.returncode == 0, gone.stderr
    states = {n["node_id"]: n["state"] for n in cluster.call("list_nodes")["nodes"]}
    assert states["nm-1"] == "DECOMMISSIONED"
    unknown = admin(cluster, "decommission", "no-such-node")
    assert unknown.returncode == 1 and "unknown" in unknown.stderr


def _capacity_xml(path: Path, capacities: dict[str, int]) -> None:
    props = {"yarn.scheduler.capacity.root.queues": ",".join(capacities)}
    props.update({f"yarn.scheduler.capacity.root.{q}.capacity": c for q, c in capacities.items()})
    path.write_text(
        "<configuration>\n"
        + "".join(
            f"<property><name>{k}</name><value>{v}</value></property>\n" for k, v in props.items()
        )
        + "</configuration>\n"
    )


def _fair_xml(path: Path, queues: list[str]) -> None:
    path.write_text(
        "<allocations>\n" + "".join(f'<queue name="{q}"/>\n' for q in queues) + "</allocations>\n"
    )


def test_refresh_without_file_rereads_the_capacity_configuration_on_disk(tmp_path) -> None:
    """As `yarn rmadmin -refreshQueues`: edits to the RM's own
    capacity-scheduler.xml apply; a broken edit is refused with its error."""
    conf_dir = tmp_path / "conf"
    conf_dir.mkdir()
    _capacity_xml(conf_dir / "capacity-scheduler.xml", {"a": 50, "b": 50})
    cluster = LocalCluster(tmp_path, conf={"yarn.resourcemanager.scheduler.class": "capacity"})
    try:
        cluster.start_rm("--conf-dir", conf_dir)
        assert not any(name.endswith(".c") for name in queue_names(cluster))
        _capacity_xml(conf_dir / "capacity-scheduler.xml", {"a": 40, "b": 40, "c": 20})
        ok = admin(cluster, "refresh-queues")
        assert ok.returncode == 0, ok.stderr
        assert "root.c" in queue_names(cluster)
        _capacity_xml(conf_dir / "capacity-scheduler.xml", {"a": 40, "b": 40, "c": 50})
        bad = admin(cluster, "refresh-queues")
        assert bad.returncode == 1
        assert "capacity-scheduler.xml" in bad.stderr and "not 100" in bad.stderr
        assert "root.c" in queue_names(cluster)
    finally:
        cluster.stop()


def test_fair_rm_refreshes_from_allocation_files_and_refuses_capacity_properties(
    tmp_path,
) -> None:
    conf_dir = tmp_path / "conf"
    conf_dir.mkdir()
    _fair_xml(conf_dir / "fair-scheduler.xml", ["a"])
    cluster = LocalCluster(tmp_path, conf={"yarn.resourcemanager.scheduler.class": "fair"})
    try:
        cluster.start_rm("--conf-dir", conf_dir)
        assert "root.a" in queue_names(cluster)
        sent = tmp_path / "fair-scheduler.xml"
        _fair_xml(sent, ["a", "sent"])
        ok = admin(cluster, "refresh-queues", "--file", sent)
        assert ok.returncode == 0, ok.stderr
        assert "root.sent" in queue_names(cluster)
        capacity = tmp_path / "capacity-scheduler.xml"
        _capacity_xml(capacity, {"a": 100})
        refused = admin(cluster, "refresh-queues", "--file", capacity)
        assert refused.returncode == 1
        assert "allocation file" in refused.stderr
        _fair_xml(conf_dir / "fair-scheduler.xml", ["a", "edited"])
        again = admin(cluster, "refresh-queues")
        assert again.returncode == 0, again.stderr
        assert "root.edited" in queue_names(cluster)
        (conf_dir / "fair-scheduler.xml").write_text("<allocations><queue>")
        broken = admin(cluster, "refresh-queues")
        assert broken.returncode == 1 and "fair-scheduler.xml" in broken.stderr
        assert "root.edited" in queue_names(cluster)
    finally:
        cluster.stop()

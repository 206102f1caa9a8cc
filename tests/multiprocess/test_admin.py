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

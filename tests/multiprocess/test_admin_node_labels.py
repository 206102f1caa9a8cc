"""`emu admin`'s node-label commands against a running `emu rm` process, as
`yarn rmadmin -addToClusterNodeLabels / -removeFromClusterNodeLabels /
-replaceLabelsOnNode` against a ResourceManager: labels are added, put on
nodes and removed, and each of Hadoop's refusals comes back with its text."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from emu.processes import common as C
from emu.processes.cluster import emu_argv
from tests.multiprocess.procs import LocalCluster

CONF = {
    "yarn.resourcemanager.scheduler.class": "capacity",
    "yarn.node-labels.enabled": "true",
    "yarn.scheduler.capacity.root.queues": "a,b",
    "yarn.scheduler.capacity.root.a.capacity": "50",
    "yarn.scheduler.capacity.root.b.capacity": "50",
    "yarn.scheduler.capacity.root.accessible-node-labels.gpu.capacity": "100",
    "yarn.scheduler.capacity.root.a.accessible-node-labels": "gpu",
    "yarn.scheduler.capacity.root.a.accessible-node-labels.gpu.capacity": "100",
}


@pytest.fixture
def cluster(tmp_path: Path):
    c = LocalCluster(tmp_path, conf=CONF)
    yield c
    c.stop()


def admin(cluster: LocalCluster, *args: object) -> subprocess.CompletedProcess[str]:
    argv = emu_argv("admin", args[0], "--rm", cluster.rm_spec, *args[1:])
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)


def refusal(cluster: LocalCluster, mtype: str, **fields: object) -> str | None:
    """The admin service's answer without the CLI around it: the refusal
    reason, None when applied."""
    with C.SyncClient(C.rm_addresses(cluster.rm_spec).admin, cluster.curve) as client:
        reply = client.call(mtype, timeout=10.0, **fields)
    assert reply["type"] != "error", reply
    return None if reply["ok"] else str(reply["reason"])


def labels_of(cluster: LocalCluster) -> dict[str, list[str]]:
    return {n["node_id"]: n["labels"] for n in cluster.call("list_nodes")["nodes"]}


def test_labels_are_added_put_on_nodes_and_removed_with_hadoops_refusals(cluster) -> None:
    cluster.start_rm()
    cluster.start_nm("nm", 2)
    cluster.wait_nodes(2)
    nodes = sorted(labels_of(cluster))
    first, second = nodes

    added = admin(cluster, "add-node-labels", "gpu(exclusive=true),spare(exclusive=false)")
    assert added.returncode == 0, added.stderr
    report = cluster.call("node_labels_report")
    assert sorted(map(tuple, report["labels"])) == [("gpu", True), ("spare", False)]

    clash = admin(cluster, "add-node-labels", "gpu(exclusive=false)")
    assert clash.returncode == 1
    assert "Exclusivity cannot be modified for an existing label" in clash.stderr
    bad_name = refusal(cluster, "add_node_labels", labels=[["_gpu", True]])
    assert bad_name is not None and "label name should only contains" in bad_name
    bad_syntax = admin(cluster, "add-node-labels", "gpu(exclusive=maybe)")
    assert bad_syntax.returncode == 2 and "Input format for adding node-labels" in bad_syntax.stderr

    put = admin(cluster, "replace-labels-on-node", f"{first}=gpu {second}=spare")
    assert put.returncode == 0, put.stderr
    assert labels_of(cluster) == {first: ["gpu"], second: ["spare"]}
    assert cluster.call("node_labels_report")["nodes"] == {"gpu": [first], "spare": [second]}

    unknown_label = refusal(cluster, "replace_labels_on_node", mapping=[[first, "fpga"]])
    assert unknown_label == (
        "Not all labels being replaced contained by known label collections, "
        "please check, new labels=[fpga]"
    )
    ghost = refusal(
        cluster, "replace_labels_on_node", mapping=[["ghost", "gpu"]], fail_on_unknown=True
    )
    assert ghost == "Failed to replace labels as there are unknown nodes:[ghost:0]"
    # Without -failOnUnknownNodes the mapping is kept for an NM on that host.
    assert refusal(cluster, "replace_labels_on_node", mapping=[["ghost", "gpu"]]) is None

    in_use = admin(cluster, "remove-node-labels", "gpu")
    assert in_use.returncode == 1
    assert "Cannot remove label=gpu, because queue=root.a is using this label" in in_use.stderr
    assert refusal(cluster, "remove_node_labels", names=["spare"]) is None
    assert labels_of(cluster) == {first: ["gpu"], second: []}
    missing = refusal(cluster, "remove_node_labels", names=["spare"])
    assert missing == (
        "Node label=spare to be removed doesn't existed in cluster node labels collection."
    )
    assert refusal(cluster, "replace_labels_on_node", mapping=[[first, ""]]) is None
    assert labels_of(cluster) == {first: [], second: []}


def test_label_commands_need_node_labels_enabled(tmp_path: Path) -> None:
    c = LocalCluster(tmp_path, conf={"yarn.resourcemanager.scheduler.class": "capacity"})
    try:
        c.start_rm()
        c.wait_rm()
        off = refusal(c, "add_node_labels", labels=[["gpu", True]])
        assert off == (
            "Node-label-based scheduling is disabled. Please check yarn.node-labels.enabled"
        )
    finally:
        c.stop()

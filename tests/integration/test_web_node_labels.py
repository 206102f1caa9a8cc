"""YARN's node-label REST endpoints on a running replay, after labels were
added and put on a node through [[changes]] (as `yarn rmadmin` would):
`/ws/v1/cluster/get-node-labels` (NodeLabelsInfo, each label's resource)
and `/ws/v1/cluster/get-node-to-labels` (NodeToLabelsInfo)."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.web_harness import Run, sls_conf_dir


def test_node_label_endpoints_show_the_changed_labels(tmp_path: Path) -> None:
    changes = tmp_path / "changes.toml"
    changes.write_text(
        '[[changes]]\nat_ms = 1000\nkind = "add_node_labels"\n'
        'labels = "gpu,spare(exclusive=false)"\n\n'
        '[[changes]]\nat_ms = 2000\nkind = "replace_labels_on_node"\nnodes = "node1=gpu"\n'
    )
    conf = tmp_path / "conf"
    conf.mkdir()
    run = Run(sls_conf_dir(conf), tmp_path / "out", rate=20)
    run.opts.overrides["yarn.node-labels.enabled"] = "true"
    run.opts.changes_file = str(changes)
    url = run.start()
    run.wait_until(lambda: run.watch.live.latest.sim_ms > 3000)
    with httpx.Client(base_url=url, timeout=10) as http:
        labels = http.get("/ws/v1/cluster/get-node-labels").json()["nodeLabelsInfo"]
        by_name = {i["name"]: i for i in labels["nodeLabelInfo"]}
        assert by_name["gpu"]["exclusivity"] is True
        assert by_name["spare"]["exclusivity"] is False
        gpu = by_name["gpu"]["partitionInfo"]["resourceAvailable"]
        node1 = http.get("/ws/v1/cluster/nodes/node1").json()["node"]
        assert gpu["memory"] == node1["totalResource"]["memory"] > 0
        assert by_name["spare"]["partitionInfo"]["resourceAvailable"]["memory"] == 0
        mapping = http.get("/ws/v1/cluster/get-node-to-labels").json()["nodeToLabelsInfo"]
        assert mapping["nodeToLabels"]["entry"] == [
            {"key": "node1:0", "value": {"nodeLabelInfo": [{"name": "gpu", "exclusivity": True}]}}
        ]
    run.join()

"""`emu rm --web-port`: the YARN REST API beside a multi-process RM, read and
driven by yarn-api-client while NM processes heartbeat to it."""

from __future__ import annotations

import json
import time
from pathlib import Path

from yarn_api_client.resource_manager import ResourceManager

from tests.multiprocess.procs import LocalCluster


def _wait(what, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while True:
        value = what()
        if value:
            return value
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def test_rest_api_on_a_multiprocess_rm_agrees_with_the_rm(tmp_path: Path) -> None:
    cluster = LocalCluster(tmp_path)
    try:
        ready = tmp_path / "rm.json"
        cluster.start_rm("--web-port", 0, "--ready-file", ready)
        # The protocol ports answer moments before the web server is up and
        # the ready file written.
        url = json.loads(_wait(lambda: ready.exists() and ready.read_text()))["web"]
        assert url.startswith("http://127.0.0.1:")
        cluster.start_nm("nma", 2)
        cluster.wait_nodes(2)
        rm = ResourceManager(service_endpoints=[url])

        nodes = _wait(lambda: rm.cluster_nodes().data["nodes"]["node"])
        assert {n["id"] for n in nodes} == {"nma-1", "nma-2"}
        metrics = rm.cluster_metrics().data["clusterMetrics"]
        assert metrics["activeNodes"] == 2 and metrics["totalMB"] == 2 * 4096
        assert rm.cluster_scheduler().data["scheduler"]["schedulerInfo"]["type"] == "fifoScheduler"

        app_id = rm.cluster_new_application().data["application-id"]
        rm.cluster_submit_application(
            {
                "application-id": app_id,
                "application-name": "over-rest",
                "resource": {"memory": 1024, "vCores": 1},
                "am-container-spec": {  # an hour: long enough to be killed while running
                    "environment": {"entry": {"key": "EMU_TASK_DURATION_MS", "value": "3600000"}}
                },
            }
        )
        assert cluster.call("application_report", app_id=app_id)["report"]["name"] == "over-rest"
        _wait(lambda: rm.cluster_application_state(app_id).data["state"] == "RUNNING")
        attempts = rm.cluster_application_attempts(app_id).data["appAttempts"]["appAttempt"]
        containers = rm.cluster_application_attempt_containers(
            app_id, attempts[0]["appAttemptId"]
        ).data["containers"]["container"]
        assert containers and containers[0]["assignedNodeId"] in {"nma-1", "nma-2"}
        rm.cluster_application_kill(app_id)
        _wait(lambda: rm.cluster_application_state(app_id).data["state"] == "KILLED")
        assert cluster.call("application_report", app_id=app_id)["report"]["state"] == "KILLED"
    finally:
        cluster.stop()

"""The YARN REST API served while a replay runs, driven by a real HTTP client
(yarn-api-client from PyPI, and httpx) against a real hypercorn server."""

from __future__ import annotations

import io
import json
import threading
import time
from pathlib import Path

import httpx
import pytest
from yarn_api_client.resource_manager import ResourceManager

from emu import sls
from emu.cli import main
from emu.watch import Watch
from tests.web_harness import TEST_RES, Run, sls_conf_dir

TRACE = ["--tracetype=SLS", f"--tracelocation={TEST_RES / 'inputsls.json'}"]


@pytest.fixture(scope="module")
def conf_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sls_conf_dir(tmp_path_factory.mktemp("conf"))


@pytest.mark.slow
def test_yarn_api_client_reads_and_drives_a_running_replay(conf_dir, tmp_path):
    run = Run(conf_dir, tmp_path / "out", rate=12)
    url = run.start()
    rm = ResourceManager(service_endpoints=[url])
    assert rm.get_active_endpoint() == url

    info = rm.cluster_information().data["clusterInfo"]
    assert info["state"] == "STARTED" and info["haState"] == "ACTIVE"
    assert info["schedulerType"] == "fairScheduler"

    # job_1 (sls_queue_1) runs between 0 and ~20 simulated s.
    run.wait_until(lambda: any(a["state"] == "RUNNING" for a in run.watch.live.latest.apps))
    metrics = rm.cluster_metrics().data["clusterMetrics"]
    assert metrics["activeNodes"] == 20 and metrics["totalNodes"] == 20
    assert metrics["totalMB"] == 20 * 100240 and metrics["totalVirtualCores"] == 20 * 100
    assert metrics["appsSubmitted"] >= 1
    assert metrics["allocatedMB"] + metrics["availableMB"] == metrics["totalMB"]

    nodes = rm.cluster_nodes().data["nodes"]["node"]
    assert len(nodes) == 20 and {n["state"] for n in nodes} == {"RUNNING"}
    one = rm.cluster_node(nodes[0]["id"]).data["node"]
    assert one["id"] == nodes[0]["id"] and one["rack"] == nodes[0]["rack"]
    assert one["usedMemoryMB"] + one["availMemoryMB"] == one["totalResource"]["memory"]
    assert sum(n["numContainers"] for n in nodes) >= 1

    sched = rm.cluster_scheduler().data["scheduler"]["schedulerInfo"]
    assert sched["type"] == "fairScheduler"
    root = sched["rootQueue"]
    assert root["queueName"] == "root"
    children = {q["queueName"]: q for q in root["childQueues"]["queue"]}
    assert {"root.sls_queue_1", "root.sls_queue_2", "root.sls_queue_3"} <= set(children)
    for q in children.values():
        assert set(q["fairResources"]) == {"memory", "vCores", "resourceInformations"}
        infos = q["fairResources"]["resourceInformations"]["resourceInformation"]
        assert [i["name"] for i in infos] == ["memory-mb", "vcores"]
        assert "steadyFairResources" in q and "minResources" in q and "maxResources" in q

    apps = rm.cluster_applications().data["apps"]["app"]
    job1 = next(a for a in apps if a["name"] == "job_1")
    assert job1["queue"].startswith("root.sls_queue_1")
    assert rm.cluster_application(job1["id"]).data["app"]["name"] == "job_1"
    running = rm.cluster_applications(states=["RUNNING"]).data["apps"]["app"]
    assert [a["state"] for a in running] == ["RUNNING"] * len(running)
    assert rm.cluster_applications(queue="sls_queue_3").data["apps"]["app"] == []
    assert rm.cluster_applications(limit=1).data["apps"]["app"] == apps[:1]
    later = rm.cluster_applications(started_time_begin=job1["startedTime"] + 1)
    assert job1["id"] not in [a["id"] for a in later.data["apps"]["app"]]
    attempts = rm.cluster_application_attempts(job1["id"]).data["appAttempts"]["appAttempt"]
    assert attempts[0]["id"] == 1 and attempts[0]["appAttemptId"].startswith("appattempt_")
    assert rm.cluster_application_state(job1["id"]).data["state"] in ("RUNNING", "FINISHED")
    acts = httpx.get(f"{url}/ws/v1/cluster/scheduler/app-activities/{job1['id']}").json()
    allocations = acts["appActivities"]["allocations"]
    assert acts["appActivities"]["applicationId"] == job1["id"]
    assert "ALLOCATED" in {a["allocationState"] for a in allocations}
    assert all(a["diagnostic"] and a["queueName"] == job1["queue"] for a in allocations)

    # A new application: created, submitted and killed through the REST API.
    new = rm.cluster_new_application().data
    app_id = new["application-id"]
    assert new["maximum-resource-capability"]["memory"] > 0
    rm.cluster_submit_application(
        {
            "application-id": app_id,
            "application-name": "rest-app",
            "queue": "sls_queue_3",
            "resource": {"memory": 1024, "vCores": 1},
            "am-container-spec": {
                "environment": {"entry": [{"key": "EMU_TASK_DURATION_MS", "value": "600000"}]}
            },
        }
    )
    submitted = rm.cluster_application(app_id).data["app"]
    assert submitted["name"] == "rest-app" and submitted["queue"] == "root.sls_queue_3"
    assert submitted["user"] == "dr.who"
    run.wait_until(lambda: run.watch.live.latest.app(app_id)["state"] == "RUNNING")
    killed = rm.cluster_application_kill(app_id).data
    assert killed["state"] in ("KILLED", "FINAL_SAVING", "RUNNING")
    run.wait_until(lambda: run.watch.live.latest.app(app_id)["state"] == "KILLED")
    assert rm.cluster_application_state(app_id).data == {"state": "KILLED"}
    assert rm.cluster_applications(states=["KILLED"]).data["apps"]["app"][0]["id"] == app_id

    done = run.join()
    by_name = {j["name"]: j for j in done.result.jobs}
    assert by_name["job_1"]["state"] == "FINISHED"
    assert done.result.metrics["apps_killed"] == 1
    assert run.watch.live.errors == 0


@pytest.mark.slow
def test_errors_come_back_in_yarn_remote_exception_shape(conf_dir, tmp_path):
    run = Run(conf_dir, tmp_path / "out", rate=20)
    url = run.start()
    with httpx.Client(base_url=url) as http:
        r = http.get("/ws/v1/cluster/apps/application_0_9999")
        assert r.status_code == 404
        exc = r.json()["RemoteException"]
        assert exc["exception"] == "NotFoundException"
        assert exc["javaClassName"] == "org.apache.hadoop.yarn.webapp.NotFoundException"
        assert "application_0_9999" in exc["message"]
        assert http.get("/ws/v1/cluster/nodes/nosuchnode").status_code == 404
        assert http.get("/ws/v1/cluster/no/such/path").json()["RemoteException"]
        r = http.get("/ws/v1/cluster/apps", params={"states": "SLEEPING"})
        assert r.status_code == 400
        assert r.json()["RemoteException"]["exception"] == "BadRequestException"
        r = http.get("/ws/v1/cluster/apps", params={"limit": "many"})
        assert r.status_code == 400
        r = http.post("/ws/v1/cluster/apps", content=b"{not json")
        assert r.status_code == 400
        r = http.post("/ws/v1/cluster/apps", json={"application-name": "no id"})
        assert r.status_code == 400 and "application-id" in r.text
        run.wait_until(lambda: run.watch.live.latest.apps)
        app_id = http.get("/ws/v1/cluster/apps").json()["apps"]["app"][0]["id"]
        r = http.put(f"/ws/v1/cluster/apps/{app_id}/state", json={"state": "RUNNING"})
        assert r.status_code == 400
        r = http.put(f"/ws/v1/cluster/apps/{app_id}/queue", json={"queue": "sls_queue_3"})
        assert r.status_code == 400
        assert http.get(f"/ws/v1/cluster/apps/{app_id}/queue").json()["queue"].startswith("root.")
        stats = http.get("/ws/v1/cluster/appstatistics", params={"states": "accepted,running"})
        items = stats.json()["appStatInfo"]["statItem"]
        assert [i["state"] for i in items] == ["ACCEPTED", "RUNNING"]
        assert all(i["type"] == "*" for i in items)
    run.join()
    with pytest.raises(httpx.ConnectError):  # the server stops with the run
        httpx.get(url + "/ws/v1/cluster/info")


def _outputs(out: Path) -> dict[str, bytes]:
    return {n: (out / n).read_bytes() for n in ("jobruntime.csv", "summary.json")}


def test_watching_a_virtual_replay_leaves_its_outputs_byte_identical(conf_dir, tmp_path):
    """Same trace and seed with and without --web-port (and a client polling
    the API the whole time): jobruntime.csv and summary.json are identical."""
    plain, watched = tmp_path / "plain", tmp_path / "watched"
    args = ["sls", f"--conf-dir={conf_dir}", *TRACE, f"--nodes={TEST_RES / 'nodes.json'}"]
    assert main([*args, f"--output-dir={plain}"]) == 0

    watch = Watch(progress="always", web_port=0)
    polled: list[int] = []
    stop = threading.Event()

    def poll() -> None:
        while not stop.is_set():
            if watch.server is not None and watch.server.url:
                try:
                    r = httpx.get(watch.server.url + "/ws/v1/cluster/metrics", timeout=5)
                    polled.append(r.status_code)
                except httpx.HTTPError:
                    pass
            time.sleep(0.001)

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    opts = sls.SlsOptions(
        tracetype="SLS",
        traces=[str(TEST_RES / "inputsls.json")],
        output_dir=watched,
        nodes_file=str(TEST_RES / "nodes.json"),
        conf_dir=str(conf_dir),
        watch=watch,
    )
    sls.run(opts, stdout=io.StringIO())
    stop.set()
    poller.join()
    assert _outputs(plain) == _outputs(watched)
    assert watch.live is not None and watch.live.errors == 0
    # The last snapshot shows the end of the replay.
    final = watch.live.latest
    assert final is not None
    assert [a["state"] for a in final.apps] == ["FINISHED", "FINISHED"]
    summary = json.loads((plain / "summary.json").read_text())
    assert final.metrics["appsCompleted"] == summary["cluster"]["apps_completed"]


def test_emu_run_outputs_are_identical_with_the_web_server_on(tmp_path):
    scenario = "scenarios/three-jobs.toml"
    a, b = tmp_path / "a", tmp_path / "b"
    assert main(["run", scenario, "-o", str(a), "--progress", "never"]) == 0
    assert main(["run", scenario, "-o", str(b), "--progress", "always", "--web-port", "0"]) == 0
    for name in ("events.jsonl", "jobruntime.csv", "summary.json"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name

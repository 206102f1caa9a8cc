"""The cluster as real processes on loopback: `emu rm`, `emu nm`, `emu replay`.

Each test starts its own RM and NM processes (fixtures stop them whatever
happens), runs on the scaled wall clock at a high rate, and takes seconds.
"""

from __future__ import annotations

import socket
import time
from pathlib import Path

import msgpack
import pytest
import zmq

from emu import security
from emu.msg import codec
from emu.msg import types as P
from emu.processes.common import SyncClient
from emu.transport import RequestTimeout
from tests.multiprocess.procs import LocalCluster, write_scenario

pytestmark = pytest.mark.timeout(120)

JOBS = [
    {"id": f"job_{i}", "submit_ms": i * 3_000, "maps": 4, "map_ms": 20_000, "reduce_ms": 10_000}
    for i in range(4)
]


@pytest.fixture
def cluster_factory(tmp_path: Path):
    made: list[LocalCluster] = []

    def make(**kw) -> LocalCluster:
        c = LocalCluster(tmp_path, **kw)
        made.append(c)
        return c

    yield make
    for c in made:
        c.stop()


def test_rm_two_nm_processes_and_a_replay(cluster_factory, tmp_path: Path) -> None:
    cluster = cluster_factory()
    cluster.start_rm()
    cluster.start_nm("nma", 2)
    cluster.start_nm("nmb", 2)
    cluster.wait_nodes(4)
    scenario = write_scenario(tmp_path / "jobs.toml", JOBS)
    summary = cluster.wait_replay(cluster.replay(scenario))

    assert [j["state"] for j in summary["jobs"]] == ["FINISHED"] * 4
    assert [j["job_id"] for j in summary["jobs"]] == [j["id"] for j in JOBS]
    csv = (tmp_path / "out" / "jobruntime.csv").read_text().splitlines()
    assert csv[0].startswith("JobID,real_start_time") and len(csv) == 5
    # Times are relative to the replay's start, as `emu run` reports them.
    assert summary["jobs"][0]["submit_ms"] < 2_000
    m = cluster.metrics()
    assert m["rate"] == cluster.rate and m["active_nodes"] == 4 and m["lost_nodes"] == 0
    assert m["apps_completed"] == 4
    # Every AM ran inside an NM process; each process served heartbeats.
    a, b = cluster.nm_stats("nma"), cluster.nm_stats("nmb")
    assert a["ams_started"] + b["ams_started"] == 4
    assert a["heartbeats"] > 0 and b["heartbeats"] > 0
    assert a["latency"]["count"] > 0
    nodes = cluster.call("list_nodes")["nodes"]
    assert {n["node_id"] for n in nodes} == {"nma-1", "nma-2", "nmb-1", "nmb-2"}
    assert {n["rack"] for n in nodes} == {"/nma", "/nmb"}


def test_nm_process_killed_its_nodes_are_lost_and_work_reruns(cluster_factory, tmp_path) -> None:
    cluster = cluster_factory(
        rate=20.0,
        conf={
            "yarn.nm.liveness-monitor.expiry-interval-ms": 30_000,
            "yarn.am.liveness-monitor.expiry-interval-ms": 30_000,
            "yarn.resourcemanager.am.max-attempts": 4,
        },
    )
    cluster.start_rm()
    cluster.start_nm("nma", 2)
    victim = cluster.start_nm("nmb", 2)
    cluster.wait_nodes(4)
    jobs = [{**j, "map_ms": 40_000, "maps": 6} for j in JOBS]
    replay = cluster.replay(write_scenario(tmp_path / "jobs.toml", jobs))
    # Wait until the victim runs containers (tasks or AMs), then kill -9 it.
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        cluster.check_alive()
        used = [n for n in cluster.call("list_nodes")["nodes"] if n["node_id"].startswith("nmb")]
        if sum(n["num_containers"] for n in used) >= 2:
            break
        time.sleep(0.1)
    else:
        raise AssertionError("the victim never got containers")
    cluster.kill(victim)
    cluster.wait(lambda m: m["lost_nodes"] >= 2, 30, "the victim's nodes to be LOST")

    summary = cluster.wait_replay(replay, timeout=100)
    assert [j["state"] for j in summary["jobs"]] == ["FINISHED"] * 4
    states = cluster.nodes()
    assert states["nmb-1"] == states["nmb-2"] == "LOST"
    assert states["nma-1"] == states["nma-2"] == "RUNNING"
    # Work lost with the victim ran again: more containers than tasks + AMs.
    tasks = sum(j["maps"] + 1 + 1 for j in jobs)
    assert cluster.metrics()["containers_total"] > tasks


def test_rm_restart_with_recovery_loses_no_app(cluster_factory, tmp_path: Path) -> None:
    store = tmp_path / "rmstore"
    cluster = cluster_factory(
        rate=20.0,
        conf={
            "yarn.resourcemanager.recovery.enabled": "true",
            "yarn.resourcemanager.fs.state-store.uri": f"file://{store}",
            "yarn.am.liveness-monitor.expiry-interval-ms": 120_000,
        },
    )
    cluster.start_rm()
    cluster.start_nm("nma", 2)
    cluster.start_nm("nmb", 2)
    cluster.wait_nodes(4)
    jobs = [
        {"id": f"job_{i}", "submit_ms": i * 10_000, "maps": 6, "map_ms": 40_000} for i in range(4)
    ]
    replay = cluster.replay(write_scenario(tmp_path / "jobs.toml", jobs))
    # Kill the RM while the first apps run containers and before the last is submitted.
    cluster.wait(
        lambda m: m["apps_running"] >= 2 and m["containers_allocated"] >= 4, 30, "running apps"
    )
    before = {a["app_id"]: a for a in cluster.apps()}
    assert cluster.rm is not None
    cluster.kill(cluster.rm)
    time.sleep(1.0)
    cluster.start_rm()
    m = cluster.metrics()
    assert m["recovery"]["restarts"] == 1
    assert m["epoch"] == pytest.approx(cluster.metrics()["epoch"])

    summary = cluster.wait_replay(replay, timeout=100)
    assert [j["state"] for j in summary["jobs"]] == ["FINISHED"] * 4
    apps = cluster.apps()
    # No app was lost or submitted again, and none needed a second attempt.
    assert len(apps) == 4
    assert set(before) <= {a["app_id"] for a in apps}
    assert all(a["attempts"] == 1 for a in apps), apps
    for app_id, old in before.items():
        new = next(a for a in apps if a["app_id"] == app_id)
        assert new["submit_ms"] == old["submit_ms"]
    rec = cluster.metrics()["recovery"]
    # Running containers were taken over from the NMs' reports, not restarted.
    assert rec["recovered_containers"] >= 2
    assert rec["recovered_apps"] >= 2
    assert cluster.metrics()["lost_nodes"] == 0


def test_curve_refuses_a_wrong_key_and_the_cluster_keeps_working(
    cluster_factory, tmp_path: Path
) -> None:
    keys = tmp_path / "keys"
    security.generate(keys)
    intruder = tmp_path / "intruder"
    security.generate(intruder)
    cluster = cluster_factory(keys=str(keys))
    cluster.start_rm()
    cluster.start_nm("nma", 2)
    cluster.wait_nodes(2)

    wrong = security.load(keys, serving=False, client_key=str(intruder / "client.key_secret"))
    with SyncClient(cluster.client_address, wrong.client) as client, pytest.raises(RequestTimeout):
        client.call("cluster_metrics", timeout=1.0)
    with SyncClient(cluster.client_address) as plain, pytest.raises(RequestTimeout):
        plain.call("cluster_metrics", timeout=1.0)

    summary = cluster.wait_replay(cluster.replay(write_scenario(tmp_path / "j.toml", JOBS[:2])))
    assert [j["state"] for j in summary["jobs"]] == ["FINISHED"] * 2
    m = cluster.metrics()
    assert m["auth"]["refused"] >= 1
    assert m["transport"]["client"]["handshake_failed_auth"] >= 1


def test_garbage_on_every_port_is_refused_and_counted(cluster_factory) -> None:
    cluster = cluster_factory()
    cluster.start_rm("--max-message-bytes", 65_536)
    ports = range(cluster.port_base, cluster.port_base + 4)
    # Not ZeroMQ at all: bytes on plain TCP connections.
    junk = [b"GET / HTTP/1.1\r\nHost: rm\r\n\r\n", bytes(range(256)) * 4, b"\xff" * 64]
    for port in ports:
        for payload in junk:
            with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
                s.sendall(payload)
                time.sleep(0.05)
    ctx = zmq.Context.instance()
    for port in ports:
        sock = ctx.socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 0)
        sock.connect(f"tcp://127.0.0.1:{port}")
        try:
            cases = [
                (b"\xc1 not msgpack", P.BAD_FRAME),
                (msgpack.packb({"v": 1, "type": "boom", "id": 1}), P.UNKNOWN_TYPE),
                (msgpack.packb({"v": 9, "type": "list_nodes", "id": 2}), P.BAD_VERSION),
            ]
            for payload, code in cases:
                sock.send_multipart([b"\x00" * 8, payload])
                assert sock.poll(5000), f"no error reply on port {port}"
                reply = codec.decode(sock.recv_multipart()[1]).to_map()
                assert (reply["type"], reply["code"]) == ("error", code)
            sock.send(b"one frame, no request id")  # dropped: nothing to answer to
            sock.send_multipart([b"\x00" * 8, b"x" * 200_000])  # oversize: disconnected
            assert not sock.poll(300)
        finally:
            sock.close()
    m = cluster.metrics()  # still serving
    for service, t in m["transport"].items():
        assert t["dropped"] >= 1, (service, t)
        # 3 junk connections, the DEALER, and the DEALER again after the
        # oversize message cost it its connection.
        assert t["accepted"] >= 4 and t["disconnected"] >= 4, (service, t)
        assert t.get("handshake_failed_protocol", 0) + t.get("handshake_failed", 0) >= 1, t
    assert m["errors"][P.BAD_FRAME] == 4 and m["errors"][P.UNKNOWN_TYPE] == 4
    # An NM process's port too: junk is answered with an error, and it serves on.
    cluster.start_nm("nma", 1, "--port", cluster.port_base + 10)
    cluster.wait_nodes(1)
    with socket.create_connection(("127.0.0.1", cluster.port_base + 10), timeout=2) as s:
        s.sendall(b"GET / HTTP/1.1\r\n\r\n")
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(f"tcp://127.0.0.1:{cluster.port_base + 10}")
    try:
        for payload, code in [
            (b"\xc1", P.BAD_FRAME),
            (msgpack.packb({"v": 1, "type": "launch", "id": 1}), P.UNKNOWN_TYPE),
            (codec.encode(P.Map(P.request("list_nodes", 2))), P.WRONG_SERVICE),
        ]:
            sock.send_multipart([b"\x00" * 8, payload])
            assert sock.poll(5000)
            reply = codec.decode(sock.recv_multipart()[1]).to_map()
            assert (reply["type"], reply["code"]) == ("error", code)
    finally:
        sock.close()
    beats = cluster.metrics()["time_ms"]
    cluster.wait(lambda m: m["time_ms"] > beats + 50_000 and m["active_nodes"] == 1, 10)
    stats = cluster.nm_stats("nma")
    assert stats["transport"]["requests"] >= 3 and stats["errors"] == 0


def test_rm_restart_without_recovery_is_reported_and_nms_rejoin(
    cluster_factory, tmp_path: Path
) -> None:
    cluster = cluster_factory()
    rm = cluster.start_rm()
    cluster.start_nm("nma", 2)
    cluster.wait_nodes(2)
    replay = cluster.replay(
        write_scenario(tmp_path / "j.toml", [{"id": "long", "maps": 2, "map_ms": 600_000}])
    )
    cluster.wait(lambda m: m["apps_running"] == 1, 20, "the app to run")
    epoch = cluster.metrics()["epoch"]
    cluster.kill(rm)
    cluster.start_rm()
    # A new RM, a new clock: the NM process starts over on it and registers again.
    assert cluster.metrics()["epoch"] != epoch
    cluster.wait_nodes(2)
    deadline = time.monotonic() + 30
    while replay.proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert replay.proc.returncode == 1
    assert "restarted without recovery" in cluster.log("replay")
    # The NM process rewrites its statistics file once a simulated second.
    deadline = time.monotonic() + 10
    while cluster.nm_stats("nma")["restarts"] < 1 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert cluster.nm_stats("nma")["restarts"] >= 1


def test_nm_process_killed_and_rm_restarted_in_one_run(cluster_factory, tmp_path: Path) -> None:
    """Two faults across processes in one replay: kill -9 of an NM process
    (its nodes go LOST, their work runs again elsewhere), then an RM restart
    with recovery (no app lost). Every job still finishes."""
    store = tmp_path / "rmstore"
    cluster = cluster_factory(
        rate=20.0,
        conf={
            "yarn.resourcemanager.recovery.enabled": "true",
            "yarn.resourcemanager.fs.state-store.uri": f"file://{store}",
            "yarn.nm.liveness-monitor.expiry-interval-ms": 30_000,
            "yarn.am.liveness-monitor.expiry-interval-ms": 120_000,
            "yarn.resourcemanager.am.max-attempts": 4,
        },
    )
    cluster.start_rm()
    cluster.start_nm("nma", 2)
    victim = cluster.start_nm("nmb", 2)
    cluster.wait_nodes(4)
    jobs = [{**j, "map_ms": 40_000, "maps": 6} for j in JOBS]
    replay = cluster.replay(write_scenario(tmp_path / "jobs.toml", jobs))
    cluster.wait(
        lambda m: m["apps_running"] >= 2 and m["containers_allocated"] >= 4, 30, "running apps"
    )
    cluster.kill(victim)
    cluster.wait(lambda m: m["lost_nodes"] >= 2, 30, "the victim's nodes to be LOST")
    before = {a["app_id"] for a in cluster.apps()}
    assert cluster.rm is not None
    cluster.kill(cluster.rm)
    time.sleep(1.0)
    cluster.start_rm()
    assert cluster.metrics()["recovery"]["restarts"] == 1

    summary = cluster.wait_replay(replay, timeout=100)
    assert [j["state"] for j in summary["jobs"]] == ["FINISHED"] * 4
    apps = cluster.apps()
    assert len(apps) == 4 and before <= {a["app_id"] for a in apps}
    assert cluster.nodes()["nma-1"] == cluster.nodes()["nma-2"] == "RUNNING"

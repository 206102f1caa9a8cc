"""In-process checks of the pieces the multi-process cluster is built from:
the state store and recovery, batched heartbeats, the NM's acknowledgement
of statuses, latency histograms, CURVE key files."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from emu import security
from emu.config.configuration import Configuration
from emu.msg import catalogue as C
from emu.msg import codec
from emu.msg import types as P
from emu.nm import LatencyHistogram, NMNode, NodeManagerHost, _acknowledged
from emu.resources import Resource
from emu.rm import recovery as rec
from emu.rm.actor import ResourceManager, RMAddresses


def _conf(store: Path | None = None) -> Configuration:
    conf = Configuration({"yarn.resourcemanager.scheduler.class": "fifo"})
    if store is not None:
        conf.set(rec.RECOVERY_ENABLED, "true")
        conf.set(rec.STORE_URI, f"file://{store}")
    return conf


def _call(rm: ResourceManager, service: str, mtype: str, **fields) -> dict:
    reply = rm.services.handle(service, P.request(mtype, 1, **fields))
    rm.ctx.dispatcher.drain()
    return reply


def _register(rm: ResourceManager, node_id: str, containers=()) -> dict:
    return _call(
        rm,
        C.RESOURCE_TRACKER,
        "register_node",
        node_id=node_id,
        host=node_id,
        rack="/r",
        resource={"memory-mb": 8192, "vcores": 8},
        nm_address="mem://nm",
        containers=list(containers),
    )


def _submit(rm: ResourceManager, name: str) -> str:
    app_id = _call(rm, C.CLIENT, "new_application")["app_id"]
    _call(
        rm,
        C.CLIENT,
        "submit_application",
        app_id=app_id,
        name=name,
        queue="default",
        user="u",
        priority=0,
        am_resource={"memory-mb": 1024, "vcores": 1},
        am_type="mapreduce",
        context={"job": name},
    )
    return app_id


def _heartbeat(rm: ResourceManager, node_id: str, containers=()) -> dict:
    rid = rm.ctx.nodes[node_id].response_id
    return _call(
        rm,
        C.RESOURCE_TRACKER,
        "node_heartbeat",
        node_id=node_id,
        response_id=rid,
        containers=list(containers),
        healthy=True,
    )


async def test_recovery_restores_apps_attempts_and_running_containers(
    tmp_path: Path, autojump_clock
) -> None:
    store = tmp_path / "store"
    rm = ResourceManager(_conf(store), RMAddresses.in_memory("a"))
    _register(rm, "n1")
    running = _submit(rm, "running")
    waiting = _submit(rm, "waiting")
    _heartbeat(rm, "n1")  # places the first AM container (FIFO)
    attempt = rm.ctx.apps[running].attempts[0]
    am_cid = rm.ctx.attempts[attempt].am_container_id
    assert am_cid and rm.ctx.attempts[attempt].state == "ALLOCATED"
    rm.ctx.dispatch("attempt", "LAUNCHED", attempt)
    rm.ctx.dispatcher.drain()
    killed = _submit(rm, "killed")
    _call(rm, C.CLIENT, "kill_application", app_id=killed)
    rm.ctx.dispatcher.drain()
    assert rm.ctx.apps[killed].state == "KILLED"

    # A new RM on the same store: same clock and ids, apps back.
    meta = rec.open_meta(_conf(store), 0.0, 0.0, 0)
    assert meta["restarts"] == 1
    rm2 = ResourceManager(_conf(store), RMAddresses.in_memory("b"), recovery_meta=meta)
    assert rm2.ctx.recovery is not None
    rm2.ctx.recovery.recover()
    apps = rm2.ctx.apps
    assert apps[killed].state == "KILLED"
    assert apps[waiting].state == "ACCEPTED" and len(apps[waiting].attempts) == 1
    assert apps[running].state == "ACCEPTED"
    assert rm2.ctx.attempts[attempt].state == "LAUNCHED"
    # New ids do not collide with any handed out before the restart.
    assert _call(rm2, C.CLIENT, "new_application")["app_id"] > killed

    # The AM's allocate is answered RESYNC until it registers again.
    reply = _call(
        rm2,
        C.AM_PROTOCOL,
        "allocate",
        attempt_id=attempt,
        response_id=7,
        asks=[],
        releases=[],
        blacklist_add=[],
        blacklist_remove=[],
        progress=0.0,
    )
    assert reply["command"] == P.RESYNC
    # The NM comes back with the AM container still running: taken over.
    status = {
        "container_id": am_cid,
        "state": "RUNNING",
        "exit_status": P.EXIT_INVALID,
        "resource": {"memory-mb": 1024, "vcores": 1},
        "priority": 0,
    }
    stale = {**status, "container_id": "container_0_0099_01_000001"}
    reply = _register(rm2, "n1", [status, stale])
    assert reply["work_preserving"] is True
    c = rm2.ctx.containers[am_cid]
    assert c.state == "RUNNING" and c.is_am
    assert rm2.ctx.scheduler.used == Resource(1024, 1)
    assert rm2.ctx.nodes["n1"].containers_to_cleanup == [stale["container_id"]]
    _call(rm2, C.AM_PROTOCOL, "register_am", attempt_id=attempt, host="n1")
    assert apps[running].state == "RUNNING" and len(apps[running].attempts) == 1


async def test_batched_heartbeats_are_answered_one_by_one(autojump_clock) -> None:
    rm = ResourceManager(_conf(), RMAddresses.in_memory("batch"))
    for n in ("n1", "n2"):
        _register(rm, n)
    handler = rm._handler(C.RESOURCE_TRACKER)
    beats = [
        {"node_id": n, "response_id": 0, "containers": [], "healthy": True}
        for n in ("n1", "n2", "ghost")
    ]
    wire = codec.encode(P.Map(P.request("node_heartbeats", 9, heartbeats=beats)))
    reply = (await handler(codec.decode_request(wire))).to_map()
    assert reply["type"] == "node_heartbeats_reply" and reply["id"] == 9
    first, second, ghost = reply["replies"]
    assert first["response_id"] == second["response_id"] == 1
    assert (first["action"], ghost["action"]) == (P.NORMAL, P.RESYNC)
    assert rm.services.requests["node_heartbeat"] == 3
    # Not a resource-tracker message anywhere else.
    wire = codec.encode(P.Map(P.request("node_heartbeats", 1, heartbeats=[])))
    wrong = (await rm._handler(C.CLIENT)(codec.decode_request(wire))).to_map()
    assert wrong["code"] == P.WRONG_SERVICE


class _CannedRM:
    """A resource tracker connection that answers every request with `reply`."""

    address = "tcp://rm:8031"

    def __init__(self, reply: P.Message) -> None:
        self.reply = reply

    async def request(self, payload: P.Message, timeout: float | None = None):
        return self.reply


_GOOD_BEAT = {
    "type": "node_heartbeat_reply",
    "id": 1,
    "response_id": 1,
    "containers_to_cleanup": [],
    "apps_to_cleanup": [],
    "action": P.NORMAL,
    "next_heartbeat_ms": 1000,
}


def _two_nodes() -> tuple[NodeManagerHost, list[NMNode]]:
    nodes = [NMNode(f"n{i}", f"n{i}", "/r", Resource(1024, 1), registered=True) for i in (1, 2)]
    return NodeManagerHost(nodes, "tcp://rm:8031", "tcp://nm:0"), nodes


async def test_a_batch_reply_in_bytes_is_checked_entry_by_entry() -> None:
    """Over the wire each entry is validated: a malformed one is an error
    for its own node's heartbeat (retried later), the others are applied."""
    host, nodes = _two_nodes()
    bad = {**_GOOD_BEAT, "response_id": "1"}
    wire = codec.encode(
        P.Map(P.reply({"type": "node_heartbeats", "id": 1}, replies=[_GOOD_BEAT, bad]))
    )
    await host._heartbeats(_CannedRM(codec.decode(wire)), nodes)
    assert [n.response_id for n in nodes] == [1, 0]
    assert host.errors == 1 and host.heartbeats == 2


async def test_a_batch_reply_from_the_rm_in_process_is_applied_as_built(autojump_clock) -> None:
    """Entries that are maps are the RM's own: each node takes its reply
    (response id, next heartbeat on the clock read once for the batch)."""
    host, nodes = _two_nodes()
    second = {**_GOOD_BEAT, "response_id": 7, "next_heartbeat_ms": 2000}
    reply = P.NodeHeartbeatsReply(1, [_GOOD_BEAT, second], 1000)
    await trio.sleep(5)
    await host._heartbeats(_CannedRM(reply), nodes)
    assert [n.response_id for n in nodes] == [1, 7]
    assert host.errors == 0 and host.heartbeats == 2
    assert [at for at, _ in host.scheduled()] == [6.0, 7.0]


async def test_aligned_heartbeats_fall_on_the_hosts_phase_of_the_grid(autojump_clock) -> None:
    """With align_ms, the next heartbeat is the nearest grid point to now +
    interval; a phase shifts this host's grid by that share of a step (so NM
    processes of one cluster reach the RM one after another)."""
    reply = P.NodeHeartbeatsReply(1, [_GOOD_BEAT, _GOOD_BEAT], 1000)
    await trio.sleep(12.34)
    due = []
    for phase in (0.0, 0.25):
        host, nodes = _two_nodes()
        host.align_ms, host.align_phase = 100, phase
        await host._heartbeats(_CannedRM(reply), nodes)
        due.append(sorted(round(at, 6) for at, _ in host.scheduled()))
    assert due == [[13.3, 13.3], [13.325, 13.325]]


def test_an_acknowledged_heartbeat_keeps_statuses_queued_since() -> None:
    node = NMNode("n", "n", "/r", Resource(1, 1))
    node.new_running = ["c1", "c2"]
    node.completed = [{"container_id": "c0", "state": "COMPLETE", "exit_status": 0}]
    sent = [
        {"container_id": "c1", "state": "RUNNING", "exit_status": P.EXIT_INVALID},
        {"container_id": "c2", "state": "RUNNING", "exit_status": P.EXIT_INVALID},
        *node.completed,
    ]
    node.inflight = sent
    # While the heartbeat was out: c3 started, c1 finished.
    node.new_running = ["c2", "c3"]
    node.completed.append({"container_id": "c1", "state": "COMPLETE", "exit_status": 0})
    _acknowledged(node, sent)
    assert node.new_running == ["c3"]
    assert [c["container_id"] for c in node.completed] == ["c1"]
    assert node.inflight is None


def test_latency_histogram_quantiles_and_merge() -> None:
    a, b = LatencyHistogram(), LatencyHistogram()
    for i in range(1, 1001):
        (a if i % 2 else b).add(i / 1000)  # 1 ms .. 1 s
    a.merge(b.to_dict())
    assert a.count == 1000
    assert a.quantile(0.5) == pytest.approx(0.5, rel=0.03)
    assert a.quantile(0.99) == pytest.approx(0.99, rel=0.03)
    assert a.to_dict()["p50_ms"] == pytest.approx(500, rel=0.03)


def test_state_store_writes_are_atomic_files(tmp_path: Path) -> None:
    store = rec.StateStore(tmp_path)
    record = {"app_id": "application_1_0002", "state": "RUNNING", "attempts": []}
    store.save_context("application_1_0002", {"job": {"tasks": [1, 2, 3]}})
    store.save_app(record)
    store.save_app({**record, "state": "FINISHED"})
    (loaded,) = store.load_apps()
    assert loaded["state"] == "FINISHED" and loaded["context"] == {"job": {"tasks": [1, 2, 3]}}
    assert sorted(p.name for p in (tmp_path / "apps").iterdir()) == [
        "application_1_0002.context.msgpack",
        "application_1_0002.msgpack",
    ]
    assert rec.attempt_of_container("container_1_0002_01_000007") == "appattempt_1_0002_000001"
    assert rec.attempt_of_container("bogus") == ""
    assert rec.store_dir(Configuration({rec.STORE_URI: "/x/y"})) == Path("/x/y")


def test_curve_key_files(tmp_path: Path) -> None:
    written = security.generate(tmp_path, ("client", "ops"))
    assert (tmp_path / "authorized" / "ops.key") in written
    server = security.load(tmp_path, serving=True)
    assert server.server is not None and len(server.allowed) == 2
    client = security.load(tmp_path, serving=False, client_key=str(tmp_path / "ops.key_secret"))
    assert client.server is None and client.client.server_key == server.server.public_key
    assert security.generate(tmp_path) == []  # keys are never replaced
    assert security.warn_if_exposed("127.0.0.1", None, "x", "y") is None
    assert "without CURVE" in (security.warn_if_exposed("0.0.0.0", None, "x", "y") or "")


async def test_zap_handler_admits_only_listed_keys(tmp_path: Path) -> None:
    from functools import partial

    from emu.transport import RequestTimeout, connect, serve

    security.generate(tmp_path / "k")
    security.generate(tmp_path / "other")
    keys = security.load(tmp_path / "k", serving=True)
    wrong = security.load(
        tmp_path / "k", serving=False, client_key=str(tmp_path / "other/client.key_secret")
    )
    stats = security.AuthStats()

    async def echo(payload: bytes) -> bytes:
        return payload

    async with trio.open_nursery() as nursery:
        await nursery.start(security.zap_handler, keys.allowed, stats)
        address = await nursery.start(partial(serve, "tcp://127.0.0.1:0", echo, curve=keys.server))
        async with connect(address, curve=keys.client) as conn:
            assert await conn.request(b"hi", timeout=5) == b"hi"
        async with connect(address, curve=wrong.client) as conn:
            with pytest.raises(RequestTimeout):
                await conn.request(b"hi", timeout=0.5)
        nursery.cancel_scope.cancel()
    assert stats.allowed >= 1 and stats.refused >= 1

"""Node heartbeats: the RM's one path (`NodeHeartbeats` in,
`NodeHeartbeatsReply` out, the common replies as bare response ids) answers
a batch exactly as the same heartbeats sent one by one as `node_heartbeat`
maps, and the NM host applies both kinds of entry."""

from __future__ import annotations

from typing import Any

import pytest
import trio

from emu.msg import catalogue as C
from emu.msg import codec
from emu.msg import types as P
from emu.rm.scheduler.locality import ANY
from emu.testing.cluster import ask, fifo_conf
from emu.testing.rm import RMHarness

_DONE = {"container_id": "c1", "state": "COMPLETE", "exit_status": 0, "diagnostics": ""}


def _cluster() -> tuple[RMHarness, str]:
    rm = RMHarness(fifo_conf())
    rm.add_node("h1")
    rm.add_node("h2")
    app = rm.submit("a")
    rm.start_am(app, "h1")
    rm.allocate(app, [ask(20, ANY, 2)])
    return rm, app


def _state(rm: RMHarness) -> dict[str, Any]:
    return {
        "nodes": {
            n.node_id: (n.response_id, n.last_heartbeat_ms, n.state, n.containers_to_cleanup)
            for n in rm.ctx.nodes.values()
        },
        "used": rm.ctx.scheduler.used,
        "containers": sorted(rm.ctx.containers),
        "handled": dict(rm.ctx.dispatcher.handled),
        "requests": dict(rm.services.requests),
        "errors": dict(rm.services.errors),
    }


def _one_by_one(rm: RMHarness, request_id: int, beats: list[P.Beat]) -> list[dict[str, Any]]:
    replies = []
    for n, r, s in beats:
        msg = P.request(
            "node_heartbeat", request_id, node_id=n, response_id=r, containers=s, healthy=True
        )
        replies.append(rm.services.handle(C.RESOURCE_TRACKER, msg))
    return replies


async def test_the_rm_answers_a_batch_as_the_same_heartbeats_one_by_one(autojump_clock) -> None:
    """Quiet beats, a placing beat, an unknown node, a repeat, a stale one
    and a stray container: same replies (spelled out), same RM state."""
    lean_rm, _ = _cluster()
    plain_rm, _ = _cluster()
    stray = {"container_id": "container_0_0042_01_000002", "state": "RUNNING", "exit_status": 0}
    batches: list[list[tuple[str, int, list[dict[str, Any]]]]] = [
        [("h1", 1, []), ("h2", 0, []), ("ghost", 0, [])],
        [("h2", 1, []), ("h1", 2, [])],
        [("h2", 1, []), ("h1", 3, [stray])],  # h2 repeats its last beat
        [("h1", 4, []), ("h2", 2, [])],
        [("h1", 0, [])],  # too far behind: RESYNC, the node is REBOOTED
    ]
    for i, beats in enumerate(batches, start=10):
        await trio.sleep(1)
        lean = lean_rm.services.node_heartbeats(P.NodeHeartbeats(i, beats))
        plain = _one_by_one(plain_rm, i, beats)
        assert [lean.entry(r) for r in lean.replies] == plain
        assert _state(lean_rm) == _state(plain_rm)
    # The common replies travelled as bare response ids, the others as maps.
    replies = lean_rm.services.node_heartbeats(P.NodeHeartbeats(20, [("h2", 3, [])])).replies
    assert replies == [4]
    assert lean_rm.ctx.nodes["h2"].last_reply == 4
    # A repeat of a beat whose reply was kept as its response id.
    again = lean_rm.services.node_heartbeats(P.NodeHeartbeats(21, [("h2", 3, [])])).replies
    assert again == [
        {
            "response_id": 4,
            "containers_to_cleanup": [],
            "apps_to_cleanup": [],
            "action": P.NORMAL,
            "next_heartbeat_ms": 1000,
            "type": "node_heartbeat_reply",
            "id": 21,
        }
    ]
    assert lean_rm.ctx.nodes["h2"].response_id == 4


async def test_the_stray_container_is_cleaned_up_through_a_reply_map(autojump_clock) -> None:
    rm, _ = _cluster()
    stray = {"container_id": "container_0_0042_01_000002", "state": "RUNNING", "exit_status": 0}
    node = rm.ctx.nodes["h2"]
    (reply,) = rm.services.node_heartbeats(P.NodeHeartbeats(1, [("h2", 0, [stray])])).replies
    assert isinstance(reply, dict)
    assert reply["containers_to_cleanup"] == [stray["container_id"]]
    assert node.last_reply is reply and node.containers_to_cleanup == []


class _CannedRM:
    """A resource tracker in this process that answers with `reply` and
    keeps what it was sent."""

    address = "mem://rm/resource-tracker"

    def __init__(self, reply: Any) -> None:
        self.reply = reply
        self.sent: list[Any] = []

    async def request(self, payload: Any, timeout: float | None = None) -> Any:
        self.sent.append(payload)
        return self.reply


async def test_the_nm_host_applies_both_kinds_of_reply(autojump_clock) -> None:
    """A bare response id acknowledges what the node sent and schedules its
    next heartbeat; a reply map (here RESYNC) is applied as such."""
    from emu.nm import NMNode, NodeManagerHost
    from emu.resources import Resource

    nodes = [NMNode(f"n{i}", f"n{i}", "/r", Resource(1024, 1), registered=True) for i in (1, 2)]
    host = NodeManagerHost(nodes, "mem://rm/resource-tracker", "mem://nm")
    nodes[0].completed.append(dict(_DONE))
    resync = {
        "response_id": 0,
        "containers_to_cleanup": [],
        "apps_to_cleanup": [],
        "action": P.RESYNC,
        "next_heartbeat_ms": 1000,
        "type": "node_heartbeat_reply",
        "id": 1,
    }
    rm = _CannedRM(P.NodeHeartbeatsReply(1, [1, resync], 1000))
    await trio.sleep(5)
    await host._serve_batch(rm, nodes)  # type: ignore[arg-type]
    (sent,) = rm.sent
    assert sent.type == "node_heartbeats"
    assert sent.beats == [("n1", 0, [_DONE]), ("n2", 0, [])]
    assert nodes[0].response_id == 1 and nodes[0].completed == [] and nodes[0].inflight is None
    assert not nodes[1].registered and host.resyncs == 1
    assert host.heartbeats == 2 and nodes[0].heartbeats == 1
    assert [(at, n.node_id) for at, n in host.scheduled()] == [(5.0, "n2"), (6.0, "n1")]


@pytest.mark.parametrize("recovery", [False, True])
@pytest.mark.parametrize("wire", [False, True])
async def test_the_rm_actor_answers_a_batch(autojump_clock, tmp_path, recovery, wire) -> None:
    """The same replies with recovery on or off, handed over or through the
    codec; on another service, the batch is refused."""
    from emu.config.configuration import Configuration
    from emu.rm import recovery as rec
    from emu.rm.actor import ResourceManager, RMAddresses

    conf = Configuration({"yarn.resourcemanager.scheduler.class": "fifo"})
    if recovery:
        conf.set(rec.RECOVERY_ENABLED, "true")
        conf.set(rec.STORE_URI, f"file://{tmp_path}")
    rm = ResourceManager(conf, RMAddresses.in_memory("lean"))
    rm.services.handle(
        C.RESOURCE_TRACKER,
        P.request(
            "register_node", 1, node_id="n1", host="n1", rack="/r",
            resource={"memory-mb": 8192, "vcores": 8}, nm_address="mem://nm", containers=[],
        ),
    )  # fmt: skip

    def carried(message: P.Message) -> P.Message:
        return codec.decode_request(codec.encode(message)) if wire else message

    batch = P.NodeHeartbeats(5, [("n1", 0, []), ("x", 0, [])])
    reply = await rm._handler(C.RESOURCE_TRACKER)(carried(batch))
    assert reply.type == "node_heartbeats_reply"
    replies = reply.to_map()["replies"]
    assert [(r["response_id"], r["action"], r["id"]) for r in replies] == [
        (1, P.NORMAL, 5),
        (0, P.RESYNC, 5),
    ]
    assert rm.ctx.nodes["n1"].response_id == 1
    assert rm.services.requests["node_heartbeat"] == 2
    other = P.NodeHeartbeats(6, [("n1", 1, [])])
    wrong = (await rm._handler(C.CLIENT)(carried(other))).to_map()
    assert wrong["code"] == P.WRONG_SERVICE and rm.ctx.nodes["n1"].response_id == 1

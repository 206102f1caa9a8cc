"""Decoding validates against the catalogue; bad messages raise ProtocolError
with the right code, never anything else; every message class encodes to its
catalogue map and decodes back to an equal object."""

from __future__ import annotations

import msgpack
import pytest

from emu.msg import catalogue as C
from emu.msg import codec
from emu.msg import types as P
from emu.resources import Resource
from emu.testing.cluster import ask


def heartbeat(**over):
    msg = P.request("node_heartbeat", 7, node_id="n1", response_id=0, containers=[], healthy=True)
    msg.update(over)
    return msg


def test_round_trip():
    data = codec.encode(P.Map(heartbeat()))
    msg = codec.decode(data).to_map()
    assert msg["type"] == "node_heartbeat" and msg["id"] == 7 and msg["v"] == P.VERSION


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        (b"\xc1garbage", P.BAD_FRAME),
        (msgpack.packb([1, 2, 3]), P.BAD_FRAME),
        (msgpack.packb({"v": 99, "type": "node_heartbeat", "id": 1}), P.BAD_VERSION),
        (msgpack.packb({"v": 1, "type": "no_such_thing", "id": 1}), P.UNKNOWN_TYPE),
        (msgpack.packb({"v": 1, "type": "node_heartbeat", "id": 1}), P.BAD_FIELD),
    ],
)
def test_bad_frames_have_error_codes(raw, code):
    with pytest.raises(P.ProtocolError) as e:
        codec.decode(raw)
    assert e.value.code == code
    invalid = codec.decode_request(raw)
    assert invalid.type == P.INVALID_TYPE
    assert invalid.to_map()["code"] == code


def test_missing_and_ill_typed_fields_are_named():
    with pytest.raises(P.ProtocolError, match="missing field response_id"):
        codec.validate({k: v for k, v in {**heartbeat(), "v": 1}.items() if k != "response_id"})
    with pytest.raises(P.ProtocolError, match="response_id: expected int"):
        codec.validate({**heartbeat(response_id="0"), "v": 1})
    bad_status = [{"container_id": "c1", "state": "RUNNING"}]
    with pytest.raises(P.ProtocolError, match=r"containers\[0\]\.exit_status"):
        codec.validate({**heartbeat(containers=bad_status), "v": 1})


def test_nested_ask_capability_is_checked():
    bad = ask(1, "*", 1, capability={"memory-mb": "x", "vcores": 1})
    msg = P.request(
        "allocate", 1, attempt_id="a", response_id=0, asks=[bad], releases=[],
        blacklist_add=[], blacklist_remove=[], progress=0.0,
    )  # fmt: skip
    with pytest.raises(P.ProtocolError, match=r"asks\[0\]\.capability\.memory-mb"):
        codec.decode(codec.encode(P.Map(msg)))


def test_request_id_survives_in_errors_for_the_reply():
    raw = msgpack.packb({"v": 1, "type": "node_heartbeat", "id": 42})
    with pytest.raises(P.ProtocolError) as e:
        codec.decode(raw)
    assert e.value.request_id == 42


def test_every_request_type_belongs_to_one_service_and_has_a_reply():
    seen = set()
    for names in C.SERVICES.values():
        assert not (names & seen)
        seen |= names
    assert seen == set(C.CATALOGUE)
    for name in C.CATALOGUE:
        codec.validate({"v": 1, "type": f"{name}_reply", "id": 1, **_fill(C.CATALOGUE[name].reply)})


def _fill(fields):
    out = {}
    for k, d in fields.items():
        if isinstance(d, C.Opt):
            continue
        if isinstance(d, C.Struct):
            out[k] = _fill(d.fields)
        elif isinstance(d, list):
            out[k] = []
        else:
            out[k] = {int: 0, str: "", float: 0.0, bool: False, dict: {}}[d]
    return out


def test_unknown_extra_fields_are_tolerated():
    msg = codec.validate({**heartbeat(), "v": 1, "from_the_future": 1})
    assert msg["from_the_future"] == 1
    assert msg["type"] == "node_heartbeat"


_RUNNING = {"container_id": "c1", "state": "RUNNING", "exit_status": -1000}


def _wire(message):
    """`message` as ZeroMQ carries it: encoded, then decoded and validated."""
    return codec.decode(codec.encode(message))


def test_node_heartbeats_are_the_catalogue_message_on_the_wire():
    batch = P.NodeHeartbeats(3, [("n1", 4, [_RUNNING]), ("n2", 0, [])])
    assert batch.to_map() == {
        "heartbeats": [
            {"node_id": "n1", "response_id": 4, "containers": [_RUNNING], "healthy": True},
            {"node_id": "n2", "response_id": 0, "containers": [], "healthy": True},
        ],
        "type": "node_heartbeats",
        "id": 3,
        "v": P.VERSION,
    }
    back = _wire(batch)
    assert isinstance(back, P.NodeHeartbeats)
    assert (back.request_id, back.beats, back.health) == (3, batch.beats, None)
    sick = P.NodeHeartbeats(4, [("n1", 0, []), ("n2", 0, [])], [(True, ""), (False, "disk")])
    assert _wire(sick).health == [(True, ""), (False, "disk")]
    assert sick.to_map()["heartbeats"][1]["health_report"] == "disk"


def test_heartbeat_replies_spell_out_the_common_reply():
    map_entry = {
        "response_id": 9,
        "containers_to_cleanup": ["c1"],
        "apps_to_cleanup": [],
        "action": P.NORMAL,
        "next_heartbeat_ms": 1000,
        "type": "node_heartbeat_reply",
        "id": 5,
    }
    reply = P.NodeHeartbeatsReply(5, [2, map_entry], 1000)
    common = {**map_entry, "response_id": 2, "containers_to_cleanup": []}
    assert reply.to_map()["replies"] == [common, map_entry]
    assert _wire(reply).replies == [common, map_entry]


def test_allocate_and_its_reply_are_the_catalogue_messages_on_the_wire():
    req = P.Allocate(7, "appattempt_1_0001_000001", 3, [ask(1, "*", 2)], ["c9"], [], [], 0.5)
    msg = req.to_map()
    assert msg["type"] == "allocate" and msg["id"] == 7 and msg["releases"] == ["c9"]
    codec.validate(msg)
    back = _wire(req)
    assert isinstance(back, P.Allocate) and back.to_map() == msg
    reply = P.AllocateReply(7, 4, [], [_RUNNING | {"state": "COMPLETE"}], Resource(1024, 2), 3)
    wire = reply.to_map()
    assert wire["available"] == {"memory-mb": 1024, "vcores": 2}
    assert (wire["preemption"], wire["command"]) == (None, None)
    again = _wire(reply)
    assert isinstance(again, P.AllocateReply) and again.to_map() == wire
    assert reply.answering(8).to_map() == {**wire, "id": 8}


def test_a_map_message_is_handed_as_its_map():
    msg = heartbeat()
    assert P.Map(msg).type == "node_heartbeat"
    assert P.Map(msg).to_map() is msg


def _batch(**entry_over):
    entry = {"node_id": "n1", "response_id": 0, "containers": [], "healthy": True}
    entry.update(entry_over)
    return {"heartbeats": [entry]}


_STATUS = {"container_id": "c1", "state": "COMPLETE", "exit_status": 0}


@pytest.mark.parametrize(
    ("fields", "fits"),
    [
        (_batch(), True),
        (_batch(health_report=None), True),
        (_batch(health_report="disk full"), True),
        (_batch(containers=[_STATUS, {**_STATUS, "diagnostics": "x"}]), True),
        ({"heartbeats": []}, True),
        ({"heartbeats": None}, False),
        ({}, False),
        (_batch(response_id=True), False),
        (_batch(response_id=1.0), False),
        (_batch(node_id=None), False),
        (_batch(healthy=1), False),
        (_batch(health_report=3), False),
        (_batch(containers=None), False),
        (_batch(containers=[_STATUS, "c2"]), False),
        (_batch(containers=[{**_STATUS, "exit_status": "0"}]), False),
        (_batch(containers=[{**_STATUS, "diagnostics": 5}]), False),
        ({"heartbeats": [["n1"]]}, False),
    ],
)
def test_the_fast_check_agrees_with_the_explaining_one(fields, fits):
    """The compiled predicate `validate` tries first must say no wherever
    `_check_fields` raises (a wrong yes would let a bad map through), and
    yes where it passes, nested lists and optional fields included."""
    spec = C.CATALOGUE["node_heartbeats"]
    try:
        codec._check_fields(fields, spec.fields)
        explained = True
    except P.ProtocolError:
        explained = False
    assert explained is fits
    assert codec._FAST["node_heartbeats"](fields) is fits


def test_the_fast_check_covers_nested_structs_and_lists_of_str():
    ok = P.request(
        "allocate",
        1,
        attempt_id="a",
        response_id=0,
        asks=[ask(1, "*", 2)],
        releases=["c1"],
        blacklist_add=[],
        blacklist_remove=[],
        progress=0.5,
    )
    check = codec._FAST["allocate"]
    assert check(ok)
    assert check({**ok, "progress": 1})  # an int is a number
    assert not check({**ok, "releases": ["c1", 2]})
    assert not check({**ok, "asks": [{**ask(1, "*", 2), "capability": {"memory-mb": 1}}]})
    assert not check({**ok, "asks": [{**ask(1, "*", 2), "relax_locality": None}]})

"""Decoding validates against the catalogue; bad messages raise ProtocolError
with the right code, never anything else."""

from __future__ import annotations

import msgpack
import pytest

from emu import protocol as P
from emu.testing.cluster import ask


def heartbeat(**over):
    msg = P.request("node_heartbeat", 7, node_id="n1", response_id=0, containers=[], healthy=True)
    msg.update(over)
    return msg


def test_round_trip():
    data = P.encode(heartbeat())
    msg = P.decode(data)
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
        P.decode(raw)
    assert e.value.code == code


def test_missing_and_ill_typed_fields_are_named():
    with pytest.raises(P.ProtocolError, match="missing field response_id"):
        P.validate({k: v for k, v in {**heartbeat(), "v": 1}.items() if k != "response_id"})
    with pytest.raises(P.ProtocolError, match="response_id: expected int"):
        P.validate({**heartbeat(response_id="0"), "v": 1})
    bad_status = [{"container_id": "c1", "state": "RUNNING"}]
    with pytest.raises(P.ProtocolError, match=r"containers\[0\]\.exit_status"):
        P.validate({**heartbeat(containers=bad_status), "v": 1})


def test_nested_ask_capability_is_checked():
    bad = ask(1, "*", 1, capability={"memory-mb": "x", "vcores": 1})
    msg = P.request(
        "allocate", 1, attempt_id="a", response_id=0, asks=[bad], releases=[],
        blacklist_add=[], blacklist_remove=[], progress=0.0,
    )  # fmt: skip
    with pytest.raises(P.ProtocolError, match=r"asks\[0\]\.capability\.memory-mb"):
        P.decode(P.encode(msg))


def test_request_id_survives_in_errors_for_the_reply():
    raw = msgpack.packb({"v": 1, "type": "node_heartbeat", "id": 42})
    with pytest.raises(P.ProtocolError) as e:
        P.decode(raw)
    assert e.value.request_id == 42


def test_every_request_type_belongs_to_one_service_and_has_a_reply():
    seen = set()
    for names in P.SERVICES.values():
        assert not (names & seen)
        seen |= names
    assert seen == set(P.CATALOGUE)
    for name in P.CATALOGUE:
        P.validate({"v": 1, "type": f"{name}_reply", "id": 1, **_fill(P.CATALOGUE[name].reply)})


def _fill(fields):
    out = {}
    for k, d in fields.items():
        if isinstance(d, P.Opt):
            continue
        if isinstance(d, P.Struct):
            out[k] = _fill(d.fields)
        elif isinstance(d, list):
            out[k] = []
        else:
            out[k] = {int: 0, str: "", float: 0.0, bool: False, dict: {}}[d]
    return out


def test_unknown_extra_fields_are_tolerated():
    msg = P.validate({**heartbeat(), "v": 1, "from_the_future": 1})
    assert msg["from_the_future"] == 1
    assert msg["type"] == "node_heartbeat"


@pytest.fixture
def frames_on():
    before = P.set_frames(True)
    yield
    P.set_frames(before)


def test_a_frame_encodes_to_the_same_bytes_and_decodes_to_its_own_map(frames_on):
    msg = heartbeat(containers=[{"container_id": "c1", "state": "RUNNING", "exit_status": -1000}])
    f = P.frame(msg)
    assert isinstance(f, P.Frame)
    assert bytes(f) == P.encode(heartbeat(containers=msg["containers"]))
    assert P.decode(f) is msg  # handed over, not copied
    assert P.decode(bytes(f)) == msg


def test_a_frame_is_validated_as_its_bytes_would_be(frames_on):
    ill_typed = P.frame(heartbeat(response_id="0"))
    with pytest.raises(P.ProtocolError, match="response_id: expected int") as e:
        P.decode(ill_typed)
    assert e.value.request_id == 7
    with pytest.raises(P.ProtocolError) as from_bytes:
        P.decode(bytes(ill_typed))
    assert (from_bytes.value.code, from_bytes.value.message) == (e.value.code, e.value.message)
    unknown = P.Frame({"v": 1, "type": "no_such_thing", "id": 1})
    with pytest.raises(P.ProtocolError) as e:
        P.decode(unknown)
    assert e.value.code == P.UNKNOWN_TYPE


def test_frames_off_gives_bytes():
    before = P.set_frames(False)
    try:
        assert P.frame(heartbeat()) == P.encode(heartbeat())
    finally:
        P.set_frames(before)


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
    spec = P.CATALOGUE["node_heartbeats"]
    try:
        P._check_fields(fields, spec.fields)
        explained = True
    except P.ProtocolError:
        explained = False
    assert explained is fits
    assert P._FAST["node_heartbeats"](fields) is fits


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
    check = P._FAST["allocate"]
    assert check(ok)
    assert check({**ok, "progress": 1})  # an int is a number
    assert not check({**ok, "releases": ["c1", 2]})
    assert not check({**ok, "asks": [{**ask(1, "*", 2), "capability": {"memory-mb": 1}}]})
    assert not check({**ok, "asks": [{**ask(1, "*", 2), "relax_locality": None}]})

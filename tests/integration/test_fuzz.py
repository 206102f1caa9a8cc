"""Fuzzing every endpoint: noise alongside a replay (in-process and over
ZeroMQ), junk frames on the wire, and Hypothesis-drawn well-formed requests
with arbitrary values. `make fuzz` runs the noise campaign at 100,000
requests per endpoint (tests/fuzzing.py); here the counts are small."""

from __future__ import annotations

from typing import Any

import trio
import zmq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from emu.config.configuration import Configuration
from emu.metrics.cluster_invariants import check_state
from emu.msg import catalogue as C
from emu.msg import codec
from emu.msg import types as P
from emu.rm.actor import ResourceManager, RMAddresses
from emu.rm.scheduler.locality import ANY
from emu.simulation import run_virtual
from emu.testing.cluster import ask, fifo_conf
from emu.testing.rm import RMHarness
from emu.transport import connect
from tests.fuzzing import ENDPOINTS, KINDS, campaign, workload_sim

RM_SERVICES = (C.RESOURCE_TRACKER, C.AM_PROTOCOL, C.CLIENT, C.ADMIN)


def _check_reports(done: Any, count: int) -> None:
    for service in ENDPOINTS:
        report = done.reports[service]
        assert report.sent == count
        assert report.codes["no_error"] == 0, f"{service} acted on noise"
        assert report.codes[P.INTERNAL] == 0, f"{service} crashed on noise"
    assert set().union(*(r.kinds for r in done.reports.values())) == set(KINDS)
    for service in RM_SERVICES:
        for code, n in done.reports[service].codes.items():
            assert done.rm_errors.get(code, 0) >= n
        assert done.rm_transport[service]["handler_errors"] == 0
    assert done.nm_refused == dict(done.reports[C.CONTAINER_MANAGEMENT].codes)


def test_noise_on_every_endpoint_leaves_the_replay_unchanged():
    """300 bad requests per endpoint, each answered with an error and
    counted; the replay alongside ends byte-for-byte as a quiet one."""
    quiet = run_virtual(workload_sim())
    done = campaign(300, seed=3)
    _check_reports(done, 300)
    assert [j["state"] for j in done.result.jobs] == ["FINISHED"] * 3
    assert done.result.jobs == quiet.jobs
    assert done.result.nodes == quiet.nodes
    assert done.result.simulated_ms == quiet.simulated_ms


def test_noise_over_zeromq_on_loopback():
    """The same noise through real sockets, on the scaled wall clock: every
    job still finishes and every request is answered with an error."""
    done = campaign(60, seed=5, zmq_rate=50.0)
    _check_reports(done, 60)
    assert [j["state"] for j in done.result.jobs] == ["FINISHED"] * 3


async def test_junk_frames_are_dropped_and_counted_and_the_rm_keeps_serving():
    """Multipart shapes no DEALER of ours sends (one frame, four frames, an
    empty envelope) get no reply, are counted as dropped, and the next good
    request is served."""
    conf = Configuration({"yarn.resourcemanager.scheduler.class": "fifo"})
    ports = dict.fromkeys(("resource_tracker", "am_protocol", "client", "admin"), 0)
    rm = ResourceManager(conf, RMAddresses.tcp("127.0.0.1", ports))
    async with trio.open_nursery() as nursery:
        addrs = await nursery.start(rm.run)
        ctx = zmq.Context.instance()
        sock = ctx.socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 0)
        sock.connect(addrs.client)
        try:
            for frames in ([b"one"], [b"a", b"b", b"c"], [], [b"\x00" * 8, b"", b"x", b"y"]):
                if frames:
                    sock.send_multipart(frames)
            with trio.fail_after(10):
                while rm.stats[C.CLIENT].dropped < 3:
                    await trio.sleep(0.01)
        finally:
            sock.close()
        async with connect(addrs.client) as conn:
            reply = await conn.request(codec.encode(P.Map(P.request("cluster_metrics", 1))), 10)
            assert codec.decode(reply).type == "cluster_metrics_reply"
        stats = rm.stats[C.CLIENT]
        assert stats.requests == stats.replies + stats.dropped + stats.handler_errors
        assert stats.handler_errors == 0
        nursery.cancel_scope.cancel()


# --- Hypothesis: well-formed requests, arbitrary values ------------------------------------
INTS = st.integers(min_value=-(2**63), max_value=2**64 - 1)  # what msgpack can carry


def _values(desc: Any) -> st.SearchStrategy[Any]:
    if desc is C.ANY:
        return st.none() | INTS | st.text(max_size=5)
    if isinstance(desc, C.Opt):
        return st.none() | _values(desc.inner)
    if isinstance(desc, C.Struct):
        return st.fixed_dictionaries({n: _values(d) for n, d in desc.fields.items()})
    if isinstance(desc, list):
        return st.lists(_values(desc[0]), max_size=3)
    names = st.sampled_from(["h1", "h2", "nope", "", "application_0_0001"])
    return {
        int: INTS,
        float: st.floats(allow_nan=True),
        bool: st.booleans(),
        str: names | st.text(max_size=8),
        dict: st.dictionaries(st.text(max_size=3), INTS, max_size=2),
        list: st.lists(INTS, max_size=2),
    }[desc]


def _service_of(mtype: str) -> str:
    return next(s for s in RM_SERVICES if mtype in C.SERVICES[s])


# node_heartbeats is the actor's batch envelope: it unpacks it into node_heartbeat
# requests before the services see them, so those are drawn instead.
RM_TYPES = sorted(t for s in RM_SERVICES for t in C.SERVICES[s] if t != "node_heartbeats")


@st.composite
def rm_requests(draw: st.DrawFn) -> dict:
    mtype = draw(st.sampled_from(RM_TYPES))
    fields = draw(
        st.fixed_dictionaries({n: _values(d) for n, d in C.CATALOGUE[mtype].fields.items()})
    )
    return P.request(mtype, draw(st.integers(0, 2**31)), **fields)


@settings(
    max_examples=80, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(messages=st.lists(rm_requests(), min_size=1, max_size=4))
async def test_well_formed_requests_with_arbitrary_values_never_crash_the_rm(messages):
    """Any request the catalogue accepts gets its reply or a refusal, never
    an internal error, and leaves the RM's invariants intact."""
    rm = RMHarness(fifo_conf())
    rm.add_node("h1")
    rm.add_node("h2")
    app = rm.submit("a")
    rm.start_am(app, "h1")
    rm.allocate(app, [ask(20, ANY, 2)])
    rm.heartbeat("h2")
    for msg in messages:
        try:
            decoded = codec.decode(codec.encode(P.Map(msg))).to_map()
        except P.ProtocolError:
            continue  # e.g. an integer msgpack cannot carry: refused before any service
        reply = rm.services.handle(_service_of(msg["type"]), decoded)
        assert reply["type"] in (f"{msg['type']}_reply", "error"), reply
        assert reply.get("code") != P.INTERNAL, (msg, reply)
        codec.decode(codec.encode(P.Map(reply)))
        check_state(rm.ctx)
        await trio.sleep(0)

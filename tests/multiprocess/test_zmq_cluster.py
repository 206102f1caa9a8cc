"""The same actors over ZeroMQ on loopback, on the scaled wall clock: the RM
serves tcp:// endpoints, the NM host and its AMs reach it through real
sockets. (Separate OS processes come with the multi-process launcher; this
shows the actors need nothing but the address to change.)"""

from __future__ import annotations

import time

import trio

from emu.clock import ScaledWallClock
from emu.rm.actor import RMAddresses
from emu.testing.cluster import mr_job, simulation


def test_cluster_over_tcp_loopback_on_scaled_wall_time():
    jobs = [
        mr_job(f"job_{i}", i * 2_000, maps=6, reduces=1, map_ms=20_000, reduce_ms=10_000)
        for i in range(3)
    ]
    addrs = RMAddresses.tcp("127.0.0.1", dict.fromkeys(
        ("resource_tracker", "am_protocol", "client", "admin"), 0))  # fmt: skip
    sim = simulation(jobs, rm_addresses=addrs, nm_address="tcp://127.0.0.1:0")
    rate = 40.0
    started = time.time()
    result = trio.run(sim.run, clock=ScaledWallClock(time.time(), rate))
    wall = time.time() - started
    assert [j["state"] for j in result.jobs] == ["FINISHED"] * 3
    # Simulated time is wall time times the rate, so it can never run ahead
    # of it (a loaded machine only makes the run take longer, in both); the
    # last job is submitted at 4 s and needs 20 s of maps and 10 s of reduce.
    assert 34_000 <= result.simulated_ms <= (wall * rate + 1) * 1000
    assert result.heartbeats > 0


async def test_rm_answers_garbage_with_an_error_and_keeps_serving():
    """Random bytes, an unknown type and a request on the wrong service each
    get an error reply over tcp; a good request afterwards is served."""
    import msgpack

    from emu.config.configuration import Configuration
    from emu.msg import codec
    from emu.msg import types as P
    from emu.rm.actor import ResourceManager
    from emu.transport import connect

    conf = Configuration({"yarn.resourcemanager.scheduler.class": "fifo"})
    ports = dict.fromkeys(("resource_tracker", "am_protocol", "client", "admin"), 0)
    rm = ResourceManager(conf, RMAddresses.tcp("127.0.0.1", ports))
    async with trio.open_nursery() as nursery:
        addrs = await nursery.start(rm.run)
        async with connect(addrs.client) as conn:
            bad = [
                (b"\x00\xff garbage", P.BAD_FRAME),
                (msgpack.packb({"v": 1, "type": "launch_missiles", "id": 3}), P.UNKNOWN_TYPE),
                (
                    codec.encode(P.Map(P.request("register_am", 4, attempt_id="x", host="h"))),
                    P.WRONG_SERVICE,
                ),
            ]
            for payload, code in bad:
                reply = codec.decode(await conn.request(payload, timeout=5)).to_map()
                assert (reply["type"], reply["code"]) == ("error", code)
            ok = codec.decode(
                await conn.request(codec.encode(P.Map(P.request("cluster_metrics", 5))), timeout=5)
            ).to_map()
            assert ok["type"] == "cluster_metrics_reply"
        assert rm.services.errors[P.BAD_FRAME] == 1
        nursery.cancel_scope.cancel()

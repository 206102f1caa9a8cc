"""Noise for every endpoint, and a campaign that sends it alongside a replay.

`noise(service, rng, request_id)` makes one bad request for a service: random
bytes, a truncated or oversized frame, msgpack that is not a message, a
wrong version, an unknown type, a type another service serves, a reply type
sent as a request, or a well-formed catalogue request of that service with
one field dropped or of the wrong type. Every kind is invalid by
construction, so no receiver may act on it: each must get an error reply.

`campaign(count, ...)` replays a small workload on the virtual clock while a
task sends `count` noise requests to each of the five endpoints (the RM's
resource tracker, AM protocol, client and admin services, and the NM
container manager), between the actors' own timers. It returns the replay's
result and what each endpoint answered; the tests compare the result with a
quiet run's. `python -m tests.fuzzing --count 100000` is `make fuzz`.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import msgpack
import trio

from emu.clock import ScaledWallClock, run_deterministically, virtual_clock
from emu.msg import catalogue as C
from emu.msg import codec
from emu.msg import types as P
from emu.rm.actor import RMAddresses
from emu.simulation import RunResult, Simulation, run_virtual
from emu.testing.cluster import mr_job, simulation
from emu.transport import connect, in_process

ENDPOINTS = (C.RESOURCE_TRACKER, C.AM_PROTOCOL, C.CLIENT, C.ADMIN, C.CONTAINER_MANAGEMENT)
KINDS = (
    "random_bytes",
    "truncated",
    "oversized",
    "not_a_message",
    "wrong_version",
    "unknown_type",
    "wrong_service",
    "reply_as_request",
    "missing_field",
    "mistyped_field",
)
OVERSIZED_BYTES = 256 * 1024
"""An oversized frame in-process: far beyond any real message (over ZeroMQ the
ROUTER's MAXMSGSIZE, 64 MB, disconnects the sender instead)."""


def sample(desc: Any, rng: random.Random) -> Any:
    """A valid value for a catalogue field descriptor."""
    if desc is C.ANY:
        return rng.choice([1, "x", None, [1], {"k": 1}])
    if isinstance(desc, C.Opt):
        return None if rng.random() < 0.3 else sample(desc.inner, rng)
    if isinstance(desc, C.Struct):
        return {name: sample(d, rng) for name, d in desc.fields.items()}
    if isinstance(desc, list):
        return [sample(desc[0], rng) for _ in range(rng.randrange(3))]
    if desc is int:
        return rng.choice([0, 1, -1, 7, 2**31, -(2**63), 2**64 - 1])
    if desc is float:
        return rng.choice([0.0, 0.5, -1.0, 1e300])
    if desc is bool:
        return rng.random() < 0.5
    if desc is str:
        return rng.choice(["", "fuzz", "node1", "application_0_0001", "\u00e9" * 40])
    if desc is dict:
        return {"fuzz": rng.randrange(10)}
    if desc is list:
        return [rng.randrange(10)]
    raise TypeError(f"no sample for {desc!r}")


def wrong(desc: Any, rng: random.Random) -> Any:
    """A non-None value that `desc` does not accept (None for ANY)."""
    if desc is C.ANY:
        return None
    if isinstance(desc, C.Opt):
        return wrong(desc.inner, rng)
    if isinstance(desc, C.Struct) or desc is dict:
        return rng.choice([[1, 2], "map", 3])
    if isinstance(desc, list) or desc is list:
        return rng.choice([{"a": 1}, "list", 4])
    if desc in (int, float):
        return rng.choice(["12", [1], {"n": 1}, True] if desc is int else ["1.5", [1]])
    if desc is bool:
        return rng.choice(["true", [True], {"b": 1}])
    if desc is str:
        return rng.choice([12, b"bytes", ["s"], {"s": 1}])
    raise TypeError(f"no wrong value for {desc!r}")


def valid_request(mtype: str, rng: random.Random, request_id: int) -> dict:
    spec = C.CATALOGUE[mtype]
    msg = {"v": P.VERSION, "type": mtype, "id": request_id}
    msg.update({name: sample(d, rng) for name, d in spec.fields.items()})
    return msg


def noise(service: str, rng: random.Random, request_id: int) -> tuple[str, bytes]:
    """One invalid request for `service`: (its kind, its bytes)."""
    kind = rng.choice(KINDS)
    mtype = rng.choice(sorted(C.SERVICES[service]))
    msg = valid_request(mtype, rng, request_id)
    if kind == "random_bytes":
        return kind, rng.randbytes(rng.randrange(64))
    if kind == "truncated":
        data = _pack(msg)
        return kind, data[: rng.randrange(len(data))]
    if kind == "oversized":
        return kind, _pack({**msg, "v": P.VERSION + 1, "pad": "x" * OVERSIZED_BYTES})
    if kind == "not_a_message":
        return kind, _pack(rng.choice([[msg], 42, "allocate", None, {1: 2}, b"\x00"]))
    if kind == "wrong_version":
        return kind, _pack({**msg, "v": rng.choice([0, 2, "1", None])})
    if kind == "unknown_type":
        return kind, _pack({**msg, "type": rng.choice(["launch_missiles", "", 7, None])})
    if kind == "wrong_service":
        other = sorted(t for t in C.CATALOGUE if t not in C.SERVICES[service])
        return kind, _pack(valid_request(rng.choice(other), rng, request_id))
    if kind == "reply_as_request":
        return kind, _pack({**msg, "type": f"{mtype}_reply"})
    fields = C.CATALOGUE[mtype].fields
    required = sorted(n for n, d in fields.items() if not isinstance(d, C.Opt))
    if kind == "missing_field":
        del msg[rng.choice([*required, "id"])]
        return kind, _pack(msg)
    typed = sorted(n for n, d in fields.items() if d is not C.ANY)
    if not typed:
        return kind, _pack({**msg, "id": "not-an-int"})
    name = rng.choice(typed)
    msg[name] = wrong(fields[name], rng)
    return kind, _pack(msg)


def _pack(value: Any) -> bytes:
    return msgpack.packb(value, use_bin_type=True)


@dataclass
class EndpointReport:
    """What one endpoint answered to the noise sent to it."""

    sent: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    codes: Counter[str] = field(default_factory=Counter)
    """Error codes of the replies; "no_error" counts replies that were not errors."""


@dataclass
class Campaign:
    result: RunResult
    reports: dict[str, EndpointReport]
    rm_errors: dict[str, int]
    rm_transport: dict[str, dict[str, int]]
    nm_refused: dict[str, int]


def workload_sim(**kw: Any) -> Simulation:
    """The replay the noise runs alongside: three MapReduce jobs, 4 nodes,
    about four simulated minutes."""
    jobs = [
        mr_job(f"job_{i}", i * 20_000, maps=6, reduces=2, map_ms=40_000, reduce_ms=20_000)
        for i in range(3)
    ]
    return simulation(jobs, seed=11, **kw)


async def _send_noise(
    count: int,
    seed: int,
    sim: Simulation,
    reports: dict[str, EndpointReport],
    instants: int = 100,
) -> None:
    """`count` requests per endpoint in `instants` bursts, one burst every
    simulated second at x.0005 s, when no actor's timer fires."""
    rng = random.Random(seed)
    while sim.rm_bound is None or sim.nm_host is None:
        await trio.sleep(0.0005)
    addresses = dict(sim.rm_bound.items())
    addresses[C.CONTAINER_MANAGEMENT] = sim.nm_host.bound_address
    per_burst = -(-count // instants)
    request_id = 10**9
    async with (
        connect(addresses[C.RESOURCE_TRACKER], identity="fuzz-rt") as rt,
        connect(addresses[C.AM_PROTOCOL], identity="fuzz-am") as am,
        connect(addresses[C.CLIENT], identity="fuzz-client") as client,
        connect(addresses[C.ADMIN], identity="fuzz-admin") as admin,
        connect(addresses[C.CONTAINER_MANAGEMENT], identity="fuzz-nm") as nm,
    ):
        conns = {
            C.RESOURCE_TRACKER: rt,
            C.AM_PROTOCOL: am,
            C.CLIENT: client,
            C.ADMIN: admin,
            C.CONTAINER_MANAGEMENT: nm,
        }
        for instant in range(instants):
            await trio.sleep_until(max(trio.current_time(), 1.0005 + instant))
            for service in ENDPOINTS:
                report = reports[service]
                for _ in range(min(per_burst, count - report.sent)):
                    request_id += 1
                    kind, payload = noise(service, rng, request_id)
                    conn = conns[service]
                    if in_process(conn.address):
                        # Handed over, a message is an object: what the
                        # codec makes of the noise, as ZeroMQ would hand it.
                        answer = await conn.request(codec.decode_request(payload), timeout=30)
                    else:
                        answer = codec.decode(await conn.request(payload, timeout=30))
                    reply = answer.to_map()
                    report.sent += 1
                    report.kinds[kind] += 1
                    report.codes[reply["code"] if reply["type"] == "error" else "no_error"] += 1


def campaign(count: int, seed: int = 1, zmq_rate: float | None = None) -> Campaign:
    """Replay `workload_sim` with `count` noise requests per endpoint:
    in-process on the virtual clock, or with `zmq_rate` over ZeroMQ on
    loopback on the scaled wall clock at that rate."""
    if zmq_rate is None:
        sim = workload_sim()
        clock: trio.abc.Clock = virtual_clock()
    else:
        ports = dict.fromkeys(("resource_tracker", "am_protocol", "client", "admin"), 0)
        sim = workload_sim(
            rm_addresses=RMAddresses.tcp("127.0.0.1", ports), nm_address="tcp://127.0.0.1:0"
        )
        clock = ScaledWallClock(time.time(), zmq_rate)
    rms: list[Any] = []
    sim.on_start = rms.append
    reports = {service: EndpointReport() for service in ENDPOINTS}

    async def main() -> RunResult:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_send_noise, count, seed, sim, reports)
            result = await sim.run()
            nursery.cancel_scope.cancel()
        return result

    result = run_deterministically(main, clock)
    rm = rms[0]
    return Campaign(
        result=result,
        reports=reports,
        rm_errors=dict(rm.services.errors),
        rm_transport={
            s: {
                "requests": st.requests,
                "replies": st.replies,
                "dropped": st.dropped,
                "handler_errors": st.handler_errors,
            }
            for s, st in rm.stats.items()
        },
        nm_refused=dict(sim.nm_host.refused) if sim.nm_host is not None else {},
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="send noise to every endpoint during a replay")
    parser.add_argument("--count", type=int, default=100_000, help="requests per endpoint")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    quiet = run_virtual(workload_sim())
    done = campaign(args.count, args.seed)
    wall = time.perf_counter() - started
    same = done.result.jobs == quiet.jobs and done.result.nodes == quiet.nodes
    for service, report in done.reports.items():
        codes = ", ".join(f"{c} {n}" for c, n in sorted(report.codes.items()))
        print(f"{service:22} sent {report.sent:7d}; replies: {codes}")
    print(f"RM error counters: {dict(sorted(done.rm_errors.items()))}")
    print(f"NM refusals: {dict(sorted(done.nm_refused.items()))}")
    states = Counter(j["state"] for j in done.result.jobs)
    print(
        f"replay: {dict(states)}; outputs {'identical to' if same else 'DIFFERENT from'} "
        f"a quiet run; wall {wall:.1f} s"
    )
    broken = not same or any(
        r.codes["internal"] or r.codes["no_error"] for r in done.reports.values()
    )
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())

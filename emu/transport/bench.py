"""Transport micro-benchmark: `python -m emu.transport.bench`.

Measures what bounds a simulation's speed: sequential request/reply round
trips on one connection (an actor waiting on each heartbeat reply), and
throughput with many requests outstanding on one connection (many actors
sharing it). The echo handler does no work, so these are the transport's
ceilings on this machine.
"""

from __future__ import annotations

import time
from functools import partial

import trio

from emu.transport.base import Payload, connect, serve

PAYLOAD = bytes(100)  # about the size of an encoded heartbeat
SECONDS = 2.0
OUTSTANDING = 200


async def _echo(payload: Payload) -> Payload:
    return payload


async def _measure(address: str, concurrency: int, seconds: float) -> float:
    """Completed requests per second, `concurrency` requesters sharing one connection."""
    completed = 0
    async with trio.open_nursery() as nursery:
        bound = await nursery.start(partial(serve, address, _echo))
        async with connect(bound) as conn:
            deadline = time.perf_counter() + seconds

            async def requester() -> None:
                nonlocal completed
                while time.perf_counter() < deadline:
                    await conn.request(PAYLOAD)
                    completed += 1

            started = time.perf_counter()
            async with trio.open_nursery() as requesters:
                for _ in range(concurrency):
                    requesters.start_soon(requester)
            elapsed = time.perf_counter() - started
        nursery.cancel_scope.cancel()
    return completed / elapsed


def main() -> None:
    """Print round trips/s and throughput for mem:// and tcp:// loopback."""
    for address in ("mem://bench", "tcp://127.0.0.1:0"):
        scheme = address.split(":", 1)[0]
        sequential = trio.run(_measure, address, 1, SECONDS)
        print(f"{scheme:4} sequential round trips, 1 outstanding: {sequential:10,.0f}/s")
        pipelined = trio.run(_measure, address, OUTSTANDING, SECONDS)
        print(f"{scheme:4} throughput, {OUTSTANDING} outstanding:        {pipelined:10,.0f}/s")


if __name__ == "__main__":
    main()

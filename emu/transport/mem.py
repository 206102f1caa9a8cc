"""In-process transport over trio memory channels: `mem://name`.

The single-process replay runs every actor in one trio loop on the virtual
clock, where ZeroMQ cannot be used (its I/O threads are invisible to trio's
autojump). The payloads are still the encoded bytes, so replay exercises the
same encode/decode path as a distributed run.

This is the hot path of a large simulation, so a request costs one small
`Pending` object and one event; there is one unbounded request channel per
server and none per request or per connection.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import NoReturn

import trio

from emu.transport.base import (
    Connection,
    Handler,
    Pending,
    ServerStats,
    TransportError,
    handle_request,
)

_SCHEME = "mem://"

# Per trio run, so separate runs (and tests) never see each other's servers.
_SERVERS: trio.lowlevel.RunVar[dict[str, trio.MemorySendChannel[Pending]]] = trio.lowlevel.RunVar(
    "emu_transport_mem_servers"
)


def _servers() -> dict[str, trio.MemorySendChannel[Pending]]:
    try:
        return _SERVERS.get()
    except LookupError:
        servers: dict[str, trio.MemorySendChannel[Pending]] = {}
        _SERVERS.set(servers)
        return servers


async def serve(
    address: str,
    handler: Handler,
    *,
    stats: ServerStats,
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
) -> NoReturn:
    """Register `address` in this run and serve its requests until cancelled.

    On exit the name is unregistered and every request still queued or being
    handled fails with `TransportError`, so requesters never wait forever on
    a server that is gone.
    """
    name = address.removeprefix(_SCHEME)
    servers = _servers()
    if name in servers:
        raise TransportError(f"{address} is already bound")
    # Unbounded: a requester never blocks on delivery, only on its reply.
    send, receive = trio.open_memory_channel[Pending](math.inf)
    servers[name] = send
    current: Pending | None = None
    try:
        task_status.started(address)
        while True:
            current = await receive.receive()
            reply = await handle_request(handler, current.payload, stats, address)
            if reply is not None:
                current.resolve(reply)
            current = None
    finally:
        del servers[name]
        send.close()
        stopped = TransportError(f"server at {address} stopped")
        if current is not None:
            current.fail(stopped)
        # Requests queued before the name was unregistered; the channel is
        # closed now, so EndOfChannel ends the drain.
        while True:
            try:
                receive.receive_nowait().fail(stopped)
            except trio.EndOfChannel:
                break
        receive.close()


class MemConnection(Connection):
    """A client of a `mem://` server, looked up by name at every request.

    Looking the name up per request (a dict lookup) lets a restarted server
    under the same name be reached by existing connections, as a ZeroMQ
    DEALER reconnects.
    """

    def __init__(self, address: str, identity: str) -> None:
        self.address = address
        self.identity = identity
        self._name = address.removeprefix(_SCHEME)
        self._closed = False

    async def _request(self, payload: bytes) -> bytes:
        if self._closed:
            raise TransportError(f"connection to {self.address} closed")
        server = _servers().get(self._name)
        if server is None:
            raise TransportError(f"no server at {self.address}")
        pending = Pending(payload)
        server.send_nowait(pending)
        return await pending.wait()


@asynccontextmanager
async def connect(address: str, *, identity: str = "") -> AsyncIterator[Connection]:
    """A connection to `address`; no server needs to exist until a request is made.

    Closing it refuses new requests; ones already queued are still answered
    (nothing in-process is torn down, so they cannot hang).
    """
    conn = MemConnection(address, identity)
    try:
        yield conn
    finally:
        conn._closed = True

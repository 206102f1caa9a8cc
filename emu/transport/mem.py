"""In-process transport over trio memory channels: `mem://name`.

The single-process replay runs every actor in one trio loop on the virtual
clock, where ZeroMQ cannot be used (its I/O threads are invisible to trio's
autojump). Payloads are handed over as they are: a message object reaches
the receiver unencoded and unchecked (a codec, if given, is not used),
bytes stay bytes.

This is the hot path of a large simulation. When the server is idle (not
handling a request, none queued), a request runs the handler inline in the
requester's task: no task switch, no channel, and the same order as queueing
would give, since nothing is ahead of it (a handler marked `never_waits`
runs to completion there without even a cancel scope). Otherwise it is queued for the
server task: one small `Pending` object and one event; there is one
unbounded request channel per server and none per request or connection.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import NoReturn

import trio

from emu.transport.base import (
    Connection,
    Handler,
    Options,
    Payload,
    Pending,
    ServerStats,
    TransportError,
    handle_now,
    handle_request,
)

_SCHEME = "mem://"


class _Server:
    """A bound name: its queue, its handler, and whether a request is being
    handled (by the server task or inline by a requester)."""

    __slots__ = (
        "address",
        "busy",
        "direct",
        "handler",
        "idle",
        "inline",
        "never_waits",
        "queued",
        "raw",
        "send",
        "stats",
        "stopped",
    )

    def __init__(
        self,
        address: str,
        send: trio.MemorySendChannel[Pending],
        handler: Handler,
        stats: ServerStats,
        raw: bool,
    ) -> None:
        self.address = address
        self.raw = raw
        """No codec: replies must be bytes."""
        self.send = send
        self.handler = handler
        self.stats = stats
        self.busy = False
        self.queued = 0
        self.idle: trio.Event | None = None
        self.inline: trio.CancelScope | None = None
        self.stopped = False
        self.never_waits: bool = getattr(handler, "never_waits", False)
        self.direct: dict[str, Callable[..., object]] = getattr(handler, "direct", None) or {}
        """The handler's direct calls (`with_direct`)."""

    def done(self) -> None:
        self.busy = False
        if self.idle is not None:
            self.idle.set()
            self.idle = None


# Per trio run, so separate runs (and tests) never see each other's servers.
_SERVERS: trio.lowlevel.RunVar[dict[str, _Server]] = trio.lowlevel.RunVar(
    "emu_transport_mem_servers"
)


def _servers() -> dict[str, _Server]:
    try:
        return _SERVERS.get()
    except LookupError:
        servers: dict[str, _Server] = {}
        _SERVERS.set(servers)
        return servers


async def serve(
    address: str,
    handler: Handler,
    *,
    stats: ServerStats,
    options: Options,
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
) -> NoReturn:
    """Register `address` in this run and serve its requests until cancelled.

    `options` are ignored (but for whether a codec is given: without one
    replies must be bytes): no peer outside this process can reach the name.

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
    server = servers[name] = _Server(address, send, handler, stats, options.codec is None)
    current: Pending | None = None
    try:
        task_status.started(address)
        while True:
            current = await receive.receive()
            while server.busy:
                server.idle = trio.Event()
                await server.idle.wait()
            server.queued -= 1
            server.busy = True
            try:
                reply = await handle_request(handler, current.payload, stats, address, server.raw)
            finally:
                server.done()
            if reply is not None:
                current.resolve(reply)
            current = None
    finally:
        del servers[name]
        server.stopped = True
        if server.inline is not None:
            server.inline.cancel()
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
        self._last: _Server | None = None
        """The server last found under the name: used while it serves (a
        stopped one is looked up again), sparing the per-run registry's
        lookup on every request."""

    def _server(self) -> _Server | None:
        """The server serving the name now, if any."""
        server = self._last
        if server is None or server.stopped:
            server = self._last = _servers().get(self._name)
        return server

    def call_direct(self, name: str, *args: object) -> object | None:
        """The server's direct call `name`, made inline when a request would
        be handled inline too (a `never_waits` server, idle, nothing
        queued): the same moment, the same order. An answer is counted as a
        request and its reply."""
        if self._closed:
            return None
        server = self._server()
        if server is None or server.busy or server.queued or not server.never_waits:
            return None
        call = server.direct.get(name)
        if call is None:
            return None
        answer = call(*args)
        if answer is not None:
            stats = server.stats
            stats.requests += 1
            stats.replies += 1
        return answer

    async def _request(self, payload: Payload) -> Payload:
        if self._closed:
            raise TransportError(f"connection to {self.address} closed")
        server = self._server()
        if server is None:
            raise TransportError(f"no server at {self.address}")
        if not server.busy and not server.queued:
            await trio.lowlevel.checkpoint_if_cancelled()
            server.busy = True
            if server.never_waits:
                try:
                    reply = handle_now(
                        server.handler, payload, server.stats, server.address, server.raw
                    )
                finally:
                    server.done()
                if reply is None:
                    await trio.sleep_forever()  # as a queued request left unanswered
                return reply
            reply = None
            with trio.CancelScope() as scope:
                server.inline = scope
                try:
                    reply = await handle_request(
                        server.handler, payload, server.stats, server.address, server.raw
                    )
                finally:
                    server.inline = None
                    server.done()
            if scope.cancelled_caught:
                raise TransportError(f"server at {self.address} stopped")
            if reply is None:
                await trio.sleep_forever()  # as a queued request left unanswered
            return reply
        pending = Pending(payload)
        server.queued += 1
        server.send.send_nowait(pending)
        return await pending.wait()


@asynccontextmanager
async def connect(
    address: str, *, identity: str = "", options: Options
) -> AsyncIterator[Connection]:
    """A connection to `address`; no server needs to exist until a request is made.

    `options` are ignored, as `serve`'s are.

    Closing it refuses new requests; ones already queued are still answered
    (nothing in-process is torn down, so they cannot hang).
    """
    conn = MemConnection(address, identity)
    try:
        yield conn
    finally:
        conn._closed = True

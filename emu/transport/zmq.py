"""ZeroMQ transport: `tcp://host:port` and `ipc://path`.

A ROUTER binds and serves, DEALERs connect and request. Frames on the wire:
the client sends `[request_id, payload]` (request_id an 8-byte big-endian
counter), the ROUTER sees `[identity, request_id, payload]` and answers
`[identity, request_id, reply]`; one receiver task per connection matches
replies to waiting requests by request_id.

Integration with trio uses no threads: the socket's ZMQ_FD is waited on with
`trio.lowlevel.wait_readable`. That FD is edge-triggered and only says "the
socket's state may have changed": any send, recv or ZMQ_EVENTS read may
consume the edge, so ZMQ_EVENTS is checked after every operation and before
every wait, and a requester whose send reveals pending input wakes the
receiver task, which would otherwise sleep on an edge already consumed.

Given a codec (`Options.codec`), this is where messages become bytes and
back: a server decodes and validates each request before its handler sees
it and encodes the reply; a client encodes its request and decodes the
reply. Without one, payloads are bytes as they are.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import NoReturn, cast

import structlog
import trio
import zmq

from emu.transport.base import (
    Codec,
    Connection,
    Curve,
    Handler,
    Options,
    Payload,
    Pending,
    ServerStats,
    TransportError,
    handle_request,
)

__all__ = ["MONITORED_EVENTS", "Curve", "connect", "dealer", "recv_multipart", "serve"]

RECONNECT_IVL_MS = 100
RECONNECT_IVL_MAX_MS = 2000
"""A DEALER whose server went away retries after 100 ms, backing off to 2 s."""

_log = structlog.get_logger("emu.transport.base")

_BURST = 64
"""Requests a server takes back to back from its queue before yielding to other tasks."""

# Plain ints: pyzmq's enum flags cost an enum construction per `&` on the hot path.
_EVENTS = int(zmq.EVENTS)
_POLLIN = int(zmq.POLLIN)
_POLLOUT = int(zmq.POLLOUT)
_NOBLOCK = int(zmq.NOBLOCK)


MONITORED_EVENTS = {
    int(zmq.EVENT_ACCEPTED): "accepted",
    int(zmq.EVENT_DISCONNECTED): "disconnected",
    int(zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL): "handshake_failed",
    int(zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL): "handshake_failed_protocol",
    int(zmq.EVENT_HANDSHAKE_FAILED_AUTH): "handshake_failed_auth",
}
"""Connection events a monitored server counts (`serve(..., monitor=Counter())`):
peers that were not speaking ZMTP, sent an oversize message (ZeroMQ drops
the connection) or failed CURVE authentication show up here, since no
request of theirs ever reaches the handler."""


@asynccontextmanager
async def _watch_events(sock: zmq.Socket[bytes], counts: Counter[str]) -> AsyncIterator[None]:
    """Count `sock`'s connection events while the block runs."""
    mask = 0
    for event in MONITORED_EVENTS:
        mask |= event
    mon = sock.get_monitor_socket(mask)
    mon_fd = int(mon.getsockopt(zmq.FD))

    async def watch() -> NoReturn:
        while True:
            frames = await recv_multipart(mon, mon_fd)
            if len(frames) == 2 and len(frames[0]) >= 2:
                event = int.from_bytes(frames[0][:2], "little")
                counts[MONITORED_EVENTS.get(event, str(event))] += 1

    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(watch)
            yield
            nursery.cancel_scope.cancel()
    finally:
        trio.lowlevel.notify_closing(mon_fd)
        sock.disable_monitor()
        mon.close()


def _apply_server_curve(sock: zmq.Socket[bytes], curve: Curve | None) -> None:
    if curve is None:
        return
    sock.setsockopt(zmq.CURVE_SERVER, 1)
    sock.setsockopt(zmq.CURVE_PUBLICKEY, curve.public_key)
    sock.setsockopt(zmq.CURVE_SECRETKEY, curve.secret_key)
    sock.setsockopt(zmq.ZAP_DOMAIN, b"emu")


def _apply_client_curve(sock: zmq.Socket[bytes], curve: Curve | None) -> None:
    if curve is None:
        return
    if curve.server_key is None:
        raise TransportError("a CURVE client needs the server's public key")
    sock.setsockopt(zmq.CURVE_SERVERKEY, curve.server_key)
    sock.setsockopt(zmq.CURVE_PUBLICKEY, curve.public_key)
    sock.setsockopt(zmq.CURVE_SECRETKEY, curve.secret_key)


async def recv_multipart(sock: zmq.Socket[bytes], fd: int) -> list[bytes]:
    """Receive one message on a socket no other task uses.

    A checkpoint only when nothing is queued: the caller bounds its bursts
    (a yield per message would stall a server with many requests
    outstanding).
    """
    while True:
        try:
            return sock.recv_multipart(_NOBLOCK)
        except zmq.Again:
            pass
        # The failed recv may have consumed the FD's edge: trust EVENTS.
        if not cast(int, sock.getsockopt(_EVENTS)) & _POLLIN:
            await trio.lowlevel.wait_readable(fd)


async def serve(
    address: str,
    handler: Handler,
    *,
    stats: ServerStats,
    options: Options,
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
) -> NoReturn:
    """Bind a ROUTER at `address` and answer its requests one at a time.

    `options.curve` makes it a CURVE server; `options.monitor` counts
    connection events (`MONITORED_EVENTS`); `options.codec` decodes each
    request for the handler and encodes its reply.
    """
    codec = options.codec
    sock: zmq.Socket[bytes] = zmq.Context.instance().socket(zmq.ROUTER)
    fd = int(sock.getsockopt(zmq.FD))
    events = AsyncExitStack()
    try:
        _apply_server_curve(sock, options.curve)
        sock.setsockopt(zmq.LINGER, 0)
        sock.setsockopt(zmq.MAXMSGSIZE, options.max_message_bytes)
        # A client that reconnects under the same identity (a restarted NM
        # process) takes over its name instead of being ignored until the
        # old connection is noticed dead.
        sock.setsockopt(zmq.ROUTER_HANDOVER, 1)
        try:
            sock.bind(address)
        except zmq.ZMQError as exc:
            raise TransportError(f"cannot bind {address}: {exc}") from exc
        if address.startswith("tcp://"):
            bound = sock.getsockopt_string(zmq.LAST_ENDPOINT)
        else:
            bound = address
        if options.monitor is not None:
            await events.enter_async_context(_watch_events(sock, options.monitor))
        task_status.started(bound)
        burst = 0
        while True:
            # Requests already queued are taken without yielding, but a
            # flooded server still yields (and sees cancellation) now and then.
            burst += 1
            if burst == _BURST:
                burst = 0
                await trio.lowlevel.checkpoint()
            frames = await recv_multipart(sock, fd)
            if len(frames) != 3:
                # Not a request from our DEALER; there is no request_id to answer.
                stats.requests += 1
                stats.dropped += 1
                continue
            identity, request_id, payload = frames
            if codec is None:
                reply = await handle_request(handler, payload, stats, bound)
            else:
                reply = await handle_request(
                    handler, codec.decode_request(payload), stats, bound, raw=False
                )
                if reply is not None:
                    try:
                        reply = codec.encode(reply)
                    except Exception:
                        stats.replies -= 1
                        stats.handler_errors += 1
                        _log.exception("transport.handler_bad_reply", address=bound)
                        reply = None
            if reply is not None:
                # A ROUTER never blocks on send: a reply to a peer that is
                # gone or at its high-water mark is discarded, and that
                # requester times out, as with a lost reply on the network.
                sock.send_multipart((identity, request_id, reply), _NOBLOCK)
    finally:
        await events.aclose()
        trio.lowlevel.notify_closing(fd)
        sock.close()


class ZmqConnection(Connection):
    """A DEALER shared by any number of requesting tasks.

    Requesters send directly; the receiver task (`_receive_replies`) is the
    only one waiting on the FD, and it also wakes requesters blocked on a
    full send queue, because trio allows one reader per FD.
    """

    lossy = True

    def __init__(
        self, sock: zmq.Socket[bytes], address: str, identity: str, codec: Codec | None = None
    ) -> None:
        self.address = address
        self.identity = identity
        self._codec = codec
        self._sock = sock
        self._fd = int(sock.getsockopt(zmq.FD))
        self._next_id = 0
        self._waiting: dict[bytes, Pending] = {}
        self._closed = False
        # Set while the receiver task sleeps on the FD; cancelling it wakes it.
        self._fd_wait: trio.CancelScope | None = None
        # Set while some requester waits for room in the send queue.
        self._writable: trio.Event | None = None

    async def _request(self, payload: Payload) -> Payload:
        if self._closed:
            raise TransportError(f"connection to {self.address} closed")
        self._next_id += 1
        request_id = self._next_id.to_bytes(8, "big")
        pending = Pending()
        self._waiting[request_id] = pending
        codec = self._codec
        try:
            if codec is None:
                await self._send((request_id, payload))
                return await pending.wait()
            await self._send((request_id, codec.encode(payload)))
            reply: bytes = await pending.wait()
            return codec.decode(reply)
        finally:
            # A reply arriving after a timeout finds no entry and is dropped.
            del self._waiting[request_id]

    async def _send(self, frames: tuple[bytes, bytes]) -> None:
        sock = self._sock
        while True:
            try:
                sock.send_multipart(frames, _NOBLOCK)
            except zmq.Again:
                # The send queue is full (at the high-water mark).
                if not self._notice(cast(int, sock.getsockopt(_EVENTS))) & _POLLOUT:
                    if self._writable is None:
                        self._writable = trio.Event()
                    await self._writable.wait()
                    if self._closed:
                        raise TransportError(f"connection to {self.address} closed") from None
                continue
            self._notice(cast(int, sock.getsockopt(_EVENTS)))
            return

    def _notice(self, events: int) -> int:
        """Act on socket readiness seen by a requester, whose check may have eaten the edge."""
        if events & _POLLIN and self._fd_wait is not None:
            self._fd_wait.cancel()
        if events & _POLLOUT and self._writable is not None:
            self._writable.set()
            self._writable = None
        return events

    async def _receive_replies(self) -> NoReturn:
        """Deliver every reply to its waiting request; the only task waiting on the FD."""
        sock, fd, waiting = self._sock, self._fd, self._waiting
        while True:
            try:
                frames = sock.recv_multipart(_NOBLOCK)
            except zmq.Again:
                if not self._notice(cast(int, sock.getsockopt(_EVENTS))) & _POLLIN:
                    with trio.CancelScope() as self._fd_wait:
                        await trio.lowlevel.wait_readable(fd)
                    self._fd_wait = None
                continue
            # No checkpoint per reply: replies never outnumber the requests
            # this process sent, so draining a burst is bounded work.
            if len(frames) == 2:
                pending = waiting.get(frames[0])
                if pending is not None:
                    pending.resolve(frames[1])

    def _close(self) -> None:
        self._closed = True
        closed = TransportError(f"connection to {self.address} closed")
        for pending in self._waiting.values():
            pending.fail(closed)
        if self._writable is not None:
            self._writable.set()


def dealer(address: str, *, identity: str = "", options: Options) -> zmq.Socket[bytes]:
    """A DEALER connected to `address`, set up as every emu client is.

    It reconnects by itself if the server goes away (`RECONNECT_IVL_MS`
    backing off to `RECONNECT_IVL_MAX_MS`); `options.curve` makes it a CURVE
    client. Shared by `connect` and the blocking `processes.common.SyncClient`.
    """
    sock: zmq.Socket[bytes] = zmq.Context.instance().socket(zmq.DEALER)
    try:
        _apply_client_curve(sock, options.curve)
        sock.setsockopt(zmq.LINGER, 0)
        sock.setsockopt(zmq.RECONNECT_IVL, RECONNECT_IVL_MS)
        sock.setsockopt(zmq.RECONNECT_IVL_MAX, RECONNECT_IVL_MAX_MS)
        if identity:
            sock.setsockopt(zmq.ROUTING_ID, identity.encode())
        try:
            sock.connect(address)
        except zmq.ZMQError as exc:
            raise TransportError(f"cannot connect to {address}: {exc}") from exc
    except BaseException:
        sock.close()
        raise
    return sock


@asynccontextmanager
async def connect(
    address: str, *, identity: str = "", options: Options
) -> AsyncIterator[Connection]:
    """Connect a DEALER to `address` (`dealer`) and match replies to requests.

    Requests made before the server is up are queued by ZeroMQ and delivered
    once it is. A server that refuses `options.curve`'s keys never answers,
    so requests time out.
    """
    sock = dealer(address, identity=identity, options=options)
    fd = int(sock.getsockopt(zmq.FD))
    try:
        conn = ZmqConnection(sock, address, identity, options.codec)
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(conn._receive_replies)
                try:
                    yield conn
                finally:
                    conn._close()
                    nursery.cancel_scope.cancel()
        except BaseExceptionGroup as group:
            if len(group.exceptions) > 1:
                raise
            error = group.exceptions[0]
        else:
            return
        # The nursery only hosts the receiver task: the caller gets its own
        # exception back, not a group around it. Raised outside the handler
        # so its cause and context are left as they were.
        raise error
    finally:
        trio.lowlevel.notify_closing(fd)
        sock.close()

"""The endpoint interface actors see, and dispatch to an implementation by URL scheme.

Actors only ever call `serve` and `connect`; whether the bytes travel through
trio memory channels (`mem://`) or ZeroMQ (`tcp://`, `ipc://`) is decided by
the address, so the same actor code runs in a single-process replay and
spread over hosts. Payloads are opaque here: bytes, or an object that
`bytes()` encodes, which the in-process transport hands over unencoded and
ZeroMQ encodes on sending (the protocol's frames). Encoding and validation
belong to the protocol layer.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, NoReturn, SupportsBytes

import structlog
import trio

if TYPE_CHECKING:
    from collections import Counter

    from emu.transport.zmq import Curve

Payload = bytes | SupportsBytes
"""What travels: bytes, or an object `bytes()` encodes (sent as is in-process)."""

Handler = Callable[[Payload], Awaitable[Payload | None]]
"""Called once per request with its payload; returns the reply payload.

None means no reply at all: the requester hears nothing and times out, as
it would if the message had been lost.
"""

_log = structlog.get_logger(__name__)


class TransportError(Exception):
    """The transport could not carry a request (no server, server gone, bind failed)."""


class RequestTimeout(TransportError):
    """No reply arrived within the requester's timeout."""


@dataclass(slots=True)
class ServerStats:
    """Counters of one server loop, so tests and metrics can see what was refused.

    `dropped` counts requests that got no reply without the handler failing:
    malformed frames and handler results of None. `handler_errors` counts
    handler exceptions, which are logged and survived. Every request ends in
    exactly one of the three: `requests == replies + dropped + handler_errors`.
    """

    requests: int = 0
    replies: int = 0
    dropped: int = 0
    handler_errors: int = 0


class Connection(ABC):
    """A client endpoint: send a request, await its reply.

    Several tasks may have requests outstanding on one connection at once;
    each gets its own reply.
    """

    address: str
    identity: str

    async def request(self, payload: Payload, timeout: float | None = None) -> Payload:
        """Send `payload` and return the reply payload.

        Raises `RequestTimeout` after `timeout` seconds of trio time (so on the
        virtual clock the timeout is virtual too), `TransportError` if the
        request cannot be delivered.
        """
        if timeout is None:
            return await self._request(payload)
        try:
            with trio.fail_after(timeout):
                return await self._request(payload)
        except trio.TooSlowError:
            raise RequestTimeout(f"no reply from {self.address} within {timeout}s") from None

    @abstractmethod
    async def _request(self, payload: Payload) -> Payload:
        """Deliver one request and wait, without a deadline, for its reply."""


class Pending:
    """One outstanding request, completed by whoever receives its reply.

    Cheaper than a channel per request: the requester parks on the event, and
    the replier fills `reply` (or `error`) and sets it.
    """

    __slots__ = ("done", "error", "payload", "reply")

    def __init__(self, payload: Payload = b"") -> None:
        self.payload = payload
        self.reply: Payload = b""
        self.error: TransportError | None = None
        self.done = trio.Event()

    def resolve(self, reply: Payload) -> None:
        """Hand the reply to the waiting requester."""
        self.reply = reply
        self.done.set()

    def fail(self, error: TransportError) -> None:
        """Wake the requester with `error` instead of leaving it to hang."""
        self.error = error
        self.done.set()

    async def wait(self) -> Payload:
        """Wait for `resolve` or `fail`; return the reply or raise the error."""
        await self.done.wait()
        if self.error is not None:
            raise self.error
        return self.reply


async def handle_request(
    handler: Handler, payload: Payload, stats: ServerStats, address: str
) -> Payload | None:
    """Run the handler on one request, keeping the server alive whatever it does.

    Every implementation calls this so the counters mean the same thing over
    every transport. A handler exception or a non-bytes result is logged and
    counted and yields no reply: one bad request must never stop the server.
    A reply is bytes or an object with `__bytes__`, as a request is.
    """
    stats.requests += 1
    try:
        reply = await handler(payload)
    except Exception:
        stats.handler_errors += 1
        _log.exception("transport.handler_error", address=address)
        return None
    if reply is None:
        stats.dropped += 1
        return None
    if not isinstance(reply, bytes) and not hasattr(type(reply), "__bytes__"):
        stats.handler_errors += 1
        _log.error("transport.handler_bad_reply", address=address, reply_type=type(reply).__name__)
        return None
    stats.replies += 1
    return reply


def request_timeout(address: str, seconds: float) -> float | None:
    """The timeout worth setting for requests to `address`: none in-process.

    A `mem://` request cannot be lost in transit, and each timeout costs a
    cancel scope on the hottest path of a large replay; over the network a
    lost peer must not hang the requester.
    """
    return None if address.startswith("mem://") else seconds


def _backend(address: str) -> ModuleType:
    """The implementation module for `address`'s scheme.

    Imported lazily: the implementations import this module, and a replay on
    `mem://` never needs to load ZeroMQ.
    """
    scheme, sep, rest = address.partition("://")
    if sep and rest:
        if scheme == "mem":
            from emu.transport import mem

            return mem
        if scheme in ("tcp", "ipc"):
            from emu.transport import zmq

            return zmq
    raise ValueError(
        f"unsupported transport address {address!r}: "
        "expected mem://name, tcp://host:port or ipc://path"
    )


async def serve(
    address: str,
    handler: Handler,
    *,
    stats: ServerStats | None = None,
    curve: Curve | None = None,
    monitor: Counter[str] | None = None,
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
) -> NoReturn:
    """Serve requests at `address` until cancelled.

    Requests are handled one at a time, in arrival order, with the handler
    awaited inline: the RM is deliberately single-threaded, and this keeps its
    event order reproducible. `task_status.started` receives the bound address
    (the real port for `tcp://host:0`). ZeroMQ only (`mem://` ignores them):
    `curve` makes it a CURVE server, `monitor` counts connection events.
    """
    backend = _backend(address)
    extra = {}
    if backend.__name__.endswith(".zmq"):
        extra = {"curve": curve, "monitor": monitor}
    return await backend.serve(
        address,
        handler,
        stats=ServerStats() if stats is None else stats,
        task_status=task_status,
        **extra,
    )


@asynccontextmanager
async def connect(
    address: str, *, identity: str = "", curve: Curve | None = None
) -> AsyncIterator[Connection]:
    """Open a client connection to `address`, closed when the block exits.

    `identity` names the client to the transport (the ZeroMQ routing id) so a
    reconnecting process keeps its name; empty lets the transport choose.
    `curve` (ZeroMQ only) makes it a CURVE client.
    """
    backend = _backend(address)
    extra = {"curve": curve} if backend.__name__.endswith(".zmq") else {}
    async with backend.connect(address, identity=identity, **extra) as conn:
        yield conn

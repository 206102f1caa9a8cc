"""The endpoint interface actors see, and dispatch to an implementation by URL scheme.

Actors only ever call `serve` and `connect`; whether the bytes travel through
trio memory channels (`mem://`) or ZeroMQ (`tcp://`, `ipc://`) is decided by
the address, so the same actor code runs in a single-process replay and
spread over hosts. Payloads are opaque here. The in-process transport
hands them over as they are; ZeroMQ carries bytes, so a server or client
given a `Codec` (actors give `emu.msg.codec.CODEC`) encodes what it sends
and decodes and validates what it receives at that boundary, and one
without a codec carries bytes as they are.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from functools import partial
from types import CoroutineType
from typing import TYPE_CHECKING, Any, NoReturn, Protocol, TypeVar, cast

import structlog
import trio

if TYPE_CHECKING:
    from collections import Counter

Payload = Any
"""What travels: a message object (handed over as it is in-process, encoded
by the `Codec` over the wire), or bytes where no codec is given."""

Handler = Callable[[Payload], Awaitable[Payload | None]]
_H = TypeVar("_H", bound=Callable[..., Any])
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


class Codec(Protocol):
    """How a transport that carries bytes turns messages into bytes and back."""

    def encode(self, message: Any) -> bytes:
        """The bytes sent for `message`."""
        ...

    def decode(self, data: bytes) -> Any:
        """The reply `data` encodes; raises if it is malformed."""
        ...

    def decode_request(self, data: bytes) -> Any:
        """The request `data` encodes; never raises: a malformed request
        becomes a message its handler answers with an error."""
        ...


class Connection(ABC):
    """A client endpoint: send a request, await its reply.

    Several tasks may have requests outstanding on one connection at once;
    each gets its own reply. `lossy`: a request may be lost in transit, so
    one unanswered is worth sending again (over the network; in one process
    a server that is gone stays gone).
    """

    address: str
    identity: str
    lossy: bool = False

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

    def call_direct(self, name: str, *args: object) -> object | None:
        """Make the server's direct call `name` (see `with_direct`) here and
        now, if this transport has one and the server could take a request
        at once: its answer, or None (no such call, the server busy or out
        of reach, or the call declined), when the caller sends the request
        as usual. Over a network every call is a message: None."""
        return None


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
    handler: Handler, payload: Payload, stats: ServerStats, address: str, raw: bool = True
) -> Payload | None:
    """Run the handler on one request, keeping the server alive whatever it does.

    Every implementation calls this (or `handle_now`) so the counters mean
    the same thing over every transport. A handler exception, or a result
    that is not bytes where no codec carries messages (`raw`), is logged and
    counted and yields no reply: one bad request must never stop the server.
    """
    stats.requests += 1
    try:
        reply = await handler(payload)
    except Exception:
        stats.handler_errors += 1
        _log.exception("transport.handler_error", address=address)
        return None
    return _answered(reply, stats, address, raw)


def handle_now(
    handler: Handler, payload: Payload, stats: ServerStats, address: str, raw: bool = True
) -> Payload | None:
    """`handle_request` for a `never_waits` handler, run here and now to
    its end without an event loop step: the in-process transport's hot
    path, one call where awaiting `handle_request` would add a coroutine.
    A handler that does wait is a bug: RuntimeError."""
    stats.requests += 1
    # An `async def` handler: its awaitable is a coroutine.
    coro = cast(Coroutine[Any, Any, Payload | None], handler(payload))
    try:
        coro.send(None)
    except StopIteration as done:
        reply: Payload | None = done.value
    except Exception:
        stats.handler_errors += 1
        _log.exception("transport.handler_error", address=address)
        return None
    except BaseException:
        # A signal (Ctrl-C), maybe before the first step: an unstarted
        # Python coroutine would otherwise warn "never awaited" on exit.
        # A compiled (mypyc) one never warns, and closing one that a signal
        # ended leaves an exception set inside the interpreter, which later
        # surfaces as a stray AttributeError or aborts the process in
        # compiled arithmetic ("fatal: out of memory"): leave it alone.
        if isinstance(coro, CoroutineType):
            coro.close()
        raise
    else:
        coro.close()
        raise RuntimeError("a handler marked never_waits waited")
    return _answered(reply, stats, address, raw)


def _answered(reply: Payload | None, stats: ServerStats, address: str, raw: bool) -> Payload | None:
    """A handler's reply as the transport sends it: None (counted) when
    there is none, or, `raw`, when it is not bytes."""
    if reply is None:
        stats.dropped += 1
        return None
    if raw and not isinstance(reply, bytes):
        stats.handler_errors += 1
        _log.error("transport.handler_bad_reply", address=address, reply_type=type(reply).__name__)
        return None
    stats.replies += 1
    return reply


def with_direct(handler: _H, calls: dict[str, Callable[..., object]]) -> _H:
    """Give `handler` direct calls: functions an in-process client may call
    instead of sending a request (`Connection.call_direct`), for a request
    whose answer is a plain value the server can give without building the
    reply. Each returns its answer, or None to decline (the client then
    sends the request). The in-process transport counts an answered call as
    a request and its reply, so the server's counts are what the messages
    would have made them."""
    handler.direct = calls  # type: ignore[attr-defined]
    return handler


def never_waits(handler: _H) -> _H:
    """Mark `handler` as one that answers without ever waiting (it reaches
    no checkpoint). The in-process transport then runs it inline to
    completion with no cancel scope around it: nothing else runs, so
    nothing can stop the server, before it returns. A marked handler that
    does wait is a bug, reported as `RuntimeError` by the transport."""
    try:
        handler.never_waits = True  # type: ignore[attr-defined]
    except AttributeError:
        # A bound method takes no attributes: mark a partial of it instead.
        marked = partial(handler)
        marked.never_waits = True  # type: ignore[attr-defined]
        return cast(_H, marked)
    return handler


def request_timeout(address: str, seconds: float) -> float | None:
    """The timeout worth setting for requests to `address`: none in-process.

    A `mem://` request cannot be lost in transit, and each timeout costs a
    cancel scope on the hottest path of a large replay; over the network a
    lost peer must not hang the requester.
    """
    return None if in_process(address) else seconds


def in_process(address: str) -> bool:
    """Whether `address` is served in this process (`mem://`): messages
    reach it as the objects they are, and nothing waits on anything but
    trio (so it is usable on the virtual clock)."""
    return address.startswith("mem://")


MAX_MESSAGE_BYTES = 64 * 1024 * 1024
"""The default `Options.max_message_bytes`."""


@dataclass(frozen=True)
class Curve:
    """CURVE keys for one socket, Z85-encoded (40 bytes each).

    A server uses its own `public_key`/`secret_key`; a client uses its own
    pair and needs the server's public key (`server_key`). Which client keys
    a server accepts is decided by the ZAP handler (`emu.security`), which
    must be running in the process before a CURVE server accepts peers.
    """

    public_key: bytes
    secret_key: bytes
    server_key: bytes | None = None


@dataclass(frozen=True, slots=True)
class Options:
    """Everything a backend may use beyond the address, in one object for every scheme.

    `curve`: CURVE keys (a server's own pair; a client's own pair and the
    server's public key). `monitor`: a counter a server adds its connection
    events to (`zmq.MONITORED_EVENTS`). `max_message_bytes`: larger messages
    are refused (ZeroMQ disconnects the sender). `codec`: how messages
    become bytes and back (None: payloads are bytes). `mem://` accepts and
    ignores all four: in one process there is no peer to keep out or watch,
    and messages are handed over as they are.
    """

    curve: Curve | None = None
    monitor: Counter[str] | None = None
    max_message_bytes: int = MAX_MESSAGE_BYTES
    codec: Codec | None = None


class Backend(Protocol):
    """What a transport module provides; `BACKENDS` maps each URL scheme to one.

    The module itself is the implementation (`emu.transport.mem`,
    `emu.transport.zmq`): it exposes these two functions, and `serve` and
    `connect` below only choose the module and the options.
    """

    async def serve(
        self,
        address: str,
        handler: Handler,
        *,
        stats: ServerStats,
        options: Options,
        task_status: trio.TaskStatus[str] = ...,
    ) -> NoReturn:
        """Serve requests at `address` until cancelled (see `serve` below)."""
        ...

    def connect(
        self, address: str, *, identity: str, options: Options
    ) -> AbstractAsyncContextManager[Connection]:
        """A client connection to `address` (see `connect` below)."""
        ...


BACKENDS: dict[str, str] = {
    "mem": "emu.transport.mem",
    "tcp": "emu.transport.zmq",
    "ipc": "emu.transport.zmq",
}
"""URL scheme -> the module implementing it. Modules are imported on first
use: the implementations import this module, and a replay on `mem://`
never loads ZeroMQ."""


@dataclass(frozen=True, slots=True)
class Defaults:
    """The options a process's servers and clients use unless given others."""

    server: Options = Options()
    client: Options = Options()


_PLAIN = Defaults()
"""No keys, no monitor, the default size limit (frozen, so safe to share)."""
_defaults: ContextVar[Defaults] = ContextVar("emu_transport_defaults", default=_PLAIN)


def set_defaults(defaults: Defaults | None = None) -> None:
    """Make every later `serve`/`connect` in this context use `defaults`.

    A process of a secured cluster sets its keys here once, at start, before
    `trio.run` (whose tasks inherit the context), so actor code (the NM host,
    the AMs it runs, the RM's AM launcher) stays unaware of keys. A context
    variable rather than a module global: a trio run started from another
    context (a test, a thread) does not see them. None restores plain
    connections with no monitor.
    """
    _defaults.set(_PLAIN if defaults is None else defaults)


def defaults() -> Defaults:
    """What `set_defaults` last installed in this context."""
    return _defaults.get()


def backend_for(address: str) -> Backend:
    """The implementation for `address`'s scheme; ValueError if it has none."""
    scheme, sep, rest = address.partition("://")
    module = BACKENDS.get(scheme) if sep and rest else None
    if module is None:
        raise ValueError(
            f"unsupported transport address {address!r}: "
            "expected mem://name, tcp://host:port or ipc://path"
        )
    return cast(Backend, importlib.import_module(module))


def _options(
    base: Options, curve: Curve | None, monitor: Counter[str] | None, codec: Codec | None
) -> Options:
    """`base` with the per-call shorthands applied."""
    if curve is not None:
        base = replace(base, curve=curve)
    if monitor is not None:
        base = replace(base, monitor=monitor)
    if codec is not None:
        base = replace(base, codec=codec)
    return base


async def serve(
    address: str,
    handler: Handler,
    *,
    stats: ServerStats | None = None,
    options: Options | None = None,
    curve: Curve | None = None,
    monitor: Counter[str] | None = None,
    codec: Codec | None = None,
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
) -> NoReturn:
    """Serve requests at `address` until cancelled.

    Requests are handled one at a time, in arrival order, with the handler
    awaited inline: the RM is deliberately single-threaded, and this keeps its
    event order reproducible. `task_status.started` receives the bound address
    (the real port for `tcp://host:0`). `options` defaults to the process's
    server options (`set_defaults`); `curve`, `monitor` and `codec`
    replace that field of them.
    """
    backend = backend_for(address)
    await backend.serve(
        address,
        handler,
        stats=ServerStats() if stats is None else stats,
        options=_options(options or _defaults.get().server, curve, monitor, codec),
        task_status=task_status,
    )


@asynccontextmanager
async def connect(
    address: str,
    *,
    identity: str = "",
    options: Options | None = None,
    curve: Curve | None = None,
    codec: Codec | None = None,
) -> AsyncIterator[Connection]:
    """Open a client connection to `address`, closed when the block exits.

    `identity` names the client to the transport (the ZeroMQ routing id) so a
    reconnecting process keeps its name; empty lets the transport choose.
    `options` defaults to the process's client options (`set_defaults`);
    `curve` and `codec` replace those fields of them.
    """
    backend = backend_for(address)
    opts = _options(options or _defaults.get().client, curve, None, codec)
    async with backend.connect(address, identity=identity, options=opts) as conn:
        yield conn

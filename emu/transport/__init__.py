"""Transports: how messages travel between actors.

Actor code sees only this interface, never a socket:

- `serve(address, handler)` runs a server loop; `handler(payload) -> reply`
  is awaited once per request, in arrival order, and its reply goes back to the
  requester (`never_waits(handler)` marks one that never waits, which the
  in-process transport may run inline with less ceremony; `with_direct`
  gives it calls an in-process client may make instead of a request,
  `Connection.call_direct`). Started with
  `await nursery.start(serve, ...)`, it reports the bound address (useful with `tcp://127.0.0.1:0`).
- `connect(address, identity=...)` is an async context manager giving a
  `Connection` whose `request(payload, timeout=...)` returns the reply.
- `codec=` (both): in one process messages are handed over as they are;
  ZeroMQ encodes and decodes them with this `Codec` (none: bytes travel).

Schemes: `mem://name` (trio memory channels, one process, the only one usable
on the virtual clock) and `tcp://host:port` / `ipc://path` (ZeroMQ ROUTER
serving, DEALER requesting). `BACKENDS` maps each scheme to the module that
implements the `Backend` protocol; `Options` carries what a backend may use
beyond the address (CURVE keys, a connection-event monitor, the message size
limit), and `set_defaults` installs a process's options once, at start.
"""

from typing import TYPE_CHECKING

from emu.transport.base import (
    BACKENDS,
    MAX_MESSAGE_BYTES,
    Backend,
    Codec,
    Connection,
    Curve,
    Defaults,
    Handler,
    Options,
    Payload,
    RequestTimeout,
    ServerStats,
    TransportError,
    backend_for,
    connect,
    defaults,
    in_process,
    never_waits,
    request_timeout,
    serve,
    set_defaults,
    with_direct,
)

__all__ = [
    "BACKENDS",
    "MAX_MESSAGE_BYTES",
    "Backend",
    "Codec",
    "Connection",
    "Curve",
    "Defaults",
    "Handler",
    "Options",
    "Payload",
    "RequestTimeout",
    "ServerStats",
    "TransportError",
    "backend_for",
    "connect",
    "defaults",
    "in_process",
    "never_waits",
    "request_timeout",
    "serve",
    "set_defaults",
    "with_direct",
]

if TYPE_CHECKING:
    # mypy checks here that each module BACKENDS names really is a Backend.
    from emu.transport import mem as _mem
    from emu.transport import zmq as _zmq

    _BACKEND_MODULES: tuple[Backend, ...] = (_mem, _zmq)

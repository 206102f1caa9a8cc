"""The transport contract, checked identically over mem://, tcp:// and ipc://.

Actors rely on the same behaviour whatever the address, so every contract
test is parametrized over all three schemes; only what is specific to one
implementation (raw ZeroMQ frames, the in-process name registry) is tested
separately.
"""

from __future__ import annotations

import inspect
import random
import re
from collections import Counter
from functools import partial

import pytest
import trio
import trio.testing
import zmq

import emu.transport.mem
import emu.transport.zmq
from emu.transport import (
    BACKENDS,
    Connection,
    Curve,
    Defaults,
    Handler,
    Options,
    RequestTimeout,
    ServerStats,
    TransportError,
    backend_for,
    connect,
    defaults,
    never_waits,
    serve,
    set_defaults,
)


def _address(kind: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    if kind == "mem":
        return "mem://server"
    if kind == "tcp":
        return "tcp://127.0.0.1:0"
    # A short directory: ipc paths are limited to ~100 bytes.
    return f"ipc://{tmp_path_factory.mktemp('ipc')}/x.sock"


@pytest.fixture(params=["mem", "tcp", "ipc"])
def address(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The address to serve on, one per transport."""
    return _address(request.param, tmp_path_factory)


@pytest.fixture(params=["tcp", "ipc"])
def zmq_address(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The address to serve on, ZeroMQ transports only."""
    return _address(request.param, tmp_path_factory)


@pytest.fixture
def clock(address: str, request: pytest.FixtureRequest) -> trio.testing.MockClock | None:
    """Virtual time on mem:// so timeouts cost no wall time; ZeroMQ needs real time."""
    if address.startswith("mem://"):
        return request.getfixturevalue("autojump_clock")
    return None


async def start_server(
    nursery: trio.Nursery, address: str, handler: Handler, stats: ServerStats | None = None
) -> str:
    """Serve in `nursery` (cancelled when the test ends); return the bound address."""
    return await nursery.start(partial(serve, address, handler, stats=stats))


async def echo(payload: bytes) -> bytes:
    return payload


async def tag(payload: bytes) -> bytes:
    return b"re:" + payload


async def request_into(replies: dict[bytes, bytes], conn: Connection, payload: bytes) -> None:
    """Send `payload` and keep its reply in `replies`."""
    replies[payload] = await conn.request(payload, timeout=5)


async def expect_failure(
    failures: list[str], match: str, timeout: float | None, conn: Connection
) -> None:
    """Send a request that must fail with a TransportError matching `match`."""
    with pytest.raises(TransportError, match=match) as info:
        await conn.request(b"x", timeout=timeout)
    failures.append(str(info.value))


async def test_echo_round_trip(address: str, nursery: trio.Nursery) -> None:
    stats = ServerStats()
    bound = await start_server(nursery, address, echo, stats)
    async with connect(bound) as conn:
        assert await conn.request(b"hello", timeout=5) == b"hello"
        assert await conn.request(b"", timeout=5) == b""
    assert stats == ServerStats(requests=2, replies=2)


async def test_concurrent_requests_get_their_own_replies(
    address: str, nursery: trio.Nursery
) -> None:
    bound = await start_server(nursery, address, tag)
    replies: dict[bytes, bytes] = {}

    async def requester(conn: Connection, worker: int) -> None:
        for i in range(10):
            payload = b"%d-%d" % (worker, i)
            replies[payload] = await conn.request(payload, timeout=5)

    async with connect(bound) as conn, trio.open_nursery() as workers:
        for worker in range(20):
            workers.start_soon(requester, conn, worker)
    assert len(replies) == 200
    assert all(reply == b"re:" + payload for payload, reply in replies.items())


async def test_several_connections_to_one_server(address: str, nursery: trio.Nursery) -> None:
    bound = await start_server(nursery, address, tag)
    replies: dict[str, bytes] = {}

    async def client(name: str) -> None:
        async with connect(bound, identity=name) as conn:
            assert (conn.address, conn.identity) == (bound, name)
            replies[name] = await conn.request(name.encode(), timeout=5)

    async with trio.open_nursery() as clients:
        for i in range(5):
            clients.start_soon(client, f"client-{i}")
    assert replies == {f"client-{i}": f"re:client-{i}".encode() for i in range(5)}


async def test_handler_error_is_counted_and_survived(
    address: str, nursery: trio.Nursery, clock: trio.testing.MockClock | None
) -> None:
    async def handler(payload: bytes) -> bytes:
        if payload == b"boom":
            raise RuntimeError("handler bug")
        return payload

    stats = ServerStats()
    bound = await start_server(nursery, address, handler, stats)
    async with connect(bound) as conn:
        with pytest.raises(RequestTimeout):
            await conn.request(b"boom", timeout=0.2)
        assert await conn.request(b"next", timeout=5) == b"next"
    assert stats == ServerStats(requests=2, replies=1, handler_errors=1)


async def test_non_bytes_reply_is_a_handler_error(address: str, nursery: trio.Nursery) -> None:
    async def handler(payload: bytes) -> bytes:
        return payload.decode() if payload == b"str" else payload  # type: ignore[return-value]

    stats = ServerStats()
    bound = await start_server(nursery, address, handler, stats)
    async with connect(bound) as conn:
        with pytest.raises(RequestTimeout):
            await conn.request(b"str", timeout=0.2)
        assert await conn.request(b"ok", timeout=5) == b"ok"
    assert stats.handler_errors == 1


async def test_request_timeout(
    address: str, nursery: trio.Nursery, clock: trio.testing.MockClock | None
) -> None:
    async def no_reply(payload: bytes) -> None:
        return None

    stats = ServerStats()
    bound = await start_server(nursery, address, no_reply, stats)
    # Virtual time on mem:// makes a long timeout free; ZeroMQ waits for real.
    timeout = 30.0 if clock is not None else 0.2
    started = trio.current_time()
    async with connect(bound) as conn:
        with pytest.raises(RequestTimeout, match="no reply from"):
            await conn.request(b"anyone?", timeout=timeout)
    # The timeout is measured on trio's clock (virtual on mem://, which the
    # autojump clock skips through instead of waiting 30 s).
    assert trio.current_time() - started >= timeout
    assert stats == ServerStats(requests=1, dropped=1)


async def test_late_reply_is_not_taken_for_the_next_one(
    address: str, nursery: trio.Nursery, clock: trio.testing.MockClock | None
) -> None:
    async def slow_first(payload: bytes) -> bytes:
        if payload == b"slow":
            await trio.sleep(0.3)
        return payload

    bound = await start_server(nursery, address, slow_first)
    async with connect(bound) as conn:
        with pytest.raises(RequestTimeout):
            await conn.request(b"slow", timeout=0.1)
        # Queued behind the slow one; its own reply, not the late "slow".
        assert await conn.request(b"fast", timeout=5) == b"fast"


async def test_requests_are_served_in_arrival_order(address: str, nursery: trio.Nursery) -> None:
    seen: list[bytes] = []
    all_sent = trio.Event()

    async def handler(payload: bytes) -> bytes:
        seen.append(payload)
        # Hold the first request so the others queue up behind it.
        await all_sent.wait()
        return payload

    bound = await start_server(nursery, address, handler)
    payloads = [b"%d" % i for i in range(50)]
    replies: dict[bytes, bytes] = {}
    requester = partial(request_into, replies)

    async with connect(bound) as conn, trio.open_nursery() as requesters:
        for payload in payloads:
            requesters.start_soon(requester, conn, payload)
            # Let this request go out before the next one is started.
            await trio.testing.wait_all_tasks_blocked()
        all_sent.set()
    assert seen == payloads
    assert replies == {p: p for p in payloads}


async def test_server_reports_bound_address(address: str, nursery: trio.Nursery) -> None:
    bound = await start_server(nursery, address, echo)
    if address.startswith("tcp://"):
        match = re.fullmatch(r"tcp://127\.0\.0\.1:(\d+)", bound)
        assert match is not None and int(match[1]) > 0
    else:
        assert bound == address
    async with connect(bound) as conn:
        assert await conn.request(b"there", timeout=5) == b"there"


async def test_exception_in_connection_block_reaches_caller(
    address: str, nursery: trio.Nursery
) -> None:
    bound = await start_server(nursery, address, echo)
    with pytest.raises(KeyError, match="mine"):
        async with connect(bound):
            raise KeyError("mine")


async def test_closed_connection_refuses_requests(address: str, nursery: trio.Nursery) -> None:
    bound = await start_server(nursery, address, echo)
    async with connect(bound) as conn:
        pass
    with pytest.raises(TransportError, match="closed"):
        await conn.request(b"late", timeout=5)


async def test_unknown_scheme_is_rejected() -> None:
    with pytest.raises(ValueError, match="unsupported transport address 'http://x'"):
        async with connect("http://x"):
            pass
    with pytest.raises(ValueError, match="expected mem://name"):
        await serve("nowhere", echo)


def test_every_scheme_names_a_module_that_is_a_backend() -> None:
    """The registry and the modules agree: each scheme's module has the
    `Backend` functions, taking the one `Options` object."""
    assert set(BACKENDS) == {"mem", "tcp", "ipc"}
    for scheme in BACKENDS:
        backend = backend_for(f"{scheme}://x")
        for name in ("serve", "connect"):
            assert "options" in inspect.signature(getattr(backend, name)).parameters
    assert backend_for("tcp://h:1") is backend_for("ipc:///tmp/x") is emu.transport.zmq
    assert backend_for("mem://a") is emu.transport.mem


async def test_process_defaults_reach_the_backend_and_a_call_overrides_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`set_defaults` is what a server gets when the caller says nothing; a
    per-call `monitor`/`curve` replaces that one field only."""
    seen: list[Options] = []

    async def fake_serve(address, handler, *, stats, options, task_status):  # type: ignore[no-untyped-def]
        seen.append(options)
        task_status.started(address)

    monkeypatch.setattr(emu.transport.mem, "serve", fake_serve)
    keys = Curve(b"p" * 40, b"s" * 40)
    counter: Counter[str] = Counter()
    set_defaults(Defaults(server=Options(curve=keys, max_message_bytes=10)))
    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(partial(serve, "mem://a", echo))
            await nursery.start(partial(serve, "mem://b", echo, monitor=counter))
    finally:
        set_defaults(None)
    assert seen == [
        Options(curve=keys, max_message_bytes=10),
        Options(curve=keys, monitor=counter, max_message_bytes=10),
    ]
    assert defaults() == Defaults()


# ZeroMQ only: frames that did not come from our DEALER.


def raw_dealer(address: str) -> zmq.Socket[bytes]:
    sock = zmq.Context.instance().socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(address)
    return sock


async def raw_recv(sock: zmq.Socket[bytes]) -> list[bytes]:
    """Poll rather than block: the server runs in this same thread."""
    with trio.fail_after(2):
        while True:
            try:
                return sock.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                await trio.sleep(0.002)


async def test_requests_beyond_the_send_queue_wait_for_room(
    zmq_address: str, nursery: trio.Nursery, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Tiny queues for the sockets made from here on (context defaults), so the
    # client's sends block while the server holds the first request. The
    # server keeps its default send queue: a ROUTER drops, rather than queues,
    # replies beyond it.
    ctx = zmq.Context.instance()
    tiny = {zmq.RCVHWM: 2, zmq.SNDBUF: 4096, zmq.RCVBUF: 4096}
    monkeypatch.setattr(ctx, "sockopts", {**ctx.sockopts, **tiny})
    release = trio.Event()

    async def held(payload: bytes) -> bytes:
        await release.wait()
        return payload

    bound = await start_server(nursery, zmq_address, held)
    monkeypatch.setitem(ctx.sockopts, zmq.SNDHWM, 2)
    payloads = [b"%04d" % i + bytes(1000) for i in range(300)]
    replies: dict[bytes, bytes] = {}
    requester = partial(request_into, replies)

    async with connect(bound) as conn, trio.open_nursery() as requesters:
        for payload in payloads:
            requesters.start_soon(requester, conn, payload)
        await trio.sleep(0.05)
        # The queues are full: some requesters are still waiting to send.
        assert conn._writable is not None  # type: ignore[attr-defined]
        release.set()
    assert replies == {p: p for p in payloads}


async def test_closing_fails_outstanding_requests(zmq_address: str, nursery: trio.Nursery) -> None:
    async def no_reply(payload: bytes) -> None:
        return None

    bound = await start_server(nursery, zmq_address, no_reply)
    failures: list[str] = []

    requester = partial(expect_failure, failures, "closed", 5)

    async with trio.open_nursery() as outer, connect(bound) as conn:
        outer.start_soon(requester, conn)
        await trio.testing.wait_all_tasks_blocked()
    assert failures == [f"connection to {bound} closed"]


async def test_malformed_frames_are_dropped(zmq_address: str, nursery: trio.Nursery) -> None:
    stats = ServerStats()
    bound = await start_server(nursery, zmq_address, tag, stats)
    sock = raw_dealer(bound)
    try:
        sock.send_multipart([b"one part"])
        sock.send_multipart([b"three", b"parts", b"here"])
        sock.send_multipart([b"\x00" * 8, b"good"])
        assert await raw_recv(sock) == [b"\x00" * 8, b"re:good"]
    finally:
        sock.close()
    async with connect(bound) as conn:
        assert await conn.request(b"after", timeout=5) == b"re:after"
    assert stats == ServerStats(requests=4, replies=2, dropped=2)


async def test_garbage_bytes_reach_the_handler_untouched(
    zmq_address: str, nursery: trio.Nursery
) -> None:
    received: list[bytes] = []

    async def handler(payload: bytes) -> bytes:
        received.append(payload)
        return b"seen"

    bound = await start_server(nursery, zmq_address, handler)
    rng = random.Random(7)
    request_id, payload = rng.randbytes(200), rng.randbytes(200)
    sock = raw_dealer(bound)
    try:
        sock.send_multipart([request_id, payload])
        assert await raw_recv(sock) == [request_id, b"seen"]
    finally:
        sock.close()
    assert received == [payload]


# mem:// only: the per-run name registry.


async def test_mem_request_without_server() -> None:
    async with connect("mem://nobody") as conn:
        with pytest.raises(TransportError, match="no server at mem://nobody"):
            await conn.request(b"hello")


async def test_mem_bind_twice(nursery: trio.Nursery) -> None:
    await start_server(nursery, "mem://taken", echo)
    with pytest.raises(TransportError, match="already bound"):
        await serve("mem://taken", echo)


async def test_mem_stopped_server_fails_pending_requests(nursery: trio.Nursery) -> None:
    async def stuck(payload: bytes) -> bytes:
        await trio.sleep_forever()

    server = trio.CancelScope()

    async def run_server(task_status: trio.TaskStatus[str]) -> None:
        with server:
            await serve("mem://stopping", stuck, task_status=task_status)

    await nursery.start(run_server)
    failures: list[str] = []

    requester = partial(expect_failure, failures, "stopped", None)

    async with connect("mem://stopping") as conn, trio.open_nursery() as requesters:
        for _ in range(3):  # one being handled, two queued
            requesters.start_soon(requester, conn)
        await trio.testing.wait_all_tasks_blocked()
        server.cancel()
    assert failures == ["server at mem://stopping stopped"] * 3
    # The name is free again.
    await start_server(nursery, "mem://stopping", echo)


async def test_a_handler_that_never_waits_answers_inline_and_is_counted(
    nursery: trio.Nursery,
) -> None:
    """In-process, a `never_waits` handler runs in the requester's task (no
    switch to the server task) and its reply and counts are as usual."""
    ran_in: list[object] = []

    @never_waits
    async def upper(payload: bytes) -> bytes:
        ran_in.append(trio.lowlevel.current_task())
        return payload.upper()

    stats = ServerStats()
    await nursery.start(partial(serve, "mem://inline", upper, stats=stats))
    async with connect("mem://inline") as conn:
        assert await conn.request(b"abc") == b"ABC"
    assert ran_in == [trio.lowlevel.current_task()]
    assert (stats.requests, stats.replies) == (1, 1)


async def test_a_never_waits_handler_error_or_bad_reply_is_counted_and_survived(
    nursery: trio.Nursery, autojump_clock: trio.testing.MockClock
) -> None:
    """The inline path keeps `handle_request`'s promises: a handler that
    raises or answers with a non-bytes reply is counted and leaves the
    request unanswered, and the server serves the next one."""

    @never_waits
    async def picky(payload: bytes) -> bytes:
        if payload == b"boom":
            raise RuntimeError("handler bug")
        return payload.decode() if payload == b"str" else payload  # type: ignore[return-value]

    stats = ServerStats()
    await nursery.start(partial(serve, "mem://picky", picky, stats=stats))
    async with connect("mem://picky") as conn:
        for bad in (b"boom", b"str"):
            with pytest.raises(RequestTimeout):
                await conn.request(bad, timeout=0.2)
            assert await conn.request(b"next", timeout=5) == b"next"
    assert stats == ServerStats(requests=4, replies=2, handler_errors=2)


def test_a_bound_method_can_be_marked_never_waits() -> None:
    class Server:
        async def handle(self, payload: bytes) -> bytes:
            return payload

    marked = never_waits(Server().handle)
    assert marked.never_waits is True  # type: ignore[attr-defined]


async def test_a_handler_marked_never_waits_that_waits_is_an_error(
    nursery: trio.Nursery,
) -> None:
    @never_waits
    async def sleepy(payload: bytes) -> bytes:
        await trio.sleep(0)
        return payload

    await start_server(nursery, "mem://liar", sleepy)
    async with connect("mem://liar") as conn:
        with pytest.raises(RuntimeError, match="never_waits"):
            await conn.request(b"x")
        # The server is free again for the next request.
        with pytest.raises(RuntimeError, match="never_waits"):
            await conn.request(b"y")


class _Note:
    """A message object: handed over as it is in-process, text on the wire."""

    def __init__(self, text: str) -> None:
        self.text = text


class _NoteCodec:
    """Notes as UTF-8; a request that is not UTF-8 becomes a note saying so."""

    def encode(self, message: _Note) -> bytes:
        return message.text.encode()

    def decode(self, data: bytes) -> _Note:
        return _Note(data.decode())

    def decode_request(self, data: bytes) -> _Note:
        try:
            return self.decode(data)
        except UnicodeDecodeError:
            return _Note("invalid")


async def test_messages_are_handed_over_in_process_and_encoded_over_zeromq(
    address: str, nursery: trio.Nursery
) -> None:
    seen: list[_Note] = []

    async def keep(message: _Note) -> _Note:
        seen.append(message)
        return _Note("re:" + message.text)

    stats = ServerStats()
    bound = await nursery.start(partial(serve, address, keep, stats=stats, codec=_NoteCodec()))
    request = _Note("request")
    async with connect(bound, codec=_NoteCodec()) as conn:
        reply = await conn.request(request, timeout=5)
    assert isinstance(reply, _Note) and reply.text == "re:request"
    if address.startswith("mem://"):
        assert seen == [request]  # the very object, unencoded
    else:
        assert [n.text for n in seen] == ["request"] and seen[0] is not request
    assert (stats.requests, stats.replies, stats.handler_errors) == (1, 1, 0)


async def test_zeromq_hands_a_request_it_cannot_decode_to_the_handler_as_the_codec_says(
    nursery: trio.Nursery,
) -> None:
    async def answer(message: _Note) -> _Note:
        return _Note("got " + message.text)

    bound = await nursery.start(partial(serve, "tcp://127.0.0.1:0", answer, codec=_NoteCodec()))
    async with connect(bound) as raw:  # no codec: bytes as they are
        assert await raw.request(b"\xff\xfe", timeout=5) == b"got invalid"
        assert await raw.request(b"fine", timeout=5) == b"got fine"


async def test_a_reply_the_codec_cannot_encode_is_a_handler_error(nursery: trio.Nursery) -> None:
    async def wrong(message: _Note) -> object:
        return object()

    stats = ServerStats()
    bound = await nursery.start(
        partial(serve, "tcp://127.0.0.1:0", wrong, stats=stats, codec=_NoteCodec())
    )
    async with connect(bound, codec=_NoteCodec()) as conn:
        with pytest.raises(RequestTimeout):
            await conn.request(_Note("x"), timeout=0.2)
    assert (stats.requests, stats.replies, stats.handler_errors) == (1, 0, 1)


def test_the_blocking_client_is_the_transport_dealer() -> None:
    """`SyncClient` gets the same reconnect intervals and CURVE checks as a
    trio client (they had drifted apart when each set its socket up)."""
    from emu.processes.common import SyncClient

    with SyncClient("tcp://127.0.0.1:1") as client:
        assert client.sock.getsockopt(zmq.RECONNECT_IVL) == emu.transport.zmq.RECONNECT_IVL_MS
        assert (
            client.sock.getsockopt(zmq.RECONNECT_IVL_MAX) == emu.transport.zmq.RECONNECT_IVL_MAX_MS
        )
    with pytest.raises(TransportError, match="server's public key"):
        SyncClient("tcp://127.0.0.1:1", Curve(b"p" * 40, b"s" * 40))

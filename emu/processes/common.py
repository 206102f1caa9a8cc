"""What the process entry points share."""

from __future__ import annotations

import argparse
import functools
import gc
import json
import logging
import os
import random
import signal
import socket
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import structlog
import trio

from emu.config.configuration import Configuration
from emu.errors import InputError
from emu.msg import codec
from emu.msg.types import Map, request
from emu.rm.actor import RMAddresses
from emu.transport import Curve, Options, RequestTimeout, TransportError
from emu.transport.zmq import dealer

DEFAULT_PORT_BASE = 8030
"""YARN's ports: 8030 AM protocol (scheduler), 8031 resource tracker, 8032
client, 8033 admin."""


# --- addresses -----------------------------------------------------------------------
def split_host_port(spec: str, what: str) -> tuple[str, int | None]:
    """`host`, `host:port`, `[v6]` or `[v6]:port`."""
    spec = spec.strip()
    if spec.startswith("tcp://"):
        spec = spec[len("tcp://") :]
    if spec.startswith("["):
        host, _, rest = spec[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    elif spec.count(":") == 1:
        host, port = spec.split(":")
    else:
        host, port = spec, ""
    if not host:
        raise InputError(what, spec, "expected HOST or HOST:PORT")
    if port and not port.isdigit():
        raise InputError(what, spec, "the port must be a number")
    return host, int(port) if port else None


def rm_addresses(spec: str) -> RMAddresses:
    """The RM's four addresses from `HOST[:PORT_BASE]` (YARN's layout)."""
    host, base = split_host_port(spec, "--rm")
    return RMAddresses.from_port_base(host, DEFAULT_PORT_BASE if base is None else base)


def url_host(address: str) -> str:
    """The host part of tcp://host:port."""
    return split_host_port(address, "address")[0]


def free_port_base(host: str = "127.0.0.1", count: int = 4) -> int:
    """A first port of `count` consecutive ports free on `host` right now."""
    rng = random.Random()
    for _ in range(200):
        base = rng.randrange(20_000, 60_000 - count)
        socks = []
        try:
            for port in range(base, base + count):
                s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
                socks.append(s)
                s.bind((host, port))
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise RuntimeError(f"no {count} consecutive free ports on {host}")


def local_address_towards(host: str) -> str:
    """This machine's address on the route to `host` (for --advertise)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_DGRAM) as s:
        try:
            s.connect((host, 9))
            return s.getsockname()[0]
        except OSError:
            return socket.gethostname()


# --- CURVE keys -------------------------------------------------------------------------
def add_server_keys_option(parser: argparse.ArgumentParser) -> None:
    """`--keys DIR` for a process that serves (and so holds the whole
    directory `emu keys generate` wrote)."""
    parser.add_argument(
        "--keys",
        metavar="DIR",
        help="CURVE keys directory (emu keys generate; default: no encryption)",
    )


def add_client_keys_options(parser: argparse.ArgumentParser) -> None:
    """`--keys DIR` and `--client-key FILE` for a client of the RM, which
    may bring its own keypair instead of the directory's."""
    parser.add_argument(
        "--keys", metavar="DIR", help="CURVE keys directory (default: no encryption)"
    )
    parser.add_argument(
        "--client-key", metavar="FILE", help="client keypair (default DIR/client.key_secret)"
    )


# --- configuration ----------------------------------------------------------------------
def add_conf_option(parser: argparse.ArgumentParser, what: str) -> None:
    """`--conf/-D NAME=VALUE`, repeatable, read by `parse_overrides`."""
    parser.add_argument(
        "--conf",
        "-D",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help=f"{what} (repeatable; default: none)",
    )


def parse_overrides(items: list[str], flag: str = "--conf") -> dict[str, str]:
    out = {}
    for item in items:
        name, eq, value = item.partition("=")
        if not eq or not name.strip():
            raise InputError(flag, item, "expected NAME=VALUE")
        out[name.strip()] = value
    return out


def environment_overrides() -> dict[str, str]:
    """The properties emu's environment variables stand for, read here only:
    `EMU_SHORTCUTS=0` turns the schedulers' output-preserving shortcuts off
    (`emu.scheduler.shortcuts`), to tell a suspected shortcut bug from a
    scheduling one. Everything below the command line sees only the property."""
    if os.environ.get("EMU_SHORTCUTS", "1").strip() == "0":
        return {"emu.scheduler.shortcuts": "false"}
    return {}


def load_configuration(conf_dir: str | None, overrides: dict[str, str]) -> Configuration:
    """sls-runner.xml, capacity-scheduler.xml, yarn-site.xml (later wins) from
    `conf_dir` (default $HADOOP_CONF_DIR, if set), then the `--conf`
    overrides over those of the environment, as every run reads them
    (`emu.preflight.read_configuration`)."""
    from emu.preflight import read_configuration

    conf = read_configuration(conf_dir, overrides, "--conf").conf
    for name, value in environment_overrides().items():
        if name not in overrides:
            conf.set(name, value, "environment")
    return conf


# --- logging and output --------------------------------------------------------------------
def configure_logging(level: str = "info") -> None:
    """Actor logs as `key=value` lines on stderr, at `level` and above."""
    number = logging.getLevelName(level.upper())
    if not isinstance(number, int):
        raise InputError("--log-level", level, "expected debug, info, warning or error")
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="%Y-%m-%dT%H:%M:%S", utc=False),
            structlog.processors.KeyValueRenderer(
                key_order=["timestamp", "level", "event"], drop_missing=True
            ),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(number),
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        cache_logger_on_first_use=True,
    )


def say(*parts: Any) -> None:
    print(*parts, flush=True)


def warn(message: str) -> None:
    print(f"emu: {message}", file=sys.stderr, flush=True)


def write_json_atomic(path: str | os.PathLike[str], data: Any) -> None:
    p = Path(path)
    fd, tmp = tempfile.mkstemp(dir=p.parent or ".", prefix=f".{p.name}.")
    with os.fdopen(fd, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
    os.replace(tmp, p)


# --- a blocking client, for use outside trio ------------------------------------------------------
class SyncClient:
    """Request/reply to one RM service with plain blocking pyzmq.

    Used where no trio run exists yet (learning the cluster clock before
    starting one) or is not worth having (`emu cluster`'s supervision). The
    socket is the transport's own DEALER (`emu.transport.zmq.dealer`): the
    same CURVE set-up and reconnect intervals as every trio client.
    """

    def __init__(self, address: str, curve: Curve | None = None) -> None:
        self.address = address
        self.sock = dealer(address, options=Options(curve=curve))
        self._id = 0

    def call(self, mtype: str, timeout: float = 5.0, **fields: Any) -> dict[str, Any]:
        """The reply map (errors included); RequestTimeout after `timeout` wall seconds."""
        self._id += 1
        rid = self._id.to_bytes(8, "big")
        self.sock.send_multipart([rid, codec.encode(Map(request(mtype, self._id, **fields)))])
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not self.sock.poll(max(1, int(left * 1000))):
                raise RequestTimeout(f"no reply from {self.address} within {timeout}s")
            frames = self.sock.recv_multipart()
            if len(frames) == 2 and frames[0] == rid:
                return codec.decode(frames[1]).to_map()

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> SyncClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def cluster_metrics(
    address: str, curve: Curve | None, wait_s: float, alive: Callable[[], bool] | None = None
) -> dict[str, Any]:
    """The RM's cluster metrics, waiting up to `wait_s` for it to answer."""
    deadline = time.monotonic() + wait_s
    with SyncClient(address, curve) as client:
        while True:
            left = deadline - time.monotonic()
            try:
                reply = client.call("cluster_metrics", timeout=max(0.2, min(2.0, left)))
            except TransportError:
                if time.monotonic() >= deadline:
                    raise TransportError(
                        f"the ResourceManager at {address} did not answer within {wait_s:g}s"
                    ) from None
                if alive is not None and not alive():
                    raise TransportError("the ResourceManager process exited") from None
                continue
            if reply["type"] == "error":
                raise TransportError(f"{address}: {reply['code']}: {reply['message']}")
            return reply["metrics"]


def cluster_clock(address: str, curve: Curve | None, wait_s: float) -> tuple[float, float]:
    """(epoch, rate) announced by the RM at `address` (its client service)."""
    m = cluster_metrics(address, curve, wait_s)
    epoch, rate = m.get("epoch"), m.get("rate")
    if not isinstance(epoch, (int, float)) or not isinstance(rate, (int, float)) or rate <= 0:
        raise TransportError(
            f"{address} announced no scaled wall clock (epoch {epoch}, rate {rate})"
        )
    return float(epoch), float(rate)


# --- garbage collection in long-running processes ---------------------------------------
def settle_gc() -> None:
    """Take what this process holds now (modules, configuration, for an NM
    process its registered nodes) out of every later garbage collection.

    A full collection scans every tracked object; in a process serving
    thousands of nodes over ZeroMQ one stalled every heartbeat in flight for
    100-650 ms on the loaded 2-core bench machine (P3 in BENCHMARKS.md).
    `gc.freeze()` moves the objects alive now to the permanent generation:
    they stay freed by reference counting, but a reference cycle among them
    that later becomes garbage is never collected, so it is done once, at a
    point where what is alive is the process's lasting state. Only the
    multi-process commands call it; in-process runs are untouched."""
    gc.collect()
    gc.freeze()


# --- running a trio main until a signal ---------------------------------------------------
async def until_signal(
    main: Callable[[trio.Nursery], Awaitable[None]], parent_pid: int | None = None
) -> str | None:
    """Run `main(nursery)` until it returns, SIGTERM/SIGINT arrives, or the
    parent process is gone; returns the reason it stopped early, if any."""
    reason: list[str] = []
    with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async with trio.open_nursery() as nursery:

            async def watch_signals() -> None:
                async for signum in signals:
                    reason.append(signal.Signals(signum).name)
                    nursery.cancel_scope.cancel()
                    return

            async def watch_parent() -> None:
                assert parent_pid is not None
                while True:
                    await trio.sleep(_sim(0.5))
                    if os.getppid() != parent_pid and not _alive(parent_pid):
                        reason.append(f"parent process {parent_pid} exited")
                        nursery.cancel_scope.cancel()
                        return

            nursery.start_soon(watch_signals)
            if parent_pid:
                nursery.start_soon(watch_parent)
            await main(nursery)
            nursery.cancel_scope.cancel()
    return reason[0] if reason else None


def _sim(wall_seconds: float) -> float:
    """Trio seconds for `wall_seconds` of wall time on the current clock."""
    rate = getattr(trio.lowlevel.current_clock(), "rate", 1.0)
    return wall_seconds * rate


def sim_seconds(wall_seconds: float) -> float:
    return _sim(wall_seconds)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def command(func: Callable[[Any], int]) -> Callable[[Any], int]:
    """A subcommand whose operational failures (the RM unreachable, a port
    taken, a child process dying) print one line and exit 1; bad input
    (InputError) is left to `emu.cli`, which exits 2."""

    @functools.wraps(func)
    def run(args: Any) -> int:
        try:
            return func(args)
        except BaseExceptionGroup as group:
            leaf = _single_leaf(group)
            if isinstance(leaf, InputError):
                raise leaf from None
            if not isinstance(leaf, (TransportError, RuntimeError, OSError)):
                raise
            warn(f"error: {leaf}")
            return 1
        except (TransportError, RuntimeError, OSError) as e:
            warn(f"error: {e}")
            return 1

    return run


def _single_leaf(group: BaseExceptionGroup) -> BaseException | None:
    """The one exception a chain of single-member groups (trio nurseries) wraps."""
    exc: BaseException = group
    while isinstance(exc, BaseExceptionGroup):
        if len(exc.exceptions) != 1:
            return None
        exc = exc.exceptions[0]
    return exc

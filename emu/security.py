"""ZeroMQ CURVE for a cluster spread over hosts: key files and the ZAP handler.

The model is deliberately small. One *server* keypair is shared by every
process that serves (the RM's four ports and each NM process's
container-management port); *client* keypairs identify whoever connects.
A serving process holds the server secret key and an allow-list of client
public keys; its ZAP handler (ZeroMQ's authentication hook, run here as a
trio task on `inproc://zeromq.zap.01`) admits a CURVE peer only if its
public key is on the list, and counts the ones it refuses. A refused peer's
requests are never delivered: they time out on its side.

`emu keys generate DIR` lays out:

    DIR/server.key           server public key   (give to every client)
    DIR/server.key_secret    server keypair      (RM and NM hosts only)
    DIR/client.key           client public key
    DIR/client.key_secret    client keypair      (whoever connects)
    DIR/authorized/*.key     client public keys the servers accept

The files are ZeroMQ's own certificate format (`zmq.auth`), so
`zmq.auth.load_certificate` and other ZeroMQ tools read them. Cluster
processes (RM, NM) read the whole directory; a client such as `emu replay`
needs only `server.key` and its own `client.key_secret`.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

import structlog
import trio
import zmq
import zmq.auth
from zmq.utils import z85

from emu.errors import InputError
from emu.transport.base import MAX_MESSAGE_BYTES, Curve, Defaults, Options, set_defaults
from emu.transport.zmq import recv_multipart

log = structlog.get_logger("emu.security")

ZAP_ENDPOINT = "inproc://zeromq.zap.01"
AUTHORIZED = "authorized"
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})


def curve_available() -> bool:
    """Whether this libzmq was built with CURVE (libsodium or tweetnacl)."""
    return bool(zmq.has("curve"))


def generate(
    directory: str | os.PathLike[str], clients: tuple[str, ...] = ("client",)
) -> list[Path]:
    """Write a server keypair and one keypair per client name; authorize them.

    Existing files are kept (so adding a client does not invalidate the
    cluster's server key); returns the files written.
    """
    if not curve_available():
        raise InputError("emu keys", None, "this libzmq has no CURVE support")
    d = Path(directory)
    (d / AUTHORIZED).mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for name in ("server", *clients):
        if not (d / f"{name}.key_secret").exists():
            public, secret = zmq.auth.create_certificates(d, name)
            os.chmod(secret, 0o600)
            written += [Path(public), Path(secret)]
        if name != "server":
            target = d / AUTHORIZED / f"{name}.key"
            if not target.exists():
                shutil.copyfile(d / f"{name}.key", target)
                written.append(target)
    return written


def _load(path: Path, what: str, secret: bool) -> tuple[bytes, bytes | None]:
    if not path.is_file():
        raise InputError(str(path), None, f"no {what} here (create keys with `emu keys generate`)")
    try:
        public, secret_key = zmq.auth.load_certificate(path)
    except (ValueError, OSError) as e:
        raise InputError(str(path), None, f"not a ZeroMQ certificate: {e}") from None
    if secret and secret_key is None:
        raise InputError(str(path), None, f"{what}: the file holds no secret key")
    return public, secret_key


@dataclass(frozen=True)
class Keys:
    """What one process loaded: its client keys, and server keys if it serves."""

    client: Curve
    server: Curve | None = None
    allowed: frozenset[bytes] = field(default_factory=frozenset)
    """Z85 public keys of accepted clients (servers only)."""


def load(
    directory: str | os.PathLike[str], *, serving: bool, client_key: str | None = None
) -> Keys:
    """Keys from a `generate`d directory.

    `serving` processes (RM, NM) need the server keypair and read the
    allow-list; every process needs a client keypair (`client_key`, default
    `DIR/client.key_secret`) and the server's public key.
    """
    d = Path(directory)
    server_public, server_secret = _load(
        d / ("server.key_secret" if serving else "server.key"), "server key", serving
    )
    client_path = Path(client_key) if client_key else d / "client.key_secret"
    client_public, client_secret = _load(client_path, "client keypair", True)
    assert client_secret is not None
    client = Curve(client_public, client_secret, server_public)
    if not serving:
        return Keys(client)
    assert server_secret is not None
    allowed = set()
    auth_dir = d / AUTHORIZED
    if auth_dir.is_dir():
        for f in sorted(auth_dir.glob("*.key")):
            allowed.add(_load(f, "client public key", False)[0])
    if not allowed:
        raise InputError(str(auth_dir), None, "no authorized client key (*.key) here")
    return Keys(client, Curve(server_public, server_secret), frozenset(allowed))


def install(keys: Keys | None, max_message_bytes: int = MAX_MESSAGE_BYTES) -> None:
    """Make every later serve/connect of this process use `keys` (None: plain)
    and refuse messages over `max_message_bytes`."""
    if keys is None:
        server, client = Options(max_message_bytes=max_message_bytes), Options()
    else:
        server = Options(curve=keys.server, max_message_bytes=max_message_bytes)
        client = Options(curve=keys.client)
    set_defaults(Defaults(server=server, client=client))


@dataclass
class AuthStats:
    """What the ZAP handler decided: admitted and refused handshakes."""

    allowed: int = 0
    refused: int = 0
    refused_from: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        return {"allowed": self.allowed, "refused": self.refused, "refused_from": self.refused_from}


async def zap_handler(
    allowed: frozenset[bytes],
    stats: AuthStats,
    *,
    context: zmq.Context[zmq.Socket[bytes]] | None = None,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> NoReturn:
    """Answer ZeroMQ's authentication requests (ZAP, RFC 27) until cancelled.

    CURVE peers are admitted when their public key is in `allowed` (Z85);
    NULL-mechanism peers (servers without CURVE) are admitted as before.
    Must be started before any CURVE server accepts a connection: without
    a handler, libzmq admits every well-formed CURVE client.
    """
    keys = {z85.decode(k) for k in allowed}
    sock = (context or zmq.Context.instance()).socket(zmq.ROUTER)
    fd = int(sock.getsockopt(zmq.FD))
    try:
        sock.setsockopt(zmq.LINGER, 0)
        try:
            sock.bind(ZAP_ENDPOINT)
        except zmq.ZMQError as e:
            raise RuntimeError(f"cannot bind the ZAP handler: {e}") from e
        task_status.started()
        while True:
            frames = await recv_multipart(sock, fd)
            # [peer, b"", version, request_id, domain, address, identity, mechanism, *creds]
            if len(frames) < 8 or frames[1] != b"":
                continue
            peer, _, version, request_id, _domain, address, _identity, mechanism = frames[:8]
            creds = frames[8:]
            if mechanism == b"CURVE":
                ok = len(creds) == 1 and creds[0] in keys
            else:
                ok = mechanism == b"NULL"
            who = address.decode(errors="replace")
            if ok:
                stats.allowed += 1
                status, text = b"200", b"OK"
            else:
                stats.refused += 1
                stats.refused_from[who] = stats.refused_from.get(who, 0) + 1
                status, text = b"400", b"client key not authorized"
                log.warning("peer refused", address=who, mechanism=mechanism.decode())
            sock.send_multipart([peer, b"", version, request_id, status, text, b"", b""])
            await trio.lowlevel.checkpoint()
    finally:
        trio.lowlevel.notify_closing(fd)
        sock.close()


def warn_if_exposed(host: str, keys: Keys | None, what: str, exposes: str) -> str | None:
    """The warning to print when `what` listens beyond loopback without CURVE."""
    if keys is not None or host in LOOPBACK or host.startswith("127."):
        return None
    return (
        f"warning: {what} listens on {host} without CURVE: anyone who can reach this "
        f"address can {exposes}. Create keys with `emu keys generate DIR` and pass "
        "--keys DIR to every process."
    )

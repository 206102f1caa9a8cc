"""`emu keys generate DIR`: CURVE keypairs for a cluster (see `emu.security`)."""

from __future__ import annotations

import argparse

from emu import security
from emu.processes import common as C


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "keys",
        help="create CURVE keys for a cluster",
        description="Manage ZeroMQ CURVE keys. Servers (RM, NM processes) take the whole "
        "directory with --keys; clients (emu replay, emu cluster status) need server.key "
        "and their client keypair.",
    )
    ksub = p.add_subparsers(dest="keys_command", required=True)
    gen = ksub.add_parser(
        "generate",
        help="write a server keypair and client keypairs, and authorize the clients",
        description=security.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    gen.add_argument("directory", metavar="DIR", help="where to write the keys")
    gen.add_argument(
        "--client",
        action="append",
        default=[],
        metavar="NAME",
        help="a client keypair NAME.key_secret (repeatable; default: one named client)",
    )
    gen.set_defaults(func=C.command(generate))


def generate(args: argparse.Namespace) -> int:
    written = security.generate(args.directory, tuple(args.client) or ("client",))
    for path in written:
        C.say(f"wrote {path}")
    if not written:
        C.say(f"{args.directory}: every key already exists; nothing written")
    return 0

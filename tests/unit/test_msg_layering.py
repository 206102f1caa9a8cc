"""The message layer's boundaries: `emu.msg` depends on nothing else in emu,
and actors never ask which transport carried a message (no test of a
payload's class, no look at an address's scheme): the transport hands
objects over in-process and encodes at ZeroMQ's boundary."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import emu

PACKAGE = Path(emu.__file__).resolve().parent
ACTORS = [
    PACKAGE / "nm.py",
    PACKAGE / "rm" / "actor.py",
    PACKAGE / "simulation.py",
    *sorted((PACKAGE / "am").glob("*.py")),
]
MESSAGE_CLASSES = (
    r"P\.\w+|Message|Map|Invalid|NodeHeartbeats|NodeHeartbeatsReply|Allocate|AllocateReply|bytes"
)


def test_the_message_layer_imports_nothing_else_from_emu() -> None:
    for path in sorted((PACKAGE / "msg").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith("emu") or node.module.startswith("emu.msg"), (
                    path.name,
                    node.module,
                )


def test_actors_never_ask_which_transport_carried_a_message() -> None:
    scheme = re.compile(r"""startswith\(\s*["']mem://""")
    payload_type = re.compile(
        rf"type\([^)]*\) is ({MESSAGE_CLASSES})\b|isinstance\([^,]+,\s*({MESSAGE_CLASSES})\b"
    )
    for path in ACTORS:
        text = path.read_text()
        assert not scheme.search(text), path.name
        assert not payload_type.search(text), path.name

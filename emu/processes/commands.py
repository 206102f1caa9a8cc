"""The multi-process subcommands of `emu`, added to its parser by `emu.cli`."""

from __future__ import annotations

import argparse


def add_commands(sub: argparse._SubParsersAction) -> None:
    """`emu rm`, `emu nm`, `emu replay`, `emu cluster`, `emu keys`, `emu admin`."""
    from emu.processes import admin, cluster, keys, nm, replay, rm

    for module in (rm, nm, replay, cluster, keys, admin):
        module.add_parser(sub)

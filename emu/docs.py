"""Generated documentation: the state tables and the protocol catalogue are
written from the code, so they cannot drift. `make docs` rewrites them; a
test fails when a committed copy is stale."""

from __future__ import annotations

import sys
from pathlib import Path

from emu.msg import catalogue
from emu.rm.context import MACHINES

DOCS = Path(__file__).resolve().parent.parent / "docs"


def state_machines_markdown() -> str:
    parts = [
        "# RM state machines",
        "",
        "Generated from the transition tables in `emu/rm/` by `make docs`; do not edit.",
        "An event with no row for the current state is logged, counted and ignored.",
        "",
    ]
    parts += [MACHINES[k].markdown() for k in ("app", "attempt", "container", "node")]
    return "\n".join(parts)


def generated() -> dict[Path, str]:
    return {
        DOCS / "state-machines.md": state_machines_markdown(),
        DOCS / "protocol.md": catalogue.catalogue_markdown(),
    }


def main() -> int:
    DOCS.mkdir(exist_ok=True)
    for path, text in generated().items():
        path.write_text(text)
        print(f"wrote {path.relative_to(DOCS.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Suite-wide: which form of emu's hot modules the tests run (emu/native.py).

`make test` compiles first, so the suite runs on the compiled modules. Run
with pytest directly after editing a compiled source, the build is stale:
this process has already fallen back to the sources, and so that every
child process (the CLI, multi-process and native tests start many) does
the same without printing the stale-build line each test would then see
on its stderr, the fallback is made explicit for them.
"""

from __future__ import annotations

import os

import pytest

from emu import native

_FORM = native.describe()


def pytest_configure(config: pytest.Config) -> None:
    if native.status()[0] == "stale":
        os.environ["EMU_PURE_PYTHON"] = "1"


def pytest_report_header(config: pytest.Config) -> str:
    return f"emu: {_FORM}"

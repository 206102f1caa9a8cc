"""Suite-wide: which form of emu's hot modules the tests run (emu/native.py),
SIGINT as a test expects it, and the markers that pick a tier of the suite.

The form: run after editing a compiled source, the build is stale: this
process has already fallen back to the sources, and so that every child
process (the CLI, multi-process and native tests start many) does the same
without printing the stale-build line each test would then see on its
stderr, the fallback is made explicit for them.

SIGINT: a shell that starts pytest in the background, under nohup or in
some CI runners, hands it SIGINT ignored, and an ignored signal stays
ignored in every process it starts. Tests that interrupt a run or a
cluster with SIGINT would then see nothing happen. Each test process
(pytest, and each xdist worker) puts Python's default handler back, so its
children start with SIGINT at its default, as from a terminal.

Tiers (`make test-quick` leaves out the first four; `make test` all but
`oracle`; `make test-oracle` only `oracle`):
- `jvm`: starts Hadoop's code in a JVM (everything under tests/hadoop/).
- `processes`: emu actors in processes of their own, or hosts in network
  namespaces (tests/multiprocess/, tests/hosts/).
- `slow`: more than a few seconds of wall time on its own.
- `oracle`: asks a real Hadoop ResourceManager or SLS itself again (their
  recorded answers are what the other tiers compare against).
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from emu import native

_FORM = native.describe()
_TESTS = Path(__file__).resolve().parent
_BY_DIRECTORY = {"hadoop": "jvm", "multiprocess": "processes", "hosts": "processes"}
_SPREAD = "hadoop"
"""The directory whose tests may run on any worker, one by one: each starts
its own processes and JVM in its own tmp_path, and they are the suite's
longest, so keeping a file of them on one worker would leave the other idle."""
_KEEP_TOGETHER = frozenset({"test_rest_schema.py", "test_sls_oracle.py", "test_synth_vs_hadoop.py"})
"""Files there whose module fixtures are built once for all their tests."""


def pytest_configure(config: pytest.Config) -> None:
    if native.status()[0] == "stale":
        os.environ["EMU_PURE_PYTHON"] = "1"
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark each test with the tier of the directory it lives in, and with
    its file as its xdist group (`make test` runs `--dist loadgroup`): a
    file's tests stay on one worker, their module fixtures built once and
    their processes not racing each other, but for `_SPREAD`'s. Before
    xdist's own hook, which reads the groups."""
    for item in items:
        try:
            rel = item.path.relative_to(_TESTS)
        except ValueError:
            continue
        marker = _BY_DIRECTORY.get(rel.parts[0])
        if marker is not None:
            item.add_marker(marker)
        if rel.parts[0] != _SPREAD or rel.name in _KEEP_TOGETHER:
            item.add_marker(pytest.mark.xdist_group(str(rel)))


def pytest_report_header(config: pytest.Config) -> str:
    return f"emu: {_FORM}"

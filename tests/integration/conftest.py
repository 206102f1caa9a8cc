"""Fixtures shared by the integration tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fidelity_runs import sls_argv
from tests.reference import write_bench_inputs


@pytest.fixture(scope="session")
def bench_inputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small loaded benchmark workload (`reference.write_bench_inputs`)."""
    return write_bench_inputs(tmp_path_factory.mktemp("bench"))


def sls_case(case: str, out: Path, *extra: str) -> int:
    """`emu sls` in this process on a fidelity case with `extra` options,
    writing into `out` (`tests.fidelity_runs.sls_argv`); its exit code."""
    from emu.cli import main

    return main(sls_argv(case, out, *extra))

"""Fixtures shared by the integration tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.reference import write_bench_inputs


@pytest.fixture(scope="session")
def bench_inputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small loaded benchmark workload (`reference.write_bench_inputs`)."""
    return write_bench_inputs(tmp_path_factory.mktemp("bench"))

"""Fixtures shared by the integration tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.reference import write_bench_inputs


@pytest.fixture(scope="session")
def bench_inputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small loaded benchmark workload (`reference.write_bench_inputs`)."""
    return write_bench_inputs(tmp_path_factory.mktemp("bench"))


CASES = Path(__file__).resolve().parents[2] / "scenarios" / "fidelity" / "cases"


def sls_case(case: str, out: Path, *extra: str) -> int:
    """`emu sls` in this process on a fidelity case (its trace.json,
    nodes.json and conf/) with `extra` options, writing into `out`; its exit
    code."""
    from emu.cli import main

    d = CASES / case
    return main(
        [
            "sls",
            "--tracetype=SLS",
            f"--tracelocation={d / 'trace.json'}",
            f"--nodes={d / 'nodes.json'}",
            f"--conf-dir={d / 'conf'}",
            f"--output-dir={out}",
            *extra,
        ]
    )

"""The scheduling cases of tests/integration/test_scheduling_bug_cases.py
with Hadoop's own schedulers deciding (`--scheduler-impl hadoop`): emu's
port and Hadoop's give the same jobruntime.csv, byte for byte."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hadoop.conftest import sls_case

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("hadoop")]


def _sls(case: str, out: Path, *extra: str) -> bytes:
    return (sls_case(case, out, *extra, failed_jobs=True) / "jobruntime.csv").read_bytes()


@pytest.mark.parametrize("case", ["cap-impossible-ask", "fair-preemption-spares-am"])
def test_emu_and_hadoop_give_the_same_jobruntime(case, tmp_path):
    ours = _sls(case, tmp_path / "emu")
    hadoops = _sls(case, tmp_path / "hadoop", "--scheduler-impl", "hadoop")
    assert ours == hadoops

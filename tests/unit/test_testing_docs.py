"""docs/testing.md's examples run as written, and emu.testing needs no test
framework."""

from __future__ import annotations

import re
import subprocess
import sys
import unittest
from pathlib import Path

from emu.rm.scheduler import registry

DOC = Path(__file__).resolve().parents[2] / "docs" / "testing.md"


def examples() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(), re.DOTALL)


def test_every_example_runs() -> None:
    found = examples()
    assert len(found) == 3
    for code in found:
        namespace: dict[str, object] = {"__name__": "docs_testing_example"}
        try:
            exec(compile(code, str(DOC), "exec"), namespace)
            cases = [
                v
                for v in namespace.values()
                if isinstance(v, type) and issubclass(v, unittest.TestCase)
            ]
            for case in cases:
                suite = unittest.defaultTestLoader.loadTestsFromTestCase(case)
                outcome = unittest.TestResult()
                suite.run(outcome)
                assert outcome.testsRun > 0
                assert outcome.wasSuccessful(), outcome.failures + outcome.errors
        finally:
            registry.unregister("mine")


NO_PYTEST = """
import sys

class NoPytest:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("pytest", "_pytest"):
            raise ImportError(f"no {name} here")
        return None

sys.meta_path.insert(0, NoPytest())
import emu.testing
from emu.simulation import run_virtual

result = run_virtual(emu.testing.simulation([emu.testing.mr_job("j", maps=1, reduces=0)]))
print(result.jobs[0]["state"])
"""


def test_emu_testing_runs_without_pytest() -> None:
    """A plugin's tests may use unittest: with pytest not importable (trio
    only tries it), emu.testing loads and runs a cluster."""
    out = subprocess.run(
        [sys.executable, "-c", NO_PYTEST], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "FINISHED"

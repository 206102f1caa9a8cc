"""The bad-input corpus: every file in tests/data/bad/ through the real CLI.

Each must end in exactly one `emu: error:` line naming the file and the
place in it, exit code 2, no traceback, and no result files in the output
directory. `manifest.toml` there says which command reads each file and
which words the message must contain.
"""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

import pytest

from tests.cli_runs import run_here
from tests.reference import REFERENCE_DIR

BAD = Path(__file__).resolve().parent.parent / "data" / "bad"
MANIFEST = tomllib.loads((BAD / "manifest.toml").read_text())
TEST_CONF = REFERENCE_DIR / "test-resources"
INPUT_SLS = str(TEST_CONF / "inputsls.json")


def _argv(command: str, path: str, out: str) -> list[str]:
    sls = ["sls", f"--output-dir={out}", f"--conf-dir={TEST_CONF}"]
    return {
        "run": ["run", path, f"--output-dir={out}"],
        "sls": [*sls, "--tracetype=SLS", f"--tracelocation={path}"],
        "rumen": [*sls, "--tracetype=RUMEN", f"--tracelocation={path}"],
        "synth": [*sls, "--tracetype=SYNTH", f"--tracelocation={path}"],
        "nodes": [*sls, "--tracetype=SLS", f"--tracelocation={INPUT_SLS}", f"--nodes={path}"],
        "fair": [
            *sls,
            "--tracetype=SLS",
            f"--tracelocation={INPUT_SLS}",
            "-D",
            "yarn.resourcemanager.scheduler.class=fair",
            "-D",
            f"yarn.scheduler.fair.allocation.file={path}",
        ],
        "conf": [
            "sls",
            f"--output-dir={out}",
            "--tracetype=SLS",
            f"--tracelocation={INPUT_SLS}",
            f"--conf-dir={path}",
        ],
        "invariants": [
            *sls,
            "--tracetype=SLS",
            f"--tracelocation={INPUT_SLS}",
            f"--invariants={path}",
        ],
    }[command]


def test_the_corpus_is_complete():
    """Every file is in the manifest and the manifest names only files."""
    on_disk = {p.name for p in BAD.iterdir() if p.name != "manifest.toml"}
    assert on_disk == set(MANIFEST)
    assert len(on_disk) >= 30


def _run(name: str, out: Path) -> subprocess.CompletedProcess[str]:
    """The CLI on one case, in this process (tests/integration/test_cli_errors.py
    runs the command itself in processes of its own)."""
    return run_here(_argv(MANIFEST[name]["command"], str(BAD / name), str(out)))


@pytest.fixture(scope="module")
def outcomes(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, tuple[subprocess.CompletedProcess[str], Path]]:
    """Every case's CLI run, one after another, with no Hadoop configuration
    directory from the environment."""
    root = tmp_path_factory.mktemp("bad")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("HADOOP_CONF_DIR", "")
        return {
            name: (_run(name, root / str(i) / "out"), root / str(i) / "out")
            for i, name in enumerate(sorted(MANIFEST))
        }


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_bad_input_is_one_clear_error(name, outcomes):
    proc, out = outcomes[name]
    lines = proc.stderr.splitlines()
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1 and lines[0].startswith("emu: error: "), proc.stderr
    expect = MANIFEST[name]["expect"]
    # A fragment starting with ":" must follow the file name: it is the place.
    assert (name + expect if expect.startswith(":") else name) in lines[0]
    assert expect in lines[0]
    assert "Traceback" not in proc.stdout + proc.stderr
    results = sorted(p.name for p in out.rglob("*") if p.is_file()) if out.exists() else []
    assert results == []

"""The bad-input corpus: every file in tests/data/bad/ through the real CLI.

Each must end in exactly one `emu: error:` line naming the file and the
place in it, exit code 2, no traceback, and no result files in the output
directory. `manifest.toml` there says which command reads each file and
which words the message must contain.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

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
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "emu.cli",
            *_argv(MANIFEST[name]["command"], str(BAD / name), str(out)),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "HADOOP_CONF_DIR": ""},
    )


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory) -> dict[str, tuple[subprocess.CompletedProcess[str], Path]]:
    """Every case's CLI run, a few at a time: each is a fresh interpreter,
    and running them side by side keeps the corpus to seconds."""
    root = tmp_path_factory.mktemp("bad")
    outs = {name: root / str(i) / "out" for i, name in enumerate(sorted(MANIFEST))}
    with ThreadPoolExecutor(max_workers=4) as pool:
        done = dict(zip(outs, pool.map(_run, outs, outs.values()), strict=True))
    return {name: (done[name], outs[name]) for name in outs}


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

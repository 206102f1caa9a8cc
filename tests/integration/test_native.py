"""The compiled (mypyc) and the pure-Python forms of the hot modules give the
same replays, and `import emu` picks the right one (emu/native.py).

The golden-output test runs in this process on whichever form `make test`
built (the compiled one wherever a C compiler is); here the same goldens are
replayed again in a child process forced to pure Python, so both forms are
held to the same bytes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from emu import native

ROOT = Path(__file__).resolve().parents[2]


def _run(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k != "EMU_PURE_PYTHON"}
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_pure_python_replays_give_the_golden_outputs() -> None:
    cases = "sls-fair or sls-capacity or bench-fair or bench-fifo"
    golden = "tests/integration/test_golden_outputs.py"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", cases, golden],
        cwd=ROOT,
        env={**os.environ, "EMU_PURE_PYTHON": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "4 passed" in done.stdout


def test_emu_pure_python_loads_the_sources() -> None:
    code = (
        "import emu, emu.rm.context as c, emu.nm as n; from emu import native;"
        "print(native.activate(), c.__file__, n.__file__)"
    )
    kind, *files = _run(code, EMU_PURE_PYTHON="1").stdout.split()
    assert kind == "pure"
    assert all(f.endswith(".py") for f in files), files


def test_a_built_tree_loads_the_compiled_modules() -> None:
    kind, detail = native.build_state()
    if kind != "compiled":
        pytest.skip(f"no compiled build here: {detail}")
    done = _run(
        "import emu.rm.context as c; from emu import native; print(native.describe(), c.__file__)"
    )
    assert done.stdout.startswith("compiled ("), done.stdout + done.stderr
    assert done.stdout.split()[-1].endswith(native.built_module(Path("x.py")).name[1:])
    assert done.stderr == ""


def test_a_changed_source_makes_the_build_stale(tmp_path: Path) -> None:
    manifest = {
        "python": sys.implementation.cache_tag,
        "sources": {
            str(p.relative_to(native.ROOT)): [p.stat().st_mtime_ns, native.digest(p)]
            for p in native.sources()
        },
    }
    first = next(iter(manifest["sources"]))
    good = tmp_path / "good.json"
    good.write_text(json.dumps(manifest))
    # a build whose recorded content differs from the file on disk
    manifest["sources"][first] = [0, "0" * 64]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(manifest))
    kind, detail = native.build_state(bad)
    assert (kind, detail) == ("stale", f"{first} changed")
    # same content with another mtime (a fresh checkout) is not stale
    manifest["sources"][first] = [0, native.digest(native.ROOT / first)]
    touched = tmp_path / "touched.json"
    touched.write_text(json.dumps(manifest))
    assert native.build_state(touched)[1] == native.build_state(good)[1]
    assert native.build_state(tmp_path / "missing.json")[0] == "pure"


def test_the_source_finder_takes_only_the_listed_modules() -> None:
    finder = native.FromSource({"emu.rm.context": native.PACKAGE / "rm" / "context.py"})
    spec = finder.find_spec("emu.rm.context")
    assert spec is not None and spec.origin == str(native.PACKAGE / "rm" / "context.py")
    assert finder.find_spec("emu.cli") is None

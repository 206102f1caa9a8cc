"""The compiled form of emu's hot modules, and the way back to their source.

Why: a replay spends its wall time in the RM, NM and AM Python code, spread
thinly over many functions (no function takes more than a few per cent), so
no single change makes it much faster; compiling the same code does. mypyc
turns the typed modules listed in `SOURCES` into C extensions: the same
source, the same outputs (the golden-output tests run on whichever form is
in use, and tests/integration/test_native.py replays a trace in both forms
and compares the files byte for byte), about twice as fast.

How it is used:

- `make compile` (and so `make install`, `make bench`, `make fidelity`)
  runs `python -m emu.compile` (emu/compile.py), which compiles when a
  source changed since the last build and does nothing otherwise. The
  extension files land beside the sources and are not committed.
- `import emu` calls `activate()`: when there is no build, when
  `EMU_PURE_PYTHON=1`, or when a source changed since the build (a stale
  build would run old code), the listed modules are loaded from their `.py`
  files instead, the last case with one line on stderr saying how to rebuild.
- `emu --version` says which form runs.
- A replay that runs pure Python for want of a build, and is long enough for
  the difference to matter, says once how to compile and what it gains
  (`CompileHint`); one forced pure by `EMU_PURE_PYTHON` says nothing.

Compiling is not on the first run's path: a fresh checkout answers at once in
pure Python, and `make compile` is a separate step, taken when replays grow.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import IO, Any

PACKAGE = Path(__file__).resolve().parent
ROOT = PACKAGE.parent
MANIFEST = PACKAGE / "native.json"
GROUP = "emu.native_lib"  # the shared library every compiled module calls into

# Compiled: the whole RM (package `__init__` files stay Python: importing a
# package's compiled `__init__` while its submodules import each other is
# where mypyc's import order breaks), the NM and AM engines, and the data
# they all pass around, and the SLS trace reader (a replay reads its jobs as
# it goes). Transports stay Python (async generators, which mypyc
# does not compile).
_TREES = ("rm",)
_FILES = (
    "resources.py",
    "msg/types.py",
    "msg/catalogue.py",
    "msg/codec.py",
    "workload.py",
    "nm.py",
    "alarm.py",
    "java_heap.py",
    "trio_time.py",
    "am/engine.py",
    "am/driver.py",
    "am/policies.py",
    "metrics/sls.py",
    "scenario/sls.py",
    "scenario/java_random.py",
)


def sources() -> list[Path]:
    """The source files compiled, in a stable order."""
    found: list[Path] = []
    for tree in _TREES:
        found += (p for p in (PACKAGE / tree).rglob("*.py") if p.name != "__init__.py")
    found += (PACKAGE / f for f in _FILES)
    return sorted(found)


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def built_module(path: Path) -> Path:
    """Where the compiled module of a source file lands."""
    return path.with_name(path.stem + importlib.machinery.EXTENSION_SUFFIXES[0])


# --- the state of the build ----------------------------------------------------------------


def status() -> tuple[str, str]:
    """("compiled", detail), ("stale", the changed source) or ("pure", why)."""
    if pure_python_asked():
        return "pure", "EMU_PURE_PYTHON is set"
    return build_state()


def pure_python_asked() -> bool:
    """EMU_PURE_PYTHON asks for the sources whatever is built."""
    return os.environ.get("EMU_PURE_PYTHON", "") not in ("", "0")


def build_state(manifest_file: Path = MANIFEST) -> tuple[str, str]:
    """The state of the build recorded in `manifest_file`, whatever the
    environment says."""
    try:
        manifest = json.loads(manifest_file.read_text())
    except (OSError, ValueError):
        return "pure", "not compiled (`make compile` or `python -m emu.compile` compiles)"
    if manifest.get("python") != sys.implementation.cache_tag:
        return (
            "pure",
            f"compiled for {manifest.get('python')}, running {sys.implementation.cache_tag}",
        )
    recorded: dict[str, tuple[int, str]] = manifest.get("sources", {})
    current = sources()
    if sorted(recorded) != sorted(str(p.relative_to(ROOT)) for p in current):
        return "stale", "the list of compiled modules changed"
    for path in current:
        rel = str(path.relative_to(ROOT))
        mtime_ns, recorded_digest = recorded[rel]
        try:
            st = path.stat()
        except OSError:
            return "stale", f"{rel} is gone"
        if st.st_mtime_ns != mtime_ns and digest(path) != recorded_digest:
            return "stale", f"{rel} changed"
        if not built_module(path).exists():
            return "stale", f"{rel} has no compiled module"
    return "compiled", f"{len(current)} modules compiled with mypyc"


def describe() -> str:
    """One line for `emu --version` and the benchmark figures."""
    kind, detail = status()
    if kind == "compiled":
        return f"compiled ({detail})"
    if kind == "stale":
        return f"pure Python (compiled build is stale: {detail})"
    return f"pure Python ({detail})"


# --- loading ----------------------------------------------------------------------------------


class FromSource(importlib.abc.MetaPathFinder):
    """Finds the listed modules' `.py` files ahead of their compiled files."""

    def __init__(self, files: dict[str, Path]) -> None:
        self.files = files

    def find_spec(
        self, fullname: str, path: object = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        file = self.files.get(fullname)
        if file is None:
            return None
        return importlib.util.spec_from_file_location(fullname, file)


_active: str | None = None


def activate() -> str:
    """Decide, once per process, which form the listed modules load from."""
    global _active
    if _active is not None:
        return _active
    kind, detail = status()
    if kind != "compiled":
        files = {module_name(p): p for p in sources()}
        sys.meta_path.insert(0, FromSource(files))
        if kind == "stale":
            print(
                f"emu: running pure Python, the compiled build is stale ({detail}); "
                "`make compile` or `python -m emu.compile` rebuilds it",
                file=sys.stderr,
            )
    _active = kind
    return kind


# --- the hint to compile ----------------------------------------------------------------------

COMPILE_HINT = (
    "emu: this replay runs as pure Python (emu's hot modules are not compiled); "
    "`make compile` (or `python -m emu.compile`: about 5 minutes on 2 cores, once, "
    "needs mypy and a C compiler) makes replays like it about twice as fast"
)
_hinted = False


class CompileHint:
    """An observer of a replay (called every simulated second) that writes
    `COMPILE_HINT` to `stream` once the replay has taken `after_s` wall
    seconds, at most once per process: short replays, the common first
    ones, stay quiet, and a sweep of many says it once."""

    def __init__(self, after_s: float = 15.0, stream: IO[str] | None = None) -> None:
        self.due = time.monotonic() + after_s
        self.stream = stream

    @classmethod
    def wanted(cls) -> CompileHint | None:
        """A hint when this process runs pure Python for want of a build
        (not when EMU_PURE_PYTHON asked for it, nor when the build is stale:
        `activate` said so already)."""
        if _hinted or activate() != "pure" or pure_python_asked():
            return None
        return cls()

    def tick(self, rm: Any) -> None:
        global _hinted
        if _hinted or time.monotonic() < self.due:
            return
        _hinted = True
        print(COMPILE_HINT, file=self.stream if self.stream is not None else sys.stderr)

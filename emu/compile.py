"""`python -m emu.compile`: compile emu's hot modules with mypyc, in place.

`make compile` runs it (and so `make install`, `make bench` and `make
fidelity`, which use the compiled form); it compiles only when a source
changed since the last build.
Which modules, how `import emu` picks the compiled or the source form, and
why compiling at all: emu/native.py. A failed build removes what it made
and exits 1: emu then runs as pure Python, slower, with the same outputs.
"""

from __future__ import annotations

import argparse
import importlib.machinery
import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from emu.native import (
    GROUP,
    MANIFEST,
    PACKAGE,
    ROOT,
    build_state,
    digest,
    sources,
)

LOG = ROOT / "build" / "native" / "build.log"


def _remove_built() -> None:
    """Remove every compiled module and the manifest (a half build must not
    be mistaken for a whole one)."""
    for path in sources():
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path.with_name(path.stem + suffix).unlink(missing_ok=True)
    for lib in PACKAGE.glob(GROUP.rsplit(".", 1)[1] + "__mypyc*"):
        lib.unlink()
    MANIFEST.unlink(missing_ok=True)


def build(jobs: int = 2, force: bool = False, opt_level: str = "3") -> int:
    """Compile the listed modules in place; 0 on success or when up to date."""
    if not force and build_state()[0] == "compiled":
        print(f"emu.compile: up to date ({build_state()[1]})")
        return 0
    try:
        from mypyc.build import mypycify
        from setuptools import setup  # type: ignore[import-untyped]
    except ImportError as exc:  # mypy (which carries mypyc) is a test extra
        print(f"emu.compile: cannot compile, {exc}; emu runs as pure Python", file=sys.stderr)
        return 1
    _remove_built()
    files = sources()
    snapshot = {str(p.relative_to(ROOT)): [p.stat().st_mtime_ns, digest(p)] for p in files}
    print(f"emu.compile: compiling {len(files)} modules with mypyc (a few minutes; log in {LOG})")
    here = Path.cwd()
    os.chdir(ROOT)
    LOG.parent.mkdir(parents=True, exist_ok=True)
    try:
        with _output_to(LOG):
            _compile(mypycify, setup, files, jobs, opt_level)
    except (SystemExit, Exception) as exc:  # a compiler error, or mypy's exit on a type error
        _remove_built()
        tail = LOG.read_text(errors="replace").splitlines()[-25:]
        print("\n".join(tail), file=sys.stderr)
        print(f"emu.compile: compiling failed ({exc}); emu runs as pure Python", file=sys.stderr)
        return 1
    finally:
        os.chdir(here)
    MANIFEST.write_text(
        json.dumps({"python": sys.implementation.cache_tag, "sources": snapshot}, indent=1) + "\n"
    )
    print(f"emu.compile: {build_state()[1]}")
    return 0


@contextmanager
def _output_to(path: Path) -> Iterator[None]:
    """This process's stdout and stderr, and its children's (the C
    compiler), into `path` for the duration."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with path.open("wb") as log:
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)
        try:
            yield
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])


def _compile(mypycify: Any, setup: Any, files: list[Path], jobs: int, opt_level: str) -> None:
    """mypyc writes C for `files` (one shared library, GROUP), setuptools
    compiles it into extension modules beside the sources."""
    extensions = mypycify(
        # mypy's note that an override section of pyproject.toml matched no
        # module is, to mypyc, an error that stops the build; whether mypy
        # notes it varies from run to run (seen with mypy 2.4), and `make
        # lint` checks the configuration with mypy itself.
        ["--no-warn-unused-configs", *(str(p.relative_to(ROOT)) for p in files)],
        opt_level=opt_level,
        group_name=GROUP,
        target_dir="build/native",
    )
    setup(
        name="emu-native",
        ext_modules=extensions,
        script_args=[
            "--quiet",
            "build_ext",
            "--inplace",
            f"--parallel={jobs}",
            "--build-temp=build/native/temp",
        ],
    )


def main(argv: list[str] | None = None) -> int:

    parser = argparse.ArgumentParser(
        prog="python -m emu.compile",
        description="Compile emu's hot modules with mypyc (when a source changed since the build).",
    )
    parser.add_argument("--force", action="store_true", help="compile even when up to date")
    parser.add_argument("-j", "--jobs", type=int, default=2, help="C compiler jobs (default: 2)")
    parser.add_argument("--opt-level", default="3", help="C optimization level (default: 3)")
    parser.add_argument(
        "--clean", action="store_true", help="remove the compiled modules: emu runs as pure Python"
    )
    args = parser.parse_args(argv)
    if args.clean:
        _remove_built()
        print("emu.compile: removed the compiled modules")
        return 0
    return build(args.jobs, args.force, args.opt_level)


if __name__ == "__main__":
    sys.exit(main())

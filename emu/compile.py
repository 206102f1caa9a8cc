"""`python -m emu.compile`: compile emu's hot modules with mypyc, in place.

`make install` runs it, so `make run`, `make test` and `make bench` use the
compiled form; it compiles only when a source changed since the last build.
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
from pathlib import Path

from emu.native import (
    GROUP,
    MANIFEST,
    PACKAGE,
    ROOT,
    build_state,
    digest,
    sources,
)


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
    here = Path.cwd()
    os.chdir(ROOT)
    try:
        extensions = mypycify(
            [str(p.relative_to(ROOT)) for p in files],
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
    except (SystemExit, Exception) as exc:  # a compiler error, or mypy's exit on a type error
        _remove_built()
        print(f"emu.compile: compiling failed ({exc}); emu runs as pure Python", file=sys.stderr)
        return 1
    finally:
        os.chdir(here)
    MANIFEST.write_text(
        json.dumps({"python": sys.implementation.cache_tag, "sources": snapshot}, indent=1) + "\n"
    )
    print(f"emu.compile: {build_state()[1]}")
    return 0


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

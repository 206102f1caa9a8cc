"""The `emu` command's `main` run in the test's own process, answering as
`subprocess.run` would (exit code, stdout, stderr): the same code path as
the command without an interpreter's start per run. A run that needs a
process of its own (a JVM, which a process holds one of with one classpath;
signals; the installed entry point) still starts one."""

from __future__ import annotations

import io
import subprocess
from contextlib import redirect_stderr, redirect_stdout

from emu.cli import main


def run_here(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """`emu ARGV` in this process: its exit code, stdout and stderr."""
    stdout, stderr = io.StringIO(), io.StringIO()
    with redirect_stdout(stdout), redirect_stderr(stderr):
        try:
            code = main(argv)
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 1
    return subprocess.CompletedProcess(argv, code, stdout.getvalue(), stderr.getvalue())

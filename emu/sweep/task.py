"""Running one point's task, wherever it runs: a local thread or a Dask
worker on another host. The task's inputs are written into a fresh
temporary directory, `python -m emu ARGV` runs there in a process of its own
(a fresh process per point, as Hadoop's scheduler needs a JVM of its own),
and the files of its `out/` come back as bytes with the exit code, so
nothing depends on a file system shared with the caller.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

OUT = "out"


def run_task(
    argv: list[str],
    inputs: dict[str, bytes],
    timeout_s: float,
    stop: threading.Event | None = None,
) -> dict[str, Any]:
    """Run `emu ARGV` beside `inputs`; returns exit_code, wall_s, host,
    worker (the Dask worker's address, or "local"), error (the end of stderr
    when the exit code is not 0) and outputs (relative path -> bytes of every
    file under out/). Setting `stop` ends the process early (the local runner
    sets it when the sweep is interrupted)."""
    with tempfile.TemporaryDirectory(prefix="emu-sweep-") as tmp:
        work = Path(tmp)
        for name, data in inputs.items():
            dest = work / name
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(data)
        env = {k: v for k, v in os.environ.items() if k != "HADOOP_CONF_DIR"}
        env["PYTHONUNBUFFERED"] = "1"
        start = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "emu", *argv],
            cwd=work,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        code, error = _wait(proc, start + timeout_s, timeout_s, stop)
        outputs = {}
        out = work / OUT
        if out.is_dir():
            for f in sorted(out.rglob("*")):
                if f.is_file():
                    outputs[f.relative_to(out).as_posix()] = f.read_bytes()
        return {
            "exit_code": code,
            "wall_s": round(time.perf_counter() - start, 3),
            "host": socket.gethostname(),
            "worker": _worker(),
            "error": error,
            "outputs": outputs,
        }


def _wait(
    proc: subprocess.Popen[str], deadline: float, timeout_s: float, stop: threading.Event | None
) -> tuple[int | None, str]:
    """The exit code and the end of stderr; the process is killed at the
    deadline or when `stop` is set."""
    while True:
        try:
            _, err = proc.communicate(timeout=0.25)
        except subprocess.TimeoutExpired:
            late = time.perf_counter() > deadline
            if late or (stop is not None and stop.is_set()):
                proc.kill()
                proc.communicate()
                return None, f"timed out after {timeout_s:g} s" if late else "stopped"
            continue
        return proc.returncode, "" if proc.returncode == 0 else _tail(err)


def _worker() -> str:
    dask = sys.modules.get("distributed")  # imported only where a Dask worker runs this
    if dask is not None:
        try:
            return str(dask.get_worker().address)
        except ValueError:
            pass
    return "local"


def _tail(text: str, lines: int = 8) -> str:
    kept = [line for line in text.strip().splitlines() if "compiled build is stale" not in line]
    return "\n".join(kept[-lines:])

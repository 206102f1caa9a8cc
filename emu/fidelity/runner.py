"""Replay each fidelity case twice, with emu's scheduler and with Hadoop's.

Each replay is `emu sls` in a process of its own (Hadoop's scheduler runs in a
JVM that lives as long as its process, and a fresh process starts from
Hadoop's static state as a fresh ResourceManager does), with
`--container-log` so the decisions can be compared one by one. Up to `jobs`
replays run at once.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from emu.fidelity.suite import Case

IMPLS = ("emu", "hadoop")
_WALL = re.compile(r"wall ([0-9.]+) s;")


@dataclass(frozen=True)
class Replay:
    """One `emu sls` run of a case."""

    case: str
    impl: str
    out: Path
    exit_code: int
    wall_s: float
    """The simulation's own wall time as `emu sls` reports it (without
    process and JVM start), or the process's when it reported none."""
    error: str = ""
    """The end of stderr when the run failed."""

    @property
    def ok(self) -> bool:
        """The replay ran to its end: exit 0, or exit 1 because a job failed
        or was rejected (a case may be about that), with its outputs written;
        not a scheduler failure (failure.json) or bad input (exit 2)."""
        return (
            self.exit_code in (0, 1)
            and (self.out / "jobruntime.csv").exists()
            and not (self.out / "failure.json").exists()
        )


def replay(case: Case, impl: str, out: Path, timeout_s: float = 1800) -> Replay:
    """Run `case` (inputs materialized) with one implementation into `out`."""
    cmd = [
        sys.executable, "-m", "emu", "sls", *case.sls_args(),
        "--output-dir", str(out), "--container-log", "--progress", "never",
        "--scheduler-impl", impl,
    ]  # fmt: skip
    shutil.rmtree(out, ignore_errors=True)  # no earlier run's files taken for this one's
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, env=env)
    except subprocess.TimeoutExpired:
        return Replay(case.name, impl, out, -1, timeout_s, f"timed out after {timeout_s:.0f} s")
    elapsed = time.perf_counter() - start
    m = _WALL.search(proc.stdout)
    wall = float(m.group(1)) if m else elapsed
    error = "" if proc.returncode == 0 else _tail(proc.stderr + proc.stdout)
    return Replay(case.name, impl, out, proc.returncode, wall, error)


def _tail(text: str, lines: int = 6) -> str:
    kept = [line for line in text.strip().splitlines() if "compiled build is stale" not in line]
    return "\n".join(kept[-lines:])


def run_cases(
    cases: list[Case], workdir: Path, jobs: int = 2, impls: tuple[str, ...] = IMPLS
) -> dict[str, dict[str, Replay]]:
    """Every case with every implementation, `jobs` at a time. Results by
    case name, then implementation; outputs in `workdir/<case>/<impl>/`."""
    ready = [c.materialize(workdir / c.name) for c in cases]
    tasks = [(c, impl) for c in ready for impl in impls]
    results: dict[str, dict[str, Replay]] = {c.name: {} for c in ready}
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {
            pool.submit(replay, c, impl, workdir / c.name / impl): (c, impl) for c, impl in tasks
        }
        for fut, (c, impl) in futures.items():
            r = fut.result()
            results[c.name][impl] = r
            status = "ok" if r.ok else f"FAILED (exit {r.exit_code})"
            print(f"fidelity: {c.name} [{impl}] {status}, {r.wall_s:.1f} s", file=sys.stderr)
    return results

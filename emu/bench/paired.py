"""Paired runs: one figure on two builds at once, one core each, in CPU seconds.

Why: this machine's speed drifts up to 3x within a day, so a ratio to wall
time measured today says little against one measured yesterday. Whether a
build is faster than another is decided by running the same figure on both
at the same time, each pinned to a core of its own (the same machine phase
for both), and comparing the user CPU seconds each child process spent; the
cores are swapped from one pair to the next.

The other build is a commit of this repository (`--vs REV`): exported with
`git archive` under the work directory and compiled there once (mypyc, as
`make compile` does), then run with the same interpreter, its own sources
first on the path.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
"""This build's checkout (the directory holding `emu/`)."""


@dataclass
class Pairing:
    """The CPU seconds of each build over every pair of one figure."""

    base: list[float]
    this: list[float]

    @property
    def less_cpu(self) -> float:
        """How many times less CPU this build took than the base (> 1: faster)."""
        return sum(self.base) / sum(self.this) if sum(self.this) else 0.0

    def describe(self, rev: str) -> str:
        pairs = ", ".join(f"{b:.2f}/{t:.2f}" for b, t in zip(self.base, self.this, strict=True))
        return (
            f"paired against {rev} (user CPU s, base/this, one core each, started together): "
            f"{pairs}; {sum(self.base):.2f} vs {sum(self.this):.2f}: {self.less_cpu:.2f}x less CPU"
        )


def prepare_base(rev: str, work: Path) -> Path:
    """The commit `rev` of this repository exported under `work` and
    compiled (as `make compile`); reused when already there. Raises
    RuntimeError with git's or the compiler's message when it cannot."""
    resolved = _git("rev-parse", "--verify", f"{rev}^{{commit}}").strip()
    tree = work / f"base-{resolved[:12]}"
    if not tree.is_dir():
        # Extracted beside it and renamed once whole: a tree that exists is complete.
        partial = work / f"{tree.name}.partial"
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
        archive = _git_bytes("archive", resolved)
        subprocess.run(["tar", "-x", "-C", str(partial)], input=archive, check=True)
        partial.rename(tree)
    if not os.environ.get("EMU_PURE_PYTHON"):
        print(
            f"bench: the base build {rev} in {tree}, compiled unless it is already "
            "(a few minutes the first time)",
            flush=True,
        )
        done = subprocess.run(
            [sys.executable, "-m", "emu.compile"],
            cwd=tree,
            env=_env(tree),
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise RuntimeError(f"compiling {rev} in {tree}: {tail}")
    return tree


def _git_bytes(*args: str) -> bytes:
    """`git args` in this checkout: its output, or RuntimeError with git's message."""
    done = subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {done.stderr.decode().strip()}")
    return done.stdout


def _git(*args: str) -> str:
    """`_git_bytes` as text."""
    return _git_bytes(*args).decode()


def _env(tree: Path) -> dict[str, str]:
    """The environment for a child of the build in `tree`: its sources
    first on the path (before the installed copy of emu)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tree), env.get("PYTHONPATH", "")]))
    return env


REPLAY = """
import json, sys
from pathlib import Path
from emu.bench.figures import run_trace
from emu.hadoop import bridge
for spec in json.loads(sys.argv[1]):
    r = run_trace(
        Path(spec["inputs"]), spec["scheduler"], impl=spec["impl"], properties=spec["properties"]
    )
    print(json.dumps({"jobs": r.jobs, "finished": r.finished, "simulated_s": r.simulated_s}))
sys.stdout.flush()
if bridge.jvm_started():
    bridge.exit_process(0)
"""
"""A paired child: `emu.bench.figures.run_trace` (the same signature in
every build since the start of paired runs) on each replay given, in one
process. Both builds replay the very inputs this build generated, so a
figure whose definition changed since the base still compares like with
like."""


@dataclass
class Replay:
    """One replay of a figure: its inputs directory and how it is run."""

    inputs: Path
    scheduler: str
    impl: str = "emu"
    properties: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        return {
            "inputs": str(self.inputs),
            "scheduler": self.scheduler,
            "impl": self.impl,
            "properties": self.properties,
        }


def _spawn(
    tree: Path, replays: Sequence[Replay], core: int | None, out: Path
) -> subprocess.Popen[bytes]:
    """Start the paired child of the build in `tree` on `replays`, pinned
    to `core` (None: not pinned), its stdout to `out`."""

    def pin() -> None:
        if core is not None:
            os.sched_setaffinity(0, {core})

    spec = json.dumps([r.to_json() for r in replays])
    with out.open("wb") as stdout, out.with_suffix(".err").open("wb") as stderr:
        return subprocess.Popen(
            [sys.executable, "-c", REPLAY, spec],
            cwd=tree,
            env=_env(tree),
            stdout=stdout,
            stderr=stderr,
            preexec_fn=pin,
        )


def _reap(proc: subprocess.Popen[bytes], out: Path) -> tuple[float, str]:
    """Wait for `proc`: its user CPU seconds (wait4's rusage: this child's
    own, its threads included) and why it failed ("" when every replay
    ran and finished every job)."""
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        err = out.with_suffix(".err").read_text(errors="replace").strip().splitlines()
        return usage.ru_utime, (err or [f"exit {proc.returncode}"])[-1]
    for line in out.read_text().splitlines():
        r = json.loads(line)
        if r["finished"] != r["jobs"]:
            return usage.ru_utime, f"{r['finished']} of {r['jobs']} jobs finished"
    return usage.ru_utime, ""


def _mirrored(replays: Sequence[Replay], where: Path) -> list[Replay]:
    """`replays` on inputs directories of links under `where` to the
    originals' files: the two builds read the same inputs and write their
    outputs (`inputs/out`) apart."""
    out = []
    for i, r in enumerate(replays):
        mirror = where / f"{i}-{r.inputs.name}"
        if not mirror.is_dir():
            mirror.mkdir(parents=True)
            for entry in r.inputs.iterdir():
                if entry.name != "out":
                    (mirror / entry.name).symlink_to(entry.resolve())
        out.append(Replay(mirror, r.scheduler, r.impl, r.properties))
    return out


def run_pairs(base: Path, replays: Sequence[Replay], pairs: int, out_dir: Path) -> Pairing:
    """`pairs` paired runs of `replays`: this build and the base started
    together on cores 0 and 1, swapped each pair. Raises RuntimeError if
    either side fails."""
    cores = sorted(os.sched_getaffinity(0))
    first, second = (cores[0], cores[1]) if len(cores) > 1 else (None, None)
    out_dir.mkdir(parents=True, exist_ok=True)
    pairing = Pairing([], [])
    for k in range(pairs):
        this_core, base_core = (first, second) if k % 2 == 0 else (second, first)
        this_out, base_out = out_dir / f"this-{k}.jsonl", out_dir / f"base-{k}.jsonl"
        this_proc = _spawn(REPO, _mirrored(replays, out_dir / "this"), this_core, this_out)
        base_proc = _spawn(base, _mirrored(replays, out_dir / "base"), base_core, base_out)
        this_cpu, this_error = _reap(this_proc, this_out)
        base_cpu, base_error = _reap(base_proc, base_out)
        if this_error or base_error:
            side = "this build" if this_error else f"the base ({base})"
            raise RuntimeError(f"paired run failed in {side}: {this_error or base_error}")
        pairing.this.append(this_cpu)
        pairing.base.append(base_cpu)
    return pairing

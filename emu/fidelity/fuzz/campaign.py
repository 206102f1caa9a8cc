"""Replaying generated cases under both implementations, in worker processes.

Each worker is a process of its own that replays case after case with the
`emu sls` command's `main` in-process: Hadoop's scheduler runs in a JVM that
a process starts once, so a case costs its replays, not a JVM's start (the
driver resets Hadoop's static queue metrics for every run, as a fresh
ResourceManager would find them). Every case is replayed four times: emu's
port and Hadoop's scheduler, each twice, so a difference between the two
runs of one implementation (the oracle's own noise) is told apart from a
divergence. The worker's stdout and stderr (the JVM's too) go to a log file
in the campaign directory, never to the terminal.

A worker that takes longer than the case timeout is killed and replaced,
and the case counted as timed out: a replay that loops must not hold the
campaign.
"""

from __future__ import annotations

import contextlib
import io
import json
import multiprocessing as mp
import os
import shutil
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from multiprocessing.connection import Connection, wait
from pathlib import Path

from emu.fidelity import compare
from emu.fidelity.fuzz.generate import case_name, generate, kind_of
from emu.fidelity.fuzz.spec import FuzzCase

IMPLS = ("emu", "hadoop")


@dataclass
class Run:
    """One replay of a case by one implementation."""

    impl: str
    exit_code: int
    out: str
    error: str = ""
    stalled: bool = False

    @property
    def ok(self) -> bool:
        """Ran to its end (exit 0, or 1 for a job that failed or a stall),
        with its outputs written; not a crash, a scheduler failure or bad input."""
        out = Path(self.out)
        return (
            self.exit_code in (0, 1)
            and (out / "jobruntime.csv").exists()
            and (out / "containers.csv").exists()
            and not (out / "failure.json").exists()
        )


@dataclass
class Outcome:
    """What one case gave: the verdict the campaign's table counts."""

    name: str
    kind: str
    verdict: str
    """identical, diverged, emu failed, hadoop failed, both failed, timeout."""
    what: str = ""
    """The first divergence's kind (see `divergence_kind`), or the failure."""
    detail: str = ""
    """The first differing decision of each implementation, or the error's tail."""
    deterministic: dict[str, bool] = field(default_factory=dict)
    """Per implementation: its two replays gave the same decisions."""
    wall_s: float = 0.0
    reproducer: str = ""
    """Where the shrunk case was written, when it was shrunk."""
    shrunk_size: tuple[int, ...] = ()
    features: list[str] = field(default_factory=list)
    """The mechanisms the case exercises (`FuzzCase.features`)."""

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def replay(case: FuzzCase, impl: str, inputs: Path, out: Path) -> Run:
    """`emu sls` on the case's files (written under `inputs`) in this process."""
    from emu.cli import main

    fidelity_case = case.write(inputs)
    argv = [
        "sls", *fidelity_case.sls_args(), "--output-dir", str(out), "--container-log",
        "--progress", "never", "--scheduler-impl", impl,
    ]  # fmt: skip
    shutil.rmtree(out, ignore_errors=True)
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            code = main(argv)
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 1
        except BaseException:
            code = 99
            traceback.print_exc()
    text = stderr.getvalue() + stdout.getvalue()
    tail = "\n".join(text.strip().splitlines()[-4:])
    stalled = "cannot make progress" in text
    return Run(impl, code, str(out), "" if code == 0 else tail, stalled)


def by_millisecond(log: bytes) -> list[list[bytes]]:
    """containers.csv's lines grouped by time, each group sorted: the order
    one instant's decisions are written in is not a decision (Hadoop's
    preemption selectors kill in an order that varies within one round)."""
    groups: list[list[bytes]] = []
    last = b""
    for line in log.splitlines():
        at = line.split(b",", 1)[0]
        if not groups or at != last:
            groups.append([])
            last = at
        groups[-1].append(line)
    return [sorted(g) for g in groups]


def canonical(path: Path) -> list[list[bytes]]:
    """A containers.csv file's decisions (its header left out), `by_millisecond`."""
    return by_millisecond(path.read_bytes().split(b"\n", 1)[-1])


def divergence_kind(d: compare.Divergence) -> str:
    """A short name for the first divergence, for the per-class table."""
    e, h = d.emu, d.hadoop
    if e is None or h is None:
        only = e or h
        assert only is not None
        who = "emu" if e is not None else "hadoop"
        return f"only {who} {'AM ' if only.am else ''}{only.event}"
    am = "AM " if e.am or h.am else ""
    if e.event != h.event:
        return f"emu {e.event} / hadoop {h.event}"
    if e.app != h.app:
        return f"{am}{e.event} for another app"
    if e.node != h.node:
        return f"{am}{e.event} on another node"
    return f"{am}{e.event} of another container"


def describe(d: compare.Divergence) -> str:
    def one(x: compare.Decision | None) -> str:
        return "nothing" if x is None else x.describe()

    return f"at {d.time_ms / 1000:.3f} s: emu {one(d.emu)}; hadoop {one(d.hadoop)}"


def judge(case: FuzzCase, runs: dict[str, list[Run]]) -> Outcome:
    """The verdict on one case from its replays (the first of each impl is compared)."""
    first = {impl: rs[0] for impl, rs in runs.items()}
    failed = [impl for impl in IMPLS if not first[impl].ok]
    if failed:
        verdict = "both failed" if len(failed) == 2 else f"{failed[0]} failed"
        codes = "; ".join(f"{i} exit {first[i].exit_code}: {first[i].error}" for i in failed)
        what = _failure_kind(first, failed)
        return Outcome(case.name, case.kind, verdict, what, codes)
    deterministic = {
        impl: len(rs) < 2
        or (
            rs[1].ok
            and canonical(Path(rs[0].out) / "containers.csv")
            == canonical(Path(rs[1].out) / "containers.csv")
        )
        for impl, rs in runs.items()
    }
    got = compare.compare_runs(Path(first["emu"].out), Path(first["hadoop"].out))
    if got.divergence is None and got.identical_jobruntime:
        return Outcome(case.name, case.kind, "identical", deterministic=deterministic)
    if got.divergence is None:
        what, detail = "job times only", f"worst job {got.jobs.worst}"
    else:
        what, detail = divergence_kind(got.divergence), describe(got.divergence)
    return Outcome(case.name, case.kind, "diverged", what, detail, deterministic)


def _failure_kind(first: dict[str, Run], failed: list[str]) -> str:
    codes = {first[i].exit_code for i in failed}
    if codes == {2}:
        return "refused input"
    if 99 in codes:
        return "crashed"
    if any((Path(first[i].out) / "failure.json").exists() for i in failed):
        return "scheduler failed"
    return f"exit {'/'.join(str(c) for c in sorted(codes))}"


def run_case(case: FuzzCase, where: Path, repeat: bool = True) -> Outcome:
    """Replay `case` under both implementations (twice each with `repeat`)
    in `where`: its verdict."""
    start = time.perf_counter()
    inputs = where / "inputs"
    (where).mkdir(parents=True, exist_ok=True)
    (where / "case.json").write_text(case.to_json(), encoding="utf-8")
    runs: dict[str, list[Run]] = {impl: [] for impl in IMPLS}
    for k in range(2 if repeat else 1):
        for impl in IMPLS:
            runs[impl].append(replay(case, impl, inputs, where / f"{impl}-{k + 1}"))
    outcome = judge(case, runs)
    outcome.wall_s = time.perf_counter() - start
    outcome.features = case.features()
    return outcome


# -- workers -----------------------------------------------------------------------


@dataclass(frozen=True)
class Task:
    """One case for a worker: generated from (seed, number), or given."""

    seed: int
    number: int
    kind: str | None = None
    case_json: str = ""
    shrink_budget: int = 0
    keep: bool = False
    """Keep the outputs of a case that agreed (the default removes them)."""
    repeat: bool = True
    """Replay each implementation twice, to check each is deterministic."""
    hadoop_version: str = ""
    """The Hadoop release the generated case follows (default 3.4.2)."""
    multi_node: bool = False
    """Capacity cases draw multi-node placement settings."""


def _name(task: Task) -> str:
    if task.case_json:
        return str(json.loads(task.case_json)["name"])
    return case_name(task.seed, task.number)


def _kind(task: Task) -> str:
    if task.case_json:
        return str(json.loads(task.case_json)["kind"])
    return task.kind or kind_of(task.seed, task.number)


def _case_of(task: Task) -> FuzzCase:
    if task.case_json:
        return FuzzCase.from_json(task.case_json)
    return generate(task.seed, task.number, task.kind, task.hadoop_version, task.multi_node)


def work(task: Task, root: Path) -> Outcome:
    """A task done in this process: replay, judge, shrink a divergence."""
    case = _case_of(task)
    where = root / "cases" / case.name
    outcome = run_case(case, where, task.repeat)
    (where / "outcome.json").write_text(json.dumps(outcome.to_dict(), indent=1), encoding="utf-8")
    if outcome.verdict == "identical" and all(outcome.deterministic.values()) and not task.keep:
        shutil.rmtree(where, ignore_errors=True)
        return outcome
    if outcome.verdict == "diverged" and task.shrink_budget > 0:
        from emu.fidelity.fuzz.shrink import shrink, still_diverges

        check = still_diverges(outcome.what, root / "shrinking" / case.name)
        small = shrink(case, check, task.shrink_budget)
        repro = root / "reproducers" / case.name
        shutil.rmtree(repro, ignore_errors=True)
        small.write(repro)
        (repro / "case.json").write_text(small.to_json(), encoding="utf-8")
        shutil.rmtree(root / "shrinking" / case.name, ignore_errors=True)
        outcome.reproducer = str(repro)
        outcome.shrunk_size = small.size()
        (where / "outcome.json").write_text(
            json.dumps(outcome.to_dict(), indent=1), encoding="utf-8"
        )
    return outcome


def _orphan_watch(parent: int) -> None:
    """End this worker when the campaign's process is gone (killed, or its
    terminal closed), even in the middle of a replay that loops."""
    while os.getppid() == parent:
        time.sleep(2)
    os._exit(1)


def _worker_main(conn: Connection, root: str, log: str, parent: int) -> None:
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    threading.Thread(target=_orphan_watch, args=(parent,), daemon=True).start()
    while True:
        task = conn.recv()
        if task is None:
            return
        try:
            outcome = work(task, Path(root))
        except Exception as e:
            traceback.print_exc()
            outcome = Outcome(_name(task), _kind(task), "crashed", "crashed",
                              f"{type(e).__name__}: {e}")  # fmt: skip
        conn.send(outcome)


@dataclass
class _Worker:
    process: mp.process.BaseProcess
    conn: Connection
    task: Task | None = None
    started: float = 0.0


def run_tasks(
    tasks: list[Task],
    root: Path,
    jobs: int,
    timeout_s: float,
    on_done: Callable[[Task, Outcome], None],
) -> Iterator[Outcome]:
    """Every task, `jobs` worker processes at a time; outcomes as they come."""
    ctx = mp.get_context("spawn")
    root.mkdir(parents=True, exist_ok=True)
    pending = list(reversed(tasks))
    workers: list[_Worker] = []
    spawned = 0

    def spawn() -> _Worker:
        nonlocal spawned
        spawned += 1
        parent, child = ctx.Pipe()
        log = root / f"worker-{spawned}.log"
        p = ctx.Process(
            target=_worker_main, args=(child, str(root), str(log), os.getpid()), daemon=True
        )
        p.start()
        child.close()
        return _Worker(p, parent)

    def feed(w: _Worker) -> None:
        if pending:
            w.task = pending.pop()
            w.started = time.monotonic()
            w.conn.send(w.task)
        else:
            w.task = None

    try:
        for _ in range(max(1, min(jobs, len(tasks)))):
            w = spawn()
            workers.append(w)
            feed(w)
        while any(w.task is not None for w in workers):
            busy = [w for w in workers if w.task is not None]
            ready = wait([w.conn for w in busy], timeout=1.0)
            now = time.monotonic()
            for w in busy:
                task = w.task
                assert task is not None
                if w.conn in ready:
                    try:
                        outcome = w.conn.recv()
                    except (EOFError, OSError):
                        died = "the worker process died"
                        outcome = Outcome(_name(task), _kind(task), "crashed", "crashed", died)
                        workers[workers.index(w)] = w = _replace(w, spawn)
                elif now - w.started > timeout_s:
                    outcome = Outcome(_name(task), _kind(task),
                                      "timeout", "timeout",
                                      f"no verdict after {timeout_s:.0f} wall s")  # fmt: skip
                    workers[workers.index(w)] = w = _replace(w, spawn)
                else:
                    continue
                on_done(task, outcome)
                yield outcome
                feed(w)
    finally:
        for w in workers:
            with contextlib.suppress(OSError, BrokenPipeError):
                w.conn.send(None)
        for w in workers:
            w.process.join(timeout=10)
            if w.process.is_alive():
                w.process.kill()


def _replace(w: _Worker, spawn: Callable[[], _Worker]) -> _Worker:
    w.process.kill()
    w.process.join()
    return spawn()

"""Running a sweep: the points not finished yet, locally or on Dask.

The sweep directory holds `sweep.json` (the spec's name, objective, target
and the grid), `spec.toml` (a copy of the spec), `points/<id>/out/` (each
point's outputs) and `points/<id>/result.json` (its parameters, how it
ended and its figures), then `results.csv`. A point's result.json is written
last, once its outputs are in place, and only by this process, so a point
is counted once however often a worker ran it; a rerun skips every point
whose result.json says it finished with the same task (the same arguments
and input bytes), and runs again those that errored or changed.

Locally, up to `jobs` points run at once, each `emu` in its own process.
With `dask_address`, the points are submitted to that Dask scheduler; Dask
reruns a point whose worker died on another worker.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import asdict
from pathlib import Path
from typing import IO, Any

from emu.errors import InputError
from emu.metrics.progress import BatchProgress
from emu.sweep import figures, table
from emu.sweep.points import Task, expand
from emu.sweep.spec import Spec
from emu.sweep.task import run_task


def task_hash(task: Task) -> str:
    h = hashlib.sha256(json.dumps(task.argv).encode())
    for name in sorted(task.inputs):
        h.update(name.encode() + b"\0" + hashlib.sha256(task.inputs[name]).digest())
    return h.hexdigest()[:16]


def _finished(point_dir: Path, digest: str) -> bool:
    try:
        result = json.loads((point_dir / table.RESULT).read_text())
    except (OSError, ValueError):
        return False
    return result.get("status") in table.FINISHED and result.get("task") == digest


def prepare(spec: Spec, sweep_dir: Path) -> list[Task]:
    """The grid's tasks, with the sweep directory's manifest written."""
    tasks = expand(spec)
    sweep_dir.mkdir(parents=True, exist_ok=True)
    (sweep_dir / "points").mkdir(exist_ok=True)
    shutil.copyfile(spec.path, sweep_dir / "spec.toml")
    manifest = {
        "name": spec.name,
        "spec": str(spec.path),
        "objective": spec.objective,
        "goal": spec.goal,
        "target": None
        if spec.target is None
        else asdict(spec.target) | {"description": spec.target.describe()},
        "points": [t.point.params() for t in tasks],
    }
    _write_json(sweep_dir / table.MANIFEST, manifest)
    return tasks


def run(
    spec: Spec,
    sweep_dir: Path,
    jobs: int | None = None,
    dask_address: str | None = None,
    progress: str = "auto",
    stream: IO[str] | None = None,
) -> list[dict[str, Any]]:
    """Run the sweep's unfinished points, write results.csv (and .parquet),
    and return the table's rows."""
    stream = stream if stream is not None else sys.stderr
    tasks = prepare(spec, sweep_dir)
    digests = {t.point.id: task_hash(t) for t in tasks}
    pending = [
        t for t in tasks if not _finished(sweep_dir / "points" / t.point.id, digests[t.point.id])
    ]
    bar = None
    if progress != "never":
        terminal = stream.isatty() if progress == "auto" else False
        bar = BatchProgress(
            "emu sweep", "points", len(tasks), len(tasks) - len(pending), stream, terminal
        )

    def record(task: Task, result: dict[str, Any]) -> None:
        status = _store(sweep_dir / "points" / task.point.id, task, digests[task.point.id], result)
        if bar is not None:
            bar.item_done(task.point.id, status)

    try:
        if dask_address is not None:
            _run_dask(dask_address, pending, spec.timeout_s, record)
        else:
            _run_local(pending, jobs or os.cpu_count() or 1, spec.timeout_s, record)
    finally:
        if bar is not None:
            bar.close()
    manifest = table.read_manifest(sweep_dir)
    rows = table.rows(sweep_dir, manifest)
    table.write(sweep_dir, rows)
    return rows


def _store(point_dir: Path, task: Task, digest: str, result: dict[str, Any]) -> str:
    """Put a point's outputs in place and write its result.json; its status."""
    out = point_dir / "out"
    staging = point_dir / "out.partial"
    shutil.rmtree(staging, ignore_errors=True)
    point_dir.mkdir(parents=True, exist_ok=True)
    staging.mkdir()
    for name, data in result.get("outputs", {}).items():
        dest = staging / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)
    shutil.rmtree(out, ignore_errors=True)
    staging.replace(out)
    code = result.get("exit_code")
    error = result.get("error", "")
    figs: dict[str, Any] = {}
    status = "error"
    if code in (0, 1) and (out / "summary.json").is_file():
        try:
            figs = figures.read(out)
            status = "ok" if code == 0 else "failed"
        except (OSError, ValueError, KeyError, TypeError) as e:
            error = f"unreadable outputs: {e}"
    _write_json(
        point_dir / table.RESULT,
        task.point.params()
        | {
            "status": status,
            "exit_code": code,
            "wall_s": result.get("wall_s"),
            "host": result.get("host"),
            "worker": result.get("worker"),
            "error": error,
            "task": digest,
            "argv": ["emu", *task.argv],
            "figures": figs,
        },
    )
    return status


def _write_json(path: Path, data: Any) -> None:
    tmp = path.with_name(path.name + ".partial")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    tmp.replace(path)


Record = Callable[[Task, dict[str, Any]], None]


def _failed(e: BaseException) -> dict[str, Any]:
    return {"exit_code": None, "error": f"{type(e).__name__}: {e}", "outputs": {}}


def _run_local(tasks: list[Task], jobs: int, timeout_s: float, record: Record) -> None:
    stop = threading.Event()
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        todo = iter(tasks)
        running: dict[Future[dict[str, Any]], Task] = {}
        try:
            for task in _take(todo, max(1, jobs)):
                running[pool.submit(run_task, task.argv, task.inputs, timeout_s, stop)] = task
            while running:
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for fut in done:
                    task = running.pop(fut)
                    exc = fut.exception()
                    record(task, _failed(exc) if exc is not None else fut.result())
                    for nxt in _take(todo, 1):
                        running[pool.submit(run_task, nxt.argv, nxt.inputs, timeout_s, stop)] = nxt
        except BaseException:  # interrupted: end the points under way, keep the rest
            stop.set()
            for fut in running:
                fut.cancel()
            raise


def _take(it: Iterator[Task], n: int) -> list[Task]:
    out = []
    for task in it:
        out.append(task)
        if len(out) == n:
            break
    return out


def _run_dask(address: str, tasks: list[Task], timeout_s: float, record: Record) -> None:
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise InputError(
            "--dask", address, "needs Dask's distributed scheduler: pip install 'emu[dask]'"
        ) from None
    try:
        client = Client(address, timeout="20s")
    except (OSError, TimeoutError) as e:
        raise InputError("--dask", address, f"cannot reach the Dask scheduler: {e}") from None
    try:
        futures = {
            client.submit(
                run_task,
                task.argv,
                task.inputs,
                timeout_s,
                key=f"emu-sweep-{task.point.id}-{task_hash(task)}-{time.time_ns()}",
                pure=False,
            ): task
            for task in tasks
        }
        for fut in as_completed(futures):
            task = futures[fut]
            try:
                result = fut.result()
            except Exception as e:  # e.g. KilledWorker: the point errored, the sweep goes on
                result = _failed(e)
            record(task, result)
    finally:
        client.close()

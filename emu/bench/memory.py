"""Where a bench run's memory goes (P2's target: inside 1 GiB).

Replays generated bench inputs (`emu.bench.workload`) under Fair as the
figures do, prints RSS every `--every` simulated seconds and stops at
`--stop`; with `--trace` it runs under tracemalloc and prints the largest
allocation sites (file:line) once the inputs are read and at the stop.

    python -m emu.bench.memory INPUTS --stop 60 [--every 30] [--trace] [--top 40]

RSS under `--trace` includes tracemalloc's own bookkeeping; compare traced
sizes with traced sizes and plain RSS with plain RSS. tracemalloc sees no
lines inside the compiled modules (emu/native.py): what they allocate is
charged to their nearest Python caller; `EMU_PURE_PYTHON=1` names the lines.
"""

from __future__ import annotations

import argparse
import gc
import linecache
import resource
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

from emu.bench.figures import rss_mb
from emu.clock import run_deterministically, virtual_clock
from emu.sls import SlsOptions, prepare, simulation_for


class _Stop(Exception):
    """Ends the replay at the stop time (raised from the tick)."""


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def top_sites(snapshot: tracemalloc.Snapshot, top: int) -> list[str]:
    """The `top` largest allocation sites as lines "MB blocks file:line source"."""
    ignore = [
        tracemalloc.Filter(False, tracemalloc.__file__),
        tracemalloc.Filter(False, linecache.__file__),
    ]
    stats = snapshot.filter_traces(ignore).statistics("lineno")
    total = sum(s.size for s in stats)
    lines = [f"traced {total / 2**20:.1f} MB"]
    for s in stats[:top]:
        frame = s.traceback[0]
        source = linecache.getline(frame.filename, frame.lineno).strip()[:80]
        lines.append(
            f"{s.size / 2**20:8.2f} MB {s.count:9d}  {frame.filename}:{frame.lineno}  {source}"
        )
    return lines


def run(inputs: Path, stop_s: float, every_s: float, trace: bool, top: int) -> list[str]:
    """Replay `inputs` until `stop_s` simulated seconds; the report lines."""
    out: list[str] = []
    if trace:
        tracemalloc.start(1)
    base = rss_mb()
    p = prepare(
        SlsOptions(
            tracetype="SLS",
            traces=[str(inputs / "trace.json")],
            output_dir=inputs / "out",
            nodes_file=str(inputs / "nodes.json"),
            conf_dir=str(inputs / "fair"),
        )
    )
    gc.collect()
    tasks = sum(len(j.tasks) for j in p.workload.jobs)
    out.append(
        f"inputs: {len(p.nodes)} nodes, {len(p.workload.jobs)} jobs, {tasks} tasks; "
        f"RSS {base:.0f} -> {rss_mb():.0f} MB (peak {_peak_mb():.0f})"
    )
    if trace:
        out += top_sites(tracemalloc.take_snapshot(), top)
    due = [min(every_s, stop_s)]
    started = time.perf_counter()

    def tick(rm: Any) -> None:
        now = rm.ctx.now_ms() / 1000
        if now < due[0]:
            return
        due[0] = min(due[0] + every_s, stop_s)
        running = sum(1 for a in rm.ctx.apps.values() if a.state == "RUNNING")
        out.append(
            f"sim {now:.0f} s, wall {time.perf_counter() - started:.1f} s: RSS {rss_mb():.0f} MB "
            f"(peak {_peak_mb():.0f}); {running} running apps, "
            f"{len(rm.ctx.containers)} running containers"
        )
        if now >= stop_s:
            if trace:
                gc.collect()
                out.extend(top_sites(tracemalloc.take_snapshot(), top))
            raise _Stop

    try:
        run_deterministically(simulation_for(p, on_tick=tick).run, virtual_clock())
    except BaseException as e:  # the stop arrives wrapped in trio's exception group
        if not _stopped(e):
            raise
    finally:
        if trace:
            tracemalloc.stop()
    return out


def _stopped(e: BaseException) -> bool:
    if isinstance(e, _Stop):
        return True
    if isinstance(e, BaseExceptionGroup):
        return any(_stopped(x) for x in e.exceptions)
    return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m emu.bench.memory",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("inputs", type=Path, help="a directory from emu.bench.workload")
    parser.add_argument("--stop", type=float, default=60, help="simulated s to stop at")
    parser.add_argument("--every", type=float, default=30, help="simulated s between lines")
    parser.add_argument("--trace", action="store_true", help="tracemalloc allocation sites")
    parser.add_argument("--top", type=int, default=40, help="allocation sites to print")
    args = parser.parse_args(argv)
    for line in run(args.inputs, args.stop, args.every, args.trace, args.top):
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

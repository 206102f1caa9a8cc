"""A progress line for long replays (`emu run`, `emu sls`).

A replay on the virtual clock can take minutes of wall time and prints
nothing until the end; on a terminal the user wants to know it is alive and
how far it got. `Progress.tick(rm)` is a read-only observer (the
simulation calls it every simulated second); it looks at the wall clock and,
once `first_after_s` wall seconds have passed and then every `every_s`,
writes one line to stderr:

    emu: sim 1h02m03s (41% of trace span)  apps running 12  jobs 30/74 done
    memory 63% allocated  820 sim-s/wall-s  ETA 1m12s

On a terminal the line rewrites itself (`\\r`) and is cleared when the run
ends; elsewhere (`--progress always` into a file) each report is a line of
its own. Short runs print nothing: the first line waits `first_after_s`.

It only reads the RM and the wall clock and writes to stderr, so it never
changes the run's deterministic outputs.
"""

from __future__ import annotations

import sys
import time
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from emu.rm.actor import ResourceManager
    from emu.workload import Workload

MODES = ("auto", "always", "never")


def trace_span_ms(workload: Workload) -> int:
    """The trace's own idea of how long it lasts: the latest recorded job end
    (SLS `job.end.ms`), or the latest submission when no end is recorded."""
    ends = [j.end_ms if j.end_ms is not None else j.submit_ms for j in workload.jobs]
    return max(ends, default=0)


def duration(seconds: float) -> str:
    """Compact h/m/s, e.g. 1h02m03s, 4m05s, 7s."""
    s = max(int(seconds), 0)
    h, rest = divmod(s, 3600)
    m, s = divmod(rest, 60)
    if h:
        return f"{h}h{m:02d}m{s:02d}s"
    if m:
        return f"{m}m{s:02d}s"
    return f"{s}s"


class Progress:
    """Reports a replay's progress on `stream`; see the module docstring."""

    def __init__(
        self,
        total_jobs: int,
        span_ms: int,
        stream: IO[str] | None = None,
        terminal: bool | None = None,
        first_after_s: float = 2.0,
        every_s: float = 2.0,
    ) -> None:
        self.total_jobs = total_jobs
        self.span_ms = span_ms
        self.stream = stream if stream is not None else sys.stderr
        self.terminal = self.stream.isatty() if terminal is None else terminal
        self.every_s = every_s
        self.started = time.monotonic()
        self.next_at = self.started + first_after_s
        self.last_sim_ms = 0
        self.last_wall = self.started
        self.lines = 0
        self.width = 0

    @classmethod
    def for_mode(cls, mode: str, workload: Workload) -> Progress | None:
        """The observer `--progress MODE` asks for: `auto` reports only when
        stderr is a terminal, `always` always, `never` never."""
        if mode == "never" or (mode == "auto" and not sys.stderr.isatty()):
            return None
        return cls(len(workload.jobs), trace_span_ms(workload))

    def tick(self, rm: ResourceManager) -> None:
        """Called every simulated second; reports when the wall clock says so."""
        now = time.monotonic()
        if now < self.next_at:
            return
        self.next_at = now + self.every_s
        sim_ms = rm.ctx.now_ms()
        self.report(self.line(rm, sim_ms, now))
        self.last_sim_ms, self.last_wall = sim_ms, now

    def line(self, rm: ResourceManager, sim_ms: int, now: float) -> str:
        ctx = rm.ctx
        sched = ctx.scheduler
        done = sum(ctx.final_apps.values())
        running = sum(1 for a in ctx.apps.values() if a.state == "RUNNING")
        total_mb = sched.cluster.memory
        used_pct = 100.0 * sched.used.memory / total_mb if total_mb else 0.0
        speed = (sim_ms - self.last_sim_ms) / 1000 / max(now - self.last_wall, 1e-9)
        parts = [f"emu: sim {duration(sim_ms / 1000)}"]
        if self.span_ms > 0:
            parts[0] += f" ({min(100.0 * sim_ms / self.span_ms, 999):.0f}% of trace span)"
        parts += [
            f"apps running {running}",
            f"jobs {done}/{self.total_jobs} done",
            f"memory {used_pct:.0f}% allocated",
            f"{speed:.0f} sim-s/wall-s",
        ]
        if speed > 0 and sim_ms < self.span_ms:
            parts.append(f"ETA {duration((self.span_ms - sim_ms) / 1000 / speed)}")
        return "  ".join(parts)

    def report(self, text: str) -> None:
        if self.terminal:
            pad = max(self.width - len(text), 0)
            self.stream.write("\r" + text + " " * pad)
            self.width = len(text)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()
        self.lines += 1

    def close(self) -> None:
        """Clear the rewriting line so the run's own output starts clean."""
        if self.terminal and self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()
            self.width = 0

"""A progress line for long replays (`emu run`, `emu sls`).

A replay on the virtual clock can take minutes of wall time and prints
nothing until the end; on a terminal the user wants to know it is alive and
how far it got. `Progress.tick(rm)` is a read-only observer (the
simulation calls it every simulated second); it looks at the wall clock and,
once `first_after_s` wall seconds have passed and then every `every_s`,
writes one line to stderr:

    emu: sim 1h02m03s (41% of work done)  apps running 12  jobs 30/74 done
    memory 63% allocated  820 sim-s/wall-s  ETA 1m12s

The percentage is of the trace's work (each job's tasks, MB x ms) that is
done: all of a job that ended, the containers a running job has completed
(its memory-seconds, capped at 99 % of the job's work while its AM runs),
nothing of a job not yet submitted. It never exceeds 100 %, and jobs that run past the trace's
declared end do not push it there. The ETA is the wall time the work left
takes at the rate work has been done so far in this run.

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


class BatchProgress:
    """`LABEL: [####....] 7/18 UNIT  1 error  elapsed 12s  ETA 20s` on
    stderr for a batch of runs (a sweep's points, a fuzz campaign's cases):
    rewritten in place on a terminal, one line per finished item elsewhere.
    Statuses other than "ok" are counted by name."""

    def __init__(
        self, label: str, unit: str, total: int, skipped: int, stream: IO[str], terminal: bool
    ) -> None:
        self.label, self.unit = label, unit
        self.total, self.done = total, skipped
        self.skipped = skipped
        self.other: dict[str, int] = {}
        self.stream, self.terminal = stream, terminal
        self.started = time.monotonic()
        self.width = 0

    def line(self) -> str:
        elapsed = time.monotonic() - self.started
        ran = self.done - self.skipped
        left = self.total - self.done
        filled = round(20 * self.done / self.total) if self.total else 20
        parts = [
            f"{self.label}: [{'#' * filled}{'.' * (20 - filled)}] "
            f"{self.done}/{self.total} {self.unit}"
        ]
        if self.skipped:
            parts.append(f"{self.skipped} already done")
        for status, n in self.other.items():
            parts.append(f"{n} {status}{'s' if n > 1 and status == 'error' else ''}")
        parts.append(f"elapsed {duration(elapsed)}")
        if ran and left:
            parts.append(f"ETA {duration(elapsed / ran * left)}")
        return "  ".join(parts)

    def item_done(self, item: str, status: str) -> None:
        self.done += 1
        if status != "ok":
            self.other[status] = self.other.get(status, 0) + 1
        text = self.line()
        if self.terminal:
            self.stream.write("\r" + text + " " * max(self.width - len(text), 0))
            self.width = len(text)
        else:
            self.stream.write(f"{text}  ({item}: {status})\n")
        self.stream.flush()

    def close(self) -> None:
        """End the rewritten line (once, however often it is called)."""
        if self.terminal and self.width:
            self.stream.write("\n")
            self.stream.flush()
            self.width = 0


def job_work(workload: Workload) -> dict[str, tuple[int, int]]:
    """Each job's (submission ms, work), by job id: the work is its tasks'
    memory x duration (MB x ms), at least 1 so a job without tasks still
    counts when it ends."""
    return {
        j.job_id: (j.submit_ms, max(sum(t.resource.memory * t.duration_ms for t in j.tasks), 1))
        for j in workload.jobs
    }


class Progress:
    """Reports a replay's progress on `stream`; see the module docstring."""

    def __init__(
        self,
        workload: Workload,
        stream: IO[str] | None = None,
        terminal: bool | None = None,
        first_after_s: float = 2.0,
        every_s: float = 2.0,
    ) -> None:
        self.jobs = job_work(workload)
        self.total_jobs = len(self.jobs)
        self.total_work = sum(w for _, w in self.jobs.values())
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
        return cls(workload)

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
        fraction = self.done_fraction(rm, sim_ms)
        parts = [
            f"emu: sim {duration(sim_ms / 1000)} ({int(100 * fraction)}% of work done)",
            f"apps running {running}",
            f"jobs {done}/{self.total_jobs} done",
            f"memory {used_pct:.0f}% allocated",
            f"{speed:.0f} sim-s/wall-s",
        ]
        if 0 < fraction < 1:
            parts.append(f"ETA {duration(round(self.eta_s(fraction, now)))}")
        return "  ".join(parts)

    def eta_s(self, fraction: float, now: float) -> float:
        """Wall seconds the work left takes at the rate of the run so far."""
        return (now - self.started) * (1 - fraction) / fraction

    def done_fraction(self, rm: ResourceManager, sim_ms: int) -> float:
        """The share of the trace's work done (0..1): all of a job whose app
        ended, or that was submitted over a second ago and is no longer in
        the RM (retention forgot it), the completed containers of a running
        one (capped at 99 % of its work: its AM still runs), nothing of a job
        not yet submitted."""
        if self.total_work <= 0:
            return 0.0
        by_name = {a.name: a for a in rm.ctx.apps.values()}
        done = 0
        for job_id, (submit_ms, work) in self.jobs.items():
            app = by_name.get(job_id)
            if app is None:
                if submit_ms + 1000 < sim_ms:
                    done += work
            elif app.finished_ms >= 0:
                done += work
            else:
                done += min(app.memory_seconds * 1000, work * 99 // 100)
        return min(done / self.total_work, 1.0)

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

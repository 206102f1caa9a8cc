"""SLS-compatible run metrics: `realtimetrack.json`, `metrics/*.csv`, tracked
jobs, and the metric bindings invariants are checked against.

`SlsRecorder` plays the part of SLS's `SchedulerWrapper` + `SchedulerMetrics`:
`attach(rm)` wraps the scheduler's `allocate` and `place` to time allocate
calls and count placements by locality (SLS wraps the scheduler the same
way), and `tick(rm)`, called every simulated second, samples the cluster.

What is written, per simulated second:

- `realtimetrack.json`: a JSON array, one object per second, with the keys
  SLS's `SLSWebApp.generateRealTimeTrackingMetrics` writes and in SLS's units,
  so SLS's `showSimulationTrace.html` can plot it: `time` (ms: the run's
  epoch + simulated time, so simulated ms on the virtual clock),
  `jvm.free.memory` / `jvm.max.memory` / `jvm.total.memory` (GB; emu has no
  JVM heap, so total = the process's resident set, max = its peak, free =
  max - total), `running.applications`, `running.containers`,
  `cluster.{allocated,available}.{memory,vcores}` (memory in GB),
  `queue.<leaf>.allocated.{memory,vcores}` for every leaf queue (YARN's full
  name, `root.default` for FIFO; memory in GB), `scheduler.allocate.timecost`,
  `scheduler.handle.timecost` and `scheduler.handle-<EVENT>.timecost` (mean
  wall milliseconds per call over the last second, 0 if none), and for each
  `--track-jobs` job `job.<id>.{live,reserved}.containers` and
  `job.<id>.{usage,demand}.{memory,vcores}` (usage = allocated, demand =
  allocated + pending, as SLS's FairSchedulerMetrics; memory in GB). With
  node labels (and only then, so an unlabelled run's files are as before),
  per partition `<p>` (`partition_key`: the label, `<DEFAULT_PARTITION>` for
  unlabelled nodes) `partition.<p>.cluster.{allocated,available}.{memory,vcores}`
  and per leaf `partition.<p>.queue.<leaf>.{allocated,pending}.{memory,vcores}`, from
  the scheduler's `partition_usage` (SLS has no such gauges; the names
  cannot collide with SLS's). Every record has the same keys: a queue
  created during the run (a FairScheduler dynamic queue) reads 0 in the
  records before it existed.
- `metrics/<name>.csv`, header `time,value`, one row per
  `yarn.sls.metrics.record.interval.ms` (rounded up to whole seconds): the
  same series under SLS's metric-registry names
  (`variable.cluster.allocated.memory`, `counter.queue.<q>.allocated.memory`,
  `sampler.scheduler.operation.allocate.timecost`,
  `variable.app.<job>.live.containers`,
  `variable.partition.<p>.cluster.allocated.memory`,
  `counter.partition.<p>.queue.<q>.allocated.cores`, ...), in raw units (MB, vcores,
  bytes, counts, milliseconds), plus cumulative operation counters
  (`counter.scheduler.operation.allocate`, `...handle.<EVENT>`).

The timecost and memory fields are wall measurements and differ from run to
run; nothing here feeds jobruntime.csv or summary.json, which stay
byte-identical for a trace and seed.
"""

from __future__ import annotations

import gc
import itertools
import json
import os
import resource
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from emu.metrics import invariants as inv
from emu.rm.scheduler.events import SchedulerEvent
from emu.rm.scheduler.locality import ANY, NODE_LOCAL, OFF_SWITCH, RACK_LOCAL

if TYPE_CHECKING:
    from emu.rm.actor import ResourceManager
    from emu.rm.scheduler.abstract_scheduler import Scheduler

GB = 1024.0
# The scheduler events emu's schedulers handle (Hadoop's SchedulerEventType
# names); SLS writes a timecost for every type in every record, so the keys
# of each realtimetrack record are known from the first one on. Node-label
# changes are an operator's, rare: their timecost joins the records from the
# first one on, so a run without them keeps its records' keys.
SCHEDULER_EVENTS = tuple(
    e.value for e in SchedulerEvent if e is not SchedulerEvent.NODE_LABELS_UPDATE
)
TRACKED_JOB_FIELDS = (
    "live.containers",
    "reserved.containers",
    "usage.memory",
    "usage.vcores",
    "demand.memory",
    "demand.vcores",
)
RawValues = dict[str, int | float]
"""metrics/ CSV values by name. Counts and resources stay ints, written as
SLS's counters are ("3072"); a plain `float` annotation would make compiled
code write them as floats ("3072.0") where pure Python writes ints."""


DEFAULT_PARTITION_KEY = "<DEFAULT_PARTITION>"
"""The default (unlabelled) partition's name in gauge names: YARN's
NodeLabel.DEFAULT_NODE_LABEL_PARTITION, which no label can be (a label is
letters, digits, `-` and `_`), so the names cannot collide."""


def partition_key(name: str) -> str:
    """A partition's name in gauge names (`""` is the default partition)."""
    return name or DEFAULT_PARTITION_KEY


def partition_values(
    sched: Scheduler, queues: list[str] | None = None
) -> list[tuple[str, dict[str, int]]]:
    """Per node-label partition (`partition_key`), in raw units (MB, vcores):
    the cluster's `allocated.memory`, `allocated.vcores`,
    `available.memory`, `available.vcores` there, then each of `queues`'
    (full names; None: the scheduler's leaves) `queue.<q>.allocated.{memory,vcores}`
    and `queue.<q>.pending.{memory,vcores}` (what its apps ask of the
    partition). Empty without node labels. The recorder and the live pages
    read the same values, so the page agrees with the files."""
    usage = sched.partition_usage()
    if not usage:
        return []
    if queues is None:
        queues = [full_queue_name(q) for q in sched.leaf_queues()]
    out = []
    for p in usage:
        used, total = p.used, p.total
        values = {
            "allocated.memory": used.memory,
            "allocated.vcores": used.vcores,
            "available.memory": total.memory - used.memory,
            "available.vcores": total.vcores - used.vcores,
        }
        for q in queues:
            r = p.queues.get(q)
            values[f"queue.{q}.allocated.memory"] = r.memory if r is not None else 0
            values[f"queue.{q}.allocated.vcores"] = r.vcores if r is not None else 0
            r = p.pending.get(q)
            values[f"queue.{q}.pending.memory"] = r.memory if r is not None else 0
            values[f"queue.{q}.pending.vcores"] = r.vcores if r is not None else 0
        out.append((partition_key(p.name), values))
    return out


def full_queue_name(name: str) -> str:
    """YARN's full queue name: `default` -> `root.default`."""
    return name if name == "root" or name.startswith("root.") else f"root.{name}"


def process_memory() -> tuple[int, int]:
    """(resident, peak resident) bytes of this process, sampled every
    simulated second. On Linux both come from one read of /proc/self/status
    (VmRSS, VmHWM): `getrusage` sums over every thread of the process, which
    with a JVM in it (`--scheduler-impl hadoop`) cost milliseconds a call."""
    rss = peak = 0
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(b"VmRSS:"):
                    rss = int(line.split()[1]) * 1024
                elif line.startswith(b"VmHWM:"):
                    peak = int(line.split()[1]) * 1024
    except (OSError, IndexError, ValueError):
        pass
    if not peak:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return rss or peak, max(peak, rss)


def tracked_job_values(rm: ResourceManager, app_id: str | None) -> tuple[int, ...]:
    """A tracked job's `TRACKED_JOB_FIELDS` in raw units (MB, vcores, counts):
    its current attempt's containers and resources, all 0 before the app
    exists and after its attempt has left the scheduler. The recorder and
    the live pages read the same values, so the page agrees with the files."""
    app = rm.ctx.apps.get(app_id) if app_id is not None else None
    sapp = rm.ctx.scheduler.apps.get(app.attempts[-1]) if app and app.attempts else None
    if sapp is None:
        return (0, 0, 0, 0, 0, 0)
    used, pending = sapp.used, sapp.pending
    return (
        len(sapp.live),
        len(sapp.reservations),
        used.memory,
        used.vcores,
        used.memory + pending.memory,
        used.vcores + pending.vcores,
    )


class _Timing:
    """Calls and wall seconds, with the values at the previous sample."""

    __slots__ = ("calls", "last_calls", "last_seconds", "seconds")

    def __init__(self) -> None:
        self.calls = 0
        self.seconds = 0.0
        self.last_calls = 0
        self.last_seconds = 0.0

    def mean_ms_since_last(self) -> float:
        n = self.calls - self.last_calls
        s = self.seconds - self.last_seconds
        self.last_calls, self.last_seconds = self.calls, self.seconds
        return round(s * 1000 / n, 6) if n else 0.0


CONTAINER_LOG_HEADER = "time_ms,event,container,app,node,memory_mb,vcores,priority,locality,am\n"
"""containers.csv (`emu sls --container-log`): one row per scheduler decision
on a container, allocated or preempted, in the order the scheduler made them."""


class SlsRecorder:
    """Samples a running RM once per simulated second; see the module doc.

    `directory` receives realtimetrack.json and metrics/ (None: sample for
    invariants only). `track_jobs` are trace job ids (the RM app's name).
    `ongoing` invariants are checked at every tick; a broken one raises
    `InvariantBroken` out of `tick`, which ends the run.
    """

    def __init__(
        self,
        directory: Path | None,
        *,
        track_jobs: tuple[str, ...] = (),
        ongoing: list[inv.Invariant] | None = None,
        epoch_ms: int = 0,
        record_every_s: int = 1,
        container_log: Path | None = None,
    ) -> None:
        self.directory = directory
        self.track_jobs = track_jobs
        self.ongoing = ongoing or []
        self.epoch_ms = epoch_ms
        self.record_every_s = max(1, record_every_s)
        self.rm: ResourceManager | None = None
        self.allocate_timing = _Timing()
        self.locality = {NODE_LOCAL: 0, RACK_LOCAL: 0, OFF_SWITCH: 0}
        self.first_ask_ms: dict[str, int] = {}
        self.first_alloc_done: set[str] = set()
        self.first_alloc_delays = 0
        self.first_alloc_delay_total_ms = 0
        self.queues: list[str] = []
        self._queue_keys: dict[str, str] = {}
        self._full_queues: list[str] = []
        """`queues`' full names, in the same order."""
        self._handled_last: dict[str, tuple[int, float]] = {}
        self._app_of_job: dict[str, str] = {}
        self._apps_seen = 0
        self._ticks = 0
        self.records = 0
        self._keys: list[str] = []
        self._keys_grew = False
        self._track: IO[str] | None = None
        self._csv: dict[str, IO[str]] = {}
        self.containers: IO[str] | None = None
        if container_log is not None:
            self.containers = container_log.open("w", encoding="utf-8")
            self.containers.write(CONTAINER_LOG_HEADER)
        if directory is not None:
            (directory / "metrics").mkdir(parents=True, exist_ok=True)
            self._track = (directory / "realtimetrack.json").open("w", encoding="utf-8")

    # --- the scheduler wrapper -------------------------------------------------------
    def attach(self, rm: ResourceManager) -> None:
        """Wrap `rm`'s scheduler (before the run starts)."""
        self.rm = rm
        sched = rm.ctx.scheduler
        first_ask = self.first_ask_ms
        done = self.first_alloc_done
        sched.watcher = _Watcher(self, rm.ctx.now_ms)

        def forget(app: Any) -> None:
            # An app the RM no longer keeps (emu.rm.retention) asks for nothing more.
            for attempt_id in app.attempts:
                first_ask.pop(attempt_id, None)
                done.discard(attempt_id)

        rm.ctx.completed_apps.listeners.append(forget)

    # --- sampling ----------------------------------------------------------------------
    def tick(self, rm: ResourceManager) -> None:
        """One simulated second: record, then check ongoing invariants."""
        now = rm.ctx.now_ms()
        if self._track is not None:
            self._record(rm, now)
        if self.ongoing:
            inv.check(self.ongoing, self.bindings(rm, now), now, "during the run")
        self._ticks += 1

    def _queue_metrics(self, sched: Scheduler, name: str) -> Any:
        q = sched.queues.get(name)
        if q is None:
            q = sched.queues.get(name.rsplit(".", 1)[-1])
        return q

    def _leaf_metrics(self, sched: Scheduler) -> list[Any]:
        """The leaf queues' metrics (parents may aggregate their children, so
        cluster totals are sums over leaves only)."""
        seen: dict[int, Any] = {}
        for name in sched.leaf_queues():
            q = self._queue_metrics(sched, name)
            if q is not None:
                seen.setdefault(id(q), q)
        return list(seen.values()) if seen else list(sched.queues.values())

    def _refresh_queues(self, sched: Scheduler) -> None:
        for name in sched.leaf_queues():
            if name not in self._queue_keys:
                full = full_queue_name(name)
                self._queue_keys[name] = full
                self.queues.append(name)
                self._full_queues.append(full)

    def _refresh_jobs(self, rm: ResourceManager) -> None:
        apps = rm.ctx.apps
        # New apps are the newest entries; finished ones may have been removed
        # from anywhere before them (emu.rm.retention), so count all ever known.
        known = len(apps) + rm.ctx.completed_apps.removed
        if known == self._apps_seen or not self.track_jobs:
            return
        wanted = set(self.track_jobs)
        new = list(itertools.islice(reversed(apps.values()), known - self._apps_seen))
        for app in reversed(new):
            if app.name in wanted and app.name not in self._app_of_job:
                self._app_of_job[app.name] = app.app_id
        self._apps_seen = known

    def _record(self, rm: ResourceManager, now: int) -> None:
        """One sample: a realtimetrack.json record (`rec`, SLS's units) and,
        every `record_every_s`, a row of the metric CSVs (`raw`).

        The parts add their keys in SLS's order, which is the files' column
        and key order.
        """
        sched = rm.ctx.scheduler
        self._refresh_queues(sched)
        self._refresh_jobs(rm)
        rec: dict[str, Any] = {"time": self.epoch_ms + now}
        raw: RawValues = {}
        self._record_cluster(rm, rec, raw)
        self._record_queues(sched, rec, raw)
        self._record_partitions(sched, rec, raw)
        self._record_timings(rm, rec, raw)
        for job in self.track_jobs:
            values = self._job_values(rm, job)
            for field, value in zip(TRACKED_JOB_FIELDS, values, strict=True):
                rec[f"job.{job}.{field}"] = value / GB if field.endswith("memory") else value
                raw[f"variable.app.{job}.{field}"] = value
        self._write_record(rec)
        if self._ticks % self.record_every_s == 0:
            self._write_csv(self.epoch_ms + now, raw)

    def _record_cluster(self, rm: ResourceManager, rec: dict[str, Any], raw: RawValues) -> None:
        """Memory of this process (SLS's JVM figures) and the cluster's totals."""
        sched = rm.ctx.scheduler
        rss, peak = process_memory()
        used, cluster = sched.used, sched.cluster
        avail_mb, avail_vc = cluster.memory - used.memory, cluster.vcores - used.vcores
        running_apps = sum(q.apps_running for q in self._leaf_metrics(sched))
        running_containers = len(rm.ctx.containers)
        rec["jvm.free.memory"] = (peak - rss) / GB**3
        rec["jvm.max.memory"] = peak / GB**3
        rec["jvm.total.memory"] = rss / GB**3
        rec["running.applications"] = running_apps
        rec["running.containers"] = running_containers
        rec["cluster.allocated.memory"] = used.memory / GB
        rec["cluster.allocated.vcores"] = used.vcores
        rec["cluster.available.memory"] = avail_mb / GB
        rec["cluster.available.vcores"] = avail_vc
        raw["variable.jvm.free.memory"] = peak - rss
        raw["variable.jvm.max.memory"] = peak
        raw["variable.jvm.total.memory"] = rss
        raw["variable.running.application"] = running_apps
        raw["variable.running.container"] = running_containers
        raw["variable.cluster.allocated.memory"] = used.memory
        raw["variable.cluster.allocated.vcores"] = used.vcores
        raw["variable.cluster.available.memory"] = avail_mb
        raw["variable.cluster.available.vcores"] = avail_vc

    def _record_queues(self, sched: Scheduler, rec: dict[str, Any], raw: RawValues) -> None:
        """Each queue's allocated and pending resources."""
        for name in self.queues:
            full = self._queue_keys[name]
            q = self._queue_metrics(sched, name)
            alloc_mb = q.allocated.memory if q is not None else 0
            alloc_vc = q.allocated.vcores if q is not None else 0
            rec[f"queue.{full}.allocated.memory"] = alloc_mb / GB
            rec[f"queue.{full}.allocated.vcores"] = alloc_vc
            raw[f"counter.queue.{full}.allocated.memory"] = alloc_mb
            raw[f"counter.queue.{full}.allocated.cores"] = alloc_vc
            raw[f"counter.queue.{full}.pending.memory"] = q.pending.memory if q is not None else 0
            raw[f"counter.queue.{full}.pending.cores"] = q.pending.vcores if q is not None else 0

    def _record_partitions(self, sched: Scheduler, rec: dict[str, Any], raw: RawValues) -> None:
        """With node labels, per partition: the cluster's allocated and
        available resources there and each leaf queue's allocation and
        pending asks there (`partition_values`), under `partition.<p>.`
        (nothing without labels)."""
        for p, values in partition_values(sched, self._full_queues):
            for field, value in values.items():
                gb = field.endswith("memory")
                if field.startswith("queue."):
                    rec[f"partition.{p}.{field}"] = value / GB if gb else value
                    cores = field if gb else field[: -len("vcores")] + "cores"
                    raw[f"counter.partition.{p}.{cores}"] = value
                else:
                    rec[f"partition.{p}.cluster.{field}"] = value / GB if gb else value
                    raw[f"variable.partition.{p}.cluster.{field}"] = value

    def _record_timings(self, rm: ResourceManager, rec: dict[str, Any], raw: RawValues) -> None:
        """The scheduler's allocate and per-event handling time since the last
        sample, and its call counters."""
        allocate_ms = self.allocate_timing.mean_ms_since_last()
        rec["scheduler.allocate.timecost"] = allocate_ms
        raw["sampler.scheduler.operation.allocate.timecost"] = allocate_ms
        raw["counter.scheduler.operation.allocate"] = self.allocate_timing.calls
        handled, seconds = rm.ctx.dispatcher.handled, rm.ctx.dispatcher.handle_seconds
        events = list(SCHEDULER_EVENTS)
        for key in handled:
            if key.startswith("scheduler.") and key[10:] not in events:
                events.append(key[10:])
        per_event: dict[str, float] = {}
        total_n, total_s, all_calls = 0, 0.0, 0
        for event in events:
            key = "scheduler." + event
            n, s = handled.get(key, 0), seconds.get(key, 0.0)
            last_n, last_s = self._handled_last.get(key, (0, 0.0))
            self._handled_last[key] = (n, s)
            dn, ds = n - last_n, s - last_s
            total_n += dn
            total_s += ds
            all_calls += n
            per_event[event] = round(ds * 1000 / dn, 6) if dn else 0.0
            raw[f"counter.scheduler.operation.handle.{event}"] = n
        handle_ms = round(total_s * 1000 / total_n, 6) if total_n else 0.0
        rec["scheduler.handle.timecost"] = handle_ms
        raw["sampler.scheduler.operation.handle.timecost"] = handle_ms
        raw["counter.scheduler.operation.handle"] = all_calls
        for event in events:
            rec[f"scheduler.handle-{event}.timecost"] = per_event[event]
            raw[f"sampler.scheduler.operation.handle.{event}.timecost"] = per_event[event]

    def _write_record(self, rec: dict[str, Any]) -> None:
        assert self._track is not None
        if len(rec) != len(self._keys):
            self._keys_grew = self.records > 0
            self._keys = list(rec)
        self._track.write(("[\n" if self.records == 0 else ",\n") + json.dumps(rec))
        self.records += 1

    def _job_values(self, rm: ResourceManager, job: str) -> tuple[int, ...]:
        return tracked_job_values(rm, self._app_of_job.get(job))

    def _write_csv(self, t: int, raw: RawValues) -> None:
        assert self.directory is not None
        for name, value in raw.items():
            f = self._csv.get(name)
            if f is None:
                path = self.directory / "metrics" / f"{_safe(name)}.csv"
                f = self._csv[name] = path.open("w", encoding="utf-8")
                f.write("time,value\n")
            f.write(f"{t},{value}\n")

    def close(self) -> None:
        """Finish the files (the JSON array is closed even if nothing was recorded)."""
        if self._track is not None:
            self._track.write("[]\n" if self.records == 0 else "\n]\n")
            self._track.close()
            self._track = None
            if self._keys_grew:
                self._backfill()
        for f in self._csv.values():
            f.close()
        self._csv.clear()
        if self.containers is not None:
            self.containers.close()
            self.containers = None

    def _backfill(self) -> None:
        """Give every record the keys of the last one (a queue created during
        the run, e.g. a FairScheduler dynamic queue, reads 0 before it
        existed), so all records have the same keys, as SLS's do."""
        assert self.directory is not None
        path = self.directory / "realtimetrack.json"
        tmp = path.with_suffix(".json.tmp")
        zero = dict.fromkeys(self._keys, 0)
        with path.open(encoding="utf-8") as src, tmp.open("w", encoding="utf-8") as dst:
            for line in src:
                body = line.rstrip("\n")
                if body in ("[", "]"):
                    dst.write(line)
                    continue
                comma = body.endswith(",")
                rec = json.loads(body[:-1] if comma else body)
                dst.write(json.dumps({**zero, **rec}) + (",\n" if comma else "\n"))
        os.replace(tmp, path)

    # --- invariant bindings --------------------------------------------------------------
    def bindings(self, rm: ResourceManager, now_ms: int) -> dict[str, float]:
        """Hadoop's root QueueMetrics and JvmMetrics names, bound to this run."""
        ctx = rm.ctx
        sched = ctx.scheduler
        qs = self._leaf_metrics(sched)
        pending_containers = 0
        active_apps = 0
        active_users: set[str] = set()
        for sapp in sched.apps.values():
            if not sapp.info.has_pending():
                continue
            active_apps += 1
            active_users.add(sapp.user)
            for by_name in sapp.info.requests.values():
                a = by_name.get(ANY)
                if a is not None and a.num > 0:
                    pending_containers += a.num
        running = [0, 0, 0, 0]
        for app_id in sched.running_apps:
            app = ctx.apps.get(app_id)
            if app is None:
                continue
            since = app.started_ms if app.started_ms >= 0 else app.submit_ms
            minutes = (now_ms - since) / 60_000
            running[0 if minutes < 60 else 1 if minutes < 300 else 2 if minutes < 1440 else 3] += 1
        used, cluster = sched.used, sched.cluster
        rss, peak = process_memory()
        gen = [s.get("collections", 0) for s in gc.get_stats()]
        delays = self.first_alloc_delays
        return {
            "AppsSubmitted": sum(q.apps_submitted for q in qs),
            "AppsRunning": sum(q.apps_running for q in qs),
            "AppsPending": sum(q.apps_pending for q in qs),
            "AppsCompleted": sum(q.apps_completed for q in qs),
            "AppsKilled": sum(q.apps_killed for q in qs),
            "AppsFailed": sum(q.apps_failed for q in qs),
            "AllocatedMB": used.memory,
            "AllocatedVCores": used.vcores,
            "AllocatedContainers": sum(q.allocated_containers for q in qs),
            "AggregateContainersAllocated": sum(q.containers_allocated_total for q in qs),
            "AggregateNodeLocalContainersAllocated": self.locality.get(NODE_LOCAL, 0),
            "AggregateRackLocalContainersAllocated": self.locality.get(RACK_LOCAL, 0),
            "AggregateOffSwitchContainersAllocated": self.locality.get(OFF_SWITCH, 0),
            "AggregateContainersReleased": sum(q.containers_released_total for q in qs),
            "AggregateContainersPreempted": sum(q.preempted_containers for q in qs),
            "AvailableMB": cluster.memory - used.memory,
            "AvailableVCores": cluster.vcores - used.vcores,
            "PendingMB": sum(q.pending.memory for q in qs),
            "PendingVCores": sum(q.pending.vcores for q in qs),
            "PendingContainers": pending_containers,
            "ReservedMB": sum(q.reserved.memory for q in qs),
            "ReservedVCores": sum(q.reserved.vcores for q in qs),
            "ReservedContainers": sum(1 for n in sched.nodes.values() if n.reserved is not None),
            "ActiveUsers": len(active_users),
            "ActiveApplications": active_apps,
            "AppAttemptFirstContainerAllocationDelayNumOps": delays,
            "AppAttemptFirstContainerAllocationDelayAvgTime": (
                self.first_alloc_delay_total_ms / delays if delays else 0
            ),
            "running_0": running[0],
            "running_60": running[1],
            "running_300": running[2],
            "running_1440": running[3],
            "MemNonHeapUsedM": 0,
            "MemNonHeapCommittedM": 0,
            "MemNonHeapMaxM": -1,
            "MemHeapUsedM": rss / 2**20,
            "MemHeapCommittedM": rss / 2**20,
            "MemHeapMaxM": peak / 2**20,
            "MemMaxM": peak / 2**20,
            "GcCountPS_Scavenge": sum(gen[:2]),
            "GcTimeMillisPS_Scavenge": 0,
            "GcCountPS_MarkSweep": sum(gen[2:]),
            "GcTimeMillisPS_MarkSweep": 0,
            "GcCount": sum(gen),
            "GcTimeMillis": 0,
            "ThreadsNew": 0,
            "ThreadsRunnable": threading.active_count(),
            "ThreadsBlocked": 0,
            "ThreadsWaiting": 0,
            "ThreadsTimedWaiting": 0,
            "ThreadsTerminated": 0,
            "LogFatal": 0,
            "LogError": 0,
            "LogWarn": 0,
            "LogInfo": 0,
        }


def _safe(name: str) -> str:
    """A metric name as a file name (queue and job names may hold `/`)."""
    return name.replace(os.sep, "_").replace("\0", "_")


class _Watcher:
    """The scheduler's allocate calls timed and its placements counted for
    SLS's metrics (the `SchedulerWatcher` hook of emu.rm.scheduler)."""

    def __init__(self, metrics: SlsRecorder, now_ms: Callable[[], int]) -> None:
        self.metrics = metrics
        self.now_ms = now_ms

    def allocate(self, attempt_id: str, asks: list[dict[str, Any]], call: Callable[[], Any]) -> Any:
        m = self.metrics
        start = time.perf_counter()
        try:
            return call()
        finally:
            m.allocate_timing.seconds += time.perf_counter() - start
            m.allocate_timing.calls += 1
            first_ask = m.first_ask_ms
            if asks and attempt_id not in first_ask and attempt_id not in m.first_alloc_done:
                first_ask[attempt_id] = self.now_ms()

    def placed(self, c: Any) -> None:
        m = self.metrics
        m.locality[c.locality] = m.locality.get(c.locality, 0) + 1
        if m.containers is not None:
            self._log("allocated", c)
        if not c.is_am:
            asked = m.first_ask_ms.pop(c.attempt_id, None)
            if asked is not None:
                m.first_alloc_done.add(c.attempt_id)
                m.first_alloc_delays += 1
                m.first_alloc_delay_total_ms += self.now_ms() - asked

    def preempted(self, c: Any) -> None:
        if self.metrics.containers is not None:
            self._log("preempted", c)

    def _log(self, what: str, c: Any) -> None:
        assert self.metrics.containers is not None
        r = c.resource
        self.metrics.containers.write(
            f"{self.now_ms()},{what},{c.container_id},{c.app_id},{c.node_id},"
            f"{r.memory},{r.vcores},{c.priority},{c.locality},{int(c.is_am)}\n"
        )

    def scheduling_pass(self, node_id: str) -> None:
        pass

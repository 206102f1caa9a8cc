"""SYNTH workloads (`--tracetype=SYNTH`): jobs sampled from distributions, as
SLS's `SynthTraceJobProducer` and `SynthJob` sample them.

A SYNTH file is one JSON object:

    {"num_nodes": 20, "nodes_per_rack": 4, "num_jobs": 10, "rand_seed": 2,
     "workloads": [{"workload_name": "w", "workload_weight": 0.5,
                    "queue_name": "sls_queue_1",
                    "job_classes": [{"class_name": "class_1", "user_name": "foobar",
                                     "class_weight": 1.0, "type": "mapreduce",
                                     "duration": {"val": 60, "std": 5},
                                     "reservation": {"val": 0.5},
                                     "deadline_factor": {"val": 10},
                                     "params": {"k": "v"},
                                     "tasks": [{"type": "map", "priority": 20,
                                                "count": {"val": 5, "std": 1},
                                                "time": {"val": 10, "std": 2},
                                                "max_memory": {"val": 1024},
                                                "max_vcores": {"val": 1},
                                                "execution_type": "GUARANTEED"}]}],
                    "time_distribution": [{"time": 1, "weight": 100},
                                          {"time": 60, "weight": 0}]}]}

A sample is `{"val": v}` (constant), `{"val": v, "std": s[, "dist": "LOGNORM" |
"NORM"]}` (a distribution, lognormal by default, whose *mean* is v and
standard deviation s: SYNTH converts them to mu = ln v - sigma^2/2,
sigma^2 = ln(1 + s^2/v^2); s = 0 means v/6; v <= 0 samples 0), or
`{"discrete": [..], "weights": [..]}` (weighted choice, uniform by default).
The older flat job-class format (`mtasks_avg`, `mtasks_stddev`, `rtasks_*`,
`dur_*`, `mtime_*`, `rtime_*`, `map_max_memory_*`, `reduce_max_memory_*`,
`map_max_vcores_*`, `reduce_max_vcores_*`, `map_execution_type`,
`reduce_execution_type`, `chance_of_reservation`, `deadline_factor_*`) is
converted as SLS converts it: a `mapreduce` job with maps at priority 20 and
reduces at 10. Unknown keys are ignored, as Jackson is told to.

Units, as in SLS: `time_distribution` times and job `duration` are seconds;
task `time` is milliseconds (SLS uses it as the container's lifetime as is);
memory is MB, at least 1024, and vcores at least 1 (SynthJob's minimums).

Sampling draws what SLS draws (Hadoop 3.4.2's SynthTraceJobProducer,
SynthJob, SynthUtils and AMDefinitionSynth), so a spec and seed give the jobs
an SLS run of them gives: the same submission times, queues, users, job ids,
durations, deadlines, task counts, times and sizes (checked field by field
against hadoop-sls in tests/hadoop/test_synth_vs_hadoop.py). It uses SLS's
generators, ported bit for bit in `emu.scenario.java_random`: the trace's
`java.util.Random`, seeded with `rand_seed` (or `seed`, which overrides
it), gives every distribution with a positive mean its own commons-math3
`Well19937c` (one `nextLong` each, at load, in file order); jobs then pick a
workload, a submission time (a weighted time bucket, then `nextInt` within
it) and a job class, and leave a Java `PriorityQueue` by submission time
(jobs in the same second leave it in the heap's order, which numbers them).
Each job, in that order, draws its duration, whether it has a deadline and
its deadline factor, reseeds the trace generator with its `nextLong`, and
draws its tasks' counts, sizes and times; discrete samples draw from the
trace generator, distributions from their own. Values round as Java's
`Math.round`. Each task prefers one node, `nextInt(nodes)` of a
`java.util.Random` seeded with the trace seed and restarted for every job.

Where emu differs from SLS, SLS fails, gives nonsense or differs from itself:

- Submission times are relative to the first job, as in the SLSRunner that
  introduced SYNTH: 3.4.2 starts every SYNTH job at time 0.
- A job needs no reservation support to load.
- A task whose sampled time rounds to 0 ms or less runs for 1 ms, where SLS
  stops loading the trace ("Duration of a task shouldn't be less or equal
  to 0").
- A distribution whose mean is 0 or less samples 0, where SLS has no
  distribution to sample and fails with a NullPointerException; `num_jobs`
  0 is an empty workload, where SLS's PriorityQueue refuses a capacity of 0.
  A normal distribution's negative `std`, which SLS rejects at load, and a
  drawn duration or task count beyond a Java int, on which it overflows,
  are input errors here.
- The node a task prefers is the drawn index into the generated nodes in
  order (`node0`, `node1`, ...). SLS indexes its map of running NMs, whose
  order follows node ids numbered by the threads that start the NMs as they
  race, so it differs from run to run of SLS itself.

One difference is not chosen: commons-math computes the Gaussian's log, sin
and cos (and the log-normal's exp) with its FastMath, emu with the
platform's, which differ in the last bit for about one value in a thousand;
a drawn value changes only if it then rounds within that bit of a half (see
`emu.scenario.java_random`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from emu.errors import InputError
from emu.java_heap import JavaPriorityQueue
from emu.resources import Resource
from emu.scenario.java_random import JavaRandom, Well19937c, java_round
from emu.scenario.limits import JAVA_INT_MAX, JAVA_LONG_MAX, JAVA_LONG_MIN
from emu.scenario.sls import (
    DEFAULT_QUEUE,
    DEFAULT_USER,
    EXECUTION_TYPES,
    MAP_PRIORITY,
    REDUCE_PRIORITY,
    JsonFields,
    TraceNodes,
    am_kind,
    iter_json_objects,
    sort_jobs,
)
from emu.workload import JobSpec, NodeSpec, TaskSpec, Workload

MIN_MEMORY = 1024
MIN_VCORES = 1


@dataclass(slots=True)
class Sample:
    """One SYNTH sample definition: constant, distribution or discrete."""

    val: float = 0.0
    std: float = 0.0
    dist: str | None = None
    discrete: list[float] | None = None
    weights: list[float] = field(default_factory=list)
    _gen: Well19937c | None = field(default=None, repr=False)
    _params: tuple[float, float] = field(default=(0.0, 0.0), repr=False)

    def init(self, rng: JavaRandom) -> None:
        """Give a distribution its own generator, seeded from the trace's
        (SynthUtils reseeds each distribution with `rand.nextLong()`, and
        makes none, drawing nothing, when the mean is not positive)."""
        if self.dist is None or self.val <= 0:
            return
        std = self.std or self.val / 6
        if self.dist == "NORM":
            self._params = (self.val, std)
        else:
            sigma_sq = math.log1p(std * std / (self.val * self.val))
            self._params = (math.log(self.val) - 0.5 * sigma_sq, math.sqrt(sigma_sq))
        self._gen = Well19937c(rng.next_long())

    def double(self, shared: JavaRandom) -> float:
        """A value; discrete choices draw from the shared trace generator."""
        if self.discrete is not None:
            return self.discrete[weighted_index(self.weights, shared)]
        if self.dist is None:
            return self.val
        if self._gen is None:
            return 0.0
        a, b = self._params
        if self.dist == "NORM":
            return b * self._gen.next_gaussian() + a
        return _exp(a + b * self._gen.next_gaussian())

    def long(self, shared: JavaRandom) -> int:
        """`Sample.getLong`: Java's `Math.round` of a value."""
        return java_round(self.double(shared))


def _exp(x: float) -> float:
    """Java's `exp`: overflow is infinity, not an error."""
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


def _to_long(x: float) -> int:
    """Java's `(long)` of a double: truncation, NaN 0, saturating."""
    if math.isnan(x):
        return 0
    if math.isinf(x):
        return JAVA_LONG_MAX if x > 0 else JAVA_LONG_MIN
    return max(min(int(x), JAVA_LONG_MAX), JAVA_LONG_MIN)


def weighted_index(weights: Sequence[float], rng: JavaRandom) -> int:
    """SynthUtils.getWeighted: index i with probability w[i] / sum(w), the
    sum added up left to right as Java adds it."""
    total = 0.0
    for w in weights:
        total += w
    target = rng.next_double() * total
    cumulative = 0.0
    for i, w in enumerate(weights):
        cumulative += w
        if cumulative > target:
            return i
    return len(weights) - 1


@dataclass(slots=True)
class _TaskDef:
    type: str
    priority: int
    execution_type: str
    count: Sample
    time: Sample
    max_memory: Sample
    max_vcores: Sample


@dataclass(slots=True)
class _JobClass:
    class_name: str
    user_name: str
    weight: float
    type: str
    duration: Sample
    reservation: Sample
    deadline_factor: Sample
    tasks: list[_TaskDef]
    params: dict[str, str]


@dataclass(slots=True)
class _TimeBucket:
    time: int
    weight: float


@dataclass(slots=True)
class _WorkloadDef:
    name: str
    weight: float
    queue: str
    classes: list[_JobClass]
    times: list[_TimeBucket]


def read_synth(
    path: str | os.PathLike[str],
    *,
    container_default: Resource,
    am_default: Resource,
    seed: int | None = None,
) -> Workload:
    """Generate the Workload a SYNTH file describes.

    `container_default` is unused by SYNTH itself (task sizes are sampled)
    and accepted so every trace reader has one signature; `am_default` sizes
    the AM containers. `seed` overrides the file's `rand_seed`.
    """
    del container_default
    file = os.fspath(path)
    objects = list(iter_json_objects(file))
    if len(objects) != 1:
        raise InputError(file, None, f"expected one JSON object, found {len(objects)}")
    line, obj = objects[0]
    trace = JsonFields(file, line, obj, "trace")
    num_jobs = _non_negative(trace, "num_jobs")
    num_nodes = _non_negative(trace, "num_nodes")
    nodes_per_rack = max(trace.integer("nodes_per_rack", 0), 1)
    effective_seed = trace.integer("rand_seed", 0) if seed is None else seed
    if not JAVA_LONG_MIN <= effective_seed <= JAVA_LONG_MAX:
        # SLS holds the seed in a Java long (`rand_seed` is checked as one).
        raise InputError("seed", None, f"must fit in a Java long, got {effective_seed}")
    workloads = _workloads(trace)

    rng = JavaRandom(effective_seed)
    for wl in workloads:
        for jc in wl.classes:
            for sample in (jc.deadline_factor, jc.duration, jc.reservation):
                sample.init(rng)
            for t in jc.tasks:
                for sample in (t.count, t.time, t.max_memory, t.max_vcores):
                    sample.init(rng)

    story: JavaPriorityQueue[_Story] = JavaPriorityQueue(_by_submission)
    workload_weights = [w.weight for w in workloads]
    for _ in range(num_jobs):
        wl = workloads[weighted_index(workload_weights, rng)]
        bucket = weighted_index([b.weight for b in wl.times], rng)
        start = wl.times[bucket].time
        end = wl.times[min(bucket + 1, len(wl.times) - 1)].time
        submit_s = start + (rng.next_int(end - start) if end > start else 0)
        jc = wl.classes[weighted_index([c.weight for c in wl.classes], rng)]
        story.add((submit_s, wl, jc))

    tnodes = TraceNodes()
    tnodes.generate(num_nodes, num_nodes // nodes_per_rack)
    nodes = tnodes.nodes
    jobs = []
    head = story.peek()
    baseline = head[0] * 1000 if head is not None else 0
    for seq in range(num_jobs):
        submit_s, wl, jc = story.poll()
        jobs.append(
            _make_job(file, seq, submit_s, baseline, wl, jc, rng, effective_seed, nodes, am_default)
        )
    return Workload(jobs=sort_jobs(jobs), trace_nodes=nodes)


_Story = tuple[int, "_WorkloadDef", "_JobClass"]


def _by_submission(a: _Story, b: _Story) -> int:
    """SLS's story queue orders jobs by submission time only. Jobs submitted
    in the same second leave its binary heap in an order that is not their
    drawing order, and that order numbers the jobs and feeds them the shared
    generator, so the heap is Java's (emu.java_heap), sift for sift."""
    return (a[0] > b[0]) - (a[0] < b[0])


def _make_job(
    file: str,
    seq: int,
    submit_s: int,
    baseline_ms: int,
    wl: _WorkloadDef,
    jc: _JobClass,
    rng: JavaRandom,
    seed: int,
    nodes: list[NodeSpec],
    am_default: Resource,
) -> JobSpec:
    """SynthJob's constructor, then AMDefinitionSynth's host per task."""
    duration_ms = _java_int(jc.duration.long(rng), file, jc.class_name, "duration") * 1000
    has_deadline = rng.next_double() <= jc.reservation.double(rng)
    deadline_factor = jc.deadline_factor.double(rng)
    deadline = (
        submit_s * 1000 + _to_long(math.ceil(deadline_factor * duration_ms)) if has_deadline else -1
    )
    rng.set_seed(rng.next_long())

    host_rng = JavaRandom(seed)
    tasks = []
    for t in jc.tasks:
        count = _java_int(t.count.long(rng), file, jc.class_name, f"{t.type} count")
        memory = max(t.max_memory.long(rng), MIN_MEMORY)
        vcores = max(t.max_vcores.long(rng), MIN_VCORES)
        for _ in range(count):
            time_ms = t.time.long(rng)
            hosts = (nodes[host_rng.next_int(len(nodes))].host,) if nodes else ()
            tasks.append(
                TaskSpec(
                    task_type=t.type,
                    priority=t.priority,
                    duration_ms=max(time_ms, 1),
                    resource=Resource(memory, vcores),
                    hosts=hosts,
                    execution_type=t.execution_type,
                )
            )
    submit_ms = submit_s * 1000 - baseline_ms
    name = f"{jc.class_name}_{seq:06d}"
    params: dict[str, Any] = {"am_type": jc.type, "class_name": jc.class_name, "workload": wl.name}
    if deadline > 0:
        params["deadline_ms"] = deadline - baseline_ms
    if jc.params:
        params["job_params"] = dict(jc.params)
    return JobSpec(
        job_id=f"job_job_mock_{name}_{seq:04d}",
        am_type=am_kind(jc.type),
        submit_ms=submit_ms,
        end_ms=submit_ms + duration_ms,
        queue=wl.queue,
        user=jc.user_name,
        am_resource=am_default,
        tasks=tuple(tasks),
        params=params,
    )


def _java_int(value: int, file: str, class_name: str, what: str) -> int:
    """`Sample.getInt`'s `Math.toIntExact`: SLS stops with an overflow on a
    drawn duration or task count beyond a Java int, and a count that large
    is a typo, not a workload."""
    if not -JAVA_INT_MAX - 1 <= value <= JAVA_INT_MAX:
        raise InputError(
            file,
            None,
            f"job class {class_name!r}: a {what} of {value} was drawn, beyond a Java int",
        )
    return value


def _non_negative(fields: JsonFields, key: str) -> int:
    """A count SynthTraceJobProducer holds in a Java int."""
    value = fields.integer(key, 0)
    if value < 0:
        raise fields.error(key, f"must be >= 0, got {value}")
    if value > JAVA_INT_MAX:
        raise fields.error(key, f"must be <= {JAVA_INT_MAX} (a Java int), got {value}")
    return value


def _weight(fields: JsonFields, key: str) -> float:
    value = fields.number(key, 0.0)
    if value < 0 or math.isnan(value):
        raise fields.error(key, f"must be >= 0, got {value}")
    return value


def _check_weights(fields: JsonFields, key: str, weights: list[float]) -> None:
    if not weights:
        raise fields.error(key, "missing or empty")
    if sum(weights) <= 0:
        raise fields.error(key, "weights sum to 0: nothing can be picked")


def _workloads(trace: JsonFields) -> list[_WorkloadDef]:
    out = []
    for i, raw in enumerate(trace.array("workloads") or []):
        wl = trace.child(raw, f"workloads[{i}]")
        classes = [
            _job_class(wl.child(c, f"job_classes[{j}]"))
            for j, c in enumerate(wl.array("job_classes") or [])
        ]
        _check_weights(wl, "job_classes", [c.weight for c in classes])
        times = []
        for j, raw_time in enumerate(wl.array("time_distribution") or []):
            ts = wl.child(raw_time, f"time_distribution[{j}]")
            times.append(_TimeBucket(ts.integer("time", 0), _weight(ts, "weight")))
        _check_weights(wl, "time_distribution", [b.weight for b in times])
        out.append(
            _WorkloadDef(
                name=wl.string("workload_name", ""),
                weight=_weight(wl, "workload_weight"),
                queue=wl.string("queue_name", DEFAULT_QUEUE),
                classes=classes,
                times=times,
            )
        )
    _check_weights(trace, "workloads", [w.weight for w in out])
    return out


def _job_class(jc: JsonFields) -> _JobClass:
    common: dict[str, Any] = {
        "class_name": jc.string("class_name", "null"),
        "user_name": jc.string("user_name", DEFAULT_USER),
        "weight": _weight(jc, "class_weight"),
        "params": _params(jc),
    }
    if jc.has("tasks"):
        return _JobClass(
            type=jc.string("type", "mapreduce"),
            duration=_sample(jc, "duration"),
            reservation=_sample(jc, "reservation"),
            deadline_factor=_sample(jc, "deadline_factor"),
            tasks=[
                _task(jc.child(t, f"tasks[{k}]")) for k, t in enumerate(jc.array("tasks") or [])
            ],
            **common,
        )
    # The flat format SynthTraceJobProducer.validateJobDef converts.
    return _JobClass(
        type="mapreduce",
        duration=_dist(jc, "dur"),
        reservation=Sample(val=jc.number("chance_of_reservation", 0.0)),
        deadline_factor=_dist(jc, "deadline_factor"),
        tasks=[
            _flat_task(jc, "map", "mtasks", "mtime", "map", MAP_PRIORITY),
            _flat_task(jc, "reduce", "rtasks", "rtime", "reduce", REDUCE_PRIORITY),
        ],
        **common,
    )


def _flat_task(
    jc: JsonFields, task_type: str, count: str, time: str, size: str, priority: int
) -> _TaskDef:
    return _TaskDef(
        type=task_type,
        priority=priority,
        execution_type=_execution_type(jc, f"{size}_execution_type"),
        count=_dist(jc, count),
        time=_dist(jc, time),
        # SLS stores the flat *_avg sizes as Java longs.
        max_memory=Sample(
            val=float(int(jc.number(f"{size}_max_memory_avg", 0.0))),
            std=jc.number(f"{size}_max_memory_stddev", 0.0),
            dist="LOGNORM",
        ),
        max_vcores=Sample(
            val=float(int(jc.number(f"{size}_max_vcores_avg", 0.0))),
            std=jc.number(f"{size}_max_vcores_stddev", 0.0),
            dist="LOGNORM",
        ),
    )


def _dist(jc: JsonFields, stem: str) -> Sample:
    """A log-normal count or time: its average is a count or a duration, so
    a negative one is a typo (Hadoop would sample NaN and run zero-length
    tasks without a word)."""
    avg = jc.number(f"{stem}_avg", 0.0)
    if not avg >= 0:
        raise jc.error(f"{stem}_avg", f"must be >= 0, got {avg:g}")
    return Sample(val=avg, std=jc.number(f"{stem}_stddev", 0.0), dist="LOGNORM")


def _task(t: JsonFields) -> _TaskDef:
    if not t.has("type"):
        raise t.error("type", "missing")
    return _TaskDef(
        type=t.string("type", ""),
        priority=t.integer("priority", 0),
        execution_type=_execution_type(t, "execution_type"),
        count=_sample(t, "count"),
        time=_sample(t, "time"),
        max_memory=_sample(t, "max_memory"),
        max_vcores=_sample(t, "max_vcores"),
    )


def _execution_type(fields: JsonFields, key: str) -> str:
    value = fields.string(key, "GUARANTEED")
    if value not in EXECUTION_TYPES:
        raise fields.error(key, f"expected one of {', '.join(EXECUTION_TYPES)}, got {value!r}")
    return value


def _params(jc: JsonFields) -> dict[str, str]:
    raw = jc.object("params") or {}
    params = jc.child(raw, "params")
    return {k: params.string(k, "") for k in raw}


def _sample(parent: JsonFields, key: str) -> Sample:
    """A `{val, std, dist}` / `{discrete, weights}` sample, validated as
    SynthTraceJobProducer.Sample's constructor validates it."""
    raw = parent.object(key)
    if raw is None:
        raise parent.error(key, "missing")
    s = parent.child(raw, key)
    has_val, has_std = s.has("val"), s.has("std")
    has_dist, has_disc, has_weights = s.has("dist"), s.has("discrete"), s.has("weights")
    if has_val and not has_std:
        if has_dist or has_disc or has_weights:
            raise s.error(None, "a constant {val} takes no dist, discrete or weights")
        return Sample(val=s.number("val", 0.0))
    if has_val:
        if has_disc or has_weights:
            raise s.error(None, "a distribution {val, std} takes no discrete or weights")
        dist = s.string("dist", "LOGNORM")
        if dist not in ("LOGNORM", "NORM"):
            raise s.error("dist", f"expected LOGNORM or NORM, got {dist!r}")
        if dist == "NORM" and s.number("std", 0.0) < 0:
            # commons-math's NormalDistribution refuses it (SLS fails at load).
            raise s.error("std", f"a NORM std must be >= 0, got {s.number('std', 0.0):g}")
        return Sample(val=s.number("val", 0.0), std=s.number("std", 0.0), dist=dist)
    if not has_disc:
        raise s.error(None, "needs val, val and std, or discrete")
    choices = s.array("discrete") or []
    discrete = [s.to_number(f"discrete[{i}]", c) for i, c in enumerate(choices)]
    weights = [1.0] * len(discrete)
    if has_weights:
        weights = [s.to_number(f"weights[{i}]", w) for i, w in enumerate(s.array("weights") or [])]
        if any(w < 0 or math.isnan(w) for w in weights):
            raise s.error("weights", "must all be >= 0")
    if len(weights) != len(discrete):
        raise s.error("weights", f"{len(weights)} weights for {len(discrete)} discrete values")
    _check_weights(s, "discrete", weights)
    return Sample(discrete=discrete, weights=weights)

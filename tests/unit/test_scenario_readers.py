"""Trace and topology readers, against SLS's own reference inputs."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import msgpack
import pytest

from emu.errors import InputError
from emu.resources import Resource
from emu.scenario import read_trace
from emu.scenario.rumen import read_rumen
from emu.scenario.rumen2sls import convert
from emu.scenario.sls import read_sls
from emu.scenario.synth import read_synth
from emu.scenario.topology import read_nodes_file
from emu.workload import JobSpec, NodeSpec, TaskSpec, Workload
from tests.reference import REFERENCE_DIR

CONTAINER = Resource(1024, 1)
AM = Resource(2048, 2)
DEFAULTS: dict[str, Any] = {"container_default": CONTAINER, "am_default": AM}
SLS_DEFAULTS: dict[str, Any] = {**DEFAULTS, "resource_types": ()}
TEST_RESOURCES = REFERENCE_DIR / "test-resources"
RUMEN = REFERENCE_DIR / "sample-data" / "2jobs2min-rumen-jh.json"


def write_json(tmp_path: Path, name: str, *objects: Any) -> Path:
    path = tmp_path / name
    path.write_text("\n".join(json.dumps(o, indent=2) for o in objects) + "\n")
    return path


def task_count(w: Workload) -> int:
    return sum(len(j.tasks) for j in w.jobs)


# --- SLS ---------------------------------------------------------------------


@pytest.mark.parametrize("name", ["inputsls.json", "sls_dag.json"])
def test_sls_reference_counts(name: str) -> None:
    """Both files: `grep -c '"job.id"'` = 2 jobs, `grep -c container.host` =
    5 tasks (3 + 2), 3 distinct `/default-rack/nodeN` hosts, first seen in the
    order node1, node3, node2."""
    w = read_sls([TEST_RESOURCES / name], **SLS_DEFAULTS)
    assert [j.job_id for j in w.jobs] == ["job_1", "job_2"]
    assert [len(j.tasks) for j in w.jobs] == [3, 2]
    assert task_count(w) == 5
    assert w.trace_nodes == [NodeSpec(f"node{i}", "/default-rack") for i in (1, 3, 2)]
    job1, job2 = w.jobs
    assert (job1.submit_ms, job1.end_ms, job1.queue, job1.user) == (
        0,
        95375,
        "sls_queue_1",
        "default",
    )
    assert (job2.submit_ms, job2.end_ms, job2.queue) == (105204, 197256, "sls_queue_2")
    # container.end.ms - container.start.ms, e.g. 23707 - 6664 for the first task.
    assert [t.duration_ms for t in job1.tasks] == [17043, 14928, 17843]
    assert [t.hosts for t in job1.tasks] == [("node1",), ("node3",), ("node2",)]
    assert all(t.priority == 20 and t.task_type == "map" for t in job1.tasks + job2.tasks)
    assert all(t.resource == CONTAINER and t.execution_type == "GUARANTEED" for t in job1.tasks)
    assert job1.am_resource == AM


def test_sls_inputsls_details() -> None:
    w = read_sls([TEST_RESOURCES / "inputsls.json"], **SLS_DEFAULTS)
    assert [j.am_type for j in w.jobs] == ["mapreduce", "mapreduce"]
    assert [t.allocation_id for t in w.jobs[0].tasks] == [1, 2, 2]
    assert [t.allocation_id for t in w.jobs[1].tasks] == [-1, -1]


def test_sls_dag_keys() -> None:
    """sls_dag.json names its AM type with `yarn.sls.am.type` and delays
    requests with `container.request.delay`."""
    w = read_sls([TEST_RESOURCES / "sls_dag.json"], **SLS_DEFAULTS)
    assert [j.am_type for j in w.jobs] == ["generic", "generic"]
    assert [j.params["am_type"] for j in w.jobs] == ["dag", "dag"]
    assert [t.request_delay_ms for t in w.jobs[0].tasks] == [1000, 1500, 0]


def test_sls_optional_keys_and_defaults(tmp_path: Path) -> None:
    path = write_json(
        tmp_path,
        "jobs.json",
        {"num.nodes": 4, "num.racks": 2},
        {
            "am.type": "stream",
            "job.start.ms": "500",
            "job.priority": 3,
            "job.label.expression": "gpu",
            "am.memory-mb": 4096,
            "am.gpu": 1,
            "job.tasks": [
                {
                    "count": 2,
                    "container.host": "node9",
                    "container.duration.ms": 1000,
                    "container.type": "reduce",
                    "container.memory-mb": 512,
                    "container.gpu": 2,
                    "container.execution.type": "OPPORTUNISTIC",
                },
                {"duration.ms": 7, "container.memory-mb": 256, "container.request.delay": -5},
            ],
        },
    )
    w = read_sls([path], **{**SLS_DEFAULTS, "resource_types": ("gpu",)})
    (job,) = w.jobs
    assert (job.job_id, job.am_type, job.submit_ms, job.end_ms) == ("0", "stream", 500, None)
    assert (job.queue, job.user, job.priority) == ("default", "default", 3)
    assert job.params == {"am_type": "stream", "label_expression": "gpu"}
    assert job.am_resource == Resource(4096, 2, {"gpu": 1})
    a, b, c = job.tasks
    assert a == b
    assert (a.task_type, a.priority, a.duration_ms, a.hosts) == ("reduce", 20, 1000, ("node9",))
    assert a.resource == Resource(512, 1, {"gpu": 2})
    assert a.execution_type == "OPPORTUNISTIC"
    assert (c.task_type, c.duration_ms, c.resource, c.hosts) == ("map", 7, Resource(256, 1), ())
    assert c.request_delay_ms == 0
    # num.nodes/num.racks generate /rack<i % racks>/node<i>; node9 has no rack.
    assert [(n.rack, n.host) for n in w.trace_nodes] == [
        ("/rack0", "node0"),
        ("/rack1", "node1"),
        ("/rack0", "node2"),
        ("/rack1", "node3"),
        ("/default-rack", "node9"),
    ]


def test_sls_job_count_repeats_with_sls_numbering(tmp_path: Path) -> None:
    """SLS numbers AMs 0, 1, 2, ... across the run and uses that number as
    the id of jobs without `job.id` or with `job.count` > 1."""
    task = {"container.duration.ms": 10}
    path = write_json(
        tmp_path,
        "jobs.json",
        {"job.id": "single", "job.tasks": [task]},
        {"job.id": "ignored", "job.count": 3, "job.start.ms": 5, "job.tasks": [task]},
    )
    w = read_sls([path], **SLS_DEFAULTS)
    assert [j.job_id for j in w.jobs] == ["single", "1", "2", "3"]
    assert [j.submit_ms for j in w.jobs] == [0, 5, 5, 5]


def test_sls_jobs_sorted_by_submit_then_id(tmp_path: Path) -> None:
    task = {"container.duration.ms": 10}
    path = write_json(
        tmp_path,
        "jobs.json",
        {"job.id": "b", "job.start.ms": 10, "job.tasks": [task]},
        {"job.id": "c", "job.start.ms": 5, "job.tasks": [task]},
        {"job.id": "a", "job.start.ms": 10, "job.tasks": [task]},
    )
    assert [j.job_id for j in read_sls([path], **SLS_DEFAULTS).jobs] == ["c", "a", "b"]


def test_sls_accepts_json_array(tmp_path: Path) -> None:
    path = tmp_path / "jobs.json"
    path.write_text(json.dumps([{"job.id": "x", "job.tasks": [{"container.duration.ms": 1}]}]))
    assert [j.job_id for j in read_sls([path], **SLS_DEFAULTS).jobs] == ["x"]


def test_sls_equal_tasks_are_one_object_across_jobs(tmp_path: Path) -> None:
    """Equal task shapes (even in different jobs) are one shared TaskSpec and
    Resource, so a large trace costs a reference per task; different
    durations or hosts stay distinct, and every job still reads its own."""
    short = {"container.start.ms": 0, "container.end.ms": 60_000, "container.memory-mb": 2048}
    long = {**short, "container.end.ms": 90_000}
    local = {**short, "container.host": "/rack1/h1"}
    path = write_json(
        tmp_path,
        "jobs.json",
        {"job.id": "a", "job.tasks": [short, long, dict(short), local]},
        {"job.id": "b", "job.tasks": [dict(long), dict(local), dict(short)]},
    )
    a, b = read_sls([path], **SLS_DEFAULTS).jobs
    assert [t.duration_ms for t in a.tasks] == [60_000, 90_000, 60_000, 60_000]
    assert [t.hosts for t in b.tasks] == [(), ("h1",), ()]
    assert a.tasks[0] is a.tasks[2] is b.tasks[2]
    assert a.tasks[1] is b.tasks[0]
    assert a.tasks[3] is b.tasks[1]
    assert a.tasks[0] is not a.tasks[3] and a.tasks[0] != a.tasks[3]
    assert len({id(t.resource) for j in (a, b) for t in j.tasks}) == 1
    assert a.tasks[0].resource == Resource(2048, 1)


def test_job_wire_shares_equal_task_maps_and_reads_back_equal(tmp_path: Path) -> None:
    """`JobSpec.to_wire` hands equal tasks one map; `from_wire` gives equal
    jobs back (from the shared maps or from a msgpack round trip, which has
    none) with equal tasks as one object."""
    task = {"container.duration.ms": 10}
    other = {"container.duration.ms": 20, "container.host": "/r/h"}
    path = write_json(tmp_path, "jobs.json", {"job.id": "a", "job.tasks": [task, other, task]})
    (job,) = read_sls([path], **SLS_DEFAULTS).jobs
    wire = job.to_wire()
    assert wire["tasks"][0] is wire["tasks"][2] and wire["tasks"][0] is not wire["tasks"][1]
    assert wire["tasks"][0]["resource"] is wire["tasks"][1]["resource"]
    bytes_wire = msgpack.unpackb(msgpack.packb(wire), raw=False)
    for m in (wire, bytes_wire):
        back = JobSpec.from_wire(m)
        assert back == job
        assert back.tasks[0] is back.tasks[2] and back.tasks[1] is not back.tasks[0]


# --- Rumen ---------------------------------------------------------------------


def test_rumen_reference_counts() -> None:
    """`grep -c '"jobID"'` = 2 jobs; `grep -c '"taskType" : "MAP"'` = 192
    maps (96 per job), 0 reduces, 192 attempts (one per task); the
    `hostName`s are 4 hosts a2115..a2118.smile.com on /default-rack."""
    w = read_rumen([RUMEN], **DEFAULTS)
    assert [j.job_id for j in w.jobs] == ["job_1369942127770_1205", "job_1369942127770_1206"]
    assert [len(j.tasks) for j in w.jobs] == [96, 96]
    assert {t.task_type for j in w.jobs for t in j.tasks} == {"map"}
    assert {t.priority for j in w.jobs for t in j.tasks} == {20}
    assert sorted(w.trace_nodes, key=lambda n: n.host) == [
        NodeSpec(f"a211{i}.smile.com", "/default-rack") for i in (5, 6, 7, 8)
    ]
    job1, job2 = w.jobs
    # submitTime 1371222054499 is the baseline; job 2 at 1371222159703.
    assert (job1.submit_ms, job1.end_ms) == (0, 99375)
    assert (job2.submit_ms, job2.end_ms) == (105204, 197256)
    assert (job1.queue, job1.user, job1.am_type, job1.am_resource) == (
        "sls_queue_1",
        "jenkins",
        "mapreduce",
        AM,
    )
    # First map's attempt: finishTime 1371222078206 - startTime 1371222061163.
    assert job1.tasks[0].duration_ms == 17043
    assert job1.tasks[0].hosts == ("a2118.smile.com",)
    assert all(t.resource == CONTAINER for t in job1.tasks)


def test_rumen_uses_last_attempt_and_reduce_priority(tmp_path: Path) -> None:
    def attempt(host: str, start: int, finish: int) -> dict[str, Any]:
        return {"hostName": host, "startTime": start, "finishTime": finish}

    path = write_json(
        tmp_path,
        "rumen.json",
        {
            "jobID": "job_a",
            "submitTime": 1000,
            "finishTime": 9000,
            "mapTasks": [{"attempts": [attempt("/r1/h1", 1, 5), attempt("/r1/h2", 10, 30)]}],
            "reduceTasks": [{"attempts": [attempt("/r2/h3", 40, 90)]}],
        },
        {"jobID": "job_b", "submitTime": 500, "finishTime": 700, "user": "bob", "queue": "q"},
    )
    w = read_rumen([path], **DEFAULTS)
    job_a, job_b = w.jobs  # both at 0: ordered by id
    assert [(t.task_type, t.priority, t.duration_ms, t.hosts) for t in job_a.tasks] == [
        ("map", 20, 20, ("h2",)),
        ("reduce", 10, 50, ("h3",)),
    ]
    assert (job_a.queue, job_a.user) == ("default", "default")
    # Submitted before the first job: moved to 0, keeping its length.
    assert (job_b.submit_ms, job_b.end_ms, job_b.tasks) == (0, 200, ())
    assert [n.rack for n in w.trace_nodes] == ["/r1", "/r2"]


def test_rumen_to_sls_round_trip(tmp_path: Path) -> None:
    """Rumen -> rumen2sls -> SLS gives the same jobs, tasks and durations."""
    jobs_path, nodes_path = convert(RUMEN, tmp_path / "out")
    assert (jobs_path.name, nodes_path.name) == ("sls-jobs.json", "sls-nodes.json")
    from_rumen = read_rumen([RUMEN], **DEFAULTS)
    from_sls = read_sls([jobs_path], **SLS_DEFAULTS)
    assert len(from_sls.jobs) == len(from_rumen.jobs) == 2
    for a, b in zip(from_rumen.jobs, from_sls.jobs, strict=True):
        assert (a.job_id, a.submit_ms, a.end_ms, a.queue, a.user) == (
            b.job_id,
            b.submit_ms,
            b.end_ms,
            b.queue,
            b.user,
        )
        assert [t.duration_ms for t in a.tasks] == [t.duration_ms for t in b.tasks]
        assert a.tasks == b.tasks
    assert from_sls.trace_nodes == from_rumen.trace_nodes
    nodes = read_nodes_file(nodes_path)
    assert [n.host for n in nodes] == [f"a211{i}.smile.com" for i in (5, 6, 7, 8)]
    assert {n.rack for n in nodes} == {"/default-rack"}


def test_rumen_to_sls_writes_jacksons_layout(tmp_path: Path) -> None:
    """The layout RumenToSLSConverter produces (the SLS documentation's
    example was made from this very trace)."""
    jobs_path, nodes_path = convert(RUMEN, tmp_path, prefix="x")
    head = jobs_path.read_text().splitlines()[:15]
    assert head == [
        "{",
        '  "am.type" : "mapreduce",',
        '  "job.start.ms" : 0,',
        '  "job.end.ms" : 99375,',
        '  "job.queue.name" : "sls_queue_1",',
        '  "job.id" : "job_1369942127770_1205",',
        '  "job.user" : "jenkins",',
        '  "job.tasks" : [ {',
        '    "container.host" : "/default-rack/a2118.smile.com",',
        '    "container.start.ms" : 6664,',
        '    "container.end.ms" : 23707,',
        '    "container.priority" : 20,',
        '    "container.type" : "map"',
        "  }, {",
        '    "container.host" : "/default-rack/a2118.smile.com",',
    ]
    assert nodes_path.read_text().startswith('{\n  "rack" : "default-rack",\n  "nodes" : [ {\n')
    assert nodes_path.read_text().endswith('    "node" : "a2118.smile.com"\n  } ]\n}\n')
    with pytest.raises(InputError, match="already exists"):
        convert(RUMEN, tmp_path, prefix="x")


# --- topology --------------------------------------------------------------------


def test_nodes_file_reference_counts() -> None:
    """nodes.json: 5 rack objects x 4 node entries = 20 (`grep -c '"node"'`
    = 19 named, plus one empty `{}` in rack5 that SLS names `null`)."""
    nodes = read_nodes_file(TEST_RESOURCES / "nodes.json")
    assert len(nodes) == 20
    assert sorted({n.rack for n in nodes}) == [f"/rack{i}" for i in range(1, 6)]
    assert nodes[0] == NodeSpec("node1", "/rack1")
    assert nodes[-1] == NodeSpec("null", "/rack5")
    assert all(n.resource is None and n.labels == () for n in nodes)


def test_nodes_with_resources() -> None:
    """nodes-with-resources.json: one rack, 4 nodes; resources sit on the
    node (node1 2048/6, node4 6144/12), labels on node3 and node4."""
    nodes = read_nodes_file(
        TEST_RESOURCES / "nodes-with-resources.json", nm_default=Resource(8192, 8)
    )
    assert [n.host for n in nodes] == ["node1", "node2", "node3", "node4"]
    assert {n.rack for n in nodes} == {"/rack1"}
    assert [n.resource for n in nodes] == [Resource(2048, 6), None, None, Resource(6144, 12)]
    both = ("label1", "label2(exclusive=false)")
    assert [n.labels for n in nodes] == [(), (), both, both]


def test_nodes_file_partial_resource_and_duplicates(tmp_path: Path) -> None:
    path = write_json(
        tmp_path,
        "nodes.json",
        {"rack": "/r1", "nodes": [{"node": "a", "vcores": 3, "gpu": "2"}, {"node": "b"}]},
        {"nodes": [{"node": "c"}]},
        {"rack": "r1", "nodes": [{"node": "a", "vcores": 3, "gpu": "2"}]},
    )
    nodes = read_nodes_file(path, nm_default=Resource(4096, 4))
    assert nodes == [
        NodeSpec("a", "/r1", Resource(4096, 3, {"gpu": 2})),
        NodeSpec("b", "/r1"),
        NodeSpec("c", "/default-rack"),
    ]
    clash = write_json(
        tmp_path,
        "clash.json",
        {"rack": "r1", "nodes": [{"node": "a"}]},
        {"rack": "r2", "nodes": [{"node": "a"}]},
    )
    with pytest.raises(InputError, match="already on rack /r1"):
        read_nodes_file(clash)
    other = write_json(
        tmp_path,
        "other.json",
        {"rack": "r1", "nodes": [{"node": "a", "vcores": 3}]},
        {"rack": "r1", "nodes": [{"node": "a"}]},
    )
    with pytest.raises(InputError, match="listed twice on rack /r1 with other amounts"):
        read_nodes_file(other, nm_default=Resource(4096, 4))


# --- SYNTH -----------------------------------------------------------------------


@pytest.mark.parametrize(("name", "jobs"), [("syn.json", 10), ("syn_generic.json", 10)])
def test_synth_mapreduce_reference(name: str, jobs: int) -> None:
    """syn.json (flat format) and syn_generic.json (task list) describe the
    same class: num_jobs 10, num_nodes 20 with nodes_per_rack 4 (5 racks),
    maps at 20 with 1024 MB/1 vcore, reduces at 10 with 2048 MB/2 vcores,
    submissions in [1 s, 60 s), queue sls_queue_1, user foobar."""
    w = read_synth(TEST_RESOURCES / name, **DEFAULTS)
    assert len(w.jobs) == jobs
    assert len(w.trace_nodes) == 20
    assert len({n.rack for n in w.trace_nodes}) == 5
    assert w.trace_nodes[:2] == [NodeSpec("node0", "/rack0"), NodeSpec("node1", "/rack1")]
    assert w.jobs[0].submit_ms == 0
    assert all(0 <= j.submit_ms < 59_000 for j in w.jobs)
    for job in w.jobs:
        assert (job.am_type, job.queue, job.user, job.am_resource) == (
            "mapreduce",
            "sls_queue_1",
            "foobar",
            AM,
        )
        maps = [t for t in job.tasks if t.task_type == "map"]
        reduces = [t for t in job.tasks if t.task_type == "reduce"]
        assert maps and reduces and len(maps) + len(reduces) == len(job.tasks)
        assert {(t.priority, t.resource) for t in maps} == {(20, Resource(1024, 1))}
        assert {(t.priority, t.resource) for t in reduces} == {(10, Resource(2048, 2))}
        assert all(t.hosts and t.hosts[0].startswith("node") for t in job.tasks)


def test_synth_stream_reference() -> None:
    """syn_stream.json: 5 stream jobs of exactly 2 tasks (count val 2) of
    60000 ms, 4096 MB, 4 vcores, all submitted in the first second."""
    w = read_synth(TEST_RESOURCES / "syn_stream.json", **DEFAULTS)
    assert len(w.jobs) == 5
    assert task_count(w) == 10
    assert len(w.trace_nodes) == 20
    for job in w.jobs:
        assert (job.am_type, job.submit_ms, job.params["am_type"]) == ("stream", 0, "stream")
        assert [(t.task_type, t.duration_ms, t.resource) for t in job.tasks] == [
            ("stream", 60000, Resource(4096, 4))
        ] * 2


@pytest.mark.parametrize("name", ["syn.json", "syn_generic.json", "syn_stream.json"])
def test_synth_is_deterministic(name: str) -> None:
    path = TEST_RESOURCES / name
    first = read_synth(path, **DEFAULTS)
    assert read_synth(path, **DEFAULTS) == first
    assert read_synth(path, **DEFAULTS, seed=2) == first  # the file's rand_seed
    assert read_synth(path, **DEFAULTS, seed=99) != first


def synth_trace(job_class: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "num_nodes": 6,
        "nodes_per_rack": 3,
        "num_jobs": 4000,
        "rand_seed": 11,
        "workloads": [
            {
                "workload_name": "w1",
                "workload_weight": 3,
                "queue_name": "q1",
                "job_classes": [job_class],
                "time_distribution": [
                    {"time": 0, "weight": 66},
                    {"time": 60, "weight": 33},
                    {"time": 120, "jobs": 0},
                ],
            },
            {
                "workload_name": "w2",
                "workload_weight": 1,
                "queue_name": "q2",
                "job_classes": [job_class],
                "time_distribution": [{"time": 0, "weight": 1}],
            },
        ],
        **extra,
    }


def test_synth_samples_follow_configured_means(tmp_path: Path) -> None:
    """Over 4000 jobs, lognormal samples average to their configured mean
    (`val` is the mean, not mu), weights pick workloads and time buckets in
    proportion, and the reservation chance shows up as deadlines."""
    job_class = {
        "class_name": "c",
        "class_weight": 1,
        "type": "mapreduce",
        "duration": {"val": 100, "std": 30},
        "reservation": {"val": 0.25},
        "deadline_factor": {"val": 2},
        "tasks": [
            {
                "type": "map",
                "priority": 20,
                "count": {"val": 8, "std": 4},
                "time": {"val": 5000, "std": 2000},
                "max_memory": {"val": 3000, "std": 500},
                "max_vcores": {"val": 1},
            }
        ],
    }
    path = write_json(tmp_path, "syn.json", synth_trace(job_class))
    w = read_synth(path, **DEFAULTS)
    assert len(w.jobs) == 4000
    durations = [(j.end_ms - j.submit_ms) / 1000 for j in w.jobs]
    assert statistics.fmean(durations) == pytest.approx(100, rel=0.03)
    assert statistics.stdev(durations) == pytest.approx(30, rel=0.1)
    counts = [len(j.tasks) for j in w.jobs]
    assert statistics.fmean(counts) == pytest.approx(8, rel=0.05)
    times = [t.duration_ms for j in w.jobs for t in j.tasks]
    assert statistics.fmean(times) == pytest.approx(5000, rel=0.03)
    memory = [j.tasks[0].resource.memory for j in w.jobs if j.tasks]
    assert statistics.fmean(memory) == pytest.approx(3000, rel=0.03)
    q1 = [j for j in w.jobs if j.queue == "q1"]
    assert len(q1) / len(w.jobs) == pytest.approx(0.75, abs=0.03)
    # First bucket [0, 60) s with weight 66, second [60, 120) s with 33.
    late = [j for j in q1 if j.submit_ms >= 60_000 - w.jobs[0].submit_ms]
    assert len(late) / len(q1) == pytest.approx(1 / 3, abs=0.03)
    with_deadline = [j for j in w.jobs if "deadline_ms" in j.params]
    assert len(with_deadline) / len(w.jobs) == pytest.approx(0.25, abs=0.03)
    for j in with_deadline[:50]:
        assert j.params["deadline_ms"] == j.submit_ms + 2 * (j.end_ms - j.submit_ms)


def test_synth_norm_and_discrete_samples(tmp_path: Path) -> None:
    job_class = {
        "class_name": "d",
        "class_weight": 1,
        "type": "dag",
        "duration": {"val": 50, "std": 5, "dist": "NORM"},
        "reservation": {"val": 0},
        "deadline_factor": {"val": 1},
        "params": {"k": "v"},
        "tasks": [
            {
                "type": "worker",
                "count": {"discrete": [1, 3], "weights": [3, 1]},
                "time": {"val": 100},
                "max_memory": {"val": 10},
                "max_vcores": {"val": 0},
                "execution_type": "OPPORTUNISTIC",
            }
        ],
    }
    w = read_synth(write_json(tmp_path, "syn.json", synth_trace(job_class)), **DEFAULTS)
    durations = [(j.end_ms - j.submit_ms) / 1000 for j in w.jobs]
    assert statistics.fmean(durations) == pytest.approx(50, rel=0.02)
    counts = [len(j.tasks) for j in w.jobs]
    assert set(counts) == {1, 3}
    assert counts.count(1) / len(counts) == pytest.approx(0.75, abs=0.03)
    task = w.jobs[0].tasks[0]
    # SynthJob's minimums: 1024 MB and 1 vcore.
    assert (task.resource, task.priority, task.execution_type) == (
        Resource(1024, 1),
        0,
        "OPPORTUNISTIC",
    )
    job = w.jobs[0]
    assert (job.am_type, job.params["am_type"], job.params["job_params"]) == (
        "generic",
        "dag",
        {"k": "v"},
    )
    assert job.job_id == "job_job_mock_d_000000_0000"


# --- dispatch and errors -----------------------------------------------------------


@pytest.mark.parametrize(
    ("tracetype", "path", "jobs"),
    [
        ("SLS", TEST_RESOURCES / "inputsls.json", 2),
        ("sls", TEST_RESOURCES / "sls_dag.json", 2),
        ("Rumen", RUMEN, 2),
        ("synth", TEST_RESOURCES / "syn_stream.json", 5),
    ],
)
def test_read_trace_dispatches_case_insensitively(tracetype: str, path: Path, jobs: int) -> None:
    assert len(read_trace(tracetype, [str(path)], **SLS_DEFAULTS).jobs) == jobs


def test_unknown_trace_type_is_named() -> None:
    with pytest.raises(InputError) as err:
        read_trace("GRIDMIX", [str(RUMEN)], **SLS_DEFAULTS)
    assert "GRIDMIX" in str(err.value)
    assert "SLS, RUMEN, SYNTH" in str(err.value)


@pytest.mark.parametrize("tracetype", ["SLS", "RUMEN", "SYNTH"])
def test_missing_trace_file(tmp_path: Path, tracetype: str) -> None:
    missing = tmp_path / "absent.json"
    with pytest.raises(InputError) as err:
        read_trace(tracetype, [missing], **SLS_DEFAULTS)
    assert str(err.value) == f"{missing}: no such file"


@pytest.mark.parametrize(
    "reader",
    [
        lambda p: read_sls([p], **SLS_DEFAULTS),
        lambda p: read_rumen([p], **DEFAULTS),
        lambda p: read_synth(p, **DEFAULTS),
        read_nodes_file,
    ],
)
def test_missing_file_for_each_reader(tmp_path: Path, reader: Any) -> None:
    missing = tmp_path / "absent.json"
    with pytest.raises(InputError, match="no such file"):
        reader(missing)


@pytest.mark.parametrize(
    "source",
    [
        TEST_RESOURCES / "inputsls.json",
        RUMEN,
        TEST_RESOURCES / "nodes.json",
        TEST_RESOURCES / "syn.json",
    ],
)
def test_truncated_json_names_file_and_line(tmp_path: Path, source: Path) -> None:
    text = source.read_text()
    cut = text[: len(text) // 2]
    path = tmp_path / source.name
    path.write_text(cut)
    readers = {
        "inputsls.json": lambda: read_sls([path], **SLS_DEFAULTS),
        RUMEN.name: lambda: read_rumen([path], **DEFAULTS),
        "nodes.json": lambda: read_nodes_file(path),
        "syn.json": lambda: read_synth(path, **DEFAULTS),
    }
    with pytest.raises(InputError) as err:
        readers[source.name]()
    assert isinstance(err.value.where, int)
    assert 1 <= err.value.where <= cut.count("\n") + 1
    assert str(err.value).startswith(f"{path}:{err.value.where}: invalid JSON")


def test_sls_key_for_an_undeclared_type_is_left_out_with_one_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """SLS reads `container.<type>` only for declared types: a typo such as
    `container.count` (for `count`) would otherwise ask for a resource no node
    has, and the job would never run."""
    task = {"container.duration.ms": 5, "container.count": 3, "container.gpu": 1}
    jobs = [{"job.id": f"j{i}", "am.gpu": 1, "job.tasks": [task, task]} for i in range(2)]
    # `container.memory` is no resource's name either (memory's is memory-mb)
    jobs[1]["job.tasks"] = [{**task, "container.memory": 4096}]
    path = write_json(tmp_path, "jobs.json", *jobs)
    w = read_sls([path], **SLS_DEFAULTS)
    assert all(t.resource == Resource(1024, 1) for j in w.jobs for t in j.tasks)
    assert all(j.am_resource == AM for j in w.jobs)
    lines = capsys.readouterr().err.splitlines()
    # container.count, container.gpu, am.gpu, container.memory: once each
    assert len(lines) == 4, lines
    assert any(": container.memory: " in line for line in lines)
    assert lines[0].startswith(f"emu: warning: {path}:1: job 1, task 1: container.count: ")
    assert "not a declared resource type (yarn.resource-types: none)" in lines[0]
    assert any("am.gpu" in line for line in lines)
    w = read_sls([path], **{**SLS_DEFAULTS, "resource_types": ("gpu",)})
    assert w.jobs[0].tasks[0].resource == Resource(1024, 1, {"gpu": 1})
    assert "container.gpu" not in capsys.readouterr().err


def sls_job(**task: Any) -> dict[str, Any]:
    return {"job.id": "j", "job.tasks": [{"container.start.ms": 0, "container.end.ms": 5, **task}]}


@pytest.mark.parametrize(
    ("job", "fragment"),
    [
        ({**sls_job(), "job.start.ms": "soon"}, "job 2: job.start.ms: expected an integer"),
        ({**sls_job(), "job.start.ms": 1.5}, "job 2: job.start.ms: expected an integer"),
        ({**sls_job(), "job.tasks": {"a": 1}}, "job 2: job.tasks: expected an array"),
        ({**sls_job(), "job.user": ["x"]}, "job 2: job.user: expected a string"),
        (sls_job(**{"container.priority": True}), "job 2, task 1: container.priority: expected"),
        (sls_job(**{"container.end.ms": -5}), "task 1: container.end.ms: -5 is before"),
        (
            sls_job(**{"container.duration.ms": 0}),
            "container.duration.ms: task duration must be > 0",
        ),
        (sls_job(**{"container.duration.ms": -3}), "task duration must be > 0 ms, got -3"),
        ({"job.id": "j", "job.tasks": [{"container.start.ms": 1}]}, "task 1: no duration"),
        ({"job.id": "j"}, "job 2: job.tasks: missing or empty"),
        ({"job.id": "j", "job.tasks": []}, "job 2: job.tasks: missing or empty"),
        ({"job.id": "j", "job.tasks": [3]}, "job 2: task 1: expected an object"),
        (sls_job(**{"container.execution.type": "LAZY"}), "container.execution.type: expected one"),
        (sls_job(**{"container.gpu": "many"}), "container.gpu: expected an integer"),
        (sls_job(**{"container.host": "/"}), "container.host: no host name in '/'"),
        ({**sls_job(), "job.id": "first"}, "duplicate job id 'first'"),
    ],
)
def test_bad_sls_job_names_file_line_and_key(
    tmp_path: Path, job: dict[str, Any], fragment: str
) -> None:
    good = {"job.id": "first", "job.tasks": [{"container.duration.ms": 1}]}
    path = write_json(tmp_path, "jobs.json", good, job)
    with pytest.raises(InputError) as err:
        read_sls([path], **{**SLS_DEFAULTS, "resource_types": ("gpu",)})
    job_line = path.read_text().splitlines().index("{", 1) + 1
    assert str(err.value).startswith(f"{path}:{job_line}: ")
    assert fragment in str(err.value)


@pytest.mark.parametrize(
    ("job", "fragment"),
    [
        ({"submitTime": 1}, "jobID: missing"),
        ({"jobID": "j"}, "submitTime: missing"),
        ({"jobID": "j", "submitTime": "x"}, "submitTime: expected an integer"),
        ({"jobID": "j", "submitTime": 1, "mapTasks": [{"attempts": []}]}, "no attempt"),
        (
            {
                "jobID": "j",
                "submitTime": 1,
                "mapTasks": [{"attempts": [{"hostName": "/r/h", "startTime": 9, "finishTime": 4}]}],
            },
            "mapTasks[0], attempts[0]: finishTime: attempt duration must be > 0 ms, got -5",
        ),
    ],
)
def test_bad_rumen_job_names_key(tmp_path: Path, job: dict[str, Any], fragment: str) -> None:
    path = write_json(tmp_path, "rumen.json", job)
    with pytest.raises(InputError) as err:
        read_rumen([path], **DEFAULTS)
    assert str(err.value).startswith(f"{path}:1: job 1")
    assert fragment in str(err.value)


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        ({"num_jobs": -1}, "trace: num_jobs: must be >= 0"),
        ({"num_jobs": "ten"}, "trace: num_jobs: expected an integer"),
        ({"workloads": []}, "trace: workloads: missing or empty"),
        ({"workloads": [{"job_classes": []}]}, "workloads[0]: job_classes: missing or empty"),
    ],
)
def test_bad_synth_trace_names_key(tmp_path: Path, change: dict[str, Any], fragment: str) -> None:
    base = json.loads((TEST_RESOURCES / "syn_generic.json").read_text())
    path = write_json(tmp_path, "syn.json", {**base, **change})
    with pytest.raises(InputError) as err:
        read_synth(path, **DEFAULTS)
    assert str(err.value).startswith(f"{path}:1: ")
    assert fragment in str(err.value)


@pytest.mark.parametrize(
    ("sample", "fragment"),
    [
        ({"val": 1, "discrete": [1]}, "a constant {val} takes no dist"),
        ({"val": 1, "std": 1, "dist": "POISSON"}, "dist: expected LOGNORM or NORM"),
        ({"std": 1}, "needs val, val and std, or discrete"),
        ({"discrete": [1, 2], "weights": [1]}, "1 weights for 2 discrete values"),
        ({"discrete": ["a"]}, "discrete[0]: expected a number"),
    ],
)
def test_bad_synth_sample_names_task_key(
    tmp_path: Path, sample: dict[str, Any], fragment: str
) -> None:
    base = json.loads((TEST_RESOURCES / "syn_generic.json").read_text())
    base["workloads"][0]["job_classes"][0]["tasks"][0]["count"] = sample
    path = write_json(tmp_path, "syn.json", base)
    with pytest.raises(InputError) as err:
        read_synth(path, **DEFAULTS)
    assert "workloads[0], job_classes[0], tasks[0], count" in str(err.value)
    assert fragment in str(err.value)


def test_bad_nodes_file_names_key(tmp_path: Path) -> None:
    path = write_json(
        tmp_path, "nodes.json", {"rack": "r", "nodes": [{"node": "a", "labels": "x(y"}]}
    )
    with pytest.raises(InputError, match=r"rack entry 1, node 1: labels: bad label 'x\(y'"):
        read_nodes_file(path)
    path = write_json(tmp_path, "nodes2.json", {"rack": "r"})
    with pytest.raises(InputError, match="rack entry 1: nodes: missing"):
        read_nodes_file(path)


def test_task_wire_leaves_out_defaults_and_reads_every_field_back() -> None:
    plain = TaskSpec("map", 20, 5, Resource(1024, 1))
    assert set(plain.to_wire()) == {"type", "priority", "duration_ms", "resource"}
    full = TaskSpec("t", 3, 7, Resource(512, 2, {"gpu": 1}), ("h1", "h2"), "OPPORTUNISTIC", 9, 40)
    for spec in (plain, full):
        assert TaskSpec.from_wire(spec.to_wire()) == spec
        assert TaskSpec.from_wire(msgpack.unpackb(msgpack.packb(spec.to_wire()))) == spec

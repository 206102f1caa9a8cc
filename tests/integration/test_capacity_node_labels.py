"""Node labels in emu's CapacityScheduler: a job asking for a label runs only
on that partition's nodes; default-partition jobs never use an exclusive
partition, and use a non-exclusive one only while it is idle; a queue's
default-node-label-expression and its capacities per label take effect."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from emu import api
from emu.errors import InputError
from tests.fidelity_runs import replay_inputs

CS = "yarn.scheduler.capacity."
LABELS_ON = "yarn.node-labels.enabled"


def _xml(props: dict[str, str]) -> str:
    body = "".join(
        f"  <property>\n    <name>{k}</name>\n    <value>{v}</value>\n  </property>\n"
        for k, v in props.items()
    )
    return f"<?xml version='1.0'?>\n<configuration>\n{body}</configuration>\n"


def _job(job_id: str, queue: str, start_ms: int, count: int, label: str = "") -> dict[str, object]:
    job: dict[str, object] = {
        "am.type": "mapreduce",
        "job.start.ms": start_ms,
        "job.end.ms": start_ms + 600_000,
        "job.queue.name": queue,
        "job.id": job_id,
        "job.user": "u_" + queue,
        "job.tasks": [
            {
                "count": count,
                "container.start.ms": 0,
                "container.end.ms": 30_000,
                "container.priority": 20,
                "container.type": "map",
            }
        ],
    }
    if label:
        job["job.label.expression"] = label
    return job


def _run(
    tmp_path: Path,
    jobs: list[dict[str, object]],
    nodes: list[dict[str, str]],
    props: dict[str, str],
    site: dict[str, str] | None = None,
) -> tuple[api.Result, dict[str, set[str]]]:
    """Replay `jobs` on `nodes` (8 GB each); the nodes each job's
    containers ran on, by job id."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    trace = tmp_path / "trace.json"
    trace.write_text("\n".join(json.dumps(j) for j in jobs))
    topology = tmp_path / "nodes.json"
    topology.write_text(json.dumps({"rack": "r1", "nodes": nodes}))
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "capacity-scheduler.xml").write_text(_xml(props))
    (conf / "yarn-site.xml").write_text(_xml({LABELS_ON: "true", **(site or {})}))
    (conf / "sls-runner.xml").write_text(
        _xml({"yarn.sls.nm.memory.mb": "8192", "yarn.sls.nm.vcores": "8"})
    )
    # YARN's AM and NM timing (emu.timing): these tests are about the scheduler.
    result = api.replay(
        trace,
        nodes=topology,
        conf_dir=conf,
        output_dir=tmp_path / "out",
        container_log=True,
        timing="yarn",
    )
    return result, _placements(result)


def _placements(result: api.Result) -> dict[str, set[str]]:
    assert result.output_dir is not None
    apps = {j["app_id"]: j["job_id"] for j in result.jobs}
    where: dict[str, set[str]] = {}
    with (result.output_dir / "containers.csv").open() as f:
        for row in csv.DictReader(f):
            if row["event"] == "allocated":
                where.setdefault(apps[row["app"]], set()).add(row["node"])
    return where


TWO_QUEUES = {
    CS + "root.queues": "a,b",
    CS + "root.a.capacity": "50",
    CS + "root.b.capacity": "50",
    CS + "root.a.user-limit-factor": "10",
    CS + "root.b.user-limit-factor": "10",
    CS + "root.a.accessible-node-labels": "gpu",
    CS + "root.a.accessible-node-labels.gpu.capacity": "100",
}


def test_the_fidelity_case_keeps_each_partition_to_its_asks(tmp_path):
    """cap-node-labels: the gpu job only on the two gpu nodes, the default
    jobs never there but also on the idle non-exclusive node3, and the job
    asking for spare only on node3."""
    result = api.replay(
        **replay_inputs("cap-node-labels"), output_dir=tmp_path / "out", container_log=True
    )
    assert result.complete
    where = _placements(result)
    assert where["g_1"] == {"node1", "node2"}
    assert where["d_1"] == {"node3", "node4", "node5"}
    assert "node3" in where["d_2"] and not where["d_2"] & {"node1", "node2"}
    assert where["s_1"] == {"node3"}


def test_an_exclusive_partition_is_never_lent_and_a_label_job_waits_for_its_nodes(tmp_path):
    """With node1 an exclusive gpu node, the default job leaves it idle and
    the gpu job runs its 30 tasks there alone, eight at a time at most; the
    same trace without the label spreads the gpu job over both nodes."""
    jobs = [_job("big", "b", 0, 30), _job("gpu", "a", 1000, 30, "gpu")]
    nodes = [{"node": "node1", "labels": "gpu"}, {"node": "node2"}]
    result, where = _run(tmp_path / "labelled", jobs, nodes, TWO_QUEUES)
    assert result.complete
    assert where == {"big": {"node2"}, "gpu": {"node1"}}
    plain_jobs = [_job("big", "b", 0, 30), _job("gpu", "a", 1000, 30)]
    plain_nodes = [{"node": "node1"}, {"node": "node2"}]
    plain, where_plain = _run(tmp_path / "plain", plain_jobs, plain_nodes, TWO_QUEUES)
    assert where_plain["big"] == {"node1", "node2"}
    finish = {j["job_id"]: j["finish_s"] for j in result.jobs}
    finish_plain = {j["job_id"]: j["finish_s"] for j in plain.jobs}
    assert finish["big"] > finish_plain["big"]


def test_a_non_exclusive_partition_serves_default_asks_only_while_idle(tmp_path):
    """node1 is non-exclusive: the default job spills onto it, and a later
    job asking for its label waits only for those containers to end
    (without preemption), then runs there."""
    jobs = [_job("big", "b", 0, 40), _job("gpu", "a", 5000, 8, "gpu")]
    nodes = [{"node": "node1", "labels": "gpu(exclusive=false)"}, {"node": "node2"}]
    result, where = _run(tmp_path, jobs, nodes, TWO_QUEUES)
    assert result.complete
    assert where == {"big": {"node1", "node2"}, "gpu": {"node1"}}


def test_a_queues_default_label_expression_places_its_jobs(tmp_path):
    """Queue a's default-node-label-expression gpu sends its job, which
    names no label, to node1; queue b's job stays on node2."""
    props = {**TWO_QUEUES, CS + "root.a.default-node-label-expression": "gpu"}
    jobs = [_job("ja", "a", 0, 10), _job("jb", "b", 0, 10)]
    nodes = [{"node": "node1", "labels": "gpu"}, {"node": "node2"}]
    result, where = _run(tmp_path, jobs, nodes, props)
    assert result.complete
    assert where == {"ja": {"node1"}, "jb": {"node2"}}


def test_a_label_capacity_bounds_a_queue_in_its_partition(tmp_path):
    """Both queues may use gpu, a with maximum-capacity 25 % there (2 GB of
    node1's 8): its job holds at most two containers at once on node1."""
    props = {
        **TWO_QUEUES,
        CS + "root.a.accessible-node-labels.gpu.capacity": "25",
        CS + "root.a.accessible-node-labels.gpu.maximum-capacity": "25",
        CS + "root.b.accessible-node-labels": "gpu",
        CS + "root.b.accessible-node-labels.gpu.capacity": "75",
    }
    jobs = [_job("ja", "a", 0, 6, "gpu")]
    nodes = [{"node": "node1", "labels": "gpu"}, {"node": "node2"}]
    result, where = _run(tmp_path, jobs, nodes, props)
    assert result.complete
    assert where == {"ja": {"node1"}}
    # 1 GB AM + 1 GB task at a time: six 30 s tasks one after another.
    (job,) = result.jobs
    assert job["finish_s"] - job["start_s"] >= 6 * 30


def test_a_label_the_queue_cannot_access_rejects_the_job(tmp_path):
    """Queue b may use no label (a blank list; an unset one inherits root's
    `*`), so its job asking for gpu is rejected at submission."""
    props = {**TWO_QUEUES, CS + "root.b.accessible-node-labels": " "}
    jobs = [_job("jb", "b", 0, 2, "gpu"), _job("ja", "a", 0, 2)]
    nodes = [{"node": "node1", "labels": "gpu"}, {"node": "node2"}]
    result, _ = _run(tmp_path, jobs, nodes, props)
    states = {j["job_id"]: (j["state"], j["diagnostics"]) for j in result.jobs}
    assert states["jb"][0] == "FAILED"
    assert "queue=b doesn't have permission to access all labels" in states["jb"][1]
    assert states["ja"][0] == "FINISHED"


def test_a_job_waiting_on_a_label_its_queue_has_no_capacity_in_is_told_what_to_set(tmp_path):
    """Queue b may use gpu (it inherits root's `*`) but configures nothing
    for it: as in Hadoop (checked with --scheduler-impl hadoop) its maximum
    there is 0 and its gpu job waits for ever. The why-pending line leads
    with Hadoop's activity diagnostic and names the label and the property;
    setting that property, even to 0, lets the job run on idle gpu nodes."""
    jobs = [_job("jb", "b", 0, 2, "gpu"), _job("ja", "a", 0, 2)]
    nodes = [{"node": "node1", "labels": "gpu"}, {"node": "node2"}]
    result, _ = _run(tmp_path / "unset", jobs, nodes, TWO_QUEUES)
    assert not result.complete
    assert {j["job_id"]: j["state"] for j in result.jobs}["ja"] == "FINISHED"
    assert {e["why"] for e in result.why_pending["jb"]} == {
        "Queue hits max-capacity limit in partition gpu: root.b has no capacity there; "
        "set yarn.scheduler.capacity.root.b.accessible-node-labels.gpu.capacity"
    }
    props = {**TWO_QUEUES, CS + "root.b.accessible-node-labels.gpu.capacity": "0"}
    result, where = _run(tmp_path / "set", jobs, nodes, props)
    assert result.complete
    assert where["jb"] == {"node1"}


def test_preemption_reclaims_the_default_partition_and_leaves_labelled_nodes_alone(tmp_path):
    """Queue b's job fills the unlabelled node2 past b's guarantee; queue
    a's default job then takes containers back from it there. Queue a's gpu
    job on node1 is over a's default-partition share but in another
    partition: none of its containers is preempted."""
    site = {
        "yarn.resourcemanager.scheduler.monitor.enable": "true",
        "yarn.resourcemanager.monitor.capacity.preemption.max_wait_before_kill": "1000",
    }
    jobs = [
        _job("gpu", "a", 0, 20, "gpu"),
        _job("greedy", "b", 0, 30),
        _job("late", "a", 20_000, 4),
    ]
    nodes = [{"node": "node1", "labels": "gpu"}, {"node": "node2"}]
    result, where = _run(tmp_path, jobs, nodes, TWO_QUEUES, site)
    assert result.complete
    assert where["gpu"] == {"node1"} and where["late"] == {"node2"}
    assert result.output_dir is not None
    apps = {j["app_id"]: j["job_id"] for j in result.jobs}
    with (result.output_dir / "containers.csv").open() as f:
        preempted = [
            (apps[r["app"]], r["node"]) for r in csv.DictReader(f) if r["event"] == "preempted"
        ]
    assert preempted and set(preempted) == {("greedy", "node2")}


def test_labels_need_node_labels_enabled_as_in_hadoop(tmp_path):
    """Hadoop's RM refuses node labels unless yarn.node-labels.enabled is
    true; so does emu, naming the first labelled node and the property."""
    nodes = tmp_path / "nodes.json"
    nodes.write_text(json.dumps({"rack": "r1", "nodes": [{"node": "n1", "labels": "gpu"}]}))
    trace = tmp_path / "trace.json"
    trace.write_text(json.dumps(_job("j", "default", 0, 1)))
    with pytest.raises(InputError) as e:
        api.replay(trace, nodes=nodes, output_dir=tmp_path / "out")
    assert "node n1: labels" in str(e.value)
    assert "need yarn.node-labels.enabled=true" in str(e.value)


def test_a_native_scenario_gives_nodes_labels_and_jobs_a_label(tmp_path):
    """The gpu node (2 GB) holds the labelled job's AM and one task at a
    time, so its four 10 s tasks take 40 s; the unlabelled job runs its
    four at once on d1."""
    scenario = tmp_path / "labels.toml"
    scenario.write_text(
        """
[cluster]
  [[cluster.nodes]]
  host = "g1"
  memory_mb = 2048
  labels = "gpu"
  [[cluster.nodes]]
  host = "d1"

[config]
"yarn.node-labels.enabled" = true
"yarn.scheduler.capacity.root.queues" = "a"
"yarn.scheduler.capacity.root.a.capacity" = 100
"yarn.scheduler.capacity.root.a.accessible-node-labels" = "gpu"
"yarn.scheduler.capacity.root.a.accessible-node-labels.gpu.capacity" = 100
"yarn.scheduler.capacity.maximum-am-resource-percent" = 1.0

[[jobs]]
id = "on_gpu"
queue = "a"
label = "gpu"
  [[jobs.tasks]]
  count = 4
  duration_ms = 10000

[[jobs]]
id = "plain"
queue = "a"
  [[jobs.tasks]]
  count = 4
  duration_ms = 10000
"""
    )
    result = api.run_scenario(scenario, output_dir=tmp_path / "out")
    assert result.complete
    took = {j["job_id"]: j["finish_s"] - j["start_s"] for j in result.jobs}
    assert took["on_gpu"] >= 40 > 20 > took["plain"]


def test_a_label_the_cluster_does_not_have_rejects_the_job(tmp_path):
    """Queue a may use any label (root's `*`), but no node has gpu2 and no
    operator added it: RMAppManager refuses the submission, as Hadoop's
    SchedulerUtils.checkQueueLabelInLabelManager does."""
    props = {**TWO_QUEUES, CS + "root.a.accessible-node-labels": "*"}
    jobs = [_job("ja", "a", 0, 2, "gpu2"), _job("jb", "b", 0, 2)]
    nodes = [{"node": "node1", "labels": "gpu"}, {"node": "node2"}]
    result, _ = _run(tmp_path, jobs, nodes, props)
    states = {j["job_id"]: (j["state"], j["diagnostics"]) for j in result.jobs}
    assert states["ja"] == (
        "FAILED",
        "Invalid label resource request, cluster do not contain , label= gpu2",
    )
    assert states["jb"][0] == "FINISHED"

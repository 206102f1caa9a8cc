"""Capacities in resources (`[memory=...,vcores=...]`): queues guaranteed
amounts, not shares, so the order jobs finish in follows the amounts;
guarantees asked beyond the cluster are scaled down by their parent and
follow the cluster's size; a bad mix of kinds stops the run with one line
naming the queue."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from emu import api
from emu.cli import main
from emu.testing.capacity import GB, Harness

CS = "yarn.scheduler.capacity."


def _xml(props: dict[str, str]) -> str:
    body = "".join(
        f"  <property><name>{k}</name><value>{v}</value></property>\n" for k, v in props.items()
    )
    return f"<?xml version='1.0'?>\n<configuration>\n{body}</configuration>\n"


def _job(job_id: str, queue: str, user: str, tasks: int) -> dict[str, object]:
    return {
        "am.type": "mapreduce",
        "job.start.ms": 0,
        "job.end.ms": 600000,
        "job.queue.name": queue,
        "job.id": job_id,
        "job.user": user,
        "job.tasks": [
            {
                "count": tasks,
                "container.start.ms": 0,
                "container.end.ms": 20000,
                "container.priority": 20,
                "container.type": "map",
            }
        ],
    }


def _inputs(tmp_path: Path, capacities: dict[str, str]) -> tuple[Path, Path, Path]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    trace = tmp_path / "trace.json"
    trace.write_text("\n".join(json.dumps(_job(f"{q}_1", q, u, 48)) for q, u in ("ab", "bc")))
    nodes = tmp_path / "nodes.json"
    nodes.write_text(json.dumps({"rack": "r1", "nodes": [{"node": f"n{i}"} for i in range(4)]}))
    conf = tmp_path / "conf"
    conf.mkdir()
    props = {CS + "root.queues": "a,b", **capacities}
    for q in ("a", "b"):
        props[f"{CS}root.{q}.user-limit-factor"] = "1"
    (conf / "capacity-scheduler.xml").write_text(_xml(props))
    (conf / "sls-runner.xml").write_text(
        _xml({"yarn.sls.nm.memory.mb": "8192", "yarn.sls.nm.vcores": "8"})
    )
    return trace, nodes, conf


def _end_times(tmp_path: Path, capacities: dict[str, str]) -> dict[str, int]:
    trace, nodes, conf = _inputs(tmp_path, capacities)
    out = tmp_path / "out"
    api.replay(trace, nodes=nodes, conf_dir=conf, output_dir=out)
    lines = (out / "jobruntime.csv").read_text().splitlines()[1:]
    return {line.split(",")[0]: int(line.split(",")[2]) for line in lines}


def test_the_finishing_order_follows_the_amounts_not_the_percentages(tmp_path):
    """a is guaranteed 75 % but only 8 GB of the 32 GB cluster: in
    resources, b's 24 GB make its job finish first; in percent, a's does."""
    pct = _end_times(tmp_path / "pct", {CS + "root.a.capacity": "75", CS + "root.b.capacity": "25"})
    res = _end_times(
        tmp_path / "res",
        {
            CS + "root.a.capacity": "[memory=8192,vcores=8]",
            CS + "root.b.capacity": "[memory=24576,vcores=24]",
        },
    )
    assert pct["a_1"] < pct["b_1"]
    assert res["b_1"] < res["a_1"]


def _absolute_harness() -> Harness:
    return Harness(
        {
            CS + "root.queues": "a,b",
            CS + "root.a.capacity": "[memory=16384,vcores=8]",
            CS + "root.b.capacity": "[memory=32768,vcores=8]",
            CS + "root.b.maximum-capacity": "[memory=40960,vcores=32]",
        }
    )


async def test_effective_capacities_follow_the_cluster(autojump_clock):
    """root shares a short cluster out in proportion to what its children
    ask, per resource type (recalculateEffectiveMinRatio), and gives each
    what it asks once the cluster covers all of it; a maximum in resources
    caps the queue whatever the cluster's size."""
    h = _absolute_harness()
    a, b = h.sched.tree["root.a"], h.sched.tree["root.b"]
    h.node("n0", 24 * GB, 8)
    # 24 GB for 48 GB asked: half each; 8 vcores for 16 asked: half each.
    assert a.guaranteed(h.sched).memory == 8 * GB and a.guaranteed(h.sched).vcores == 4
    assert b.guaranteed(h.sched).memory == 16 * GB
    assert a.absolute_capacity == pytest.approx(1 / 3)
    assert b.effective_max(h.sched).memory == 24 * GB  # the cluster, below its maximum
    h.node("n1", 24 * GB, 8)
    h.node("n2", 24 * GB, 8)
    # 72 GB covers the 48 GB asked: the amounts themselves.
    assert a.guaranteed(h.sched).memory == 16 * GB and a.guaranteed(h.sched).vcores == 8
    assert a.absolute_capacity == pytest.approx(16 / 72)
    assert b.effective_max(h.sched).memory == 40 * GB
    info = {q["name"]: q for q in h.sched.queue_info("")}
    assert info["root.a"]["absolute_capacity"] == pytest.approx(100 * 16 / 72)


async def test_a_removed_node_shrinks_the_guarantees_again(autojump_clock):
    h = _absolute_harness()
    for i in range(3):
        h.node(f"n{i}", 24 * GB, 8)
    assert h.sched.tree["root.a"].guaranteed(h.sched).memory == 16 * GB
    h.sched.on_NODE_REMOVED("n2", h.ctx.nodes["n2"])
    h.sched.on_NODE_REMOVED("n1", h.ctx.nodes["n1"])
    assert h.sched.tree["root.a"].guaranteed(h.sched).memory == 8 * GB


async def test_a_percentage_before_a_sibling_in_resources_is_let_through(autojump_clock):
    """Hadoop's mix check forgets a percentage once it meets a queue in
    resources, so `a=25, b=[...]` runs (while `a=[...], b=25` is refused):
    a keeps 25 % of the cluster, b its 16 GB, and a maximum in resources on
    a queue in percent reads as 100 %."""
    h = Harness(
        {
            CS + "root.queues": "a,b",
            CS + "root.a.capacity": "25",
            CS + "root.a.maximum-capacity": "[memory=8192,vcores=8]",
            CS + "root.b.capacity": "[memory=16384,vcores=16]",
        }
    )
    for i in range(4):
        h.node(f"n{i}", 16 * GB, 16)
    a, b = h.sched.tree["root.a"], h.sched.tree["root.b"]
    assert a.guaranteed(h.sched).memory == 16 * GB
    assert a.effective_max(h.sched).memory == 64 * GB
    assert b.guaranteed(h.sched).memory == 16 * GB


@pytest.mark.parametrize(
    ("capacities", "words"),
    [
        (
            {CS + "root.a.capacity": "[memory=8192,vcores=8]", CS + "root.b.capacity": "50"},
            "root.queues: Parent queue 'root' have children queue used mixed of  weight mode, "
            "percentage and absolute mode",
        ),
        (
            {
                CS + "root.a.capacity": "[memory=8192,vcores=8]",
                CS + "root.b.capacity": "[memory=8192,vcores=8]",
                CS + "root.a.queues": "x",
                CS + "root.a.x.capacity": "100",
            },
            "root.a.queues: Parent=root.a: When absolute minResource is used, we must make sure "
            "both parent and child all use absolute minResource",
        ),
        (
            {
                CS + "root.a.capacity": "[memory=8192,vcores=8]",
                CS + "root.b.capacity": "[memory=8192,vcores=8]",
                CS + "root.a.queues": "x",
                CS + "root.a.x.capacity": "[memory=9216,vcores=1]",
            },
            "root.a.queues: Parent Queues capacity: <memory:8192, vCores:8> is less than to its "
            "children:<memory:9216, vCores:1> for queue:a",
        ),
        (
            {
                CS + "root.a.capacity": "[memory=8192,vcores=8]",
                CS + "root.a.maximum-capacity": "[memory=4096,vcores=8]",
                CS + "root.b.capacity": "[memory=8192,vcores=8]",
            },
            "root.a.capacity: Min resource configuration <memory:8192, vCores:8> is greater "
            "than its max value:<memory:4096, vCores:8> in queue:root.a",
        ),
        (
            {
                CS + "root.a.capacity": "[memory=8192,vcores=8,yarn.io/gpu=1]",
                CS + "root.b.capacity": "[memory=8192,vcores=8]",
            },
            "root.a.capacity: unknown resource type 'yarn.io/gpu'",
        ),
    ],
    ids=["absolute-then-percent", "parent-child", "sum", "min-max", "unknown-type"],
)
def test_a_bad_mix_is_one_error_naming_the_queue(tmp_path, capsys, capacities, words):
    trace, nodes, conf = _inputs(tmp_path, capacities)
    out = tmp_path / "out"
    rc = main(
        [
            "sls",
            "--tracetype=SLS",
            f"--tracelocation={trace}",
            f"--nodes={nodes}",
            f"--conf-dir={conf}",
            f"--output-dir={out}",
        ]
    )
    assert rc == 2
    lines = [x for x in capsys.readouterr().err.splitlines() if x.startswith("emu: error:")]
    assert len(lines) == 1
    assert words in lines[0]
    assert not out.exists()

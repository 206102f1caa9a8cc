"""Node labels changed while the cluster runs, as `yarn rmadmin` changes
them: a job asking for a label no node has waits until an operator puts it
on one; a node relabelled under running containers takes their usage to
its new partition (queue, user and AM usage), and back; bad [[changes]]
entries are one error naming the file and field; refusals at run time stop
the run with Hadoop's reason."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from emu import api
from emu.config.configuration import Configuration
from emu.errors import InputError
from emu.msg import catalogue as C
from emu.resources import ZERO, Resource
from emu.rm import node_labels
from emu.rm.scheduler.locality import ANY
from emu.scenario.native import load_changes
from emu.testing.cluster import ask
from emu.testing.rm import RMHarness
from tests.fidelity_runs import case_dir, replay_inputs

CASE = case_dir("cap-node-label-changes")
CS = "yarn.scheduler.capacity."


def _allocations(result: api.Result) -> list[tuple[int, str, str]]:
    """(time ms, job id, node) of each container allocated."""
    assert result.output_dir is not None
    jobs = {j["app_id"]: j["job_id"] for j in result.jobs}
    with (result.output_dir / "containers.csv").open() as f:
        return [
            (int(r["time_ms"]), jobs[r["app"]], r["node"])
            for r in csv.DictReader(f)
            if r["event"] == "allocated"
        ]


def _replay(tmp_path: Path, changes: Path) -> api.Result:
    return api.replay(
        **replay_inputs(CASE),
        output_dir=tmp_path / "out",
        container_log=True,
        changes=changes,
    )


def test_the_fidelity_case_follows_each_label_change(tmp_path):
    """cap-node-label-changes: f_1 asks for fast, which no node has until
    node5 takes it at 50 s: it starts then, on node5 only. After 70 s gpu
    work goes to node4 and never to node1; default-partition work stays
    off node5 from 50 s until node5 loses fast at 110 s."""
    result = _replay(tmp_path, CASE / "changes.toml")
    assert result.complete
    placed = _allocations(result)
    f_1 = [(t, n) for t, j, n in placed if j == "f_1"]
    assert f_1 and min(t for t, _ in f_1) >= 50_000
    assert {n for _, n in f_1} == {"node5"}
    gpu_late = {n for t, j, n in placed if j == "g_1" and t >= 70_000}
    assert "node4" in gpu_late and "node1" not in gpu_late
    assert not {n for t, j, n in placed if j == "g_1" and t < 70_000} & {"node4"}
    default = [(t, n) for t, j, n in placed if j in ("d_1", "d_2")]
    assert not [t for t, n in default if n == "node5" and 50_000 <= t < 110_000]


def test_without_the_changes_the_labelled_job_never_runs(tmp_path):
    """The same trace with only the label added: nothing has fast, so f_1
    never gets a container (the run stops at its end waiting)."""
    only_add = tmp_path / "changes.toml"
    only_add.write_text('[[changes]]\nat_ms = 30000\nkind = "add_node_labels"\nlabels = "fast"\n')
    result = _replay(tmp_path, only_add)
    assert not [j for _, j, _ in _allocations(result) if j == "f_1"][1:]


def _harness() -> RMHarness:
    conf = Configuration(
        {
            "yarn.resourcemanager.scheduler.class": "capacity",
            "yarn.node-labels.enabled": "true",
            CS + "root.queues": "a,b",
            CS + "root.a.capacity": "50",
            CS + "root.b.capacity": "50",
            CS + "root.accessible-node-labels.gpu.capacity": "100",
            CS + "root.a.accessible-node-labels": "gpu",
            CS + "root.a.accessible-node-labels.gpu.capacity": "100",
        }
    )
    rm = RMHarness(conf)
    rm.add_node("h1")
    rm.add_node("h2")
    return rm


async def test_running_containers_move_to_the_new_partition_and_back(autojump_clock) -> None:
    """An app of queue a runs its AM and two 1 GB containers on h1; h1 then
    takes gpu: the queue's, its parent's and the user's usage, and the AM's,
    leave the default partition for gpu, whose resource is h1's; taking the
    label off moves them back."""
    rm = _harness()
    app = rm.submit("job", queue="a", user="alice")
    rm.start_am(app, "h1")
    rm.allocate(app, [ask(20, ANY, 2)])
    rm.heartbeat("h1")
    rm.heartbeat("h1")  # one off-switch container per heartbeat
    assert len(rm.allocate(app)["allocated"]) == 2
    sched = rm.ctx.scheduler
    leaf = sched.tree["root.a"]
    three = Resource(3072, 3)
    assert leaf.used == three and leaf.am_used == Resource(1024, 1)

    def admin(mtype: str, **fields: object) -> None:
        reply = rm.call(C.ADMIN, mtype, **fields)
        assert reply["ok"], reply

    admin("add_node_labels", labels=[["gpu", True]])
    admin("replace_labels_on_node", mapping=[["h1", "gpu"]])
    assert rm.ctx.nodes["h1"].labels == ("gpu",)
    assert leaf.used == ZERO and leaf.used_in["gpu"] == three
    assert sched.root.used == ZERO and sched.root.used_in["gpu"] == three
    user = leaf.users["alice"]
    assert user.used == ZERO and user.used_in["gpu"] == three
    assert leaf.am_used == ZERO and leaf.am_used_in["gpu"] == Resource(1024, 1)
    assert sched.partition_resource["gpu"] == Resource(8192, 8)
    assert sched.default_env.cluster == Resource(8192, 8)

    admin("replace_labels_on_node", mapping=[["h1", ""]])
    assert rm.ctx.nodes["h1"].labels == ()
    assert leaf.used == three and leaf.used_in["gpu"] == ZERO
    assert user.used == three and leaf.am_used == Resource(1024, 1)
    assert sched.partition_resource["gpu"] == ZERO


async def test_an_unused_label_has_no_resource_and_its_removal_frees_nodes(autojump_clock) -> None:
    """A label in the cluster with no node has zero resource; removing a
    label a queue does not use puts its nodes back in the default
    partition."""
    rm = _harness()
    assert rm.call(C.ADMIN, "add_node_labels", labels=[["gpu", True], ["spare", False]])["ok"]
    sched = rm.ctx.scheduler
    assert sched.partition_resource.get("spare", ZERO) == ZERO
    assert rm.call(C.ADMIN, "replace_labels_on_node", mapping=[["h2", "spare"]])["ok"]
    assert sched.partition_resource["spare"] == Resource(8192, 8)
    assert not sched.exclusive["spare"]
    reply = rm.call(C.ADMIN, "remove_node_labels", names=["gpu"])
    assert not reply["ok"]
    assert reply["reason"] == (
        "Cannot remove label=gpu, because queue=root.a is using this label. "
        "Please remove label on queue before remove the label"
    )
    assert rm.call(C.ADMIN, "remove_node_labels", names=["spare"])["ok"]
    assert rm.ctx.nodes["h2"].labels == ()
    assert "spare" not in sched.partition_resource
    assert sched.default_env.cluster == Resource(16384, 16)


async def test_a_host_entry_labels_an_nm_that_registers_later(autojump_clock) -> None:
    """`host=label` without -failOnUnknownNodes is kept for the host: an NM
    that registers there later comes up in that partition."""
    rm = _harness()
    assert rm.call(C.ADMIN, "add_node_labels", labels=[["gpu", True]])["ok"]
    assert rm.call(C.ADMIN, "replace_labels_on_node", mapping=[["h3", "gpu"]])["ok"]
    rm.add_node("h3")
    assert rm.ctx.nodes["h3"].labels == ("gpu",)
    assert rm.ctx.scheduler.partition_resource["gpu"] == Resource(8192, 8)


@pytest.mark.parametrize(
    ("entry", "field", "says"),
    [
        ('kind = "add_node_labels"\nlabels = "gpu(exclusive=maybe)"', "labels", "Input format"),
        ('kind = "remove_node_labels"\nlabels = " , "', "labels", "No cluster node-labels"),
        ('kind = "replace_labels_on_node"\nnodes = "node1=a,b"', "nodes", "2 labels specified"),
        ('kind = "replace_labels_on_node"\nnodes = "#"', "nodes", "No node-to-labels"),
        (
            'kind = "replace_labels_on_node"\nnodes = "node1=gpu"\nfail_on_unknown = "yes"',
            "fail_on_unknown",
            "expected true or false",
        ),
        ('kind = "add_node_labels"\nnodes = "x"', "nodes", "unknown key"),
    ],
)
def test_a_bad_label_change_names_its_file_and_field(tmp_path, entry, field, says):
    f = tmp_path / "changes.toml"
    f.write_text(f"[[changes]]\nat_ms = 1000\n{entry}\n")
    with pytest.raises(InputError) as e:
        load_changes(f, [], Resource(8192, 8))
    assert str(e.value).startswith(f"{f}: changes[0].{field}: ")
    assert says in str(e.value)


def test_a_refused_change_stops_the_run_with_hadoops_reason(tmp_path):
    """Removing gpu, which queue a uses, is refused at run time: the replay
    ends with one error naming the changes file, the entry and the reason."""
    bad = tmp_path / "changes.toml"
    bad.write_text('[[changes]]\nat_ms = 20000\nkind = "remove_node_labels"\nlabels = "gpu"\n')
    with pytest.raises(InputError) as e:
        _replay(tmp_path, bad)
    message = str(e.value)
    assert str(bad) in message and "changes[0]" in message
    assert "Cannot remove label=gpu, because queue=root.a is using this label" in message


def test_rmadmin_argument_syntax():
    """yarn rmadmin's parsing: exclusivity defaults to true, names are
    trimmed, a node without a label is `node=`, ports are kept."""
    assert node_labels.parse_add("gpu(exclusive=false), fast ,x( )") == [
        ("gpu", False),
        ("fast", True),
        ("x", True),
    ]
    assert node_labels.parse_names("a, b,,a") == ["a", "b"]
    assert node_labels.parse_mapping("n1=gpu n2:8041=spare\nn3= n4,fast") == [
        ("n1", "gpu"),
        ("n2:8041", "spare"),
        ("n3", ""),
        ("n4", "fast"),
    ]
    with pytest.raises(ValueError, match="node name cannot be empty"):
        node_labels.parse_mapping("=gpu")


def test_labels_put_on_a_node_survive_an_rm_restart(tmp_path):
    """The label store outlives the RM, as Hadoop's file store does: node2
    got gpu before the restart, and the gpu job submitted after it runs
    (with the labels lost no node would have gpu, and it would wait for
    ever)."""
    scenario = tmp_path / "labels.toml"
    scenario.write_text(
        """
[cluster]
nodes = [{ host = "node1", rack = "/r1" }, { host = "node2", rack = "/r1" }]
node_memory_mb = 8192
node_vcores = 8

[config]
"yarn.resourcemanager.scheduler.class" = "capacity"
"yarn.node-labels.enabled" = true
"yarn.resourcemanager.recovery.enabled" = true
"yarn.scheduler.capacity.root.accessible-node-labels.gpu.capacity" = 100
"yarn.scheduler.capacity.root.default.accessible-node-labels" = "gpu"
"yarn.scheduler.capacity.root.default.accessible-node-labels.gpu.capacity" = 100

[[jobs]]
id = "g"
submit_ms = 20000
label = "gpu"
  [[jobs.tasks]]
  count = 4
  duration_ms = 10000

[[changes]]
at_ms = 1000
kind = "add_node_labels"
labels = "gpu"

[[changes]]
at_ms = 2000
kind = "replace_labels_on_node"
nodes = "node2=gpu"

[[faults]]
at_ms = 10000
kind = "rm_restart"
"""
    )
    result = api.run_scenario(scenario, output_dir=tmp_path / "out")
    assert result.complete
    assert [(j["job_id"], j["state"]) for j in result.jobs] == [("g", "FINISHED")]


def test_the_readmes_label_changes_example_is_accepted(tmp_path):
    """The README's second [[changes]] example (node labels) loads as written."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme.split("### What-if from mid-trace", 1)[1]
    example = section.split("```toml\n", 2)[2].split("```", 1)[0]
    f = tmp_path / "changes.toml"
    f.write_text(example)
    changes = load_changes(f, [], Resource(8192, 8))
    assert [c.kind for c in changes] == [
        "add_node_labels",
        "replace_labels_on_node",
        "remove_node_labels",
    ]
    assert changes[0].labels == (("gpu", True), ("spare", False))
    assert changes[1].mapping == (("node1", "gpu"), ("node2", "spare"), ("node3", ""))
    assert changes[1].fail_on_unknown and changes[2].names == ("spare",)

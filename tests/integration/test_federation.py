"""Federations in one process on the virtual clock: the Router homes each
application by its policy, the AMRMProxy spreads its asks, unmanaged AMs
carry them in the other sub-clusters; runs are repeatable, outputs are
written per sub-cluster, and bad federation files are refused by name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from emu.errors import InputError
from emu.federation import description
from emu.federation.run import run_federation_file
from emu.federation.simulation import FederatedSimulation, run_federation
from tests.cli_runs import run_here

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "scenarios" / "federation" / "two-subclusters.toml"
PKG = "org.apache.hadoop.yarn.server.federation.policies.manager."


def weights(*ids: str, router: tuple[float, ...] = (), amrm: tuple[float, ...] = ()) -> str:
    def entries(ws: tuple[float, ...]) -> str:
        return ",".join(
            f'{{"key":{{"id":"{i}"}},"value":"{w}"}}' for i, w in zip(ids, ws, strict=True)
        )

    return (
        f'{{"routerPolicyWeights":{{"entry":[{entries(router or (1.0,) * len(ids))}]}},'
        f'"amrmPolicyWeights":{{"entry":[{entries(amrm or (1.0,) * len(ids))}]}},'
        '"headroomAlpha":"0.5"}'
    )


def federation(tmp_path: Path, manager: str, params: str = "", extra: str = "") -> Path:
    text = f"""
name = "t"
seed = 3
[federation]
"yarn.federation.policy-manager" = "{PKG}{manager}"
"yarn.federation.policy-manager-params" = '{params}'
[config]
"yarn.resourcemanager.scheduler.class" = "fair"
[[subclusters]]
id = "SC-1"
racks = 1
nodes_per_rack = 3
[[subclusters]]
id = "SC-2"
racks = 1
nodes_per_rack = 3
{extra}
[[jobs]]
id = "a"
submit_ms = 0
  [[jobs.tasks]]
  type = "map"
  count = 12
  duration_ms = 20000
  memory_mb = 2048
  hosts = ["SC-1-node1", "SC-2-node2"]
[[jobs]]
id = "b"
submit_ms = 5000
  [[jobs.tasks]]
  type = "map"
  count = 40
  duration_ms = 10000
  memory_mb = 1024
"""
    path = tmp_path / "fed.toml"
    path.write_text(text)
    return path


def test_the_example_finishes_every_job_spread_over_both_subclusters(tmp_path: Path) -> None:
    fed = description.load(EXAMPLE)
    run = run_federation_file(fed, fed.seed, tmp_path / "out")
    jobs = run.result.jobs
    assert [j["final_status"] for j in jobs] == ["SUCCEEDED"] * 3
    assert {j["home"] for j in jobs} == {"SC-1", "SC-2"}
    section = run.summary["federation"]
    assert section["router_policy"] == "LocalityRouterPolicy"
    assert section["unmanaged_ams"] > 0
    assert section["containers_across_sub_clusters"] > 0
    for sid in ("SC-1", "SC-2"):
        part = json.loads((tmp_path / "out" / sid / "summary.json").read_text())
        assert [r["job_id"] for r in part["jobs"]] == [
            j["job_id"] for j in jobs if j["home"] == sid
        ]
        assert (tmp_path / "out" / sid / "events.jsonl").stat().st_size > 0
    lines = (tmp_path / "out" / "jobruntime.csv").read_text().splitlines()
    assert len(lines) == 4
    spread = section["load_imbalance"]
    assert len(spread["t_ms"]) == len(spread["spread"]) > 10
    assert set(spread["memory_allocated_share"]) == {"SC-1", "SC-2"}
    assert 0 < spread["spread_max"] <= 1
    part = json.loads((tmp_path / "out" / "SC-1" / "summary.json").read_text())
    assert part["timeline"]["t_ms"] == spread["t_ms"]


def test_a_federated_replay_is_repeatable_and_the_seed_moves_it(tmp_path: Path) -> None:
    path = federation(tmp_path, "UniformBroadcastPolicyManager")
    fed = description.load(path)
    homes = []
    for seed in (3, 3, 4, 5, 6):
        run = run_federation_file(description.load(path), seed)
        homes.append([(j["home"], j["finished_ms"]) for j in run.result.jobs])
        assert all(j["final_status"] == "SUCCEEDED" for j in run.result.jobs)
    assert homes[0] == homes[1]
    assert len({tuple(h) for h in homes[1:]}) > 1, "the uniform draws never changed"
    del fed


def test_home_policy_keeps_every_container_at_home(tmp_path: Path) -> None:
    run = run_federation_file(description.load(federation(tmp_path, "HomePolicyManager")), 3)
    assert all(j["final_status"] == "SUCCEEDED" for j in run.result.jobs)
    assert run.summary["federation"]["unmanaged_ams"] == 0
    assert run.summary["federation"]["containers_across_sub_clusters"] == 0


def test_broadcast_asks_everywhere_and_the_am_releases_the_surplus(tmp_path: Path) -> None:
    run = run_federation_file(
        description.load(federation(tmp_path, "HashBroadcastPolicyManager")), 3
    )
    assert all(j["final_status"] == "SUCCEEDED" for j in run.result.jobs)
    s = run.summary["federation"]
    # Both apps hash to one home ("default"); every ask also went to the other.
    assert len({j["home"] for j in run.result.jobs}) == 1
    assert s["unmanaged_ams"] == 2
    # The surplus each AM gets is released at once: no AM waits out its expiry.
    assert all(j["attempts"] == 1 for j in run.result.jobs)
    total = sum(p["containers_total"] for p in s["sub_clusters"].values())
    assert total > 52 + 2, "broadcast asks should over-allocate (then released)"


def test_locality_multicast_sends_node_asks_where_the_node_is(tmp_path: Path) -> None:
    params = weights("SC-1", "SC-2", router=(1.0, 0.0))
    path = federation(tmp_path, "WeightedLocalityPolicyManager", params)
    run = run_federation_file(description.load(path), 3)
    assert all(j["final_status"] == "SUCCEEDED" for j in run.result.jobs)
    assert {j["home"] for j in run.result.jobs} == {"SC-1"}  # SC-2's router weight is 0
    assert run.summary["federation"]["sub_clusters"]["SC-2"]["containers_for_other_homes"] > 0


def test_a_router_that_rejects_everything_fails_every_job_saying_why(tmp_path: Path) -> None:
    path = federation(tmp_path, "RejectAllPolicyManager")
    done = run_here(["run", str(path)])
    assert done.returncode == 1
    assert "reject all routing requests by construction" in done.stdout + done.stderr
    run = run_federation_file(description.load(path), 3)
    assert [j["state"] for j in run.result.jobs] == ["FAILED", "FAILED"]
    assert run.summary["federation"]["submissions_refused"] == 2


def test_emu_run_takes_a_federation_file(tmp_path: Path) -> None:
    done = run_here(["run", str(EXAMPLE), "-o", str(tmp_path / "o")])
    assert done.returncode == 0, done.stderr
    assert "federation: WeightedLocalityPolicyManager" in done.stdout
    assert "SC-1" in done.stdout and "SC-2" in done.stdout
    refused = run_here(["run", str(EXAMPLE), "--rate", "10"])
    assert refused.returncode != 0 and "--rate" in refused.stderr
    home = f"{PKG}HomePolicyManager"
    fair = "yarn.resourcemanager.scheduler.class=fair"
    done = run_here(
        ["run", str(EXAMPLE), "-D", f"yarn.federation.policy-manager={home}", "-D", fair]
    )
    assert done.returncode == 0, done.stderr
    assert "federation: HomePolicyManager" in done.stdout
    assert "0 unmanaged AMs" in done.stdout


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            ('"yarn.federation.policy-manager" = "', '"yarn.federation.policy-manager" = "x.'),
            "unknown policy manager",
        ),
        (('id = "SC-2"', 'id = "SC-1"'), "sub-cluster 'SC-1' is listed twice"),
        (('id = "SC-2"\n', 'id = "SC-2"\nconf_dir = "nowhere"\n'), "conf_dir: no such directory"),
        (('id = "SC-2"\nracks = 1\nnodes_per_rack = 3',
          'id = "SC-2"\nnodes = [{host = "SC-1-node1"}]'),
         "host 'SC-1-node1' is in sub-cluster 'SC-1' too"),
    ],
)  # fmt: skip
def test_bad_federation_files_are_refused_by_file_and_key(
    tmp_path: Path, change: tuple[str, str], message: str
) -> None:
    path = federation(tmp_path, "HomePolicyManager")
    text = path.read_text()
    assert change[0] in text
    path.write_text(text.replace(change[0], change[1], 1))
    with pytest.raises(InputError, match=message) as e:
        description.load(path)
    assert str(path) in str(e.value)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ("{not json", "do not parse"),
        (weights("SC-1", "SC-2", router=(0.0, 0.0)), "every weight is zero"),
        (weights("SC-1", "SC-9"), "sub-cluster 'SC-9' is not in the federation"),
        ('{"routerPolicyWeights":{"SC-1":1}}', "Weight vector cannot be null/empty"),
    ],
)
def test_bad_weights_are_refused_naming_the_property(
    tmp_path: Path, params: str, message: str
) -> None:
    path = federation(tmp_path, "WeightedLocalityPolicyManager", params)
    with pytest.raises(InputError, match=message) as e:
        description.load(path)
    assert "yarn.federation.policy-manager-params" in str(e.value)
    done = run_here(["run", str(path)])
    assert done.returncode != 0
    assert done.stderr.strip().count("\n") == 0 and "policy-manager-params" in done.stderr


def test_the_global_policy_generator_writes_parent_queue_policies_on_its_interval(
    tmp_path: Path,
) -> None:
    capacity = """
"yarn.resourcemanager.scheduler.class" = "capacity"
"yarn.scheduler.capacity.root.queues" = "a,b"
"yarn.scheduler.capacity.root.a.capacity" = "50"
"yarn.scheduler.capacity.root.b.capacity" = "50"
"yarn.scheduler.capacity.root.a.queues" = "a1"
"yarn.scheduler.capacity.root.a.a1.capacity" = "100"
"""
    path = federation(tmp_path, "UniformBroadcastPolicyManager")
    text = path.read_text().replace('"yarn.resourcemanager.scheduler.class" = "fair"', capacity)
    text = text.replace(
        "[config]",
        '"yarn.federation.gpg.policy.generator.class" = "LoadBasedGlobalPolicy"\n'
        '"yarn.federation.gpg.policy.generator.interval" = "10s"\n[config]',
    )
    text = text.replace("submit_ms = 0\n", 'submit_ms = 0\nqueue = "a1"\n')
    text = text.replace("submit_ms = 5000\n", 'submit_ms = 5000\nqueue = "b"\n')
    path.write_text(text)
    fed = description.load(path)
    sim = FederatedSimulation(fed, 3)
    result = run_federation(sim)
    assert all(j["final_status"] == "SUCCEEDED" for j in result.jobs)
    assert sim.gpg is not None
    # One write for the parent queue "a" (leaves and root get none), at the first pass.
    assert [(t, q) for t, q, _ in sim.gpg.writes] == [(0, "a")]


def _with_outage(tmp_path: Path, recovery: bool) -> Path:
    # SC-2 first: the jobs before the outage are homed there, the one
    # during it (c) is placed by the Router's retry.
    params = weights("SC-1", "SC-2", router=(0.5, 1.0))
    path = federation(tmp_path, "PriorityBroadcastPolicyManager", params)
    text = path.read_text()
    if recovery:
        text = text.replace(
            "[config]\n", '[config]\n"yarn.resourcemanager.recovery.enabled" = true\n', 1
        )
    text += """
[[jobs]]
id = "c"
submit_ms = 60000
  [[jobs.tasks]]
  type = "map"
  count = 6
  duration_ms = 10000
  memory_mb = 1024
[[faults]]
kind = "subcluster_down"
target = "SC-2"
at_ms = 8000
[[faults]]
kind = "subcluster_up"
target = "SC-2"
at_ms = 120000
"""
    path.write_text(text)
    return path


def test_a_subcluster_down_and_back_with_recovery_loses_no_job(tmp_path: Path) -> None:
    path = _with_outage(tmp_path, recovery=True)
    run = run_federation_file(description.load(path), 3)
    by_job = {j["job_id"]: j for j in run.result.jobs}
    assert all(j["final_status"] == "SUCCEEDED" for j in run.result.jobs), by_job
    # Submitted while SC-2 was down: the Router's retry placed it on SC-1.
    assert by_job["c"]["home"] == "SC-1"
    # An app homed on SC-2 waited for its RM and finished after it came back.
    on_two = [j for j in run.result.jobs if j["home"] == "SC-2"]
    assert [j["job_id"] for j in on_two] == ["a", "b"]
    assert all(j["finished_ms"] > 120000 for j in on_two)


def test_a_subcluster_down_without_recovery_fails_its_apps_saying_why(tmp_path: Path) -> None:
    path = _with_outage(tmp_path, recovery=False)
    run = run_federation_file(description.load(path), 3)
    on_two = [j for j in run.result.jobs if j["home"] == "SC-2"]
    elsewhere = [j for j in run.result.jobs if j["home"] != "SC-2"]
    assert [j["job_id"] for j in on_two] == ["a", "b"]
    assert [j["job_id"] for j in elsewhere] == ["c"]
    assert all(j["state"] == "FAILED" and "restart" in j["diagnostics"] for j in on_two)
    assert all(j["final_status"] == "SUCCEEDED" for j in elsewhere)


def test_compare_replays_one_cluster_and_its_federation_of_the_same_nodes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from emu.federation import compare

    args = [str(tmp_path), "--nodes", "80", "--subclusters", "2", "--span-s", "60"]
    assert compare.main([*args, "--util", "0.5"]) == 0
    table = capsys.readouterr().out.splitlines()[1:]  # after the workload's line
    rows = {line[:20].strip(): line[20:].split() for line in table[1:]}
    assert table[0].split() == ["1", "2"]
    assert rows["jobs finished"][0] == rows["jobs finished"][1] != "0"
    assert rows["containers across"][0] == "0" and int(rows["containers across"][1]) > 0
    assert (tmp_path / "federation-2" / "out" / "SC-2" / "summary.json").is_file()


def test_a_sweep_over_policies_ships_each_subclusters_files(tmp_path: Path) -> None:
    from emu.sweep import points, spec
    from emu.sweep.task import run_task

    (tmp_path / "sc2").mkdir()
    (tmp_path / "sc2" / "yarn-site.xml").write_text(
        '<?xml version="1.0"?>\n<configuration><property>'
        "<name>yarn.resourcemanager.scheduler.class</name><value>fifo</value>"
        "</property></configuration>\n"
    )
    (tmp_path / "sc1-nodes.json").write_text(
        '{"rack": "r1", "nodes": [{"node": "a1"}, {"node": "a2"}, {"node": "a3"}]}\n'
    )
    path = federation(tmp_path, "WeightedLocalityPolicyManager", weights("SC-1", "SC-2"))
    text = path.read_text().replace(
        'id = "SC-1"\nracks = 1\nnodes_per_rack = 3', 'id = "SC-1"\nnodes_file = "sc1-nodes.json"'
    )
    path.write_text(text.replace('id = "SC-2"\n', 'id = "SC-2"\nconf_dir = "sc2"\n'))
    (tmp_path / "sweep.toml").write_text(
        '[sweep]\nname = "f"\nseeds = [1]\n[[trace]]\nname = "fed"\nscenario = "fed.toml"\n'
        '[[config]]\nname = "wl"\n[[config]]\nname = "home"\n[config.defines]\n'
        f'"yarn.federation.policy-manager" = "{PKG}HomePolicyManager"\n'
    )
    tasks = points.expand(spec.load(tmp_path / "sweep.toml"))
    assert [t.point.config for t in tasks] == ["wl", "home"]
    assert {"sc0/sc1-nodes.json", "sc1/conf/yarn-site.xml"} <= set(tasks[0].inputs)
    for task in tasks:
        done = run_task(task.argv, task.inputs, 120)
        assert done["exit_code"] == 0, done["error"]
        summary = json.loads(done["outputs"]["summary.json"])
        assert summary["complete"] and "SC-2/summary.json" in done["outputs"]
        unmanaged = summary["federation"]["unmanaged_ams"]
        assert (unmanaged > 0) == (task.point.config == "wl")

"""User weights (`user-settings.<user>.weight`): under a user limit, a
user weighing 2 gets twice the containers of one weighing 1; weights set
on a parent hold for the queues below unless a queue sets its own; a
weight a leaf's minimum-user-limit-percent cannot allow stops the run."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from emu import api
from emu.cli import main
from emu.config.configuration import Configuration
from emu.errors import InputError
from emu.resources import Resource, ResourceCalculator
from emu.rm.scheduler.capacity import resource_math as rm
from emu.rm.scheduler.capacity.config import parse

CS = "yarn.scheduler.capacity."
BASE = {
    CS + "root.queues": "a",
    CS + "root.a.capacity": "100",
    CS + "root.a.minimum-user-limit-percent": "25",
    CS + "root.a.user-limit-factor": "1",
}


def _xml(props: dict[str, str]) -> str:
    body = "".join(
        f"  <property><name>{k}</name><value>{v}</value></property>\n" for k, v in props.items()
    )
    return f"<?xml version='1.0'?>\n<configuration>\n{body}</configuration>\n"


def _job(user: str) -> dict[str, object]:
    return {
        "am.type": "mapreduce",
        "job.start.ms": 0,
        "job.end.ms": 600000,
        "job.queue.name": "a",
        "job.id": f"{user}_1",
        "job.user": user,
        "job.tasks": [
            {
                "count": 60,
                "container.start.ms": 0,
                "container.end.ms": 20000,
                "container.priority": 20,
                "container.type": "map",
            }
        ],
    }


def _run(tmp_path: Path, extra: dict[str, str], *args: str) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    trace = tmp_path / "trace.json"
    trace.write_text("\n".join(json.dumps(_job(u)) for u in ("alice", "bob", "carol", "dave")))
    nodes = tmp_path / "nodes.json"
    nodes.write_text(json.dumps({"rack": "r1", "nodes": [{"node": f"n{i}"} for i in range(4)]}))
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "capacity-scheduler.xml").write_text(_xml({**BASE, **extra}))
    (conf / "sls-runner.xml").write_text(
        _xml({"yarn.sls.nm.memory.mb": "8192", "yarn.sls.nm.vcores": "8"})
    )
    out = tmp_path / "out"
    api.replay(trace, nodes=nodes, conf_dir=conf, output_dir=out, container_log=True)
    return out


def _containers_at(out: Path, t_ms: int) -> dict[str, int]:
    """Each user's containers running at `t_ms` (allocated, not yet ended),
    from containers.csv (apps numbered in trace order)."""
    users = {"application_0_0001": "alice", "application_0_0002": "bob"}
    users |= {"application_0_0003": "carol", "application_0_0004": "dave"}
    held: dict[str, int] = dict.fromkeys(users.values(), 0)
    for line in (out / "containers.csv").read_text().splitlines()[1:]:
        time_ms, event, _, app, *_ = line.split(",")
        if event == "allocated" and int(time_ms) <= t_ms < int(time_ms) + 20000:
            held[users[app]] += 1
    return held


def test_a_weighted_user_gets_more_containers(tmp_path):
    """Four users share the queue: unweighted, each holds a quarter; with
    alice weighing 2 she holds twice bob's share."""
    plain = _containers_at(_run(tmp_path / "plain", {}), 10000)
    weighted = _containers_at(
        _run(tmp_path / "weighted", {CS + "root.a.user-settings.alice.weight": "2"}), 10000
    )
    assert plain["alice"] == plain["bob"]
    assert weighted["alice"] >= 2 * weighted["bob"] - 1
    assert weighted["alice"] > plain["alice"]


def _weights(props: dict[str, str]) -> dict[str, dict[str, float]]:
    cs = parse(Configuration(props), Resource(1024, 1), Resource(8192, 8))
    return {p: q.user_weights for p, q in cs.queues.items()}


def test_weights_are_inherited_and_overridden_below():
    w = _weights(
        {
            CS + "root.queues": "a,b",
            CS + "root.a.capacity": "50",
            CS + "root.b.capacity": "50",
            CS + "root.a.minimum-user-limit-percent": "25",
            CS + "root.b.minimum-user-limit-percent": "25",
            CS + "root.user-settings.alice.weight": "2",
            CS + "root.user-settings.bob.weight": "3",
            CS + "root.b.user-settings.alice.weight": "0.5",
        }
    )
    assert w["root.a"] == {"alice": 2.0, "bob": 3.0}
    assert w["root.b"] == {"alice": 0.5, "bob": 3.0}


def test_a_weight_above_what_the_user_limit_allows_is_refused(tmp_path, capsys):
    """minimum-user-limit-percent 25 allows weights up to 100 / 25 = 4; an
    inherited weight is checked against each leaf's own limit."""
    with pytest.raises(InputError, match="must be between 0 and 100 / 25"):
        _run(tmp_path / "api", {CS + "root.user-settings.alice.weight": "5"})
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "capacity-scheduler.xml").write_text(
        _xml({**BASE, CS + "root.user-settings.alice.weight": "5"})
    )
    nodes = tmp_path / "nodes.json"
    nodes.write_text(json.dumps({"rack": "r1", "nodes": [{"node": "n0"}]}))
    rc = main(
        [
            "sls",
            f"--nodes={nodes}",
            f"--conf-dir={conf}",
            f"--output-dir={tmp_path / 'o'}",
            "--tracetype=SLS",
            f"--tracelocation={tmp_path / 'api' / 'trace.json'}",
        ]
    )
    assert rc == 2
    lines = [x for x in capsys.readouterr().err.splitlines() if x.startswith("emu: error:")]
    assert len(lines) == 1
    assert "yarn.scheduler.capacity.root.user-settings.alice.weight: weight 5" in lines[0]


def test_the_pair_arithmetic_splits_by_weight_as_the_general_one():
    """`MemoryLimits` (the default calculator's pair arithmetic) gives the
    user limit `Limits` gives when active users are counted by weight, and
    a weight sum other than their number changes it."""
    calc = ResourceCalculator()
    fast, general = rm.MemoryLimits(calc), rm.Limits(calc)
    rnd = random.Random(7)
    minimum, cluster = Resource(1024, 1), Resource(64 * 1024, 64)
    changed = 0
    for _ in range(200):
        used = [Resource(rnd.randrange(0, 20) * 1024, rnd.randrange(0, 20)) for _ in range(3)]
        weight = rnd.choice([0.5, 1.7, 3.0, 2.25])
        args = (cluster, minimum, Resource(16 * 1024, 16), used, used, 10.0, 4.0)
        mx = lambda: Resource(48 * 1024, 48)  # noqa: E731
        got = fast.user_limit(*args, mx, weight)
        assert got == general.user_limit(*args, mx, weight)
        changed += got != fast.user_limit(*args, mx)
    assert changed

"""The CapacityScheduler in whole in-process clusters on the virtual clock:
the shipped elasticity-then-preemption scenario, Hadoop's SLS queues, the
admin refresh over the protocol, and a bad configuration through `emu run`."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from emu.cli import main
from emu.config.configuration import Configuration
from emu.config.hadoop_xml import load_xml
from emu.msg import catalogue as C
from emu.msg import types as P
from emu.rm.actor import ResourceManager, RMAddresses
from emu.scenario import native
from emu.simulation import run_virtual
from emu.testing.cluster import SCENARIOS, mr_job, scenario_simulation, simulation
from tests.reference import REFERENCE_DIR

GB = 1024


async def test_capacity_preemption_scenario_borrows_then_gives_back(autojump_clock) -> None:
    """scenarios/capacity-preemption.toml: `batch` (50 % guaranteed) borrows
    the idle half of the cluster; when `interactive` (50 %) has work, the
    preemption policy takes containers back from `batch` until it is within
    its guarantee plus the dead zone, and never below its guarantee; every
    job still finishes."""
    sc = native.load(SCENARIOS / "capacity-preemption.toml")
    samples: list[tuple[int, int, int]] = []
    preempted: dict[str, int] = {}

    def tick(rm: ResourceManager) -> None:
        s = rm.ctx.scheduler
        batch, interactive = s.queue_metrics("batch"), s.queue_metrics("interactive")
        samples.append((rm.ctx.now_ms(), batch.allocated.memory, interactive.allocated.memory))
        preempted.update(
            batch=batch.preempted_containers, interactive=interactive.preempted_containers
        )

    sim = scenario_simulation(sc, on_tick=tick)
    result = await sim.run()
    assert [(j["job_id"], j["state"], j["final_status"]) for j in result.jobs] == [
        ("batch", "FINISHED", "SUCCEEDED"),
        ("interactive", "FINISHED", "SUCCEEDED"),
    ]

    cluster, guarantee = 32 * GB, 16 * GB
    dead_zone = guarantee * 1.1

    def during(lo: int, hi: int) -> list[tuple[int, int, int]]:
        return [s for s in samples if lo <= s[0] < hi]

    # elasticity: alone, batch takes the whole cluster
    assert {(b, i) for _, b, i in during(30_000, 60_000)} == {(cluster, 0)}
    # the owner's demand arrives at 60 s: batch shrinks, interactive grows
    after = during(60_000, 300_000)
    lowest_batch = min(b for _, b, _ in after)
    assert guarantee <= lowest_batch <= dead_zone
    assert max(i for _, _, i in after) >= guarantee - 2 * GB
    # preemption is gradual (total_preemption_per_round), not one big kill
    first_interactive = next(t for t, _, i in after if i > 0)
    back_within = next(t for t, b, _ in after if b <= dead_zone)
    assert back_within - first_interactive >= 60_000
    # KILL_PREEMPTED took containers from batch only
    assert preempted["batch"] >= 10 and preempted["interactive"] == 0
    assert result.metrics["invalid_transitions"] == 0
    assert result.metrics["containers_allocated"] == 0


async def test_sls_sample_configuration_runs_jobs_in_sls_queues(autojump_clock) -> None:
    """Hadoop's SLS sample capacity-scheduler.xml unchanged: jobs submitted
    to sls_queue_1..3 (as SLS traces do) run in those queues."""
    conf = load_xml(REFERENCE_DIR / "sample-conf/capacity-scheduler.xml")
    conf.set("yarn.resourcemanager.scheduler.class", "capacity")
    jobs = [
        mr_job(f"job_{q}", i * 1000, maps=6, map_ms=30_000, queue=f"sls_queue_{q}")
        for i, q in enumerate((1, 2, 3))
    ]
    result = await simulation(jobs, conf=conf).run()
    assert [j["queue"] for j in result.jobs] == [f"root.sls_queue_{q}" for q in (1, 2, 3)]
    assert {j["state"] for j in result.jobs} == {"FINISHED"}


async def test_unknown_queue_fails_the_app_with_the_reason(autojump_clock) -> None:
    """RMAppManager: a rejected placement fails the app with the diagnostic."""
    conf = Configuration({"yarn.resourcemanager.scheduler.class": "capacity"})
    jobs = [mr_job("lost", 0, maps=1, queue="nowhere"), mr_job("ok", 0, maps=1)]
    result = await simulation(jobs, conf=conf).run()
    lost, ok = result.jobs
    assert lost["state"] == "FAILED"
    assert "submitted by user alice to unknown queue: nowhere" in lost["diagnostics"]
    assert ok["state"] == "FINISHED" and ok["queue"] == "root.default"


async def test_refresh_queues_over_the_admin_protocol(autojump_clock) -> None:
    """AdminService.refreshQueues: accepted changes apply, a bad one is
    refused with the reason and the running configuration stays."""
    conf = Configuration(
        {
            "yarn.resourcemanager.scheduler.class": "capacity",
            "yarn.scheduler.capacity.root.queues": "a,b",
            "yarn.scheduler.capacity.root.a.capacity": 50,
            "yarn.scheduler.capacity.root.b.capacity": 50,
        }
    )
    rm = ResourceManager(conf, RMAddresses.in_memory("refresh"))
    ok = rm.services.handle(
        C.ADMIN,
        P.request(
            "refresh_queues",
            1,
            properties={
                "yarn.scheduler.capacity.root.a.capacity": "30",
                "yarn.scheduler.capacity.root.b.capacity": "70",
            },
        ),
    )
    assert (ok["ok"], ok.get("reason")) == (True, None)
    bad = rm.services.handle(
        C.ADMIN,
        P.request(
            "refresh_queues", 2, properties={"yarn.scheduler.capacity.root.a.capacity": "60"}
        ),
    )
    assert bad["ok"] is False and "sum to 130" in bad["reason"]
    caps = {q["name"]: q["capacity"] for q in rm.ctx.scheduler.queue_info("")}
    assert caps == {"root": 100.0, "root.a": 30.0, "root.b": 70.0}


def test_bad_capacity_configuration_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """`emu run` on a scenario whose queue capacities exceed 100 at a level:
    one error line naming the property, exit code 2."""
    scenario = tmp_path / "bad.toml"
    scenario.write_text(
        """
[config]
"yarn.resourcemanager.scheduler.class" = "capacity"
"yarn.scheduler.capacity.root.queues" = "a,b"
"yarn.scheduler.capacity.root.a.capacity" = 70
"yarn.scheduler.capacity.root.b.capacity" = 40

[[jobs]]
id = "j"
  [[jobs.tasks]]
  duration_ms = 1000
"""
    )
    assert main(["run", str(scenario)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "yarn.scheduler.capacity.root.queues" in err[0]
    assert "sum to 110" in err[0]


def test_bad_number_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    scenario = tmp_path / "bad.toml"
    scenario.write_text(
        """
[config]
"yarn.scheduler.capacity.root.default.user-limit-factor" = "two"

[[jobs]]
id = "j"
  [[jobs.tasks]]
  duration_ms = 1000
"""
    )
    assert main(["run", str(scenario)]) == 2
    err = capsys.readouterr().err
    assert "config.yarn.scheduler.capacity.root.default.user-limit-factor" in err
    assert "expected a number" in err


def test_capacity_runs_are_deterministic() -> None:
    """Same scenario and seed, byte-identical event logs, with preemption,
    locality delay, reservations and several queues and users at work."""
    q = "yarn.scheduler.capacity."
    conf = Configuration(
        {
            "yarn.resourcemanager.scheduler.class": "capacity",
            q + "root.queues": "a,b",
            q + "root.a.capacity": 30,
            q + "root.b.capacity": 70,
            q + "root.a.maximum-capacity": 100,
            q + "root.a.user-limit-factor": 4,
            q + "root.b.minimum-user-limit-percent": 50,
            q + "node-locality-delay": 2,
            "yarn.resourcemanager.scheduler.monitor.enable": "true",
            "yarn.resourcemanager.monitor.capacity.preemption.max_wait_before_kill": 4000,
        }
    )

    def once() -> str:
        jobs = [
            mr_job("early", 0, maps=24, map_ms=90_000, memory=2048, queue="a", user="x"),
            mr_job("b1", 20_000, maps=10, map_ms=40_000, queue="b", user="y", hosts=("node1",)),
            mr_job("b2", 25_000, maps=10, map_ms=40_000, memory=3072, queue="b", user="z"),
        ]
        out = io.StringIO()
        run_virtual(simulation(jobs, conf=conf, seed=3), out)
        return out.getvalue()

    first = once()
    assert first == once()
    assert '"to": "FINISHED"' in first

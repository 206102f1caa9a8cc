"""Whole clusters under the FairScheduler on the virtual clock: the shipped
fair-* scenarios (DRF, weighted max-min, preemption), Hadoop's own
allocation files, reloads, and a bad allocation file through `emu run`."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import pytest

from emu import cli
from emu.metrics.eventlog import EventLog
from emu.resources import Resource
from emu.rm.actor import ResourceManager
from emu.simulation import Simulation, run_virtual
from emu.testing.cluster import scenario_simulation
from emu.workload import JobSpec, NodeSpec, TaskSpec, Workload
from tests.reference import REFERENCE_DIR


def tasks_by_queue(rm: ResourceManager) -> dict[str, Resource]:
    """Running non-AM containers' resources per leaf queue."""
    out: dict[str, Resource] = {}
    for sapp in rm.ctx.scheduler.apps.values():
        for c in sapp.live.values():
            if not c.is_am:
                out[sapp.queue] = out.get(sapp.queue, Resource()) + c.resource
    return out


async def test_drf_paper_example(autojump_clock):
    """The DRF paper's example (scenarios/fair-drf-paper.toml): on 9 CPUs and
    18 GB, A's <1 CPU, 4 GB> tasks and B's <3 CPUs, 1 GB> tasks settle at 3
    and 2, equal dominant shares of 2/3, through both waves of tasks."""
    samples: list[tuple[int, int, int, float, float]] = []

    def tick(rm: ResourceManager) -> None:
        now = rm.ctx.now_ms()
        if 30_000 <= now <= 290_000 or 330_000 <= now <= 590_000:
            used = tasks_by_queue(rm)
            a, b = used.get("root.userA", Resource()), used.get("root.userB", Resource())
            share_a = max(a.vcores / 9, a.memory / 18432)
            share_b = max(b.vcores / 9, b.memory / 18432)
            samples.append((now, a.memory // 4096, b.vcores // 3, share_a, share_b))

    result = await scenario_simulation("fair-drf-paper.toml", on_tick=tick).run()
    assert [j["state"] for j in result.jobs] == ["FINISHED", "FINISHED"]
    assert len(samples) > 500
    assert {(a, b) for _, a, b, _, _ in samples} == {(3, 2)}
    assert {(round(sa, 6), round(sb, 6)) for *_, sa, sb in samples} == {(round(2 / 3, 6),) * 2}


async def test_weighted_max_min(autojump_clock):
    """The seed's weighted max-min example (scenarios/fair-weighted.toml):
    weights 0.5/1/0.8 and demands 5/4/3 GB of 10 -> fair shares and usage 3/4/3."""
    usage: set[tuple[int, ...]] = set()
    shares: set[tuple[int, ...]] = set()

    def tick(rm: ResourceManager) -> None:
        if 20_000 <= rm.ctx.now_ms() <= 290_000:
            info = {q["name"]: q for q in rm.ctx.scheduler.queue_info("")}
            names = ("root.A", "root.B", "root.C")
            usage.add(tuple(info[n]["used"]["memory-mb"] // 1024 for n in names))
            shares.add(tuple(info[n]["fair_share"]["memory-mb"] for n in names))

    result = await scenario_simulation("fair-weighted.toml", on_tick=tick).run()
    assert [j["state"] for j in result.jobs] == ["FINISHED"] * 3
    assert usage == {(3, 4, 3)}
    assert shares == {(3072, 4096, 3072)}


async def test_starving_queue_gets_its_share_back(autojump_clock):
    """scenarios/fair-preemption.toml: the ad hoc queue, starved below its
    fair share, takes half the cluster back from batch through preemption;
    batch's AM is warned before each kill; both jobs finish."""
    seen: dict[str, Any] = {"adhoc_at": None, "warned": 0, "max_adhoc": 0}

    def tick(rm: ResourceManager) -> None:
        sched = rm.ctx.scheduler
        adhoc = sched.qm.get("adhoc").usage.memory
        seen["max_adhoc"] = max(seen["max_adhoc"], adhoc)
        if adhoc >= 8192 and seen["adhoc_at"] is None:
            seen["adhoc_at"] = rm.ctx.now_ms()
        for sapp in sched.apps.values():
            if sapp.queue == "root.batch":
                seen["warned"] = max(seen["warned"], len(sapp.to_preempt))

    out = io.StringIO()
    sim = scenario_simulation("fair-preemption.toml", on_tick=tick, events=EventLog(out))
    result = await sim.run()
    assert [j["state"] for j in result.jobs] == ["FINISHED", "FINISHED"]
    # adhoc arrives at 60 s: 10 s starvation timeout, 5 s warning for its AM,
    # then (after the re-check delay) for its tasks; its fair share is 8 GB
    assert seen["adhoc_at"] is not None and 75_000 < seen["adhoc_at"] < 120_000
    assert seen["max_adhoc"] == 8192
    assert seen["warned"] > 0
    lines = out.getvalue().splitlines()
    warnings = [ln for ln in lines if '"preempt_warn"' in ln]
    assert len(warnings) == 8
    assert all('"victim": "application_0_0001"' in ln for ln in warnings)
    batch = next(j for j in result.jobs if j["job_id"] == "batch")
    assert batch["attempts"] == 1


def test_preemption_run_is_deterministic():
    """Same scenario, same seed: byte-identical event logs."""

    def once() -> str:
        out = io.StringIO()
        run_virtual(scenario_simulation("fair-preemption.toml"), out)
        return out.getvalue()

    assert once() == once()


def small_sim(conf: dict[str, Any], jobs: list[tuple[str, str, str]]) -> Simulation:
    from emu.config.configuration import Configuration

    c = Configuration({"yarn.resourcemanager.scheduler.class": "fair", **conf})
    specs = [
        JobSpec(
            job_id,
            "generic",
            i * 1000,
            queue,
            user,
            Resource(1024, 1),
            tuple(TaskSpec("task", 20, 30_000, Resource(1024, 1)) for _ in range(3)),
        )
        for i, (job_id, queue, user) in enumerate(jobs)
    ]
    nodes = [NodeSpec(f"node{i}", "/rack1", Resource(8192, 8)) for i in (1, 2)]
    return Simulation(
        conf=c, nodes=nodes, workload=Workload(specs), faults=[], check_invariants=True
    )


@pytest.mark.parametrize(
    ("name", "extra", "jobs", "queues"),
    [
        (
            "sample-conf/fair-scheduler.xml",
            {},
            [("j1", "sls_queue_1", "jenkins"), ("j2", "root.sls_queue_3", "jenkins")],
            ["root.sls_queue_1", "root.sls_queue_3"],
        ),
        (
            "test-resources/fair-scheduler.xml",
            {},
            [("j1", "sls_queue_1", "jenkins"), ("j2", "sls_queue_2", "jenkins")],
            ["root.sls_queue_1.sls_queue_1-default", "root.sls_queue_2"],
        ),
        (
            "rm-allocation-files/test-fair-scheduler.xml",
            {},
            [("j1", "queue1", "u"), ("j2", "default", "u")],
            ["root.queue1", "root.u"],
        ),
        (
            "rm-allocation-files/fair-scheduler-conversion.xml",
            {"hadoop.user.group.static.mapping.overrides": "alice=hadoop_users;john=hadoop_users"},
            [("j1", "default", "alice"), ("j2", "root.default", "john")],
            ["root.users.alice", "root.default"],
        ),
    ],
)
async def test_hadoop_allocation_files_run_unchanged(
    name: str, extra: dict, jobs: list, queues: list, autojump_clock
):
    """Hadoop's fair-scheduler.xml files drive a cluster as they are: SLS
    queue names, a reservation queue (apps go to its -default child), and the
    conversion test file's root queue, ACLs and nested placement rules."""
    alloc = str(REFERENCE_DIR / name)
    sim = small_sim({"yarn.scheduler.fair.allocation.file": alloc, **extra}, jobs)
    result = await sim.run()
    assert [j["state"] for j in result.jobs] == ["FINISHED", "FINISHED"]
    assert [j["queue"] for j in result.jobs] == queues


async def test_allocation_file_reloads_when_it_changes(tmp_path: Path, autojump_clock):
    """AllocationFileLoaderService: a changed file is picked up within the
    reload interval; a broken one leaves the previous one in force."""
    path = tmp_path / "alloc.xml"
    body = '<allocations><queue name="a"><weight>{}</weight></queue><queue name="b"/></allocations>'
    path.write_text(body.format(1))
    seen: dict[int, int] = {}
    writes = {20_000: body.format(3), 50_000: "<allocations><queue name='a'></allocations>"}

    def tick(rm: ResourceManager) -> None:
        now = rm.ctx.now_ms()
        if now in writes:
            path.write_text(writes.pop(now))
            mtime = path.stat().st_mtime + now / 1000
            os.utime(path, (mtime, mtime))
        seen[now] = rm.ctx.scheduler.qm.get("a").fair_share.memory

    out = io.StringIO()
    jobs = [("ja", "a", "u"), ("jb", "b", "u")]
    sim = small_sim({"yarn.scheduler.fair.allocation.file": str(path)}, jobs)
    sim.on_tick, sim.events = tick, EventLog(out)
    for job in sim.workload.jobs:
        object.__setattr__(job, "tasks", job.tasks * 8)
    result = await sim.run()
    assert [j["state"] for j in result.jobs] == ["FINISHED", "FINISHED"]
    assert seen[15_000] == 8192  # equal weights: half of 16 GB
    assert seen[35_000] == 12288  # weight 3 of 4 after the reload (checked every 10 s)
    assert seen[75_000] == 12288  # the broken file was refused
    reloads = [ln for ln in out.getvalue().splitlines() if "fair_allocation_reload" in ln]
    assert len(reloads) == 2
    assert '"ok": true' in reloads[0] and '"ok": false' in reloads[1]


def test_invalid_allocation_file_exits_with_code_2(tmp_path: Path, capsys):
    """A bad allocation file stops `emu run` with one line naming the file,
    the line and the element, and exit code 2."""
    (tmp_path / "bad.xml").write_text(
        '<?xml version="1.0"?>\n<allocations>\n  <queue name="q">\n'
        "    <maxRunningApps>ten</maxRunningApps>\n  </queue>\n</allocations>\n"
    )
    scenario = tmp_path / "s.toml"
    scenario.write_text(
        '[config]\n"yarn.resourcemanager.scheduler.class" = "fair"\n'
        '"yarn.scheduler.fair.allocation.file" = "bad.xml"\n'
        '[[jobs]]\nid = "j"\n  [[jobs.tasks]]\n  duration_ms = 1000\n'
    )
    assert cli.main(["run", str(scenario)]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'bad.xml'}:4: <maxRunningApps>: not a number" in err

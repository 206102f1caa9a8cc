"""Whole in-process clusters on the virtual clock: jobs finish, failures are
survived, runs are reproducible."""

from __future__ import annotations

import gc
import io
import time

import trio

from emu.scenario.native import Fault
from emu.simulation import RUN_GC_THRESHOLD, run_virtual
from emu.testing.cluster import fifo_conf, mr_job, simulation


async def test_three_mapreduce_jobs_finish_on_four_nodes(autojump_clock):
    jobs = [
        mr_job("job_1", 0, maps=12, reduces=2, map_ms=3_000_000, reduce_ms=900_000),
        mr_job("job_2", 60_000, maps=8, reduces=1, map_ms=1_500_000),
        mr_job("job_3", 120_000, maps=20, reduces=4, map_ms=600_000, reduce_ms=1_200_000),
    ]
    result = await simulation(jobs).run()
    assert [j["state"] for j in result.jobs] == ["FINISHED"] * 3
    assert all(j["final_status"] == "SUCCEEDED" for j in result.jobs)
    # at least an hour of cluster time (on the virtual clock: no real wait)
    assert result.simulated_ms >= 3_600_000
    # every map and reduce ran once, plus one AM container per job
    assert result.metrics["containers_total"] == (12 + 2) + (8 + 1) + (20 + 4) + 3
    assert result.metrics["containers_allocated"] == 0
    assert result.metrics["invalid_transitions"] == 0
    # reduces start only after maps: job_1 cannot finish before map + reduce time
    job1 = result.jobs[0]
    assert job1["finished_ms"] - job1["started_ms"] >= 3_000_000 + 900_000


async def test_fifo_runs_jobs_in_submission_order(autojump_clock):
    # Each job fills the whole cluster (4 nodes x 8 GB): the second waits.
    jobs = [
        mr_job("big_1", 0, maps=28, reduces=0, map_ms=100_000, memory=1024),
        mr_job("big_2", 1_000, maps=28, reduces=0, map_ms=100_000, memory=1024),
    ]
    result = await simulation(jobs).run()
    first, second = result.jobs
    assert first["state"] == second["state"] == "FINISHED"
    assert second["finished_ms"] >= first["finished_ms"] + 90_000


async def test_lost_node_tasks_rerun_and_all_jobs_finish(autojump_clock):
    conf = fifo_conf({"yarn.nm.liveness-monitor.expiry-interval-ms": 60_000})
    jobs = [mr_job(f"job_{i}", i * 1000, maps=10, reduces=1, map_ms=200_000) for i in range(3)]
    sim = simulation(jobs, conf=conf, faults=[Fault(50_000, "nm_crash", "node1")])
    result = await sim.run()
    assert [j["state"] for j in result.jobs] == ["FINISHED"] * 3
    lost = [n for n in result.nodes if n["state"] == "LOST"]
    assert [n["node_id"] for n in lost] == ["node1"]
    # node1's containers were lost: more containers than tasks were needed
    assert result.metrics["containers_total"] > 3 * (10 + 1 + 1)
    assert result.metrics["lost_nodes"] == 1


async def test_lost_node_is_detected_after_the_expiry(autojump_clock):
    conf = fifo_conf({"yarn.nm.liveness-monitor.expiry-interval-ms": 30_000})
    jobs = [mr_job("job_1", 0, maps=4, reduces=0, map_ms=400_000)]
    events = io.StringIO()
    from emu.metrics.eventlog import EventLog

    sim = simulation(jobs, conf=conf, faults=[Fault(10_000, "nm_crash", "node2")])
    sim.events = EventLog(events)
    await sim.run()
    lines = [ln for ln in events.getvalue().splitlines() if '"id": "node2"' in ln and "LOST" in ln]
    assert len(lines) == 1
    t = int(lines[0].split('"t": ')[1].split(",")[0])
    # last heartbeat <= 10 s; monitor checks every expiry/3 => LOST in (40, 50] s
    assert 30_000 < t <= 10_000 + 30_000 + 10_000 + 1_000


async def test_hung_am_gets_a_second_attempt(autojump_clock):
    conf = fifo_conf({"yarn.am.liveness-monitor.expiry-interval-ms": 60_000})
    jobs = [mr_job("job_1", 0, maps=6, reduces=1, map_ms=120_000), mr_job("job_2", 0)]
    sim = simulation(jobs, conf=conf, faults=[Fault(30_000, "am_hang", "job_1")])
    result = await sim.run()
    by_job = {j["job_id"]: j for j in result.jobs}
    assert by_job["job_1"]["state"] == "FINISHED"
    assert by_job["job_1"]["attempts"] == 2
    assert by_job["job_2"]["attempts"] == 1


async def test_am_failing_every_attempt_fails_the_app(autojump_clock):
    conf = fifo_conf(
        {
            "yarn.am.liveness-monitor.expiry-interval-ms": 30_000,
            "yarn.resourcemanager.am.max-attempts": 1,
        }
    )
    jobs = [mr_job("job_1", 0, maps=2, map_ms=100_000)]
    result = await simulation(jobs, conf=conf, faults=[Fault(5_000, "am_hang", "job_1")]).run()
    assert result.jobs[0]["state"] == "FAILED"
    assert result.jobs[0]["attempts"] == 1
    assert result.metrics["apps_failed"] == 1


async def test_killed_app_ends_killed_and_frees_its_containers(autojump_clock):
    jobs = [mr_job("job_1", 0, maps=8, map_ms=500_000), mr_job("job_2", 0, maps=2)]
    result = await simulation(jobs, faults=[Fault(20_000, "kill_app", "job_1")]).run()
    by_job = {j["job_id"]: j for j in result.jobs}
    assert by_job["job_1"]["state"] == "KILLED"
    assert by_job["job_2"]["state"] == "FINISHED"
    assert result.metrics["allocated"]["memory-mb"] == 0


async def test_decommissioned_node_leaves_and_work_moves(autojump_clock):
    jobs = [mr_job("job_1", 0, maps=12, map_ms=100_000)]
    result = await simulation(jobs, faults=[Fault(10_000, "decommission", "node3")]).run()
    assert result.jobs[0]["state"] == "FINISHED"
    states = {n["node_id"]: n["state"] for n in result.nodes}
    assert states["node3"] == "DECOMMISSIONED"


def test_same_scenario_and_seed_give_byte_identical_outputs():
    def once(seed: int) -> tuple[str, list]:
        jobs = [
            mr_job(f"job_{i}", i * 7_000, maps=9, reduces=2, map_ms=50_000 + i) for i in range(5)
        ]
        sim = simulation(jobs, seed=seed, faults=[Fault(40_000, "nm_crash", "node2")])
        out = io.StringIO()
        result = run_virtual(sim, out)
        return out.getvalue(), result.jobs

    a, jobs_a = once(7)
    b, jobs_b = once(7)
    assert a == b
    assert jobs_a == jobs_b
    assert len(a.splitlines()) > 50
    c, _ = once(8)
    assert c != a  # the seed matters (heartbeat offsets differ)


def test_a_read_only_observer_does_not_change_the_outcome():
    jobs = [mr_job(f"job_{i}", i * 3_000, maps=7, reduces=1, map_ms=30_000 + i) for i in range(4)]
    plain = run_virtual(simulation(jobs, seed=5))
    samples: list[int] = []
    observed = simulation(jobs, seed=5)
    observed.on_tick = lambda rm: samples.append(rm.ctx.scheduler.used.memory)
    watched = run_virtual(observed)
    assert len(samples) > 50
    assert [j["finished_ms"] for j in plain.jobs] == [j["finished_ms"] for j in watched.jobs]


def test_a_wall_clock_run_still_works_after_a_virtual_one():
    """The virtual run's deterministic scheduling and clock do not leak: a
    plain trio.run afterwards sleeps in real time."""
    run_virtual(simulation([mr_job("a", maps=1, map_ms=1_000)]))

    async def nap() -> tuple[float, float]:
        t0, w0 = trio.current_time(), time.perf_counter()
        await trio.sleep(0.05)
        return trio.current_time() - t0, time.perf_counter() - w0

    clock_elapsed, wall_elapsed = trio.run(nap)
    assert clock_elapsed >= 0.05
    assert wall_elapsed >= 0.045  # a virtual clock would have jumped at once


async def test_am_asks_do_not_double_count_containers_already_placed(autojump_clock):
    """Asks are absolute: an AM that restated `*` while containers placed for
    it were still uncollected would get (and release) extra containers."""
    from emu.resources import Resource
    from emu.workload import JobSpec, TaskSpec

    tasks = tuple(
        TaskSpec("stage", 20, 20_000, Resource(1024, 1), request_delay_ms=delay)
        for delay in (0, 0, 0, 700, 1_300, 1_300, 2_500, 2_500, 2_500)
    )
    job = JobSpec("dag", "generic", 0, "default", "u", Resource(1024, 1), tasks)
    result = await simulation([job, mr_job("mr", 500, maps=12, reduces=2)]).run()
    assert [j["state"] for j in result.jobs] == ["FINISHED", "FINISHED"]
    assert result.metrics["containers_total"] == (len(tasks) + 1) + (12 + 2 + 1)


def test_a_run_collects_garbage_less_often_and_restores_the_threshold():
    """Simulation.run raises the collector's young threshold for the run
    only (emu.simulation.fewer_collections)."""
    before = gc.get_threshold()
    seen: list[tuple[int, int, int]] = []
    sim = simulation([mr_job("a", maps=2, map_ms=5_000)], seed=1)
    sim.on_tick = lambda rm: seen.append(gc.get_threshold())
    result = run_virtual(sim)
    assert [j["state"] for j in result.jobs] == ["FINISHED"]
    assert seen and set(seen) == {RUN_GC_THRESHOLD}
    assert gc.get_threshold() == before != RUN_GC_THRESHOLD

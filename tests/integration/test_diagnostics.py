"""Every failure says why: apps carry YARN's diagnostics and final status
into the summary, the event log and the terminal, and a run that can never
make progress stops with its reason instead of spinning."""

from __future__ import annotations

import json
from dataclasses import replace

from emu.cli import main
from emu.errors import SchedulerFailed, find_in_group
from emu.metrics import outputs
from emu.metrics.eventlog import EventLog
from emu.resources import Resource
from emu.rm.context import RMContext
from emu.rm.scheduler.fifo import FifoScheduler
from emu.rm.scheduler.scheduler_node import SchedulerNode
from emu.rm.settings import RMSettings
from emu.simulation import run_virtual
from emu.testing.cluster import fifo_conf, mr_job, simulation


def run(jobs, conf=None, n_nodes=2, **kw):
    result = run_virtual(simulation(jobs, n_nodes=n_nodes, conf=conf, **kw))
    data = outputs.summary("t", 0, result.jobs, result.metrics, result.simulated_ms, result.stalled)
    return result, {r["job_id"]: r for r in data["jobs"]}, data


def capacity_conf(props: dict[str, object]):
    conf = fifo_conf({"yarn.resourcemanager.scheduler.class": "capacity"})
    for k, v in props.items():
        conf.set(k, v)
    return conf


def test_unknown_queue_is_rejected_with_yarns_message_and_one_hint():
    jobs = [mr_job("j1", queue="no_such_queue"), mr_job("j2", queue="no_such_queue"), mr_job("ok")]
    _, rows, data = run(jobs, conf=capacity_conf({}))
    j1 = rows["j1"]
    assert (j1["state"], j1["final_status"]) == ("FAILED", "FAILED")
    assert j1["diagnostics"] == (
        f"Application {j1['app_id']} submitted by user alice to unknown queue: no_such_queue"
    )
    assert rows["ok"]["final_status"] == "SUCCEEDED"
    hint = data["failure_hint"]
    assert hint.startswith("2 of 3 jobs failed: submitted to a queue the scheduler does not have")
    assert "define the queue no_such_queue" in hint
    table = outputs.format_table(data)
    assert f"j1 ({j1['app_id']}) FAILED: Application {j1['app_id']} submitted" in table


def test_no_hint_when_failures_are_a_minority():
    _, _, data = run([mr_job("j1", queue="nope"), mr_job("a"), mr_job("b")], conf=capacity_conf({}))
    assert data["failure_hint"] is None


def test_am_above_maximum_allocation_fails_the_app_and_the_run_goes_on():
    big_am = replace(mr_job("big"), am_resource=Resource(16384, 1))
    _, rows, data = run([big_am, mr_job("ok")])
    big = rows["big"]
    assert (big["state"], big["final_status"], big["attempts"]) == ("FAILED", "FAILED", 0)
    assert big["diagnostics"].startswith(
        "Invalid resource request! Cannot allocate containers as requested resource is greater "
        "than maximum allowed allocation. Requested resource type=[memory-mb], "
        "Requested resource=<memory:16384, vCores:1>, maximum allowed allocation=<memory:8192"
    )
    assert rows["ok"]["state"] == "FINISHED" and data["complete"]


def test_task_above_maximum_allocation_fails_the_app_through_its_am():
    job = mr_job("big", maps=1, reduces=0, memory=9000)
    _, rows, _ = run([job, mr_job("ok")])
    big = rows["big"]
    assert (big["state"], big["final_status"]) == ("FINISHED", "FAILED")
    assert "Requested resource=<memory:9000, vCores:1>" in big["diagnostics"]
    assert rows["ok"]["final_status"] == "SUCCEEDED"


def test_attempts_exhausted_says_how_many_and_why_in_events(tmp_path):
    from emu.scenario.native import Fault

    conf = fifo_conf(
        {
            "yarn.resourcemanager.am.max-attempts": 1,
            "yarn.am.liveness-monitor.expiry-interval-ms": 10_000,
        }
    )
    sim = simulation([mr_job("hung")], conf=conf, faults=[Fault(5_000, "am_hang", "hung")])
    with (tmp_path / "events.jsonl").open("w") as f:
        result = run_virtual(sim, f)
    (job,) = result.jobs
    attempt = job["app_id"].replace("application", "appattempt") + "_000001"
    assert job["diagnostics"] == (
        f"Application {job['app_id']} failed 1 times due to ApplicationMaster for attempt "
        f"{attempt} timed out. Failing the application."
    )
    events = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    (summary,) = [e for e in events if e["event"] == "app_summary"]
    assert summary["diagnostics"] == job["diagnostics"]
    assert summary["final_status"] == "FAILED"


def test_ask_larger_than_every_node_fails_its_job_with_the_reason():
    """Within the configured maximum allocation (16 GB) but above every node
    (8 GB): the RM caps the maximum at the largest registered node
    (ClusterNodeTracker.getMaxAllowedAllocation) and refuses the ask; the job
    fails saying so and the other job runs."""
    conf = fifo_conf({"yarn.scheduler.maximum-allocation-mb": 16384})
    stuck = mr_job("stuck", maps=1, reduces=0, memory=12288)
    result, rows, data = run([stuck, mr_job("ok")], conf=conf)
    assert rows["ok"]["state"] == "FINISHED"
    assert rows["stuck"]["final_status"] == "FAILED"
    assert "maximum allowed allocation=<memory:8192" in rows["stuck"]["diagnostics"]
    assert data["complete"] is True
    assert result.simulated_ms < 3_600_000


def test_queue_whose_maximum_is_below_the_am_stops_the_run():
    conf = capacity_conf(
        {
            "yarn.scheduler.capacity.root.queues": "a,b",
            "yarn.scheduler.capacity.root.a.capacity": 95,
            "yarn.scheduler.capacity.root.b.capacity": 5,
            "yarn.scheduler.capacity.root.b.maximum-capacity": 5,
        }
    )
    jobs = [mr_job("small", queue="b"), mr_job("ok", queue="a")]
    _, rows, data = run(jobs, conf=conf, n_nodes=1)
    assert rows["ok"]["state"] == "FINISHED"
    assert data["complete"] is False
    reason = data["incomplete_reason"]
    assert f"{rows['small']['app_id']} (small) asks for its AM container" in reason
    assert "queue root.b never has room" in reason


def test_long_tasks_holding_the_cluster_are_not_a_stall():
    """Half an hour with nothing allocated while a long task holds the only
    node is progress waiting to happen, not a stall."""
    long = mr_job("long", maps=1, reduces=0, map_ms=1_800_000, memory=7168)
    _, rows, data = run([long, mr_job("next", submit_ms=1000, maps=1, reduces=0)], n_nodes=1)
    assert data["complete"] is True
    assert [rows[j]["final_status"] for j in ("long", "next")] == ["SUCCEEDED", "SUCCEEDED"]


def test_stalled_cli_run_writes_outputs_marked_incomplete_and_exits_1(tmp_path, capsys):
    scenario = tmp_path / "stuck.toml"
    scenario.write_text(
        "[cluster]\nracks = 1\nnodes_per_rack = 1\nnode_memory_mb = 4096\n"
        "[config]\n'yarn.resourcemanager.scheduler.class' = 'capacity'\n"
        "'yarn.scheduler.capacity.root.queues' = 'a,b'\n"
        "'yarn.scheduler.capacity.root.a.capacity' = 95\n"
        "'yarn.scheduler.capacity.root.b.capacity' = 5\n"
        "'yarn.scheduler.capacity.root.b.maximum-capacity' = 5\n"
        "[[jobs]]\nid = 'huge'\nqueue = 'b'\n[[jobs.tasks]]\nduration_ms = 1000\n"
    )
    out = tmp_path / "out"
    assert main(["run", str(scenario), "-o", str(out)]) == 1
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("emu: error: the run cannot make progress")
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] is False and "(huge)" in summary["incomplete_reason"]
    assert (out / "events.jsonl").exists() and (out / "jobruntime.csv").exists()


class PreemptsEveryTask(FifoScheduler):
    """FIFO that preempts every task container on its node's next heartbeat:
    the work is placed and taken back forever, as a preemption policy that
    misjudges demand would do."""

    def skip_quiet_node_update(self, node_id: str) -> bool:
        return False

    def schedule(self, node: SchedulerNode) -> None:
        for c in list(self.ctx.containers.values()):
            attempt = self.ctx.attempts.get(c.attempt_id)
            is_am = attempt is not None and attempt.am_container_id == c.container_id
            if c.node_id == node.node_id and not is_am:
                self.on_KILL_PREEMPTED(c.container_id, None)
        super().schedule(node)


def test_a_preemption_loop_stops_with_its_reason():
    """Containers allocated and preempted again and again, none ending on its
    own: the allocations are not progress, the run stops and says so."""
    conf = fifo_conf({"yarn.resourcemanager.scheduler.class": f"{__name__}:PreemptsEveryTask"})
    result, rows, data = run([mr_job("looping", maps=2, reduces=0)], conf=conf, n_nodes=1)
    assert data["complete"] is False
    reason = data["incomplete_reason"]
    assert reason.startswith("the run cannot make progress: in ")
    assert "no container finished its work and no app ended, while" in reason
    assert f"{rows['looping']['app_id']} (looping) in default" in reason
    assert result.simulated_ms < 3_600_000


class PreemptsTheAmOnceATaskIsDone(FifoScheduler):
    """FIFO that preempts an attempt's AM container once a task of that
    attempt has finished: every new attempt redoes its first tasks and
    loses its AM again, so tasks keep finishing and nothing moves on."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.doomed: set[str] = set()

    def skip_quiet_node_update(self, node_id: str) -> bool:
        return False

    def complete_container(self, c, exit_status, diagnostics, event, cleanup=True) -> None:
        attempt = self.ctx.attempts.get(c.attempt_id)
        if exit_status == 0 and attempt is not None and attempt.am_container_id != c.container_id:
            self.doomed.add(c.attempt_id)
        super().complete_container(c, exit_status, diagnostics, event, cleanup)

    def schedule(self, node: SchedulerNode) -> None:
        for attempt_id in sorted(self.doomed):
            attempt = self.ctx.attempts.get(attempt_id)
            am = attempt.am_container_id if attempt is not None else None
            if am is not None and am in self.ctx.containers:
                self.on_KILL_PREEMPTED(am, None)
        self.doomed.clear()
        super().schedule(node)


def test_an_am_preempted_after_each_first_task_is_a_loop():
    """Each attempt finishes the same first tasks before its AM is preempted
    and a new attempt starts over: those tasks are work redone, not
    progress, so the run stops and says so rather than running forever."""
    conf = fifo_conf(
        {"yarn.resourcemanager.scheduler.class": f"{__name__}:PreemptsTheAmOnceATaskIsDone"}
    )
    result, rows, data = run([mr_job("redoing", maps=2, reduces=1)], conf=conf, n_nodes=1)
    assert data["complete"] is False
    reason = data["incomplete_reason"]
    assert reason.startswith("the run cannot make progress: in ")
    assert f"{rows['redoing']['app_id']} (redoing) in default" in reason
    assert result.simulated_ms < 3_600_000


class FailsOnSecondContainer(FifoScheduler):
    """A scheduler that breaks when an AM hands back what it was given:
    its allocate raises once the app holds more than its AM container."""

    def allocate(self, attempt_id, asks, releases, blacklist_add, blacklist_remove):
        sapp = self.apps.get(attempt_id)
        if sapp is not None and len(sapp.live) > 1:
            raise RuntimeError("lost track of a container")
        return super().allocate(attempt_id, asks, releases, blacklist_add, blacklist_remove)


def test_a_scheduler_that_raises_in_a_request_ends_the_run_at_once_naming_it():
    """An exception inside a request's handler is emu's bug or a plugin's,
    not the requester's: the run stops then with the exception, where it
    was raised and what was being handled, rather than going on without
    the reply and stopping much later as stalled."""
    conf = fifo_conf({"yarn.resourcemanager.scheduler.class": f"{__name__}:FailsOnSecondContainer"})
    try:
        run_virtual(simulation([mr_job("j1", maps=4)], n_nodes=2, conf=conf))
    except BaseException as e:  # the nursery's group
        failed = find_in_group(e, SchedulerFailed)
    else:
        failed = None
    assert isinstance(failed, SchedulerFailed)
    assert failed.who == f"scheduler plugin {__name__}:FailsOnSecondContainer"
    assert failed.message.startswith("RuntimeError: lost track of a container (")
    assert failed.message.endswith("handling allocate")
    assert 0 < failed.simulated_ms < 60_000


async def test_an_event_handler_that_raises_fails_the_rm_with_the_event(autojump_clock):
    """Hadoop's RM exits on an error in its dispatcher: emu's fails with the
    event that was being handled."""
    conf = fifo_conf()
    ctx = RMContext(RMSettings.from_conf(conf), conf, EventLog())

    def broken(event):
        raise KeyError("node9")

    ctx.dispatcher.register("probe", broken)
    ctx.dispatch("probe", "PING", "node9")
    ctx.dispatcher.drain()
    assert isinstance(ctx.failure, SchedulerFailed)
    assert ctx.failure.who == "emu's ResourceManager"
    assert ctx.failure.message.startswith("KeyError: 'node9' (")
    assert ctx.failure.message.endswith("handling probe event PING of node9")

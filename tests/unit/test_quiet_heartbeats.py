"""Quiet node heartbeats (a shortcut): a heartbeat that reports no container,
on a node where the scheduler can provably do nothing, is answered without a
scheduling pass, yet the node's response id, liveness and the dispatcher's
counts move exactly as if the pass had run; anything that could change the
pass (here: a new ask) ends the quiet."""

from __future__ import annotations

import pytest
import trio

from emu.config.configuration import Configuration
from emu.rm.scheduler.locality import ANY
from emu.rm.settings import SHORTCUTS
from emu.testing.cluster import ask
from emu.testing.rm import RMHarness

SCHEDULER = "yarn.resourcemanager.scheduler.class"


class _PassRecorder:
    """A SchedulerWatcher noting the node of every scheduling pass."""

    def __init__(self) -> None:
        self.passes: list[str] = []

    def allocate(self, attempt_id, asks, call):  # type: ignore[no-untyped-def]
        return call()

    def placed(self, container) -> None:  # type: ignore[no-untyped-def]
        pass

    def scheduling_pass(self, node_id: str) -> None:
        self.passes.append(node_id)


def _counting_passes(rm: RMHarness) -> list[str]:
    recorder = _PassRecorder()
    rm.ctx.scheduler.watcher = recorder
    return recorder.passes


def _tick(rm: RMHarness) -> None:
    """The scheduler's periodic update (demand and shares), if it has one."""
    if rm.ctx.scheduler.update_interval_ms is not None:
        rm.ctx.scheduler.update()


def _placed(conf: dict[str, str], containers: int, nodes: int = 1) -> tuple[RMHarness, str, list]:
    """An RM with `nodes` nodes (h1, h2, ...) and an app whose AM runs on h1
    and whose `containers` asked for were placed on h1 and handed over."""
    rm = RMHarness(Configuration(conf))
    for i in range(nodes):
        rm.add_node(f"h{i + 1}")
    app = rm.submit("a")
    _tick(rm)
    rm.heartbeat("h1")
    rm.register_am(app)
    rm.allocate(app, [ask(20, ANY, containers)])
    _tick(rm)
    for _ in range(containers):
        rm.heartbeat("h1")  # Fair: one container per heartbeat
    placed = rm.allocate(app)["allocated"]
    assert len(placed) == containers
    return rm, app, placed


@pytest.mark.parametrize("scheduler", ["fifo", "fair", "capacity"])
async def test_quiet_heartbeat_skips_the_pass_and_keeps_every_count(autojump_clock, scheduler):
    rm = RMHarness(Configuration({SCHEDULER: scheduler}))
    rm.add_node("h1")
    rm.add_node("h2")
    app = rm.submit("a")
    _tick(rm)
    rm.heartbeat("h1")
    rm.heartbeat("h2")
    assert rm.launches, "the AM container was placed"
    rm.register_am(app)
    _tick(rm)
    rm.heartbeat("h1")  # a pass that places nothing: the scheduler sees it is quiet
    passes = _counting_passes(rm)
    handled = rm.ctx.dispatcher.handled
    counts = (handled["node.STATUS_UPDATE"], handled["scheduler.NODE_UPDATE"])
    node = rm.ctx.nodes["h2"]
    rid, requests = node.response_id, rm.services.requests["node_heartbeat"]

    reply = rm.heartbeat("h2")

    assert passes == []
    assert reply["response_id"] == rid + 1 == node.response_id
    assert reply["action"] == "NORMAL"
    assert rm.ctx.nm_liveness._last["h2"] == rm.ctx.now_ms() == node.last_heartbeat_ms
    handled = rm.ctx.dispatcher.handled
    assert (handled["node.STATUS_UPDATE"], handled["scheduler.NODE_UPDATE"]) == (
        counts[0] + 1,
        counts[1] + 1,
    )
    assert rm.services.requests["node_heartbeat"] == requests + 1

    rm.allocate(app, [ask(20, ANY, 1)])
    _tick(rm)
    rm.heartbeat("h2")
    assert passes == ["h2"]
    assert len(rm.allocate(app)["allocated"]) == 1


@pytest.mark.parametrize("scheduler", ["fifo", "fair", "capacity"])
async def test_with_shortcuts_off_every_heartbeat_runs_a_pass(autojump_clock, scheduler):
    rm = RMHarness(Configuration({SCHEDULER: scheduler, SHORTCUTS: "false"}))
    rm.add_node("h1")
    app = rm.submit("a")
    _tick(rm)
    rm.heartbeat("h1")
    rm.register_am(app)
    passes = _counting_passes(rm)
    for _ in range(3):
        rm.heartbeat("h1")
    assert passes == ["h1"] * 3


async def test_fair_quiet_ends_when_an_app_is_held_back_anew(autojump_clock):
    """A decision recorded anywhere (here an app left waiting by
    maxRunningApps) moves the scheduler out of its quiet state."""
    rm = RMHarness(Configuration({SCHEDULER: "fair"}))
    rm.add_node("h1")
    app = rm.submit("a")
    _tick(rm)
    rm.heartbeat("h1")
    rm.register_am(app)
    _tick(rm)
    rm.heartbeat("h1")
    assert rm.ctx.scheduler.skip_quiet_node_update("h1")
    rm.ctx.scheduler.activities.record("application_0_9999", "maxRunningApps reached")
    assert not rm.ctx.scheduler.skip_quiet_node_update("h1")


@pytest.mark.parametrize("scheduler", ["fifo", "fair", "capacity"])
async def test_a_heartbeat_reporting_a_launch_is_handled_without_a_pass(autojump_clock, scheduler):
    """The status is applied (the container is RUNNING); the pass, which
    could place nothing, is skipped."""
    rm, _, (placed,) = _placed({SCHEDULER: scheduler}, 1)
    _tick(rm)
    rm.heartbeat("h1")  # nothing left to place: the scheduler sees it is quiet
    passes = _counting_passes(rm)
    cid = placed["container_id"]
    rm.heartbeat("h1", [{"container_id": cid, "state": "RUNNING", "exit_status": -1000}])
    assert rm.ctx.containers[cid].state == "RUNNING"
    assert passes == []


@pytest.mark.parametrize("shortcuts", [True, False])
async def test_a_heartbeat_reporting_containers_is_handled_at_once_and_counted_as_queued(
    autojump_clock, shortcuts
):
    """A healthy heartbeat with statuses: its STATUS_UPDATE and NODE_UPDATE
    handled at once with the shortcuts (no event queued), through the
    queue without; the same counts and the same container states."""
    rm, app, placed = _placed({SCHEDULER: "fair", SHORTCUTS: str(shortcuts).lower()}, 2)
    handled = rm.ctx.dispatcher.handled
    counts = (handled["node.STATUS_UPDATE"], handled["scheduler.NODE_UPDATE"])
    queued_s = rm.ctx.dispatcher.handle_seconds["node.STATUS_UPDATE"]
    first, second = (c["container_id"] for c in placed)
    rm.heartbeat(
        "h1",
        [
            {"container_id": first, "state": "RUNNING", "exit_status": -1000},
            {"container_id": second, "state": "COMPLETE", "exit_status": 0, "diagnostics": ""},
        ],
    )
    assert rm.ctx.containers[first].state == "RUNNING"
    assert second not in rm.ctx.containers
    handled = rm.ctx.dispatcher.handled
    assert (handled["node.STATUS_UPDATE"], handled["scheduler.NODE_UPDATE"]) == (
        counts[0] + 1,
        counts[1] + 1,
    )
    # at once the STATUS_UPDATE has no handler time of its own: never queued
    unqueued = rm.ctx.dispatcher.handle_seconds["node.STATUS_UPDATE"] == queued_s
    assert unqueued == shortcuts
    assert [c["container_id"] for c in rm.allocate(app)["completed"]] == [second]


async def test_fair_kills_due_preempted_containers_on_a_heartbeat_taken_at_once(autojump_clock):
    """FairScheduler's PreemptContainersTask: whatever the scheduler does at
    or after the kill time sees the container gone, a node update taken at
    once (the quiet heartbeat) as much as one from the queue."""
    rm, _, (placed,) = _placed({SCHEDULER: "fair"}, 1, nodes=2)
    cid = placed["container_id"]
    rm.heartbeat("h1", [{"container_id": cid, "state": "RUNNING", "exit_status": -1000}])
    fs = rm.ctx.scheduler
    fs.preemption.kills.append((rm.ctx.now_ms() + 1000, cid))
    await trio.sleep(2)
    rm.heartbeat("h2")  # quiet: taken at once
    assert cid not in rm.ctx.containers
    assert not fs.preemption.kills

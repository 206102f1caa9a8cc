"""Quiet node heartbeats (a shortcut): a heartbeat that reports no container,
on a node where the scheduler can provably do nothing, is answered without a
scheduling pass, yet the node's response id, liveness and the dispatcher's
counts move exactly as if the pass had run; anything that could change the
pass (here: a new ask) ends the quiet."""

from __future__ import annotations

import pytest

from emu.config.configuration import Configuration
from emu.rm.scheduler import shortcuts
from emu.rm.scheduler.locality import ANY
from tests.helpers import ask
from tests.rmharness import RMHarness

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
    shortcuts.set_enabled(False)
    try:
        rm = RMHarness(Configuration({SCHEDULER: scheduler, "emu.scheduler.shortcuts": "false"}))
        rm.add_node("h1")
        app = rm.submit("a")
        _tick(rm)
        rm.heartbeat("h1")
        rm.register_am(app)
        passes = _counting_passes(rm)
        for _ in range(3):
            rm.heartbeat("h1")
        assert passes == ["h1"] * 3
    finally:
        shortcuts.set_enabled(True)


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
    rm = RMHarness(Configuration({SCHEDULER: scheduler}))
    rm.add_node("h1")
    app = rm.submit("a")
    _tick(rm)
    rm.heartbeat("h1")
    rm.register_am(app)
    rm.allocate(app, [ask(20, ANY, 1)])
    _tick(rm)
    rm.heartbeat("h1")
    (placed,) = rm.allocate(app)["allocated"]
    _tick(rm)
    rm.heartbeat("h1")  # nothing left to place: the scheduler sees it is quiet
    passes = _counting_passes(rm)
    cid = placed["container_id"]
    rm.heartbeat("h1", [{"container_id": cid, "state": "RUNNING", "exit_status": -1000}])
    assert rm.ctx.containers[cid].state == "RUNNING"
    assert passes == []

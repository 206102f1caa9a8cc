"""Allocates of nothing (a shortcut): an in-process AM with nothing to ask or
release makes a direct call instead of the allocate message; the RM answers
it with the new response id when the reply would have carried nothing, and
counts and pings as the allocate would have; with anything to hand over (a
placed or completed container, a preemption, a command) it declines, and the
AM makes the call."""

from __future__ import annotations

from contextlib import AsyncExitStack
from functools import partial

import pytest
import trio

from emu.am.engine import ApplicationMaster
from emu.clock import run_deterministically, virtual_clock
from emu.config.configuration import Configuration
from emu.msg.types import Allocate, AllocateReply
from emu.resources import Resource
from emu.rm.attempt import FINISHING
from emu.rm.scheduler.locality import ANY
from emu.rm.services.application_master import NOTHING
from emu.rm.settings import SHORTCUTS
from emu.scenario import native
from emu.testing.cluster import SCENARIOS, ask, scenario_simulation
from emu.testing.rm import RMHarness
from emu.transport import ServerStats, connect, never_waits, serve, with_direct
from emu.workload import JobSpec, TaskSpec

SCHEDULER = "yarn.resourcemanager.scheduler.class"


def _running(scheduler: str, **conf: str) -> tuple[RMHarness, str]:
    """An RM with one node and one app whose AM registered and has asked
    for nothing yet."""
    rm = RMHarness(Configuration({SCHEDULER: scheduler, **conf}))
    rm.add_node("h1")
    app = rm.submit("a")
    if rm.ctx.scheduler.update_interval_ms is not None:
        rm.ctx.scheduler.update()
    rm.heartbeat("h1")
    rm.register_am(app)
    return rm, app


class _Counting:
    """A SchedulerWatcher counting allocate calls."""

    def __init__(self) -> None:
        self.calls = 0

    def allocate(self, attempt_id, asks, call):  # type: ignore[no-untyped-def]
        self.calls += 1
        return call()

    def placed(self, container) -> None:  # type: ignore[no-untyped-def]
        pass

    def scheduling_pass(self, node_id: str) -> None:
        pass


@pytest.mark.parametrize("scheduler", ["fifo", "fair", "capacity"])
async def test_answered_as_the_allocate_would_count_and_ping(autojump_clock, scheduler):
    rm, app = _running(scheduler)
    a = rm.ctx.attempts[rm.attempt(app)]
    watcher = rm.ctx.scheduler.watcher = _Counting()
    await trio.sleep(5)
    rid, requests = a.response_id, rm.services.requests["allocate"]

    assert rm.services.allocate_nothing(a.attempt_id, rid) == rid + 1

    assert a.response_id == rid + 1 and a.last_reply is NOTHING
    assert rm.services.requests["allocate"] == requests + 1
    assert watcher.calls == 1
    assert rm.ctx.am_liveness.last_pings[a.attempt_id] == rm.ctx.now_ms() == 5000
    # A repeat of it (a lost reply) gets the reply it would have had.
    repeat = rm.call(
        "am_protocol", "allocate", attempt_id=a.attempt_id, response_id=rid, asks=[],
        releases=[], blacklist_add=[], blacklist_remove=[], progress=0.0,
    )  # fmt: skip
    assert repeat["response_id"] == rid + 1
    assert repeat["allocated"] == [] and repeat["completed"] == []
    # The next real allocate is in step.
    assert rm.allocate(app)["response_id"] == rid + 2


@pytest.mark.parametrize("scheduler", ["fifo", "fair", "capacity"])
async def test_declined_while_a_container_waits_to_be_handed_over(autojump_clock, scheduler):
    rm, app = _running(scheduler)
    a = rm.ctx.attempts[rm.attempt(app)]
    rm.allocate(app, [ask(20, ANY, 1)])
    if rm.ctx.scheduler.update_interval_ms is not None:
        rm.ctx.scheduler.update()
    rm.heartbeat("h1")
    rid = a.response_id

    assert rm.services.allocate_nothing(a.attempt_id, rid) is None
    assert a.response_id == rid
    (placed,) = rm.allocate(app)["allocated"]
    assert rm.services.allocate_nothing(a.attempt_id, a.response_id) is not None

    # Its completion must reach the AM too.
    rm.heartbeat(
        "h1", [{"container_id": placed["container_id"], "state": "RUNNING", "exit_status": -1000}]
    )
    rm.heartbeat("h1", [_complete(placed["container_id"])])
    assert rm.services.allocate_nothing(a.attempt_id, a.response_id) is None
    assert [c["container_id"] for c in rm.allocate(app)["completed"]] == [placed["container_id"]]


def _complete(cid: str) -> dict:
    return {"container_id": cid, "state": "COMPLETE", "exit_status": 0, "diagnostics": ""}


async def test_declined_out_of_step_finishing_or_with_the_shortcuts_off(autojump_clock):
    rm, app = _running("fair")
    a = rm.ctx.attempts[rm.attempt(app)]
    assert rm.services.allocate_nothing(a.attempt_id, a.response_id - 1) is None
    assert rm.services.allocate_nothing("appattempt_0_0000_000001", 0) is None
    a.state = FINISHING
    assert rm.services.allocate_nothing(a.attempt_id, a.response_id) is None

    rm, app = _running("fair", **{SHORTCUTS: "false"})
    a = rm.ctx.attempts[rm.attempt(app)]
    assert rm.services.allocate_nothing(a.attempt_id, a.response_id) is None


async def test_the_in_process_transport_makes_direct_calls_only_when_a_request_would_run_inline(
    nursery: trio.Nursery,
) -> None:
    calls: list[tuple[object, ...]] = []

    def answer(*args: object) -> object | None:
        calls.append(args)
        return None if args[0] == "decline" else "yes"

    async def handle(payload: bytes) -> bytes:
        return payload

    stats = ServerStats()
    handler = with_direct(never_waits(handle), {"ask": answer})
    address = await nursery.start(partial(serve, "mem://direct", handler, stats=stats))
    async with connect(address, identity="c") as conn:
        assert conn.call_direct("ask", "x", 1) == "yes"
        assert (stats.requests, stats.replies) == (1, 1)
        assert conn.call_direct("ask", "decline") is None
        assert (stats.requests, stats.replies) == (1, 1)  # declined: not a request
        assert conn.call_direct("other") is None
    assert calls == [("x", 1), ("decline",)]
    async with connect("mem://nobody", identity="c") as conn:
        assert conn.call_direct("ask", "x") is None


async def test_a_server_that_may_wait_gets_no_direct_calls(nursery: trio.Nursery) -> None:
    async def handle(payload: bytes) -> bytes:
        return payload

    handler = with_direct(handle, {"ask": lambda: "yes"})  # not never_waits
    address = await nursery.start(partial(serve, "mem://direct2", handler, stats=ServerStats()))
    async with connect(address, identity="c") as conn:
        assert conn.call_direct("ask") is None


@pytest.mark.parametrize("scheduler", ["fifo", "fair", "capacity"])
def test_a_replay_answers_most_allocates_directly_and_counts_them_all(scheduler: str) -> None:
    """A whole in-process replay: most allocates are answered as direct
    calls, and the RM counts as many allocates (and its transport as many
    requests) as with the shortcuts off, when every one is a message."""
    counts: dict[bool, tuple[int, int, int]] = {}
    for on in (True, False):
        seen: list[tuple[int, int, int]] = []

        def tick(rm, seen=seen) -> None:  # type: ignore[no-untyped-def]
            stats = rm.stats["am_protocol"]
            seen.append(
                (rm.services.requests["allocate"], stats.requests, rm.services.answered_directly)
            )

        sc = native.load(SCENARIOS / "three-jobs.toml")
        conf = Configuration()
        conf.update(sc.conf)
        conf.set(SCHEDULER, scheduler, "test")
        conf.set(SHORTCUTS, str(on).lower(), "test")
        sim = scenario_simulation(sc, on_tick=tick, conf=conf)
        result = run_deterministically(sim.run, virtual_clock())
        assert all(j["state"] == "FINISHED" for j in result.jobs)
        counts[on] = seen[-1]
    allocates, requests, direct = counts[True]
    assert (allocates, requests) == counts[False][:2]
    assert counts[False][2] == 0
    assert direct > allocates / 2


class _AnsweringRM:
    """An RM connection that would answer every allocate of nothing
    directly, and records the allocate messages it gets."""

    address = "mem://fake-rm"
    lossy = False

    def __init__(self) -> None:
        self.sent: list[Allocate] = []

    def call_direct(self, name: str, attempt_id: str, response_id: int) -> int:
        return response_id + 1

    async def request(self, message: Allocate, timeout: float | None = None) -> AllocateReply:
        self.sent.append(message)
        return AllocateReply(message.request_id, message.response_id + 1, [], [], Resource(), 1)


async def test_releases_go_in_an_allocate_even_when_nothing_is_asked(autojump_clock) -> None:
    """An AM whose asks are all stated but which holds a container to give
    back (a surplus one, or one its NM would not start) sends the release:
    it is never swallowed by an allocate of nothing answered directly."""
    job = JobSpec("j", "mapreduce", 0, "default", "u", Resource(1024, 1),
                  (TaskSpec("map", 20, 1000, Resource(1024, 1)),))  # fmt: skip
    am = ApplicationMaster(
        {
            "attempt_id": "appattempt_1_0001_000001",
            "rm_address": "mem://fake-rm",
            "context": {"job": job.to_wire()},
        }
    )
    rm = _AnsweringRM()
    am._registered = True
    async with AsyncExitStack() as stack:
        await am._heartbeat(rm, {}, stack)  # type: ignore[arg-type]
        assert [len(m.asks) for m in rm.sent] == [1]
        await am._heartbeat(rm, {}, stack)  # type: ignore[arg-type]
        assert len(rm.sent) == 1, "nothing to ask or release: answered directly"
        am.releases.append("container_1_0001_01_000009")
        await am._heartbeat(rm, {}, stack)  # type: ignore[arg-type]
    assert len(rm.sent) == 2
    assert rm.sent[-1].releases == ["container_1_0001_01_000009"]

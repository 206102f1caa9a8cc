"""The AM's task timeout (MapReduce's mapreduce.task.timeout): a task whose
completion never comes is failed and asked for again."""

from __future__ import annotations

from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import pytest
import trio

from emu.am import engine
from emu.am.engine import PENDING, RUNNING, TASK_TIMEOUT_S, ApplicationMaster
from emu.msg import types as P
from emu.resources import Resource
from emu.workload import JobSpec, TaskSpec


class _NM:
    """An NM that starts every container it is asked to."""

    async def request(self, payload: Any, timeout: float | None = None) -> Any:
        msg = payload.to_map()
        ok = [c["container_id"] for c in msg["containers"]]
        return P.Map(P.reply(msg, succeeded=ok, failed=[]))


@asynccontextmanager
async def _connect(address: str, identity: str = "", codec: Any = None):  # type: ignore[no-untyped-def]
    yield _NM()


def _am() -> ApplicationMaster:
    """An AM of one 40 s map, asked for (PENDING)."""
    size = Resource(1024, 1)
    job = JobSpec("j", "mapreduce", 0, "default", "u", size, (TaskSpec("map", 20, 40_000, size),))
    am = ApplicationMaster(
        {
            "attempt_id": "appattempt_17_0004_000001",
            "rm_address": "mem://rm",
            "context": {"job": job.to_wire()},
        }
    )
    am._set_state(0, PENDING)
    return am


class _RM:
    """The RM's side of allocate: `first` placed on the first call, then
    `later` completions on every call after."""

    address = "mem://rm"

    def __init__(self, first: list[dict[str, Any]], later: list[dict[str, Any]]) -> None:
        self.first, self.later = first, later
        self.calls: list[dict[str, Any]] = []

    async def request(self, payload: Any, timeout: float | None = None) -> Any:
        self.calls.append(payload.to_map())
        n = len(self.calls)
        return P.AllocateReply(
            payload.request_id,
            n,
            self.first if n == 1 else [],
            [] if n == 1 else self.later,
            {"memory-mb": 0, "vcores": 0},
            1,
        )


_C1 = {
    "container_id": "container_17_0004_01_000002",
    "node_id": "h1",
    "nm_address": "mem://nm",
    "priority": 20,
    "resource": {"memory-mb": 1024, "vcores": 1},
}


async def test_a_task_whose_completion_never_comes_runs_again(
    autojump_clock: trio.abc.Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine, "connect", _connect)
    am = _am()
    rm = _RM([_C1], [])
    async with AsyncExitStack() as stack:
        await am._round(rm, {}, stack, [])  # type: ignore[arg-type]
        assert am.state == [RUNNING]
        await trio.sleep(40 + TASK_TIMEOUT_S - 1)
        await am._round(rm, {}, stack, [])  # type: ignore[arg-type]
        assert am.state == [RUNNING] and am.lost == 0
        await trio.sleep(2)
        await am._round(rm, {}, stack, [])  # type: ignore[arg-type]
    assert am.state == [PENDING]
    assert am.lost == 1 and am.faults.tasks_rerun == 1
    assert am.releases == [_C1["container_id"]]
    assert am.container_task == {}


async def test_a_task_that_completed_is_not_timed_out(
    autojump_clock: trio.abc.Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine, "connect", _connect)
    am = _am()
    done = {"container_id": _C1["container_id"], "state": "COMPLETE", "exit_status": P.EXIT_SUCCESS}
    rm = _RM([_C1], [done])
    async with AsyncExitStack() as stack:
        await am._round(rm, {}, stack, [])  # type: ignore[arg-type]
        await trio.sleep(41)
        await am._round(rm, {}, stack, [])  # type: ignore[arg-type]
        await trio.sleep(TASK_TIMEOUT_S)
        await am._round(rm, {}, stack, [])  # type: ignore[arg-type]
    assert am.done_count == 1 and am.lost == 0 and am.releases == []


class _Recorder:
    """An RM that answers allocate with `placements[n]` on its n-th call and
    keeps every request as sent."""

    address = "mem://rm"

    def __init__(self, placements: dict[int, list[dict[str, Any]]]) -> None:
        self.placements = placements
        self.payloads: list[Any] = []

    def call_direct(self, name: str, *args: object) -> object | None:
        """An RM across a network: every allocate is a message."""
        return None

    async def request(self, payload: Any, timeout: float | None = None) -> Any:
        self.payloads.append(payload)
        n = len(self.payloads)
        return P.AllocateReply(
            payload.request_id, payload.response_id + 1, self.placements.get(n, []), [],
            {"memory-mb": 0, "vcores": 0}, 1,
        )  # fmt: skip


async def test_heartbeats_with_nothing_to_restate_send_an_empty_allocate(
    autojump_clock: trio.abc.Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Asks are stated once; heartbeats after that hand over nothing (the
    empty allocate) until a placement changes what the RM holds, and
    then only what changed is restated (here nothing: the RM took the
    placed container off its own `*` ask)."""
    monkeypatch.setattr(engine, "connect", _connect)
    size = Resource(1024, 1)
    tasks = tuple(TaskSpec("map", 20, 40_000, size) for _ in range(3))
    job = JobSpec("j", "mapreduce", 0, "default", "u", size, tasks)
    am = ApplicationMaster(
        {"attempt_id": "appattempt_17_0004_000001", "rm_address": "mem://rm",
         "context": {"job": job.to_wire()}}
    )  # fmt: skip
    rm = _Recorder({3: [_C1]})
    async with AsyncExitStack() as stack:
        for _ in range(5):
            await am._heartbeat(rm, {}, stack)  # type: ignore[arg-type]
    msgs = [p.to_map() for p in rm.payloads]
    assert [[(a["resource_name"], a["num_containers"]) for a in m["asks"]] for m in msgs] == [
        [("*", 3)],
        [],
        [],
        [],
        [],
    ]
    assert am.sent[20]["*"][0] == 2 and am.state.count(RUNNING) == 1

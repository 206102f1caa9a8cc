"""The lean in-process idle allocate (`P.IdleAllocate` / `P.IdleAllocateReply`):
in bytes it is the catalogue's `allocate` exchange, and the RM handles it
exactly as it handles the map of an allocate that hands over nothing."""

from __future__ import annotations

from typing import Any

import pytest

from emu import protocol as P
from emu.resources import Resource
from emu.rm.scheduler.locality import ANY
from emu.testing.cluster import ask, fifo_conf
from emu.testing.rm import RMHarness


def _plain(request_id: int, attempt_id: str, response_id: int, progress: float) -> dict:
    return P.request(
        "allocate", request_id, attempt_id=attempt_id, response_id=response_id, asks=[],
        releases=[], blacklist_add=[], blacklist_remove=[], progress=progress,
    )  # fmt: skip


def test_an_idle_allocate_in_bytes_is_the_catalogue_message() -> None:
    lean = P.IdleAllocate(7, "appattempt_1_0001_000001", 3, 0.25)
    plain = _plain(7, "appattempt_1_0001_000001", 3, 0.25)
    assert bytes(lean) == P.encode(dict(plain))
    assert P.decode(lean) == P.decode(P.encode(dict(plain)))
    with pytest.raises((P.ProtocolError, TypeError)):
        P.decode(P.IdleAllocate(7, "a", "3", 0.0))  # type: ignore[arg-type]


def test_the_lean_reply_in_bytes_spells_out_the_empty_answer() -> None:
    lean = P.IdleAllocateReply(7, 4, Resource(2048, 3), 12)
    plain = P.reply(
        {"type": "allocate", "id": 7}, response_id=4, allocated=[], completed=[],
        available={"memory-mb": 2048, "vcores": 3}, num_cluster_nodes=12, preemption=None,
        command=None,
    )  # fmt: skip
    assert bytes(lean) == P.encode(dict(plain))
    assert P.decode(lean) == P.decode(P.encode(dict(plain)))


def test_frames_off_sends_the_idle_allocate_as_bytes() -> None:
    before = P.set_frames(False)
    try:
        sent = P.lean(P.IdleAllocate(3, "a", 0, 1.0))
    finally:
        P.set_frames(before)
    assert sent == P.encode(_plain(3, "a", 0, 1.0))
    assert type(P.lean(P.IdleAllocate(3, "a", 0, 1.0))) is P.IdleAllocate


def _cluster() -> tuple[RMHarness, str]:
    rm = RMHarness(fifo_conf())
    rm.add_node("h1")
    rm.add_node("h2")
    app = rm.submit("a")
    rm.start_am(app, "h1")
    return rm, rm.attempt(app)


def _state(rm: RMHarness, attempt_id: str) -> dict[str, Any]:
    a = rm.ctx.attempts[attempt_id]
    return {
        "response_id": a.response_id,
        "state": a.state,
        "liveness": rm.ctx.am_liveness.last_pings.get(attempt_id),
        "used": rm.ctx.scheduler.used,
        "containers": sorted(rm.ctx.containers),
        "handled": dict(rm.ctx.dispatcher.handled),
        "requests": dict(rm.services.requests),
        "errors": dict(rm.services.errors),
    }


def _lean_call(rm: RMHarness, request_id: int, attempt_id: str, response_id: int) -> dict:
    answer = rm.services.idle_allocate(P.IdleAllocate(request_id, attempt_id, response_id, 0.0))
    if type(answer) is P.IdleAllocateReply:
        return answer.reply_map()
    assert isinstance(answer, dict)
    return answer


def _plain_call(rm: RMHarness, request_id: int, attempt_id: str, response_id: int) -> dict:
    msg = P.decode(P.encode(_plain(request_id, attempt_id, response_id, 0.0)))
    return rm.services.handle(P.AM_PROTOCOL, msg)


async def test_the_rm_answers_an_idle_allocate_as_the_same_map(autojump_clock) -> None:
    """Nothing to give, containers to hand over, a completion, a repeat, a
    response id out of step and an unknown attempt: the same replies (the
    lean one spelled out) and the same RM state as for the plain map."""
    lean_rm, lean_attempt = _cluster()
    plain_rm, plain_attempt = _cluster()
    assert lean_attempt == plain_attempt
    attempt = lean_attempt

    def both(request_id: int, response_id: int) -> dict:
        lean = _lean_call(lean_rm, request_id, attempt, response_id)
        plain = _plain_call(plain_rm, request_id, attempt, response_id)
        assert lean == plain
        assert _state(lean_rm, attempt) == _state(plain_rm, attempt)
        return lean

    quiet = both(10, 0)
    assert quiet["allocated"] == [] and quiet["response_id"] == 1
    assert type(lean_rm.ctx.attempts[attempt].last_reply) is P.IdleAllocateReply
    for rm in (lean_rm, plain_rm):
        rm.allocate(rm.ctx.apps[rm.ctx.attempts[attempt].app_id].app_id, [ask(20, ANY, 2)])
        rm.heartbeat("h2")  # places both on h2
    handed = both(11, 2)
    assert len(handed["allocated"]) == 2
    repeat = both(12, 2)  # the same call again: the same answer
    assert repeat["allocated"] == handed["allocated"] and repeat["id"] == 12
    both(13, 3)
    repeat_of_lean = both(14, 3)  # a repeat of a call answered lean
    assert repeat_of_lean["response_id"] == 4 and repeat_of_lean["id"] == 14
    for rm in (lean_rm, plain_rm):
        cid = sorted(c for c in rm.ctx.containers if rm.ctx.containers[c].node_id == "h2")[0]
        rm.heartbeat(
            "h2", [{"container_id": cid, "state": "COMPLETE", "exit_status": 0, "diagnostics": ""}]
        )
    completed = both(15, 4)
    assert [c["exit_status"] for c in completed["completed"]] == [0]
    resync = both(16, 0)  # out of step
    assert resync["command"] == P.RESYNC
    unknown = _lean_call(lean_rm, 17, "appattempt_0_0042_000001", 0)
    assert unknown["type"] == "error" and unknown["code"] == P.NOT_FOUND
    assert lean_rm.services.errors[P.NOT_FOUND] == 1


async def test_the_rm_actor_takes_an_idle_allocate_on_the_am_service_only(autojump_clock) -> None:
    """Over the actor's handlers: counted and answered as an allocate on the
    AM service (here refused: no such attempt); on another service refused
    as the map would be, through `decode`."""
    from emu.config.configuration import Configuration
    from emu.rm.actor import ResourceManager, RMAddresses

    rm = ResourceManager(Configuration({}), RMAddresses.in_memory("idle"))
    idle = P.IdleAllocate(5, "appattempt_0_0001_000001", 0, 0.0)
    reply = P.decode(await rm._handler(P.AM_PROTOCOL)(idle))
    assert (reply["type"], reply["code"], reply["id"]) == ("error", P.NOT_FOUND, 5)
    assert rm.services.requests["allocate"] == 1
    wrong = P.decode(await rm._handler(P.CLIENT)(idle))
    assert wrong["code"] == P.WRONG_SERVICE and rm.services.requests["allocate"] == 1

"""Allocate: the RM's one path (`Allocate` in, `AllocateReply` out) answers
an AM's call as the catalogue's `allocate` map, whether it hands over asks
or nothing, and whether it came through the codec or was handed over."""

from __future__ import annotations

from typing import Any

import pytest

from emu.msg import catalogue as C
from emu.msg import codec
from emu.msg import types as P
from emu.rm.scheduler.locality import ANY
from emu.testing.cluster import ask, fifo_conf
from emu.testing.rm import RMHarness


def _plain(request_id: int, attempt_id: str, response_id: int, progress: float) -> dict:
    return P.request(
        "allocate", request_id, attempt_id=attempt_id, response_id=response_id, asks=[],
        releases=[], blacklist_add=[], blacklist_remove=[], progress=progress,
    )  # fmt: skip


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
    req = P.Allocate(request_id, attempt_id, response_id, [], [], [], [], 0.0)
    return rm.services.allocate(req).to_map()


def _plain_call(rm: RMHarness, request_id: int, attempt_id: str, response_id: int) -> dict:
    msg = codec.decode(codec.encode(P.Map(_plain(request_id, attempt_id, response_id, 0.0))))
    return rm.services.handle(C.AM_PROTOCOL, msg.to_map())


async def test_the_rm_answers_an_allocate_object_as_its_map(autojump_clock) -> None:
    """Nothing to give, containers to hand over, a completion, a repeat, a
    response id out of step and an unknown attempt: the same replies and
    the same RM state for the object and for the map from the wire."""
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
    for rm in (lean_rm, plain_rm):
        rm.allocate(rm.ctx.apps[rm.ctx.attempts[attempt].app_id].app_id, [ask(20, ANY, 2)])
        rm.heartbeat("h2")  # places both on h2
    handed = both(11, 2)
    assert len(handed["allocated"]) == 2
    repeat = both(12, 2)  # the same call again: the same answer
    assert repeat["allocated"] == handed["allocated"] and repeat["id"] == 12
    both(13, 3)
    repeat_of_lean = both(14, 3)  # a repeat of a call answered with nothing
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


@pytest.mark.parametrize("wire", [False, True])
async def test_the_rm_actor_takes_an_allocate_on_the_am_service_only(autojump_clock, wire) -> None:
    """Over the actor's handlers: counted and answered as an allocate on the
    AM service (here refused: no such attempt); on another service refused."""
    from emu.config.configuration import Configuration
    from emu.rm.actor import ResourceManager, RMAddresses

    rm = ResourceManager(Configuration({}), RMAddresses.in_memory("idle"))
    idle: P.Message = P.Allocate(5, "appattempt_0_0001_000001", 0, [], [], [], [], 0.0)
    if wire:
        idle = codec.decode_request(codec.encode(idle))
    reply = (await rm._handler(C.AM_PROTOCOL)(idle)).to_map()
    assert (reply["type"], reply["code"], reply["id"]) == ("error", P.NOT_FOUND, 5)
    assert rm.services.requests["allocate"] == 1
    wrong = (await rm._handler(C.CLIENT)(idle)).to_map()
    assert wrong["code"] == P.WRONG_SERVICE

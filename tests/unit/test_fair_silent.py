"""Silent apps (orderings.LeafOrder._silence): with delay scheduling off, an
app that declined a node with "no node fits", has no blacklist and no ask that may
reserve, is not offered a node none of its asks fits; such an offer would
only record "no node fits" again and count a scheduling opportunity that
nothing reads. The placements, recorded decisions and the queues' AM limits
must be those of offering every node to every app (shortcuts off); only the
unread opportunity counts differ, which is how the tests see the skip."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from emu.resources import Resource
from emu.rm.container import ContainerEvent
from emu.rm.settings import SHORTCUTS
from emu.testing.fair import GB, FSHarness, write_alloc

NOT_RESERVABLE = {"yarn.scheduler.reservation-threshold.increment-multiple": 3}
"""Reservation threshold 3 GB / 3 vcores: asks of 1-2 GB, 1 vcore may not reserve."""


def _shortcuts(on: bool) -> dict[str, Any]:
    """The property that turns this scheduler's shortcuts on or off."""
    return {SHORTCUTS: "true" if on else "false"}


def _full_node(on: bool, props: dict[str, Any] | None = None) -> tuple[FSHarness, str, str, str]:
    """One 4 GB node filled by a first app; two more apps then ask for 1 GB."""
    h = FSHarness(props={**NOT_RESERVABLE, **_shortcuts(on), **(props or {})})
    h.add_node("n0", 4 * GB, vcores=4)
    first = h.request(GB, "root.default", num=4)
    h.heartbeat("n0", times=4)
    assert h.live(first) == 4
    second = h.request(GB, "root.default", num=2)
    third = h.request(GB, "root.default", num=2)
    return h, first, second, third


def _opportunities(h: FSHarness, attempt: str) -> int:
    return sum(h.sched.apps[attempt].opportunities.values())


async def test_a_full_node_is_not_offered_to_silent_apps(autojump_clock: Any) -> None:
    h, first, second, third = _full_node(True)
    leaf = h.queue("root.default")
    h.heartbeat("n0")  # both offered the full node: "no node fits", silent
    assert h.fsapp(second).silent and h.fsapp(third).silent
    assert (_opportunities(h, second), _opportunities(h, third)) == (1, 1)
    h.heartbeat("n0", times=3)  # not offered again
    assert (_opportunities(h, second), _opportunities(h, third)) == (1, 1)
    assert leaf.order.active_apps == [h.fsapp(second), h.fsapp(third)]
    # room for 1 GB: every app is offered it again, and the first takes it
    c = next(iter(h.sched.apps[first].live.values()))
    h.sched.complete_container(c, 0, "", ContainerEvent.FINISHED, cleanup=False)
    h.drain()
    h.heartbeat("n0")
    assert h.live(second) == 1
    assert not h.fsapp(second).silent  # allocated: a new decision
    assert h.fsapp(third).silent
    # a new ask ends the silence; so does a blacklist
    h.ask(third, GB, 3)
    assert not h.fsapp(third).silent
    h.heartbeat("n0")
    assert h.fsapp(third).silent and h.fsapp(second).silent
    h.sched.allocate(third, [], [], ["elsewhere"], [])
    assert not h.fsapp(third).silent
    h.heartbeat("n0")
    assert not h.fsapp(third).silent  # blacklisted apps are not silenced
    assert h.fsapp(second).silent


async def test_the_same_with_shortcuts_off_but_for_the_unread_opportunities(
    autojump_clock: Any,
) -> None:
    def run(on: bool) -> tuple[list[Any], int]:
        h, first, second, third = _full_node(on)
        h.heartbeat("n0", times=5)
        out = [h.sched.activities.of(h.fsapp(a).sapp.app_id) for a in (first, second, third)]
        return out, _opportunities(h, second)

    on, off = run(True), run(False)
    assert on[0] == off[0]
    assert (on[1], off[1]) == (1, 5)


async def test_no_silence_with_delay_scheduling_or_a_reservable_ask(autojump_clock: Any) -> None:
    delay = {
        "yarn.scheduler.fair.locality.threshold.node": 0.5,
        "yarn.scheduler.fair.locality.threshold.rack": 0.5,
    }
    h, _, second, _ = _full_node(True, delay)
    h.heartbeat("n0", times=3)
    assert not h.fsapp(second).silent
    # every offer was made: delay scheduling counted them and relaxed twice
    assert h.fsapp(second).allowed_locality == {1: "OFF_SWITCH"}

    h, _, second, _ = _full_node(True)
    h.ask(second, 3 * GB, 1, vcores=3, priority=2)  # may reserve (if starved)
    h.heartbeat("n0", times=3)
    assert not h.fsapp(second).silent


def _mix(tmp_path: Path, seed: int, on: bool) -> tuple[list[Any], int]:
    """A seeded mix on small nodes that fill up, with AMs under a tight
    maxAMShare; what happened at each step (placements, recorded decisions
    and the queues' AM limits) and how many steps had silent apps."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    alloc = write_alloc(
        tmp_path,
        "<defaultQueueSchedulingPolicy>drf</defaultQueueSchedulingPolicy>"
        '<queue name="a"><maxAMShare>0.2</maxAMShare></queue>'
        '<queue name="b"><schedulingPolicy>fair</schedulingPolicy></queue>',
    )
    h = FSHarness(props={**NOT_RESERVABLE, **_shortcuts(on)}, alloc=alloc)
    for i in range(5):
        h.add_node(f"n{i}", 4 * GB, vcores=4, rack=f"/r{i % 2}")
    leaves = [h.queue("root.a"), h.queue("root.b")]
    rng = random.Random(seed)
    attempts: list[str] = []
    seen: list[Any] = []
    silent_steps = 0
    for _ in range(500):
        r = rng.random()
        if r < 0.1 or not attempts:
            am = Resource(GB, 1) if rng.random() < 0.5 else None
            attempt = h.submit(rng.choice(["root.a", "root.b"]), am=am)
            assert attempt is not None
            attempts.append(attempt)
        elif r < 0.3:
            attempt = rng.choice(attempts)
            size = rng.choice([GB, 2 * GB, 2 * GB, 3 * GB])
            h.ask(attempt, size, rng.randrange(0, 4), vcores=1 if size < 3 * GB else 3,
                  priority=rng.choice([1, 2]))  # fmt: skip
        elif r < 0.75:
            h.heartbeat(f"n{rng.randrange(5)}")
        elif r < 0.85:
            live = [c for a in attempts for c in h.sched.apps[a].live.values()]
            if live:
                c = rng.choice(sorted(live, key=lambda c: c.container_id))
                h.sched.complete_container(c, 0, "", ContainerEvent.FINISHED, cleanup=False)
                h.drain()
        elif r < 0.95:
            h.update()
        elif r < 0.97:
            attempt = rng.choice(attempts)
            h.sched.allocate(attempt, [], [], [f"n{rng.randrange(5)}"], [])
            h.drain()
        elif len(attempts) > 1:
            attempt = attempts.pop(rng.randrange(len(attempts)))
            h.remove(attempt)
        if any(h.fsapp(a).silent for a in attempts if a in h.sched.fsapps):
            silent_steps += 1
        seen.append(
            (
                sorted((a, sorted(h.sched.apps[a].live)) for a in attempts if a in h.sched.apps),
                [leaf.max_am_metric for leaf in leaves],
                h.sched.activities.writes,
            )
        )
    seen.append({a: h.sched.activities.of(a) for a in sorted(h.ctx.apps)})
    return seen, silent_steps


@pytest.mark.parametrize("seed", range(4))
async def test_a_mix_places_and_records_the_same_with_shortcuts_off(
    tmp_path: Path, seed: int, autojump_clock: Any
) -> None:
    on, silent_steps = _mix(tmp_path / f"on-{seed}", seed, True)
    off, _ = _mix(tmp_path / f"off-{seed}", seed, False)
    assert on == off
    assert silent_steps > 50  # the shortcut was taken
    reasons = {reason for _, reason, _ in (e for log in on[-1].values() for e in log)}
    assert {"no node fits", "allocated"} <= reasons


def _am_limit_steps(tmp_path: Path, on: bool) -> list[Any]:
    """A silent app with its AM still to place, while the queue's AM limit
    moves: a full node's pass must leave the limit as offering it to every
    app would (its AM-limit check recomputes it), and a pass stopped by an
    earlier app's placement must not."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    alloc = write_alloc(tmp_path, '<queue name="a"/><queue name="b"/>')
    h = FSHarness(props={**NOT_RESERVABLE, **_shortcuts(on)}, alloc=alloc)
    h.add_node("n0", 8 * GB, vcores=16)
    filler = h.request(GB, "root.a", num=8)
    h.heartbeat("n0", times=8)
    early = h.request(GB, "root.a", num=1)  # starts before the AM app
    am_app = h.submit("root.a", am=Resource(2 * GB, 1))
    assert am_app is not None
    h.update()
    leaf = h.queue("root.a")
    steps: list[Any] = []
    h.heartbeat("n0")  # both offered the full node and silenced
    steps.append(leaf.max_am_metric)
    if on:
        assert h.fsapp(early).silent and h.fsapp(am_app).silent
    other = h.request(2 * GB, "root.b")  # queue b wants: a's share and AM limit fall
    steps.append(leaf.max_am_metric)
    h.heartbeat("n0")  # the AM app's check (skipped) would recompute the limit
    steps.append(leaf.max_am_metric)
    h.remove(other)  # and rise again, but no check is made
    h.ask(early, GB, 2)
    h.update()
    c = next(iter(h.sched.apps[filler].live.values()))
    h.sched.complete_container(c, 0, "", ContainerEvent.FINISHED, cleanup=False)
    h.drain()
    if on:
        assert h.fsapp(am_app).silent
    h.heartbeat("n0")  # 1 GB free: the earlier app takes it first
    assert h.live(early) == 1
    steps.append(leaf.max_am_metric)
    steps.append([h.sched.activities.of(h.fsapp(a).sapp.app_id) for a in (early, am_app)])
    return steps


async def test_the_am_limit_is_left_as_the_full_walk_leaves_it(
    tmp_path: Path, autojump_clock: Any
) -> None:
    on, off = _am_limit_steps(tmp_path / "on", True), _am_limit_steps(tmp_path / "off", False)
    assert on == off
    assert on[1] != on[2]  # the pass on the full node moved it
    assert on[3] == on[2]  # the pass stopped before the AM app's check


def _reserving(on: bool) -> tuple[FSHarness, str, str]:
    """Two full 4 GB nodes; an app asking off-switch for 3 GB, 3 vcores (at
    the reservation threshold) may hold one reservation (5 % of 2 nodes)."""
    h = FSHarness(props={**NOT_RESERVABLE, **_shortcuts(on)})
    h.add_node("n0", 4 * GB, vcores=4)
    h.add_node("n1", 4 * GB, vcores=4)
    filler = h.request(GB, "root.default", num=8)
    h.heartbeat("n0", times=4)
    h.heartbeat("n1", times=4)
    big = h.request(3 * GB, "root.default", num=2, vcores=3)
    return h, filler, big


async def test_an_app_holding_all_its_reservations_is_silent_until_one_ends(
    autojump_clock: Any,
) -> None:
    def run(on: bool) -> tuple[list[Any], list[bool], int]:
        h, filler, big = _reserving(on)
        app = h.fsapp(big)
        silent = []
        h.heartbeat("n0")  # reserves n0
        assert list(app.sapp.reservations) == ["n0"]
        h.heartbeat("n1")  # may not reserve another: "no node fits"
        silent.append(app.silent)
        h.heartbeat("n1", times=2)
        opportunities = _opportunities(h, big)
        # n0 frees room: the reservation is fulfilled, and n1 may be reserved
        for c in [c for c in h.sched.apps[filler].live.values() if c.node_id == "n0"][:3]:
            h.sched.complete_container(c, 0, "", ContainerEvent.FINISHED, cleanup=False)
        h.drain()
        h.heartbeat("n0")
        assert h.live(big) == 1
        silent.append(app.silent)
        h.heartbeat("n1")
        assert list(app.sapp.reservations) == ["n1"]
        return h.sched.activities.of(app.sapp.app_id), silent, opportunities

    on, off = run(True), run(False)
    assert on[0] == off[0]
    assert on[1] == [True, False] and off[1] == [False, False]
    assert on[2] < off[2]

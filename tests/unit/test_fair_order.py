"""A leaf queue keeps its apps with unmet demand in policy order as they
change (orderings.LeafOrder) instead of sorting them on every node update,
and offers a node to an app that asks for nothing only by recording why it
took nothing. Both are shortcuts: a seeded mix of asks, placements,
completions, updates and app removals must see, at every step, the order
the comparator gives, and the same placements and recorded decisions with
the shortcuts on and off."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from emu.resources import Resource
from emu.rm.attempt import RMAppAttempt
from emu.rm.container import ContainerEvent
from emu.rm.scheduler.fair.arith import is_none
from emu.rm.scheduler.fair.fs_leaf_queue import FSLeafQueue
from emu.rm.settings import SHORTCUTS
from emu.testing.fair import GB, FSHarness, write_alloc

POLICIES = ("drf", "fair", "fifo")


def _shortcuts(on: bool) -> dict[str, Any]:
    """The property that turns this scheduler's shortcuts on or off."""
    return {SHORTCUTS: "true" if on else "false"}


def _harness(tmp_path: Path, policy: str, on: bool = True) -> FSHarness:
    tmp_path.mkdir(parents=True, exist_ok=True)
    default = "drf" if policy == "drf" else "fair"
    alloc = write_alloc(
        tmp_path,
        f"<defaultQueueSchedulingPolicy>{default}</defaultQueueSchedulingPolicy>"
        f'<queue name="a"><schedulingPolicy>{policy}</schedulingPolicy>'
        "<maxResources>12288 mb, 12 vcores</maxResources></queue>"
        f'<queue name="b"><schedulingPolicy>{policy}</schedulingPolicy></queue>',
    )
    h = FSHarness(props=_shortcuts(on), alloc=alloc)
    for i in range(6):
        h.add_node(f"n{i}", 8 * GB, vcores=8, rack=f"/r{i % 2}")
    return h


def _comparator_order(leaf: FSLeafQueue) -> list[Any]:
    """The queue's runnable apps with unmet demand in the comparator's order."""
    wanting = [a for a in leaf.runnable if not is_none(a.demand - a.usage)]
    return leaf.policy.sort(wanting, leaf.fs.cluster, False)


def _run(tmp_path: Path, policy: str, seed: int, on: bool, check_order: bool) -> list[Any]:
    """Drive a seeded mix of events; what happened, step by step."""
    h = _harness(tmp_path / f"{policy}-{seed}-{on}", policy, on)
    assert h.sched.shortcuts is on
    rng = random.Random(seed)
    attempts: list[str] = []
    seen: list[Any] = []
    leaves = [h.queue("root.a"), h.queue("root.b")]
    for step in range(400):
        r = rng.random()
        if r < 0.12 or not attempts:
            am = Resource(GB, 1) if rng.random() < 0.3 else None
            attempt = h.submit(rng.choice(["root.a", "root.b"]), am=am)
            assert attempt is not None
            attempts.append(attempt)
        elif r < 0.35:
            attempt = rng.choice(attempts)
            h.ask(attempt, rng.choice([GB, 2 * GB, 3 * GB]), rng.randrange(0, 5),
                  vcores=rng.choice([1, 2, 4]), priority=rng.choice([1, 2]))  # fmt: skip
        elif r < 0.7:
            h.heartbeat(f"n{rng.randrange(6)}")
        elif r < 0.85:
            live = [c for a in attempts for c in h.sched.apps[a].live.values()]
            if live:
                c = rng.choice(sorted(live, key=lambda c: c.container_id))
                h.sched.complete_container(c, 0, "", ContainerEvent.FINISHED, cleanup=False)
                h.drain()
        elif r < 0.95:
            h.update()
        elif len(attempts) > 1:
            attempt = attempts.pop(rng.randrange(len(attempts)))
            h.remove(attempt)
        if check_order:
            for leaf in leaves:
                kept = [a.name for a in leaf.apps_with_demand(True)]
                assert kept == [a.name for a in _comparator_order(leaf)], step
        seen.append(
            sorted((a, sorted(h.sched.apps[a].live)) for a in attempts if a in h.sched.apps)
        )
    seen.append(h.sched.activities.waits())
    seen.append({a: h.sched.activities.of(a) for a in sorted(h.ctx.apps)})
    return seen


@pytest.mark.parametrize("policy", POLICIES)
async def test_kept_order_is_the_comparators_at_every_step(tmp_path: Path, policy: str) -> None:
    for seed in range(3):
        seen = _run(tmp_path, policy, seed, on=True, check_order=True)
        assert any(step for step in seen[:-2]), "some containers were placed"


@pytest.mark.parametrize("policy", POLICIES)
async def test_placements_and_decisions_are_the_same_with_shortcuts_off(
    tmp_path: Path, policy: str, autojump_clock: Any
) -> None:
    """On a virtual clock, so both runs record the same times."""
    for seed in range(3):
        on = _run(tmp_path, policy, seed, on=True, check_order=False)
        off = _run(tmp_path, policy, seed, on=False, check_order=False)
        assert on == off
        decisions = on[-1]
        reasons = {reason for log in decisions.values() for _, reason, _ in log}
        assert "no node fits" in reasons  # idle apps were offered nodes


async def test_order_follows_usage_and_is_rebuilt_for_a_new_cluster(tmp_path: Path) -> None:
    h = _harness(tmp_path, "drf")
    first = h.request(GB, "root.a", num=4)
    second = h.request(GB, "root.a", num=4)
    leaf = h.queue("root.a")
    assert [a.name for a in leaf.apps_with_demand(True)] == [
        h.fsapp(first).name,
        h.fsapp(second).name,
    ]
    h.heartbeat("n0")  # the first app, earlier, gets the container
    assert h.live(first) == 1
    assert leaf.apps_with_demand(True)[0].name == h.fsapp(second).name
    before = leaf.order.basis
    assert before is not None and before[1] is h.sched.cluster
    h.add_node("n9", 16 * GB, vcores=16)
    assert before[1] is not h.sched.cluster
    leaf.apps_with_demand(True)
    after = leaf.order.basis
    assert after is not None and after[1] is h.sched.cluster


async def test_a_settled_app_is_offered_nodes_again_after_a_new_decision_or_ask(
    autojump_clock: Any,
) -> None:
    h = FSHarness()
    h.add_node("n0", 8 * GB)
    attempt = h.request(GB, "root.default", num=2)
    h.heartbeat("n0", times=2)
    fs = h.fsapp(attempt)
    app_id = fs.sapp.app_id
    c = next(iter(h.sched.apps[attempt].live.values()))
    h.sched.complete_container(c, 0, "", ContainerEvent.FINISHED, cleanup=False)
    h.drain()
    # usage below the (stale) demand, no asks: an offer only records why
    assert fs in fs.queue.wanting and not fs.sapp.info.priorities
    h.heartbeat("n0")
    assert fs.settled
    assert [r for _, r, _ in h.sched.activities.of(app_id)] == ["allocated", "no node fits"]
    h.heartbeat("n0")  # skipped: would record nothing new
    h.sched.activities.record(app_id, "queue at max capacity", "n0")
    assert not fs.settled
    h.heartbeat("n0")  # offered again: the decision is recorded again
    assert [r for _, r, _ in h.sched.activities.of(app_id)][-2:] == [
        "queue at max capacity",
        "no node fits",
    ]
    assert fs.settled
    # a blacklist: offered nodes again (the quiet check then looks at it),
    # and not settled while it lasts
    h.sched.allocate(attempt, [], [], ["elsewhere"], [])
    assert not fs.settled
    h.heartbeat("n0")
    assert not fs.settled
    h.sched.allocate(attempt, [], [], [], ["elsewhere"])
    h.heartbeat("n0")
    assert fs.settled
    h.ask(attempt, GB, 1)  # asks again: offered nodes again, and placed
    assert not fs.settled
    h.heartbeat("n0")
    assert h.live(attempt) == 2


def _two_attempts_of_one_app(on: bool) -> list[Any]:
    """A settled attempt behind another attempt of the same app that records
    a new decision on every offer: the settled one is unsettled during the
    pass and must still be offered the node in it."""
    h = FSHarness(props=_shortcuts(on))
    h.add_node("n0", 8 * GB)
    first = h.request(GB, "root.default", num=2)
    h.heartbeat("n0", times=2)
    app_id = h.fsapp(first).sapp.app_id
    second = first.replace("_000001", "_000002")
    attempt = RMAppAttempt(second, app_id, 2, h.sched.now_ms())
    h.ctx.attempts[second] = attempt
    h.ctx.apps[app_id].attempts.append(second)
    h.sched.on_APP_ATTEMPT_ADDED(second, attempt)
    h.drain()
    # no usage, so ordered first; a strict `*` ask fits but may not be
    # placed, so each offer to it records "waiting for locality"
    h.ask(second, GB, 1, relax=False)
    h.update()
    # the first attempt now asks for nothing, below its (stale) demand
    c = next(iter(h.sched.apps[first].live.values()))
    h.sched.complete_container(c, 0, "", ContainerEvent.FINISHED, cleanup=False)
    h.drain()
    for _ in range(3):
        h.heartbeat("n0")
    return [r for _, r, _ in h.sched.activities.of(app_id)]


async def test_an_app_unsettled_during_a_pass_is_offered_the_node_in_it(
    autojump_clock: Any,
) -> None:
    on = _two_attempts_of_one_app(True)
    assert on == _two_attempts_of_one_app(False)
    assert on[-4:] == ["waiting for locality", "no node fits"] * 2


@pytest.mark.parametrize("policy", ["drf", "fair"])
async def test_a_parent_keeps_its_children_order_only_while_its_inputs_stand(
    tmp_path: Path, policy: str, autojump_clock: Any
) -> None:
    """FSParentQueue.children_in_order: the kept order is the policy's sort
    of the children as they are now, whatever changed in between (usage,
    demand, weight, a new child), and with the shortcuts off it is sorted
    afresh every time."""
    h = _harness(tmp_path, policy)
    root = h.sched.qm.root
    a, b = (h.sched.qm.get_leaf(f"root.{n}", True) for n in ("a", "b"))
    assert a is not None and b is not None

    def fresh() -> list[Any]:
        return root.policy.sort(root.children, h.sched.cluster, False)

    first = root.children_in_order()
    assert first == fresh() and len(first) >= 2
    assert root.children_in_order() is first  # nothing changed: kept
    busy = first[0]
    busy.inc_usage(Resource(24 * GB, 24))  # now the most used by far: last
    moved = root.children_in_order()
    assert moved == fresh() and moved[-1] is busy and moved[0] is not busy
    for child in root.children:
        child.demand = Resource(40 * GB, 40)
    assert root.children_in_order() == fresh()
    for child in root.children:
        if child is not busy:
            child.inc_usage(Resource(8 * GB, 8))
    assert root.children_in_order() == fresh() and root.children_in_order()[-1] is busy
    busy.weight = 1000.0  # its share per weight is now the smallest: first again
    assert root.children_in_order() == fresh() and root.children_in_order()[0] is busy
    c = h.sched.qm.get_leaf("root.c", True)
    assert c is not None and c in root.children_in_order()
    off = _harness(tmp_path / "off", policy, on=False).sched.qm.root
    kept = off.children_in_order()
    assert off.children_in_order() is not kept and off.children_in_order() == kept


@pytest.mark.parametrize("policy", ["drf", "fair"])
async def test_a_parent_rekeys_only_changed_children_and_keeps_the_sort_order(
    tmp_path: Path, policy: str, autojump_clock: Any
) -> None:
    """FSParentQueue.children_in_order over a seeded mix of changes (usage
    up and down, demand, weight, a min share that makes a child needy, so
    the comparator must order them): the order is always the policy's sort
    of the children as they are, by kept keys or afresh."""
    h = _harness(tmp_path, policy)
    root = h.sched.qm.root
    for name in ("c", "d"):
        assert h.sched.qm.get_leaf(f"root.{name}", True) is not None
    rng = random.Random(12)
    used: dict[int, list[Resource]] = {id(c): [] for c in root.children}
    needy_seen = 0
    for _ in range(600):
        child = rng.choice(root.children)
        what = rng.randrange(6)
        if what <= 1:
            r = Resource(rng.randrange(1, 6) * GB, rng.randrange(1, 6))
            child.inc_usage(r)
            used[id(child)].append(r)
        elif what == 2 and used[id(child)]:
            child.dec_usage(used[id(child)].pop(rng.randrange(len(used[id(child)]))))
        elif what == 3:
            child.demand = Resource(rng.randrange(0, 40) * GB, rng.randrange(0, 40))
        elif what == 4:
            child.weight = rng.choice([0.5, 1.0, 2.0, 3.0])
        else:
            child.min_share = rng.choice([Resource(0, 0), Resource(0, 0), Resource(30 * GB, 30)])
        needy_seen += any(c.min_share.memory > c.usage.memory for c in root.children)
        order = root.children_in_order()
        assert order == root.policy.sort(root.children, h.sched.cluster, False)
        assert root.children_in_order() is order  # nothing changed since: kept
    assert needy_seen > 50  # the comparator's case came up too

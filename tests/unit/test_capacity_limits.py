"""The CapacityScheduler's limit arithmetic on (memory, vcores) pairs
(`resource_math.MemoryLimits`, which the default calculator gets while no
resource carries an extra type) gives exactly the `Resource`s of the
general `Limits` - headroom, each leaf's current limit and user limit, what
a parent offers each child, whether a queue may take more - through a
seeded random run of asks, assignments and releases on a nested tree with
odd sizes and factors."""

from __future__ import annotations

import random

import pytest

from emu.resources import Resource
from emu.rm.scheduler.capacity import resource_math as rm
from emu.rm.scheduler.capacity.queues import ParentQueue
from emu.testing.capacity import GB, Harness, Q

TREE = {
    Q + "root.queues": "a,b,c",
    Q + "root.a.capacity": 12.5,
    Q + "root.a.maximum-capacity": 40,
    Q + "root.a.user-limit-factor": 3,
    Q + "root.a.minimum-user-limit-percent": 33,
    Q + "root.b.capacity": 37.5,
    Q + "root.b.user-limit-factor": -1,
    Q + "root.c.capacity": 50,
    Q + "root.c.maximum-capacity": 70,
    Q + "root.c.queues": "c1,c2",
    Q + "root.c.c1.capacity": 30,
    Q + "root.c.c1.minimum-user-limit-percent": 25,
    Q + "root.c.c2.capacity": 70,
    Q + "root.c.c2.user-limit-factor": 0.5,
}
LEAVES = ("a", "b", "c.c1", "c.c2")


def _both(sched, fn):  # type: ignore[no-untyped-def]
    """fn() with the pair arithmetic, then with the general one: (fast, general)."""
    assert type(sched.limits) is rm.MemoryLimits
    fast = fn()
    sched.limits = rm.Limits(sched.calc)
    general = fn()
    sched.limits = rm.MemoryLimits(sched.calc)
    return fast, general


def _values(r):  # type: ignore[no-untyped-def]
    return (r.memory, r.vcores, r.extra, type(r.memory), type(r.vcores))


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_fast_limits_match_the_general_ones(autojump_clock, seed: int) -> None:
    rng = random.Random(seed)
    h = Harness(TREE, **{"yarn.scheduler.maximum-allocation-mb": 16 * GB})
    nodes = [h.node(f"n{i}", rng.choice([3, 5, 8]) * GB + 512, 7 + i) for i in range(6)]
    sched = h.sched
    apps = []
    checked = 0
    for step in range(400):
        roll = rng.random()
        if roll < 0.08 or not apps:
            leaf = rng.choice(LEAVES)
            apps.append(h.submit(f"root.{leaf}", f"u{rng.randrange(4)}"))
        elif roll < 0.3:
            app = rng.choice(apps)
            h.ask(app, rng.choice([512, 1024, 1536, 3 * GB]), rng.randrange(0, 6), vcores=2)
        elif roll < 0.85:
            h.heartbeat(rng.choice(nodes))
        else:
            app = rng.choice(apps)
            live = sorted(app.live)
            if live:
                h.sched.complete_container(app.live[rng.choice(live)], 0, "", "KILL")
        for app in apps:
            if app.attempt_id not in h.sched.apps:
                continue
            fast, general = _both(sched, lambda app=app: h.sched.headroom(app))
            assert _values(fast) == _values(general), (step, app.app_id)
            checked += 1
        for name in LEAVES:
            leaf = h.leaf(f"root.{name}")
            fast, general = _both(sched, lambda leaf=leaf: leaf._compute_user_limit(h.sched))
            assert _values(fast) == _values(general), (step, name)
            fast, general = _both(sched, lambda leaf=leaf: sched.current_limit(leaf))
            assert _values(fast) == _values(general), (step, name)
        for q in sched.tree.values():
            if isinstance(q, ParentQueue):
                for c in q.children:
                    offer = sched.current_limit(q) - Resource(rng.randrange(3) * 700, 1)
                    fast, general = _both(
                        sched, lambda q=q, c=c, o=offer: sched.child_limit(q, c, o)
                    )
                    assert _values(fast) == _values(general), (step, c.path)
        for q in sched.tree.values():
            offer = sched.current_limit(q) - Resource(rng.randrange(4) * 900, rng.randrange(3))
            unreservable = Resource(rng.choice([0, 0, 512, 2048]), 1)
            fast, general = _both(
                sched, lambda q=q, o=offer, u=unreservable: sched._can_assign(q, o, u)
            )
            assert fast[0] == general[0] and _values(fast[1]) == _values(general[1]), step
    assert checked > 1000
    assert sum(a.used.memory for a in apps) > 0

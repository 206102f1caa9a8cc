"""max-parallel-apps as Hadoop's CSMaxRunningAppsEnforcer enforces it: an
attempt beyond a queue's (or a user's) limit waits as non-runnable, never
pending activation, and the oldest waiting one runs when a runnable attempt
of the queue ends."""

from __future__ import annotations

from emu.testing.capacity import GB, Harness, Q

TWO = {
    Q + "root.queues": "a,b",
    Q + "root.a.capacity": 50,
    Q + "root.b.capacity": 50,
    Q + "root.a.max-parallel-apps": 2,
}


async def test_queue_limit_holds_later_apps_until_one_ends(autojump_clock) -> None:
    h = Harness(TWO)
    h.node("h0", 16 * GB)
    apps = [h.submit("a", "u") for _ in range(4)]
    leaf = h.leaf("a")
    assert leaf.active == apps[:2]
    assert leaf.non_runnable == apps[2:]
    assert leaf.num_apps == 4  # all four were accepted
    # A waiting attempt is not scheduled, whatever it asks for.
    h.ask(apps[2], GB, 1)
    h.heartbeat(h.sched.nodes["h0"])
    assert not apps[2].live
    # One runnable attempt ends: only the oldest waiting one becomes runnable.
    h.finish(apps[0])
    assert leaf.active == [apps[1], apps[2]]
    assert leaf.non_runnable == [apps[3]]
    h.heartbeat(h.sched.nodes["h0"])
    assert apps[2].live


async def test_user_limit_and_other_queues(autojump_clock) -> None:
    h = Harness({**TWO, Q + "user.bob.max-parallel-apps": 1})
    h.node("h0", 16 * GB)
    first = h.submit("b", "bob")
    second = h.submit("b", "bob")
    other = h.submit("b", "carol")
    leaf = h.leaf("b")
    assert leaf.active == [first, other]
    assert leaf.non_runnable == [second]
    h.finish(first)
    assert leaf.active == [second, other]  # FIFO: submission order
    assert not leaf.non_runnable

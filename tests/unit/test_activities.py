"""Why pending: the per-app decision log the schedulers write."""

from __future__ import annotations

from emu.rm.scheduler import activities as act
from emu.rm.scheduler.activities import Activities


def test_a_decision_is_kept_only_when_the_reason_changes():
    now = [0]
    a = Activities(lambda: now[0], keep=4)
    for t, reason in [(1, act.NO_FIT), (2, act.NO_FIT), (3, act.LOCALITY), (4, act.NO_FIT)]:
        now[0] = t
        a.record("app1", reason, "n1")
    assert a.of("app1") == [(1, act.NO_FIT, "n1"), (3, act.LOCALITY, "n1"), (4, act.NO_FIT, "n1")]


def test_the_log_is_a_bounded_ring_but_why_it_waited_to_start_stays():
    now = [0]
    a = Activities(lambda: now[0], keep=3)
    now[0] = 5
    a.record("app1", act.QUEUE_MAX, "n1")
    now[0] = 9
    a.record("app1", act.USER_LIMIT, "n2")
    for t in range(10, 20):
        now[0] = t
        a.record("app1", act.ALLOCATED if t % 2 else act.NO_FIT, "n3")
    assert len(a.of("app1")) == 3 and a.of("app1")[-1] == (19, act.ALLOCATED, "n3")
    waits = a.waits()["app1"]
    assert waits["before_start"] == [  # up to its first container, at 11
        [5, act.QUEUE_MAX, "n1"],
        [9, act.USER_LIMIT, "n2"],
        [10, act.NO_FIT, "n3"],
    ]
    assert [e[0] for e in waits["recent"]] == [17, 18, 19]


def test_apps_never_held_back_are_not_listed():
    a = Activities(lambda: 0)
    a.record("app1", act.ALLOCATED, "n1")
    a.record("app2", act.RESERVED, "n1")
    assert a.waits() == {}
    assert act.STATES[act.RESERVED] == "RESERVED"

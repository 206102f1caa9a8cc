"""The dispatcher handles events in the order raised, never recursively."""

from __future__ import annotations

import pytest

from emu.rm.dispatcher import Dispatcher, Event


def test_events_raised_while_handling_wait_their_turn():
    d = Dispatcher()
    order: list[str] = []

    def a(e: Event) -> None:
        order.append(f"a:{e.target}")
        if e.target == "1":
            d.dispatch(Event("b", "X", "from-a1"))
            d.dispatch(Event("a", "X", "3"))
            assert order[-1] == "a:1"  # not handled recursively

    def b(e: Event) -> None:
        order.append(f"b:{e.target}")

    d.register("a", a)
    d.register("b", b)
    d.dispatch(Event("a", "X", "1"))
    d.dispatch(Event("a", "X", "2"))
    d.drain()
    assert order == ["a:1", "a:2", "b:from-a1", "a:3"]
    assert d.depth == 0
    assert d.handled["a.X"] == 3
    assert d.handled["b.X"] == 1
    assert d.max_depth == 3


def test_handler_registered_once_per_kind():
    d = Dispatcher()
    d.register("a", lambda e: None)
    with pytest.raises(ValueError):
        d.register("a", lambda e: None)


def test_counts_are_kept_per_kind_and_type_in_first_seen_order():
    d = Dispatcher()
    d.register("a", lambda e: None)
    d.register("b", lambda e: None)
    for kind, etype in [("b", "Y"), ("a", "X"), ("b", "Y"), ("a", "Z")]:
        d.dispatch(Event(kind, etype, "t"))
    d.drain()
    # handled by their caller, not queued (a quiet heartbeat's): the same record
    d.handled_at_once("a", "X", 2, 0.0)
    assert list(d.handled.items()) == [("b.Y", 2), ("a.X", 3), ("a.Z", 1)]
    seconds = d.handle_seconds
    assert list(seconds) == ["b.Y", "a.X", "a.Z"]
    assert all(s >= 0.0 for s in seconds.values())
    assert d.counts("b", "Y") is d.counts("b", "Y")

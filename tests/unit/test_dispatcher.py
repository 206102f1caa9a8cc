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


def test_a_handler_that_raises_stops_the_queue_and_is_reported_once():
    """Hadoop's RM exits on an error in its dispatcher: nothing after the
    failing event is handled, and the error goes to `on_error` (the RM
    fails with it) instead of out of the request that drained the queue."""
    d = Dispatcher()
    seen: list[str] = []
    failed: list[tuple[str, str]] = []

    def a(e: Event) -> None:
        seen.append(e.target)
        if e.target == "2":
            raise ValueError("bad state")

    d.register("a", a)
    for target in "123":
        d.dispatch(Event("a", "X", target))
    with pytest.raises(ValueError):
        d.drain()  # without on_error it propagates
    assert d.depth == 0
    d.on_error = lambda e, exc: failed.append((e.target, str(exc)))
    for target in "456":
        d.dispatch(Event("a", "X", target if target != "5" else "2"))
    d.drain()
    assert seen == ["1", "2", "4", "2"]
    assert failed == [("2", "bad state")]
    assert d.depth == 0

"""The RM's event dispatcher: one ordered queue, handlers per event kind.

YARN's AsyncDispatcher decouples components: a handler never calls another
component directly, it raises an event. We keep that shape and its ordering
guarantee (events are handled in the order raised; an event raised while
handling another waits its turn instead of recursing), but drain the queue
synchronously after each request, so a reply reflects every consequence of
the request and replays stay deterministic.
"""

from __future__ import annotations

import time
from collections import Counter, deque
from collections.abc import Callable
from typing import Any


class Event:
    """`kind` selects the handler (app, attempt, container, node, scheduler);
    `type` is the event name; `target` the entity id; `data` anything.

    A plain class rather than a NamedTuple: compiled, it is built without
    the namedtuple's Python-level `__new__` (several hundred events per
    simulated second)."""

    __slots__ = ("data", "kind", "target", "type")

    def __init__(self, kind: str, type: str, target: str, data: Any = None) -> None:
        self.kind = kind
        self.type = type
        self.target = target
        self.data = data

    def __repr__(self) -> str:
        return f"Event({self.kind!r}, {self.type!r}, {self.target!r}, {self.data!r})"


Handler = Callable[[Event], None]


class EventCounts:
    """How many events of one kind and type were handled, and the wall
    seconds their handlers took (SLS's scheduler-operation counters and
    timings)."""

    __slots__ = ("count", "seconds")

    def __init__(self) -> None:
        self.count = 0
        self.seconds = 0.0


class Dispatcher:
    """Ordered event queue with per-kind handlers and timing metrics."""

    def __init__(self) -> None:
        self._queue: deque[Event] = deque()
        self._handlers: dict[str, Handler] = {}
        self._counts: dict[str, EventCounts] = {}
        """By "kind.type", in the order each was first counted."""
        self._by_kind: dict[str, dict[str, EventCounts]] = {}
        """The same records by kind and type: what `drain` looks up for
        each event, without formatting its "kind.type" name."""
        self.max_depth = 0
        self._draining = False
        self.on_error: Callable[[Event, Exception], None] | None = None
        """Called when a handler raises, with the event and the exception,
        once the queue is emptied; without it the exception propagates.
        Hadoop's RM exits on an error in its dispatcher
        (yarn.dispatcher.exit-on-error): what the handler had done is
        unknown, so nothing more is handled."""

    def register(self, kind: str, handler: Handler) -> None:
        if kind in self._handlers:
            raise ValueError(f"handler for {kind!r} already registered")
        self._handlers[kind] = handler

    def dispatch(self, event: Event) -> None:
        """Queue an event; it is handled when the queue drains."""
        self._queue.append(event)
        if len(self._queue) > self.max_depth:
            self.max_depth = len(self._queue)

    @property
    def depth(self) -> int:
        return len(self._queue)

    @property
    def handled(self) -> Counter[str]:
        """Events handled so far by "kind.type" (a copy)."""
        return Counter({name: c.count for name, c in self._counts.items()})

    @property
    def handle_seconds(self) -> dict[str, float]:
        """Wall seconds their handlers took by "kind.type" (a copy)."""
        return {name: c.seconds for name, c in self._counts.items()}

    def counts(self, kind: str, etype: str) -> EventCounts:
        """The record of events of `kind` and `etype` (made at first use)."""
        of_kind = self._by_kind.get(kind)
        if of_kind is None:
            of_kind = self._by_kind[kind] = {}
        counts = of_kind.get(etype)
        if counts is None:
            counts = of_kind[etype] = self._counts[f"{kind}.{etype}"] = EventCounts()
        return counts

    def count(self, counts: EventCounts, n: int, seconds: float) -> None:
        """`n` more events of `counts`' kind and type handled, their
        handlers having taken `seconds`: how `drain` counts each event, and
        how `handled_at_once` counts the events a caller handled itself."""
        counts.count += n
        counts.seconds += seconds

    def handled_at_once(self, kind: str, etype: str, n: int, seconds: float) -> None:
        """Count `n` events of `kind` and `etype` that a caller handled by
        calling their handler's code itself, each in place of dispatching
        it onto the empty queue and draining that (an event the caller
        knows the effect of, spared the queue's round trip): counted as
        `drain` counts, and the queue's depth as that one event would have
        made it."""
        if n:
            if self.max_depth < 1:
                self.max_depth = 1
            self.count(self.counts(kind, etype), n, seconds)

    def drain(self) -> None:
        """Handle queued events, and those they raise, until none is left."""
        if self._draining:
            return
        self._draining = True
        queue, handlers, by_kind = self._queue, self._handlers, self._by_kind
        clock = time.perf_counter
        event: Event | None = None
        try:
            while queue:
                event = queue.popleft()
                kind = event.kind
                of_kind = by_kind.get(kind)
                counts = of_kind.get(event.type) if of_kind is not None else None
                if counts is None:
                    counts = self.counts(kind, event.type)
                start = clock()
                handlers[kind](event)
                self.count(counts, 1, clock() - start)
        except Exception as e:
            queue.clear()
            if self.on_error is None or event is None:
                raise
            self.on_error(event, e)
        finally:
            self._draining = False

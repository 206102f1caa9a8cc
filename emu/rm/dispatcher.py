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
from collections import Counter, defaultdict, deque
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


class Dispatcher:
    """Ordered event queue with per-kind handlers and timing metrics."""

    def __init__(self) -> None:
        self._queue: deque[Event] = deque()
        self._handlers: dict[str, Handler] = {}
        self.handled: Counter[str] = Counter()
        self.handle_seconds: dict[str, float] = defaultdict(float)
        self.max_depth = 0
        self._draining = False

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

    def drain(self) -> None:
        """Handle queued events, and those they raise, until none is left."""
        if self._draining:
            return
        self._draining = True
        queue, handlers = self._queue, self._handlers
        handled, seconds = self.handled, self.handle_seconds
        clock = time.perf_counter
        try:
            while queue:
                event = queue.popleft()
                name = f"{event.kind}.{event.type}"
                start = clock()
                handlers[event.kind](event)
                seconds[name] += clock() - start
                handled[name] += 1
        finally:
            self._draining = False

"""The events a scheduler handles, as YARN's SchedulerEventType.

Entities raise these through the dispatcher; `Scheduler.handle` calls
`on_<EVENT>`. `check_handlers` ties the enum to those methods at import, so
an event no scheduler handles, or a handler no event reaches, fails at once.
SLS's realtimetrack writes a timecost per member (`emu.metrics.sls`).
"""

from __future__ import annotations

from enum import StrEnum


class SchedulerEvent(StrEnum):
    """Hadoop's SchedulerEventType names for what emu's schedulers handle
    (KILL_PREEMPTED is emu's: preemption policies kill through it)."""

    NODE_ADDED = "NODE_ADDED"
    NODE_REMOVED = "NODE_REMOVED"
    NODE_UPDATE = "NODE_UPDATE"
    NODE_RESOURCE_UPDATE = "NODE_RESOURCE_UPDATE"
    NODE_LABELS_UPDATE = "NODE_LABELS_UPDATE"
    APP_ADDED = "APP_ADDED"
    APP_REMOVED = "APP_REMOVED"
    APP_ATTEMPT_ADDED = "APP_ATTEMPT_ADDED"
    APP_ATTEMPT_REMOVED = "APP_ATTEMPT_REMOVED"
    CONTAINER_EXPIRED = "CONTAINER_EXPIRED"
    KILL_PREEMPTED = "KILL_PREEMPTED"


def check_handlers(cls: type) -> None:
    """Raise TypeError unless `cls` has exactly one `on_<EVENT>` per member."""
    handlers = {name[3:] for name in dir(cls) if name.startswith("on_") and name[3:].isupper()}
    events = {e.value for e in SchedulerEvent}
    if handlers != events:
        raise TypeError(
            f"{cls.__name__}: events without a handler {sorted(events - handlers)}, "
            f"handlers without an event {sorted(handlers - events)}"
        )

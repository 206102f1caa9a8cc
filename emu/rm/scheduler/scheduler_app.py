"""An attempt as every scheduler sees it (Hadoop's
SchedulerApplicationAttempt): its asks, live containers, usage,
reservations and the containers marked for preemption."""

from __future__ import annotations

from typing import TYPE_CHECKING

from emu.resources import ZERO, Resource
from emu.rm.scheduler.app_scheduling_info import AppSchedulingInfo

if TYPE_CHECKING:
    from emu.rm.container import RMContainer


class SchedulerApp:
    """An attempt as the scheduler sees it (YARN's SchedulerApplicationAttempt)."""

    __slots__ = (
        "am_pending",
        "am_resource",
        "am_running",
        "app_id",
        "attempt_id",
        "blacklist",
        "container_prefix",
        "container_seq",
        "created",
        "info",
        "live",
        "newly_allocated",
        "opportunities",
        "order",
        "priority",
        "queue",
        "reservations",
        "start_ms",
        "to_preempt",
        "to_preempt_resource",
        "used",
        "user",
    )

    def __init__(
        self,
        attempt_id: str,
        app_id: str,
        queue: str,
        user: str,
        priority: int,
        order: int,
        am_resource: Resource,
        start_ms: int,
        container_seq: int,
        created: int = 0,
    ) -> None:
        self.attempt_id = attempt_id
        self.app_id = app_id
        self.queue = queue
        self.user = user
        self.priority = priority
        self.order = order
        self.am_resource = am_resource
        self.start_ms = start_ms
        self.created = created
        """The attempt's rank in creation order among all attempts: stands
        for SchedulerApplicationAttempt.startTime, the wall clock
        (SystemClock) when the attempt was made, which orders a new
        attempt of an old app after the attempts made before it."""
        self.info = AppSchedulingInfo()
        self.live: dict[str, RMContainer] = {}
        self.used = ZERO
        self.newly_allocated: list[RMContainer] = []
        self.am_pending = False
        self.am_running = False
        self.blacklist: set[str] = set()
        self.reservations: dict[str, RMContainer] = {}
        self.opportunities: dict[int, int] = {}
        self.to_preempt: dict[str, RMContainer] = {}
        self.to_preempt_resource = ZERO
        self.container_seq = container_seq
        self.container_prefix = ""
        """The attempt's container ids up to the sequence number
        ("container_<cluster ts>_<app>_<attempt>_"), made at its first
        container (the scheduler's `_new_container`)."""

    @property
    def pending(self) -> Resource:
        return self.info.pending

    def reserved_total(self) -> Resource:
        total = ZERO
        for c in self.reservations.values():
            total = total + c.resource
        return total

    def mark_for_preemption(self, c: RMContainer) -> None:
        """Mark a live container to be preempted; the AM hears of it in
        allocate replies until it is released or the mark is dropped."""
        if c.container_id not in self.to_preempt:
            self.to_preempt[c.container_id] = c
            self.to_preempt_resource = self.to_preempt_resource + c.resource

    def unmark_for_preemption(self, container_id: str) -> None:
        c = self.to_preempt.pop(container_id, None)
        if c is not None:
            self.to_preempt_resource = self.to_preempt_resource - c.resource

"""Per-queue counters (Hadoop's QueueMetrics)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from emu.resources import ZERO, Resource


@dataclass
class QueueMetrics:
    """Per-queue counters, as YARN's QueueMetrics."""

    name: str
    allocated: Resource = ZERO
    allocated_containers: int = 0
    pending: Resource = ZERO
    reserved: Resource = ZERO
    apps_submitted: int = 0
    apps_running: int = 0
    apps_pending: int = 0
    apps_completed: int = 0
    apps_failed: int = 0
    apps_killed: int = 0
    containers_allocated_total: int = 0
    containers_released_total: int = 0
    preempted_containers: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "allocated": self.allocated.to_wire(),
            "allocated_containers": self.allocated_containers,
            "pending": self.pending.to_wire(),
            "reserved": self.reserved.to_wire(),
            "apps_submitted": self.apps_submitted,
            "apps_running": self.apps_running,
            "apps_pending": self.apps_pending,
            "apps_completed": self.apps_completed,
            "apps_failed": self.apps_failed,
            "apps_killed": self.apps_killed,
            "containers_allocated_total": self.containers_allocated_total,
            "containers_released_total": self.containers_released_total,
            "preempted_containers": self.preempted_containers,
        }

"""The cluster's utilization integral: allocated and capacity, per resource,
summed over time exactly (resource x milliseconds), for run summaries.

The scheduler advances it just before anything changes what is allocated
or what the cluster holds, so each interval is charged at the values that
held during it.
"""

from __future__ import annotations

from emu.resources import Resource


class UtilizationIntegral:
    """Time-weighted allocated/capacity since the start of a run."""

    __slots__ = (
        "allocated_mb_ms",
        "allocated_vcores_ms",
        "capacity_mb_ms",
        "capacity_vcores_ms",
        "last_ms",
    )

    def __init__(self) -> None:
        self.allocated_mb_ms = 0
        self.allocated_vcores_ms = 0
        self.capacity_mb_ms = 0
        self.capacity_vcores_ms = 0
        self.last_ms = 0

    def advance(self, now_ms: int, used: Resource, cluster: Resource) -> None:
        """Charge the time since the last call at `used` out of `cluster`."""
        dt = now_ms - self.last_ms
        if dt > 0:
            self.allocated_mb_ms += used.memory * dt
            self.allocated_vcores_ms += used.vcores * dt
            self.capacity_mb_ms += cluster.memory * dt
            self.capacity_vcores_ms += cluster.vcores * dt
            self.last_ms = now_ms

    def ratios(self) -> dict[str, float]:
        """Allocated over capacity per resource (0.0 before any capacity)."""
        return {
            "memory": self.allocated_mb_ms / self.capacity_mb_ms if self.capacity_mb_ms else 0.0,
            "vcores": (
                self.allocated_vcores_ms / self.capacity_vcores_ms
                if self.capacity_vcores_ms
                else 0.0
            ),
        }

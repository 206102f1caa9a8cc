"""A node as every scheduler sees it (Hadoop's SchedulerNode)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from emu.resources import ZERO, Resource

if TYPE_CHECKING:
    from emu.rm.container import RMContainer


class SchedulerNode:
    """A node as the scheduler sees it: what is used, free, and reserved."""

    __slots__ = (
        "allocated",
        "available",
        "containers",
        "host",
        "node_id",
        "rack",
        "reserved",
        "total",
    )

    def __init__(self, node_id: str, host: str, rack: str, total: Resource) -> None:
        self.node_id = node_id
        self.host = host
        self.rack = rack
        self.total = total
        self.allocated = ZERO
        self.available = total
        self.containers: dict[str, RMContainer] = {}
        self.reserved: RMContainer | None = None

    def add(self, c: RMContainer) -> None:
        self.containers[c.container_id] = c
        self.allocated = self.allocated + c.resource
        self.available = self.available - c.resource

    def remove(self, c: RMContainer) -> None:
        if self.containers.pop(c.container_id, None) is not None:
            self.allocated = self.allocated - c.resource
            self.available = self.available + c.resource

    def set_total(self, total: Resource) -> None:
        self.total = total
        self.available = total - self.allocated

"""A queue with child queues: Hadoop's FSParentQueue.

It splits its fair share among its children with its policy and offers a
node to the children in policy order, depth first, stopping at the first
child that assigns something.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from emu.resources import ZERO, Resource, component_min
from emu.rm.scheduler.fair.fs_queue import NONE, FSQueue
from emu.rm.scheduler.fair.orderings import ChildOrder

if TYPE_CHECKING:
    from emu.rm.scheduler.fair.scheduler import FairScheduler
    from emu.rm.scheduler.scheduler_node import SchedulerNode


class FSParentQueue(FSQueue):
    def __init__(self, name: str, fs: FairScheduler, parent: FSParentQueue | None) -> None:
        self.children: list[FSQueue] = []
        self.runnable_apps = 0
        self._order = ChildOrder(fs.shortcuts)
        super().__init__(name, fs, parent)

    def children_list(self) -> list[FSQueue]:
        return self.children

    def num_runnable(self) -> int:
        return self.runnable_apps

    def is_empty(self) -> bool:
        return all(c.is_empty() for c in self.children)

    def update_internal(self) -> None:
        self.policy.compute_shares(self.children, self.fair_share, self.shortcuts)
        for child in self.children:
            child.update_internal()

    def recompute_steady_shares(self) -> None:
        self.policy.compute_steady_shares(self.children, self.steady_fair_share, self.shortcuts)
        for child in self.children:
            if isinstance(child, FSParentQueue):
                child.recompute_steady_shares()

    def update_demand(self) -> None:
        demand = ZERO
        for child in self.children:
            child.update_demand()
            demand = demand + child.demand
        self.demand = component_min(demand, self.max_share)

    def assign_container(self, node: SchedulerNode) -> Resource:
        if not self.precheck(node):
            return NONE
        for child in self.children_in_order():
            assigned: Resource = child.assign_container(node)
            if assigned is not NONE and assigned != NONE:
                return assigned
        return NONE

    def children_in_order(self) -> list[FSQueue]:
        """The children in the policy's order, as each node update offers
        the node to them (kept: see orderings.ChildOrder)."""
        return self._order.of(self.children, self.fs.cluster, self.policy)

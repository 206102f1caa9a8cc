"""The FIFO scheduler, as Hadoop's FifoScheduler.

One queue ("default"). On each node heartbeat, applications are visited in
submission order (application id); for each, priorities from highest
(lowest number) down, placing as many containers as fit: node-local asks
first, then rack-local, then off-switch. No delay scheduling, no
reservations. An application that gets nothing at a priority is not offered
its lower priorities on this node ("do not assign out of order").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from emu.resources import ResourceCalculator
from emu.rm.scheduler import activities as act
from emu.rm.scheduler.common import (
    NODE_LOCAL,
    OFF_SWITCH,
    RACK_LOCAL,
    Scheduler,
    SchedulerApp,
    SchedulerNode,
)

if TYPE_CHECKING:
    from emu.rm.app import RMApp
    from emu.rm.context import RMContext

DEFAULT_QUEUE = "default"


class FifoScheduler(Scheduler):
    name = "fifo"

    def __init__(self, ctx: RMContext) -> None:
        super().__init__(ctx, ResourceCalculator())
        self.queue_metrics(DEFAULT_QUEUE)
        self._order: list[SchedulerApp] = []

    def place_app(self, app: RMApp) -> str | None:
        app.queue = DEFAULT_QUEUE
        return None

    def attempt_added(self, sapp: SchedulerApp) -> None:
        self._order.append(sapp)
        self._order.sort(key=lambda a: a.order)

    def attempt_removed(self, sapp: SchedulerApp) -> None:
        self._order.remove(sapp)

    def schedule(self, node: SchedulerNode) -> None:
        minimum, count = self.minimum, self.calc.divide_and_count
        record = self.activities.record
        for sapp in list(self._order):
            if not sapp.info.priorities:
                continue
            if node.host in sapp.blacklist or node.rack in sapp.blacklist:
                continue
            for priority in list(sapp.info.priorities):
                if self._assign_on_node(sapp, node, priority) == 0:
                    record(sapp.app_id, act.NO_FIT, node.node_id)
                    break
                record(sapp.app_id, act.ALLOCATED, node.node_id)
            if count(node.available, minimum) < 1:
                break

    def _assign_on_node(self, sapp: SchedulerApp, node: SchedulerNode, priority: int) -> int:
        assigned = 0
        count = self.calc.divide_and_count
        for node_type in (NODE_LOCAL, RACK_LOCAL, OFF_SWITCH):
            while True:
                ask = sapp.info.can_place(priority, node, node_type)
                if ask is None or count(node.available, ask.capability) < 1:
                    break
                self.place(sapp, node, priority, node_type, ask)
                assigned += 1
        return assigned

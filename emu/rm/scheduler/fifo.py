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

from mypy_extensions import mypyc_attr

from emu.resources import ResourceCalculator
from emu.rm.scheduler import activities as act
from emu.rm.scheduler.abstract_scheduler import Scheduler
from emu.rm.scheduler.locality import NODE_LOCAL, OFF_SWITCH, RACK_LOCAL
from emu.rm.scheduler.scheduler_app import SchedulerApp
from emu.rm.scheduler.scheduler_node import SchedulerNode
from emu.rm.scheduler.sorted_list import set_member

if TYPE_CHECKING:
    from emu.rm.app import RMApp
    from emu.rm.context import RMContext

DEFAULT_QUEUE = "default"


@mypyc_attr(allow_interpreted_subclasses=True)  # plugins subclass it: docs/plugins.md
class FifoScheduler(Scheduler):
    name = "fifo"
    holds_launched = True  # FifoScheduler.completedContainer: releaseContainer(id, false)

    def __init__(self, ctx: RMContext) -> None:
        super().__init__(ctx, ResourceCalculator())
        self.queue_metrics(DEFAULT_QUEUE)
        self._order: list[SchedulerApp] = []
        # Shortcut: the attempts with outstanding asks, in `_order`'s order
        # (submission order, ties by arrival as its stable sort keeps them),
        # so a node update visits those alone instead of every attempt.
        self._rank: dict[str, tuple[int, int]] = {}
        self._arrivals = 0
        self._needy: list[tuple[tuple[int, int], str]] = []

    def place_app(self, app: RMApp) -> str | None:
        app.queue = DEFAULT_QUEUE
        return None

    def attempt_added(self, sapp: SchedulerApp) -> None:
        self._order.append(sapp)
        self._order.sort(key=lambda a: a.order)
        self._arrivals += 1
        self._rank[sapp.attempt_id] = (sapp.order, self._arrivals)

    def attempt_removed(self, sapp: SchedulerApp) -> None:
        self._order.remove(sapp)
        self._set_needy(sapp, False)
        del self._rank[sapp.attempt_id]

    def demand_changed(self, sapp: SchedulerApp) -> None:
        self._set_needy(sapp, sapp.info.has_pending())

    def _set_needy(self, sapp: SchedulerApp, on: bool) -> None:
        set_member(self._needy, (self._rank[sapp.attempt_id], sapp.attempt_id), on)

    def skip_quiet_node_update(self, node_id: str) -> bool:
        """No attempt has an outstanding ask: the pass would visit none."""
        return not self._needy and node_id in self.nodes

    def schedule(self, node: SchedulerNode) -> None:
        minimum, count = self.minimum, self.calc.divide_and_count
        record = self.activities.record
        if self.shortcuts:
            apps = [self.apps[attempt_id] for _, attempt_id in self._needy]
        else:
            apps = list(self._order)
        for sapp in self.app_order(apps):
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

    def app_order(self, apps: list[SchedulerApp]) -> list[SchedulerApp]:
        """The order a node is offered to `apps` (those that may want it, in
        submission order): FIFO keeps it. The one decision a plugin that
        subclasses FIFO changes by overriding this (docs/plugins.md)."""
        return apps

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

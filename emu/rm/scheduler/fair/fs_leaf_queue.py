"""A queue that holds apps: Hadoop's FSLeafQueue.

It splits its fair share among its runnable apps with its policy and
offers a node to its runnable apps with unmet demand in policy order,
stopping at the first that places or reserves; an app that the node is
offered to records why it took nothing (activities). It tracks the usage
of its AMs against maxAMShare and the time it was last at its min share,
for starvation.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from emu.resources import ZERO, Resource, component_min
from emu.rm.scheduler import activities as act
from emu.rm.scheduler.fair.arith import (
    fits_in,
    is_none,
    multiply_round_up,
    same,
    subtract_non_negative,
    value,
    with_value,
)
from emu.rm.scheduler.fair.fs_queue import NONE, FSQueue
from emu.rm.scheduler.fair.orderings import LeafOrder

if TYPE_CHECKING:
    from emu.rm.scheduler.fair.app import FSApp
    from emu.rm.scheduler.fair.fs_parent_queue import FSParentQueue
    from emu.rm.scheduler.fair.preemption import StarvedApps
    from emu.rm.scheduler.fair.scheduler import FairScheduler
    from emu.rm.scheduler.scheduler_node import SchedulerNode


class FSLeafQueue(FSQueue):
    is_leaf = True

    def __init__(self, name: str, fs: FairScheduler, parent: FSParentQueue | None) -> None:
        self.runnable: list[FSApp] = []
        self.non_runnable: list[FSApp] = []
        self._runnable_seq = 0
        self.am_usage = ZERO
        self.max_am_metric = ZERO
        self.last_time_at_min_share = fs.now_ms()
        super().__init__(name, fs, parent)
        self.order = LeafOrder(self, fs.quiet)
        """The runnable apps with unmet demand, and (shortcuts on) their kept
        policy order, settled and silent apps."""

    @property
    def wanting(self) -> dict[FSApp, None]:
        """The runnable apps whose demand differs from their usage."""
        return self.order.wanting

    def num_runnable(self) -> int:
        return len(self.runnable)

    def is_empty(self) -> bool:
        return not self.runnable and not self.non_runnable

    def add_app(self, app: FSApp, runnable: bool) -> None:
        (self.runnable if runnable else self.non_runnable).append(app)
        app.set_runnable(runnable)
        self.inc_usage(app.usage)

    def remove_app(self, app: FSApp) -> bool:
        """Remove the app; True if it was runnable."""
        runnable = app in self.runnable
        if runnable:
            self.runnable.remove(app)
            if app.sapp.am_running:
                self.am_usage = self.am_usage - app.am_resource
        else:
            self.non_runnable.remove(app)
        app.set_runnable(False)
        self.dec_usage(app.usage)
        return runnable

    def next_runnable_seq(self) -> int:
        """Order of joining `runnable`: the comparator's last tie (two
        attempts of one app with one start time) falls to this order, as a
        stable sort of `runnable` leaves it."""
        self._runnable_seq += 1
        return self._runnable_seq

    def update_internal(self) -> None:
        self.policy.compute_shares(self.runnable, self.fair_share, self.shortcuts)

    def update_demand(self) -> None:
        memory = vcores = 0
        extra = False
        for apps in (self.runnable, self.non_runnable):
            for app in apps:
                app.update_demand()
                d = app.demand
                memory += d.memory
                vcores += d.vcores
                extra = extra or bool(d.extra)
        if extra:  # the sum with every resource type
            demand = ZERO
            for app in self.runnable:
                demand = demand + app.demand
            for app in self.non_runnable:
                demand = demand + app.demand
        else:
            demand = Resource(memory, vcores)
        self.demand = component_min(demand, self.max_share)

    def apps_with_demand(self, assignment: bool) -> list[FSApp]:
        """Runnable apps with unmet demand in policy order; for preemption,
        only those due a starvation check."""
        candidates: Iterable[FSApp] = self.order.wanting
        if not self.shortcuts:
            candidates = [a for a in self.runnable if not is_none(a.demand - a.usage)]
        elif self.order.kept():
            ordered = self.order.ordered
            if assignment:
                return ordered[:]
            now = self.fs.now_ms()
            return [a for a in ordered if now >= a.next_starvation_check]
        if assignment:
            return self.policy.sort(candidates, self.fs.cluster, self.shortcuts)
        now = self.fs.now_ms()
        apps = [a for a in candidates if now >= a.next_starvation_check]
        return self.policy.sort(apps, self.fs.cluster, self.shortcuts)

    def assign_container(self, node: SchedulerNode) -> Resource:
        if not self.precheck(node):
            if node.reserved is None:  # at maxResources: say so for its oldest waiting app
                for app in self.runnable:
                    if not same(app.demand, app.usage):
                        self.fs.activities.record(app.sapp.app_id, act.QUEUE_MAX, node.node_id)
                        break
            return NONE
        if self.shortcuts and self.order.kept():
            return self.order.offer(node)
        for app in self.apps_with_demand(True):
            if app.blacklisted(node):
                continue
            assigned = app.assign_container(node)
            if assigned != NONE:
                return assigned
        return NONE

    # --- AM limits ------------------------------------------------------------------------------
    def max_am_resource(self) -> Resource:
        """Fair share x maxAMShare, rounded up; a zero component of the fair
        share, extra resource types included, is replaced by min(cluster
        available, max share) (`computeMaxAMResource` and
        `QueueMetrics.fillInValuesFromAvailableResources`)."""
        r = self.fair_share
        available = self.fs.root_available
        max_share = self.max_share
        if r.memory == 0:
            r = Resource(min(available.memory, max_share.memory), r.vcores, r.extra)
        if r.vcores == 0:
            r = Resource(r.memory, min(available.vcores, max_share.vcores), r.extra)
        if available.extra:
            for rtype, free in available.extra:
                if value(r, rtype) == 0:
                    r = with_value(r, rtype, min(free, value(max_share, rtype)))
        return multiply_round_up(r, self.max_am_share)

    def can_run_am(self, am_resource: Resource) -> bool:
        """Whether one more AM fits under maxAMShare (-1 disables the check);
        the limit computed is kept for reports, as Hadoop's queue metrics do."""
        if abs(self.max_am_share - -1.0) < 0.0001:
            return True
        self.max_am_metric = self.max_am_resource()
        return fits_in(self.am_usage + am_resource, self.max_am_metric)

    # --- starvation -----------------------------------------------------------------------------
    def min_share_starvation(self, now: int) -> Resource:
        """FSLeafQueue.minShareStarvation: min(minResources, demand) less the
        usage, component by component and never below 0, once the queue has
        been short of it for minSharePreemptionTimeout."""
        desired = component_min(self.min_share, self.demand)
        starvation = subtract_non_negative(desired, self.usage)
        if is_none(starvation):
            self.last_time_at_min_share = now
        if now - self.last_time_at_min_share < self.min_share_timeout:
            starvation = ZERO
        return starvation

    def update_starved_apps(self, now: int, starved: StarvedApps) -> None:
        """Identify this queue's starved apps (FSLeafQueue.updateStarvedApps)."""
        apps = self.apps_with_demand(False)
        fair_starvation = ZERO
        for app in apps:
            s = app.update_fair_share_starvation(now)
            if is_none(s):
                break
            starved.add(app)
            fair_starvation = fair_starvation + s
        pending = subtract_non_negative(self.min_share_starvation(now), fair_starvation)
        calc = self.policy.calculator
        for app in apps:
            if not is_none(pending):
                app_min = subtract_non_negative(app.demand - app.usage, app.fairshare_starvation)
                if calc.greater_than(self.fs.cluster, app_min, pending):
                    app_min = subtract_non_negative(app_min, pending)
                    pending = ZERO
                else:
                    pending = subtract_non_negative(pending, app_min)
                app.minshare_starvation = app_min
                starved.add(app)
            else:
                app.minshare_starvation = ZERO

"""An example emu scheduler plugin, and an example Fair policy plugin.

`SmallestDemandFirst` is Hadoop's FifoScheduler except for one decision:
which app a node is offered to first. FIFO offers it in submission order;
this offers it to the app whose demand (what it holds plus what it still
asks for) is smallest, a common stand-in for shortest-job-first when task
durations are unknown to the scheduler, as they are to YARN's.

`SmallestDemandPolicy` is the same idea as a FairScheduler policy: within
a queue, apps are ordered by demand, smallest first; shares between queues
are computed as the fair policy computes them.

Select them by entry point name (this package declares both in its
pyproject.toml):

    -D yarn.resourcemanager.scheduler.class=smallest-demand-first
    <schedulingPolicy>smallest-demand</schedulingPolicy>   (fair-scheduler.xml)

or by import path, with no packaging at all:

    -D yarn.resourcemanager.scheduler.class=emu_sjf:SmallestDemandFirst
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from emu.rm.scheduler.fair.policies import FairSharePolicy
from emu.rm.scheduler.fifo import FifoScheduler
from emu.rm.scheduler.scheduler_app import SchedulerApp


def demand_mb(app: SchedulerApp) -> int:
    """Memory the app holds plus memory it still asks for."""
    return app.used.memory + app.pending.memory


class SmallestDemandFirst(FifoScheduler):
    """FIFO, with the node offered to the smallest demand first."""

    def app_order(self, apps: list[SchedulerApp]) -> list[SchedulerApp]:
        return sorted(apps, key=lambda a: (demand_mb(a), a.order))


def _cmp(a: object, b: object) -> int:
    return (a > b) - (a < b)  # type: ignore[operator]


class SmallestDemandPolicy(FairSharePolicy):
    """Within a leaf queue, apps in order of demand, smallest first (then
    start time and name, as Hadoop breaks ties); shares as the fair policy
    computes them. Leaf queues only, as Hadoop's FifoPolicy."""

    name = "smallest-demand"
    leaf_only = True

    def compare(self, s1: Any, s2: Any, cluster: Any) -> int:
        return (
            _cmp(s1.demand.memory, s2.demand.memory)
            or _cmp(s1.start_ms, s2.start_ms)
            or _cmp(s1.name, s2.name)
        )

    def sort(self, items: Iterable[Any], cluster: Any, keyed: bool = True) -> list[Any]:
        return sorted(items, key=lambda s: (s.demand.memory, s.start_ms, s.name))

    def app_key(self, s: Any, cluster: Any) -> tuple[Any, ...] | None:
        return (s.demand.memory, s.start_ms, s.name)

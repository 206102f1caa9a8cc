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

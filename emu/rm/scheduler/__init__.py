"""Schedulers, laid out as Hadoop's scheduler package.

What every scheduler shares: `scheduler_node` (SchedulerNode),
`app_scheduling_info` (an attempt's asks), `scheduler_app`
(SchedulerApplicationAttempt), `queue_metrics`, `locality` (NodeType, ANY)
and `abstract_scheduler` (AbstractYarnScheduler: events, container
charging, reservations). `fifo`, `capacity` and `fair` decide where
containers go. `create` picks one by its settings name."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from emu.rm.context import RMContext
    from emu.rm.scheduler.abstract_scheduler import Scheduler


def create(ctx: RMContext) -> Scheduler:
    """The scheduler `yarn.resourcemanager.scheduler.class` names."""
    name = ctx.settings.scheduler
    if ctx.settings.impl == "hadoop":
        from emu.rm.scheduler.hadoop import HadoopScheduler

        return HadoopScheduler(ctx)
    if name == "fifo":
        from emu.rm.scheduler.fifo import FifoScheduler

        return FifoScheduler(ctx)
    if name == "fair":
        from emu.rm.scheduler.fair import FairScheduler

        return FairScheduler(ctx)
    if name == "capacity":
        from emu.rm.scheduler.capacity import CapacityScheduler

        return CapacityScheduler(ctx)
    raise ValueError(f"scheduler {name!r} is not available in this build of emu")

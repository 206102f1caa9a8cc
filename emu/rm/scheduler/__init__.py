"""Schedulers: `common` holds what they share; `fifo`, `capacity` and `fair`
decide where containers go. `create` picks one by its settings name."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from emu.rm.context import RMContext
    from emu.rm.scheduler.common import Scheduler


def create(ctx: RMContext) -> Scheduler:
    """The scheduler `yarn.resourcemanager.scheduler.class` names."""
    name = ctx.settings.scheduler
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

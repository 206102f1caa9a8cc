"""Schedulers, laid out as Hadoop's scheduler package.

What every scheduler shares: `scheduler_node` (SchedulerNode),
`app_scheduling_info` (an attempt's asks), `scheduler_app`
(SchedulerApplicationAttempt), `queue_metrics`, `locality` (NodeType, ANY)
and `abstract_scheduler` (AbstractYarnScheduler: events, container
charging, reservations). `fifo`, `capacity` and `fair` decide where
containers go. `registry` maps the names that select a scheduler to these
(and to any other registered with `registry.register`); `create` makes the
one the settings name."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from emu.rm.scheduler import registry

if TYPE_CHECKING:
    from emu.rm.context import RMContext
    from emu.rm.scheduler.abstract_scheduler import Scheduler


def create(ctx: RMContext) -> Scheduler:
    """The scheduler `yarn.resourcemanager.scheduler.class` names: Hadoop's
    own class with the `hadoop` implementation, else the registered one."""
    name = ctx.settings.scheduler
    if ctx.settings.impl == "hadoop":
        from emu.rm.scheduler.hadoop import HadoopScheduler

        return HadoopScheduler(ctx)
    if ctx.settings.plugin:
        made: Any = registry.plugin_class(ctx.settings.plugin)
        plugin: Scheduler = made(ctx)  # a plugin's constructor takes the context alone
        return plugin
    entry = registry.SCHEDULERS.get(name)
    if entry is None:
        raise ValueError(f"scheduler {name!r} is not available in this build of emu")
    return entry.create(ctx)

"""Hadoop's FairScheduler, reproduced for emu.

One purpose per module:

- `settings`         yarn-site properties (FairSchedulerConfiguration), user groups.
- `allocation_file`  the allocation file (fair-scheduler.xml) with line-numbered errors.
- `placement`        queue placement policy and rules.
- `policies`         fair, drf and fifo: comparators, share splitting, headroom.
- `shares`           ComputeFairShares: weighted max-min fair shares, steady and instantaneous.
- `arith`            Java's numeric semantics for resources (floats, casts, calculators).
- `fs_queue`         FSQueue: what parent and leaf queues share.
- `fs_parent_queue`  FSParentQueue: a queue of queues.
- `fs_leaf_queue`    FSLeafQueue: a queue of apps.
- `queue_manager`    QueueManager: the queues by name, created on demand.
- `orderings`        what the scheduler keeps between node updates (apps and
                     children in policy order, settled and silent apps, the
                     quiet-node state); none of it Hadoop's.
- `app`              an attempt's fair-scheduling state and the offer of a node to it.
- `max_running`      maxRunningApps for queues and users.
- `preemption`       starvation-based preemption and per-node preemption bookkeeping.
- `scheduler`        FairScheduler: events, heartbeats, periodic update, reload, reports.

For users: bring fair-scheduler.xml unchanged. It is
`yarn.scheduler.fair.allocation.file` (a relative path resolves against the
file that set the property: yarn-site.xml or the scenario), else a
fair-scheduler.xml beside the configuration files or in the working
directory; it is re-read when its mtime changes (checked every 10 s of
cluster time; a broken new file is logged and the old one stays). Users'
groups, for the primaryGroup/secondaryGroupExistingQueue rules and ACLs,
come from `hadoop.user.group.static.mapping.overrides`
(`user1=group1,group2;user2=group3`); other users have no groups.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from emu.rm.scheduler.fair.scheduler import FairScheduler

__all__ = ["FairScheduler"]


def __getattr__(name: str) -> Any:
    """`FairScheduler` is imported on first use, so that importing one of
    the package's modules (the allocation file reader, policies) does not
    import the scheduler and, through it, that module again."""
    if name == "FairScheduler":
        from emu.rm.scheduler.fair.scheduler import FairScheduler

        return FairScheduler
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

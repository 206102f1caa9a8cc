"""Hadoop's FairScheduler, reproduced for emu.

One purpose per module:

- `settings`         yarn-site properties (FairSchedulerConfiguration), user groups.
- `allocation_file`  the allocation file (fair-scheduler.xml) with line-numbered errors.
- `placement`        queue placement policy and rules.
- `policies`         fair, drf and fifo: comparators, share splitting, headroom.
- `shares`           ComputeFairShares: weighted max-min fair shares, steady and instantaneous.
- `arith`            Java's numeric semantics for resources (floats, casts, calculators).
- `queues`           the queue tree and QueueManager.
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

from emu.rm.scheduler.fair.scheduler import FairScheduler

__all__ = ["FairScheduler"]

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
"""

from emu.rm.scheduler.fair.scheduler import FairScheduler

__all__ = ["FairScheduler"]

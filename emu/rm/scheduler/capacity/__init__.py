"""Hadoop's CapacityScheduler, emulated.

- `config`         capacity-scheduler.xml -> validated, immutable queue settings
- `placement`      which leaf an app joins: mappings, names, ACLs, state
- `queues`         the live queue tree: usage, users, user/AM limits, ordering
- `allocator`      one app's turn on a node: locality delay, reservations
- `scheduler`      CapacityScheduler: node updates, headroom, refresh
- `preemption`     ProportionalCapacityPreemptionPolicy
- `resource_math`  Hadoop's `Resources` helpers with calculator semantics
"""

from emu.rm.scheduler.capacity.scheduler import CapacityScheduler

__all__ = ["CapacityScheduler"]

"""A scenario's jobs checked against the CapacityScheduler's queues before
the run starts.

YARN rejects an application submitted to a queue that does not exist or is
not a leaf (`CapacityScheduler.addApplication`: "Application ... submitted
by user ... to unknown queue" / "non-leaf queue"), so such a job could only
ever end FAILED: almost always a typo in the scenario. It is cheaper to say
so at load, naming the job's key, than to let a run report it at the end.
Queue mappings may move a job elsewhere, so with mappings configured the
check is left to the scheduler, as in YARN; so is a queue below a parent
that creates queues (auto-created queues).
"""

from __future__ import annotations

from emu.config.configuration import Configuration
from emu.errors import InputError
from emu.rm.scheduler.capacity import config as capacity_config
from emu.rm.settings import RMSettings
from emu.workload import JobSpec


def check_capacity_queues(path: str, conf: Configuration, jobs: list[tuple[str, JobSpec]]) -> None:
    """Raise InputError(path, key) for the first job (`key` names it) whose
    queue is not a CapacityScheduler leaf queue, by full path or short name."""
    settings = RMSettings.from_conf(conf)
    if settings.scheduler != "capacity" or settings.impl == "hadoop":
        return  # Hadoop's own scheduler reads its queues and rejects apps itself
    cs = capacity_config.parse(conf, settings.minimum_allocation, settings.maximum_allocation)
    if cs.mappings:
        return
    leaves = cs.leaves()
    creating = [p for p, q in cs.queues.items() if q.auto_create]
    for key, job in jobs:
        matches = [job.queue] if job.queue in cs.queues else cs.by_short_name(job.queue)
        if len(matches) == 1 and cs.queues[matches[0]].is_leaf:
            continue
        if not matches and any(job.queue.startswith(p + ".") for p in creating):
            continue  # created at submission, or refused by the scheduler with Hadoop's reason
        if len(matches) > 1:
            problem = f"queue {job.queue!r} is ambiguous ({', '.join(matches)}): give its path"
        elif matches:
            problem = f"queue {job.queue!r} is a parent queue; YARN accepts apps only in leaves"
        else:
            problem = f"no queue {job.queue!r} in the CapacityScheduler configuration"
        raise InputError(path, key, f"{problem} (leaf queues: {', '.join(leaves)})")

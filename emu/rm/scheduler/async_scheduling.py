"""CapacityScheduler's asynchronous scheduling on emu's virtual clock.

With `yarn.scheduler.capacity.schedule-asynchronously.enable` (Hadoop
3.5's default), a node heartbeat allocates nothing: AsyncScheduleThreads
call `CapacityScheduler.schedule` in a loop, sleeping
`scheduling-interval-ms` (5) after each pass. A pass draws a start node
with `java.util.Random.nextInt(nodeCount)`, offers every node of
`ClusterNodeTracker.getAllNodes` (a HashMap's order) from the start to the
end and then from the first to the start again (the start itself twice,
as Hadoop's second loop runs while `current++ > start` is false), each
once (no multiple assignments per offer), skipping a node that has not
heartbeated within `skip.node.multiplier` heartbeat intervals; a
ResourceCommitterService thread commits the proposals.

On emu's clock a pass takes no time: the RM runs one per thread
(`maximum-threads`) at every multiple of the interval, and each proposal
is committed as it is made (the committer never lags behind, so
`maximum-pending-backlogs` never holds a pass back). The start nodes are
drawn here, from a `JavaRandom` seeded with the RM's cluster timestamp
(Hadoop seeds its generator with the wall clock when the class loads) or
`emu.scheduler.async-seed`, and handed to whichever implementation
schedules, so emu's port and Hadoop's own scheduler start their passes at
the same nodes.

A tick is skipped, and draws nothing, when no attempt has an outstanding
ask: every allocation and reservation is for one, and a held reservation
keeps its ask outstanding, so such a pass would change nothing in either
implementation (`Scheduler.async_wanted`). Which Hadoop run this is
depends only on the generator's seed, as it does in Hadoop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from emu.scenario.java_random import JavaRandom

if TYPE_CHECKING:
    from emu.config.configuration import Configuration

SEED_PROPERTY = "emu.scheduler.async-seed"


class AsyncScheduling:
    """The settings of asynchronous scheduling and its start-node generator."""

    __slots__ = ("interval_ms", "random", "skip_node_interval_ms", "threads")

    def __init__(self, interval_ms: int, threads: int, skip_node_interval_ms: int, seed: int):
        self.interval_ms = interval_ms
        self.threads = max(1, threads)
        self.skip_node_interval_ms = skip_node_interval_ms
        """YarnConfiguration.getSkipNodeInterval: a node whose last heartbeat
        is older than this is not offered (shouldSkipNodeSchedule)."""
        self.random = JavaRandom(seed)

    def starts(self, node_count: int) -> list[int]:
        """The start node of each thread's pass this tick (`random.nextInt`)."""
        return [self.random.next_int(node_count) for _ in range(self.threads)]

    def next_tick_ms(self, now_ms: int) -> int:
        """The first tick after `now_ms`: passes run at multiples of the interval."""
        return (now_ms // self.interval_ms + 1) * self.interval_ms


def walk(count: int, start: int) -> list[int]:
    """The node indices one pass offers, in order: `start` to the end, then
    0 to `start` inclusive (CapacityScheduler.schedule's two loops)."""
    return [*range(start, count), *range(0, min(start, count - 1) + 1)]


def skip_node_interval_ms(conf: Configuration) -> int:
    """YarnConfiguration.getSkipNodeInterval: `yarn.scheduler.skip.node.multiplier`
    (2) heartbeat intervals, as the RM's `heartbeat-interval-ms` (1,000) says."""
    beat = conf.get_int("yarn.resourcemanager.nodemanagers.heartbeat-interval-ms", 1000)
    return conf.get_int("yarn.scheduler.skip.node.multiplier", 2) * beat

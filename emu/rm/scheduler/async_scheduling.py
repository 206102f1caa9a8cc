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
(`maximum-threads`) at every multiple of the interval, after everything
else that happens at that instant, and each proposal is committed as it
is made (the committer never lags behind, so `maximum-pending-backlogs`
never holds a pass back). The start nodes are drawn here and handed to
whichever implementation schedules, so emu's port and Hadoop's own
scheduler start their passes at the same nodes: each tick's from a
`JavaRandom` seeded with the run's seed (the RM's cluster timestamp, or
`emu.scheduler.async-seed`; Hadoop seeds its one generator with the wall
clock) mixed with the tick's number. A tick that an implementation skips
then shifts no other tick's draws.

A tick is skipped when no pass could change anything
(`Scheduler.async_wanted`): when no attempt has an outstanding ask and no
node holds a reservation (every allocation and new reservation is for an
ask; an offer of a reserved node fulfils, renews or gives up the
reservation, even once its app's asks were met elsewhere), or, in emu's
port, when the last pass changed nothing and nothing has changed since
(never with node labels: a leaf publishes its limit per partition of the
node it is offered). Which Hadoop run this is depends only on the seed, as
it does in Hadoop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from emu.scenario.java_random import JavaRandom

if TYPE_CHECKING:
    from emu.config.configuration import Configuration

SEED_PROPERTY = "emu.scheduler.async-seed"


class AsyncScheduling:
    """The settings of asynchronous scheduling and its start-node generator."""

    __slots__ = ("interval_ms", "seed", "threads")

    @classmethod
    def from_conf(
        cls, conf: Configuration, interval_ms: int, threads: int, cluster_timestamp: int
    ) -> AsyncScheduling:
        """The passes of a scheduler that schedules every `interval_ms` with
        `threads` threads; the seed from `conf` (defaulting to the RM's
        cluster timestamp). The skip interval is the scheduler's
        (`Scheduler.skip_node_ms`): multi-node placement reads it too."""
        return cls(interval_ms, threads, conf.get_int(SEED_PROPERTY, cluster_timestamp))

    def __init__(self, interval_ms: int, threads: int, seed: int):
        self.interval_ms = interval_ms
        self.threads = max(1, threads)
        self.seed = seed

    def starts(self, tick_ms: int, node_count: int) -> list[int]:
        """The start node of each thread's pass at the tick `tick_ms`
        (`java.util.Random.nextInt(nodeCount)`, one generator per tick)."""
        random = JavaRandom(self.seed ^ (tick_ms // self.interval_ms) * _GOLDEN)
        return [random.next_int(node_count) for _ in range(self.threads)]

    def tick_from(self, ms: int) -> int:
        """The first tick at or after `ms`: passes run at multiples of the interval."""
        return -(-ms // self.interval_ms) * self.interval_ms


_GOLDEN = 0x9E3779B97F4A7C15
"""Spreads consecutive tick numbers over the seed's bits (JavaRandom keeps 48)."""


def walk(count: int, start: int) -> list[int]:
    """The node indices one pass offers, in order: `start` to the end, then
    0 to `start` inclusive (CapacityScheduler.schedule's two loops)."""
    return [*range(start, count), *range(0, min(start, count - 1) + 1)]


def skip_node_interval_ms(conf: Configuration) -> int:
    """YarnConfiguration.getSkipNodeInterval: `yarn.scheduler.skip.node.multiplier`
    (2) heartbeat intervals, as the RM's `heartbeat-interval-ms` (1,000) says."""
    beat = conf.get_int("yarn.resourcemanager.nodemanagers.heartbeat-interval-ms", 1000)
    return conf.get_int("yarn.scheduler.skip.node.multiplier", 2) * beat

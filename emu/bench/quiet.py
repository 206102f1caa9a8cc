"""What a quiet node heartbeat costs in one process: the floor of P2.

Registers `--nodes` NMs of 32 GB / 16 vcores with an RM of the given
scheduler on `mem://`, submits nothing, and lets them heartbeat for
`--seconds` simulated seconds on the virtual clock: every heartbeat is
quiet (no status, nothing to clean up, no pass the scheduler needs), so
the user CPU per heartbeat is the message path and the timer alone, NM and
RM, all in. At 10,000 nodes P2's target (>= 10x real time with 10,000
heartbeats per simulated second) leaves ~10 us per heartbeat for
everything.

    python -m emu.bench.quiet [--nodes 10000] [--seconds 30] [--scheduler fair]
"""

from __future__ import annotations

import argparse
import resource
import sys
from dataclasses import dataclass
from typing import Any

import trio

from emu.clock import run_deterministically, virtual_clock
from emu.config.configuration import Configuration
from emu.nm import NMNode, NodeManagerHost
from emu.resources import Resource
from emu.rm.actor import ResourceManager, RMAddresses


@dataclass
class QuietRun:
    """What `measure` saw after the nodes registered."""

    nodes: int
    heartbeats: int
    user_s: float
    passes_skipped: int
    """Heartbeats answered without their scheduling pass (all, when quiet)."""

    @property
    def us_per_heartbeat(self) -> float:
        return 1e6 * self.user_s / self.heartbeats if self.heartbeats else 0.0

    def line(self) -> str:
        return (
            f"{self.nodes} nodes: {self.heartbeats} heartbeats, {self.user_s:.2f} user s, "
            f"{self.us_per_heartbeat:.2f} us per heartbeat "
            f"({self.passes_skipped} answered without a pass)"
        )


def measure(nodes: int, seconds: float, scheduler: str = "fair") -> QuietRun:
    """Run `nodes` idle NMs for `seconds` simulated seconds after they have
    all registered; user CPU and heartbeats over that span."""
    result: list[QuietRun] = []

    async def main() -> None:
        conf = Configuration({"yarn.resourcemanager.scheduler.class": scheduler})
        rm = ResourceManager(conf, RMAddresses.in_memory("quiet"))
        nms = [
            NMNode(f"n{i}:8041", f"n{i}", f"/r{i // 40}", Resource(32768, 16)) for i in range(nodes)
        ]
        host = NodeManagerHost(nms, "mem://quiet/resource-tracker", "mem://quiet-nm")
        passes = _count_passes(rm)
        async with trio.open_nursery() as nursery:
            await nursery.start(rm.run)
            await nursery.start(host.run)
            heartbeats, run, user_s = host.heartbeats, passes.passes, _user_s()
            await trio.sleep(seconds)
            user_s = _user_s() - user_s
            heartbeats = host.heartbeats - heartbeats
            result.append(QuietRun(nodes, heartbeats, user_s, heartbeats - (passes.passes - run)))
            nursery.cancel_scope.cancel()

    run_deterministically(main, virtual_clock())
    return result[0]


class _PassCounter:
    """Counts the scheduling passes the scheduler runs (a `SchedulerWatcher`)."""

    def __init__(self) -> None:
        self.passes = 0

    def allocate(self, attempt_id: str, asks: Any, call: Any) -> Any:
        return call()

    def placed(self, container: Any) -> None:
        pass

    def preempted(self, container: Any) -> None:
        pass

    def scheduling_pass(self, node_id: str) -> None:
        self.passes += 1


def _count_passes(rm: ResourceManager) -> _PassCounter:
    """A counter of the scheduling passes the scheduler runs from now on."""
    counter = _PassCounter()
    rm.ctx.scheduler.watcher = counter
    return counter


def _user_s() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_utime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m emu.bench.quiet",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--seconds", type=float, default=30, help="simulated s measured")
    parser.add_argument("--scheduler", choices=("fifo", "capacity", "fair"), default="fair")
    args = parser.parse_args(argv)
    print(measure(args.nodes, args.seconds, args.scheduler).line(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""How fast this machine runs Python right now: a fixed reference loop.

Why: every figure of `make bench` is a ratio to wall time, and the speed
of a shared virtual machine drifts. The 2-core VM the figures in
BENCHMARKS.md come from has run the same commit 20-50 % apart a few hours
apart (P2 at 9.6x and 5.1x in one morning). `make bench` times this loop
before and after its figures, so a run's figures can be read against the
machine's speed at the time, and two runs compare only alongside it.

The loop is plain interpreted Python (never compiled) doing what the
emulator does most: small dict updates, string keys, heap pushes and pops
of tuples, attribute reads. Its time is the best of a few rounds (the
least disturbed)."""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Callable


class _Slot:
    __slots__ = ("count", "name")

    def __init__(self, name: str) -> None:
        self.name = name
        self.count = 0


def _round(n: int) -> int:
    slots = {f"node-{i}": _Slot(f"node-{i}") for i in range(1000)}
    names = list(slots)
    heap: list[tuple[int, int, str]] = []
    total = 0
    for i in range(n):
        name = names[(i * 7919) % 1000]
        slot = slots[name]
        slot.count += 1
        heapq.heappush(heap, ((i * 104729) % 10007, i, name))
        if len(heap) > 1000:
            _, j, popped = heapq.heappop(heap)
            total += j + slots[popped].count
    return total


def reference_ms(
    rounds: int = 3, n: int = 200_000, clock: Callable[[], float] = time.perf_counter
) -> float:
    """Wall milliseconds of the reference loop: the best of `rounds`."""
    best = math.inf
    for _ in range(rounds):
        start = clock()
        _round(n)
        best = min(best, clock() - start)
    return best * 1000

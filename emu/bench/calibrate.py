"""How fast this machine runs Python right now: two fixed reference loops.

Why: every figure of `make bench` is a ratio to wall time, and the speed
of a shared virtual machine drifts. The 2-core VM the figures in
BENCHMARKS.md come from has run the same commit 20-50 % apart a few hours
apart (P2 at 9.6x and 5.1x in one morning). `make bench` times these loops
before and after its figures, so a run's figures can be read against the
machine's speed at the time, and two runs compare only alongside it.

Both loops are plain interpreted Python (never compiled):

- compute: what the emulator does most, on data that stays in the CPU's
  caches: small dict updates with string keys, heap pushes and pops of
  tuples, attribute reads;
- memory: an attribute update on each of a million small objects in a
  random order, most of them a cache miss, as the emulator's reference
  counting on a 10,000-node cluster is (its largest single cost in a
  profile). A neighbour on the same host slows this one first.

Each time is the best of a few rounds (the least disturbed)."""

from __future__ import annotations

import heapq
import math
import random
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


def _scattered(n: int) -> list[_Slot]:
    """`n` small objects, listed in a random order (a fixed seed)."""
    objects = [_Slot("") for _ in range(n)]
    random.Random(1).shuffle(objects)
    return objects


def _touch(objects: list[_Slot]) -> int:
    for o in objects:
        o.count += 1
    return len(objects)


def _best_ms(work: Callable[[], object], rounds: int, clock: Callable[[], float]) -> float:
    best = math.inf
    for _ in range(rounds):
        start = clock()
        work()
        best = min(best, clock() - start)
    return best * 1000


def reference_ms(
    rounds: int = 3, n: int = 200_000, clock: Callable[[], float] = time.perf_counter
) -> float:
    """Wall milliseconds of the compute loop: the best of `rounds`."""
    return _best_ms(lambda: _round(n), rounds, clock)


def memory_ms(
    rounds: int = 3, n: int = 1_000_000, clock: Callable[[], float] = time.perf_counter
) -> float:
    """Wall milliseconds of the memory loop over `n` objects: the best of
    `rounds` (the objects are made once, before the first)."""
    objects = _scattered(n)
    return _best_ms(lambda: _touch(objects), rounds, clock)


def describe() -> str:
    """Both loops' times, as `make bench` prints them."""
    return f"compute {reference_ms():.0f} ms, memory {memory_ms():.0f} ms"

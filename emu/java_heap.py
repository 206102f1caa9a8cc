"""`java.util.PriorityQueue` (and PriorityBlockingQueue, the same binary heap)
with a comparator, sift for sift.

Where Hadoop keeps things in such a queue, the order they come out depends
on the heap, not only on the comparator: elements that compare equal (or a
comparator that is not a total order, as FSStarvedApps') leave in the order
the heap's sift-up and sift-down left them. Emulating Hadoop's order means
copying the heap itself, as SLS's SYNTH job queue, the CapacityScheduler's
preemption policy and the FairScheduler's starved apps need.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class JavaPriorityQueue(Generic[T]):
    """A binary heap ordered by `cmp` (negative: the first comes out first)."""

    __slots__ = ("cmp", "heap")

    def __init__(self, cmp: Callable[[T, T], int]) -> None:
        self.cmp = cmp
        self.heap: list[T] = []
        """The elements in heap order (index 0 is the head)."""

    def __bool__(self) -> bool:
        return bool(self.heap)

    def __len__(self) -> int:
        return len(self.heap)

    def add(self, x: T) -> None:
        """offer: appended at the end and sifted up."""
        heap, cmp = self.heap, self.cmp
        k = len(heap)
        heap.append(x)
        while k > 0:
            parent = (k - 1) >> 1
            e = heap[parent]
            if cmp(x, e) >= 0:
                break
            heap[k] = e
            k = parent
        heap[k] = x

    def peek(self) -> T | None:
        return self.heap[0] if self.heap else None

    def poll(self) -> T:
        """The head (the queue must not be empty); the last element is
        sifted down from the root in its place."""
        heap, cmp = self.heap, self.cmp
        result = heap[0]
        x = heap.pop()
        n = len(heap)
        if n:
            k, half = 0, n >> 1
            while k < half:
                child = 2 * k + 1
                c = heap[child]
                right = child + 1
                if right < n and cmp(c, heap[right]) > 0:
                    child = right
                    c = heap[child]
                if cmp(x, c) <= 0:
                    break
                heap[k] = c
                k = child
            heap[k] = x
        return result

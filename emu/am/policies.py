"""Which of an AM's tasks may be asked for now, per AM type.

A policy sees the task list and the AM's elapsed time and returns the tasks
to release into the ask table. The engine calls it after registering, after
every allocate, and whenever a task finishes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from emu.workload import TaskSpec


class Policy(Protocol):
    def release(
        self, tasks: Sequence[TaskSpec], done: Sequence[bool], elapsed_ms: int
    ) -> list[int]:
        """Indices of tasks that may be asked for now (already released ones
        may be included; the engine ignores repeats)."""
        ...

    def next_release_ms(self, tasks: Sequence[TaskSpec], elapsed_ms: int) -> int | None:
        """When (elapsed ms) a task not releasable now becomes releasable, if ever by time."""
        ...


class MapReducePolicy:
    """Maps first; reduces once every map has finished (SLS MRAMSimulator).
    One instance serves one AM, so the split of its task list is kept."""

    def __init__(self) -> None:
        self._split: tuple[Sequence[TaskSpec], list[int], list[int]] | None = None

    def release(
        self, tasks: Sequence[TaskSpec], done: Sequence[bool], elapsed_ms: int
    ) -> list[int]:
        split = self._split
        if split is None or split[0] is not tasks:
            maps = [i for i, t in enumerate(tasks) if t.task_type != "reduce"]
            reduces = [i for i, t in enumerate(tasks) if t.task_type == "reduce"]
            split = self._split = (tasks, maps, reduces)
        if all(done[i] for i in split[1]):
            return split[2]
        return split[1]

    def next_release_ms(self, tasks: Sequence[TaskSpec], elapsed_ms: int) -> int | None:
        return None


class StreamPolicy:
    """Every task at once; they run for their (long) durations."""

    def release(
        self, tasks: Sequence[TaskSpec], done: Sequence[bool], elapsed_ms: int
    ) -> list[int]:
        return list(range(len(tasks)))

    def next_release_ms(self, tasks: Sequence[TaskSpec], elapsed_ms: int) -> int | None:
        return None


class GenericPolicy:
    """Each task once its `request_delay_ms` has passed since registration."""

    def release(
        self, tasks: Sequence[TaskSpec], done: Sequence[bool], elapsed_ms: int
    ) -> list[int]:
        return [i for i, t in enumerate(tasks) if t.request_delay_ms <= elapsed_ms]

    def next_release_ms(self, tasks: Sequence[TaskSpec], elapsed_ms: int) -> int | None:
        later = [t.request_delay_ms for t in tasks if t.request_delay_ms > elapsed_ms]
        return min(later) if later else None


POLICIES: dict[str, type] = {
    "mapreduce": MapReducePolicy,
    "stream": StreamPolicy,
    "generic": GenericPolicy,
}

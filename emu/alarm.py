"""`Alarm`: one task's wait until a time, or until another task wakes it.

The NM host (emu.nm) and the AM driver (emu.am.driver) each sleep in one
task until their next due time unless something new is due sooner. Written
with trio's public API that is `with trio.move_on_at(t): await event.wait()`,
and every expiry then raises `Cancelled` into the task, catches it in the
scope and throws away a fresh `Event`: on the virtual clock, thousands of
times per simulated second, ~5 % of a compiled replay.

An `Alarm` parks the task with `wait_task_rescheduled` inside a cancel scope
whose deadline is the due time. When trio expires the deadline it asks the
task to abort; the abort function reschedules it with a plain value instead
(and says the abort failed), so the task resumes at the same point in the
run loop as before, without an exception. A cancellation from outside (the
nursery shutting down) ends the wait the same way and is then raised by the
`checkpoint_if_cancelled` that follows, as it would have been.
"""

from __future__ import annotations

from typing import Any

import trio
from trio.lowlevel import Abort, Task, checkpoint_if_cancelled, current_task, reschedule
from trio.lowlevel import wait_task_rescheduled as _park


class Alarm:
    """Wakes one waiting task at its deadline or on `wake()`.

    Behaves as the `Event` it replaces, waited on under `move_on_at` and
    replaced by a fresh one after each wait: a `wake()` while no task waits
    makes the next wait return at once; one between the end of a wait (its
    deadline, or an earlier `wake()`) and the task resuming is absorbed."""

    def __init__(self) -> None:
        self._task: Task | None = None
        self._woken = False
        self._ringing = False  # the wait has ended; its task has not resumed yet

    def wake(self) -> None:
        """End the current wait now, or make the next one return at once."""
        task = self._task
        if task is not None:
            self._task = None
            self._ringing = True
            reschedule(task)
        elif not self._ringing:
            self._woken = True

    async def wait(self, deadline: float = float("inf")) -> None:
        """Return at `deadline` (simulated seconds) or when woken, whichever
        is first; at once if woken since the last wait."""
        if self._woken:
            self._woken = False
            await trio.lowlevel.checkpoint()
            return
        task = current_task()
        self._task = task

        def abort(_: Any) -> Abort:
            if self._task is task:
                self._task = None
                self._ringing = True
                reschedule(task)
            return Abort.FAILED

        with trio.CancelScope(deadline=deadline):
            await _park(abort)
        self._ringing = False
        await checkpoint_if_cancelled()

"""`Alarm`: one task's wait until a time, or until another task wakes it.

The NM host (emu.nm) and the AM driver (emu.am.driver) each sleep in one
task until their next due time unless something new is due sooner: on the
virtual clock about a hundred times each per simulated second. Written with
trio's public API that is `with trio.move_on_at(t): await event.wait()`:
every expiry then raises `Cancelled` into the task, which catches it in the
scope and throws away a fresh `Event`; and even without the exception, a
cancel scope with a deadline costs its entry, its registration in trio's
deadline heap, its cancellation and its exit, ~13 us per wake-up on the
virtual clock.

An `Alarm` parks the task with `wait_task_rescheduled` and sets a plain
timer in the run's `emu.clock.Timers` (a heap beside trio's deadline heap,
which trio's run loop reads as its own): at the due time the timer rings
the alarm, which reschedules the task with a plain value. It resumes in
the same batch of trio's loop as a cancel scope's expiry would have woken
it, so in the same order among the other tasks (~8.5 us per wake-up). A
`wake()` reschedules it at once and voids the timer. A cancellation from
outside (the nursery shutting down) voids the timer and raises `Cancelled`
out of the wait, as it did.
"""

from __future__ import annotations

from typing import Any

import trio
from trio.lowlevel import Abort, Task, current_task, reschedule
from trio.lowlevel import wait_task_rescheduled as _park

from emu.clock import run_timers


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
        self.timer = 0
        """The ticket of the timer the current wait set (`Timers.start`);
        0 when none is live: a timer whose ticket is no longer this one was
        voided by a wake-up or a cancellation and does not ring."""

    def wake(self) -> None:
        """End the current wait now, or make the next one return at once."""
        if self._task is not None:
            self.ring()
        elif not self._ringing:
            self._woken = True

    def ring(self) -> None:
        """End the current wait (its timer is due, or `wake`)."""
        task = self._task
        assert task is not None
        self._task = None
        self.timer = 0
        self._ringing = True
        reschedule(task)

    async def wait(self, deadline: float = float("inf")) -> None:
        """Return at `deadline` (simulated seconds) or when woken, whichever
        is first; at once if woken since the last wait."""
        if self._woken:
            self._woken = False
            await trio.lowlevel.checkpoint()
            return
        self._task = current_task()
        if deadline != float("inf"):
            self.timer = run_timers().start(deadline, self)

        def abort(_: Any) -> Abort:
            # Cancelled from outside while waiting: no ring any more.
            self._task = None
            self.timer = 0
            return Abort.SUCCEEDED

        await _park(abort)
        self._ringing = False

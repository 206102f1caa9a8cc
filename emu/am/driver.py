"""One task that steps every in-process ApplicationMaster.

Over the network each AM runs in a task of its own (`run_am`): a slow RPC
to the RM or a NodeManager must not hold up the others. In one process on
`mem://` nothing an AM calls ever waits: the RM's and the NodeManagers'
handlers are `never_waits`, so a request is answered inline, and an AM's
turn (register, an allocate round or two, the container starts they lead
to, unregister) runs to completion without reaching a checkpoint. A task
per AM then only buys a trio timer per AM per heartbeat (a cancel scope
whose deadline expires by raising and catching `Cancelled`) and a task
switch per turn, and leaves the order in which the RM sees the AMs due at
one instant to trio's batch composition.

`AMDriver` replaces those tasks with one task and one timer heap of
(due time, launch sequence, AM). At each instant it wakes once and runs
every AM due then, one whole turn each, the most recently launched first
(the sequence is given at launch and kept for the AM's life). That is the
order trio ran the AM tasks in: `emu.clock.deterministic_scheduling` sorts a batch of
tasks woken together by creation and trio runs it from the end, newest
first. The driver task itself is started with the first AM, so it holds
the first AM task's place among the other tasks (the NodeManager host, the
RM's loops and AM launcher, the harness's fault injector and observers).
The RM therefore sees the same requests in the same order as with a task
per AM, and a replay's outputs are the same on both paths (the golden
copies were made with a task per AM; tests/integration/test_am_driver.py
compares the two paths' event logs, faults included).
Launches, finishes, injected hangs and crashes and kills keep the
semantics of the task-per-AM path:

- an AM launched at an instant takes its first turn at that instant, in
  the driver's next pass (the launch wakes it; an AM task started then
  would have run in trio's next batch too);
- an AM that ends (finished, failed or shut down by the RM) or raises
  (an injected crash, a transport error) is reported to the NodeManager
  through `on_exit`, which completes its container, as the AM task's end
  did;
- a hung AM stays in the driver's table, holding its connections, without
  a turn, until its container is killed;
- a killed AM container (`AMHandle.cancel`, from the NodeManager: the RM
  told it to, the node crashed or resynced without work-preserving
  recovery) takes no further turn and is not reported, as a cancelled AM
  task was not.

The driver is only for `mem://` (the in-process simulation). An AM turn
that did wait would hold up every AM behind it; over ZeroMQ the
task-per-AM path stays.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable
from contextlib import AsyncExitStack
from typing import Any

import trio

from emu.alarm import Alarm
from emu.am.engine import AMFaults, ApplicationMaster
from emu.trio_time import current_time


class AMHandle:
    """One launched AM as the NodeManager sees it: `cancel()` kills it (its
    container is gone). Cancelling an AM that has ended does nothing."""

    __slots__ = ("_driver", "am", "ended", "on_exit", "seq", "stack")

    def __init__(
        self,
        driver: AMDriver,
        am: ApplicationMaster,
        seq: int,
        on_exit: Callable[[BaseException | None], None],
    ) -> None:
        self._driver = driver
        self.am = am
        self.seq = seq
        self.on_exit = on_exit
        self.ended = False
        self.stack: AsyncExitStack | None = None

    def cancel(self) -> None:
        """Kill the AM: no more turns, no exit report; its connections are
        closed by the driver at its next wake-up."""
        if self.ended:
            return
        self.ended = True
        self._driver._closing.append(self)
        self._driver._alarm.wake()


class AMDriver:
    """Steps every in-process AM from one task (see the module docstring).
    `faults` are the AM faults a replay harness injects."""

    def __init__(self, faults: AMFaults | None = None) -> None:
        self.faults = faults if faults is not None else AMFaults()
        self._heap: list[tuple[float, int, AMHandle]] = []
        """(due, minus the AM's launch sequence, AM): the newest AM first
        among those due together; the sequence is unique per AM and an AM
        is in the heap at most once, so no handle is compared."""
        self._seq = 0
        self._alarm = Alarm()
        self._closing: list[AMHandle] = []
        self._live: dict[int, AMHandle] = {}
        """Launched AMs not yet ended or killed, by launch sequence."""
        self.turns = 0
        """AM turns taken (a progress counter for tests and profiles)."""

    @property
    def running(self) -> int:
        """AMs launched and not yet ended or killed (hung ones included)."""
        return len(self._live)

    def attempts(self) -> list[str]:
        """The attempt ids of those AMs, in launch order."""
        return [h.am.attempt_id for h in self._live.values()]

    def launch(
        self, am: dict[str, Any], node_id: str, on_exit: Callable[[BaseException | None], None]
    ) -> AMHandle:
        """Start the AM of launch context `am` (on node `node_id`): its first
        turn comes at the current instant. `on_exit(error)` is called once it
        ends by itself: None when it finished, failed or was shut down; the
        exception when it raised."""
        self._seq += 1
        handle = AMHandle(self, ApplicationMaster(am, self.faults), self._seq, on_exit)
        self._live[handle.seq] = handle
        heapq.heappush(self._heap, (current_time(), -handle.seq, handle))
        self._alarm.wake()
        return handle

    async def run(self) -> None:
        """Run every AM's turns until cancelled."""
        heap = self._heap
        try:
            while True:
                if self._closing:
                    await self._close_killed()
                if not heap:
                    await self._alarm.wait()
                    continue
                now = current_time()
                if heap[0][0] > now:
                    await self._alarm.wait(heap[0][0])
                    continue
                while heap and heap[0][0] <= now:
                    _, _, handle = heapq.heappop(heap)
                    if not handle.ended:
                        await self._turn(handle, now)
        finally:
            # Shut down with the process: every AM's connections are closed.
            with trio.CancelScope(shield=True):
                self._closing.extend(self._live.values())
                await self._close_killed()

    async def _turn(self, handle: AMHandle, now: float) -> None:
        """One turn of one AM; it is due again after the delay it asks for
        (never, if it hangs), or ends here."""
        self.turns += 1
        error: BaseException | None = None
        delay: float | None = None
        try:
            if handle.stack is None:
                handle.stack = AsyncExitStack()
                await handle.am.open(handle.stack)
            delay = await handle.am.step()
        except Exception as e:
            error = e
        if handle.ended:
            # Killed during its own turn (only if a call in it waited).
            return
        if delay is not None:
            if delay != math.inf:
                heapq.heappush(self._heap, (now + delay, -handle.seq, handle))
            return
        handle.ended = True
        del self._live[handle.seq]
        if handle.stack is not None:
            await handle.stack.aclose()
        handle.on_exit(error)

    async def _close_killed(self) -> None:
        """Close the connections of the AMs killed since the last wake-up."""
        closing, self._closing = self._closing, []
        for handle in closing:
            self._live.pop(handle.seq, None)
            if handle.stack is not None:
                await handle.stack.aclose()

"""The two clocks. Actor code never asks which one runs: it reads
`trio.current_time()` (simulated seconds since the run's start).

- Virtual: trio's `MockClock(autojump_threshold=0)` jumps to the next timer
  whenever every task is blocked, so a replay runs as fast as the CPU allows.
  Only valid with the `mem://` transport: ZeroMQ's I/O threads are invisible
  to trio, and the clock would jump past messages in flight.
- Scaled wall time: `ScaledWallClock(epoch, rate)` reads
  `(wall - epoch) * rate`, with the epoch and rate announced by the RM, so
  every process on every host agrees on simulated time.

Determinism on the virtual clock also needs trio's scheduler to be
deterministic: trio randomises the order in which tasks woken together run.
`deterministic_scheduling` replaces that with creation order (the actors are created in
a fixed order), so the same inputs and seed give the same interleaving and
byte-identical outputs, and a read-only observer task (a metrics sampler)
cannot change what the actors do (both checked by tests).
"""

from __future__ import annotations

import heapq
import math
import random
import signal
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import trio
import trio.testing
from trio._core._run import GLOBAL_RUN_CONTEXT
from trio.abc import Clock

T = TypeVar("T")


def virtual_clock() -> trio.testing.MockClock:
    """A clock that jumps straight to the next timer when all tasks wait.

    trio's `MockClock` (trio's run loop jumps only a `MockClock`, which it
    does not let be subclassed), with two of its methods replaced on the
    instance by shortcuts that give the same times, for a replay that reads
    the time thousands of times and jumps it about a hundred times per
    simulated second:

    - `current_time`: at rate 0 (the virtual clock's: time moves only by
      jumps) the time is the virtual base itself, as `MockClock` computes it
      (`base + 0.0 * (real - real base)`), without reading the real clock;
    - `_autojump`: the same jump, to the next deadline, then what is due at
      the new time is woken at once, in the same pass of trio's run loop,
      instead of in a second pass that would only poll for I/O and expire
      those same deadlines. The batch of tasks that runs is the same (trio
      sorts it by creation order, `deterministic_scheduling`)."""
    from trio._core import _run

    clock = trio.testing.MockClock(autojump_threshold=0)
    slow_time = clock.current_time

    def current_time() -> float:
        if clock._rate == 0.0:
            base: float = clock._virtual_base
            return base
        return slow_time()

    def autojump() -> None:
        deadlines = _run.GLOBAL_RUN_CONTEXT.runner.deadlines
        jump = deadlines.next_deadline() - current_time()
        if 0 < jump < math.inf:
            clock.jump(jump)
            deadlines.expire(current_time())

    clock.current_time = current_time  # type: ignore[method-assign]
    clock._autojump = autojump  # type: ignore[method-assign]
    return clock


class Timers:
    """trio's deadline heap (`runner.deadlines`) with plain timers beside it.

    trio's only timer is a cancel scope's deadline: a task that sleeps until
    a time enters a scope, trio cancels it at the deadline, and the task
    catches that and leaves the scope (`emu.alarm` explains the cost: the NM
    host and the AM driver each sleep and wake about a hundred times per
    simulated second). A plain timer is a (deadline, ticket, alarm) entry in
    a heap of its own: when trio's run loop asks for the next deadline it
    gets the earlier of both heaps, and when it expires deadlines the due
    alarms ring, which reschedules their waiting task. Same instant, same
    batch of woken tasks, so the same order as with a cancel scope."""

    def __init__(self, deadlines: Any) -> None:
        self.deadlines = deadlines
        self._heap: list[tuple[float, int, Any]] = []
        self._ticket = 0

    # --- what trio's run loop and cancel scopes call on `runner.deadlines`
    def add(self, deadline: float, cancel_scope: Any) -> None:
        self.deadlines.add(deadline, cancel_scope)

    def remove(self, deadline: float, cancel_scope: Any) -> None:
        self.deadlines.remove(deadline, cancel_scope)

    def next_deadline(self) -> float:
        first: float = self.deadlines.next_deadline()
        heap = self._heap
        while heap:
            deadline, ticket, alarm = heap[0]
            if alarm.timer == ticket:
                return deadline if deadline < first else first
            heapq.heappop(heap)  # rung early (a wake) or cancelled
        return first

    def expire(self, now: float) -> bool:
        did_something: bool = self.deadlines.expire(now)
        heap = self._heap
        while heap and heap[0][0] <= now:
            _, ticket, alarm = heapq.heappop(heap)
            if alarm.timer == ticket:
                alarm.ring()
                did_something = True
        return did_something

    # --- for emu.alarm
    def start(self, deadline: float, alarm: Any) -> int:
        """Ring `alarm` (`alarm.ring()`) at `deadline` unless its `timer` is
        no longer the ticket returned by then."""
        self._ticket += 1
        heapq.heappush(self._heap, (deadline, self._ticket, alarm))
        return self._ticket


def run_timers() -> Timers:
    """The plain timers of the running trio loop, installed in it (around
    its deadline heap) on first use. Call from inside `trio.run`."""
    from trio._core import _run

    runner = _run.GLOBAL_RUN_CONTEXT.runner
    deadlines = runner.deadlines
    if type(deadlines) is Timers:
        return deadlines
    timers = Timers(deadlines)
    runner.deadlines = timers  # type: ignore[assignment]
    return timers


class _CreationOrder(random.Random):
    """Trio's scheduler RNG, except that it never shuffles a batch. Every
    other use (the system clock's random offset) still gets random numbers."""

    def shuffle(self, x: list, *args: object) -> None:  # type: ignore[override]
        """Leave the batch in the order trio sorted it: task creation."""


# --- the one place emu touches trio's private scheduler state ---------------------------
# What this relies on, in trio._core._run (checked by tests/unit/test_clock.py on the
# installed trio; pyproject.toml pins trio to the versions that test passed on):
# - module globals `_r` (a random.Random) and `_ALLOW_DETERMINISTIC_SCHEDULING` (a bool),
#   read by `unrolled_run` each time it takes a batch of runnable tasks;
# - with the flag set, the batch is sorted by `Task._counter` (creation order) and then
#   `_r.shuffle(batch)`; without it, `_r.random() < 0.5` reverses the batch; either way
#   the batch is then run from its end (`batch.pop()`): the newest task first
#   (emu.am.driver steps the AMs due together in that order, as their tasks ran);
# - every other use of `_r` (SystemClock's random offset) is a plain random draw;
# - for `virtual_clock` and `run_timers`: `GLOBAL_RUN_CONTEXT.runner.deadlines`, on which
#   trio's loop and cancel scopes call only `add`, `remove`, `next_deadline` and
#   `expire(now)` (its result: whether anything expired); `MockClock._autojump`, which the
#   loop calls when every task waits, before it runs whatever is then runnable; and
#   `MockClock._rate` and `_virtual_base`, which `current_time` reads at rate 0;
# - for `poll_io_sparsely`: `GLOBAL_RUN_CONTEXT.runner.io_manager`, whose `get_events(timeout)`
#   trio's loop calls once per pass (through the attribute, each time) and whose result it
#   hands to `process_events`; with epoll, "nothing ready" is an empty list.
# If trio renames or drops either global, deterministic_scheduling raises at start (not silently).
# If trio keeps them but changes how a batch is ordered (e.g. shuffles elsewhere or sorts
# by another key), replays stay correct but are no longer reproducible: two runs of the
# same inputs and seed can differ, which tests/integration/test_golden_outputs.py and
# test_cluster.py's byte-identical test catch.
@contextmanager
def deterministic_scheduling() -> Iterator[None]:
    """Within the block, trio runs simultaneously runnable tasks in creation order.

    Trio shuffles each batch of runnable tasks with a module-level
    `random.Random` (`_r`), and timers that expire together wake in an order
    that depends on object addresses. Its Hypothesis integration fixes both
    by sorting each batch by task creation order
    (`_ALLOW_DETERMINISTIC_SCHEDULING`) and shuffling with a seeded `_r`; we
    sort the same way and do not shuffle, so adding or removing a task that
    only observes cannot reorder the others. Both globals are put back when
    the block ends, so a run leaves the process's trio as it found it.
    """
    from trio._core import _run

    if not hasattr(_run, "_r") or not hasattr(_run, "_ALLOW_DETERMINISTIC_SCHEDULING"):
        raise RuntimeError(
            "this trio version cannot be made deterministic; deterministic replay needs "
            "trio's _r and _ALLOW_DETERMINISTIC_SCHEDULING (tested with trio 0.25-0.35)"
        )
    saved = (_run._ALLOW_DETERMINISTIC_SCHEDULING, _run._r)
    _run._ALLOW_DETERMINISTIC_SCHEDULING = True  # type: ignore[misc]
    _run._r = _CreationOrder()  # type: ignore[assignment]
    try:
        yield
    finally:
        _run._ALLOW_DETERMINISTIC_SCHEDULING, _run._r = saved  # type: ignore[misc]


def run_deterministically(main: Callable[[], Awaitable[T]], clock: Clock) -> T:
    """`trio.run(main, clock=clock)` under `deterministic_scheduling`: how
    every replay in one process runs, so the same inputs and seed give the
    same interleaving and two runs in one process do not disturb each other.
    In the main thread, Ctrl-C stops the run as `_stop_on_sigint` says."""
    with deterministic_scheduling():
        if threading.current_thread() is threading.main_thread():
            return trio.run(_stop_on_sigint, main, clock=clock)
        return trio.run(main, clock=clock)


async def _stop_on_sigint(main: Callable[[], Awaitable[T]]) -> T:
    """`main()`, cancelled when SIGINT arrives and then ended with the
    KeyboardInterrupt a Ctrl-C gives.

    trio's own Ctrl-C handling raises KeyboardInterrupt from the signal
    handler, wherever the interpreter runs it. In code compiled with mypyc
    that may be inside an operation mypyc treats as unable to fail (a
    multiplication of large integers checks for signals), and the process
    aborts with "fatal: out of memory". Here the handler only wakes a
    system task, which cancels the run at its checkpoints; the
    KeyboardInterrupt is raised afterwards, in this task, where every
    caller expects it (SIGTERM reaches here as SIGINT: see emu.cli)."""
    ended: list[bool] = []
    with trio.open_signal_receiver(signal.SIGINT) as signals, trio.CancelScope() as scope:
        trio.lowlevel.spawn_system_task(_cancel_on_signal, signals, scope, ended)
        try:
            result = await main()
        except BaseException as e:
            if scope.cancel_called:
                raise KeyboardInterrupt from e
            raise
        finally:
            ended.append(True)
    if scope.cancel_called:
        raise KeyboardInterrupt
    return result


async def _cancel_on_signal(signals: Any, scope: trio.CancelScope, ended: list[bool]) -> None:
    """Cancel `scope` at the first SIGINT. A run that ended before this
    task first ran has closed its receiver: there is nothing to wait for
    (iterating a closed receiver is an error that would crash the run)."""
    if ended:
        return
    async for _ in signals:
        scope.cancel()
        return


# How many of the run loop's non-blocking I/O polls `poll_io_sparsely` skips
# in a row: on the virtual clock every pass of trio's loop polls epoll with a
# zero timeout (~1,000 passes per simulated second at 1,000 nodes: 8 % of a
# compiled replay's CPU), though an in-process run has no file descriptor
# that matters to what it computes.
IO_POLL_EVERY = 64


class _SparseIOPolls:
    """trio's I/O manager, except that a zero-timeout poll answers "nothing
    ready" without the system call, but every `IO_POLL_EVERY`-th. What
    arrives from outside the run (a signal, a thread's `run_sync_soon`) is
    seen at most that many loop passes later; nothing inside the run
    changes: an empty poll is what the real one returns when no descriptor
    is ready, and trio's clock jump and idle detection look only at that."""

    def __init__(self, io_manager: Any) -> None:
        self._io = io_manager
        self._get_events = io_manager.get_events
        self._skipped = 0
        self.polled = 0
        self.skipped = 0

    def get_events(self, timeout: float) -> Any:
        if timeout <= 0 and self._skipped < IO_POLL_EVERY - 1:
            self._skipped += 1
            self.skipped += 1
            return []
        self._skipped = 0
        self.polled += 1
        return self._get_events(timeout)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._io, name)


def poll_io_sparsely() -> _SparseIOPolls | None:
    """Install `_SparseIOPolls` in the running trio loop, if it runs on the
    virtual clock and polls with epoll (whose "nothing ready" is an empty
    list); None otherwise. Call from inside `trio.run`."""
    from trio._core import _run

    runner = _run.GLOBAL_RUN_CONTEXT.runner
    io = runner.io_manager
    if isinstance(io, _SparseIOPolls):
        return io
    if type(io).__name__ != "EpollIOManager" or not isinstance(
        runner.clock, trio.testing.MockClock
    ):
        return None
    sparse = _SparseIOPolls(io)
    runner.io_manager = sparse  # type: ignore[assignment]
    return sparse


class ScaledWallClock(Clock):
    """Simulated seconds = (wall seconds - epoch) * rate.

    `epoch` is a Unix time (time.time()), shared across hosts; `rate` is the
    number of simulated seconds per wall second.
    """

    def __init__(self, epoch: float, rate: float) -> None:
        if rate <= 0 or math.isnan(rate):
            raise ValueError("rate must be positive")
        self.epoch = epoch
        self.rate = rate

    def start_clock(self) -> None:
        """Nothing to start: time is derived from the wall clock."""

    def current_time(self) -> float:
        return (time.time() - self.epoch) * self.rate

    def deadline_to_sleep_time(self, deadline: float) -> float:
        return (deadline - self.current_time()) / self.rate


def advance_alone(ms: int) -> bool:
    """Move the virtual clock to simulated millisecond `ms` at once when
    `await after_everything_at(ms)` would return there with nothing else
    having run: on the virtual clock, no other task runnable or waiting for
    the others to block, and no deadline before `ms` + 0.5. True if it
    moved; the caller then goes on as `after_everything_at(ms)` would have
    let it, without a round of trio's run loop (a tick of asynchronous
    scheduling every millisecond costs several rounds otherwise)."""
    runner = GLOBAL_RUN_CONTEXT.runner
    clock = runner.clock
    if not isinstance(clock, trio.testing.MockClock) or clock._rate != 0.0:
        return False
    if runner.runq or runner.waiting_for_idle:
        return False
    if runner.deadlines.next_deadline() < (ms + 0.5) / 1000:
        return False
    now = clock.current_time()
    target = ms / 1000
    if target < now:
        return False
    clock.jump(target - now)
    return True


async def after_everything_at(ms: int) -> None:
    """Return at simulated millisecond `ms` once every other task due within
    it has run and blocked: a pass that must see all of an instant's
    events. Tasks that slept relative times may be due a rounding error
    after `ms / 1000` (a heartbeat every 1.0 s sums to 65.49000000001), so
    waiting for the others to block once is not enough: while another
    deadline falls within the same millisecond (before `ms` + 0.5), sleep
    until it and wait again."""
    end = (ms + 0.5) / 1000
    await trio.sleep_until(ms / 1000)
    runner = GLOBAL_RUN_CONTEXT.runner
    while True:
        await trio.testing.wait_all_tasks_blocked()
        due = runner.deadlines.next_deadline()
        if due >= end:
            return
        await trio.sleep_until(due)

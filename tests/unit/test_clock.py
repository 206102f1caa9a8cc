"""emu.clock against the installed trio: the private scheduler state that
`deterministic_scheduling` patches exists, and patching it makes the order in which
tasks woken together run a function of their creation order alone.

If trio changes these internals this file fails first, naming what moved,
instead of a replay silently losing byte-for-byte reproducibility.
"""

from __future__ import annotations

import inspect
import random
import signal

import pytest
import trio
import trio.testing
from trio._core import _run

from emu.clock import (
    IO_POLL_EVERY,
    ScaledWallClock,
    deterministic_scheduling,
    poll_io_sparsely,
    run_deterministically,
    virtual_clock,
)


def test_the_patched_trio_privates_exist() -> None:
    assert isinstance(_run._r, random.Random)
    assert isinstance(_run._ALLOW_DETERMINISTIC_SCHEDULING, bool)

    async def counter() -> int:
        return trio.lowlevel.current_task()._counter

    assert isinstance(trio.run(counter), int)


def _wake_order(tasks: int) -> list[int]:
    """The order in which `tasks` tasks, all woken by one event, run."""
    order: list[int] = []

    async def main() -> None:
        go = trio.Event()

        async def waiter(i: int) -> None:
            await go.wait()
            order.append(i)

        async with trio.open_nursery() as nursery:
            for i in range(tasks):
                nursery.start_soon(waiter, i)
            await trio.testing.wait_all_tasks_blocked()
            go.set()

    trio.run(main, clock=virtual_clock())
    return order


def test_tasks_woken_together_run_in_one_order_run_after_run() -> None:
    """Trio alone runs them in a different order nearly every time (each
    batch is reversed at random); under deterministic_scheduling every run gives the
    same order, the reverse of creation (trio pops the creation-sorted batch
    from its end)."""
    with deterministic_scheduling():
        orders = {tuple(_wake_order(8)) for _ in range(20)}
    assert orders == {tuple(reversed(range(8)))}


def test_the_scheduler_is_left_as_it_was_found() -> None:
    """Two replays in one process (a notebook's) do not disturb each other,
    nor anything else that runs trio in the process afterwards."""
    before = (_run._ALLOW_DETERMINISTIC_SCHEDULING, _run._r)
    with deterministic_scheduling():
        assert _run._ALLOW_DETERMINISTIC_SCHEDULING is True
        assert _run._r is not before[1]
    assert (_run._ALLOW_DETERMINISTIC_SCHEDULING, _run._r) == before
    with pytest.raises(ZeroDivisionError), deterministic_scheduling():
        1 / 0  # noqa: B018
    assert (_run._ALLOW_DETERMINISTIC_SCHEDULING, _run._r) == before


def test_other_uses_of_the_scheduler_rng_stay_random() -> None:
    """The replacement only stops shuffling: trio's SystemClock draws its
    random offset from the same `_r`, and must still get varied numbers."""
    with deterministic_scheduling():
        draws = {_run._r.uniform(10_000, 200_000) for _ in range(5)}
    assert len(draws) == 5
    assert all(10_000 <= d <= 200_000 for d in draws)


async def test_the_virtual_clock_jumps_to_the_next_timer(autojump_clock) -> None:
    start = trio.current_time()
    await trio.sleep(3600)
    assert trio.current_time() - start == 3600


def test_scaled_wall_time_runs_at_its_rate(monkeypatch: pytest.MonkeyPatch) -> None:
    """Simulated seconds are (wall - epoch) * rate; sleeping converts back."""
    monkeypatch.setattr("emu.clock.time.time", lambda: 1010.0)
    clock = ScaledWallClock(epoch=1000.0, rate=20.0)
    assert clock.current_time() == 200.0
    assert clock.deadline_to_sleep_time(220.0) == 1.0
    with pytest.raises(ValueError, match="positive"):
        ScaledWallClock(epoch=0.0, rate=0.0)


def test_sparse_io_polls_skip_empty_polls_and_still_see_threads() -> None:
    """poll_io_sparsely: on the virtual clock most zero-timeout polls are
    answered without the system call, timers still fire in order, and what
    a thread hands back through the loop's wakeup descriptor still arrives."""

    async def main() -> tuple[object, list[float], int, int]:
        sparse = poll_io_sparsely()
        assert sparse is not None and poll_io_sparsely() is sparse
        woke: list[float] = []
        for t in (0.5, 1.0, 30.0):
            await trio.sleep_until(t)
            woke.append(trio.current_time())
        got = await trio.to_thread.run_sync(lambda: 42)
        return got, woke, sparse.polled, sparse.skipped

    got, woke, polled, skipped = trio.run(main, clock=virtual_clock())
    assert got == 42 and woke == [0.5, 1.0, 30.0]
    assert skipped > 0 and polled >= 1
    assert skipped >= (IO_POLL_EVERY - 1) * (polled - 1)


def test_sparse_io_polls_only_on_the_virtual_clock() -> None:
    async def main() -> object:
        return poll_io_sparsely()

    assert trio.run(main) is None


def test_the_virtual_clock_reads_the_time_mock_clock_computes() -> None:
    """At rate 0 `current_time` is the virtual base, what MockClock's own
    formula gives; after a jump, and at a rate set later, the two agree."""
    fast = virtual_clock()
    plain = trio.testing.MockClock(autojump_threshold=0)
    for clock in (fast, plain):
        clock.jump(3.25)
        clock.jump(0.1)
    assert fast.current_time() == plain.current_time() == 3.35
    fast.rate = plain.rate = 0.0
    assert fast.current_time() == plain.current_time()
    fast.rate = 2.0
    before = fast.current_time()
    assert fast.current_time() >= before >= 3.35  # the real clock moves it now


def test_the_autojump_wakes_what_is_due_in_the_same_batch() -> None:
    """Tasks due at one instant, whether they sleep on a cancel scope
    deadline (trio.sleep) or an `Alarm` timer, wake in one batch, so in the
    order `deterministic_scheduling` gives a batch (newest first), on the virtual
    clock and on trio's own MockClock alike."""
    from emu.alarm import Alarm

    def order(clock: trio.abc.Clock) -> list[tuple[str, float]]:
        woke: list[tuple[str, float]] = []

        async def by_sleep(name: str) -> None:
            await trio.sleep(5)
            woke.append((name, trio.current_time()))

        async def by_alarm(name: str) -> None:
            await Alarm().wait(5.0)
            woke.append((name, trio.current_time()))

        async def main() -> None:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(by_sleep, "a")
                nursery.start_soon(by_alarm, "b")
                nursery.start_soon(by_sleep, "c")
                nursery.start_soon(by_alarm, "d")

        trio.run(main, clock=clock)
        return woke

    expected = [("d", 5.0), ("c", 5.0), ("b", 5.0), ("a", 5.0)]
    with deterministic_scheduling():
        assert order(virtual_clock()) == expected
        assert order(trio.testing.MockClock(autojump_threshold=0)) == expected


def test_a_voided_timer_neither_rings_nor_stops_the_clock() -> None:
    """An alarm woken before its deadline voids its timer: the task is not
    woken again at the old deadline, and the clock does not stop there."""
    from emu.alarm import Alarm
    from emu.clock import run_timers

    async def main() -> tuple[list[float], float]:
        alarm = Alarm()
        ends: list[float] = []

        async def waiter() -> None:
            await alarm.wait(100.0)
            ends.append(trio.current_time())
            await alarm.wait(200.0)
            ends.append(trio.current_time())

        async with trio.open_nursery() as nursery:
            nursery.start_soon(waiter)
            await trio.sleep(3)
            alarm.wake()
            await trio.sleep(1)
            next_deadline = run_timers().next_deadline()
        return ends, next_deadline

    ends, next_deadline = trio.run(main, clock=virtual_clock())
    assert ends == [3.0, 200.0]
    assert next_deadline == 200.0  # the void 100.0 entry was passed over


def test_ctrl_c_during_a_run_cancels_it_and_never_raises_in_the_handler() -> None:
    """During a run the SIGINT handler only asks for the run to stop: it
    must not raise, because the interpreter may call it from inside compiled
    arithmetic that cannot pass an exception on (the process would abort).
    The run is cancelled at its next checkpoint and ends in KeyboardInterrupt."""
    reached: list[str] = []

    async def main() -> None:
        handler = signal.getsignal(signal.SIGINT)
        assert callable(handler)
        handler(signal.SIGINT, inspect.currentframe())  # as the interpreter would
        reached.append("handler returned")
        await trio.sleep(3600)
        reached.append("not cancelled")

    with pytest.raises(KeyboardInterrupt):
        run_deterministically(main, virtual_clock())
    assert reached == ["handler returned"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_run_that_ends_before_any_signal_returns_its_value() -> None:
    async def main() -> int:
        await trio.sleep(5)
        return 7

    assert run_deterministically(main, virtual_clock()) == 7


def test_a_run_that_fails_before_its_first_checkpoint_raises_its_own_error() -> None:
    """The signal watcher may not have run yet when the run ends: the run's
    own exception comes out, not an internal error of trio's."""

    async def main() -> None:
        raise ValueError("bad input")

    with pytest.raises(ValueError, match="bad input"):
        run_deterministically(main, virtual_clock())

"""emu.alarm.Alarm: a wait until a deadline or a wake-up, as the Event under
move_on_at it replaces in the NM host and the AM driver."""

from __future__ import annotations

import trio
import trio.testing

from emu.alarm import Alarm


async def test_the_deadline_ends_the_wait(autojump_clock: trio.abc.Clock) -> None:
    alarm = Alarm()
    await alarm.wait(5.0)
    assert trio.current_time() == 5.0


async def test_a_wake_ends_the_wait_before_the_deadline(autojump_clock: trio.abc.Clock) -> None:
    alarm = Alarm()
    woke_at: list[float] = []

    async def waiter() -> None:
        await alarm.wait(100.0)
        woke_at.append(trio.current_time())

    async with trio.open_nursery() as nursery:
        nursery.start_soon(waiter)
        await trio.sleep(3)
        alarm.wake()
    assert woke_at == [3.0]


async def test_a_wake_while_nobody_waits_makes_the_next_wait_return_at_once(
    autojump_clock: trio.abc.Clock,
) -> None:
    alarm = Alarm()
    alarm.wake()
    await alarm.wait(50.0)
    assert trio.current_time() == 0.0
    await alarm.wait(50.0)  # the wake-up was used once
    assert trio.current_time() == 50.0


async def test_a_second_wake_before_the_waiter_resumes_is_absorbed(
    autojump_clock: trio.abc.Clock,
) -> None:
    """As an Event set twice and replaced after the wait: the wake-up that
    lands after the wait ended but before its task ran is not kept for the
    next wait (the NM host wakes its loop once per earlier due time)."""
    alarm = Alarm()
    ends: list[float] = []

    async def waiter() -> None:
        await alarm.wait(100.0)
        ends.append(trio.current_time())
        await alarm.wait(trio.current_time() + 10.0)
        ends.append(trio.current_time())

    async with trio.open_nursery() as nursery:
        nursery.start_soon(waiter)
        await trio.sleep(3)
        alarm.wake()
        alarm.wake()
    assert ends == [3.0, 13.0]


async def test_an_outside_cancel_still_cancels(autojump_clock: trio.abc.Clock) -> None:
    alarm = Alarm()
    with trio.move_on_after(7) as scope:
        await alarm.wait()
    assert scope.cancelled_caught and trio.current_time() == 7.0
    raised = False
    with trio.CancelScope() as outer:
        outer.cancel()
        try:
            await alarm.wait(100.0)
        except trio.Cancelled:
            raised = True
            raise
    assert raised and trio.current_time() == 7.0

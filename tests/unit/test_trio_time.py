"""emu.trio_time.current_time reads trio's own clock, whichever it is, and
fails outside a run as trio.current_time does."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from emu.clock import ScaledWallClock, virtual_clock
from emu.trio_time import current_time


@pytest.mark.parametrize(
    "make_clock",
    [
        lambda: None,
        lambda: trio.testing.MockClock(autojump_threshold=0),
        virtual_clock,
        lambda: ScaledWallClock(0.0, 50.0),
    ],
    ids=["default", "mock", "virtual", "scaled"],
)
def test_current_time_is_trios_on_every_clock(make_clock) -> None:
    seen: list[tuple[float, float]] = []

    async def main() -> None:
        for delay in (0.0, 0.01, 0.02):
            await trio.sleep(delay)
            ours = current_time()
            seen.append((ours, trio.current_time()))

    trio.run(main, clock=make_clock())
    assert len(seen) == 3
    for ours, theirs in seen:
        # read just before trio's: never later, and on a moving clock close
        assert ours <= theirs < ours + 0.5
    if make_clock is virtual_clock:
        assert [ours for ours, _ in seen] == pytest.approx([0.0, 0.01, 0.03])


def test_current_time_outside_a_run_raises_as_trio_does() -> None:
    with pytest.raises(RuntimeError):
        trio.current_time()
    with pytest.raises(RuntimeError):
        current_time()

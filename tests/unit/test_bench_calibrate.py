"""The bench's reference loop: a fixed amount of work, timed."""

from __future__ import annotations

import math

from emu.bench import calibrate


def test_the_reference_loop_does_the_same_work_every_round() -> None:
    assert calibrate._round(5000) == calibrate._round(5000) > 0
    assert calibrate._round(5000) != calibrate._round(6000)


def test_reference_ms_is_the_best_of_its_rounds() -> None:
    times = iter([0.0, 0.5, 1.0, 1.2, 2.0, 2.3])  # rounds of 0.5, 0.2 and 0.3 s
    assert math.isclose(calibrate.reference_ms(3, 10, lambda: next(times)), 200.0)

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


def test_the_memory_loop_touches_every_object_once_per_round() -> None:
    objects = calibrate._scattered(1000)
    assert calibrate._touch(objects) == 1000
    assert all(o.count == 1 for o in objects)
    times = iter([0.0, 0.3, 1.0, 1.1])  # rounds of 0.3 and 0.1 s
    assert math.isclose(calibrate.memory_ms(2, 1000, lambda: next(times)), 100.0)


def test_describe_names_both_loops() -> None:
    text = calibrate.describe()
    assert text.startswith("compute ") and " ms, memory " in text and text.endswith(" ms")

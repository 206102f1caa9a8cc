"""Resource arithmetic, normalization and the two calculators."""

from __future__ import annotations

import pytest

from emu.resources import (
    DominantResourceCalculator,
    Resource,
    ResourceCalculator,
    calculator,
    normalize,
)


def test_arithmetic_and_fit():
    a, b = Resource(2048, 2), Resource(1024, 1, {"gpu": 1})
    assert a + b == Resource(3072, 3, {"gpu": 1})
    assert (a - b).extra == (("gpu", -1),)
    assert b.fits_in(Resource(4096, 4, {"gpu": 2}))
    assert not b.fits_in(Resource(4096, 4))
    assert Resource.from_wire(b.to_wire()) == b


def test_normalize_rounds_up_to_the_increment_and_caps():
    mn, mx = Resource(1024, 1), Resource(8192, 4)
    assert normalize(Resource(1500, 1), mn, mx, mn) == Resource(2048, 1)
    assert normalize(Resource(100, 0), mn, mx, mn) == Resource(1024, 1)
    assert normalize(Resource(9000, 9), mn, mx, mn) == Resource(8192, 4)


def test_default_calculator_looks_at_memory_only():
    c = ResourceCalculator()
    cluster = Resource(10_000, 10)
    assert c.compare(cluster, Resource(2000, 9), Resource(3000, 1)) < 0
    assert c.divide_and_count(Resource(4096, 1), Resource(1024, 4)) == 4


def test_dominant_calculator_compares_dominant_shares():
    """DRF paper: cluster <9 CPU, 18 GB>; A <1 CPU, 4 GB>, B <3 CPU, 1 GB>."""
    c = DominantResourceCalculator()
    cluster = Resource(18 * 1024, 9)
    a3 = Resource(3 * 4 * 1024, 3)  # 12/18 GB = 2/3
    b2 = Resource(2 * 1024, 6)  # 6/9 CPU = 2/3
    assert c.share(cluster, a3) == pytest.approx(2 / 3)
    assert c.share(cluster, b2) == pytest.approx(2 / 3)
    assert c.divide_and_count(Resource(4096, 2), Resource(1024, 1)) == 2
    assert c.compare(cluster, Resource(1024, 1), Resource(4096, 1)) < 0


def test_calculator_by_hadoop_class_name():
    name = "org.apache.hadoop.yarn.util.resource.DominantResourceCalculator"
    assert isinstance(calculator(name), DominantResourceCalculator)
    with pytest.raises(ValueError):
        calculator("nope")

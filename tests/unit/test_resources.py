"""Resource arithmetic, normalization and the two calculators."""

from __future__ import annotations

import pytest

from emu.resources import (
    DominantResourceCalculator,
    Resource,
    ResourceCalculator,
    calculator,
    component_max,
    component_min,
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


def test_default_calculator_fits_by_memory_alone():
    """DefaultResourceCalculator.fitsIn / computeAvailableContainers: vcores
    and extra types never stop a placement, so they can be over-committed."""
    c = ResourceCalculator()
    node_free = Resource(7168, 1, {"gpu": 0})
    assert c.fits(Resource(1024, 1), Resource(1024, 0))
    assert c.fits(Resource(1024, 4, {"gpu": 2}), node_free)
    assert not c.fits(Resource(8192, 1), node_free)
    assert c.divide_and_count(node_free, Resource(1024, 1, {"gpu": 1})) == 7
    assert c.ratio(Resource(1024, 8), Resource(4096, 1)) == 0.25


def test_dominant_calculator_counts_every_resource_type():
    """DominantResourceCalculator: fit, count, ratio and order look at
    memory, vcores and every extra type; a type a resource does not name
    counts as 0 of it."""
    c = DominantResourceCalculator()
    cluster = Resource(16384, 16, {"gpu": 4})
    free = Resource(8192, 8, {"gpu": 2})
    task = Resource(1024, 1, {"gpu": 1})
    assert c.fits(task, free)
    assert not c.fits(Resource(1024, 1, {"gpu": 3}), free)
    assert not c.fits(Resource(1024, 9), free)
    assert c.divide_and_count(free, task) == 2
    assert c.divide_and_count(free, Resource(1024, 1)) == 8
    assert c.ratio(task, free) == 0.5
    assert c.share(cluster, task) == 0.25
    assert c.compare(cluster, task, Resource(2048, 2)) > 0
    assert c.compare(cluster, Resource(2048, 2), Resource(2048, 2, {"gpu": 0})) == 0
    assert c.compare(cluster, Resource(8192, 1), task) > 0
    # equal dominant shares (1/4): the next shares decide, <1/16, 0> < <1/16, 1/16>
    assert c.compare(cluster, Resource(4096, 1), task) < 0


def test_dominant_calculator_without_shares_compares_by_dominance():
    """A cluster with none of some type (no nodes yet, or a declared gpu
    type no node has) gives no dominant shares: like Hadoop, compare type
    by type, 0 when each resource is larger in some type."""
    c = DominantResourceCalculator()
    no_gpus = Resource(16384, 16, {"gpu": 0})
    assert c.compare(no_gpus, Resource(2048, 1), Resource(1024, 8)) == 0
    assert c.compare(no_gpus, Resource(2048, 2), Resource(1024, 2)) > 0
    assert c.compare(no_gpus, Resource(1024, 2), Resource(1024, 2, {"gpu": 1})) < 0
    assert c.compare(Resource(0, 0), Resource(2048, 1), Resource(1024, 8)) == 0
    # with every type present, dominant shares decide: 8/16 vcores > 2/16 GB
    assert c.compare(Resource(16384, 16, {"gpu": 2}), Resource(2048, 1), Resource(1024, 8)) < 0


def test_componentwise_min_and_max_count_a_missing_type_as_zero():
    """Resources.componentwiseMin/Max: either argument may name a type the
    other does not; the other has 0 of it."""
    gpus, plain = Resource(4096, 4, {"gpu": 2}), Resource(2048, 8)
    assert component_min(gpus, plain) == Resource(2048, 4, {"gpu": 0})
    assert component_min(plain, gpus) == Resource(2048, 4, {"gpu": 0})
    assert component_max(plain, gpus) == Resource(4096, 8, {"gpu": 2})


def test_from_wire_shares_plain_sizes_and_keeps_extras_apart():
    """Plain <memory, vcores> maps decode to one shared instance per size;
    maps with other types, or non-integer amounts, decode as before."""
    a = Resource.from_wire({"memory-mb": 2048, "vcores": 1})
    assert a is Resource.from_wire({"vcores": 1, "memory-mb": 2048})
    assert a == Resource(2048, 1)
    assert Resource.from_wire({"memory-mb": 2048, "vcores": 2}) is not a
    gpu = Resource.from_wire({"memory-mb": 2048, "gpu": 1})
    assert (gpu.memory, gpu.vcores, gpu.extra) == (2048, 0, (("gpu", 1),))
    flag = Resource.from_wire({"memory-mb": True, "vcores": 1})
    assert flag == Resource(1, 1) and flag is not Resource.from_wire({"memory-mb": 1, "vcores": 1})

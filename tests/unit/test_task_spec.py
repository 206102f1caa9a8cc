"""TaskSpec is an immutable value: equal and hashed by its fields, shared
by SpecCache, and the same after a trip through its wire map."""

from __future__ import annotations

import sys

from emu.resources import Resource
from emu.workload import SpecCache, TaskSpec


def _spec(task_type: str = "map", **changes: object) -> TaskSpec:
    fields: dict[str, object] = {
        "priority": 20,
        "duration_ms": 60_000,
        "resource": Resource(2048, 1),
        "hosts": ("h1",),
    }
    fields.update(changes)
    return TaskSpec(task_type, **fields)  # type: ignore[arg-type]


def test_equal_by_every_field_and_hashed_alike() -> None:
    a, b = _spec(), _spec()
    assert a == b and hash(a) == hash(b)
    assert (a != b) is False
    for change in (
        {"priority": 10},
        {"duration_ms": 1},
        {"resource": Resource(1024, 1)},
        {"hosts": ()},
        {"execution_type": "OPPORTUNISTIC"},
        {"allocation_id": 3},
        {"request_delay_ms": 5},
    ):
        assert _spec(**change) != a, change
    assert _spec("reduce") != a
    assert a != ("map", 20) and len({a, b, _spec("reduce")}) == 2
    assert "TaskSpec(task_type='map', priority=20" in repr(a)


def test_spec_cache_shares_equal_specs_with_an_interned_type() -> None:
    shared = SpecCache()
    kind = "".join(["ma", "p"])  # equal to "map", not the interned object
    assert kind is not sys.intern("map")
    first = shared.task(_spec(kind))
    assert first.task_type is sys.intern("map") and first == _spec(kind)
    assert first.hosts == ("h1",) and first.resource == Resource(2048, 1)
    assert shared.task(_spec("map")) is first


def test_a_spec_survives_its_wire_map() -> None:
    a = _spec(execution_type="OPPORTUNISTIC", allocation_id=7, request_delay_ms=250)
    assert TaskSpec.from_wire(a.to_wire()) == a
    assert TaskSpec.from_wire(_spec(hosts=()).to_wire()) == _spec(hosts=())

"""An app's resource-seconds and preemption totals, as YARN's RMAppMetrics
keeps them: charged once per ended container, truncated per container."""

from __future__ import annotations

from emu.resources import Resource
from emu.rm.app import RMApp


def _app() -> RMApp:
    return RMApp("application_0_0001", "j", "default", "u", 0, Resource(1024, 1), "mr", {}, 2, 0)


def test_ended_containers_add_memory_and_vcore_seconds() -> None:
    app = _app()
    app.charge(Resource(2048, 2), 1500, is_am=False, preempted=False)
    app.charge(Resource(1024, 1), 999, is_am=True, preempted=False)
    assert (app.memory_seconds, app.vcore_seconds) == (3072 + 1022, 3 + 0)
    assert (app.preempted_am, app.preempted_non_am, app.preempted_mb) == (0, 0, 0)


def test_preempted_containers_are_counted_apart_by_kind() -> None:
    app = _app()
    app.charge(Resource(2048, 2), 10_000, is_am=False, preempted=True)
    app.charge(Resource(1024, 1), 4_000, is_am=True, preempted=True)
    assert (app.preempted_non_am, app.preempted_am) == (1, 1)
    assert (app.preempted_mb, app.preempted_vcores) == (3072, 3)
    assert (app.preempted_memory_seconds, app.preempted_vcore_seconds) == (24576, 24)
    assert app.memory_seconds == app.preempted_memory_seconds

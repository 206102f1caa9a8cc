"""What an AM keeps per task of its plan: shared where tasks are alike."""

from __future__ import annotations

from emu.am.engine import ApplicationMaster
from emu.resources import Resource
from emu.workload import JobSpec, TaskSpec


def test_am_shares_rack_sets_and_app_id() -> None:
    """Maps on hosts of one rack share one rack set, maps without hosts the
    empty one; the app id every launch carries is one string."""
    size = Resource(1024, 1)
    tasks = (
        TaskSpec("map", 20, 1000, size, ("h1",)),
        TaskSpec("map", 20, 2000, size, ("h2",)),
        TaskSpec("map", 20, 3000, size, ("h3",)),
        TaskSpec("map", 20, 4000, size),
    )
    job = JobSpec("j", "mapreduce", 0, "default", "u", size, tasks)
    am = ApplicationMaster(
        {
            "attempt_id": "appattempt_17_0004_000001",
            "rm_address": "mem://rm",
            "context": {"job": job.to_wire(), "racks": {"h1": "/r1", "h2": "/r1", "h3": "/r2"}},
        }
    )
    r1, r1_again, r2, none = am.task_racks
    assert r1 == frozenset({"/r1"}) and r1 is r1_again
    assert r2 == frozenset({"/r2"})
    assert none == frozenset()
    assert am.tasks == tasks
    assert am.attempt_app_id() == "application_17_0004"
    assert am.attempt_app_id() is am.attempt_app_id()

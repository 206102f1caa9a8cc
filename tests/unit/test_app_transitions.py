"""RMApp's table, one transition per test, as Hadoop's TestRMAppTransitions:
the state before, the event, the state after, and the side effects (events
raised, fields set, the completion record)."""

from __future__ import annotations

from emu.rm.enums import (
    AppEvent,
    AppState,
    AttemptEvent,
    AttemptState,
    NodeEvent,
    NodeState,
)
from emu.rm.scheduler.events import SchedulerEvent
from tests.transitions import Bench

APP = "application_0_0001"


async def test_new_start_saves_the_app() -> None:
    b = Bench()
    app = b.app(AppState.NEW)
    assert b.fire("app", app, AppEvent.START)
    assert app.state == AppState.NEW_SAVING
    assert b.events() == [("app", AppEvent.APP_NEW_SAVED, APP)]


async def test_new_saving_saved_hands_the_app_to_the_scheduler() -> None:
    b = Bench()
    app = b.app(AppState.NEW_SAVING)
    b.fire("app", app, AppEvent.APP_NEW_SAVED)
    assert app.state == AppState.SUBMITTED
    assert b.events() == [("scheduler", SchedulerEvent.APP_ADDED, APP)]
    assert b.raised[0].data is app


async def test_new_saving_saved_rejects_an_am_larger_than_the_maximum() -> None:
    b = Bench()
    app = b.app(AppState.NEW_SAVING, memory=10**9)
    b.fire("app", app, AppEvent.APP_NEW_SAVED)
    assert app.state == AppState.SUBMITTED
    assert b.events() == [("app", AppEvent.APP_REJECTED, APP)]
    assert "Invalid resource request" in b.raised[0].data


async def test_new_recover_rejoins_the_scheduler_without_saving() -> None:
    b = Bench()
    app = b.app(AppState.NEW)
    b.fire("app", app, AppEvent.RECOVER)
    assert app.state == AppState.SUBMITTED
    assert b.events() == [("scheduler", SchedulerEvent.APP_ADDED, APP)]


async def test_new_kill_completes_the_app_at_once() -> None:
    b = Bench()
    app = b.app(AppState.NEW)
    b.fire("app", app, AppEvent.KILL)
    assert app.state == AppState.KILLED
    assert app.final_status == "KILLED"
    assert app.finished_ms >= 0
    assert b.events() == [("scheduler", SchedulerEvent.APP_REMOVED, APP)]
    assert b.raised[0].data == AppState.KILLED
    assert b.ctx.final_apps[AppState.KILLED] == 1
    [summary] = b.logged("app_summary")
    assert (summary["id"], summary["state"], summary["attempts"]) == (APP, "KILLED", 0)


async def test_new_saving_kill_completes_the_app_at_once() -> None:
    b = Bench()
    app = b.app(AppState.NEW_SAVING)
    b.fire("app", app, AppEvent.KILL)
    assert app.state == AppState.KILLED
    assert b.events() == [("scheduler", SchedulerEvent.APP_REMOVED, APP)]


async def test_submitted_accepted_starts_the_first_attempt() -> None:
    b = Bench()
    app = b.app(AppState.SUBMITTED)
    b.fire("app", app, AppEvent.APP_ACCEPTED)
    assert app.state == AppState.ACCEPTED
    [attempt_id] = app.attempts
    assert attempt_id == "appattempt_0_0001_000001"
    assert b.ctx.attempts[attempt_id].state == AttemptState.NEW
    assert b.events() == [("attempt", AttemptEvent.START, attempt_id)]


async def test_submitted_rejected_fails_with_the_reason() -> None:
    b = Bench()
    app = b.app(AppState.SUBMITTED)
    b.fire("app", app, AppEvent.APP_REJECTED, "queue full")
    assert app.state == AppState.FINAL_SAVING
    assert (app.final_status, app.final_target, app.diagnostics) == (
        "FAILED",
        AppState.FAILED,
        "queue full",
    )
    assert b.events() == [("app", AppEvent.APP_UPDATE_SAVED, APP)]


async def test_submitted_kill_saves_a_killed_outcome() -> None:
    b = Bench()
    app = b.app(AppState.SUBMITTED)
    b.fire("app", app, AppEvent.KILL)
    assert app.state == AppState.FINAL_SAVING
    assert (app.final_status, app.final_target) == ("KILLED", AppState.KILLED)
    assert b.events() == [("app", AppEvent.APP_UPDATE_SAVED, APP)]


async def test_running_kill_kills_the_current_attempt_first() -> None:
    b = Bench()
    app = b.app(AppState.RUNNING)
    attempt_id = b.attempt(app, AttemptState.RUNNING)
    b.fire("app", app, AppEvent.KILL)
    assert app.state == AppState.FINAL_SAVING
    assert b.events() == [
        ("attempt", AttemptEvent.KILL, attempt_id),
        ("app", AppEvent.APP_UPDATE_SAVED, APP),
    ]


async def test_accepted_attempt_registered_runs_and_stamps_the_start() -> None:
    b = Bench()
    app = b.app(AppState.ACCEPTED)
    b.fire("app", app, AppEvent.ATTEMPT_REGISTERED)
    assert app.state == AppState.RUNNING
    assert app.started_ms >= 0
    assert b.events() == []


async def test_accepted_attempt_failed_retries_while_attempts_remain() -> None:
    b = Bench()
    app = b.app(AppState.ACCEPTED)
    first = b.attempt(app, AttemptState.FAILED)
    b.fire("app", app, AppEvent.ATTEMPT_FAILED, first)
    assert app.state == AppState.ACCEPTED
    assert app.attempts == [first, "appattempt_0_0001_000002"]
    assert b.events() == [("attempt", AttemptEvent.START, "appattempt_0_0001_000002")]


async def test_attempt_failed_that_does_not_count_never_exhausts_the_app() -> None:
    b = Bench(**{"yarn.resourcemanager.am.max-attempts": "1"})
    app = b.app(AppState.RUNNING)
    preempted = b.attempt(app, AttemptState.FAILED, counts_as_failure=False)
    b.fire("app", app, AppEvent.ATTEMPT_FAILED, preempted)
    assert app.state == AppState.ACCEPTED
    assert len(app.attempts) == 2


async def test_running_attempt_failed_fails_the_app_when_attempts_are_used_up() -> None:
    b = Bench(**{"yarn.resourcemanager.am.max-attempts": "1"})
    app = b.app(AppState.RUNNING)
    attempt_id = b.attempt(app, AttemptState.FAILED)
    b.ctx.attempts[attempt_id].diagnostics = "AM exited with 1"
    b.fire("app", app, AppEvent.ATTEMPT_FAILED, attempt_id)
    assert app.state == AppState.FINAL_SAVING
    assert (app.final_status, app.final_target) == ("FAILED", AppState.FAILED)
    assert app.diagnostics == (
        f"Application {APP} failed 1 times due to AM exited with 1. Failing the application."
    )
    assert b.events() == [("app", AppEvent.APP_UPDATE_SAVED, APP)]


async def test_running_attempt_unregistered_saves_the_am_final_status() -> None:
    b = Bench()
    app = b.app(AppState.RUNNING)
    attempt_id = b.attempt(app, AttemptState.FINISHING)
    a = b.ctx.attempts[attempt_id]
    a.final_status, a.diagnostics = "FAILED", "job failed"
    b.fire("app", app, AppEvent.ATTEMPT_UNREGISTERED, attempt_id)
    assert app.state == AppState.FINAL_SAVING
    assert (app.final_status, app.final_target, app.diagnostics) == (
        "FAILED",
        AppState.FINISHING,
        "job failed",
    )
    assert b.events() == [("app", AppEvent.APP_UPDATE_SAVED, APP)]


async def test_final_saving_saved_waits_in_finishing_for_the_attempt() -> None:
    b = Bench()
    app = b.app(AppState.FINAL_SAVING)
    app.final_target = AppState.FINISHING
    b.fire("app", app, AppEvent.APP_UPDATE_SAVED)
    assert app.state == AppState.FINISHING
    assert app.finished_ms == -1
    assert b.events() == []


async def test_final_saving_attempt_finished_is_remembered() -> None:
    b = Bench()
    app = b.app(AppState.FINAL_SAVING)
    b.fire("app", app, AppEvent.ATTEMPT_FINISHED)
    assert app.state == AppState.FINAL_SAVING
    assert app.attempt_finished_while_saving


async def test_final_saving_saved_after_the_attempt_finished_is_finished() -> None:
    b = Bench()
    app = b.app(AppState.FINAL_SAVING)
    app.final_target = AppState.FINISHING
    app.attempt_finished_while_saving = True
    b.fire("app", app, AppEvent.APP_UPDATE_SAVED)
    assert app.state == AppState.FINISHED
    assert b.events() == [("scheduler", SchedulerEvent.APP_REMOVED, APP)]
    assert b.ctx.final_apps[AppState.FINISHED] == 1


async def test_final_saving_saved_kill_completes_and_cleans_the_nodes_that_ran_it() -> None:
    b = Bench()
    app = b.app(AppState.FINAL_SAVING)
    app.final_target = AppState.KILLED
    ran, idle = b.node(NodeState.RUNNING, "n1"), b.node(NodeState.RUNNING, "n2")
    ran.running_apps.add(APP)
    # Where the app had containers (n2: one that ended with nothing left to clean).
    b.ctx.app_nodes[APP] = {"n2", "n1"}
    b.fire("app", app, AppEvent.APP_UPDATE_SAVED)
    assert app.state == AppState.KILLED
    assert app.context == {}
    assert b.events() == [
        ("scheduler", SchedulerEvent.APP_REMOVED, APP),
        ("node", NodeEvent.CLEANUP_APP, "n1"),
    ]
    assert idle.apps_to_cleanup == []
    assert APP not in b.ctx.app_nodes
    assert [s["state"] for s in b.logged("app_summary")] == ["KILLED"]


async def test_finishing_attempt_finished_completes_the_app() -> None:
    b = Bench()
    app = b.app(AppState.FINISHING)
    b.fire("app", app, AppEvent.ATTEMPT_FINISHED)
    assert app.state == AppState.FINISHED
    assert app.finished_ms >= 0
    assert b.events() == [("scheduler", SchedulerEvent.APP_REMOVED, APP)]


async def test_finishing_kill_is_absorbed() -> None:
    b = Bench()
    app = b.app(AppState.FINISHING)
    assert b.fire("app", app, AppEvent.KILL)
    assert app.state == AppState.FINISHING
    assert b.events() == []
    assert not b.ctx.invalid_transitions


async def test_a_late_kill_after_finished_is_absorbed() -> None:
    b = Bench()
    app = b.app(AppState.FINISHED)
    assert b.fire("app", app, AppEvent.KILL)
    assert app.state == AppState.FINISHED
    assert b.events() == []
    assert not b.ctx.invalid_transitions


async def test_an_event_the_state_does_not_take_is_counted_not_applied() -> None:
    b = Bench()
    app = b.app(AppState.NEW)
    assert not b.fire("app", app, AppEvent.ATTEMPT_REGISTERED)
    assert app.state == AppState.NEW
    assert b.ctx.invalid_transitions == {"app:NEW:ATTEMPT_REGISTERED": 1}
    assert [r["on"] for r in b.logged("invalid_transition")] == ["ATTEMPT_REGISTERED"]

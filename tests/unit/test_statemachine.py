"""State tables are valid at definition, refuse bad definitions (including
events and states that are not members of the entity's enums), and ignore
events with no transition (RMContext counts them)."""

from __future__ import annotations

from enum import StrEnum

import pytest

from emu.docs import generated
from emu.rm.context import MACHINES
from emu.rm.statemachine import StateMachine, StateMachineDefinitionError


class S(StrEnum):
    A = "A"
    B = "B"
    C = "C"


class E(StrEnum):
    GO = "go"


class Thing:
    def __init__(self) -> None:
        self.state = S.A


def test_every_rm_table_is_valid_and_covers_its_states():
    expected = {
        "app": {"NEW", "NEW_SAVING", "SUBMITTED", "ACCEPTED", "RUNNING", "FINAL_SAVING",
                "FINISHING", "FINISHED", "FAILED", "KILLED"},
        "attempt": {"NEW", "SUBMITTED", "SCHEDULED", "ALLOCATED", "LAUNCHED", "RUNNING",
                    "FINISHING", "FINISHED", "FAILED", "KILLED"},
        "container": {"NEW", "RESERVED", "ALLOCATED", "ACQUIRED", "RUNNING", "COMPLETED",
                      "RELEASED", "KILLED", "EXPIRED"},
        "node": {"NEW", "RUNNING", "UNHEALTHY", "DECOMMISSIONED", "LOST", "SHUTDOWN",
                 "REBOOTED"},
    }  # fmt: skip
    for kind, machine in MACHINES.items():
        assert set(machine.states) == expected[kind]
        assert machine.initial == "NEW"
        # every event member is handled somewhere, and only members are
        keyed = {e for _, e in [*machine.table, *machine.ignored]}
        assert keyed == set(machine.events)
        # no transition leaves a final state except ignorable self-loops
        for (state, _event), _arc in machine.table.items():
            assert state not in machine.final
        for (state, _event), arc in machine.ignored.items():
            assert arc.to == state


def test_missing_initial_state_is_a_definition_error():
    with pytest.raises(StateMachineDefinitionError, match="initial"):
        StateMachine("x", S, E, "Z", [S.B], [(S.A, E.GO, S.B, None), (S.B, E.GO, S.C, None)])


def test_unreachable_state_is_a_definition_error():
    with pytest.raises(StateMachineDefinitionError, match="unreachable"):
        StateMachine("x", S, E, S.A, [S.B], [(S.A, E.GO, S.B, None)])


def test_transition_out_of_final_state_is_a_definition_error():
    with pytest.raises(StateMachineDefinitionError, match="final"):
        StateMachine(
            "x", S, E, S.A, [S.C], [(S.A, E.GO, S.B, None), (S.B, E.GO, S.C, None),
                                 (S.C, E.GO, S.A, None)]
        )  # fmt: skip


def test_multiple_targets_need_a_hook():
    with pytest.raises(StateMachineDefinitionError, match="hook"):
        StateMachine("x", S, E, S.A, [S.B, S.C], [(S.A, E.GO, (S.B, S.C), None)])


def test_duplicate_transition_is_a_definition_error():
    with pytest.raises(StateMachineDefinitionError, match="duplicate"):
        StateMachine("x", S, E, S.A, [S.C], [(S.A, E.GO, S.B, None), (S.A, E.GO, S.C, None)])


def test_misspelt_event_in_a_table_fails_at_definition():
    """A plain string that is not a member (here a typo of "go") is refused
    when the table is built, i.e. at import of the entity module."""
    with pytest.raises(StateMachineDefinitionError, match="'og' is not a E"):
        StateMachine("x", S, E, S.A, [S.C], [(S.A, "og", S.B, None), (S.B, E.GO, S.C, None)])


def test_misspelt_event_member_fails_at_definition():
    with pytest.raises(AttributeError, match="OG"):
        StateMachine("x", S, E, S.A, [S.C], [(S.A, E.OG, S.B, None)])


def test_state_that_is_not_a_member_fails_at_definition():
    with pytest.raises(StateMachineDefinitionError, match="'B' is not a S"):
        StateMachine("x", S, E, S.A, [S.C], [(S.A, E.GO, "B", None), (S.B, E.GO, S.C, None)])


def test_event_member_nothing_handles_fails_at_definition():
    class E2(StrEnum):
        GO = "go"
        STOP = "stop"

    with pytest.raises(StateMachineDefinitionError, match=r"nothing handles \['stop'\]"):
        StateMachine("x", S, E2, S.A, [S.C], [(S.A, E2.GO, S.B, None), (S.B, E2.GO, S.C, None)])


def test_every_scheduler_event_has_exactly_one_handler():
    from emu.metrics.sls import SCHEDULER_EVENTS
    from emu.rm.scheduler.abstract_scheduler import Scheduler
    from emu.rm.scheduler.events import SchedulerEvent, check_handlers

    # realtimetrack.json's fixed per-event keys: all but a node-label change,
    # whose key appears only in runs that have one (so other runs' outputs
    # keep their keys)
    labels = SchedulerEvent.NODE_LABELS_UPDATE
    assert tuple(e for e in SchedulerEvent if e is not labels) == SCHEDULER_EVENTS
    for event in SchedulerEvent:
        assert callable(getattr(Scheduler, f"on_{event}"))

    class Unhandled(Scheduler):
        def on_RELEASE_CONTAINER(self, container_id: str, data: object) -> None:
            """A handler no member names."""

    with pytest.raises(TypeError, match="handlers without an event \\['RELEASE_CONTAINER'\\]"):
        check_handlers(Unhandled)


def _machine() -> StateMachine:
    return StateMachine(
        "x", S, E, S.A, [S.C], [(S.A, E.GO, S.B, None), (S.B, E.GO, S.C, None)],
        ignored={S.C: [E.GO]},
    )  # fmt: skip


def test_invalid_event_changes_nothing():
    seen = []
    m = StateMachine(
        "x", S, E, S.A, [S.B, S.C], [(S.A, E.GO, (S.B, S.C), lambda c, e, d: seen.append(d) or S.B)]
    )
    t = Thing()
    assert m.fire(None, t, "stop") is False
    assert t.state == S.A
    assert m.fire(None, t, E.GO, 5) is True
    assert (t.state, seen) == (S.B, [5])
    assert m.fire(None, t, E.GO) is False
    assert t.state == S.B


def test_ignored_late_events_are_accepted_without_effect():
    m = _machine()
    t = Thing()
    m.fire(None, t, E.GO)
    m.fire(None, t, E.GO)
    assert t.state == S.C
    assert m.fire(None, t, E.GO) is True
    assert t.state == S.C


def test_multi_target_hook_chooses_the_next_state():
    m = StateMachine(
        "x", S, E, S.A, [S.B, S.C], [(S.A, E.GO, (S.B, S.C), lambda c, e, d: d)]
    )  # fmt: skip
    t = Thing()
    m.fire(None, t, E.GO, S.C)
    assert t.state == S.C


def test_rm_context_counts_invalid_transitions_without_crashing():
    import trio

    from emu.config.configuration import Configuration
    from emu.metrics.eventlog import EventLog
    from emu.resources import Resource
    from emu.rm.context import RMContext
    from emu.rm.node import RMNode
    from emu.rm.scheduler.fifo import FifoScheduler
    from emu.rm.settings import RMSettings

    async def main() -> RMContext:
        conf = Configuration({"yarn.resourcemanager.scheduler.class": "fifo"})
        ctx = RMContext(RMSettings.from_conf(conf), conf, EventLog())
        ctx.attach_scheduler(FifoScheduler(ctx))
        ctx.nodes["n1"] = RMNode("n1", "n1", "/r", Resource(1024, 1), "mem://x", (), 0)
        ctx.dispatch("node", "STATUS_UPDATE", "n1", (True, [], []))  # NEW has no STATUS_UPDATE
        ctx.dispatch("node", "EXPIRE", "nope")  # unknown node
        ctx.dispatcher.drain()
        return ctx

    ctx = trio.run(main)
    assert ctx.nodes["n1"].state == "NEW"
    assert ctx.invalid_transitions["node:NEW:STATUS_UPDATE"] == 1
    assert ctx.invalid_transitions["node.EXPIRE.unknown"] == 1


def test_generated_docs_are_current():
    for path, text in generated().items():
        assert path.exists(), f"{path} missing: run `make docs`"
        assert path.read_text() == text, f"{path} is stale: run `make docs`"

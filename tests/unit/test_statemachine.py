"""State tables are valid at definition, refuse bad definitions, and ignore
(but count) events with no transition."""

from __future__ import annotations

import pytest

from emu.docs import generated
from emu.rm.context import MACHINES
from emu.rm.statemachine import StateMachine, StateMachineDefinitionError


class Thing:
    def __init__(self) -> None:
        self.state = "A"


def test_every_rm_table_is_valid_and_covers_its_states():
    expected = {
        "app": {"NEW", "NEW_SAVING", "SUBMITTED", "ACCEPTED", "RUNNING", "FINAL_SAVING",
                "FINISHING", "FINISHED", "FAILED", "KILLED"},
        "attempt": {"NEW", "SUBMITTED", "SCHEDULED", "ALLOCATED", "LAUNCHED", "RUNNING",
                    "FINISHING", "FINISHED", "FAILED", "KILLED"},
        "container": {"NEW", "RESERVED", "ALLOCATED", "ACQUIRED", "RUNNING", "COMPLETED",
                      "RELEASED", "KILLED", "EXPIRED"},
        "node": {"NEW", "RUNNING", "UNHEALTHY", "DECOMMISSIONING", "DECOMMISSIONED", "LOST",
                 "REBOOTED", "SHUTDOWN"},
    }  # fmt: skip
    for kind, machine in MACHINES.items():
        assert set(machine.states) == expected[kind]
        assert machine.initial == "NEW"
        # no transition leaves a final state except ignorable self-loops
        for (state, _event), _arc in machine.table.items():
            assert state not in machine.final
        for (state, _event), arc in machine.ignored.items():
            assert arc.to == state


def test_missing_initial_state_is_a_definition_error():
    with pytest.raises(StateMachineDefinitionError, match="initial"):
        StateMachine("x", ["A", "B"], "Z", ["B"], [("A", "go", "B", None)])


def test_unreachable_state_is_a_definition_error():
    with pytest.raises(StateMachineDefinitionError, match="unreachable"):
        StateMachine("x", ["A", "B", "C"], "A", ["B"], [("A", "go", "B", None)])


def test_transition_out_of_final_state_is_a_definition_error():
    with pytest.raises(StateMachineDefinitionError, match="final"):
        StateMachine(
            "x", ["A", "B"], "A", ["B"], [("A", "go", "B", None), ("B", "back", "A", None)]
        )


def test_multiple_targets_need_a_hook():
    with pytest.raises(StateMachineDefinitionError, match="hook"):
        StateMachine("x", ["A", "B", "C"], "A", ["B", "C"], [("A", "go", ("B", "C"), None)])


def test_duplicate_transition_is_a_definition_error():
    with pytest.raises(StateMachineDefinitionError, match="duplicate"):
        StateMachine("x", ["A", "B"], "A", ["B"], [("A", "go", "B", None), ("A", "go", "B", None)])


def test_invalid_event_is_counted_and_changes_nothing():
    seen = []
    m = StateMachine(
        "x", ["A", "B"], "A", ["B"], [("A", "go", "B", lambda c, e, d: seen.append(d))]
    )
    t = Thing()
    assert m.fire(None, t, "stop") is False
    assert t.state == "A"
    assert m.stats.invalid[("A", "stop")] == 1
    assert m.fire(None, t, "go", 5) is True
    assert (t.state, seen) == ("B", [5])
    assert m.fire(None, t, "go") is False
    assert m.stats.invalid[("B", "go")] == 1


def test_ignored_late_events_are_accepted_without_effect():
    m = StateMachine("x", ["A", "B"], "A", ["B"], [("A", "go", "B", None)], ignored={"B": ["go"]})
    t = Thing()
    m.fire(None, t, "go")
    assert m.fire(None, t, "go") is True
    assert t.state == "B"
    assert not m.stats.invalid


def test_multi_target_hook_chooses_the_next_state():
    m = StateMachine(
        "x", ["A", "B", "C"], "A", ["B", "C"], [("A", "go", ("B", "C"), lambda c, e, d: d)]
    )
    t = Thing()
    m.fire(None, t, "go", "C")
    assert t.state == "C"


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

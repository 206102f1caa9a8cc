"""Declarative state machines, as YARN's `StateMachineFactory`.

A `StateMachine` is an immutable table `(state, event) -> (hook, next)`,
where `next` is one state or a tuple of states (then the hook returns which,
like YARN's MultipleArcTransition). Tables are validated when they are
defined, so a broken table fails at import rather than hours into a replay:

- states and events are members of the entity's `StrEnum`s (a misspelt name
  is an AttributeError, a plain string is refused), and every event member
  has at least one transition or ignorable entry (no event nothing handles);
- the initial state must be declared;
- every state must be reachable from the initial state;
- a final state has no transitions out except declared ignorable self-loops
  (late events, e.g. a container status arriving after the app finished).

`fire` looks up the entity's current state; an event with no transition is
logged and counted and changes nothing: YARN throws
InvalidStateTransitionException and the RM logs it; we never crash.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

Hook = Callable[[Any, Any, Any], Any]


class StateMachineDefinitionError(Exception):
    """A transition table that cannot be right."""


@dataclass(frozen=True, slots=True)
class Arc:
    hook: Hook | None
    to: str | tuple[str, ...]


class StateMachine:
    """One entity kind's transition table.

    `states` and `events` are the entity's enums; `transitions` is an
    iterable of `(from_states, events, to, hook)`, where `from_states` and
    `events` may be a single member or a tuple of members;
    `to` None means each from-state loops back to itself.
    `ignored` maps states to events accepted there with no effect.
    """

    def __init__(
        self,
        name: str,
        states: type[StrEnum],
        events: type[StrEnum],
        initial: str,
        final: Iterable[str],
        transitions: Iterable[tuple[Any, Any, Any, Hook | None]],
        ignored: dict[str, Iterable[str]] | None = None,
    ) -> None:
        self.name = name
        self.states = tuple(states)
        self.events = tuple(events)
        self.initial = initial
        self.final = frozenset(final)
        self.table: dict[tuple[str, str], Arc] = {}
        for from_states, on, to, hook in transitions:
            for s in _names(from_states):
                for e in _names(on):
                    key = (s, e)
                    if key in self.table:
                        raise StateMachineDefinitionError(f"{name}: duplicate transition {key}")
                    if to is None:
                        target: str | tuple[str, ...] = s
                    else:
                        target = to if isinstance(to, str) else tuple(to)
                    self.table[key] = Arc(hook, target)
        self.ignored: dict[tuple[str, str], Arc] = {}
        for s, late in (ignored or {}).items():
            for e in _names(late):
                if (s, e) in self.table:
                    raise StateMachineDefinitionError(f"{name}: {s}/{e} both ignored and handled")
                self.ignored[(s, e)] = Arc(None, s)
        self._validate(states, events)

    def _validate(self, state_enum: type[StrEnum], event_enum: type[StrEnum]) -> None:
        states = set(self.states)
        keys = [*self.table, *self.ignored]
        for _, e in keys:
            if not isinstance(e, event_enum):
                raise StateMachineDefinitionError(
                    f"{self.name}: {e!r} is not a {event_enum.__name__}"
                )
        handled = {e for _, e in keys}
        unused = [e.value for e in event_enum if e not in handled]
        if unused:
            raise StateMachineDefinitionError(f"{self.name}: events nothing handles {unused}")
        if self.initial not in states:
            raise StateMachineDefinitionError(
                f"{self.name}: initial state {self.initial!r} unknown"
            )
        if not self.final <= states:
            raise StateMachineDefinitionError(f"{self.name}: unknown final states")
        for (s, e), arc in [*self.table.items(), *self.ignored.items()]:
            targets = (arc.to,) if isinstance(arc.to, str) else arc.to
            for t in (s, *targets):
                if not isinstance(t, state_enum):
                    raise StateMachineDefinitionError(
                        f"{self.name}: {t!r} is not a {state_enum.__name__}"
                    )
            if s in self.final and (s, e) in self.table:
                raise StateMachineDefinitionError(
                    f"{self.name}: transition out of final state {s} on {e}"
                )
            if not isinstance(arc.to, str) and arc.hook is None:
                raise StateMachineDefinitionError(
                    f"{self.name}: {s}/{e} has several targets but no hook to choose"
                )
        reached = {self.initial}
        frontier = [self.initial]
        while frontier:
            s = frontier.pop()
            for (src, _), arc in self.table.items():
                if src != s:
                    continue
                for t in (arc.to,) if isinstance(arc.to, str) else arc.to:
                    if t not in reached:
                        reached.add(t)
                        frontier.append(t)
        unreachable = [s for s in self.states if s not in reached]
        if unreachable:
            raise StateMachineDefinitionError(f"{self.name}: unreachable states {unreachable}")

    def fire(self, ctx: Any, entity: Any, event: str, data: Any = None) -> bool:
        """Apply `event` to `entity` (which has a `.state`). Returns whether a
        transition (or an ignorable self-loop) applied."""
        state = entity.state
        arc = self.table.get((state, event))
        if arc is None:
            return (state, event) in self.ignored
        chosen = arc.hook(ctx, entity, data) if arc.hook is not None else None
        if isinstance(arc.to, str):
            entity.state = arc.to
        else:
            if chosen not in arc.to:
                raise StateMachineDefinitionError(
                    f"{self.name}: hook for {state}/{event} chose {chosen!r}, not one of {arc.to}"
                )
            entity.state = chosen
        return True

    def markdown(self) -> str:
        """The table as Markdown (docs/state-machines.md is generated from this)."""
        lines = [
            f"## {self.name}",
            "",
            f"Initial: `{self.initial}`. Final: {', '.join(f'`{s}`' for s in sorted(self.final))}.",
            "",
            "| from | event | to | hook |",
            "|---|---|---|---|",
        ]
        order: dict[str, int] = {s: i for i, s in enumerate(self.states)}
        for (s, e), arc in sorted(self.table.items(), key=lambda kv: (order[kv[0][0]], kv[0][1])):
            to = arc.to if isinstance(arc.to, str) else " \\| ".join(arc.to)
            hook = arc.hook.__name__ if arc.hook else ""
            lines.append(f"| {s} | {e} | {to} | {hook} |")
        if self.ignored:
            lines += ["", "Ignored (late events, no effect):", ""]
            by_state: dict[str, list[str]] = {}
            for s, e in self.ignored:
                by_state.setdefault(s, []).append(e)
            for s in self.states:
                if s in by_state:
                    lines.append(f"- `{s}`: {', '.join(sorted(by_state[s]))}")
        lines.append("")
        return "\n".join(lines)


def _names(x: Any) -> tuple[str, ...]:
    return (x,) if isinstance(x, str) else tuple(x)

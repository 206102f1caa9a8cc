"""Declarative state machines, as YARN's `StateMachineFactory`.

A `StateMachine` is an immutable table `(state, event) -> (hook, next)`,
where `next` is one state or a tuple of states (then the hook returns which,
like YARN's MultipleArcTransition). Tables are validated when they are
defined, so a broken table fails at import rather than hours into a replay:

- the initial state must be declared;
- every state must be reachable from the initial state;
- a final state has no transitions out except declared ignorable self-loops
  (late events, e.g. a container status arriving after the app finished).

`fire` looks up the entity's current state; an event with no transition is
logged and counted and changes nothing: YARN throws
InvalidStateTransitionException and the RM logs it; we never crash.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

Hook = Callable[[Any, Any, Any], Any]


class StateMachineDefinitionError(Exception):
    """A transition table that cannot be right."""


@dataclass(frozen=True, slots=True)
class Arc:
    hook: Hook | None
    to: str | tuple[str, ...]


@dataclass
class StateMachineStats:
    """Per-machine counters: transitions taken and invalid events refused."""

    transitions: int = 0
    invalid: Counter = field(default_factory=Counter)


class StateMachine:
    """One entity kind's transition table.

    `transitions` is an iterable of `(from_states, events, to, hook)`, where
    `from_states` and `events` may be a single name or a tuple of names;
    `to` None means each from-state loops back to itself.
    `ignored` maps states to events accepted there with no effect.
    """

    def __init__(
        self,
        name: str,
        states: Iterable[str],
        initial: str,
        final: Iterable[str],
        transitions: Iterable[tuple[Any, Any, Any, Hook | None]],
        ignored: dict[str, Iterable[str]] | None = None,
    ) -> None:
        self.name = name
        self.states = tuple(states)
        self.initial = initial
        self.final = frozenset(final)
        self.table: dict[tuple[str, str], Arc] = {}
        self.stats = StateMachineStats()
        self.on_invalid: Callable[[str, Any, str, str], None] | None = None
        for from_states, events, to, hook in transitions:
            for s in _names(from_states):
                for e in _names(events):
                    key = (s, e)
                    if key in self.table:
                        raise StateMachineDefinitionError(f"{name}: duplicate transition {key}")
                    if to is None:
                        target: str | tuple[str, ...] = s
                    else:
                        target = to if isinstance(to, str) else tuple(to)
                    self.table[key] = Arc(hook, target)
        self.ignored: dict[tuple[str, str], Arc] = {}
        for s, events in (ignored or {}).items():
            for e in _names(events):
                if (s, e) in self.table:
                    raise StateMachineDefinitionError(f"{name}: {s}/{e} both ignored and handled")
                self.ignored[(s, e)] = Arc(None, s)
        self._validate()
        self.events = tuple(sorted({e for _, e in self.table} | {e for _, e in self.ignored}))

    def _validate(self) -> None:
        states = set(self.states)
        if self.initial not in states:
            raise StateMachineDefinitionError(
                f"{self.name}: initial state {self.initial!r} unknown"
            )
        if not self.final <= states:
            raise StateMachineDefinitionError(f"{self.name}: unknown final states")
        for (s, e), arc in [*self.table.items(), *self.ignored.items()]:
            targets = (arc.to,) if isinstance(arc.to, str) else arc.to
            for t in (s, *targets):
                if t not in states:
                    raise StateMachineDefinitionError(f"{self.name}: {s}/{e} names unknown {t!r}")
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
            if (state, event) in self.ignored:
                return True
            self.stats.invalid[(state, event)] += 1
            if self.on_invalid is not None:
                self.on_invalid(self.name, entity, state, event)
            return False
        chosen = arc.hook(ctx, entity, data) if arc.hook is not None else None
        if isinstance(arc.to, str):
            entity.state = arc.to
        else:
            if chosen not in arc.to:
                raise StateMachineDefinitionError(
                    f"{self.name}: hook for {state}/{event} chose {chosen!r}, not one of {arc.to}"
                )
            entity.state = chosen
        self.stats.transitions += 1
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
        order = {s: i for i, s in enumerate(self.states)}
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

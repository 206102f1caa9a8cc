"""Metric invariants, as Hadoop's `MetricsInvariantChecker` checks them.

An invariants file holds one boolean expression per line over metric names,
written in the JavaScript subset Hadoop's files use:

    AppsSubmitted >= 0
    MemNonHeapMaxM >= 0 || MemNonHeapMaxM == -1
    AllocatedMB + AvailableMB == 40960 && !(PendingContainers < 0)

Supported: metric names, integer and decimal numbers, `true`/`false`,
parentheses, `+ - * / %`, comparisons `< <= > >= == != === !==`, and
`&& || !`. Blank lines and lines starting with `#` or `//` are skipped (Hadoop
would fail on them; a comment is more useful than an error). Comparisons
cannot be chained (`0 <= x <= 1` means something else in JavaScript). A
division by zero makes the invariant not hold.

Expressions are parsed once, checked against the metric names emu binds
(`BINDINGS` below: Hadoop's root QueueMetrics and JvmMetrics names), and
evaluated with Python's own evaluator over a whitelisted syntax tree, never
with `eval` of user text. A line that does not parse, or names a metric emu
does not bind, is an `InputError` naming the file and line.

Hadoop's SLS tests check an "ongoing" file at every scheduling-monitor round
and an "exit" file once after the run; `emu sls --invariants` and
`--exit-invariants` do the same, every simulated second and at the end.
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from emu.errors import InputError

# Root QueueMetrics (YARN's QueueMetrics record for queue "root").
QUEUE_METRICS = (
    "AppsSubmitted",
    "AppsRunning",
    "AppsPending",
    "AppsCompleted",
    "AppsKilled",
    "AppsFailed",
    "AllocatedMB",
    "AllocatedVCores",
    "AllocatedContainers",
    "AggregateContainersAllocated",
    "AggregateNodeLocalContainersAllocated",
    "AggregateRackLocalContainersAllocated",
    "AggregateOffSwitchContainersAllocated",
    "AggregateContainersReleased",
    "AggregateContainersPreempted",
    "AvailableMB",
    "AvailableVCores",
    "PendingMB",
    "PendingVCores",
    "PendingContainers",
    "ReservedMB",
    "ReservedVCores",
    "ReservedContainers",
    "ActiveUsers",
    "ActiveApplications",
    "AppAttemptFirstContainerAllocationDelayNumOps",
    "AppAttemptFirstContainerAllocationDelayAvgTime",
    "running_0",
    "running_60",
    "running_300",
    "running_1440",
)
# JvmMetrics, bound to this process's figures (see emu.metrics.sls).
JVM_METRICS = (
    "MemNonHeapUsedM",
    "MemNonHeapCommittedM",
    "MemNonHeapMaxM",
    "MemHeapUsedM",
    "MemHeapCommittedM",
    "MemHeapMaxM",
    "MemMaxM",
    "GcCountPS_Scavenge",
    "GcTimeMillisPS_Scavenge",
    "GcCountPS_MarkSweep",
    "GcTimeMillisPS_MarkSweep",
    "GcCount",
    "GcTimeMillis",
    "ThreadsNew",
    "ThreadsRunnable",
    "ThreadsBlocked",
    "ThreadsWaiting",
    "ThreadsTimedWaiting",
    "ThreadsTerminated",
    "LogFatal",
    "LogError",
    "LogWarn",
    "LogInfo",
)
BINDINGS = frozenset(QUEUE_METRICS + JVM_METRICS)

_TOKEN = re.compile(
    r"\s*(?:(?P<num>\d+(?:\.\d*)?|\.\d+)"
    r"|(?P<name>[A-Za-z_$][A-Za-z0-9_$]*)"
    r"|(?P<op>===|!==|==|!=|<=|>=|&&|\|\||[-+*/%<>!()]))"
)
_OPS = {"===": "==", "!==": "!=", "&&": " and ", "||": " or ", "!": " not "}
_KEYWORDS = {"true": "True", "false": "False"}
_ALLOWED = (
    ast.Expression,
    ast.BoolOp,
    ast.And,
    ast.Or,
    ast.UnaryOp,
    ast.Not,
    ast.USub,
    ast.UAdd,
    ast.BinOp,
    ast.Add,
    ast.Sub,
    ast.Mult,
    ast.Div,
    ast.Mod,
    ast.Compare,
    ast.Lt,
    ast.LtE,
    ast.Gt,
    ast.GtE,
    ast.Eq,
    ast.NotEq,
    ast.Name,
    ast.Load,
    ast.Constant,
)


@dataclass(frozen=True)
class Invariant:
    """One expression: its text, where it came from, and its compiled form."""

    text: str
    source: str
    names: tuple[str, ...]
    code: Any

    def holds(self, bindings: dict[str, float]) -> bool:
        try:
            return bool(eval(self.code, {"__builtins__": {}}, bindings))
        except ZeroDivisionError:
            return False  # JavaScript would compute NaN/Infinity; emu calls it broken


class InvariantBroken(Exception):
    """An invariant did not hold: which, where from, when, with what values."""

    def __init__(self, invariant: Invariant, time_ms: int, values: dict[str, float], when: str):
        self.invariant = invariant
        self.time_ms = time_ms
        self.values = values
        self.when = when
        shown = ", ".join(f"{k}={_fmt(v)}" for k, v in sorted(values.items()))
        super().__init__(
            f'invariant "{invariant.text}" ({invariant.source}) is NOT holding {when} '
            f"at simulated time {time_ms / 1000:.3f} s, with {shown}"
        )


def _fmt(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:g}"


def _translate(text: str) -> str:
    """JavaScript-subset text -> Python expression text; ValueError(reason)
    if the text leaves the subset."""
    out = []
    pos = 0
    text = text.rstrip().rstrip(";")
    negating = False
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            if text[pos:].strip() == "":
                break
            raise ValueError(f"unexpected {text[pos:].strip()[:1]!r}")
        pos = m.end()
        op = m.group("op")
        if negating and op not in ("(", "!"):
            # JavaScript's `!` binds tighter than a comparison, Python's
            # `not` looser: only `!(...)` means the same in both.
            raise ValueError("negate a parenthesized expression: !(...)")
        negating = op == "!"
        if m.group("num") is not None:
            out.append(m.group("num"))
        elif m.group("name") is not None:
            name = m.group("name")
            out.append(_KEYWORDS.get(name, name))
        else:
            out.append(_OPS.get(op, op))
        out.append(" ")
    return "".join(out)


def compile_invariant(text: str, path: str = "invariant", line: int | None = None) -> Invariant:
    """Parse one expression; raises InputError(path, line) if it is not a
    valid expression over bound metric names."""
    source = path if line is None else f"{path}:{line}"

    def bad(message: str) -> InputError:
        return InputError(path, line, message)

    try:
        py = _translate(text)
    except ValueError as e:
        raise bad(f"cannot parse invariant {text!r}: {e}") from None
    try:
        tree = ast.parse(py.strip(), mode="eval")
    except SyntaxError:
        raise bad(f"cannot parse invariant {text!r}") from None
    names = []
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED):
            raise bad(f"unsupported syntax in invariant {text!r}")
        if isinstance(node, ast.Compare) and len(node.ops) > 1:
            raise bad(f"chained comparison in invariant {text!r}: use && between comparisons")
        if isinstance(node, ast.Constant) and not isinstance(node.value, int | float | bool):
            raise bad(f"unsupported value in invariant {text!r}")
        if isinstance(node, ast.Name):
            if node.id not in BINDINGS:
                raise bad(f"unknown metric {node.id!r} in invariant {text!r}")
            names.append(node.id)
    code = compile(tree, source, "eval")
    return Invariant(text.strip(), source, tuple(sorted(set(names))), code)


def load(path: str | os.PathLike[str]) -> list[Invariant]:
    """The invariants of a file, in file order."""
    p = Path(path)
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise InputError(str(p), None, "no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(str(p), None, f"cannot read: {e}") from None
    out = []
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", "//")):
            continue
        out.append(compile_invariant(stripped, str(p), number))
    return out


def check(invariants: list[Invariant], bindings: dict[str, float], time_ms: int, when: str) -> None:
    """Raise InvariantBroken for the first invariant (in file order) that
    does not hold."""
    for inv in invariants:
        if not inv.holds(bindings):
            raise InvariantBroken(inv, time_ms, {n: bindings[n] for n in inv.names}, when)

"""The fair package's layout: its modules import without a cycle, every
change reaches the kept orders and the quiet state through one seam
(orderings.KeptState, each of its methods called from one place), and the
quiet-node state (orderings.QuietNodes) ends with each change that seam is
told of and on a new decision."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import Any

from emu.rm.settings import SHORTCUTS
from emu.testing.fair import GB, FSHarness

FAIR = Path(__file__).resolve().parents[2] / "emu" / "rm" / "scheduler" / "fair"
"""The sources (a compiled module's `__file__` may name the shared library)."""
PACKAGE = "emu.rm.scheduler.fair"


def _runtime_imports(path: Path) -> set[str]:
    """The fair modules `path` imports when it is imported (its top-level
    imports, not those under `if TYPE_CHECKING:` or inside functions)."""
    found: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(PACKAGE):
            found.add(node.module)
            if node.module == PACKAGE:  # `from emu.rm.scheduler.fair import policies`
                found |= {f"{PACKAGE}.{a.name}" for a in node.names}
    return found


def test_the_fair_modules_import_one_another_without_a_cycle() -> None:
    graph = {
        PACKAGE if p.stem == "__init__" else f"{PACKAGE}.{p.stem}": _runtime_imports(p)
        for p in FAIR.glob("*.py")
    }
    assert graph[PACKAGE] == set(), "the package imports its scheduler on first use only"

    def reach(start: str, at: str, seen: set[str]) -> None:
        for dep in graph.get(at, set()):
            assert dep != start, f"{start} imports itself through {at}"
            if dep not in seen:
                seen.add(dep)
                reach(start, dep, seen)

    for module in graph:
        reach(module, module, set())


def test_the_allocation_file_reader_imports_without_the_scheduler() -> None:
    code = (
        "import sys, emu.rm.scheduler.fair.allocation_file as a, emu.rm.scheduler.fair as f\n"
        "assert 'emu.rm.scheduler.fair.scheduler' not in sys.modules\n"
        "assert f.FairScheduler.__name__ == 'FairScheduler'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


KEPT_INTERNALS = {
    "invalidate",
    "app_changed",
    "asks_changed",
    "unsettle",
    "unsilence",
    "unsilence_all",
    "refresh_silent_bounds",
    "decision_recorded",
}
"""What changes the kept orders and the quiet state; called outside
orderings.py only through KeptState."""


def _calls(path: Path) -> list[tuple[bool, str]]:
    """The methods `path` calls (`x.name(...)`): whether on the seam
    (`x.kept.name(...)`), and the name."""
    found: list[tuple[bool, str]] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            on = node.func.value
            found.append((isinstance(on, ast.Attribute) and on.attr == "kept", node.func.attr))
    return found


def test_changes_reach_the_kept_state_through_one_seam_one_call_each() -> None:
    seam = [
        node.name
        for cls in ast.parse((FAIR / "orderings.py").read_text()).body
        if isinstance(cls, ast.ClassDef) and cls.name == "KeptState"
        for node in cls.body
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_")
    ]
    calls: dict[str, int] = dict.fromkeys(seam, 0)
    rm = FAIR.parents[1]
    for path in rm.rglob("*.py"):
        if path.name == "orderings.py":
            continue
        for on_seam, name in _calls(path):
            if on_seam:
                calls[name] += 1
            elif path.parent == FAIR:
                assert name not in KEPT_INTERNALS, f"{path.name} calls {name}"
    # `decision_recorded` is handed over as Activities' callback, not called
    assert calls.pop("decision_recorded") == 0
    assert calls == dict.fromkeys(calls, 1)


async def test_each_change_that_may_alter_a_pass_ends_the_quiet_state(
    autojump_clock: Any,
) -> None:
    h = _quiet_cluster()
    fs = h.sched
    app = next(iter(fs.fsapps.values()))
    changes = [
        lambda: fs.kept.app_changed(app),
        lambda: fs.kept.container_allocated(app),
        lambda: fs.kept.container_released(app),
        fs.kept.node_freed,
        lambda: fs.kept.pending_changed(app),
        lambda: fs.kept.asks_updated(app, grew=True),
        lambda: fs.kept.reserved(app),
        lambda: fs.kept.unreserved(app),
        fs.kept.cluster_changed,
        fs.kept.config_changed,
        fs.kept.shares_updated,
    ]
    for change in changes:
        h.heartbeat("n0", times=2)  # a pass that changes nothing: quiet noted
        assert fs.quiet.skips(fs, "n1")
        change()
        assert not fs.quiet.skips(fs, "n1")


def _quiet_cluster(on: bool = True) -> FSHarness:
    """Two full nodes and an app asking for more than fits but not enough to
    reserve (threshold 3 GB): its passes place and reserve nothing."""
    props = {
        SHORTCUTS: "true" if on else "false",
        "yarn.scheduler.reservation-threshold.increment-multiple": 3,
    }
    h = FSHarness(props=props)
    h.add_node("n0", 2 * GB, vcores=2)
    h.add_node("n1", 2 * GB, vcores=2)
    h.request(GB, "root.default", num=4)
    h.heartbeat("n0", times=2)
    h.heartbeat("n1", times=2)
    h.request(2 * GB, "root.default", num=1)
    h.update()
    return h


async def test_quiet_state_ends_on_invalidate_and_on_a_new_decision(autojump_clock: Any) -> None:
    h = _quiet_cluster()
    fs = h.sched
    h.heartbeat("n0", times=2)  # a pass that changes nothing: quiet noted
    assert fs.quiet.skips(fs, "n1")
    fs.quiet.invalidate()
    assert not fs.quiet.skips(fs, "n1")
    h.heartbeat("n0", times=2)
    assert fs.quiet.skips(fs, "n1")
    fs.activities.record("app_other", "queue at max capacity", "n0")
    assert not fs.quiet.skips(fs, "n1")


async def test_no_quiet_state_with_the_shortcuts_off(autojump_clock: Any) -> None:
    h = _quiet_cluster(on=False)
    h.heartbeat("n0", times=3)
    assert not h.sched.shortcuts
    assert not h.sched.skip_quiet_node_update("n1")
    assert h.queue("root.default").order.basis is None  # no kept order either


def _new_smaller_ask_places(on: bool) -> int:
    """Two nodes with 1 GB free each; an app asks for 2 GB more (fits
    nowhere, too little to reserve), then also for 1 GB at another priority
    while the 2 GB asks are still out: the containers n1's next pass places."""
    h = FSHarness(
        props={
            SHORTCUTS: "true" if on else "false",
            "yarn.scheduler.reservation-threshold.increment-multiple": 3,
        }
    )
    h.add_node("n0", 3 * GB, vcores=4)
    h.add_node("n1", 3 * GB, vcores=4)
    app = h.request(2 * GB, "root.default", num=2)
    h.heartbeat("n0", times=2)
    h.heartbeat("n1", times=2)
    h.ask(app, 2 * GB, 3)
    h.update()
    h.heartbeat("n0", times=2)  # a pass that changes nothing: quiet noted
    h.ask(app, 1 * GB, 1, priority=0)
    before = h.live(app)
    h.sched.on_NODE_UPDATE("n1", ([], []))
    h.drain()
    return h.live(app) - before


async def test_an_ask_for_more_while_asks_are_out_ends_the_quiet_state(
    autojump_clock: Any,
) -> None:
    """A node update the shortcut skipped would have placed the new ask."""
    assert _new_smaller_ask_places(on=False) == 1
    assert _new_smaller_ask_places(on=True) == 1


def test_asks_grow_only_when_they_ask_for_more() -> None:
    from emu.resources import Resource
    from emu.rm.scheduler.app_scheduling_info import Ask
    from emu.rm.scheduler.fair.orderings import asks_grow

    gb = Resource(1024, 1)
    out = {1: {"*": Ask(1, "*", gb, 3, True), "node1": Ask(1, "node1", gb, 2, False)}}
    assert not asks_grow(out, [Ask(1, "*", gb, 2, True)])  # fewer of the same
    assert not asks_grow(out, [Ask(1, "*", gb, 3, True)])
    assert asks_grow(out, [Ask(1, "*", gb, 4, True)])  # more
    assert asks_grow(out, [Ask(1, "node2", gb, 1, False)])  # another place
    assert asks_grow(out, [Ask(0, "*", gb, 1, True)])  # another priority
    assert asks_grow(out, [Ask(1, "*", Resource(512, 1), 1, True)])  # another size
    assert asks_grow(out, [Ask(1, "node1", gb, 1, True)])  # locality relaxed

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

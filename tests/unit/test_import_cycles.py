"""No import cycles at load time inside `emu.rm`.

The graph holds what a module runs when it is loaded: its module-level
`import` and `from ... import` statements (also inside module-level `if`,
`try` and `with` blocks), but not those under `if TYPE_CHECKING:` nor those
inside functions or classes, which run later or never. Importing `a.b.c`
runs the packages `a` and `a.b` first, except those the importing module is
inside (they have started already). `from P import n` loads the module
`P.n` when there is one, and otherwise reads `n` from `P`, which then must
have finished loading: an edge to `P`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import emu

ROOT = Path(emu.__file__).resolve().parent.parent
PACKAGE = "emu.rm"


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in sorted(ROOT.joinpath(*PACKAGE.split(".")).rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def _load_time(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements among `body` that run when the module loads."""
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If):
            if not _is_type_checking(node.test):
                yield from _load_time(node.body)
            yield from _load_time(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody):
                yield from _load_time(block)
            for handler in node.handlers:
                yield from _load_time(handler.body)
        elif isinstance(node, ast.With):
            yield from _load_time(node.body)


def _resolve(module: str, path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _runs(importer: str, target: str, modules: dict[str, Path]) -> set[str]:
    """The modules of `emu.rm` that importing `target` from `importer` loads:
    `target` and the packages above it that `importer` is not inside."""
    parts = target.split(".")
    prefixes = {".".join(parts[:i]) for i in range(1, len(parts) + 1)}
    inside = {p for p in prefixes if importer == p or importer.startswith(p + ".")}
    return {p for p in prefixes - inside if p in modules}


def import_graph() -> dict[str, set[str]]:
    """Each module of `emu.rm` -> the modules of `emu.rm` it imports at load time."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        targets: set[str] = set()
        for node in _load_time(ast.parse(path.read_text(), str(path)).body):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    targets |= _runs(module, alias.name, modules)
                continue
            source = _resolve(module, path, node)
            targets |= _runs(module, source, modules)
            for alias in node.names:
                sub = f"{source}.{alias.name}"
                if sub in modules:
                    targets |= _runs(module, sub, modules)
                elif source in modules:
                    targets.add(source)
        graph[module] = targets - {module}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def one_cycle(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """A path through `component` that comes back to its first module."""
    members = set(component)
    start = component[0]
    parent: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt: list[str] = []
        for v in frontier:
            for w in sorted(graph[v] & members):
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(parent[path[-1]])
                    return [start, *reversed(path[:-1]), start]
                if w not in parent:
                    parent[w] = v
                    nxt.append(w)
        frontier = nxt
    return component


def test_no_runtime_import_cycles_in_rm() -> None:
    graph = import_graph()
    found = cycles(graph)
    described = [" -> ".join(one_cycle(graph, c)) for c in found]
    assert not found, "import cycles at load time:\n" + "\n".join(described)


def test_the_graph_sees_imports() -> None:
    """The parser finds load-time imports and leaves out TYPE_CHECKING ones."""
    graph = import_graph()
    assert "emu.rm.statemachine" in graph["emu.rm.app"]
    assert "emu.rm.context" not in graph["emu.rm.app"]
    assert "emu.rm.scheduler.capacity.scheduler" in graph["emu.rm.scheduler.capacity"]
    # A sibling module imported through its package does not wait for the package.
    assert "emu.rm.scheduler.fair.shares" in graph["emu.rm.scheduler.fair.policies"]
    assert "emu.rm.scheduler.fair" not in graph["emu.rm.scheduler.fair.policies"]
    # A module of another package runs that package first.
    assert "emu.rm.node" in graph["emu.rm.services.admin"]


def test_a_cycle_is_named() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    [component] = cycles(graph)
    assert one_cycle(graph, component) == ["a", "b", "c", "a"]


def test_entities_stand_below_the_context() -> None:
    """The entity enums import nothing of `emu.rm`; no entity loads the context."""
    graph = import_graph()
    assert graph["emu.rm.enums"] == set()
    assert graph["emu.rm.entity_context"] == set()
    for entity in ("app", "attempt", "container", "node"):
        assert "emu.rm.context" not in graph[f"emu.rm.{entity}"]

"""The package's modules import only downward: no import circles inside ``rook_env``.

The import graph is read from the source with :mod:`ast` (module-level imports and the lazy ones inside functions
alike: a lazy import that closes a circle still ties the two modules together). A package's ``__init__`` importing
its own submodules (re-exports) is not a circle; any other cycle fails with the modules that form it.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "rook_env"


def _modules() -> dict[str, Path]:
    mods = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = path
    return mods


def _targets(mods: dict[str, Path], module: str, is_package: bool, node: ast.Import | ast.ImportFrom) -> set[str]:
    """The modules of ``rook_env`` that one import statement binds (the longest known prefix of each name)."""
    if isinstance(node, ast.ImportFrom):
        if node.level:
            base = module.split(".") if is_package else module.split(".")[:-1]
            base = base[: len(base) - node.level + 1]
            name = ".".join(base + ([node.module] if node.module else []))
        else:
            name = node.module or ""
        names = [name] + [f"{name}.{alias.name}" for alias in node.names]
    else:
        names = [alias.name for alias in node.names]
    found = set()
    for name in names:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        if name:
            found.add(name)
    return found


def import_graph() -> dict[str, set[str]]:
    mods = _modules()
    graph: dict[str, set[str]] = defaultdict(set)
    for module, path in mods.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for target in _targets(mods, module, is_package, node):
                    if target != module and not target.startswith(module + "."):  # re-exports of a package
                        graph[module].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    nodes = set(graph) | {t for ts in graph.values() for t in ts}
    for start in sorted(nodes):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_cycle_finder_finds_a_planted_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_graph_reads_relative_and_lazy_imports():
    graph = import_graph()
    assert "rook_env.agents.heuristic.agent" in graph["rook_env.agents.search.agent"]  # relative, two levels up
    assert "rook_env.agents.learned" in graph["rook_env.agents.registry"]  # lazy: imported inside a function
    assert "rook_env.agents" not in graph  # a package's re-exports of its own submodules are no edges


def test_no_import_circles_in_rook_env():
    assert cycles(import_graph()) == []

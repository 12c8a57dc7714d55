"""The package's import graph has no circle, and no import sits inside a function: an optional dependency comes
through :mod:`rook_env.core.optional` (``require``, ``load``), everything else at the top of its module.

The graph is read from the source (``ast``), not by importing: a module's edges are the ``rook_env`` modules its
module-level statements import (``import rook_env.a.b``, ``from rook_env.a import b`` where ``b`` is a submodule,
relative imports alike; an import under ``if TYPE_CHECKING:`` is left out, it never runs). ``python
tests/test_import_graph.py [root]`` prints the circles and the imports inside functions of a checkout.
"""

from __future__ import annotations

import ast
import os
import sys
from collections import Counter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "rook_env"


def modules(root: str = ROOT) -> dict[str, str]:
    """Dotted module name -> file path, for every ``.py`` file of the package."""
    out = {}
    base = os.path.join(root, PACKAGE)
    for folder, dirs, files in os.walk(base):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "__")))
        for f in sorted(files):
            if f.endswith(".py"):
                rel = os.path.relpath(os.path.join(folder, f), root)[:-3].replace(os.sep, ".")
                out[rel[: -len(".__init__")] if rel.endswith(".__init__") else rel] = os.path.join(folder, f)
    return out


def _is_package(name: str, mods: dict[str, str]) -> bool:
    return mods[name].endswith("__init__.py")


def _absolute(node: ast.ImportFrom, name: str, mods: dict[str, str]) -> str:
    """The module a ``from ... import`` names, made absolute (``from ..x import y`` in ``a.b.c``: ``a.x``)."""
    if not node.level:
        return node.module or ""
    parts = name.split(".")
    if not _is_package(name, mods):
        parts = parts[:-1]
    parts = parts[: len(parts) - (node.level - 1)]
    return ".".join(parts + ([node.module] if node.module else []))


def _targets(node: ast.Import | ast.ImportFrom, name: str, mods: dict[str, str]) -> list[str]:
    """The package's modules one import statement imports (itself, not the packages above it)."""
    found = []
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name in mods:
                found.append(alias.name)
        return found
    module = _absolute(node, name, mods)
    for alias in node.names:
        sub = f"{module}.{alias.name}"
        if sub in mods:
            found.append(sub)  # "from pkg import submodule"
        elif module in mods:
            found.append(module)
    return found


def _type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def _walk(body: list[ast.stmt], inside: bool):
    """(import node, inside a function or class) for every import under ``body``, TYPE_CHECKING blocks left out."""
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node, inside
        elif _type_checking(node):
            yield from _walk(node.orelse, inside)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield from _walk(node.body, True)
        else:
            for field in ("body", "orelse", "finalbody", "handlers"):
                yield from _walk(getattr(node, field, []) or [], inside)


def imports(root: str = ROOT) -> tuple[dict[str, set[str]], list[tuple[str, int, str, list[str]]]]:
    """(module-level import graph of the package, every import inside a function or class: (module, line, what it
    names, the package's modules it imports))."""
    mods = modules(root)
    graph: dict[str, set[str]] = {m: set() for m in mods}
    local: list[tuple[str, int, str, list[str]]] = []
    for name, path in mods.items():
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        for node, inside in _walk(tree.body, False):
            if inside:
                what = node.names[0].name if isinstance(node, ast.Import) else (
                    "." * node.level + (node.module or ""))
                local.append((name, node.lineno, what, _targets(node, name, mods)))
            else:
                graph[name].update(t for t in _targets(node, name, mods) if t != name)
    return graph, local


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (each holds an import circle), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:  # Tarjan's algorithm, iterative over the edges of each node
        work = [(v, iter(sorted(graph[v])))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, edges = work[-1]
            for w in edges:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on:
                    low[node] = min(low[node], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == node:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def test_the_module_level_import_graph_has_no_circle():
    graph, _ = imports()
    assert len(graph) > 50
    assert circles(graph) == []


def test_no_import_inside_a_function():
    _, local = imports()
    assert [f"{m}:{line} imports {what}" for m, line, what, _ in local] == []


def test_the_reader_finds_an_import_inside_a_function(tmp_path):
    pkg = tmp_path / PACKAGE
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("import os\n\ndef f():\n    from . import b\n    return b\n")
    (pkg / "b.py").write_text("from . import a\n")
    graph, local = imports(str(tmp_path))
    assert graph["rook_env.b"] == {"rook_env.a"} and graph["rook_env.a"] == set()
    assert local == [("rook_env.a", 4, ".", ["rook_env.b"])]


def test_the_graph_reader_finds_a_circle_where_there_is_one():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert circles(graph) == [["a", "b", "c"]]


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "-v"]
    root = args[0] if args else ROOT
    graph, local = imports(root)
    found = circles(graph)
    print(f"{len(graph)} modules, {sum(map(len, graph.values()))} module-level edges, {len(found)} circle(s)")
    for comp in found:
        print("  circle:", " ".join(comp))
    full = {m: set(e) for m, e in graph.items()}
    for m, _, _, targets in local:
        full[m].update(t for t in targets if t != m)
    found = circles(full)
    print(f"with the imports inside functions too: {len(found)} circle(s)")
    for comp in found:
        print(f"  circle of {len(comp)}:", " ".join(comp))
    print(f"{len(local)} imports inside functions or classes; by module:")
    for m, n in sorted(Counter(m for m, _, _, _ in local).items()):
        print(f"  {m}: {n}" + ("" if "-v" not in sys.argv else "  " + ", ".join(
            f"{line}:{what}" for mm, line, what, _ in local if mm == m)))

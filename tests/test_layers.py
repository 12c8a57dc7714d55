"""The package's layers: the core and the registry name nothing above them, and only a game's own package
(and the registry) branches on that game's name."""

from __future__ import annotations

import ast
import pathlib
import re

import rook_env
from rook_env.games import game_names

PACKAGE = pathlib.Path(rook_env.__file__).parent


def _modules(folder: pathlib.Path) -> list[tuple[str, ast.Module]]:
    return [(str(p.relative_to(PACKAGE.parent)), ast.parse(p.read_text())) for p in sorted(folder.rglob("*.py"))]


def _docstrings(tree: ast.Module) -> set[int]:
    """ids of the docstring nodes of a module, its classes and functions."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def test_the_core_imports_and_names_nothing_above_it():
    # rook_env.core (the rules core, the AEC base, the batched-engine base, the drawing, the registry) may be
    # imported by anything: it imports only itself and libraries, and no string in it names a module above it.
    above = re.compile(r"\brook_env\.(?!core\b)\w+")
    found = []
    for name, tree in _modules(PACKAGE / "core"):
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                if node.level > 1 or (node.level == 0 and (node.module or "").startswith("rook_env")
                                      and not node.module.startswith("rook_env.core")):
                    found.append(f"{name}:{node.lineno}: from {'.' * node.level}{node.module} import ...")
            elif isinstance(node, ast.Import):
                found += [f"{name}:{node.lineno}: import {a.name}" for a in node.names
                          if a.name.startswith("rook_env") and not a.name.startswith("rook_env.core")]
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
                if above.search(node.value):
                    found.append(f"{name}:{node.lineno}: string {node.value[:60]!r}")
    assert not found, "\n".join(found)


def test_the_core_names_no_game():
    names = set(game_names())
    found = [f"{name}:{node.lineno}: {node.value!r}" for name, tree in _modules(PACKAGE / "core")
             for node in ast.walk(tree) if isinstance(node, ast.Constant) and node.value in names]
    assert not found, "\n".join(found)


def test_only_a_games_own_package_branches_on_its_name():
    # A comparison with a game's name outside rook_env/games/<game>/ is a second registry in disguise: the facts a
    # branch would pick belong in the game's GameSpec (rook_env.core.registry), where every caller finds them.
    names = set(game_names())
    found = []
    for name, tree in _modules(PACKAGE):
        if name.startswith("rook_env/games/"):
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Compare):
                continue
            operands = [node.left, *node.comparators]
            operands += [e for c in node.comparators if isinstance(c, (ast.Tuple, ast.List, ast.Set)) for e in c.elts]
            if any(isinstance(o, ast.Constant) and o.value in names for o in operands):
                found.append(f"{name}:{node.lineno}: {ast.unparse(node)}")
    assert not found, "branches on a game's name:\n" + "\n".join(found)


def test_every_game_lives_in_its_own_package():
    for name in game_names():
        spec = rook_env.games.get_game(name)
        home = f"rook_env.games.{name}"
        for part in ("config", "state", "raw_env", "checked_env", "layout", "obs_layout", "vector"):
            assert spec.load(part).__module__.startswith(home), (name, part)
        assert type(spec.load("render_scene")).__module__.startswith(home)
        for part in ("play", "match", "train_match"):
            assert spec.extra[part].startswith(home + "."), (name, part)

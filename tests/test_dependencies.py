"""The layering the project promises: a pure rules core, an environment without torch."""

import ast
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
PURE = ["games/partnership/rules.py", "games/partnership/cards.py", "games/partnership/config.py",
        "games/call_partner/rules.py", "games/call_partner/layout.py", "games/call_partner/config.py",
        "core/rules.py", "core/flags.py", "core/deck.py"]
STDLIB_OK = {"__future__", "random", "typing", "dataclasses", "functools", "operator"}


def test_rules_core_imports_only_the_standard_library():
    for name in PURE:
        tree = ast.parse((ROOT / "rook_env" / name).read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                mods = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:  # relative: must stay inside the pure core
                    package = pathlib.PurePosixPath(name).parents[node.level - 1]
                    target = str(package / (node.module.replace(".", "/") + ".py"))
                    assert target in PURE, f"{name} imports {node.module}, outside the pure core"
                    continue
                if node.module.startswith("rook_env."):  # absolute: must name a module of the pure core
                    target = node.module.removeprefix("rook_env.").replace(".", "/") + ".py"
                    assert target in PURE, f"{name} imports {node.module}, outside the pure core"
                    continue
                mods = [node.module.split(".")[0]]
            else:
                continue
            for mod in mods:
                assert mod in STDLIB_OK, f"{name} imports {mod}: the rules core must not need numpy/gymnasium"


def test_environment_imports_without_torch():
    code = "import sys, rook_env; e = rook_env.env(); e.reset(seed=0); assert 'torch' not in sys.modules, 'torch'"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def _import_graph() -> dict[str, set[str]]:
    """rook_env's modules and the package modules each one imports, anywhere in it (a module loaded on first use
    through ``rook_env.core.optional.load("rook_env.module:attribute", ...)`` included: a lazy import is still a
    dependency)."""
    files = {}
    for f in (ROOT / "rook_env").rglob("*.py"):
        parts = f.relative_to(ROOT).with_suffix("").parts
        files[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = f
    graph: dict[str, set[str]] = {}
    for name, f in files.items():
        package = name if f.name == "__init__.py" else name.rpartition(".")[0]
        deps: set[str] = set()
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(up + ([node.module] if node.module else []))
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif (isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "load"
                  and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                targets = [node.args[0].value.partition(":")[0]]
            else:
                continue
            # a module importing its own package (its __init__) is the package's business, not a layer
            deps |= {t for t in targets if t in files and t != name and not name.startswith(t + ".")}
        graph[name] = deps
    return graph


def _reaches(graph: dict[str, set[str]], start: str, goal: str) -> bool:
    seen, todo = set(), list(graph[start])
    while todo:
        m = todo.pop()
        if m == goal:
            return True
        if m not in seen:
            seen.add(m)
            todo += graph[m]
    return False


# The drawing, the table views, replays, evaluation and the command lines import only downward.
LAYERED = ("rook_env.core.drawing", "rook_env.core.render", "rook_env.games.call_partner.render", "rook_env.evaluation.replay",
           "rook_env.games", "rook_env.cli", "rook_env.evaluation")


def test_views_evaluation_and_command_lines_import_only_downward():
    graph = _import_graph()
    mine = [m for m in graph if m.startswith(LAYERED)]
    assert "rook_env.cli.play" in mine and "rook_env.games.partnership.match" in mine
    circles = [m for m in mine if _reaches(graph, m, m)]
    assert not circles, f"import circles through {circles}"
    # The drawing module knows the deck, not games; the registry imports nothing of the package.
    assert graph["rook_env.core.drawing"] <= {"rook_env.core.deck", "rook_env.core.optional"}
    assert graph["rook_env.core.registry"] == set()


def test_the_import_graph_sees_lazy_imports():
    graph = _import_graph()
    # rook-serve loads the app (and starlette) only when it serves (core.optional.load): still an edge of the graph
    assert "rook_env.serve.app" in graph["rook_env.serve.cli"]
    assert "rook_env.cli.common" in graph["rook_env.cli.play"]
    # the agent families register into make_agent's table: the registry imports none of them
    assert "rook_env.agents.registry" in graph["rook_env.agents.search.spec"]
    assert not any(m.startswith("rook_env.agents.search") for m in graph["rook_env.agents.registry"])

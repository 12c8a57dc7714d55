"""The layering the project promises: a pure rules core, an environment without torch."""

import ast
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
PURE = ["rules.py", "cards.py", "config.py", "core/rules.py", "core/flags.py"]
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
                mods = [node.module.split(".")[0]]
            else:
                continue
            for mod in mods:
                assert mod in STDLIB_OK, f"{name} imports {mod}: the rules core must not need numpy/gymnasium"


def test_environment_imports_without_torch():
    code = "import sys, rook_env; e = rook_env.env(); e.reset(seed=0); assert 'torch' not in sys.modules, 'torch'"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)

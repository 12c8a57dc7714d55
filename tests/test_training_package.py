"""The layout of rook_env.training: each module imports only the modules below it (no circles), each can be
imported alone, and ``import rook_env`` imports none of it (nor torch)."""

from __future__ import annotations

import ast
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
# bottom to top: a module may import only those before it (labels.*: the subpackage rook_env/training/labels/)
LAYERS = ["ray_cluster", "labels.config", "config", "ppo", "collection", "ray_collection", "labels.shards",
          "labels.ray_workers", "labels.search", "labels.counterfactual", "labels.online", "expert",
          "behaviour_cloning", "selection", "checkpoints", "labels.fit", "labels.rounds", "reporting", "labels.report",
          "labels.commands", "run", "collectors", "losses", "callbacks", "loop", "cli"]
TRAINING = ROOT / "rook_env" / "training"


def imported(name: str, node: ast.ImportFrom) -> str:
    """The module of rook_env.training that ``node`` (in module ``name``) imports from, dotted from the package; ""
    for one outside it."""
    if node.level:
        package = name.split(".")[:-1][:len(name.split(".")) - node.level]
        return ".".join(package + ([node.module] if node.module else []))
    module = node.module or ""
    return module[len("rook_env.training."):] if module.startswith("rook_env.training.") else ""


def test_every_module_imports_only_downward():
    files = {".".join(p.relative_to(TRAINING).with_suffix("").parts) for p in TRAINING.rglob("*.py")}
    assert {f for f in files if not f.endswith("__init__")} == set(LAYERS)
    for name in LAYERS:
        tree = ast.parse((TRAINING / f"{name.replace('.', '/')}.py").read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and imported(name, node):
                target = imported(name, node)
                assert target in LAYERS[:LAYERS.index(name)], f"{name} imports {target}, not below it"


def test_each_module_imports_alone_and_rook_env_imports_none_of_them():
    for name in LAYERS:
        subprocess.run([sys.executable, "-c", f"import rook_env.training.{name}"], check=True, cwd=ROOT)
    code = "import sys, rook_env; assert not [m for m in sys.modules if m.startswith('rook_env.training')]"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)

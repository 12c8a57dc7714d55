"""The layout of rook_env.training: each module imports only the modules below it (no circles), each can be
imported alone, and ``import rook_env`` imports none of it (nor torch)."""

from __future__ import annotations

import ast
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
# bottom to top: a module may import only those before it
LAYERS = ["ray_cluster", "config", "games", "ppo", "collection", "ray_collection", "ray_labels", "search_labels",
          "rollout_labels", "network_labels", "online_labels", "expert", "behaviour_cloning", "selection",
          "checkpoints", "residual_fit", "label_rounds",
          "reporting", "loop", "cli"]


def test_every_module_imports_only_downward():
    files = {p.stem for p in (ROOT / "rook_env" / "training").glob("*.py")} - {"__init__"}
    assert files == set(LAYERS)
    for name in LAYERS:
        tree = ast.parse((ROOT / "rook_env" / "training" / f"{name}.py").read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("rook_env.training")):
                target = node.module.rsplit(".", 1)[-1] if node.module else ""
                assert target in LAYERS[:LAYERS.index(name)], f"{name} imports {target}, not below it"


def test_each_module_imports_alone_and_rook_env_imports_none_of_them():
    for name in LAYERS:
        subprocess.run([sys.executable, "-c", f"import rook_env.training.{name}"], check=True, cwd=ROOT)
    code = "import sys, rook_env; assert not [m for m in sys.modules if m.startswith('rook_env.training')]"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)

"""The configs a user runs: ``configs/`` holds at most twelve, each opening with what it is for and its measured time
on 2 cores, each loading and passing its checks, each named on the Training page.

The configs of earlier experiments are not in the tree (git keeps them; docs/log/index.md names the commit holding
each), so nothing here reads a record.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = sorted((ROOT / "configs").glob("*.yaml"))
MAX_CONFIGS = 12
# the configs that the README, the docs and the benchmarks name by path
NAMED = {"default", "ppo", "smoke", "from_scratch_hour", "call_partner", "call_partner_smoke", "ray_smoke",
         "rllib_laptop", "rllib_cluster", "rllib_smoke", "rllib_vector_smoke"}
TIME = re.compile(r"\b\d+(\.\d+)? (seconds?|minutes?|hours?)\b.*\b2 (\w+ )*(CPU )?cores\b"
                  r"|\b2 (\w+ )*(CPU )?cores\b.*\b\d+(\.\d+)? (seconds?|minutes?|hours?)\b", re.S)


def _header(path: Path) -> str:
    lines = path.read_text(encoding="utf-8").splitlines()
    head = []
    for line in lines:
        if not line.startswith("#"):
            break
        head.append(line.lstrip("# "))
    return " ".join(head)


def _train_rllib():
    """train_rllib.py, the script run from the checkout, as a module (it imports ray only when it trains)."""
    name = "train_rllib_for_tests"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "train_rllib.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # its dataclasses look their module up there
        spec.loader.exec_module(module)
    return sys.modules[name]


def test_at_most_twelve_configs_and_the_named_ones_are_there():
    names = {p.stem for p in CONFIGS}
    assert len(CONFIGS) <= MAX_CONFIGS, f"{len(CONFIGS)} configs: {sorted(names)} (at most {MAX_CONFIGS})"
    assert NAMED <= names, sorted(NAMED - names)


@pytest.mark.parametrize("path", CONFIGS, ids=[p.stem for p in CONFIGS])
def test_each_config_opens_with_its_purpose_and_its_time_on_two_cores(path: Path):
    head = _header(path)
    assert len(head.split()) >= 8, f"{path.name}: the file opens with a comment saying what it is for"
    assert TIME.search(head), f"{path.name}: the opening comment gives its measured time on 2 cores: {head!r}"
    assert f"configs/{path.name}" in head, f"{path.name}: the opening comment gives the command that runs it"
    assert not re.search(r"\b0\.\d+\.\d+\b", head), f"{path.name}: a release number in the opening comment"


@pytest.mark.parametrize("path", [p for p in CONFIGS if not p.stem.startswith("rllib_")],
                         ids=[p.stem for p in CONFIGS if not p.stem.startswith("rllib_")])
def test_each_train_config_loads_and_passes_its_checks(path: Path):
    config = pytest.importorskip("rook_env.training.config")  # the training package needs torch
    cfg = config.make_train_config(str(path)).check()
    assert cfg.name == path.stem, path
    if path.stem in ("default", "from_scratch_hour"):
        assert cfg.algorithm == "label_rounds"
    if path.stem == "from_scratch_hour":
        assert cfg.rounds.network == config.RANDOM_NETWORK and cfg.rounds.max_minutes > 0


@pytest.mark.parametrize("path", [p for p in CONFIGS if p.stem.startswith("rllib_")],
                         ids=[p.stem for p in CONFIGS if p.stem.startswith("rllib_")])
def test_each_rllib_config_loads(path: Path):
    cfg = _train_rllib().RLlibRunConfig.load(str(path), [])
    assert cfg.name == path.stem


def test_the_training_page_names_every_config():
    text = (ROOT / "docs" / "training.md").read_text(encoding="utf-8")
    missing = [p.name for p in CONFIGS
               if f"configs/{p.name}" not in text and not (p.stem.startswith("rllib_") and "configs/rllib_*" in text)]
    assert not missing, f"docs/training.md's config table lacks {missing}"

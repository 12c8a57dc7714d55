"""rook_env.training (train.py) trains on the games of RULES.md "More games" through ``env_flags``: one tiny smoke
run per variant family (deck and nest, a preset, trump calls, the 2s, Circus Rook)."""

from __future__ import annotations

import math
import os

import pytest

pytest.importorskip("torch")
from rook_env.training import config, loop

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMOKE = os.path.join(ROOT, "configs", "smoke.yaml")

FAMILIES = {
    "deck_and_nest": "{rook_bird: 'off', nest: 'off'}",
    "preset": "{preset: regular_partnership}",
    "trump_calls": "{trump_calls: extended, card_names: standard}",
    "twos": "{deck: full, black_two_trump: 'on', red_two_little_rook: 'on'}",
    "circus": "{circus_rook: 'on', trump_calls: extended}",
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_train_smoke_per_variant_family(family, tmp_path):
    cfg = config.make_train_config(SMOKE, [
        f"run_dir={tmp_path}", f"name={family}", "progress=false", "bc_steps=5", "bc_hands=4", "eval_deals=2",
        "eval_every=0", "num_envs=4", "rollout_decisions=256", "total_decisions=256", "checkpoint_every=1",
        f"env_flags={FAMILIES[family]}",
    ])
    summary = loop.train(cfg, quiet=True)
    assert os.path.exists(os.path.join(tmp_path, family, "last.pt"))
    numbers = [v for v in summary.values() if isinstance(v, float)]
    assert all(math.isfinite(v) for v in numbers)

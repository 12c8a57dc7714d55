"""PettingZoo conformance: api_test, seed_test and render_test for the default game and variants."""

import pettingzoo
import pytest
from pettingzoo.test import api_test, render_test, seed_test

import rook_env

VARIANTS = [
    {},
    {"episode": "game"},
    {"deck": "full", "rook_rank": "low", "majority_tricks_bonus": 20},
    {"nest_discard": "no_counters_unless_forced", "all_pass": "redeal", "first_lead": "bidder"},
]


@pytest.mark.parametrize("flags", VARIANTS)
@pytest.mark.parametrize("make", [rook_env.env, rook_env.raw_env])
def test_api(make, flags):
    api_test(make(**flags), num_cycles=300)


@pytest.mark.parametrize("flags", VARIANTS)
def test_seed(flags):
    seed_test(lambda: rook_env.env(**flags), num_cycles=300)


def test_render():
    render_test(lambda render_mode=None: rook_env.env(render_mode=render_mode))


@pytest.mark.skipif(not hasattr(pettingzoo, "make"), reason="PettingZoo < 1.27 has no registry")
def test_registered_with_pettingzoo_make():
    e = pettingzoo.make("aec", rook_env.ENV_ID, deck="full")
    e.reset(seed=1)
    assert e.action_space("player_0").n == 57 + 1 + 17 + 4 + 1

"""PettingZoo conformance of every game: api_test, seed_test and render_test for the default table and
variants (call-your-partner Rook at 4, 5 and 6 players), and each game's id in PettingZoo's registry."""

import pettingzoo
import pytest
from helpers import GAMES, api_conformance, over_games, per_game
from pettingzoo.test import render_test, seed_test

import rook_env
from rook_env.games import get_game

VARIANTS = per_game({
    "partnership": [
        {},
        {"episode": "game"},
        {"deck": "full", "rook_rank": "low", "majority_tricks_bonus": 20},
        {"nest_discard": "no_counters_unless_forced", "all_pass": "redeal", "first_lead": "bidder"},
    ],
    "call_partner": [
        {"players": 4},
        {"players": 5},
        {"players": 6},
        {"players": 5, "deck": "no_twos_to_fours", "episode": "game", "nest_discard": "no_counters_unless_forced"},
        {"players": 6, "deck": "no_twos_to_fours", "all_pass": "redeal", "first_lead": "bidder"},
    ],
})
# PettingZoo's api_test asks for Box or Discrete observations; an action-masked game's is a Dict (as in
# PettingZoo's own classic games, which draw the same two warnings).
pytestmark = [pytest.mark.filterwarnings("ignore:Observation is not a NumPy array:UserWarning"),
              pytest.mark.filterwarnings("ignore:Observation space for each agent probably should be:UserWarning")]

CASES = over_games(VARIANTS)


@pytest.mark.parametrize("game, flags", CASES)
@pytest.mark.parametrize("make", [rook_env.env, rook_env.raw_env])
def test_api(make, game, flags):
    api_conformance(make(game=game, **flags), num_cycles=300)


@pytest.mark.parametrize("game, flags", CASES)
def test_seed(game, flags):
    seed_test(lambda: rook_env.env(game=game, **flags), num_cycles=300)


@pytest.mark.parametrize("game", GAMES)
def test_render(game):
    render_test(lambda render_mode=None: rook_env.env(game=game, render_mode=render_mode))


# A table of each game made through pettingzoo.make, and its number of actions.
REGISTERED = per_game({
    "partnership": [({"deck": "full"}, 57 + 1 + 17 + 4 + 1)],
    "call_partner": [({"players": 6, "deck": "no_twos_to_fours"}, 45 + 1 + 21 + 4 + 2 + 1)],
})


@pytest.mark.skipif(not hasattr(pettingzoo, "make"), reason="PettingZoo < 1.27 has no registry")
@pytest.mark.parametrize("game, flags, n_actions", over_games(REGISTERED))
def test_registered_with_pettingzoo_make(game, flags, n_actions):
    e = pettingzoo.make("aec", get_game(game).env_id, **flags)
    e.reset(seed=1)
    assert e.action_space("player_0").n == n_actions

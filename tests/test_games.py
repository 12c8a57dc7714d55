"""rook_env.env(game=...) dispatches to the right game; both ids are registered."""

import pettingzoo
import pytest

import rook_env
from rook_env.call_partner import CheckedCallPartnerEnv


@pytest.mark.parametrize("players", [4, 5, 6])
def test_env_game_call_partner_makes_the_call_partner_table(players):
    env = rook_env.env(game="call_partner", players=players)
    assert isinstance(env, CheckedCallPartnerEnv)
    env.reset(seed=3)
    assert env.agents == [f"player_{i}" for i in range(players)]


def test_env_default_game_is_the_partnership_game():
    env = rook_env.env()
    assert isinstance(env, rook_env.CheckedRookEnv)
    with pytest.raises(ValueError, match="players"):  # a call-partner flag is not a partnership flag
        rook_env.env(players=5)


def test_unknown_game_is_an_error_naming_it():
    with pytest.raises(ValueError, match="game must be one of .*'poker'"):
        rook_env.env(game="poker")


@pytest.mark.skipif(getattr(pettingzoo, "aec_registry", None) is None, reason="PettingZoo < 1.27 has no registry")
def test_call_partner_id_is_registered():
    env = pettingzoo.make("aec", "rook_env/RookCallPartner-v0", players=5)
    env.reset(seed=0)
    assert len(env.agents) == 5

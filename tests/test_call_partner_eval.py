"""Call-your-partner Rook in the agent registry and the rotation evaluation (rook_env.evaluation.call_partner):
flags validated against the right game, the rotation scheme (every agent in every seat on the same deal),
exact symmetry for identical agents, determinism for a seed and over workers, a strong agent beating random,
and the command line (``evaluate.py --game call_partner``)."""

from __future__ import annotations

import pytest

from rook_env.agents import make_agent
from rook_env.agents.call_partner_heuristic import CallPartnerHeuristic
from rook_env.agents.random_agent import RandomAgent
from rook_env.agents.registry import game_config, split_game
from rook_env.call_partner import CallPartnerConfig
from rook_env.config import RookConfig


# ------------------------------------------------------------------------------ registry
def test_make_agent_builds_the_call_partner_heuristic_for_its_table():
    agent = make_agent("call_partner_heuristic", 3, players=6, deck="no_twos_to_fours")
    assert isinstance(agent, CallPartnerHeuristic)
    assert agent.n == 6 and agent.config.deck == "no_twos_to_fours"
    # game="call_partner" may be given explicitly too; the default table has five players.
    assert make_agent("call_partner_heuristic", game="call_partner").n == 5


def test_random_agent_validates_flags_against_the_game_named_by_flags():
    assert isinstance(make_agent("random", 0, game="call_partner", players=5), RandomAgent)
    assert isinstance(make_agent("random", 0, game="partnership", deck="full"), RandomAgent)
    with pytest.raises(ValueError, match="unknown rule flag.*players"):
        make_agent("random", players=5)  # the partnership game has no players flag
    with pytest.raises(ValueError, match="players=7"):
        make_agent("random", game="call_partner", players=7)
    with pytest.raises(ValueError, match="rook_rank.*does not apply"):
        make_agent("random", game="call_partner", rook_rank="high")


@pytest.mark.parametrize("spec, flags, message", [
    ("heuristic", {"game": "call_partner"}, "plays the partnership game.*call_partner_heuristic"),
    ("ppo", {"game": "call_partner"}, "plays the partnership game"),
    ("x.pt", {"game": "call_partner"}, "plays the partnership game"),
    ("call_partner_heuristic", {"game": "partnership"}, "plays call-your-partner Rook"),
    ("nonsense", {"game": "call_partner"}, "unknown agent spec 'nonsense'.*call_partner_heuristic"),
    ("random", {"game": "doppelkopf"}, "game='doppelkopf' is not allowed"),
    ("call_partner_heuristic", {"players": 5, "decks": "full"}, "unknown call-your-partner flag.*decks"),
])
def test_make_agent_refuses_an_agent_of_the_other_game_by_name(spec, flags, message):
    with pytest.raises(ValueError, match=message):
        make_agent(spec, **flags)


def test_game_config_and_split_game():
    assert split_game({"game": "call_partner", "players": 4}) == ("call_partner", {"players": 4})
    assert split_game(None) == ("partnership", {})
    assert isinstance(game_config({"game": "call_partner", "players": 4}), CallPartnerConfig)
    assert isinstance(game_config({"deck": "full"}), RookConfig)

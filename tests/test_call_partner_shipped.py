"""The shipped call-your-partner network: ``make_agent("ppo", game="call_partner", players=5)`` finds it through the
game registry (GameSpec.networks), other table sizes are refused naming the sizes that have one, it plays legal
actions through the env, and ``"best"`` (the shipped network) falls back to the heuristic where a table has no
network."""

from __future__ import annotations

import os

import numpy as np
import pytest

pytest.importorskip("torch")

from rook_env.games import call_partner  # noqa: E402
from rook_env.agents import make_agent  # noqa: E402
from rook_env.agents.heuristic.call_partner import CallPartnerHeuristic  # noqa: E402
from rook_env.agents.learned import PPOAgent  # noqa: E402
from rook_env.agents.checkpoints import CHECKPOINT_DIR  # noqa: E402
from rook_env.agents.registry import BEST, GAME_SPECS, shipped_network  # noqa: E402
from rook_env.evaluation import play_rotation_match  # noqa: E402
from rook_env.games import game_names, get_game  # noqa: E402


def test_every_listed_network_is_shipped_and_plays_its_table():
    for name in game_names():
        spec = get_game(name)
        for players, file in spec.networks.items():
            path = os.path.join(CHECKPOINT_DIR, file)
            assert os.path.isfile(path), f"{name} lists {file} for {players} players but it is not shipped"
            rules = {"players": players} if spec.takes_players else {}
            assert shipped_network(name, rules) == path
            agent = make_agent("ppo", game=name, **rules)
            assert isinstance(agent, PPOAgent) and agent.greedy
            assert agent.checkpoint_info["game"] == name


@pytest.mark.call_partner
def test_make_agent_ppo_loads_the_five_player_network():
    agent = make_agent("ppo", seed=3, game="call_partner", players=5)
    assert os.path.basename(shipped_network("call_partner", {"players": 5})) == "ppo_call_partner.pt"
    assert agent.checkpoint_info["env_flags"]["players"] == 5
    # the default call-your-partner table is the 5-player one
    default = make_agent("ppo", game="call_partner")
    assert default.checkpoint_info == agent.checkpoint_info
    assert "ppo" in GAME_SPECS["call_partner"]


@pytest.mark.call_partner
@pytest.mark.parametrize("players", [4, 6])
def test_a_table_size_without_a_network_is_refused_naming_the_sizes_with_one(players):
    with pytest.raises(ValueError, match=f"network for 5 players, not for {players} players.*'ppo:<path>'"):
        make_agent("ppo", game="call_partner", players=players)


@pytest.mark.call_partner
def test_the_game_and_players_checks_still_apply():
    with pytest.raises(ValueError, match="players=5 is not allowed for game='partnership'"):
        make_agent("ppo", players=5)  # the partnership game has no players flag
    with pytest.raises(ValueError, match="players=7"):
        make_agent("ppo", game="call_partner", players=7)
    with pytest.raises(ValueError, match="unknown rule flag.*decks.*call_partner"):
        make_agent("ppo", game="call_partner", decks="full")
    with pytest.raises(ValueError, match="game='doppelkopf' is not allowed"):
        make_agent("ppo", game="doppelkopf")


@pytest.mark.call_partner
def test_best_needing_a_network_falls_back_to_the_heuristic_where_the_table_has_none(monkeypatch):
    monkeypatch.setitem(BEST, "call_partner", ("ppo",))  # a game whose only choice plays on its shipped network
    best = make_agent("best", game="call_partner", players=5)
    assert isinstance(best, PPOAgent) and best.checkpoint_info["env_flags"]["players"] == 5
    for players in (4, 6):
        other = make_agent("best", game="call_partner", players=players)
        assert isinstance(other, CallPartnerHeuristic) and other.n == players


@pytest.mark.call_partner
def test_the_shipped_network_plays_legal_actions_through_the_env():
    env = call_partner.env(players=5)  # the checked env: an illegal action raises
    agents = {a: make_agent("ppo", seed=i, game="call_partner", players=5) for i, a in enumerate(env.possible_agents)}
    for seed in range(3):
        env.reset(seed=seed)
        steps = 0
        for name in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            action = None if term or trunc else agents[name].act(obs)
            if action is not None:
                assert obs["action_mask"][action] == 1
                steps += 1
            env.step(action)
        assert steps > 5 * 10  # a whole hand was played: every seat played its cards
    res = play_rotation_match(["ppo", "call_partner_heuristic"], deals=2, seed=7, flags={"players": 5}, strict=True)
    assert res.illegal_total == 0 and res.hands == 10
    assert np.isfinite(res.mean)

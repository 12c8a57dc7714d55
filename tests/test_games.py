"""One API: rook_env.env / raw_env / SingleAgentRookEnv take game=, players= and the rule flags,
dispatching to the right game through the registry; both ids are registered."""

import numpy as np
import pettingzoo
import pytest

import rook_env
from rook_env.games.call_partner import CheckedCallPartnerEnv


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
    for door in (rook_env.env, rook_env.raw_env):
        with pytest.raises(ValueError, match="game='poker' is not allowed; allowed values: partnership, call_partner"):
            door(game="poker")


@pytest.mark.parametrize("players", [4, 5, 6])
def test_raw_env_takes_game_and_players(players):
    from rook_env.games.call_partner import raw_env as cp_raw_env

    e = rook_env.raw_env(game="call_partner", players=players, deck="no_twos_to_fours")
    assert type(e) is cp_raw_env and e.config.players == players and e.config.deck == "no_twos_to_fours"
    e.reset(seed=1)
    assert len(e.agents) == players
    with pytest.raises(ValueError, match="illegal action"):  # raw: an illegal action raises
        e.step(int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"] == 0)[0]))
    # the game's own door and the explicit default game work too
    assert type(cp_raw_env(game="call_partner", players=players)) is cp_raw_env
    assert type(rook_env.raw_env(game="partnership")) is rook_env.raw_env
    assert type(cp_raw_env(game="partnership")) is rook_env.raw_env


def test_partnership_takes_players_4_and_names_call_partner_for_other_counts():
    assert rook_env.raw_env(players=4).config == rook_env.RookConfig()
    for door in (rook_env.env, rook_env.raw_env):
        with pytest.raises(ValueError, match=r"players=5 .*partnership.*game='call_partner'"):
            door(players=5)


def test_unknown_flag_error_names_the_game_that_has_it():
    with pytest.raises(ValueError, match=r"unknown rule flag\(s\) rook_rnak for game='partnership'"):
        rook_env.raw_env(rook_rnak="high")
    with pytest.raises(ValueError, match="circus_rook.*game='call_partner'.*game='partnership'"):
        rook_env.raw_env(game="call_partner", circus_rook="on")
    with pytest.raises(ValueError, match="bogus_flag for game='call_partner'"):
        rook_env.env(game="call_partner", bogus_flag=1)


def test_checked_and_raw_doors_agree_on_the_same_seed():
    a = rook_env.env(game="call_partner", players=6)
    b = rook_env.raw_env(game="call_partner", players=6)
    assert isinstance(a, CheckedCallPartnerEnv) and not isinstance(b, CheckedCallPartnerEnv)
    a.reset(seed=5)
    b.reset(seed=5)
    for agent in a.possible_agents:
        np.testing.assert_array_equal(a.observe(agent)["observation"], b.observe(agent)["observation"])


@pytest.mark.parametrize("players", [4, 5])
def test_single_agent_env_takes_game_and_players(players):
    from rook_env import SingleAgentRookEnv

    e = SingleAgentRookEnv(game="call_partner", players=players, opponents="random")
    obs, info = e.reset(seed=2)
    assert obs.shape == e.observation_space.shape
    assert info["seat"] == 0
    total, done, steps = 0.0, False, 0
    while not done:
        legal = np.flatnonzero(info["action_mask"])
        obs, r, term, trunc, info = e.step(int(legal[0]))
        total += r
        done = term or trunc
        steps += 1
    assert steps > 0 and e.aec.config.players == players
    assert sum(e.aec.infos["player_0"]["hand"]["hand_scores"]) != 0 or total == 0
    with pytest.raises(ValueError, match="players=5 .*game='call_partner'"):
        SingleAgentRookEnv(players=5)
    with pytest.raises(ValueError, match="no fixed partnerships, so the learner plays one seat"):
        SingleAgentRookEnv(game="call_partner", players=players, learner_seats=(0, 2), opponents="random")
    # by default the other seats play the game's heuristic (the registry's spec), the 2s flags included
    d = SingleAgentRookEnv(game="call_partner", players=players, black_two_trump="on")
    assert sorted(d.others) == list(range(1, players)) and d.learner_seats == (0,)
    assert {type(a).__name__ for a in d.others.values()} == {"CallPartnerHeuristic"}
    assert SingleAgentRookEnv().learner_seats == (0, 2)


@pytest.mark.skipif(getattr(pettingzoo, "aec_registry", None) is None, reason="PettingZoo < 1.27 has no registry")
def test_call_partner_id_is_registered():
    env = pettingzoo.make("aec", "rook_env/RookCallPartner-v0", players=5)
    env.reset(seed=0)
    assert len(env.agents) == 5


@pytest.mark.parametrize("game,flags", [("partnership", {}), ("call_partner", {"players": 6})])
def test_copies_and_pickles_continue_mid_hand_in_both_games(game, flags):
    """One wrapper for both games: deepcopy and pickle carry the whole state (the RNG included)."""
    import copy
    import pickle
    import random

    def play(e, rng, steps):
        seen = []
        for _ in range(steps):
            a = e.agent_selection
            if not e.agents or e.terminations[a] or e.truncations[a]:
                break
            obs = e.observe(a)
            e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            seen.append(e.observe(e.agent_selection)["observation"].tobytes() if e.agents else b"")
        return seen

    e = rook_env.raw_env(game=game, episode="game", **flags)
    e.reset(seed=11)
    play(e, random.Random(1), 30)
    copies = [copy.deepcopy(e), pickle.loads(pickle.dumps(e))]
    want = play(e, random.Random(2), 400)
    for c in copies:
        assert type(c) is type(e)
        assert play(c, random.Random(2), 400) == want

"""Call-your-partner environment: PettingZoo conformance for 4, 5 and 6 players, rewards,
infos, illegal actions, reset options and rendering."""

import random
import warnings

import numpy as np
import pytest
from helpers import cp_deal
from pettingzoo.test import api_test, render_test, seed_test

from rook_env.games import call_partner
from rook_env.games.call_partner.config import CallPartnerConfig
from rook_env.games.call_partner.rules import OVER

VARIANTS = [
    {"players": 4},
    {"players": 5},
    {"players": 6},
    {"players": 5, "deck": "no_twos_to_fours", "episode": "game", "nest_discard": "no_counters_unless_forced"},
    {"players": 6, "deck": "no_twos_to_fours", "all_pass": "redeal", "first_lead": "bidder"},
]


@pytest.mark.parametrize("flags", VARIANTS)
@pytest.mark.parametrize("make", [call_partner.env, call_partner.raw_env])
def test_api(make, flags):
    api_test(make(**flags), num_cycles=300)


@pytest.mark.parametrize("flags", VARIANTS)
def test_seed(flags):
    seed_test(lambda: call_partner.env(**flags), num_cycles=300)


def test_render():
    render_test(lambda render_mode=None: call_partner.env(render_mode=render_mode))


def play_hand(e, seed):
    rng = random.Random(seed)
    rewards = {a: 0.0 for a in e.possible_agents}
    for agent in e.agent_iter():
        obs, reward, term, trunc, info = e.last()
        rewards[agent] += reward
        if term or trunc:
            e.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        e.step(int(rng.choice(legal)))
    return rewards


@pytest.mark.parametrize("players", [4, 5, 6])
@pytest.mark.parametrize("reward", ["score_diff", "team_score", "win_loss"])
def test_rewards_and_infos_at_hand_end(players, reward):
    e = call_partner.raw_env(players=players, reward=reward)
    e.reset(seed=players)
    game = e.game
    infos_at_end = {}
    rng = random.Random(players)
    while not all(e.terminations.values()):
        e.step(rng.choice(game.legal_actions()))
    infos_at_end = {a: e.infos[a] for a in e.agents}
    r = game.hand_result
    delta = r["hand_scores"]
    for s, a in enumerate(e.agents):
        mean_others = (sum(delta) - delta[s]) / (players - 1)
        expect = {"score_diff": delta[s] - mean_others, "team_score": delta[s],
                  "win_loss": np.sign(delta[s] - mean_others)}[reward]
        assert e.rewards[a] == pytest.approx(expect)
        info = infos_at_end[a]["hand"]
        assert info["bidder"] == game.bidder and info["partners"] == list(game.partners)
        assert info["bid"] == r["bid"] and info["hand_scores"] == delta and info["scores"] == game.scores
    if reward == "score_diff":
        assert sum(e.rewards.values()) == pytest.approx(0.0)


def test_score_diff_worked_example():
    """The docstring's example: bid 150 made with 160 by the bidder and one partner of five."""
    e = call_partner.raw_env()
    e.reset(seed=0)
    game = e.game
    game.high_bid = game.L.bids.index(150)
    game.bidder, game.partners, game.rook_high = 0, (2,), 1
    game.points = [100, 0, 60, 40, 0]
    game._finish_hand()
    e._hand_finished()
    assert [e.rewards[a] for a in e.agents] == [90, -60, 90, -60, -60]


def test_win_loss_in_game_episodes():
    e = call_partner.raw_env(players=4, episode="game", reward="win_loss", target_score=150)
    e.reset(seed=3)
    rng = random.Random(3)
    total = {a: 0 for a in e.agents}
    while not all(e.terminations.values()):
        e.step(rng.choice(e.game.legal_actions()))
        for a in e.agents:
            total[a] += e.rewards[a]
    w = e.game.winner
    assert w >= 0 and e.game.phase == OVER
    assert [total[a] for a in e.agents] == [1 if s == w else -1 for s in range(4)]


def test_illegal_action_raw_raises_and_checked_ends_episode():
    e = call_partner.raw_env()
    e.reset(seed=1)
    with pytest.raises(ValueError, match=r"illegal action 0 \(R1\) for player_\d in phase 'bid'; legal actions: 57"):
        e.step(0)
    with pytest.raises(ValueError, match="outside the action space Discrete\\(86\\)"):
        e.step(86)
    with pytest.raises(ValueError, match="not an integer"):
        e.step("pass")
    c = call_partner.env()
    c.reset(seed=1)
    offender = c.agent_selection
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        c.step(0)
    assert any("illegal action 0" in str(x.message) for x in w)
    assert all(c.terminations.values())
    assert c._cumulative_rewards[offender] == -1.0
    assert all(c._cumulative_rewards[a] == 0 for a in c.agents if a != offender)


def test_fixed_deal_and_options():
    cfg = CallPartnerConfig(players=6)
    hands, nest = cp_deal(cfg, {0: "R1 Rook"})
    e = call_partner.raw_env(players=6)
    e.reset(options={"hands": hands, "nest": nest, "dealer": 5, "scores": [1, 2, 3, 4, 5, 6]})
    assert e.agent_selection == "player_0" and e.game.hands[0] == sum(1 << c for c in hands[0])
    assert e.game.scores == [1, 2, 3, 4, 5, 6]
    with pytest.raises(ValueError, match=r"hands\[0\] must hold 9 cards"):
        e.reset(options={"hands": [h[:-1] for h in hands], "nest": nest})
    with pytest.warns(UserWarning, match="ignoring unknown reset option"):
        e.reset(options={"hand": 1})
    with pytest.raises(ValueError, match="players=7 is not allowed"):
        call_partner.raw_env(players=7)
    with pytest.raises(ValueError, match="rook_rank"):
        call_partner.env(rook_rank="low")


def test_make_env_dispatch_and_spaces():
    e = call_partner.make_env(players=6, deck="no_twos_to_fours")
    assert isinstance(e, call_partner.CheckedCallPartnerEnv)
    e.reset(seed=0)
    assert e.possible_agents == [f"player_{i}" for i in range(6)]
    assert e.action_space("player_0").n == 45 + 1 + 21 + 4 + 2 + 1
    assert e.observation_space("player_3")["observation"].shape == (e.obs_layout.size,)
    assert type(call_partner.make_env(checked=False)) is call_partner.raw_env
    assert e.state().shape == e.state_space.shape


def test_render_ansi_and_private_view():
    e = call_partner.raw_env(render_mode="ansi")
    e.reset(seed=2)
    rng = random.Random(2)
    while e.game.phase != OVER and not e.game.called:
        e.step(rng.choice(e.game.legal_actions()))
    text = e.render()
    assert "call-your-partner Rook, 5 players" in text and "called:" in text and "P4 hand" in text
    from rook_env.games.call_partner.render import render_text

    b = e.game.bidder
    private = render_text(e.game, seat=b)
    assert f"P{b} hand" in private and f"P{(b + 1) % 5} hand" not in private
    assert "partners: unknown" in private or "partners: P" in private

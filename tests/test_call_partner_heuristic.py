"""The call-your-partner heuristic: always legal, acts on its own observation only, bids,
calls and plays by its documented rules, and beats random play."""

import random

import numpy as np
import pytest
from helpers import cp_deal, scripted_setup

from rook_env.games import call_partner
from rook_env.agents.heuristic.call_partner import CallPartnerHeuristic, measure
from rook_env.games.call_partner.config import CallPartnerConfig
from rook_env.games.call_partner.observation import encode
from rook_env.games.call_partner.rules import CALL, OVER, CallPartnerState


def obs_of(state, seat):
    mask = np.zeros(state.L.n_actions, np.int8)
    if seat == state.current:
        for a in state.legal_actions():
            mask[a] = 1
    return {"observation": encode(state, seat), "action_mask": mask}


@pytest.mark.parametrize("flags", [
    {"players": 4}, {"players": 5}, {"players": 6},
    {"players": 5, "deck": "no_twos_to_fours", "nest_discard": "no_counters_unless_forced", "episode": "game"},
])
def test_always_legal_over_whole_games(flags):
    e = call_partner.env(**flags, max_hands=4)
    agent = CallPartnerHeuristic(**{k: v for k, v in flags.items()})
    for seed in range(3):
        e.reset(seed=seed)
        for name in e.agent_iter():
            obs, _, term, trunc, _ = e.last()
            if term or trunc:
                e.step(None)
                continue
            a = agent.act(obs)
            assert obs["action_mask"][a] == 1
            e.step(a)
        assert not any("illegal_action" in i for i in e.infos.values())


def test_calls_the_highest_trump_it_lacks():
    cfg = CallPartnerConfig(players=5)
    hands, nest = cp_deal(cfg, {0: "Rook R1 R14 R12 R11 R10 R9 Y1 G1 B1"})
    st = CallPartnerState(cfg)
    st.new_game(dealer=4, hands=hands, nest=nest)
    scripted_setup(st, trump=0, stop_at_call=True)
    assert st.phase == CALL
    agent = CallPartnerHeuristic(players=5)
    assert agent.act(obs_of(st, 0)) == st.L.parse_card("R13")
    cfg6 = CallPartnerConfig(players=6)
    hands6, nest6 = cp_deal(cfg6, {0: "R1 R14 R12 Y1 G1 B1"}, nest="G5 G6 G7")
    st6 = CallPartnerState(cfg6)
    st6.new_game(dealer=5, hands=hands6, nest=nest6)
    scripted_setup(st6, trump=0, stop_at_call=True)
    agent6 = CallPartnerHeuristic(players=6)
    first = agent6.act(obs_of(st6, 0))
    assert first == st6.L.rook
    st6.apply(first)
    assert agent6.act(obs_of(st6, 0)) == st6.L.parse_card("R13")


def test_bids_strong_hands_higher_than_weak_ones():
    """Seat 0 opens at 140; seat 1 overcalls with a strong hand and passes with a weak one.
    (Any hand may open at 100: with a called top trump and the nest, simulated sides make 100
    about nine times in ten even with the weakest hands.)"""
    cfg = CallPartnerConfig(players=5)
    agent = CallPartnerHeuristic(players=5)
    for cards, expect in [("Rook R1 R14 R13 R12 R10 R5 Y1 G1 B1", "bid"), ("R2 R3 Y2 Y3 Y4 G2 G3 G4 B2 B3", "pass")]:
        hands, nest = cp_deal(cfg, {1: cards})
        st = CallPartnerState(cfg)
        st.new_game(dealer=4, hands=hands, nest=nest)
        st.apply(st.L.bid_action(140))
        assert st.L.action_kind(agent.act(obs_of(st, 1))) == expect
        assert agent.estimate(st.hands[1]) > 140 if expect == "bid" else agent.estimate(st.hands[1]) < 150


def test_acts_on_its_observation_only():
    """The same observation gives the same action, whatever the hidden cards are."""
    e = call_partner.raw_env()
    e.reset(seed=4)
    rng = random.Random(4)
    agent = CallPartnerHeuristic()
    while e.game.phase != OVER:
        obs = e.observe(e.agent_selection)
        a = agent.act(obs)
        assert agent.act({k: v.copy() for k, v in obs.items()}) == a
        e.step(a if rng.random() < 0.8 else rng.choice(e.game.legal_actions()))


def test_beats_random():
    mean, se = measure(players=5, hands=100, seed=1)
    assert mean - 2 * se > 0, f"heuristic vs random: {mean:+.1f} +/- {se:.1f}"

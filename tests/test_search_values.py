"""The auction searched over a network's values (rook_env.agents.search.values, spec "search-values:<network>"):
its worlds are the decision's position with the hidden cards dealt anew, its choice is the best-valued of the
network's likeliest actions, it reads nothing the seat cannot see, and bad arguments are refused."""

from __future__ import annotations

import copy
import random

import numpy as np
import pytest

import rook_env
from rook_env.agents import make_agent
from rook_env.agents.search import SearchAgent
from rook_env.agents.search.values import NetworkValues
from rook_env.games.partnership.cards import N_SEATS, bits
from rook_env.games.partnership.config import make_config
from rook_env.games.partnership.rules import BID, DISCARD, PLAY, TRUMP, RookState

from helpers import play_with_hidden_twins, seat_observation

AUCTION = (BID, DISCARD, TRUMP)
FLAG_SETS = [{}, {"nest_discard": "no_counters_unless_forced", "first_lead": "bidder"}]


def values_agent(seed: int = 3, samples: int = 4, top: int = 3, **flags) -> SearchAgent:
    agent = make_agent(f"search-values[auction_samples={samples},values_top={top},samples=4]:ppo", seed=seed, **flags)
    agent.strict = True
    return agent


def _packed(vec: np.ndarray) -> int:
    return int.from_bytes(np.packbits(vec > 0.5, bitorder="little").tobytes(), "little")


def _rel(seat: int, me: int) -> int:
    return (seat - me) % N_SEATS


@pytest.mark.parametrize("flags", FLAG_SETS)
def test_worlds_are_the_decision_with_the_hidden_cards_dealt_anew(flags):
    """Every world is the true position seen from the seat (seat 0): the same phase, auction, hand, nest and
    discards (the bidder's), trump and legal actions; the cards the seat cannot see dealt in the true sizes, drawn
    anew (the worlds differ)."""
    cfg = make_config(**flags)
    agent = values_agent(samples=6, **flags)
    search: NetworkValues = agent._auction
    rng = random.Random(0)
    checked = phases = 0
    seen = set()
    for d in range(8):
        st = RookState(cfg, seed=d)
        st.new_game()
        while st.phase in AUCTION:
            me = st.current
            obs = seat_observation(st, me)
            legal = st.legal_mask()
            worlds = search.worlds(obs["observation"], st.phase, legal, rng)
            hidden = [h for s, h in enumerate(st.hands) if s != me] + ([st.nest] if st.phase == BID else [])
            for w in worlds:
                assert (w.phase, w.current, w.high_bid, w.dealer) == (st.phase, 0, st.high_bid, _rel(st.dealer, me))
                assert w.hands[0] == st.hands[me] and w.legal_mask() == legal
                assert [w.passed[_rel(s, me)] for s in range(N_SEATS)] == st.passed
                if st.phase != BID:
                    assert w.bidder == _rel(st.bidder, me) and w.trump == st.trump
                    if st.bidder == me:
                        assert w.discards == st.discards
                        assert w.nest == st.nest
                mine = [h for h in w.hands[1:]] + ([w.nest] if st.phase == BID else [])
                assert sorted(m.bit_count() for m in mine) == sorted(h.bit_count() for h in hidden)
                union = 0
                for m in mine:
                    assert not union & m
                    union |= m
                assert union == sum(1 << c for h in hidden for c in bits(h))  # the same cards, dealt anew
            checked += 1
            phases |= 1 << st.phase
            seen.add(len({tuple(w.hands[1:]) for w in worlds}))
            st.apply(agent.heuristic.act(obs))
    assert checked > 20 and phases == sum(1 << p for p in AUCTION)
    assert max(seen) > 1


def test_the_choice_is_the_best_valued_of_the_networks_likeliest_actions():
    cfg = make_config()
    agent = values_agent(top=3)
    network = agent.base
    searched = 0
    for d in range(4):
        st = RookState(cfg, seed=100 + d)
        st.new_game()
        agent.reset()
        while st.phase != PLAY and not st.is_over:
            obs = seat_observation(st, st.current)
            action = agent.act(obs)
            legal = bits(st.legal_mask())
            if len(legal) > 1:
                values = agent.last_values
                probs = network.action_probs(obs)
                likeliest = sorted(legal, key=lambda a: -probs[a])[:3]
                assert list(values) == likeliest
                assert action == max(values, key=values.__getitem__)
                searched += 1
            st.apply(action)
    assert searched > 10 and agent.fallbacks == 0


def test_choices_do_not_depend_on_cards_the_seat_cannot_see():
    """Permuting the hidden cards leaves the seat's observation, its choice and its values unchanged."""
    agents = [values_agent(seed=20 + s) for s in range(N_SEATS)]
    checked = []

    def check(st, me, obs, twin, twin_obs):
        assert np.array_equal(obs["observation"], twin_obs["observation"])
        other = copy.deepcopy(agents[me])
        action = agents[me].act(obs)
        assert other.act(twin_obs) == action and other.last_values == agents[me].last_values
        checked.append(st.phase)
        return action

    for phase in AUCTION:
        play_with_hidden_twins(make_config(), agents, 3, random.Random(phase), 1.0, check, phase=phase)
    assert set(checked) == set(AUCTION) and len(checked) > 15


def test_a_whole_hand_at_the_table_searches_every_auction_choice():
    env = rook_env.env()
    agent = values_agent()
    searched = 0
    for seed in range(2):
        env.reset(seed=seed)
        for name in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            action = agent.act(obs)
            phase = int(np.argmax(obs["observation"][:5]))
            if phase in AUCTION and np.count_nonzero(obs["action_mask"]) > 1:
                assert agent.last_values and action in agent.last_values
                searched += 1
            env.step(action)
    assert searched > 5 and agent.fallbacks == 0


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="needs a network as its base"):
        SearchAgent(auction="values")
    with pytest.raises(ValueError, match="needs a network as its base"):
        make_agent("search-values:heuristic")
    with pytest.raises(ValueError, match="top must be a whole number >= 1"):
        make_agent("search-values[values_top=0]:ppo")
    with pytest.raises(ValueError, match="values_top must be a whole number"):
        make_agent("search-values[values_top=two]:ppo")
    assert make_agent("search-values[values_top=2]:ppo")._auction.top == 2

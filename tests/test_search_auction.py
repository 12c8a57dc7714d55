"""Auction search (rook_env.agents.search.auction, SearchAgent(auction="search")): legal under the rule flags, blind
to hidden cards, deterministic for a seed, values every legal action of a bid, discard or trump decision on
the seat's team's score scale, the same on either engine, clear errors, and the obvious answer where one is."""

from __future__ import annotations

import copy
import random

import numpy as np
import pytest

import rook_env
from rook_env.games.partnership import kernels
from rook_env.agents import make_agent
from rook_env.agents.random_agent import RandomAgent
from rook_env.agents.search import SearchAgent
from rook_env.games.partnership.config import make_config
from rook_env.games.partnership.rules import BID, DISCARD, OVER, PLAY, TRUMP, RookState
from helpers import seat_observation as _obs, shuffle_hidden as _shuffle_hidden, strict_search

AUCTION = (BID, DISCARD, TRUMP)
FLAG_VARIANTS = [
    {},
    {"nest_discard": "no_counters_unless_forced", "first_lead": "left_of_bidder", "majority_tricks_bonus": 20},
    {"deck": "full", "all_pass": "redeal", "no_counter_redeal": "off", "rook_rank": "low"},
    {"nest": "off", "rook_bird": "off", "first_lead": "bidder", "last_trick_bonus": 20},
    {"min_bid": 80, "max_bid": 100, "bid_step": 10, "episode": "game", "target_score": 150},
]


def auction_search(seed=0, samples=4, **kw) -> SearchAgent:
    """Strict search with the auction searched too (internal errors raise instead of falling back)."""
    return strict_search(seed, samples, auction="search", auction_samples=samples, **kw)


@pytest.mark.parametrize("flags", FLAG_VARIANTS)
def test_legal_and_every_legal_action_valued(flags):
    """Whole hands through raw_env (which raises on an illegal action); every searched auction decision values
    exactly its legal bids (pass, bids, redeal) or trumps, or a subset of its legal discards holding the choice,
    and picks the best value."""
    e = rook_env.raw_env(**flags)
    agents = [auction_search(seed=s, **flags) for s in range(4)]
    rnd = RandomAgent(seed=1)
    searched = 0
    for h in range(3):
        e.reset(seed=200 + h)
        g = e.game
        while g.phase != OVER:
            if g.phase == PLAY and flags.get("nest") == "off":
                break  # card-play search's worlds assume a nest (worlds.holders_for): only the auction here
            s = g.current
            obs = e.observe(e.agent_selection)
            phase = g.phase
            if h == 2 and s & 1:  # random opponents: odd auctions (redeals, forced dealers, high contracts)
                e.step(rnd.act(obs))
                continue
            a = agents[s].act(obs)
            assert obs["action_mask"][a] == 1
            legal = {int(x) for x in np.flatnonzero(obs["action_mask"])}
            values = agents[s].last_values
            if phase in AUCTION and len(legal) > 1:
                searched += 1
                assert values is not None and a in values and set(values) <= legal
                if phase != DISCARD:
                    assert set(values) == legal
                assert values[a] == max(values.values())
                assert all(isinstance(v, float) for v in values.values())
            e.step(a)
    assert searched > 0
    assert sum(a.fallbacks for a in agents) == 0


@pytest.mark.parametrize("flags", [{}, {"nest_discard": "no_counters_unless_forced", "deck": "full"}])
def test_choices_and_values_do_not_depend_on_hidden_cards(flags):
    """Permuting the cards a seat cannot see (other hands, the nest) leaves its observation, its choice and
    its values unchanged."""
    cfg = make_config(**flags)
    rng = random.Random(7)
    checked = changed = 0
    for h in range(4):
        st = RookState(cfg, seed=h)
        st.new_game()
        agents = [auction_search(seed=11, **flags) for _ in range(4)]
        while st.phase in AUCTION:
            me = st.current
            obs = _obs(st, me)
            other = _shuffle_hidden(st, me, rng)
            obs2 = _obs(other, me)
            changed += other.hands != st.hands or other.nest != st.nest
            assert np.array_equal(obs["observation"], obs2["observation"])
            twin = copy.deepcopy(agents[me])
            a = agents[me].act(obs)
            assert twin.act(obs2) == a
            assert twin.last_values == agents[me].last_values
            checked += 1
            st.apply(a)
    assert checked > 10 and changed > 5


def test_deterministic_for_a_seed_and_order_free():
    def auction(seed):
        st = RookState(make_config(), seed=5)
        st.new_game()
        agents = [auction_search(seed=seed + s) for s in range(4)]
        out = []
        while st.phase in AUCTION:
            a = agents[st.current].act(_obs(st, st.current))
            out.append((a, agents[st.current].last_values))
            st.apply(a)
        return out

    assert auction(1) == auction(1)
    st = RookState(make_config(), seed=8)
    st.new_game()
    obs = _obs(st, st.current)
    a, b = auction_search(seed=4), auction_search(seed=4)
    b.act(obs)  # b has made this decision before
    assert a.act(obs) == b.act(obs) and a.last_values == b.last_values


@pytest.mark.skipif(not kernels.AVAILABLE, reason="the batched engine needs numba")
def test_engines_give_the_same_values():
    """The batched engine's play-outs are the Python greedy rollout's: every auction value agrees."""
    st = RookState(make_config(), seed=21)
    st.new_game()
    fast, slow = auction_search(seed=2, engine="batched"), auction_search(seed=2, engine="python")
    n = 0
    while st.phase in AUCTION:
        obs = _obs(st, st.current)
        a = fast.act(obs)
        assert slow.act(obs) == a and slow.last_values == fast.last_values
        n += fast.last_values is not None
        st.apply(a)
    assert n >= 3


def _deal(cfg, hand0: list[int], seed: int) -> RookState:
    """A new hand with seat 0 holding ``hand0``, the other cards dealt at random (seat 1 deals: seat 2 bids first)."""
    L = RookState(cfg).L
    rest = [c for c in range(L.n_cards) if c not in hand0]
    random.Random(seed).shuffle(rest)
    k = L.hand_size
    hands = [hand0, rest[:k], rest[k:2 * k], rest[2 * k:3 * k]]
    st = RookState(cfg, seed=seed)
    st.new_game(hands=hands, nest=rest[3 * k:], dealer=1)
    return st


def test_names_the_obvious_trump_and_values_bids_by_the_hand():
    """The Rook Bird and the eight top greens: bidding beats passing, green is named; a hand of low cards in the
    same seat values the minimum bid below the strong hand, and the maximum bid below the minimum."""
    cfg = make_config()
    L = RookState(cfg).L
    green = [L.card_id(2, r) for r in range(14, 4, -1)]  # the ten greens, strongest first
    strong = [L.rook] + green[:8]
    weak = [L.card_id(c, r) for c in range(3) for r in (6, 7, 8)]  # no counter, no high card
    for seed in range(3):
        values = []
        for hand in (strong, weak):
            st = _deal(cfg, hand, seed)
            while st.current != 0:  # seats 2 and 3 pass
                st.apply(L.PASS)
            ag = auction_search(seed=seed, samples=16)
            bid = ag.act(_obs(st, 0))
            values.append(ag.last_values)
            if hand is weak:
                break
            assert bid != L.PASS and ag.last_values[bid] > ag.last_values[L.PASS]
            st.apply(L.BID0)
            st.apply(L.PASS)  # seat 1 passes: seat 0 takes the nest
            while st.phase == DISCARD:
                st.apply(ag.act(_obs(st, 0)))
            assert st.phase == TRUMP
            assert ag.act(_obs(st, 0)) == L.TRUMP0 + 2
        top = L.BID0 + L.n_bids - 1
        assert values[1][L.BID0] < values[0][L.BID0]
        assert values[1][top] < values[1][L.BID0]


def test_bids_mode_leaves_discard_and_trump_to_the_base():
    st = RookState(make_config(), seed=3)
    st.new_game()
    ag = SearchAgent(seed=1, samples=4, auction="bids", auction_samples=8)
    ag.strict = True
    ref = SearchAgent(seed=1, samples=4)  # the heuristic's discard and trump
    phases = set()
    while st.phase in AUCTION:
        obs = _obs(st, st.current)
        a = ag.act(obs)
        if st.phase == BID:
            assert ag.last_values is not None and a in ag.last_values
        else:
            assert a == ref.act(obs) and ag.last_values is None
        phases.add(st.phase)
        st.apply(a)
    assert phases == {BID, DISCARD, TRUMP}


def test_bad_arguments_rejected():
    with pytest.raises(ValueError, match="auction must be one of base, search, bids, values, got 'all'"):
        SearchAgent(auction="all")
    with pytest.raises(ValueError, match="auction='search' needs trump_calls='colour'"):
        SearchAgent(auction="search", trump_calls="extended")
    for bad in (0, 2.5, True, "64"):
        with pytest.raises(ValueError, match="auction_samples must be an integer"):
            SearchAgent(auction="search", auction_samples=bad)
    with pytest.raises(ValueError, match="circus_rook"):
        SearchAgent(auction="search", circus_rook="on")
    assert SearchAgent(trump_calls="extended").auction == "base"  # the default is unchanged


def test_agent_specs():
    a = make_agent("search-auction", seed=1)
    assert isinstance(a, SearchAgent) and a.auction == "search"
    b = make_agent("search-auction:random", seed=1)
    assert b.auction == "search" and isinstance(b.base, RandomAgent)
    assert make_agent("search:random").auction == "base"
    c = make_agent("search-bids:random", seed=1)
    assert c.auction == "bids" and isinstance(c.base, RandomAgent)
    with pytest.raises(ValueError, match="plays the partnership game"):
        make_agent("search-auction", game="call_partner")
    with pytest.raises(ValueError, match="unknown agent spec 'nothing'"):
        make_agent("search-auction:nothing")


def test_search_options_in_specs():
    a = make_agent("search[samples=96,worlds=learned]:random", seed=1)
    assert isinstance(a, SearchAgent) and a.samples == 96 and a.auction == "base" and isinstance(a.base, RandomAgent)
    assert a.worlds == "learned"
    b = make_agent("search-bids[samples=8,auction_samples=16]", seed=1)
    assert (b.auction, b.samples, b.auction_samples) == ("bids", 8, 16)
    assert make_agent("search[samples=5]").samples == 5 and make_agent("search").samples == 24
    for bad, msg in [("search[samples=x]:ppo", "samples must be a whole number, got 'x'"),
                     ("search[depth=2]:ppo", "bad search option 'depth=2'"),
                     ("search[samples=2:ppo", r"written search\[key=value"),
                     ("search[]:ppo", r"written search\[key=value"),
                     ("search[samples=2,samples=3]", "'samples' is given twice"),
                     ("search[worlds=bogus]", "worlds must be one of"),
                     ("search[samples=0]", "samples must be an integer in 1..")]:
        with pytest.raises(ValueError, match=msg):
            make_agent(bad)
    with pytest.raises(ValueError, match="plays the partnership game"):
        make_agent("search[samples=4]:random", game="call_partner", players=5)


def test_showdown_replays_accept_the_specs():
    from rook_env.serve.compare import replay_agent

    assert replay_agent("search-auction:heuristic+search-bids", {}) == "search-auction:heuristic+search-bids"
    assert replay_agent("search[samples=96,worlds=learned]:ppo", {}) == "search[samples=96,worlds=learned]:ppo"
    assert replay_agent("search[samples=8]:run.pt", {"run.pt": "/ckpts/run.pt"}) == "search[samples=8]:/ckpts/run.pt"
    assert replay_agent("search[samples=8]+heuristic", {}) == "search[samples=8]+heuristic"
    with pytest.raises(ValueError, match="neither a registry agent"):
        replay_agent("search-bids:nothing", {})

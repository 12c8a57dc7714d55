"""Batched search (rook_env.agents.search.batched): the compiled greedy rollouts on the batched engine give
exactly the Python rollout's hand scores, and the search agent's batched engine the Python engine's choices."""

from __future__ import annotations

import random

import numpy as np
import pytest

from rook_env.games.partnership import kernels
from rook_env.games.partnership.config import make_config
from rook_env.games.partnership.rules import OVER, PLAY, RookState
from rook_env.agents.heuristic.tables import card_tables
from rook_env.agents.search.rollout import GreedyRollout, hand_score_diff

pytestmark = pytest.mark.skipif(not kernels.AVAILABLE, reason="batched search needs numba")

FLAGS = [
    {},
    {"nest_discard": "no_counters_unless_forced", "first_lead": "bidder", "rook_rank": "low"},
    {"black_two_trump": "on", "red_two_little_rook": "on", "deck": "full", "last_trick_bonus": 20},
    {"majority_tricks_bonus": 10, "deck": "tournament", "rook_rank": "ten_and_half"},
]


def play_positions(cfg, n: int, seed: int) -> list[RookState]:
    """``n`` card-play positions of random play (random hands, random points of the play)."""
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        st = RookState(cfg, seed=rng.randrange(1 << 30))
        st.new_game()
        stop = rng.randrange(1, 4 * cfg_tricks(st))
        played = 0
        while st.phase != OVER and played < stop:
            legal = st.legal_mask()
            st.apply(rng.choice([a for a in range(legal.bit_length()) if legal >> a & 1]), legal)
            played += st.phase == PLAY
        if st.phase == PLAY:
            out.append(st)
    return out


def cfg_tricks(st: RookState) -> int:
    return st.L.n_tricks


@pytest.mark.parametrize("flags", FLAGS, ids=lambda f: ",".join(f"{k}={v}" for k, v in f.items()) or "default")
def test_compiled_rollouts_score_as_the_python_greedy_rollout(flags):
    from rook_env.agents.search.batched import BatchedRollouts

    cfg = make_config(episode="hand", **flags)
    states = play_positions(cfg, 40, seed=len(flags))
    greedy = GreedyRollout(card_tables(cfg))
    worlds, cards, expected = [], [], []
    for st in states:
        legal = st.legal_mask()
        for a in range(legal.bit_length()):
            if legal >> a & 1:
                w = st.clone()
                w.apply(a, legal)
                greedy.play_out(w)
                worlds.append(st)
                cards.append(a)
                expected.append(hand_score_diff(w))
    assert len(set(expected)) > 5  # real, varied outcomes
    got = BatchedRollouts(cfg, capacity=64).score_pairs(worlds, cards)  # several engine passes
    assert got.tolist() == expected


def test_the_batched_engine_makes_the_python_engines_choices_with_the_same_values():
    import rook_env
    from rook_env.agents.heuristic import HeuristicAgent
    from rook_env.agents.search import SearchAgent

    old = SearchAgent(seed=5, samples=6, engine="python")
    new = SearchAgent(seed=5, samples=6)
    new.exact_worlds = True  # the same worlds as the Python engine's sampler (not the compiled sampler's)
    assert new.engine == "batched" and old.engine == "python"
    heur = HeuristicAgent(seed=1)
    env = rook_env.raw_env()
    searched = 0
    for deal in range(2):
        env.reset(seed=100 + deal)
        while not env.game.is_over:
            obs = env.observe(env.agent_selection)
            a, b = old.act(obs), new.act(obs)
            assert a == b and old.last_values == new.last_values
            searched += new.last_values is not None
            env.step(a if env.game.current & 1 == 0 else heur.act(obs))
    assert searched > 10


def test_engine_argument_errors():
    from rook_env.agents.search import SearchAgent

    with pytest.raises(ValueError, match="engine must be one of auto, batched, python"):
        SearchAgent(engine="gpu")
    with pytest.raises(ValueError, match="engine='batched' needs rollout='greedy'"):
        SearchAgent(engine="batched", rollout="heuristic")
    with pytest.raises(ValueError, match="trump_calls='extended'"):
        SearchAgent(engine="batched", trump_calls="extended")
    assert SearchAgent(trump_calls="extended").engine == "python"  # auto: the Python rollouts where needed
    assert SearchAgent(rollout="heuristic").engine == "python"


def test_compiled_sampler_draws_the_python_samplers_distribution_under_every_constraint():
    from rook_env.agents.search.batched import sample_deals
    from rook_env.agents.search.worlds import NEST, Holder, WorldSampler

    # 20 unseen cards; seat 1 void in cards 0..4, seat 3 in 15..19; the nest must hold a counter (6 or 7)
    hs = [Holder(1, 5, forbidden=0x1F), Holder(2, 5), Holder(3, 5, forbidden=0xF8000), Holder(NEST, 5, needs_counter=True)]
    smp = WorldSampler((1 << 20) - 1, hs, counter_mask=(1 << 6) | (1 << 7))
    k = 20000
    fast = sample_deals((1 << 20) - 1, hs, (1 << 6) | (1 << 7), k, seed=123)
    assert fast.shape == (k, 4) and (np.bitwise_count(fast) == 5).all()
    assert (np.bitwise_or.reduce(fast, axis=1) == (1 << 20) - 1).all()  # every card dealt once
    assert ((fast[:, 0] & np.uint64(0x1F)) == 0).all() and ((fast[:, 2] & np.uint64(0xF8000)) == 0).all()
    assert ((fast[:, 3] & np.uint64(0xC0)) != 0).all()
    rng = random.Random(0)
    exact = np.array([smp.sample(rng) for _ in range(k)], np.uint64)
    bit = np.uint64(1) << np.arange(20, dtype=np.uint64)
    f_fast = ((fast[:, :, None] & bit) != 0).mean(axis=0)  # (holder, card) frequencies
    f_exact = ((exact[:, :, None] & bit) != 0).mean(axis=0)
    assert np.abs(f_fast - f_exact).max() < 0.025  # about 5 standard errors of a difference
    def draw(seed: int) -> np.ndarray:
        return sample_deals((1 << 20) - 1, hs, (1 << 6) | (1 << 7), 50, seed)

    assert (draw(9) == draw(9)).all()  # a function of the seed
    assert not (draw(9) == draw(10)).all()

"""Learned inference of the hidden cards: the weighted sampler draws exactly in proportion to the
model's weights within every hard constraint (uniform when the weights are equal), search with
learned worlds stays legal and consistent in real play, and the model's input is built from the
seat's observation and memory only."""

from __future__ import annotations

import copy
import itertools
import json
import math
import random
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st_

from rook_env.agents.heuristic import HeuristicAgent
from rook_env.agents.heuristic.play import known_voids
from rook_env.agents.heuristic.tables import card_tables, seat_reader
from rook_env.agents.search import SearchAgent
from rook_env.agents.search import inference
from rook_env.agents.search.inference import (DEFAULT_MODEL, N_COLS, HolderModel, WeightedWorldSampler,
                                              holder_column, load_model)
from rook_env.agents.search.worlds import NEST, WorldSampler, holders_for
from rook_env.games.partnership.config import make_config
from rook_env.games.partnership.rules import PLAY, RookState
from test_search import _brute_force, _check_deal, _obs, _random_constraints
from helpers import shuffle_hidden as _shuffle_hidden


def _random_weights(rng: random.Random, n_cards: int) -> np.ndarray:
    return np.array([[rng.choice([0.02, 0.3, 1.0, 3.0]) for _ in range(N_COLS)] for _ in range(n_cards)])


def _random_model(flags: dict, seed: int = 0, hidden: int = 32) -> HolderModel:
    """A holder model with random weights of the right shapes (strong enough preferences to skew worlds)."""
    cfg = make_config(**flags)
    size = seat_reader(cfg).size
    n = card_tables(cfg).layout.n_cards
    g = np.random.default_rng(seed)
    w = [g.normal(0, 0.3, (size + 12, hidden)), g.normal(0, 1.0, (hidden, n * N_COLS))]
    b = [np.zeros(hidden), g.normal(0, 1.0, n * N_COLS)]
    return HolderModel(w, b, n, size)


def _strict(seed: int = 0, samples: int = 3, **kw) -> SearchAgent:
    ag = SearchAgent(seed=seed, samples=samples, **kw)
    ag.strict = True
    ag.heuristic.strict = True
    return ag


@pytest.fixture
def model_path(tmp_path):
    path = tmp_path / "holders.npz"
    _random_model({}).save(path)
    return str(path)


# ============================================================================ the sampler
@settings(max_examples=60, deadline=None)
@given(st_.integers(0, 2**32 - 1), st_.integers(1, 30))
def test_weighted_deals_respect_every_constraint_and_equal_weights_count_like_uniform(seed, n_cards):
    rng = random.Random(seed)
    unseen, holders, counters, truth = _random_constraints(rng, n_cards)
    uniform = WorldSampler(unseen, holders, counters)
    flat = WeightedWorldSampler(unseen, holders, counters)
    assert math.isclose(flat.log_z, math.log(uniform.total), rel_tol=1e-9, abs_tol=1e-9)
    # the deal the constraints were made from has positive probability under any weights
    weighted = WeightedWorldSampler(unseen, holders, counters, _random_weights(rng, n_cards))
    assert weighted.log_prob(truth) > -math.inf
    for _ in range(10):
        _check_deal(unseen, holders, counters, weighted.sample(rng))


@settings(max_examples=40, deadline=None)
@given(st_.integers(0, 2**32 - 1), st_.integers(1, 30), st_.booleans())
def test_compiled_draws_are_exactly_the_python_loops(seed, n_cards, need_counter):
    """The compiled sampler (where numba is installed: search with learned worlds draws through it) is exactly the
    numpy one: the same dynamic programme, bit for bit; and sample_many gives the very deals of sample() called in a
    loop on an equal random stream, leaving the stream where the loop does."""
    rng = random.Random(seed)
    unseen, holders, counters, _ = _random_constraints(rng, n_cards, need_counter=need_counter)
    weights = _random_weights(rng, n_cards)
    sampler = WeightedWorldSampler(unseen, holders, counters, weights)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(inference.kernels, "AVAILABLE", False)
        numpy_dp = WeightedWorldSampler(unseen, holders, counters, weights)
    assert numpy_dp.log_z == sampler.log_z and numpy_dp.log_scale == sampler.log_scale
    for a_layer, b_layer in zip(numpy_dp.layers, sampler.layers, strict=True):
        np.testing.assert_array_equal(a_layer, b_layer)
    a, b = random.Random(seed + 1), random.Random(seed + 1)
    many = sampler.sample_many(a, 25)
    assert many.dtype == np.uint64 and many.shape == (25, len(holders))
    assert many.tolist() == [sampler.sample(b) for _ in range(25)]
    assert a.random() == b.random()
    for deal in many.tolist():
        _check_deal(unseen, holders, counters, deal)


@pytest.mark.parametrize("seed", [0, 1, 16, 19, 30])  # 31..110 deals, voids and a nest that needs a counter
def test_weighted_sampler_draws_in_proportion_to_the_weights(seed):
    rng = random.Random(seed)
    unseen, holders, counters, _ = _random_constraints(rng, n_cards=7, need_counter=True)
    deals = _brute_force(unseen, holders, counters)
    w = _random_weights(rng, 7)
    sampler = WeightedWorldSampler(unseen, holders, counters, w)
    # exact probabilities: the product of the weights, normalised over the consistent deals
    raw = {}
    for d in deals:
        raw[d] = math.prod(w[c, holder_column(h.who)] for h, m in zip(holders, d) for c in range(7) if m >> c & 1)
    z = sum(raw.values())
    for d in deals:
        assert math.isclose(math.exp(sampler.log_prob(d)), raw[d] / z, rel_tol=1e-9)
    assert math.isclose(sum(math.exp(sampler.log_prob(d)) for d in deals), 1.0, rel_tol=1e-9)
    n = 20_000
    freq = Counter(tuple(sampler.sample(rng)) for _ in range(n))
    assert set(freq) <= set(deals)
    expected = {d: n * raw[d] / z for d in deals}
    big = [d for d in deals if expected[d] >= 5]  # chi-square on the cells with enough mass
    chi2 = sum((freq.get(d, 0) - expected[d]) ** 2 / expected[d] for d in big)
    dof = max(len(big) - 1, 1)
    assert chi2 < dof + 6 * (2 * dof) ** 0.5 + 10
    # a deal that breaks a constraint has probability 0
    bad = list(deals[0])
    bad[0], bad[1] = bad[1], bad[0]
    if tuple(bad) not in raw:
        assert sampler.log_prob(bad) == -math.inf


def test_impossible_constraints_raise():
    from rook_env.agents.search.worlds import Holder
    with pytest.raises(ValueError, match="add up"):
        WeightedWorldSampler(0b111, [Holder(1, 2), Holder(2, 2)])
    with pytest.raises(ValueError, match="no deal"):
        WeightedWorldSampler(0b111, [Holder(1, 2, forbidden=0b011), Holder(2, 1)])


# ============================================================================ in real play
@pytest.mark.parametrize("flags", [{}, {"nest_discard": "no_counters_unless_forced"}])
def test_learned_worlds_keep_every_constraint_in_real_play(flags):
    """At every card-play decision the learned sampler admits the true deal and draws only consistent worlds."""
    cfg = make_config(**flags)
    tab, reader = card_tables(cfg), seat_reader(cfg)
    model = _random_model(flags)
    heur = [HeuristicAgent(**flags) for _ in range(4)]
    search = _strict(seed=1, samples=2, **flags)
    rng = random.Random(3)
    checked = 0
    for h in range(6):
        st = RookState(cfg, seed=70 + h)
        st.new_game()
        memories = {}
        while not st.is_over:
            me = st.current
            obs = _obs(st, me)
            if st.phase == PLAY:
                vec = obs["observation"]
                view = reader.read(vec)
                voids = known_voids(tab, view, view.trump, memories.get(me))
                search._memory.clear()
                if me in memories:
                    search._memory[memories[me].hand] = memories[me]
                unseen, holders = holders_for(tab, view, voids)
                truth = [st.discards if hd.who == NEST else st.hands[(me + hd.who) % 4] for hd in holders]
                from rook_env.agents.search.inference import learned_sampler
                sampler = learned_sampler(model, vec, voids, unseen, holders, tab.counter_mask)
                assert sampler.log_prob(truth) > -math.inf
                for _ in range(3):
                    _check_deal(unseen, holders, tab.counter_mask, sampler.sample(rng))
                a = search.act(obs)
                memories[me] = search._memory[st.hands[me] & ~(1 << a)]
                checked += 1
            else:
                a = heur[me].act(obs)
            st.apply(a)
    assert checked > 100


def test_model_input_does_not_depend_on_hidden_cards(model_path):
    """Permuting the cards a seat cannot see leaves the model's input (recorded at the model) and the
    learned search's choice unchanged, for a fresh agent and one carrying its memory of the hand."""
    cfg = make_config()
    rng = random.Random(11)
    agents = [_strict(seed=s, worlds=model_path) for s in range(4)]
    checked = changed = 0

    def recording(agent):
        seen = []
        probs = agent._world_model.probs
        agent._world_model.probs = lambda x: (seen.append(np.array(x)), probs(x))[1]
        return seen

    for h in range(5):
        st = RookState(cfg, seed=200 + h)
        st.new_game()
        for a in agents:
            a.reset()
        while not st.is_over:
            me = st.current
            obs = _obs(st, me)
            if st.phase == PLAY and rng.random() < 0.5:
                other = _shuffle_hidden(st, me, rng)
                changed += other.hands != st.hands or other.discards != st.discards
                twin = copy.deepcopy(agents[me])
                seen1, seen2 = recording(agents[me]), recording(twin)
                a = agents[me].act(obs)
                assert twin.act(_obs(other, me)) == a
                assert len(seen1) == len(seen2)
                for x1, x2 in zip(seen1, seen2):
                    assert np.array_equal(x1, x2)
                checked += len(seen1)
                del agents[me]._world_model.probs  # back to the class's method
            else:
                a = agents[me].act(obs)
            st.apply(a)
    assert checked > 20 and changed > 10


def test_learned_search_is_legal_and_skews_worlds(model_path):
    """Whole hands with learned worlds: legal, no fallback; a decision's values differ from uniform worlds'
    (the model changes which worlds are drawn), and the same seed gives the same values."""
    cfg = make_config()
    learned = [_strict(seed=s, worlds=model_path) for s in range(4)]
    uniform = _strict(seed=0)
    differs = 0
    st = RookState(cfg, seed=5)
    st.new_game()
    while not st.is_over:
        me = st.current
        obs = _obs(st, me)
        a = learned[me].act(obs)
        assert st.legal_mask() >> a & 1
        if st.phase == PLAY and learned[me].last_values is not None:
            fresh1, fresh2 = _strict(seed=9, worlds=model_path), _strict(seed=9, worlds=model_path)
            assert fresh1.act(obs) == fresh2.act(obs) and fresh1.last_values == fresh2.last_values
            uniform.act(obs)
            differs += uniform.last_values != learned[me].last_values
        st.apply(a)
    assert differs > 0
    assert sum(ag.fallbacks for ag in learned) == 0


# ============================================================================ loading, errors, no torch
def test_bad_worlds_and_corrupt_models_are_named(tmp_path, model_path):
    with pytest.raises(ValueError, match="worlds must be one of"):
        SearchAgent(worlds="bogus")
    with pytest.raises(ValueError, match="worlds must be one of"):
        SearchAgent(worlds=3)
    with pytest.raises(FileNotFoundError, match="no holder model"):
        SearchAgent(worlds=str(tmp_path / "missing.npz"))
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip")
    (tmp_path / "bad.json").write_text(json.dumps({"layers": 2, "n_cards": 41, "obs_size": 583}))
    with pytest.raises(ValueError, match="bad.npz is corrupt"):
        load_model(bad)
    with pytest.raises(ValueError, match="observations of size"):
        SearchAgent(worlds=model_path, deck="full")  # a full deck has another observation size
    m = load_model(model_path)
    assert m.n_cards == 41 and np.allclose(m.probs(np.zeros(m.obs_size + 12)).sum(-1), 1.0)


def test_inference_needs_no_torch():
    code = ("import sys, rook_env.agents.search.inference as i; from rook_env.agents.search import SearchAgent; "
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


@pytest.mark.skipif(not DEFAULT_MODEL.is_file(), reason="no shipped holder model")
def test_shipped_model_loads_and_plays():
    meta = json.loads(DEFAULT_MODEL.with_suffix(".json").read_text())
    assert "how" in meta and "eval" in meta
    ag = _strict(seed=0, worlds="learned")
    st = RookState(make_config(), seed=9)
    st.new_game()
    while not st.is_over:
        st.apply(ag.act(_obs(st, st.current)))
    assert ag.fallbacks == 0

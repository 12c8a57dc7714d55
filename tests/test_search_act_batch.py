"""SearchAgent.act_batch: many seats' decisions in one call, each what ``act`` would choose (the same card and
the same values), whatever the order and company of the rows; and the compiled world counting and sampling it
runs on, against the Python sampler."""

from __future__ import annotations

import copy
import random

import numpy as np
import pytest

from rook_env.games.partnership import kernels
from rook_env.agents.search import SearchAgent
from rook_env.agents.search.worlds import NEST, Holder, WorldSampler
from rook_env.games.partnership.config import make_config
from rook_env.games.partnership.observation import encode
from rook_env.games.partnership.rules import PLAY, RookState
from rook_env.vector import RookVectorEnv
from helpers import legal_mask_array as _mask, shuffle_hidden as _shuffle_hidden

pytestmark = pytest.mark.skipif(not kernels.AVAILABLE, reason="batched search needs numba")

FLAGS = [{}, {"nest_discard": "no_counters_unless_forced", "deck": "full", "first_lead": "bidder"}]


def strict(seed: int, samples: int = 6, **kw) -> SearchAgent:
    ag = SearchAgent(seed=seed, samples=samples, **kw)
    ag.strict = True  # internal errors raise instead of falling back
    ag.heuristic.strict = True
    return ag


def q_of(agent: SearchAgent, n_actions: int) -> np.ndarray:
    """``act``'s last values as act_batch's row (float32, NaN where not tried)."""
    q = np.full(n_actions, np.nan, np.float32)
    for a, v in (agent.last_values or {}).items():
        q[a] = v
    return q


@pytest.mark.parametrize("flags", FLAGS, ids=["default", "forced-nest,full"])
def test_act_batch_is_act_on_every_table_of_the_batched_engine(flags):
    """Tables of the batched engine played in lock-step: one act_batch per step over every table (memories
    keyed by table and seat) chooses what one act-agent per seat and table chooses, with the same values;
    bids, discards and trump included, and card play carrying each seat's memory of the hand."""
    tables = 6
    env = RookVectorEnv(tables, **flags)
    obs, info = env.reset(seed=11)
    batch = strict(3, **flags)
    single = {}  # one act-agent per key, of the same seed
    searched = with_memory = 0
    for _ in range(4 * env.layout.n_tricks + 12):
        seat, mask = info["seat"], info["action_mask"]
        keys = np.arange(tables) * 4 + seat
        acts, q = batch.act_batch(obs, mask, keys=keys, return_values=True)
        for t in range(tables):
            ag = single.setdefault(int(keys[t]), strict(3, **flags))
            remembered = ag.reader.read(obs[t]).hand in ag._memory  # its memory of this hand, if in card play
            a = ag.act({"observation": obs[t], "action_mask": mask[t]})
            assert acts[t] == a, f"table {t}"
            np.testing.assert_array_equal(q[t], q_of(ag, mask.shape[1]))
            searched += ag.last_values is not None
            with_memory += ag.last_values is not None and remembered
        obs, _, _, _, info = env.step(acts)
    assert searched > 60 and with_memory > 30  # searched decisions, most of them with a memory of the hand


def _play_positions(flags: dict, n: int, seed: int) -> list[tuple[RookState, int]]:
    """``n`` (state, seat to act) card-play positions with a choice of cards, from heuristic-free random play."""
    cfg = make_config(**flags)
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        st = RookState(cfg, seed=rng.randrange(1 << 30))
        st.new_game()
        stop = rng.randrange(40, 4 * st.L.n_tricks + 20)
        for _ in range(stop):
            if st.is_over:
                break
            legal = st.legal_mask()
            st.apply(rng.choice([a for a in range(legal.bit_length()) if legal >> a & 1]), legal)
        if not st.is_over and st.phase == PLAY and (st.legal_mask() & (st.legal_mask() - 1)):
            out.append((st, st.current))
    return out


def test_a_choice_does_not_depend_on_the_rows_order_or_company():
    """The same rows asked in one call, in reverse order, one at a time and in other groups: the same actions
    and values (a function of the seed and the row's observation)."""
    pos = _play_positions({}, 24, seed=2)
    obs = np.stack([encode(st, me) for st, me in pos])
    masks = np.stack([_mask(st) for st, _ in pos])
    keys = np.arange(len(pos))
    a, q = strict(7).act_batch(obs, masks, keys=keys, return_values=True)
    assert np.isfinite(q).sum(axis=1).min() >= 1 and len(set(a.tolist())) > 5
    rev = np.arange(len(pos))[::-1]
    a2, q2 = strict(7).act_batch(obs[rev], masks[rev], keys=keys[rev], return_values=True)
    np.testing.assert_array_equal(a2[::-1], a)
    np.testing.assert_array_equal(q2[::-1], q)
    one = strict(7)
    for i in range(len(pos)):  # alone, and in pairs with another row
        a1, q1 = one.act_batch(obs[i:i + 1], masks[i:i + 1], keys=keys[i:i + 1], return_values=True)
        assert a1[0] == a[i]
        np.testing.assert_array_equal(q1[0], q[i])
        j = (i * 7 + 3) % len(pos)
        if j != i:
            pair = np.array([j, i])
            ap, qp = strict(7).act_batch(obs[pair], masks[pair], keys=keys[pair], return_values=True)
            assert ap[1] == a[i]
            np.testing.assert_array_equal(qp[1], q[i])
    other = strict(8).act_batch(obs, masks, keys=keys, return_values=True)[1]
    assert not np.array_equal(np.nan_to_num(other), np.nan_to_num(q))  # the seed matters


@pytest.mark.parametrize("flags", FLAGS, ids=["default", "forced-nest,full"])
def test_act_batch_choices_do_not_depend_on_hidden_cards(flags):
    """Rows whose hidden cards are permuted (same observations): the same actions and values."""
    rng = random.Random(4)
    pos = _play_positions(flags, 16, seed=5)
    obs, obs2, masks = [], [], []
    changed = 0
    for st, me in pos:
        other = _shuffle_hidden(st, me, rng)
        changed += other.hands != st.hands or other.discards != st.discards
        obs.append(encode(st, me))
        obs2.append(encode(other, me))
        masks.append(_mask(st))
        assert np.array_equal(_mask(other), masks[-1])
    assert changed > 8
    obs, obs2, masks = np.stack(obs), np.stack(obs2), np.stack(masks)
    keys = np.arange(len(pos))
    agent = strict(5, **flags)
    twin = copy.deepcopy(agent)
    a, q = agent.act_batch(obs, masks, keys=keys, return_values=True)
    a2, q2 = twin.act_batch(obs2, masks, keys=keys, return_values=True)
    np.testing.assert_array_equal(a, a2)
    np.testing.assert_array_equal(q, q2)


def test_act_batch_without_keys_uses_acts_memory():
    """Without keys, act_batch files and reads act's memory (by hand): a hand played by act_batch one row at a
    time equals one played by act."""
    env = RookVectorEnv(1)
    obs, info = env.reset(seed=5)
    a_batch, a_act = strict(2), strict(2)
    while True:
        got = a_batch.act_batch(obs, info["action_mask"])[0]
        assert got == a_act.act({"observation": obs[0], "action_mask": info["action_mask"][0]})
        obs, _, term, _, info = env.step(np.array([got]))
        if term[0]:
            break
    assert len(a_batch._memory) == len(a_act._memory) > 0


def test_act_batch_argument_errors():
    ag = SearchAgent(seed=0, samples=2)
    pos = _play_positions({}, 2, seed=1)
    obs = np.stack([encode(st, me) for st, me in pos])
    masks = np.stack([_mask(st) for st, _ in pos])
    with pytest.raises(ValueError, match="observations have shape"):
        ag.act_batch(obs[:, :-1], masks)
    with pytest.raises(ValueError, match="masks have shape"):
        ag.act_batch(obs, masks[:1])
    with pytest.raises(ValueError, match="empty action mask"):
        ag.act_batch(obs, np.zeros_like(masks))
    with pytest.raises(ValueError, match="distinct"):
        ag.act_batch(obs, masks, keys=np.array([3, 3]))
    with pytest.raises(ValueError, match="keys must be 2 integers"):
        ag.act_batch(obs, masks, keys=np.array([0.5, 1.5]))


@pytest.mark.parametrize("kw", [{"engine": "python"}, {"worlds": "learned"}], ids=["python", "learned-worlds"])
def test_act_batch_is_act_with_the_python_engine_and_learned_worlds(kw):
    pos = _play_positions({}, 6, seed=3)
    obs = np.stack([encode(st, me) for st, me in pos])
    masks = np.stack([_mask(st) for st, _ in pos])
    a, q = strict(1, samples=3, **kw).act_batch(obs, masks, keys=np.arange(6), return_values=True)
    assert np.isfinite(q).any(axis=1).all()
    for i in range(6):
        one = strict(1, samples=3, **kw)
        assert one.act({"observation": obs[i], "action_mask": masks[i]}) == a[i]
        np.testing.assert_array_equal(q_of(one, masks.shape[1]), q[i])


# ============================================================================ compiled worlds
def _constraints(rng: random.Random):
    """Random unseen cards, holders (sizes adding up, random voids, maybe a counter needed) and counters."""
    n = rng.randrange(0, 45)
    cards = rng.sample(range(57), n)
    unseen = sum(1 << c for c in cards)
    nh = rng.choice([3, 4])
    cuts = sorted(rng.randrange(n + 1) for _ in range(nh - 1))
    sizes = [b - a for a, b in zip([0] + cuts, cuts + [n])]
    p_void = rng.choice([0.0, 0.05, 0.3])
    holders = [Holder(i + 1 if i < 3 else NEST, sizes[i], sum(1 << c for c in cards if rng.random() < p_void),
                      needs_counter=i == 3 and rng.random() < 0.5) for i in range(nh)]
    return unseen, holders, sum(1 << c for c in cards if rng.random() < 0.3)


def test_compiled_counting_is_the_python_samplers():
    """The compiled dynamic programme counts the consistent deals as WorldSampler does (float64 against exact
    integers), none exactly where WorldSampler finds none; its first draws are deals consistent with them."""
    from rook_env.agents.search.batched import sample_many

    rng = random.Random(1)
    cases = [_constraints(rng) for _ in range(400)]
    for unseen, holders, counters in cases[:3]:  # sizes that do not add up: no deal
        holders[0].size += 1
    exact = []
    for unseen, holders, counters in cases:
        try:
            exact.append(WorldSampler(unseen, holders, counters).total)
        except ValueError:
            exact.append(0)
    assert sum(e > 0 for e in exact) > 150 and sum(e == 0 for e in exact) > 50
    deals, ok = sample_many([c[0] for c in cases], [c[1] for c in cases], 0, 3, list(range(len(cases))))
    from rook_env.agents.search import batched

    for (unseen, holders, counters), e in zip(cases, exact):
        n_h, sizes, forb, need, _ = batched.holder_arrays([holders])
        total = batched.deal_tables(np.uint64(unseen), n_h[0], sizes[0], forb[0], need[0], np.uint64(counters),
                                    batched._FACT)[-1]
        assert (total == 0) == (e == 0) and total == pytest.approx(e, rel=1e-12)
    for i, (unseen, holders, counters) in enumerate(cases):
        d, ok1 = sample_many([unseen], [holders], counters, 4, [i])
        assert ok1[0] == (exact[i] > 0)
        for w in range(4 if ok1[0] else 0):
            union = 0
            for h, m in zip(holders, d[0, w].tolist()):
                assert m & union == 0 and m.bit_count() == h.size and m & h.forbidden == 0
                assert not h.needs_counter or m & counters
                union |= m
            assert union == unseen

"""Expert iteration's online labels (rook_env.training.labels.online): the current network plays, search rates its
card plays through act_batch, each seat's label a function of its own observations only; and act_batch's
``played`` (the memory follows the card really played)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from helpers import strict_search

from rook_env.games.partnership import kernels
from rook_env.agents.learned.model import ActorCritic
from rook_env.games.partnership.rules import PLAY
from rook_env.training.labels.online import TableLabeller
from rook_env.vector import RookVectorEnv

pytestmark = pytest.mark.skipif(not kernels.AVAILABLE, reason="batched search needs numba")


def small_labeller(tables: int = 4, seed: int = 5, worlds: str = "uniform") -> TableLabeller:
    torch.manual_seed(0)
    lab = TableLabeller(ActorCritic(583, 58, [16], 788).eval(), tables, seed, 4, {}, worlds)
    lab.search.strict = lab.search.heuristic.strict = True
    return lab


def test_labels_are_each_seats_own_and_replay_alone():
    """Every act_batch row of the labeller, replayed alone (a fresh agent of the same seed, that key's rows only,
    in order) gives the same values: a seat's label reads its own observations and memory, never another row's
    or a hidden card. The records are those rows (observation, mask, values), with the seat's critic input
    and its team's hand outcome."""
    lab = small_labeller()
    calls = []
    inner = lab.search.act_batch

    def spy(obs, mask, keys, return_values, played):
        acts, q = inner(obs, mask, keys, return_values=return_values, played=played)
        calls.append((obs.copy(), mask.copy(), keys.copy(), played.copy(), q.copy()))
        return acts, q

    lab.search.act_batch = spy
    records = []
    for _ in range(200):
        r = lab.step()
        if r is not None:
            records.append(r)
    assert records
    rec = {k: np.concatenate([r[k] for r in records]) for k in records[0]}
    assert lab.rated >= len(rec["q"]) > 0
    fresh = strict_search(5, samples=4)
    replayed = []
    for key in sorted({int(k) for c in calls for k in c[2]}):
        for obs, mask, keys, played, q in calls:
            for i in np.flatnonzero(keys == key):
                _, q1 = fresh.act_batch(obs[i:i + 1], mask[i:i + 1], keys[i:i + 1], return_values=True,
                                        played=played[i:i + 1])
                np.testing.assert_array_equal(q1[0], q[i])
                replayed.append(q[i])
    assert any(np.isfinite(q).any() for q in replayed)
    # each record is one of the searched rows, its values legal cards only
    rows = {(o.tobytes(), qq.tobytes()) for o, _, _, _, qs in calls for o, qq in zip(o, qs)}
    assert all((o.tobytes(), q.tobytes()) in rows for o, q in zip(rec["obs"], rec["q"]))
    assert (np.isfinite(rec["q"]) <= rec["mask"]).all() and np.isfinite(rec["q"]).any(axis=1).all()
    assert rec["cin"].shape == (len(rec["q"]), 788)
    np.testing.assert_array_equal(rec["cin"][:, :583], rec["obs"])  # the critic input starts with the observation
    assert set(np.unique(rec["seat"])) <= {0, 1, 2, 3}


def test_outcome_is_the_seats_team_hand_score_difference():
    lab = small_labeller(tables=1, seed=9)
    for _ in range(300):
        r = lab.step()
        if r is not None:
            break
    assert r is not None and lab.info["hand_over"][0]
    s0, s1 = lab.info["hand"]["hand_scores"][0]
    team0 = r["seat"] % 2 == 0
    assert team0.any() and (~team0).any()
    assert (r["outcome"][team0] == s0 - s1).all() and (r["outcome"][~team0] == s1 - s0).all()


def test_played_files_the_memory_after_the_card_played():
    env = RookVectorEnv(8)
    obs, info = env.reset(seed=3)
    agent = strict_search(1, samples=4)
    for _ in range(200):  # to the first card play with a choice at some table
        rows = np.flatnonzero((env.phase == PLAY) & (info["action_mask"].sum(axis=1) > 1))
        if rows.size:
            break
        obs, _, _, _, info = env.step(info["action_mask"].argmax(axis=1))
    t = int(rows[0])
    o, m, key = obs[t:t + 1], info["action_mask"][t:t + 1], np.array([t * 4 + int(info["seat"][t])])
    own = int(agent.act_batch(o, m, key)[0])
    other = int(next(a for a in np.flatnonzero(m[0]) if a != own))
    hand = agent._keyed_memory[int(key[0])].hand | 1 << own  # the hand before the play
    agent.act_batch(o, m, key, played=np.array([other]))
    assert agent._keyed_memory[int(key[0])].hand == hand & ~(1 << other)  # matched by the seat's next decision
    with pytest.raises(ValueError, match="not legal"):
        agent.act_batch(o, m, key, played=np.array([int(np.flatnonzero(m[0] == 0)[0])]))
    with pytest.raises(ValueError, match="needs keys"):
        agent.act_batch(o, m, played=np.array([other]))
    with pytest.raises(ValueError, match="one integer action per row"):
        agent.act_batch(o, m, key, played=np.array([other, other]))


def test_learned_worlds_rate_the_same_positions_otherwise():
    """exit.worlds: "learned" labels the positions the network reaches (the same ones: the network's actions do not
    depend on search) with worlds drawn from the shipped holder model, so the values differ from uniform worlds'."""
    runs = {}
    for worlds in ("uniform", "learned"):
        lab = small_labeller(worlds=worlds)
        assert lab.search.worlds == worlds
        recs = [r for r in (lab.step() for _ in range(120)) if r is not None]
        runs[worlds] = {k: np.concatenate([r[k] for r in recs]) for k in recs[0]}
    uni, learned = runs["uniform"], runs["learned"]
    np.testing.assert_array_equal(uni["obs"], learned["obs"])
    assert np.array_equal(np.isfinite(uni["q"]), np.isfinite(learned["q"]))
    assert not np.array_equal(np.nan_to_num(uni["q"]), np.nan_to_num(learned["q"]))

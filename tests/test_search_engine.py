"""The batched engine started from given rules states (``PartnershipVectorEnv.load_states``), the way
batched search starts its tables: lock-step against the rules state from every phase, every backend."""

from __future__ import annotations

import random

import numpy as np
import pytest

from rook_env.games.partnership import kernels
from rook_env.games.partnership.config import make_config
from rook_env.games.partnership.observation import encode
from rook_env.games.partnership.rules import OVER, PHASE_NAMES, PLAY, RookState
from rook_env.vector import RookVectorEnv

BACKENDS = ["numpy"] + (["numba"] if kernels.AVAILABLE else [])
FLAGS = [
    {},
    {"nest_discard": "no_counters_unless_forced", "first_lead": "bidder"},
    {"circus_rook": "on", "black_two_trump": "on", "deck": "full"},
    {"trump_calls": "extended", "last_trick_bonus": 20, "majority_tricks_bonus": 10},
    {"episode": "game", "target_score": 300},
]


def mask_int(row: np.ndarray) -> int:
    return int.from_bytes(np.packbits(row != 0, bitorder="little").tobytes(), "little")


def random_positions(cfg, n: int, seed: int) -> list[RookState]:
    """``n`` positions of random play, drawn at random points of random hands (every phase)."""
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        st = RookState(cfg, seed=rng.randrange(1 << 30))
        st.new_game(scores=[rng.randrange(-200, 200), rng.randrange(-200, 200)])
        stop = rng.randrange(60)
        for _ in range(stop):
            legal = st.legal_mask()
            st.apply(rng.choice([a for a in range(legal.bit_length()) if legal >> a & 1]), legal)
            if st.phase == OVER or st.hand_result is not None and st.hands_played:
                break
        if st.phase != OVER:
            out.append(st.clone())
    return out


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("flags", FLAGS, ids=lambda f: ",".join(f"{k}={v}" for k, v in f.items()) or "default")
def test_loaded_tables_play_in_lockstep_with_the_rules_state(flags, backend):
    cfg = make_config(**flags)
    states = random_positions(cfg, 32, seed=len(flags))
    phases = {s.phase for s in states}
    assert PLAY in phases and len(phases) >= 3  # play and at least two phases before it among them
    env = RookVectorEnv(len(states), backend=backend, **flags)
    obs, info = env.load_states(states)  # no reset: loading alone makes the tables playable
    rng = random.Random(7)
    live = [True] * len(states)
    ended: set[int] = set()
    for _ in range(80):
        actions = np.zeros(len(states), np.int64)
        for t, st in enumerate(states):
            if not live[t]:
                actions[t] = int(np.flatnonzero(info["action_mask"][t])[0])
                continue
            assert info["seat"][t] == st.current
            np.testing.assert_array_equal(obs[t], encode(st, st.current), err_msg=f"table {t} {PHASE_NAMES[st.phase]}")
            legal = st.legal_mask()
            assert mask_int(info["action_mask"][t]) == legal
            actions[t] = rng.choice([a for a in range(legal.bit_length()) if legal >> a & 1])
        before = [(st.hands_played, st.deals) for st in states]
        obs, rewards, term, trunc, info = env.step(actions)
        for t, st in enumerate(states):
            if not live[t]:
                continue
            st.apply(int(actions[t]))
            if (st.hands_played, st.deals) != before[t] or st.phase == OVER:  # a hand ended, or a redeal
                assert info["hand_over"][t] == (st.hands_played != before[t][0])
                if info["hand_over"][t]:
                    assert info["hand"]["hand_scores"][t].tolist() == list(st.hand_result["hand_scores"])
                    assert info["hand"]["scores"][t].tolist() == list(st.scores)
                    ended.add(t)
                live[t] = False  # the engine deals from its own stream from here
    assert len(ended) > len(states) // 2  # most positions were played to the end of their hand


def test_load_states_counts_tables_and_checks_states():
    cfg = make_config()
    st = random_positions(cfg, 1, seed=3)[0]
    env = RookVectorEnv(4, backend="numpy")
    with pytest.raises(ValueError, match="2 states for 1 tables"):
        env.load_states([st, st], tables=[0])
    with pytest.raises(ValueError, match="distinct indices in 0..3"):
        env.load_states([st, st], tables=[1, 1])
    with pytest.raises(ValueError, match="configuration"):
        env.load_states([RookState(make_config(trump_calls="extended"))], tables=[2])
    with pytest.raises(ValueError, match="not a RookState"):
        env.load_states(["a state"])
    over = RookState(cfg)
    over.phase = OVER
    with pytest.raises(ValueError, match="is over"):
        env.load_states([over])
    env.load_states([st] * 4)  # one object for every table: encoded once, loaded four times
    assert (env.current_player == st.current).all()


@pytest.mark.parametrize("backend", BACKENDS)
def test_loading_without_observations_keeps_the_state_and_masks(backend):
    cfg = make_config()
    states = random_positions(cfg, 16, seed=5)
    env = RookVectorEnv(len(states), backend=backend)
    _, info = env.load_states(states, observations=False)
    for t, st in enumerate(states):
        assert info["seat"][t] == st.current and mask_int(info["action_mask"][t]) == st.legal_mask()
    assert (env.phase == [st.phase for st in states]).all()


def test_finish_hands_refuses_tables_with_cards_left():
    env = RookVectorEnv(2, backend="numpy")
    env.load_states(random_positions(make_config(), 2, seed=8))
    with pytest.raises(ValueError, match="cards left to play"):
        env.finish_hands([0, 1])


def test_loading_without_a_refresh_writes_the_state_only():
    """refresh=False (search's play-outs): the loaded tables hold the states; masks stay as they were."""
    cfg = make_config()
    states = random_positions(cfg, 8, seed=6)
    env = RookVectorEnv(len(states), backend="numpy")
    obs, info = env.load_states(states, observations=False, refresh=False)
    assert obs is None and info["action_mask"] is None  # never refreshed
    assert (env.phase == [st.phase for st in states]).all() and (env.current == [st.current for st in states]).all()
    assert env.hands.tolist() == [st.hands for st in states]
    _, info = env.load_states(states[::-1], observations=False, refresh=False)
    assert info["action_mask"] is None and env.hands.tolist() == [st.hands for st in states[::-1]]
    _, info = env.load_states(states, observations=False)  # a refreshing load makes the masks
    assert [mask_int(m) for m in info["action_mask"]] == [st.legal_mask() for st in states]

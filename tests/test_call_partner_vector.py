"""The batched engine of call-your-partner (``RookVectorEnv(N, game="call_partner")``) against n raw
call-your-partner environments, in lock-step.

Every table of the batched engine must show exactly what a ``raw_env`` reset with that table's
seed shows: observation, mask, seat to act, rewards, episode ends, hand results, critic input.
"""

from __future__ import annotations

import numpy as np
import pytest

from rook_env.games.call_partner import env as checked_env
from rook_env.games.call_partner import raw_env
from rook_env.vector import RookVectorEnv, sample_legal

from helpers import cp_deal


def CallPartnerVectorEnv(num_envs: int, **kwargs) -> RookVectorEnv:
    """The engine through the front door every caller uses."""
    return RookVectorEnv(num_envs, game="call_partner", **kwargs)


def lockstep(flags: dict, num_envs: int, steps: int, seed: int, max_hands: int | None = None,
             illegal_p: float = 0.0) -> dict:
    """Random legal play on both; asserts equality at every step. Returns counts of what was seen.

    ``illegal_p`` > 0: the engine runs with ``illegal_action="terminate"`` beside ``env()`` (PettingZoo's
    TerminateIllegalWrapper semantics), and each table plays an illegal action with that probability."""
    terminate = illegal_p > 0
    venv = CallPartnerVectorEnv(num_envs, max_hands=max_hands, illegal_action="terminate" if terminate else "raise",
                                illegal_reward=-2.5, **flags)
    obs, info = venv.reset(seed=seed)
    make = (lambda: checked_env(max_hands=max_hands, illegal_reward=-2.5, **flags)) if terminate else \
        (lambda: raw_env(max_hands=max_hands, **flags))
    envs = [make() for _ in range(num_envs)]
    for e, s in zip(envs, venv.table_seeds):
        e.reset(seed=s)
    n = venv.players
    rng = np.random.default_rng(seed)
    seen = {"hands": 0, "episodes": 0, "truncated": 0, "illegal": 0}
    for t in range(steps):
        for i, e in enumerate(envs):
            agent = e.agent_selection
            o = e.observe(agent)
            assert info["seat"][i] == e.agent_seat[agent], (t, i)
            np.testing.assert_array_equal(obs[i], o["observation"], err_msg=f"step {t} table {i}")
            np.testing.assert_array_equal(info["action_mask"][i], o["action_mask"])
        if t % 7 == 0:  # critic input and any seat's view, now and then
            seat = rng.integers(n, size=num_envs)
            st = venv.state_for(seat)
            ob = venv.observe(seat)
            for i, e in enumerate(envs):
                np.testing.assert_array_equal(st[i], e.state_for(f"player_{seat[i]}"))
                np.testing.assert_array_equal(ob[i], e.observe(f"player_{seat[i]}")["observation"])
        actions = sample_legal(info["action_mask"], rng)
        wrong = rng.random(num_envs) < illegal_p
        for i in np.flatnonzero(wrong):
            actions[i] = rng.choice(np.flatnonzero(info["action_mask"][i] == 0))
        mask_before = info["action_mask"]
        obs, rewards, term, trunc, info = venv.step(actions)
        assert rewards.shape == (num_envs, n) and rewards.dtype == np.float32
        assert info["illegal"].tolist() == wrong.tolist()
        for i, e in enumerate(envs):
            played = e.game.hands_played
            if wrong[i]:
                with pytest.warns(UserWarning, match="the episode ends"):
                    e.step(int(actions[i]))
            else:
                assert mask_before[i, actions[i]]
                e.step(int(actions[i]))
            expected = np.array([e.rewards[a] for a in e.possible_agents], np.float32)
            np.testing.assert_allclose(rewards[i], expected, rtol=0, atol=1e-5, err_msg=f"step {t} table {i}")
            assert term[i] == all(e.terminations.values()), (t, i)
            # env() ends an illegal episode as terminated and truncated; the engine reports it terminated
            assert trunc[i] == (all(e.truncations.values()) and not wrong[i]), (t, i)
            seen["illegal"] += int(wrong[i])
            hand = e.infos["player_0"]["hand"] if e.game.hands_played != played else None
            assert info["hand_over"][i] == (hand is not None)
            assert info["hand"][i] == hand
            if hand is not None:
                seen["hands"] += 1
                assert abs(rewards[i].sum()) < 1e-3 or flags.get("reward") in ("team_score", "win_loss")
            if term[i] or trunc[i]:
                seen["episodes"] += 1
                seen["truncated"] += int(trunc[i])
                e.reset()  # continues its stream, as the vector table does
    return seen


@pytest.mark.parametrize("players", [4, 5, 6])
def test_lockstep_with_raw_env(players):
    seen = lockstep({"players": players}, num_envs=4, steps=400, seed=players)
    assert seen["episodes"] >= 4  # auto-reset was exercised


@pytest.mark.parametrize("flags", [
    {"players": 5, "deck": "no_twos_to_fours", "reward": "team_score", "nest_discard": "no_counters_unless_forced"},
    {"players": 6, "all_pass": "redeal", "no_counter_redeal": "off", "first_lead": "bidder", "reward": "win_loss"},
    {"players": 4, "deck": "no_twos_to_fours", "first_lead": "left_of_bidder"},
])
def test_lockstep_other_flags(flags):
    assert lockstep(flags, num_envs=3, steps=300, seed=7)["episodes"] >= 2


@pytest.mark.parametrize("flags", [{"players": 5}, {"players": 6, "episode": "game", "target_score": 300}])
def test_lockstep_terminate_mode_matches_env(flags):
    """illegal_action="terminate" against env(): the offender gets illegal_reward, the episode ends, the
    table's next episode continues its stream exactly as env().reset() does."""
    seen = lockstep(flags, num_envs=4, steps=300, seed=9, illegal_p=0.02)
    assert seen["illegal"] >= 5 and seen["episodes"] >= seen["illegal"]


def test_lockstep_game_episodes_and_max_hands():
    seen = lockstep({"players": 5, "episode": "game"}, num_envs=3, steps=500, seed=3, max_hands=2)
    assert seen["truncated"] >= 2 and seen["hands"] >= 2 * seen["truncated"]


def test_auto_reset_convention_and_shapes():
    env = CallPartnerVectorEnv(2, players=5)
    obs, info = env.reset(seed=0)
    assert obs.shape == (2, env.obs_dim) and obs.dtype == np.float32
    assert info["action_mask"].shape == (2, env.n_actions) and info["action_mask"].dtype == np.int8
    assert env.single_observation_space.shape == (env.obs_dim,) and env.single_action_space.n == env.n_actions
    rng = np.random.default_rng(0)
    for _ in range(2000):
        obs, rewards, term, trunc, info = env.step(sample_legal(info["action_mask"], rng))
        if term.any():
            i = int(np.flatnonzero(term)[0])
            assert rewards[i].any() and info["hand_over"][i]
            # the returned observation is already the next episode's first decision: a fresh auction
            assert env.states[i].phase == 0 and not env.states[i].bid_history
            assert env.states[i].scores == [0] * 5
            return
    pytest.fail("no hand finished in 2000 steps")


def test_seeded_reset_is_reproducible_and_tables_differ():
    a, b = CallPartnerVectorEnv(3, players=4), CallPartnerVectorEnv(3, players=4)
    oa, _ = a.reset(seed=11)
    ob, _ = b.reset(seed=11)
    np.testing.assert_array_equal(oa, ob)
    assert len(set(a.table_seeds)) == 3
    assert len({tuple(s.hands) for s in a.states}) == 3


def test_fixed_deals_through_options():
    env = CallPartnerVectorEnv(2, players=5)
    hands, nest = cp_deal(env.config)
    env.reset(seed=0, options=[{"hands": hands, "nest": nest, "dealer": 2}, None])
    assert [sorted(np.flatnonzero([(h >> c) & 1 for c in range(env.layout.n_cards)])) for h in env.states[0].hands] \
        == [sorted(h) for h in hands]
    assert env.current[0] == 3  # left of the dealer bids first
    with pytest.raises(ValueError, match=r"options\[1\].*hands"):
        env.reset(options=[None, {"hands": hands[:2], "nest": nest}])
    with pytest.raises(ValueError, match="unknown key"):
        env.reset(options=[{"dealr": 1}, None])


def test_bad_actions_raise_naming_the_table_and_apply_nothing():
    env = CallPartnerVectorEnv(3, players=5)
    obs, info = env.reset(seed=1)
    legal = info["action_mask"].argmax(axis=1)
    illegal = legal.copy()
    illegal[1] = np.flatnonzero(info["action_mask"][1] == 0)[0]
    before = [list(s.bid_history) for s in env.states]
    with pytest.raises(ValueError, match=r"table 1: illegal action"):
        env.step(illegal)
    assert [list(s.bid_history) for s in env.states] == before
    with pytest.raises(ValueError, match="outside the action space"):
        env.step(np.full(3, env.n_actions))
    with pytest.raises(ValueError, match="shape"):
        env.step(legal[:2])
    with pytest.raises(ValueError, match="integer"):
        env.step(legal.astype(np.float32))
    with pytest.raises(ValueError, match="seat must be"):
        env.observe(5)


def test_bad_construction_and_use_before_reset():
    with pytest.raises(ValueError, match="players"):
        CallPartnerVectorEnv(2, players=3)
    with pytest.raises(ValueError, match="rook_rank"):
        CallPartnerVectorEnv(2, rook_rank="low")
    with pytest.raises(ValueError, match="num_envs"):
        CallPartnerVectorEnv(0)
    with pytest.raises(RuntimeError, match="reset"):
        CallPartnerVectorEnv(1).step(np.zeros(1, np.int64))


def test_the_front_door_returns_the_games_engine():
    from rook_env.games.call_partner.vector import CallPartnerVectorEnv as OldPath
    from rook_env.games.call_partner.vector import CallPartnerVectorEnv as Engine

    env = RookVectorEnv(2, game="call_partner", players=6)
    assert type(env) is Engine and OldPath is Engine and isinstance(env, RookVectorEnv)
    assert env.game == "call_partner" and env.players == env.n_seats == 6 and env.backend == "numpy"
    assert Engine(2, players=6).config == env.config  # the engine class itself takes the same arguments
    with pytest.raises(ValueError, match=r"plays game 'call_partner', not game='partnership'"):
        Engine(2, game="partnership")
    with pytest.raises(ValueError, match=r"game 'call_partner' has no compiled kernels"):
        RookVectorEnv(2, game="call_partner", backend="numba")
    with pytest.raises(ValueError, match="deal_source: game 'call_partner'"):
        RookVectorEnv(2, game="call_partner", deal_source=lambda t, ng: [None] * len(t))


def test_state_for_matches_raw_env_after_partners_are_known():
    """state_for is read from the rules states (no raw_env inside the engine): late in a hand, with the
    partners fixed, every seat's vector equals raw_env's."""
    env = CallPartnerVectorEnv(3, players=5)
    _, info = env.reset(seed=4)
    rng = np.random.default_rng(4)
    for _ in range(60):
        _, _, _, _, info = env.step(sample_legal(info["action_mask"], rng))
    assert any(s.partners for s in env.states)
    raw = raw_env(players=5)
    for seat in range(5):
        st = env.state_for(seat)
        for i, state in enumerate(env.states):
            raw.game = state
            np.testing.assert_array_equal(st[i], raw.state_for(f"player_{seat}"))
    assert st.shape == (3, raw.state_space.shape[0]) == (3, env.state_dim)


def test_terminate_mode_pays_the_offender_and_starts_a_new_episode():
    """illegal_action="terminate" (the shared step loop): the offending table's episode ends, its offender
    gets illegal_reward and the others 0, info["illegal"] marks it, the table is dealt anew; the other
    tables step normally."""
    env = CallPartnerVectorEnv(3, players=5, illegal_action="terminate", illegal_reward=-3.0)
    _, info = env.reset(seed=2)
    rng = np.random.default_rng(2)
    for _ in range(7):  # into the auction, away from the first decision
        _, _, _, _, info = env.step(sample_legal(info["action_mask"], rng))
    offender = int(info["seat"][1])
    actions = sample_legal(info["action_mask"], rng)
    actions[1] = np.flatnonzero(info["action_mask"][1] == 0)[0]
    history = [list(s.bid_history) for s in env.states]
    _, rewards, term, trunc, info = env.step(actions)
    assert info["illegal"].tolist() == [False, True, False] and term.tolist() == [False, True, False]
    expected = np.zeros(5, np.float32)
    expected[offender] = -3.0
    np.testing.assert_array_equal(rewards[1], expected)
    assert not info["hand_over"][1] and info["hand"][1] is None
    assert env.states[1].bid_history == [] and env.states[1].hands_played == 0  # a fresh deal
    for i in (0, 2):
        assert len(env.states[i].bid_history) > len(history[i]) or env.states[i].phase != 0

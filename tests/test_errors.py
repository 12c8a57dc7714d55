"""Bad input and misuse at the edges of the environment: every case is a clear error naming the
problem (or, where PettingZoo requires it, a documented outcome), and a rejected call changes nothing."""

from __future__ import annotations

import copy
import importlib
import pickle
import random
import subprocess
import sys
import warnings

import numpy as np
import pettingzoo
import pytest
from helpers import complete_deal, walk

import rook_env
from rook_env.games.partnership.observation import SCORE_CLIP, obs_layout

MAKERS = [rook_env.raw_env, rook_env.env]


def finish_episode(e, seed: int = 0) -> None:
    """Play random legal moves, then step every done agent out, as ``agent_iter`` does."""
    rng = random.Random(seed)
    for agent in e.agent_iter():
        _, _, term, trunc, _ = e.last()
        e.step(None if term or trunc else rng.choice(e.unwrapped.game.legal_actions()))


# ------------------------------------------------------------------------------ before reset()
@pytest.mark.parametrize("make", MAKERS)
@pytest.mark.parametrize(
    "call",
    [
        lambda e: e.last(),
        lambda e: e.last(observe=False),
        lambda e: e.state(),
        lambda e: e.state_for("player_1"),
        lambda e: e.unwrapped.legal_actions(),
        lambda e: e.unwrapped.game,
        lambda e: e.unwrapped.game.legal_actions(),
        lambda e: e.unwrapped.decode("player_0"),
        lambda e: e.step(0),
        lambda e: e.observe("player_0"),
    ],
)
def test_every_call_before_reset_raises_runtime_error_naming_reset(make, call):
    e = make()
    with pytest.raises(RuntimeError, match=r"reset\(\)"):
        call(e)


def test_not_reset_error_keeps_hasattr_and_getattr_default_working():
    e = rook_env.env()
    assert not hasattr(e, "game") and getattr(e, "game", None) is None
    assert e.agents == [] and list(e.agent_iter()) == []
    with pytest.raises(RuntimeError, match="reset"):
        rook_env.env(render_mode="ansi").render()


# ------------------------------------------------------------------------------ agents
@pytest.mark.parametrize("make", MAKERS)
@pytest.mark.parametrize("agent", ["player_9", "player", 0, None, ["player_0"]])
def test_unknown_agent_raises_value_error_naming_it(make, agent):
    e = make()
    e.reset(seed=0)
    for call in (e.observe, e.state_for, e.observation_space, e.action_space, e.unwrapped.decode):
        with pytest.raises(ValueError, match="unknown agent") as exc:
            call(agent)
        assert repr(agent) in str(exc.value) and "player_0" in str(exc.value)


@pytest.mark.parametrize("make", MAKERS)
def test_step_and_last_after_every_agent_is_done_raise_runtime_error(make):
    e = make()
    e.reset(seed=1)
    finish_episode(e)
    assert e.agents == []
    with pytest.raises(RuntimeError, match=r"every agent is done.*reset\(\)"):
        e.step(None)
    with pytest.raises(RuntimeError, match=r"every agent is done.*reset\(\)"):
        e.step(0)
    with pytest.raises(RuntimeError, match=r"every agent is done.*reset\(\)"):
        e.last()
    # Observing a finished seat still works (the final position), and reset() starts afresh.
    assert e.observe("player_0")["action_mask"].sum() == 0
    e.reset(seed=2)
    assert len(e.agents) == 4 and e.last()[0]["action_mask"].sum() > 0


# ------------------------------------------------------------------------------ seeds, max_hands
def _deal_of(e):
    game = e.unwrapped.game
    return list(game.hands), game.nest, game.dealer


@pytest.mark.parametrize("seed", [np.int64(3), np.int32(3), np.uint8(3)])
def test_numpy_integer_seed_is_accepted_like_the_int(seed):
    a, b = rook_env.raw_env(), rook_env.raw_env()
    a.reset(seed=seed)
    b.reset(seed=3)
    assert _deal_of(a) == _deal_of(b)


@pytest.mark.parametrize("make", MAKERS)
@pytest.mark.parametrize("seed", ["abc", 1.5, 3.0, True, -1, [3], b"3"])
def test_non_integer_or_negative_seed_is_rejected_and_changes_nothing(make, seed):
    e = make()
    e.reset(seed=5)
    before = _deal_of(e), e.unwrapped._rng.getstate()
    with pytest.raises(ValueError, match="seed"):
        e.reset(seed=seed)
    assert (_deal_of(e), e.unwrapped._rng.getstate()) == before


def test_numpy_integer_max_hands_is_accepted():
    e = rook_env.raw_env(episode="game", max_hands=np.int64(3))
    assert e.max_hands == 3 and type(e.max_hands) is int


@pytest.mark.parametrize("make", MAKERS)
@pytest.mark.parametrize("max_hands", [0, -2, 1.5, "3", True])
def test_bad_max_hands_is_rejected(make, max_hands):
    with pytest.raises(ValueError, match="max_hands"):
        make(episode="game", max_hands=max_hands)


@pytest.mark.parametrize("make", MAKERS)
def test_max_hands_with_hand_episodes_is_rejected(make):
    with pytest.raises(ValueError, match="max_hands=3 applies only to episode='game'"):
        make(max_hands=3)


# ------------------------------------------------------------------------------ truncation
@pytest.mark.parametrize("make", MAKERS)
def test_truncated_game_shows_no_next_deal_and_every_mask_is_zero(make):
    e = make(episode="game", max_hands=2, target_score=10_000)
    e.reset(seed=4)
    rng = random.Random(4)
    while not any(e.truncations.values()):
        assert not any(e.terminations.values())
        e.step(rng.choice(e.unwrapped.game.legal_actions()))
    game = e.unwrapped.game
    assert game.hands_played == 2
    assert all(e.truncations.values()) and not any(e.terminations.values())
    assert game.is_over and game.winner == -1 and game.deals == 2 and game.hands == [0, 0, 0, 0]
    assert e.legal_actions() == []
    ol = obs_layout(e.unwrapped.config)
    for agent in e.possible_agents:
        ob = e.observe(agent)
        assert ob["action_mask"].sum() == 0, f"{agent} may act after truncation"
        assert not ob["observation"][ol.slices["hand"]].any(), f"{agent} sees a hand of a deal never played"
        view = e.unwrapped.decode(agent)
        assert view.phase == "over" and len(view.played) == game.L.n_cards - 5  # the last hand's end
    finish_episode(e)
    assert e.agents == []


# ------------------------------------------------------------------------------ reset options
@pytest.mark.parametrize("make", MAKERS)
@pytest.mark.parametrize("options", ["hands", ["scores"], 3, ("dealer", 1)])
def test_options_that_are_not_a_dict_are_rejected(make, options):
    e = make()
    with pytest.raises(ValueError, match="options must be a dict"):
        e.reset(options=options)


@pytest.mark.parametrize("make", MAKERS)
@pytest.mark.parametrize("hands", ["abcd", b"abcd", {0: [1]}, [[0] * 9, "abcdefghi", [1] * 9, [2] * 9]])
def test_string_hands_are_not_card_lists(make, hands):
    e = make()
    with pytest.raises(ValueError, match="lists of card ids"):
        e.reset(options={"hands": hands, "nest": [0, 1, 2, 3, 4]})


@pytest.mark.parametrize("make", MAKERS)
@pytest.mark.parametrize("scores", [[10**42, 0], [0, -(10**6)], [1201, 0], [0, -1201]])
def test_scores_beyond_the_encodable_range_are_rejected(make, scores):
    e = make()
    e.reset(seed=0)
    before = e.unwrapped.game.to_dict()
    with pytest.raises(ValueError, match=r"scores=.*out of range.*-1200\.\.1200"):
        e.reset(options={"scores": scores})
    assert e.unwrapped.game.to_dict() == before


@pytest.mark.parametrize("target", [300, 7, 1000])
def test_scores_at_the_bounds_are_encoded_exactly(target):
    lim = int(SCORE_CLIP * target)
    e = rook_env.raw_env(target_score=target)
    for scores in ([lim, -lim], [-lim, lim - 1], [1, -1]):
        e.reset(seed=0, options={"scores": scores})
        ob = e.observe("player_1")["observation"]
        assert np.isfinite(ob).all() and ob in e.observation_space("player_1")["observation"]
        assert e.unwrapped.decode("player_1").scores == (scores[1], scores[0])
        assert e.unwrapped.decode("player_2").scores == (scores[0], scores[1])


def test_a_rejected_reset_draws_nothing_from_the_rng():
    """A bad option is found before the dealer is drawn, so the stream of deals is unchanged."""
    hands, nest = complete_deal({})
    a, b = rook_env.raw_env(), rook_env.raw_env()
    a.reset(seed=9)
    b.reset(seed=9)
    bad = [[*hands[:3], hands[3][:8]], nest]  # a short hand
    for opts in ({"hands": bad[0], "nest": bad[1]}, {"dealer": 7}, {"scores": [1, "x"]}, {"hands": hands}):
        with pytest.raises(ValueError):
            a.reset(options=opts)
    a.reset()
    b.reset()
    assert _deal_of(a) == _deal_of(b)


# ------------------------------------------------------------------------------ illegal_reward
@pytest.mark.parametrize("value", ["x", None, float("nan"), float("inf"), -float("inf"), [1.0], True])
def test_bad_illegal_reward_is_rejected_naming_it(value):
    with pytest.raises(ValueError, match="illegal_reward"):
        rook_env.env(illegal_reward=value)


@pytest.mark.parametrize("value", [-5, np.float32(-2.5), np.int64(-3)])
def test_numeric_illegal_reward_is_accepted(value):
    e = rook_env.env(illegal_reward=value)
    assert e.illegal_reward == float(value) and type(e.illegal_reward) is float


# ------------------------------------------------------------------------------ pickling
@pytest.mark.parametrize("make", MAKERS)
@pytest.mark.parametrize("steps", [0, 7, 60])
def test_pickle_mid_episode_continues_identically(make, steps):
    e = make(episode="game", target_score=200, reward="win_loss")
    e.reset(seed=12)
    walk(e, seed=steps, steps=steps)
    p = pickle.loads(pickle.dumps(e))
    assert p.unwrapped.game.to_dict() == e.unwrapped.game.to_dict()
    r1, r2 = random.Random(5), random.Random(5)
    for _ in range(300):  # across hand ends: the next deals come from the pickled RNG
        assert p.agent_selection == e.agent_selection and p.agents == e.agents
        assert p.rewards == e.rewards and p.terminations == e.terminations and p.infos == e.infos
        for a in e.agents:
            assert np.array_equal(p.observe(a)["observation"], e.observe(a)["observation"])
            assert np.array_equal(p.observe(a)["action_mask"], e.observe(a)["action_mask"])
        if all(e.terminations.values()):
            break
        e.step(r1.choice(e.unwrapped.game.legal_actions()))
        p.step(r2.choice(p.unwrapped.game.legal_actions()))
    assert p.unwrapped.game.hands_played == e.unwrapped.game.hands_played >= 1


@pytest.mark.parametrize("make", MAKERS)
def test_pickle_before_reset_and_of_a_copy(make):
    e = make(render_mode="ansi", deck="full", max_hands=5, episode="game")
    p = pickle.loads(pickle.dumps(e))
    assert p.max_hands == 5 and p.config == e.config and p.render_mode == "ansi"
    with pytest.raises(RuntimeError, match="reset"):
        p.last()
    p.reset(seed=1)
    e.reset(seed=1)
    q = pickle.loads(pickle.dumps(copy.deepcopy(e)))
    assert q.unwrapped.game.to_dict() == p.unwrapped.game.to_dict() == e.unwrapped.game.to_dict()


# ------------------------------------------------------------------------------ memory
def test_observation_layout_is_shared_by_configurations_with_the_same_deck_and_bids():
    """The layout depends on the deck and bid levels only: 500 target scores add no cache entry."""
    first = obs_layout(rook_env.RookConfig(target_score=1))
    for target in range(2, 502):
        for reward in ("score_diff", "win_loss"):
            assert obs_layout(rook_env.RookConfig(target_score=target, reward=reward)) is first
    assert rook_env.raw_env(target_score=777).obs_layout is first


def test_observation_layout_cache_is_bounded():
    from rook_env.games.partnership.observation import _obs_layout

    for max_bid in range(120, 120 + 5 * 200, 5):
        obs_layout(rook_env.RookConfig(max_bid=max_bid))
    assert _obs_layout.cache_info().maxsize is not None
    assert _obs_layout.cache_info().currsize <= _obs_layout.cache_info().maxsize


# ------------------------------------------------------------------------------ PettingZoo versions
def test_import_works_without_pettingzoo_registry():
    """PettingZoo 1.24 to 1.26 have no ``register`` / ``aec_registry``: importing and playing still work."""
    code = (
        "import pettingzoo\n"
        "for name in ('register', 'aec_registry'):\n"
        "    vars(pettingzoo).pop(name, None)\n"
        "import rook_env, random\n"
        "e = rook_env.env(); e.reset(seed=0); rng = random.Random(0)\n"
        "while not all(e.terminations.values()):\n"
        "    e.step(rng.choice(e.unwrapped.game.legal_actions()))\n"
        "print('ok', e.unwrapped.game.hands_played)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok 1"


@pytest.mark.skipif(not hasattr(pettingzoo, "make"), reason="PettingZoo < 1.27 has no registry")
def test_metadata_name_matches_the_registered_id():
    e = pettingzoo.make("aec", rook_env.ENV_ID)
    assert rook_env.ENV_ID == "rook_env/" + e.metadata["name"] == "rook_env/Rook-v1"
    assert str(e) == e.metadata["name"]


# ------------------------------------------------------------------------------ finite bounds
@pytest.mark.parametrize("flags", [{}, {"deck": "full"}, {"target_score": 1}, {"episode": "game"}])
def test_every_observation_and_state_bound_is_finite(flags):
    e = rook_env.raw_env(**flags)
    box = e.observation_space("player_0")["observation"]
    for space in (box, e.state_space):
        assert np.isfinite(space.low).all() and np.isfinite(space.high).all()
        assert space.low.min() == -SCORE_CLIP and space.high.max() == SCORE_CLIP
    ol = obs_layout(e.config)
    assert (box.low[ol.slices["scores"]] == -SCORE_CLIP).all() and (box.high[ol.slices["scores"]] == SCORE_CLIP).all()


def test_scores_beyond_the_bound_saturate_in_the_observation():
    """A game can run past four targets' worth of sets: the entry saturates at -SCORE_CLIP, stays in the Box."""
    from rook_env.games.partnership.observation import encode
    from rook_env.games.partnership.rules import RookState

    game = RookState(rook_env.RookConfig(target_score=100))
    game.new_game(scores=[-950, 130], dealer=0)
    vec = encode(game, 0)
    ol = obs_layout(game.config)
    assert vec[ol.SCORES] == -SCORE_CLIP and vec[ol.SCORES + 1] == pytest.approx(1.3)
    assert encode(game, 1)[ol.SCORES + 1] == -SCORE_CLIP


def _rook_space_warnings(caught) -> list[str]:
    """Warnings about bounds (infinite, equal) or raised from rook_env's own files."""
    out = []
    for w in caught:
        msg = str(w.message)
        if "infinit" in msg.lower() or "are equal" in msg or "rook_env" in (w.filename or ""):
            out.append(f"{w.filename}:{w.lineno}: {msg}")
    return out


def test_checkers_give_no_warning_about_rook_env_spaces():
    """PettingZoo's api_test and state checks and gymnasium's space-limit check. PettingZoo itself warns
    that Dict observations are not a Box (every classic env); those are not about rook_env's values.
    rook_env's deliberate warnings here: the unknown reset option api_test passes, and the illegal
    actions test_state samples (it ignores the action mask)."""
    from gymnasium.utils.env_checker import check_space_limit
    from pettingzoo.test import api_test
    pz_state = importlib.import_module("pettingzoo.test.state_test")  # the module, not the function of that name

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for flags in ({}, {"deck": "full", "episode": "game"}):
            api_test(rook_env.env(**flags), num_cycles=50)
            e = rook_env.env(**flags)  # test_state steps sampled (mostly illegal) actions
            pz_state.test_state_space(e)
            pz_state.test_state(e, num_cycles=50)
            check_space_limit(e.observation_space("player_0")["observation"], "observation")
            check_space_limit(e.state_space, "observation")
    caught = [w for w in caught if not issubclass(w.category, rook_env.IllegalActionWarning)]
    found = [m for m in _rook_space_warnings(caught) if "unknown reset option" not in m]
    assert not found, found

"""The batched engine of every game (rook_env.vector) against raw_env: the same game, bit for bit.

The partnership game's lock-step harness runs one ``raw_env`` (or ``rook_env.env()`` for the terminate mode)
per table beside a :class:`RookVectorEnv`. Every deal comes from the raw envs: the first
through ``reset(options=...)``, later ones (redeals, next hands of a game, new episodes)
through the engine's ``deal_source`` hook, which reads the deal the raw env has just made
(the raw envs step first, so their new deal exists when the engine asks). Random legal
actions are drawn from the engine's mask; masks, observations (``np.array_equal`` on
float32), seats, rewards, termination/truncation and the finished hands' facts must match
at every step; every seat's ``observe`` and ``state_for`` are compared every few steps.

Call-your-partner Rook's harness (``lockstep``) runs ``n`` raw environments reset with the engine's table
seeds: every table of the engine must show exactly what a ``raw_env`` reset with that table's seed shows
(observation, mask, seat to act, rewards, episode ends, hand results, critic input).
"""

from __future__ import annotations

import itertools
import random
import warnings

import numpy as np
import pytest
from helpers import GAMES, cp_deal, over_games, per_game

import rook_env
from rook_env.games.call_partner import env as cp_checked_env
from rook_env.games.call_partner import raw_env as cp_raw_env
from rook_env.games.partnership import kernels
from rook_env.games.partnership.cards import bits
from rook_env.games.partnership.env import AGENT_SEAT, AGENTS
from rook_env.games.partnership.rules import BID, CIRCUS, DISCARD, PLAY
from rook_env.vector import RookVectorEnv, pick_legal, sample_legal

HAND_KEYS = ("bidder", "bid", "trump", "made", "counters", "bonus", "hand_scores", "scores", "tricks_won",
             "last_trick_team", "game_winner")


def deal_of(e, new_game: bool) -> dict:
    """The deal a raw env currently holds, as reset options (dealer and scores for a new game)."""
    g = e.unwrapped.game
    out = {"hands": [bits(h) for h in g.hands], "nest": bits(g.nest)}
    if new_game:
        out.update(dealer=g.dealer, scores=list(g.scores))
    return out


class LockStep:
    """``n`` raw envs and one engine, stepped together with the same actions."""

    def __init__(self, n: int, flags: dict, seed: int, max_hands: int | None = None, illegal_p: float = 0.0,
                 circus_p: float = 0.0, backend: str = "numpy"):
        self.flags, self.illegal_p, self.circus_p = flags, illegal_p, circus_p
        self.rng = np.random.default_rng(seed)
        self.py_rng = random.Random(seed)
        if illegal_p:
            self.raws = [rook_env.env(max_hands=max_hands, illegal_reward=-7.0, **flags) for _ in range(n)]
        else:
            self.raws = [rook_env.raw_env(max_hands=max_hands, **flags) for _ in range(n)]
        for e in self.raws:
            e.reset(seed=self.py_rng.randrange(1 << 30))
        self.vec = RookVectorEnv(
            n, max_hands=max_hands, deal_source=self.source,
            illegal_action="terminate" if illegal_p else "raise", illegal_reward=-7.0, backend=backend, **flags,
        )
        assert self.vec.backend == backend
        self.obs, info = self.vec.reset(options=[deal_of(e, True) for e in self.raws])
        self.seat, self.mask = info["seat"], info["action_mask"]
        self.hand_keys = (HAND_KEYS + (("circus",) if self.vec.config.circus_rook == "on" else ())
                          + (("call",) if self.vec.config.trump_calls == "extended" else ()))
        self.hands = self.episodes = self.steps = self.illegal = 0
        # Circus Rook coverage: hands played with circus called, card passes made, contracts named after a call
        self.circus_hands = self.circus_passes = 0
        self.circus_calls: set[int] = set()
        self.check_views()

    def source(self, tables, new_game):
        return [deal_of(self.raws[i], bool(ng)) for i, ng in zip(tables.tolist(), new_game.tolist())]

    def check_views(self, every_seat: bool = False) -> None:
        for i, e in enumerate(self.raws):
            agent = e.agent_selection
            assert self.seat[i] == AGENT_SEAT[agent], f"table {i}: seat"
            ob = e.observe(agent)
            assert np.array_equal(ob["action_mask"], self.mask[i]), f"table {i}: mask in {e.unwrapped.game.phase}"
            assert np.array_equal(ob["observation"], self.obs[i]), f"table {i}: observation"
        if every_seat:
            for s, agent in enumerate(AGENTS):
                o, st = self.vec.observe(s), self.vec.state_for(s)
                for i, e in enumerate(self.raws):
                    assert np.array_equal(o[i], e.observe(agent)["observation"]), f"table {i}: observe({s})"
                    assert np.array_equal(st[i], e.state_for(agent)), f"table {i}: state_for({s})"

    def step(self) -> None:
        passing = self.vec.phase == CIRCUS
        self.circus_passes += int(passing.sum())
        self.circus_calls.update(self.vec.call[passing].tolist())
        actions = sample_legal(self.mask, self.rng)
        if self.circus_p:  # call circus more often than uniform play would (1 legal action in 5 or 11)
            C = self.vec.layout.CIRCUS
            actions[(self.mask[:, C] == 1) & (self.rng.random(len(actions)) < self.circus_p)] = C
        bad = np.zeros(len(self.raws), bool)
        if self.illegal_p:
            bad = self.rng.random(len(self.raws)) < self.illegal_p
            for i in np.flatnonzero(bad):
                actions[i] = int(self.rng.choice(np.flatnonzero(self.mask[i] == 0)))
        want_r = np.zeros((len(self.raws), 4), np.float32)
        want_term = np.zeros(len(self.raws), bool)
        want_trunc = np.zeros(len(self.raws), bool)
        want_hand = {}
        for i, e in enumerate(self.raws):
            g = e.unwrapped.game
            played = g.hands_played
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                e.step(int(actions[i]))
            want_r[i] = [e.rewards[a] for a in AGENTS]
            if e.unwrapped.game.hands_played != played and not bad[i]:
                want_hand[i] = dict(e.unwrapped.game.hand_result)
            if all(e.terminations.values()) or all(e.truncations.values()):
                # env() marks an illegal-action end as terminated and truncated; the engine as terminated only
                want_term[i] = all(e.terminations.values())
                want_trunc[i] = not want_term[i]
                e.reset(seed=self.py_rng.randrange(1 << 30))
        self.obs, rew, term, trunc, info = self.vec.step(actions)
        self.seat, self.mask = info["seat"], info["action_mask"]
        assert np.array_equal(rew, want_r), f"rewards {rew[np.any(rew != want_r, 1)]} != {want_r[np.any(rew != want_r, 1)]}"
        assert np.array_equal(term, want_term)
        assert np.array_equal(trunc, want_trunc)
        assert np.array_equal(info["illegal"], bad)
        assert np.array_equal(info["hand_over"], np.isin(np.arange(len(self.raws)), list(want_hand)))
        for i, res in want_hand.items():
            got = {k: info["hand"][k][i].tolist() for k in self.hand_keys}
            if "call" in self.hand_keys:  # the engine gives the contract's index, raw_env its name
                got["call"] = self.vec.layout.contract_name(got["call"])
            assert got == {k: res[k] for k in self.hand_keys}, f"table {i}: hand result"
            self.circus_hands += bool(res.get("circus"))
        self.hands += len(want_hand)
        self.episodes += int(term.sum() + trunc.sum())
        self.illegal += int(bad.sum())
        self.steps += 1
        # every seat's view also while cards are being passed (only giver and receiver may see a card)
        self.check_views(every_seat=self.steps % 17 == 0 or (self.vec.phase == CIRCUS).any())

    def run(self, hands: int, max_steps: int = 200_000) -> None:
        while self.hands < hands:
            self.step()
            assert self.steps < max_steps, "no progress"


# Each flag's non-default values alone, and a few mixtures (Rook in a Book's 1-High Partnership among them).
CONFIGS = [
    {},
    {"all_pass": "redeal"},
    {"no_counter_redeal": "off"},
    {"nest_discard": "no_counters_unless_forced"},
    {"first_lead": "left_of_bidder"},
    {"first_lead": "bidder"},
    {"rook_rank": "low"},
    {"rook_rank": "ten_and_half"},
    {"deck": "full"},
    {"majority_tricks_bonus": 20},
    {"last_trick_bonus": 20},
    {"reward": "team_score"},
    {"reward": "win_loss"},
    {"min_bid": 80, "max_bid": 100, "bid_step": 10},
    {"episode": "game", "target_score": 150},
    {"episode": "game", "reward": "win_loss", "target_score": 100},
    {"episode": "game", "reward": "team_score", "target_score": 200, "all_pass": "redeal"},
    {"deck": "full", "rook_rank": "low", "majority_tricks_bonus": 20},
    {"deck": "full", "nest_discard": "no_counters_unless_forced", "all_pass": "redeal", "first_lead": "bidder",
     "rook_rank": "ten_and_half", "last_trick_bonus": 10, "episode": "game", "target_score": 120},
    {"nest_discard": "no_counters_unless_forced", "rook_rank": "low", "no_counter_redeal": "off",
     "first_lead": "left_of_bidder", "reward": "win_loss", "min_bid": 100, "max_bid": 100},
    # The games of RULES.md "More games".
    {"rook_bird": "off"},
    {"rook_bird": "off", "nest": "off"},
    {"deck": "full", "rook_bird": "off"},
    {"deck": "full", "ones": "low"},
    {"card_names": "standard"},
    {"preset": "regular_partnership"},
    {"preset": "one_high_partnership", "episode": "game", "target_score": 150},
    {"trump_calls": "extended"},
    {"trump_calls": "extended", "rook_rank": "ten_and_half", "nest_discard": "no_counters_unless_forced"},
    {"deck": "full", "black_two_trump": "on", "red_two_little_rook": "on"},
    {"deck": "full", "black_two_trump": "on", "red_two_little_rook": "on", "trump_calls": "extended",
     "rook_rank": "low"},
]
# Circus Rook: after the discard, and right after the auction without a nest; extended calls; game episodes.
CIRCUS_CONFIGS = [
    {"circus_rook": "on"},
    {"circus_rook": "on", "rook_bird": "off", "nest": "off", "trump_calls": "extended"},
    {"circus_rook": "on", "trump_calls": "extended", "first_lead": "bidder", "episode": "game", "target_score": 150},
    {"preset": "regular_partnership", "circus_rook": "on", "episode": "game", "reward": "win_loss",
     "target_score": 200, "all_pass": "redeal"},
]


# Game episodes of each game, to a low target.
GAME_EPISODES = per_game({"partnership": {"episode": "game", "target_score": 200},
                          "call_partner": {"players": 4, "episode": "game", "target_score": 200}})
# Both backends of the partnership engine: numpy (the reference) and the compiled kernels
# (rook_env.games.partnership.kernels).
BACKENDS = ["numpy", pytest.param("numba", marks=pytest.mark.skipif(not kernels.AVAILABLE, reason="numba is not installed"))]


def _id(flags: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in flags.items()) or "default"


# Each game's backends: call-your-partner Rook's engine has no compiled kernels.
BACKENDS_OF = per_game({"partnership": ("numpy", "numba"), "call_partner": ("numpy",)})
NEEDS_NUMBA = pytest.mark.skipif(not kernels.AVAILABLE, reason="numba is not installed")


def lockstep_cases(table: dict) -> list:
    """pytest parameters ``(game, flags, backend)``: every game's flags of ``table`` on every backend of the game."""
    return [pytest.param(game, flags, backend, id=f"{game}-{backend}-{_id(flags)}",
                         marks=[getattr(pytest.mark, game)] + ([NEEDS_NUMBA] if backend == "numba" else []))
            for game, flag_list in per_game(table).items() for backend in BACKENDS_OF[game] for flags in flag_list]


def _partnership_lockstep(flags, backend):
    ls = LockStep(6, flags, seed=len(_id(flags)), backend=backend)
    ls.run(hands=40)
    assert ls.hands >= 40


def _call_partner_lockstep(flags, backend):
    seen = lockstep(flags, num_envs=4, steps=400, seed=flags["players"])
    assert seen["episodes"] >= 4  # auto-reset was exercised


def _partnership_terminate(flags, backend):
    ls = LockStep(6, flags, seed=5, illegal_p=0.02, backend=backend)
    ls.run(hands=30)
    assert ls.illegal > 0


def _call_partner_terminate(flags, backend):
    seen = lockstep(flags, num_envs=4, steps=300, seed=9, illegal_p=0.02)
    assert seen["illegal"] >= 5 and seen["episodes"] >= seen["illegal"]


def _partnership_truncation(flags, backend):
    ls = LockStep(6, flags, seed=3, max_hands=3, backend=backend)
    ls.run(hands=40)
    assert ls.episodes >= 6


def _call_partner_truncation(flags, backend):
    seen = lockstep(flags, num_envs=3, steps=500, seed=3, max_hands=2)
    assert seen["truncated"] >= 2 and seen["hands"] >= 2 * seen["truncated"]


LOCKSTEP = per_game({"partnership": _partnership_lockstep, "call_partner": _call_partner_lockstep})
TERMINATE = per_game({"partnership": _partnership_terminate, "call_partner": _call_partner_terminate})
TRUNCATION = per_game({"partnership": _partnership_truncation, "call_partner": _call_partner_truncation})


@pytest.mark.partnership
@pytest.mark.parametrize("game, flags, backend", lockstep_cases({
    "partnership": CONFIGS, "call_partner": [{"players": 4}, {"players": 5}, {"players": 6}]}))
def test_lockstep_with_raw_env(game, flags, backend):
    LOCKSTEP[game](flags, backend)


@pytest.mark.partnership
@pytest.mark.parametrize("flags", CIRCUS_CONFIGS, ids=_id)
@pytest.mark.parametrize("backend", BACKENDS)
def test_lockstep_circus_paths_are_exercised(flags, backend):
    """Circus Rook in lock-step: hands with and without a circus call, the four passes and their delivery,
    the namer's contracts (low and no trump among them with extended calls) and the namer's lead."""
    ls = LockStep(8, flags, seed=11 + len(_id(flags)), circus_p=0.3, backend=backend)
    ls.run(hands=48)
    assert ls.circus_hands >= 4 and ls.hands - ls.circus_hands >= 4, (ls.circus_hands, ls.hands)
    assert ls.circus_passes >= 4 * ls.circus_hands
    if flags.get("trump_calls") == "extended":
        assert {k // 4 for k in ls.circus_calls} >= {0, 1, 2}, ls.circus_calls  # high, low and no-trump calls
    else:
        assert len(ls.circus_calls) >= 3


@pytest.mark.partnership
@pytest.mark.parametrize("game, flags, backend", lockstep_cases({
    "partnership": [{"episode": "game", "target_score": 300},
                    {"episode": "game", "reward": "win_loss", "all_pass": "redeal"}],
    "call_partner": [{"players": 5, "episode": "game"}]}))
def test_lockstep_max_hands_truncation(game, flags, backend):
    """Game episodes cut after max_hands: truncated, not terminated."""
    TRUNCATION[game](flags, backend)


@pytest.mark.partnership
@pytest.mark.parametrize("game, flags, backend", lockstep_cases({
    "partnership": [{}, {"episode": "game", "target_score": 150, "deck": "full"},
                    {"circus_rook": "on", "rook_bird": "off", "nest": "off"}],
    "call_partner": [{"players": 5}, {"players": 6, "episode": "game", "target_score": 300}]}))
def test_lockstep_terminate_mode_matches_env(game, flags, backend):
    """illegal_action="terminate" against rook_env.env(): the offender gets illegal_reward, the episode ends, the
    table's next episode continues its stream exactly as env().reset() does."""
    TERMINATE[game](flags, backend)


ALL_COMBOS = [
    dict(zip(("all_pass", "nest_discard", "first_lead", "rook_rank", "deck", "episode", "no_counter_redeal"), v))
    for v in itertools.product(("dealer_forced", "redeal"), ("any", "no_counters_unless_forced"),
                               ("left_of_dealer", "left_of_bidder", "bidder"), ("high", "low", "ten_and_half"),
                               ("tournament", "full"), ("hand", "game"), ("on", "off"))
]


@pytest.mark.partnership
@pytest.mark.slow
@pytest.mark.parametrize("flags", CONFIGS, ids=_id)
@pytest.mark.parametrize("backend", BACKENDS)
def test_lockstep_many_hands(flags, backend):
    ls = LockStep(16, flags, seed=100 + len(_id(flags)), backend=backend)
    ls.run(hands=400)


@pytest.mark.partnership
@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_lockstep_circus_many_hands(backend):
    ls = LockStep(16, {"circus_rook": "on", "trump_calls": "extended", "episode": "game", "target_score": 200,
                       "first_lead": "left_of_bidder", "last_trick_bonus": 20}, seed=77, circus_p=0.3,
                  backend=backend)
    ls.run(hands=600)
    assert ls.circus_hands >= 100


@pytest.mark.partnership
@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_lockstep_every_flag_combination(backend):
    """All 288 combinations of the enumerated rule flags, a few hands each (reward flags rotate)."""
    total = 0
    for k, flags in enumerate(ALL_COMBOS):
        flags = dict(flags, reward=("score_diff", "team_score", "win_loss")[k % 3],
                     majority_tricks_bonus=20 * (k % 2), last_trick_bonus=10 * (k % 5 == 0))
        if flags["episode"] == "game":
            flags["target_score"] = 150
        ls = LockStep(4, flags, seed=k, backend=backend)
        ls.run(hands=12)
        total += ls.hands
    assert total >= 12 * len(ALL_COMBOS)


# ------------------------------------------------------------------ API behaviour
@pytest.mark.partnership
def test_shapes_dtypes_and_spaces():
    env = RookVectorEnv(5)
    obs, info = env.reset(seed=0)
    assert obs.shape == (5, rook_env.OBS_SIZE) and obs.dtype == np.float32
    assert info["action_mask"].shape == (5, rook_env.N_ACTIONS) and info["action_mask"].dtype == np.int8
    assert info["seat"].shape == (5,) and np.array_equal(info["seat"], env.current_player)
    assert all(env.single_observation_space.contains(o) for o in obs)
    obs, rew, term, trunc, info = env.step(sample_legal(info["action_mask"], np.random.default_rng(0)))
    assert rew.shape == (5, 4) and rew.dtype == np.float32 and term.shape == trunc.shape == (5,)
    assert env.state_for(0).shape == (5, env.state_dim) == (5, rook_env.OBS_SIZE + 5 * 41)
    full = RookVectorEnv(2, deck="full")
    o, i = full.reset(seed=1)
    assert o.shape == (2, 813) and i["action_mask"].shape == (2, 80)


@pytest.mark.parametrize("game", GAMES)
def test_seeded_deals_reproducible(game):
    def run(seed, n):
        env = RookVectorEnv(n, game=game, **GAME_EPISODES[game])
        obs, info = env.reset(seed=seed)
        rng = np.random.default_rng(1)
        out = [obs.copy()]
        for _ in range(150):
            obs, rew, *_ , info = env.step(sample_legal(info["action_mask"], rng))
            out.append(obs.copy())
            out.append(rew)
        return out

    a, b, c = run(7, 16), run(7, 16), run(8, 16)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not all(np.array_equal(x, y) for x, y in zip(a, c))


@pytest.mark.partnership
def test_auto_reset_convention():
    """The step that ends a hand: rewards and facts of the ended hand, obs/mask/seat of the next deal."""
    env = RookVectorEnv(3)
    obs, info = env.reset(seed=4)
    rng = np.random.default_rng(0)
    seen = 0
    while seen < 10:
        obs, rew, term, trunc, info = env.step(sample_legal(info["action_mask"], rng))
        assert not trunc.any()
        assert np.array_equal(term, info["hand_over"])  # hand episodes: every finished hand ends the episode
        assert np.array_equal(rew.any(axis=1), term & (info["hand"]["hand_scores"] != 0).any(axis=1))
        for i in np.flatnonzero(term):
            seen += 1
            h = {k: v[i] for k, v in info["hand"].items()}
            assert h["bid"] > 0 and 0 <= h["bidder"] < 4 and 0 <= h["trump"] < 4
            t = h["bidder"] & 1
            assert h["made"] == (h["counters"][t] + h["bonus"][t] >= h["bid"])
            diff = h["hand_scores"] - h["hand_scores"][::-1]
            assert np.array_equal(rew[i], diff[[0, 1, 0, 1]])
            # already the next deal: a fresh bidding phase, 9 cards, scores 0, the seat left of the dealer
            assert env.phase[i] == BID and obs[i, :5].tolist() == [1, 0, 0, 0, 0]
            assert obs[i, 5:46].sum() == 9 and info["action_mask"][i, 41] == 1  # pass is legal
            assert env.scores[i].tolist() == [0, 0]
            assert info["seat"][i] == (env.dealer[i] + 1) % 4
        assert (info["hand"]["bidder"][~info["hand_over"]] == -1).all()


@pytest.mark.partnership
def test_game_episode_keeps_score_between_hands():
    env = RookVectorEnv(4, episode="game", target_score=400)
    obs, info = env.reset(seed=2)
    rng = np.random.default_rng(0)
    mid = 0
    for _ in range(600):
        dealer = env.dealer
        obs, rew, term, trunc, info = env.step(sample_legal(info["action_mask"], rng))
        go_on = info["hand_over"] & ~term
        for i in np.flatnonzero(go_on):
            mid += 1
            assert env.scores[i].tolist() == info["hand"]["scores"][i].tolist()
            assert env.dealer[i] == (dealer[i] + 1) % 4 and env.hands_played[i] >= 1
        for i in np.flatnonzero(term):
            assert info["hand"]["game_winner"][i] in (0, 1)
    assert mid > 0


@pytest.mark.partnership
def test_illegal_action_raise_applies_nothing():
    env = RookVectorEnv(4)
    obs, info = env.reset(seed=0)
    mask = info["action_mask"]
    actions = sample_legal(mask, np.random.default_rng(0))
    before = (env.observe(0), env.state_for(1), env.current_player, env.action_mask, env.scores)
    bad = int(np.flatnonzero(mask[2] == 0)[0])
    actions[2] = bad
    with pytest.raises(ValueError) as err:
        env.step(actions)
    msg = str(err.value)
    assert "table 2" in msg and f"illegal action {bad}" in msg and "'bid'" in msg and "pass" in msg
    assert "nothing was applied" in msg
    after = (env.observe(0), env.state_for(1), env.current_player, env.action_mask, env.scores)
    assert all(np.array_equal(x, y) for x, y in zip(before, after))
    actions[2] = sample_legal(mask, np.random.default_rng(0))[2]
    env.step(actions)  # the same call with a legal action goes through


@pytest.mark.partnership
def test_illegal_action_terminate_mode():
    env = RookVectorEnv(3, illegal_action="terminate", illegal_reward=-2.5)
    obs, info = env.reset(seed=1)
    actions = sample_legal(info["action_mask"], np.random.default_rng(0))
    seat = info["seat"][1]
    actions[1] = int(np.flatnonzero(info["action_mask"][1] == 0)[0])
    obs, rew, term, trunc, info = env.step(actions)
    assert term.tolist() == [False, True, False] and info["illegal"].tolist() == [False, True, False]
    assert rew[1, seat] == -2.5 and np.count_nonzero(rew[1]) == 1 and not rew[[0, 2]].any()
    assert env.phase[1] == BID and info["action_mask"][1].any()  # table 1 was reset


@pytest.mark.partnership
@pytest.mark.parametrize("actions, match", [
    (np.zeros(3, np.int64), "shape"),
    (np.zeros(4, np.float32), "integer"),
    (np.array([0, 0, 58, 0]), "outside the action space"),
    (np.array([0, -1, 0, 0]), "outside the action space"),
    (np.array([True, False, True, True]), "integer"),
])
def test_bad_actions_raise(actions, match):
    env = RookVectorEnv(4)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=match):
        env.step(actions)


BAD_ARGUMENTS = per_game({
    "partnership": [
        ({"num_envs": 0}, "num_envs"),
        ({"num_envs": 2.5}, "num_envs"),
        ({"num_envs": 2, "max_hands": 0}, "max_hands"),
        ({"num_envs": 2, "illegal_action": "warn"}, "illegal_action"),
        ({"num_envs": 2, "deck": "short"}, "deck"),
        ({"num_envs": 2, "colour": 3}, "unknown rule flag"),
        ({"num_envs": 2, "deal_source": 5}, "deal_source"),
        ({"num_envs": 2, "backend": "jax"}, "backend='jax' is not allowed"),
        ({"num_envs": 2, "game": "spades"}, "game='spades' is not allowed; allowed values: partnership, call_partner"),
        ({"num_envs": 2, "players": 5}, "players=5 is not allowed for game='partnership'.*game='call_partner'"),
        ({"num_envs": 2, "game": "call_partner", "players": 3}, "players"),
    ],
    "call_partner": [
        ({"num_envs": 2, "players": 3}, "players"),
        ({"num_envs": 2, "rook_rank": "low"}, "rook_rank"),
        ({"num_envs": 0}, "num_envs"),
        ({"num_envs": 2, "backend": "numba"}, "game 'call_partner' has no compiled kernels"),
    ],
})


@pytest.mark.parametrize("game, kwargs, match", over_games(BAD_ARGUMENTS, ids=lambda c: _id(c[0])))
def test_bad_arguments(game, kwargs, match):
    with pytest.raises(ValueError, match=match):
        RookVectorEnv(**{"game": game, **kwargs})


@pytest.mark.partnership
def test_the_front_door_returns_the_games_engine():
    from rook_env.games.partnership.vector import PartnershipVectorEnv

    env = RookVectorEnv(2, game="partnership", players=4, deck="full")
    assert type(env) is PartnershipVectorEnv and isinstance(env, RookVectorEnv)
    assert env.game == "partnership" and env.n_seats == 4 and env.config.deck == "full"
    assert type(RookVectorEnv(2)) is PartnershipVectorEnv  # the default game
    with pytest.raises(ValueError, match=r"plays game 'partnership', not game='call_partner'"):
        PartnershipVectorEnv(2, game="call_partner")


def test_every_registered_game_has_its_engine():
    """The registry's ``vector`` part of every game is a RookVectorEnv subclass playing that game, and the
    front door returns it with the game's default table size."""
    from rook_env.games import game_names, get_game

    for name in game_names():
        spec = get_game(name)
        engine = spec.load("vector")
        assert issubclass(engine, RookVectorEnv) and engine.GAME == name
        env = RookVectorEnv(2, game=name)
        assert type(env) is engine and env.n_seats == spec.default_players
        obs, info = env.reset(seed=0)
        assert obs.shape == (2, env.obs_dim) and info["action_mask"].shape == (2, env.n_actions)


def test_numba_is_imported_by_the_first_numba_engine_only():
    """The kernels compile lazily: importing the engine, or making a numpy or call-your-partner engine,
    does not import numba."""
    import subprocess
    import sys

    code = ("import sys; from rook_env.vector import RookVectorEnv; RookVectorEnv(2, backend='numpy').reset(seed=0); "
            "RookVectorEnv(2, game='call_partner', players=5).reset(seed=0); assert 'numba' not in sys.modules; "
            "RookVectorEnv(2, backend='auto'); print('numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.strip() == str(kernels.AVAILABLE)


@pytest.mark.partnership
def test_backend_choice_without_numba(monkeypatch):
    """"auto" takes numba where it is installed and numpy otherwise; asking for numba without it is an error
    that says what to install, and sample_legal draws the same actions either way."""
    assert RookVectorEnv(2).backend == ("numba" if kernels.AVAILABLE else "numpy")
    mask = (np.random.default_rng(0).random((50, 70)) < 0.3).astype(np.int8)
    mask[:, 5] = 1
    with_kernels = sample_legal(mask, np.random.default_rng(1))
    from rook_env.core import kernels as core_kernels  # numba's one import: where AVAILABLE is decided

    monkeypatch.setattr(core_kernels, "AVAILABLE", False)
    assert RookVectorEnv(2).backend == "numpy"
    with pytest.raises(ValueError, match=r"backend='numba' needs the numba package: pip install 'rook_env\[fast\]'"):
        RookVectorEnv(2, backend="numba")
    assert sample_legal(mask, np.random.default_rng(1)).tolist() == with_kernels.tolist()


@pytest.mark.partnership
@pytest.mark.skipif(not kernels.AVAILABLE, reason="numba is not installed")
def test_backends_give_the_same_tables_for_a_seed():
    """The two backends are one engine: seeded deals, actions, observations, masks, rewards and facts agree
    (the deals are drawn by numpy in both), at every step of game episodes with redeals."""
    flags = {"episode": "game", "target_score": 200, "all_pass": "redeal"}
    envs = [RookVectorEnv(32, backend=b, **flags) for b in ("numpy", "numba")]
    outs = [e.reset(seed=9) for e in envs]
    rng = np.random.default_rng(9)
    for _ in range(400):
        assert np.array_equal(outs[0][0], outs[1][0]) and np.array_equal(outs[0][-1]["action_mask"],
                                                                          outs[1][-1]["action_mask"])
        a = sample_legal(outs[0][-1]["action_mask"], rng)
        outs = [e.step(a) for e in envs]
        for x, y in zip(outs[0][1:4], outs[1][1:4]):
            assert np.array_equal(x, y)
        for k in outs[0][-1]["hand"]:
            assert np.array_equal(outs[0][-1]["hand"][k], outs[1][-1]["hand"][k]), k
    assert all(e.hands_played.sum() > 0 for e in envs)


@pytest.mark.parametrize("game", GAMES)
def test_use_before_reset_raises(game):
    env = RookVectorEnv(2, game=game)
    for call in (lambda: env.step(np.zeros(2, np.int64)), lambda: env.observe(0), lambda: env.state_for(0),
                 lambda: env.action_mask):
        with pytest.raises(RuntimeError, match="reset"):
            call()


@pytest.mark.parametrize("game", GAMES)
def test_bad_seats_raise(game):
    env = RookVectorEnv(2, game=game)
    env.reset(seed=0)
    for seat in (env.n_seats, -1, [0, 1, 2], 1.0):
        with pytest.raises(ValueError, match="seat"):
            env.observe(seat)
    assert np.array_equal(env.observe([0, 1])[1], env.observe(1)[1])


@pytest.mark.partnership
@pytest.mark.parametrize("options, match", [
    ({"hands": []}, "list of 2"),
    ([{"hands": [[0]]}, None], r"options\[0\].*nest"),
    ([None, {"dealer": 4}], r"options\[1\].*dealer"),
    ([None, {"scores": [1]}], r"options\[1\].*scores"),
    ([None, {"colour": 1}], r"options\[1\].*unknown key"),
    ([None, 3], r"options\[1\] must be a dict"),
    ([None], "list of 2"),
])
def test_bad_reset_options(options, match):
    with pytest.raises(ValueError, match=match):
        RookVectorEnv(2).reset(options=options)


@pytest.mark.partnership
def test_fixed_deal_duplicate_card_message_matches_raw_env():
    hands = [list(range(0, 9)), list(range(9, 18)), list(range(18, 27)), list(range(27, 36))]
    nest = [36, 37, 38, 39, 0]
    with pytest.raises(ValueError) as raw:
        rook_env.raw_env().reset(options={"hands": hands, "nest": nest})
    with pytest.raises(ValueError) as vec:
        RookVectorEnv(1).reset(options=[{"hands": hands, "nest": nest}])
    assert str(vec.value) == f"options[0]: {raw.value}"


@pytest.mark.partnership
def test_fixed_deal_options_and_partial_options():
    raw = rook_env.raw_env()
    raw.reset(seed=9)
    d = deal_of(raw, True)
    d["scores"] = [40, -20]
    env = RookVectorEnv(2)
    obs, info = env.reset(seed=0, options=[d, {"dealer": 1}])
    raw.reset(options=d)
    assert np.array_equal(obs[0], raw.observe(raw.agent_selection)["observation"])
    assert env.scores[0].tolist() == [40, -20] and env.dealer.tolist() == [d["dealer"], 1]
    assert info["seat"][1] == 2


@pytest.mark.partnership
def test_deal_source_errors():
    env = RookVectorEnv(2, deal_source=lambda t, ng: [{"hands": [[0]], "nest": []}] * len(t))
    obs, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="deal_source entry for table"):
        for _ in range(200):
            obs, *_, info = env.step(sample_legal(info["action_mask"], rng))


@pytest.mark.parametrize("game", GAMES)
def test_imports_without_torch(game):
    import subprocess
    import sys

    code = ("import sys; sys.modules['torch'] = None; from rook_env.vector import RookVectorEnv; "
            f"RookVectorEnv(2, game={game!r}).reset(seed=0)")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.partnership
def test_phases_are_all_reached_together():
    """Tables in different phases at the same step are handled side by side."""
    env = RookVectorEnv(64, nest_discard="no_counters_unless_forced")
    obs, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(60):
        seen.add(tuple(sorted(set(env.phase.tolist()))))
        obs, *_, info = env.step(sample_legal(info["action_mask"], rng))
    assert any({BID, DISCARD, PLAY} <= set(s) for s in seen)


@pytest.mark.partnership
@pytest.mark.parametrize("flags", [CIRCUS_CONFIGS[0], CIRCUS_CONFIGS[1]], ids=_id)
def test_heuristic_act_batch_plays_circus_on_the_engine(flags):
    """train.py's heuristic opponent decides through act_batch: on Circus Rook tables (circus forced half
    the time it is legal; the heuristic itself declines it) every decision is legal without a fallback,
    and its passes are those of act()."""
    from rook_env.agents.heuristic import HeuristicAgent

    n = 16
    env = RookVectorEnv(n, **flags)
    agent, ref = HeuristicAgent(**flags), HeuristicAgent(**flags)
    agent.strict = ref.strict = True  # internal errors raise instead of falling back
    obs, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    C = env.layout.CIRCUS
    passes = circus_hands = 0
    for _ in range(200):
        mask = info["action_mask"]
        actions = agent.act_batch(obs, mask, keys=np.arange(n) * 4 + info["seat"])
        for i in np.flatnonzero(env.phase == CIRCUS):
            passes += 1
            assert actions[i] == ref.act({"observation": obs[i], "action_mask": mask[i]})
        actions[(mask[:, C] == 1) & (rng.random(n) < 0.5)] = C
        obs, _rew, _term, _trunc, info = env.step(actions)  # raises on an illegal action
        circus_hands += int((info["hand"]["circus"] & info["hand_over"]).sum())
    assert agent.fallbacks == 0 and circus_hands >= 10 and passes >= 4 * circus_hands


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, bool, np.int64])
def test_sample_legal_is_the_kth_legal_action_of_one_draw(dtype):
    """sample_legal's contract: one uniform draw u per row picks legal action number floor(u * count) in
    increasing order (so a seed gives the same actions whatever the implementation), for any 0/1 dtype,
    action-space width (below, at and above a byte or word boundary) and number of rows."""
    gen = np.random.default_rng(3)
    for A in (1, 7, 8, 9, 58, 64, 65, 130):
        for n in (1, 5, 300):
            mask = gen.random((n, A)) < gen.random((n, 1))
            mask[np.arange(n), gen.integers(0, A, n)] = True  # at least one legal action per row
            mask = mask.astype(dtype)
            got = sample_legal(mask, np.random.default_rng(A + n))
            u = np.random.default_rng(A + n).random(n)
            want = [np.flatnonzero(row)[int(ui * np.count_nonzero(row))] for row, ui in zip(mask, u)]
            assert got.dtype == np.int64 and got.shape == (n,)
            assert got.tolist() == want
            assert pick_legal(mask, u).tolist() == want  # the numpy reference (sample_legal may be compiled)


def test_sample_legal_is_uniform_over_the_legal_actions():
    mask = np.zeros((3, 20), np.int8)
    mask[0, [0]] = 1
    mask[1, [2, 3, 19]] = 1
    mask[2, ::2] = 1
    draws = np.stack([sample_legal(mask, np.random.default_rng(s)) for s in range(3000)])  # (3000, 3)
    for row in range(3):
        legal = np.flatnonzero(mask[row])
        counts = np.bincount(draws[:, row], minlength=20)
        assert counts[mask[row] == 0].sum() == 0
        expected = 3000 / len(legal)
        assert np.all(np.abs(counts[legal] - expected) < 0.25 * expected)


# ============================================================================== call-your-partner Rook
def CallPartnerVectorEnv(num_envs: int, **kwargs) -> RookVectorEnv:
    """The engine through the front door every caller uses."""
    return RookVectorEnv(num_envs, game="call_partner", **kwargs)


def lockstep(flags: dict, num_envs: int, steps: int, seed: int, max_hands: int | None = None,
             illegal_p: float = 0.0) -> dict:
    """Call-your-partner Rook's engine beside its raw envs. Random legal play on both; asserts equality at every step. Returns counts of what was seen.

    ``illegal_p`` > 0: the engine runs with ``illegal_action="terminate"`` beside ``env()`` (PettingZoo's
    TerminateIllegalWrapper semantics), and each table plays an illegal action with that probability."""
    terminate = illegal_p > 0
    venv = CallPartnerVectorEnv(num_envs, max_hands=max_hands, illegal_action="terminate" if terminate else "raise",
                                illegal_reward=-2.5, **flags)
    obs, info = venv.reset(seed=seed)
    make = (lambda: cp_checked_env(max_hands=max_hands, illegal_reward=-2.5, **flags)) if terminate else \
        (lambda: cp_raw_env(max_hands=max_hands, **flags))
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


@pytest.mark.call_partner
@pytest.mark.parametrize("flags", [
    {"players": 5, "deck": "no_twos_to_fours", "reward": "team_score", "nest_discard": "no_counters_unless_forced"},
    {"players": 6, "all_pass": "redeal", "no_counter_redeal": "off", "first_lead": "bidder", "reward": "win_loss"},
    {"players": 4, "deck": "no_twos_to_fours", "first_lead": "left_of_bidder"},
])
def test_lockstep_other_flags(flags):
    assert lockstep(flags, num_envs=3, steps=300, seed=7)["episodes"] >= 2


@pytest.mark.call_partner
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


@pytest.mark.call_partner
def test_seeded_reset_is_reproducible_and_tables_differ():
    a, b = CallPartnerVectorEnv(3, players=4), CallPartnerVectorEnv(3, players=4)
    oa, _ = a.reset(seed=11)
    ob, _ = b.reset(seed=11)
    np.testing.assert_array_equal(oa, ob)
    assert len(set(a.table_seeds)) == 3
    assert len({tuple(s.hands) for s in a.states}) == 3


@pytest.mark.call_partner
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


@pytest.mark.call_partner
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


@pytest.mark.call_partner
def test_the_front_door_returns_the_call_partner_engine():
    from rook_env.games.call_partner.vector import CallPartnerVectorEnv as Engine
    from rook_env.games.call_partner.vector import CallPartnerVectorEnv as OldPath

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


@pytest.mark.call_partner
def test_state_for_matches_raw_env_after_partners_are_known():
    """state_for is read from the rules states (no raw_env inside the engine): late in a hand, with the
    partners fixed, every seat's vector equals raw_env's."""
    env = CallPartnerVectorEnv(3, players=5)
    _, info = env.reset(seed=4)
    rng = np.random.default_rng(4)
    for _ in range(60):
        _, _, _, _, info = env.step(sample_legal(info["action_mask"], rng))
    assert any(s.partners for s in env.states)
    raw = cp_raw_env(players=5)
    for seat in range(5):
        st = env.state_for(seat)
        for i, state in enumerate(env.states):
            raw.game = state
            np.testing.assert_array_equal(st[i], raw.state_for(f"player_{seat}"))
    assert st.shape == (3, raw.state_space.shape[0]) == (3, env.state_dim)


@pytest.mark.call_partner
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

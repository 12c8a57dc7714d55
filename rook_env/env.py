"""Rook: four-player partnership trick-taking with an auction (PettingZoo AEC, classic family).

This module docstring is the environment's documentation page (see README for tables).

| Import             | ``from rook_env import env`` (checked) or ``raw_env`` (raises on misuse) |
|--------------------|--------------------------------------------------------------------------|
| Registered id      | ``pettingzoo.make("aec", "rook_env/Rook-v1", **flags)`` (PettingZoo >= 1.27) |
| Actions            | Discrete(58) (default deck; see :mod:`rook_env.cards`)                    |
| Agents             | ``player_0`` .. ``player_3``; teams {0, 2} and {1, 3}                    |
| Observation        | Dict(observation=Box(583,), action_mask=Box(0, 1, (58,), int8))          |
| Observation bounds | [0, 1]; the two scores [-4, 4] (``clip(score / target_score, -4, 4)``)   |
| Rewards            | flag ``reward``: ``score_diff`` (default), ``team_score``, ``win_loss``  |

Flow of one hand: bidding (pass / bid / redeal), the bidder discards five cards one
by one, names trump, then nine tricks of card play. Only the seat to act has a
non-zero action mask. ``episode="game"`` keeps dealing (dealer rotating) until a team
wins at ``target_score``; ``max_hands`` truncates it after that many hands (the game
stops at the end of the last hand: no further deal is shown, every mask is zero).

Rewards are given when a hand ends. ``score_diff``: the own team's score change minus
the opponents' (a set bid of 85 with 80 captured: -125 to the bidders, +125 to the
defenders); ``team_score``: the own team's score change; ``win_loss``: +1 / -1 to the
winning / losing team at the end of a game episode (in hand episodes: the sign of
``score_diff`` for that hand, 0 on a tie).

Illegal actions: :class:`raw_env` raises ``ValueError`` naming the action, the phase
and the legal actions, and nothing changes. :func:`env` follows PettingZoo's classic
convention (``TerminateIllegalWrapper``): an :class:`IllegalActionWarning`, the episode
ends, the offender receives ``illegal_reward`` (default -1) and the others 0.

Environment checkers of RL libraries (RLlib's pre-check steps one random action,
PettingZoo's ``api_test`` and gymnasium-style checkers sample the action space) are not
special-cased: such a step is an illegal action like any other. With :func:`env` it warns
(``IllegalActionWarning``), ends that episode with the penalty, and the check passes; the
library's next ``reset()`` starts afresh. An illegal action is never silently accepted.
Silence the warning during a check with
``warnings.filterwarnings("ignore", category=rook_env.IllegalActionWarning)``.

Misuse raises in both classes, and a rejected call changes nothing: an action outside
the action space or not an integer, a bad seed or reset option (``ValueError``); an
unknown agent name (``ValueError``); stepping, observing, ``last()``, ``state()`` or
reading ``game`` before ``reset()`` (:class:`NotResetError`, a ``RuntimeError``);
stepping or ``last()`` once every agent is done (``RuntimeError``: call ``reset()``).

Copying: ``copy.deepcopy`` and ``pickle`` both carry the whole state (mid-hand
included, with the RNG): the copy continues exactly as the original would.

Version history:
- v1: finite observation and state bounds (the two score entries are
  ``clip(score / target_score, -4, 4)``, Box bounds [-4, 4]); fixed ``scores`` beyond
  ``4 * target_score`` are rejected; a game truncated by ``max_hands`` shows no next deal;
  pickling keeps the state.
- v0: initial release.
"""

from __future__ import annotations

import importlib.util
import random
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv

from .cards import N_SEATS, bits, layout_for
from .config import as_float, as_int, make_config
from .observation import SCORE_CLIP, ObservationEncoder, obs_layout, unpack_mask
from .render import render_text
from .rules import OVER, RookState

# The registered id (namespace/name-version); metadata["name"] is its name-version part.
ENV_ID = "rook_env/Rook-v1"

AGENTS = tuple(f"player_{i}" for i in range(N_SEATS))
AGENT_SEAT = {a: i for i, a in enumerate(AGENTS)}
OPTION_KEYS = ("hands", "nest", "dealer", "scores")


class NotResetError(RuntimeError, AttributeError):
    """The environment was used before ``reset()``.

    A ``RuntimeError``; also an ``AttributeError`` so that ``hasattr(env, "game")`` and
    ``getattr(env, "game", None)`` keep their usual meaning before the first reset.
    """


class IllegalActionWarning(UserWarning):
    """:func:`env` was stepped with an illegal action: the episode ended with ``illegal_reward``."""


def _unknown_agent(agent: Any) -> ValueError:
    return ValueError(f"unknown agent {agent!r}; agents are {', '.join(AGENTS)}")


# "rgb_array" draws with Pillow, an optional extra (rook_env[render]): it is listed as a render mode only
# where Pillow is installed, so that checkers which make the environment in every listed mode
# (gymnasium's check_env) pass without it; asking for it without Pillow says which extra to install.
RENDER_MODES = ["human", "ansi"] + (["rgb_array"] if importlib.util.find_spec("PIL") is not None else [])


class raw_env(AECEnv, EzPickle):
    """The Rook AEC environment. Flags: see RULES.md and :class:`rook_env.config.RookConfig`."""

    metadata = {
        "render_modes": RENDER_MODES,
        "name": ENV_ID.split("/")[1],
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(self, render_mode: str | None = None, max_hands: int | None = None, **flags: Any) -> None:
        EzPickle.__init__(self, render_mode=render_mode, max_hands=max_hands, **flags)
        super().__init__()
        if render_mode == "rgb_array":
            from .render_image import require_pillow

            require_pillow()  # fail here, naming the extra to install, not at the first render()
        if render_mode is not None and render_mode not in ("human", "ansi", "rgb_array"):
            raise ValueError(
                f"render_mode={render_mode!r} is not allowed; allowed values: None, human, ansi, rgb_array"
            )
        self.render_mode = render_mode
        self.config = make_config(**flags)
        if max_hands is not None:
            max_hands = as_int(max_hands, "max_hands")
            if max_hands <= 0:
                raise ValueError(f"max_hands={max_hands} must be a positive integer or None")
            if self.config.episode != "game":
                raise ValueError(
                    f"max_hands={max_hands} applies only to episode='game'; a hand episode is always one hand"
                )
        # Game episodes between weak agents can last very long (sets keep both scores low):
        # after max_hands hands the episode is truncated.
        self.max_hands = max_hands
        self.layout = layout_for(self.config)
        self.obs_layout = obs_layout(self.config)
        n_act = self.layout.n_actions
        self.possible_agents = list(AGENTS)
        obs_space = spaces.Dict(
            {
                # Copies: the cached layout's bound arrays must not be reachable through a space.
                "observation": spaces.Box(self.obs_layout.low.copy(), self.obs_layout.high.copy(), dtype=np.float32),
                "action_mask": spaces.Box(0, 1, (n_act,), dtype=np.int8),
            }
        )
        self.observation_spaces = {a: obs_space for a in AGENTS}
        self.action_spaces = {a: spaces.Discrete(n_act) for a in AGENTS}
        n = self.layout.n_cards
        self.state_space = spaces.Box(
            np.concatenate([self.obs_layout.low, np.zeros(5 * n, np.float32)]),
            np.concatenate([self.obs_layout.high, np.ones(5 * n, np.float32)]),
            dtype=np.float32,
        )
        self._rng: random.Random | None = None
        self._game: RookState | None = None
        self._mask: int | None = None
        # Before the first reset: no agent is active.
        self.agents = []
        self.agent_selection = None
        self.rewards, self._cumulative_rewards, self.infos = {}, {}, {}
        self.terminations, self.truncations = {}, {}

    @property
    def game(self) -> RookState:
        """The pure rules state of the current episode (after ``reset()``)."""
        game = self._game
        if game is None:
            raise NotResetError("env.game does not exist before reset(); call reset() first")
        return game

    # ------------------------------------------------------------- PettingZoo
    def observation_space(self, agent: str) -> spaces.Space:
        try:
            return self.observation_spaces[agent]
        except (KeyError, TypeError):
            raise _unknown_agent(agent) from None

    def action_space(self, agent: str) -> spaces.Space:
        try:
            return self.action_spaces[agent]
        except (KeyError, TypeError):
            raise _unknown_agent(agent) from None

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        # Everything is checked before anything changes: a rejected reset leaves the
        # current episode and the RNG stream as they were.
        if seed is not None:
            seed = as_int(seed, "seed")
            if seed < 0:
                raise ValueError(f"seed={seed} must be a non-negative integer or None")
        if options is None:
            options = {}
        elif not isinstance(options, Mapping):
            raise ValueError(f"options must be a dict with keys {', '.join(OPTION_KEYS)} (or None), got {options!r}")
        scores = options.get("scores")
        if scores is not None:
            scores = RookState.check_scores(scores)
            limit = int(SCORE_CLIP * self.config.target_score)
            if max(abs(scores[0]), abs(scores[1])) > limit:
                raise ValueError(
                    f"scores={scores} out of range: each must be within -{limit}..{limit} "
                    f"(SCORE_CLIP={SCORE_CLIP:g} times target_score={self.config.target_score}), "
                    "the scores the observation encodes exactly"
                )
        rng = self._rng if seed is None and self._rng is not None else random.Random(seed)
        game = RookState(self.config)
        game.rng = rng
        game.hand_limit = self.max_hands
        game.new_game(  # checks dealer, hands and nest before drawing from rng
            dealer=options.get("dealer"),
            scores=scores,
            hands=options.get("hands"),
            nest=options.get("nest"),
        )
        unknown = [k for k in options if k not in OPTION_KEYS]
        if unknown:
            # Not an error: PettingZoo's api_test resets with arbitrary options. Not silent either.
            warnings.warn(
                f"ignoring unknown reset option(s) {', '.join(map(repr, unknown))}; known: {', '.join(OPTION_KEYS)}"
            )
        self._rng = rng
        self._game = game
        self._enc = ObservationEncoder(game)
        self._enc.rebuild()
        self._mask = None
        self.agents = list(AGENTS)
        self.rewards = {a: 0 for a in AGENTS}
        self._cumulative_rewards = {a: 0 for a in AGENTS}
        self._rewards_dirty = False
        self.terminations = {a: False for a in AGENTS}
        self.truncations = {a: False for a in AGENTS}
        self.infos = {a: {} for a in AGENTS}
        self._skip_agent_selection = None
        self.agent_selection = AGENTS[game.current]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        game = self._game
        if game is None:
            raise NotResetError("observe() called before reset(); call reset() first")
        try:
            seat = AGENT_SEAT[agent]
        except (KeyError, TypeError):  # TypeError: an unhashable "agent"
            raise _unknown_agent(agent) from None
        if seat == game.current and game.phase != OVER:
            if self._mask is None:
                self._mask = game.legal_mask()
            mask = unpack_mask(self._mask, self.layout.n_actions)
        else:
            mask = np.zeros(self.layout.n_actions, np.int8)
        return {"observation": self._enc.obs[seat].copy(), "action_mask": mask}

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """(observation, cumulative reward, terminated, truncated, info) of ``agent_selection``."""
        if self._game is None:
            raise NotResetError("last() called before reset(); call reset() first")
        agent = self.agent_selection
        try:
            return (
                self.observe(agent) if observe else None,
                self._cumulative_rewards[agent],
                self.terminations[agent],
                self.truncations[agent],
                self.infos[agent],
            )
        except KeyError:
            if not self.agents:
                raise RuntimeError("last() called after every agent is done; call reset() first") from None
            raise

    def _done_error(self, action: Any) -> RuntimeError:
        return RuntimeError(f"step({action!r}) called after every agent is done; call reset() first")

    def step(self, action: Any) -> None:
        game = self._game
        if game is None:
            raise NotResetError("step() called before reset(); call reset() first")
        agent = self.agent_selection
        try:
            if self.terminations[agent] or self.truncations[agent]:
                self._was_dead_step(action)
                return
        except KeyError:  # the episode is over and every agent has been removed
            raise self._done_error(action) from None
        a = action if type(action) is int and 0 <= action < self.layout.n_actions else self._as_action(action)
        seat, phase, high_bid, deals, hands_played = (
            game.current, game.phase, game.high_bid, game.deals, game.hands_played
        )
        game.apply(a, self._mask)  # raises ValueError on an illegal action
        self._mask = None
        self._cumulative_rewards[agent] = 0
        if self.infos[agent]:  # the last hand's result was shown at this seat's turn; now it is stale
            self.infos[agent] = {}
        if self._rewards_dirty:
            self._clear_rewards()
            self._rewards_dirty = False
        self._enc.update(seat, a, phase, high_bid, deals)
        if game.hands_played != hands_played:
            self._hand_finished()
            if game.phase == OVER:
                # Over without a winner in a game episode: stopped at max_hands (game.hand_limit).
                truncated = game.winner < 0 and self.config.episode == "game"
                done = self.truncations if truncated else self.terminations
                for a_ in self.agents:
                    done[a_] = True
        self.agent_selection = AGENTS[game.current]
        if self.render_mode == "human":
            self.render()

    def _as_action(self, action: Any) -> int:
        if action is None:
            raise ValueError(f"action None given for {self.agent_selection}, which is not done; pass an action id")
        try:
            a = as_int(action, "action")
        except ValueError:
            raise ValueError(f"action {action!r} is not an integer action id") from None
        if not 0 <= a < self.layout.n_actions:
            raise ValueError(f"action {a} is outside the action space Discrete({self.layout.n_actions})")
        return a

    def _hand_finished(self) -> None:
        game = self._game
        res = game.hand_result
        delta = res["hand_scores"]
        mode = self.config.reward
        for seat, agent in enumerate(AGENTS):
            t = seat & 1
            if mode == "score_diff":
                r = delta[t] - delta[1 - t]
            elif mode == "team_score":
                r = delta[t]
            elif self.config.episode == "game":
                r = 0 if game.winner < 0 else (1 if game.winner == t else -1)
            else:
                d = delta[t] - delta[1 - t]
                r = (d > 0) - (d < 0)
            self.rewards[agent] = r
            self._cumulative_rewards[agent] += r
            self.infos[agent] = {"hand": dict(res)}
        self._rewards_dirty = True

    def state(self) -> np.ndarray:
        """Global state for centralized critics: seat 0's view plus what is hidden from it."""
        return self.state_for("player_0")

    def state_for(self, agent: str) -> np.ndarray:
        """Full-information vector relative to ``agent``: its observation, then the hands of
        left, partner and right, then the nest as dealt and the discards (5 * n_cards)."""
        game = self._game
        if game is None:
            raise NotResetError("state() called before reset(); call reset() first")
        try:
            seat = AGENT_SEAT[agent]
        except (KeyError, TypeError):
            raise _unknown_agent(agent) from None
        n = self.layout.n_cards
        out = np.zeros(self.state_space.shape, np.float32)
        size = self.obs_layout.size
        out[:size] = self._enc.obs[seat]
        for k, other in enumerate((1, 2, 3)):
            for c in bits(game.hands[(seat + other) % N_SEATS]):
                out[size + k * n + c] = 1.0
        for c in bits(game.nest):
            out[size + 3 * n + c] = 1.0
        for c in bits(game.discards):
            out[size + 4 * n + c] = 1.0
        return out

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            warnings.warn("render() called with render_mode=None; pass render_mode='ansi', 'human' or 'rgb_array'")
            return None
        if self._game is None:
            raise NotResetError("render() called before reset(); call reset() first")
        if self.render_mode == "rgb_array":
            from .render import draw_table

            return draw_table(self._game)
        text = render_text(self._game)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass

    # --------------------------------------------------------------- helpers
    def legal_actions(self) -> list[int]:
        """Legal action ids of the seat to act."""
        return self.game.legal_actions()

    def decode(self, agent: str):
        """This seat's observation as a readable :class:`rook_env.observation.PlayerView`."""
        from .observation import decode

        return decode(self.observe(agent)["observation"], self.config)

    # -------------------------------------------------------------- copying
    def __deepcopy__(self, memo: dict) -> "raw_env":
        import copy

        new = self.__class__.__new__(self.__class__)
        memo[id(self)] = new
        for k, v in self.__dict__.items():
            if k in ("_game", "_enc", "layout", "obs_layout"):
                continue
            setattr(new, k, copy.deepcopy(v, memo))
        new.layout, new.obs_layout = self.layout, self.obs_layout  # shared, immutable
        new._game = None
        if self._game is not None:
            new._game = self._game.clone()
            new._game.rng = new._rng  # one RNG stream per env, as in reset()
            new._enc = ObservationEncoder(new._game)
            new._enc.obs[:] = self._enc.obs
        return new

    def __getstate__(self) -> dict[str, Any]:
        # The whole state, not just the constructor arguments (EzPickle's default): an
        # environment pickled mid-hand (Ray, multiprocessing) continues where it was.
        state = {k: v for k, v in self.__dict__.items() if k not in ("_enc", "layout", "obs_layout")}
        state["_obs"] = self._enc.obs if self._game is not None else None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        state = dict(state)
        obs = state.pop("_obs")
        self.__dict__.update(state)
        self.layout = layout_for(self.config)
        self.obs_layout = obs_layout(self.config)
        if self._game is not None:
            self._enc = ObservationEncoder(self._game)
            self._enc.obs[:] = obs


class CheckedRookEnv(raw_env):
    """``raw_env`` with PettingZoo's classic checks implemented natively (fast). Order
    enforcement and action bounds are shared with ``raw_env``; here an illegal action ends
    the episode with ``illegal_reward`` for the offender (TerminateIllegalWrapper semantics)
    instead of raising."""

    def __init__(
        self, render_mode: str | None = None, illegal_reward: float = -1.0, max_hands: int | None = None, **flags: Any
    ) -> None:
        illegal_reward = as_float(illegal_reward, "illegal_reward")
        super().__init__(render_mode=render_mode, max_hands=max_hands, **flags)
        EzPickle.__init__(self, render_mode=render_mode, illegal_reward=illegal_reward, max_hands=max_hands, **flags)
        self.illegal_reward = illegal_reward

    def step(self, action: Any) -> None:
        game = self._game
        if game is None:
            raise NotResetError("step() called before reset(); call reset() first")
        agent = self.agent_selection
        try:
            if self.terminations[agent] or self.truncations[agent]:
                self._was_dead_step(action)
                return
        except KeyError:  # the episode is over and every agent has been removed
            raise self._done_error(action) from None
        a = action if type(action) is int and 0 <= action < self.layout.n_actions else self._as_action(action)
        if self._mask is None:
            self._mask = game.legal_mask()
        if not (self._mask >> a) & 1:
            warnings.warn(
                f"[rook_env] {game.illegal_message(a, self._mask)}; "
                f"the episode ends and {agent} receives {self.illegal_reward}",
                IllegalActionWarning,
            )
            self._cumulative_rewards[agent] = 0
            self.terminations = {a_: True for a_ in self.agents}
            self.truncations = {a_: True for a_ in self.agents}
            self.rewards = {a_: 0 for a_ in self.agents}
            self.rewards[agent] = self.illegal_reward
            self._accumulate_rewards()
            self._rewards_dirty = True
            self.infos = {a_: {"illegal_action": {"agent": agent, "action": a}} for a_ in self.agents}
            self._deads_step_first()
            return
        super().step(a)


GAMES = ("partnership", "call_partner")


def env(
    render_mode: str | None = None,
    illegal_reward: float = -1.0,
    max_hands: int | None = None,
    game: str = "partnership",
    **flags: Any,
) -> AECEnv:
    """The Rook environment with PettingZoo's classic checks (see the module docstring).

    ``game="call_partner"`` makes call-your-partner Rook for 4-6 players instead
    (:func:`rook_env.call_partner.env`, RULES.md section C); ``flags`` are that game's."""
    if game == "call_partner":
        from .call_partner import env as call_partner_env

        return call_partner_env(render_mode=render_mode, illegal_reward=illegal_reward, max_hands=max_hands, **flags)
    if game != "partnership":
        raise ValueError(f"game must be one of {GAMES}, got {game!r}")
    return CheckedRookEnv(render_mode=render_mode, illegal_reward=illegal_reward, max_hands=max_hands, **flags)

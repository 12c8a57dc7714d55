"""Rook: four-player partnership trick-taking with an auction (PettingZoo AEC, classic family).

This module docstring is the environment's documentation page (see README for tables).

| Import             | ``from rook_env import env`` (checked) or ``raw_env`` (raises on misuse) |
|--------------------|--------------------------------------------------------------------------|
| Registered id      | ``pettingzoo.make("aec", "rook_env/Rook-v0", **flags)``                  |
| Actions            | Discrete(58) (default deck; see :mod:`rook_env.cards`)                    |
| Agents             | ``player_0`` .. ``player_3``; teams {0, 2} and {1, 3}                    |
| Observation        | Dict(observation=Box(583,), action_mask=Box(0, 1, (58,), int8))          |
| Rewards            | flag ``reward``: ``score_diff`` (default), ``team_score``, ``win_loss``  |

Flow of one hand: bidding (pass / bid / redeal), the bidder discards five cards one
by one, names trump, then nine tricks of card play. Only the seat to act has a
non-zero action mask. ``episode="game"`` keeps dealing (dealer rotating) until a team
wins at ``target_score``.

Rewards are given when a hand ends. ``score_diff``: the own team's score change minus
the opponents' (a set bid of 85 with 80 captured: -125 to the bidders, +125 to the
defenders); ``team_score``: the own team's score change; ``win_loss``: +1 / -1 to the
winning / losing team at the end of a game episode (in hand episodes: the sign of
``score_diff`` for that hand, 0 on a tie).

Illegal actions: :class:`raw_env` raises ``ValueError`` naming the action, the phase
and the legal actions. :func:`env` follows PettingZoo's classic convention
(``TerminateIllegalWrapper``): a warning, the episode ends, the offender receives
``illegal_reward`` (default -1) and the others 0. Actions outside the action space, a
non-integer action, or stepping before ``reset()`` raise in both.

Version history:
- v0: initial release.
"""

from __future__ import annotations

import operator
import random
import warnings
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv

from .cards import N_SEATS, bits, layout_for
from .config import make_config
from .observation import ObservationEncoder, obs_layout, unpack_mask
from .render import render_text
from .rules import OVER, RookState

AGENTS = tuple(f"player_{i}" for i in range(N_SEATS))
AGENT_SEAT = {a: i for i, a in enumerate(AGENTS)}
OPTION_KEYS = ("hands", "nest", "dealer", "scores")


class raw_env(AECEnv, EzPickle):
    """The Rook AEC environment. Flags: see RULES.md and :class:`rook_env.config.RookConfig`."""

    metadata = {
        "render_modes": ["human", "ansi", "rgb_array"],
        "name": "rook_v0",
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(self, render_mode: str | None = None, max_hands: int | None = None, **flags: Any) -> None:
        EzPickle.__init__(self, render_mode=render_mode, max_hands=max_hands, **flags)
        super().__init__()
        if max_hands is not None and (isinstance(max_hands, bool) or not isinstance(max_hands, int) or max_hands <= 0):
            raise ValueError(f"max_hands={max_hands!r} must be a positive integer or None")
        # Game episodes between weak agents can last very long (sets keep both scores low):
        # after max_hands hands the episode is truncated.
        self.max_hands = max_hands
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode={render_mode!r} is not allowed; allowed values: None, human, ansi, rgb_array"
            )
        if render_mode == "rgb_array":
            from .render_image import require_pillow

            require_pillow()  # fail here, naming the extra to install, not at the first render()
        self.render_mode = render_mode
        self.config = make_config(**flags)
        self.layout = layout_for(self.config)
        self.obs_layout = obs_layout(self.config)
        n_act = self.layout.n_actions
        self.possible_agents = list(AGENTS)
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(self.obs_layout.low, self.obs_layout.high, dtype=np.float32),
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
        self.game: RookState | None = None
        self._mask: int | None = None

    # ------------------------------------------------------------- PettingZoo
    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None or self._rng is None:
            self._rng = random.Random(seed)
        game = RookState(self.config)
        game.rng = self._rng
        options = dict(options or {})
        unknown = sorted(set(options) - set(OPTION_KEYS))
        if unknown:
            # Not an error: PettingZoo's api_test resets with arbitrary options. Not silent either.
            warnings.warn(f"ignoring unknown reset option(s) {', '.join(unknown)}; known: {', '.join(OPTION_KEYS)}")
        game.new_game(
            dealer=options.get("dealer"),
            scores=options.get("scores"),
            hands=options.get("hands"),
            nest=options.get("nest"),
        )
        self.game = game
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
        self.agent_selection = AGENTS[game.current]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = AGENT_SEAT[agent]
        game = self.game
        if game is None:
            raise RuntimeError("observe() called before reset(); call reset() first")
        if seat == game.current and game.phase != OVER:
            if self._mask is None:
                self._mask = game.legal_mask()
            mask = unpack_mask(self._mask, self.layout.n_actions)
        else:
            mask = np.zeros(self.layout.n_actions, np.int8)
        return {"observation": self._enc.obs[seat].copy(), "action_mask": mask}

    def step(self, action: Any) -> None:
        game = self.game
        if game is None:
            raise RuntimeError("step() called before reset(); call reset() first")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
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
            if game.phase != OVER and self.max_hands is not None and game.hands_played >= self.max_hands:
                self.truncations = {a_: True for a_ in self.agents}
        self.agent_selection = AGENTS[game.current]
        if game.phase == OVER:
            self.terminations = {a_: True for a_ in self.agents}
        if self.render_mode == "human":
            self.render()

    def _as_action(self, action: Any) -> int:
        if action is None:
            raise ValueError(f"action None given for {self.agent_selection}, which is not done; pass an action id")
        try:
            if isinstance(action, (bool, np.bool_)):
                raise TypeError
            a = operator.index(action)
        except TypeError:
            raise ValueError(f"action {action!r} is not an integer action id") from None
        if not 0 <= a < self.layout.n_actions:
            raise ValueError(f"action {a} is outside the action space Discrete({self.layout.n_actions})")
        return a

    def _hand_finished(self) -> None:
        game = self.game
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
        seat = AGENT_SEAT[agent]
        game = self.game
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
        if self.game is None:
            raise RuntimeError("render() needs reset() first")
        if self.render_mode == "rgb_array":
            from .render_image import draw_table

            return draw_table(self.game)
        text = render_text(self.game)
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

        return decode(self._enc.obs[AGENT_SEAT[agent]], self.config)

    def __deepcopy__(self, memo: dict) -> "raw_env":
        import copy

        new = self.__class__.__new__(self.__class__)
        memo[id(self)] = new
        for k, v in self.__dict__.items():
            if k in ("game", "_enc"):
                continue
            setattr(new, k, copy.deepcopy(v, memo))
        if self.game is not None:
            new.game = self.game.clone()
            new.game.rng = new._rng  # one RNG stream per env, as in reset()
            new._enc = ObservationEncoder(new.game)
            new._enc.obs[:] = self._enc.obs
        return new


class CheckedRookEnv(raw_env):
    """``raw_env`` with PettingZoo's classic checks implemented natively (fast). Order
    enforcement and action bounds are shared with ``raw_env``; here an illegal action ends
    the episode with ``illegal_reward`` for the offender (TerminateIllegalWrapper semantics)
    instead of raising."""

    def __init__(
        self, render_mode: str | None = None, illegal_reward: float = -1.0, max_hands: int | None = None, **flags: Any
    ) -> None:
        super().__init__(render_mode=render_mode, max_hands=max_hands, **flags)
        EzPickle.__init__(self, render_mode=render_mode, illegal_reward=illegal_reward, max_hands=max_hands, **flags)
        self.illegal_reward = float(illegal_reward)

    def step(self, action: Any) -> None:
        if self.game is None:
            raise RuntimeError("step() called before reset(); call reset() first")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        a = action if type(action) is int and 0 <= action < self.layout.n_actions else self._as_action(action)
        if self._mask is None:
            self._mask = self.game.legal_mask()
        if not (self._mask >> a) & 1:
            warnings.warn(
                f"[rook_env] {self.game.illegal_message(a, self._mask)}; "
                f"the episode ends and {agent} receives {self.illegal_reward}"
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


def env(
    render_mode: str | None = None, illegal_reward: float = -1.0, max_hands: int | None = None, **flags: Any
) -> CheckedRookEnv:
    """The Rook environment with PettingZoo's classic checks (see the module docstring)."""
    return CheckedRookEnv(render_mode=render_mode, illegal_reward=illegal_reward, max_hands=max_hands, **flags)

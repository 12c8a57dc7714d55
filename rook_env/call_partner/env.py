"""Call-your-partner Rook: 4, 5 or 6 players, secret partnerships (PettingZoo AEC, classic family).

This module docstring is the environment's documentation page (README has the full tables).

| Import             | ``from rook_env.call_partner import env`` (checked) or ``raw_env`` (raises on misuse) |
|--------------------|----------------------------------------------------------------------------------------|
| Actions            | Discrete(86) (full deck; 74 with ``deck="no_twos_to_fours"``; see :mod:`.layout`)      |
| Agents             | ``player_0`` .. ``player_{n-1}``, n = ``players`` (4, 5 or 6; default 5)                 |
| Observation        | Dict(observation=Box(1084,), action_mask=Box(0, 1, (86,), int8)) for 5 players, full deck |
| Rewards            | flag ``reward``: ``score_diff`` (default), ``team_score``, ``win_loss``                  |

Flow of one hand (RULES.md section C): an auction (pass / bid 100..200 / redeal), the high
bidder takes the nest and lays down as many cards one by one (the table is told whether the
new nest holds counters), names trump, chooses "rook high" or "rook low", and calls one card
(two with 6 players) that is not in its hand. Whoever holds a called card is the bidder's
secret partner: it knows at once, everyone else learns it when the card is played. A called
card in the nest means the bidder plays alone. Then one trick per card in hand; the last trick
takes the nest and 20 points (200 per hand). Only the seat to act has a non-zero action mask.
``episode="game"`` deals hand after hand (dealer rotating) until a player wins at
``target_score`` (500).

Rewards are given when a hand ends, per player (scores are individual). ``score_diff``: the
player's hand score minus the mean of the other players' hand scores; the rewards sum to zero.
Example, five players, bid 150 made with 160 by the bidder and one partner: they score +160
each, the three defenders +40 each, so the bidder and partner receive 160 - (160 + 3 * 40) / 4
= +90 and each defender 40 - (2 * 160 + 2 * 40) / 4 = -60. ``team_score``: the player's own
hand score. ``win_loss``: +1 to the game winner and -1 to everyone else when a game episode
ends (in hand episodes: the sign of ``score_diff`` for that hand). ``infos[agent]["hand"]``
holds the hand's result at its end: bidder, bid, trump, rook, called cards, partners, side,
points per seat, side points, made, hand and game scores, game winner.

Illegal actions: :class:`raw_env` raises ``ValueError`` naming the action, the phase and the
legal actions. :func:`env` follows PettingZoo's classic convention (``TerminateIllegalWrapper``
semantics): a warning, the episode ends, the offender receives ``illegal_reward`` (default -1)
and the others 0. Actions outside the action space, non-integer actions, or stepping before
``reset()`` raise in both.

Rendering: ``render_mode="ansi"`` / ``"human"`` (text) or ``"rgb_array"`` (the table drawn with
Pillow, ``pip install "rook_env[render]"``: every seat's cards, the auction, contract, the called
card(s) and the partners as far as they are revealed, with the secret partner marked as spectator
information); :func:`rook_env.render.draw_seat_view` draws what one seat may know.

Reset options: ``hands`` (n lists of card ids) with ``nest``, ``dealer``, ``scores`` (n ints).

Version history:
- v0: initial release.
"""

from __future__ import annotations

import operator
import random
import warnings
from typing import Any, Sequence

import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv

from ..env import RENDER_MODES
from .config import CallPartnerConfig, make_config
from .layout import bits, layout_for
from .observation import CallPartnerView, decode, encode, obs_layout, unpack_mask
from .render import render_text
from .rules import OVER, CallPartnerState

OPTION_KEYS = ("hands", "nest", "dealer", "scores")


def hand_rewards(config: CallPartnerConfig, hand_scores: Sequence[int], game_winner: int) -> list[float]:
    """Every seat's reward for a finished hand (``raw_env``'s flag ``reward``, see its docstring)."""
    n = config.players
    total = sum(hand_scores)
    out = []
    for seat in range(n):
        diff = hand_scores[seat] - (total - hand_scores[seat]) / (n - 1)  # own minus the mean of the others'
        if config.reward == "score_diff":
            r: float = diff
        elif config.reward == "team_score":
            r = hand_scores[seat]
        elif config.episode == "game":
            r = 0 if game_winner < 0 else (1 if game_winner == seat else -1)
        else:
            r = (diff > 0) - (diff < 0)
        out.append(r)
    return out



class raw_env(AECEnv, EzPickle):
    """The call-your-partner AEC environment. Flags: RULES.md section C and
    :class:`rook_env.call_partner.config.CallPartnerConfig`."""

    metadata = {
        "render_modes": RENDER_MODES,
        "name": "rook_call_partner_v0",
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(self, render_mode: str | None = None, max_hands: int | None = None, **flags: Any) -> None:
        EzPickle.__init__(self, render_mode=render_mode, max_hands=max_hands, **flags)
        super().__init__()
        if max_hands is not None and (isinstance(max_hands, bool) or not isinstance(max_hands, int) or max_hands <= 0):
            raise ValueError(f"max_hands={max_hands!r} must be a positive integer or None")
        self.max_hands = max_hands  # game episodes are truncated after this many hands
        if render_mode == "rgb_array":
            from ..render_image import require_pillow

            require_pillow()  # fail here, naming the extra to install, not at the first render()
        if render_mode is not None and render_mode not in ("human", "ansi", "rgb_array"):
            raise ValueError(
                f"render_mode={render_mode!r} is not allowed; allowed values: None, human, ansi, rgb_array"
            )
        self.render_mode = render_mode
        self.config = make_config(**flags)
        self.n = self.config.players
        self.layout = layout_for(self.config)
        self.obs_layout = obs_layout(self.config)
        self.possible_agents = [f"player_{i}" for i in range(self.n)]
        self.agent_seat = {a: i for i, a in enumerate(self.possible_agents)}
        n_act = self.layout.n_actions
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(self.obs_layout.low, self.obs_layout.high, dtype=np.float32),
                "action_mask": spaces.Box(0, 1, (n_act,), dtype=np.int8),
            }
        )
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(n_act) for a in self.possible_agents}
        # state(): seat 0's observation, then the other hands, the nest as dealt, the discards
        # and the partner seats ((n - 1) * N + N + N + n).
        n_hidden = (self.n + 1) * self.layout.n_cards + self.n
        self.state_space = spaces.Box(
            np.concatenate([self.obs_layout.low, np.zeros(n_hidden, np.float32)]),
            np.concatenate([self.obs_layout.high, np.ones(n_hidden, np.float32)]),
            dtype=np.float32,
        )
        self._rng: random.Random | None = None
        self.game: CallPartnerState | None = None
        self._mask: int | None = None
        self._obs: dict[int, np.ndarray] = {}

    # ------------------------------------------------------------- PettingZoo
    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None or self._rng is None:
            self._rng = random.Random(seed)
        game = CallPartnerState(self.config)
        game.rng = self._rng
        options = dict(options or {})
        unknown = sorted(set(options) - set(OPTION_KEYS))
        if unknown:
            # Not an error: PettingZoo's api_test resets with arbitrary options. Not silent either.
            warnings.warn(f"ignoring unknown reset option(s) {', '.join(unknown)}; known: {', '.join(OPTION_KEYS)}")
        game.new_game(
            dealer=options.get("dealer"), scores=options.get("scores"),
            hands=options.get("hands"), nest=options.get("nest"),
        )
        self.game = game
        self._mask = None
        self._obs = {}
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0 for a in self.agents}
        self._cumulative_rewards = {a: 0 for a in self.agents}
        self._rewards_dirty = False
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = self.possible_agents[game.current]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        game = self.game
        if game is None:
            raise RuntimeError("observe() called before reset(); call reset() first")
        seat = self.agent_seat[agent]
        obs = self._obs.get(seat)
        if obs is None:  # encoded once per step and seat
            obs = self._obs[seat] = encode(game, seat, ol=self.obs_layout)
        if seat == game.current and game.phase != OVER:
            if self._mask is None:
                self._mask = game.legal_mask()
            mask = unpack_mask(self._mask, self.layout.n_actions)
        else:
            mask = np.zeros(self.layout.n_actions, np.int8)
        return {"observation": obs.copy(), "action_mask": mask}

    def step(self, action: Any) -> None:
        game = self.game
        if game is None:
            raise RuntimeError("step() called before reset(); call reset() first")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        a = action if type(action) is int and 0 <= action < self.layout.n_actions else self._as_action(action)
        hands_played = game.hands_played
        game.apply(a, self._mask)  # raises ValueError on an illegal action
        self._mask = None
        self._obs = {}
        self._cumulative_rewards[agent] = 0
        if self.infos[agent]:  # the last hand's result was shown at this seat's turn; now it is stale
            self.infos[agent] = {}
        if self._rewards_dirty:
            self._clear_rewards()
            self._rewards_dirty = False
        if game.hands_played != hands_played:
            self._hand_finished()
            if game.phase != OVER and self.max_hands is not None and game.hands_played >= self.max_hands:
                self.truncations = {a_: True for a_ in self.agents}
        self.agent_selection = self.possible_agents[game.current]
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
        res = self.game.hand_result
        for agent, r in zip(self.possible_agents, hand_rewards(self.config, res["hand_scores"], self.game.winner)):
            self.rewards[agent] = r
            self._cumulative_rewards[agent] += r
            self.infos[agent] = {"hand": dict(res)}
        self._rewards_dirty = True

    def state(self) -> np.ndarray:
        """Global state for centralized critics: seat 0's view plus what is hidden from it."""
        return self.state_for("player_0")

    def state_for(self, agent: str) -> np.ndarray:
        """Full-information vector relative to ``agent``: its observation, then the hands of the
        other seats (rel 1 .. n-1), the nest as dealt, the discards, and the partner seats (rel)."""
        seat = self.agent_seat[agent]
        game = self.game
        N, n = self.layout.n_cards, self.n
        out = np.zeros(self.state_space.shape, np.float32)
        size = self.obs_layout.size
        out[:size] = encode(game, seat, ol=self.obs_layout)
        for k in range(1, n):
            for c in bits(game.hands[(seat + k) % n]):
                out[size + (k - 1) * N + c] = 1.0
        base = size + (n - 1) * N
        for c in bits(game.nest):
            out[base + c] = 1.0
        for c in bits(game.discards):
            out[base + N + c] = 1.0
        for s in game.partners:
            out[base + 2 * N + (s - seat) % n] = 1.0
        return out

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            warnings.warn("render() called with render_mode=None; pass render_mode='ansi', 'human' or 'rgb_array'")
            return None
        if self.game is None:
            raise RuntimeError("render() needs reset() first")
        if self.render_mode == "rgb_array":  # the spectator view; render.draw_seat_view draws a seat's
            from ..render import draw_table

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

    def decode(self, agent: str) -> CallPartnerView:
        """This seat's observation as a readable :class:`CallPartnerView`."""
        return decode(encode(self.game, self.agent_seat[agent], ol=self.obs_layout), self.config)

    def __deepcopy__(self, memo: dict) -> "raw_env":
        import copy

        new = self.__class__.__new__(self.__class__)
        memo[id(self)] = new
        for k, v in self.__dict__.items():
            if k == "game":
                continue
            setattr(new, k, copy.deepcopy(v, memo))
        if self.game is not None:
            new.game = self.game.clone()
            new.game.rng = new._rng  # one RNG stream per env, as in reset()
        return new


class CheckedCallPartnerEnv(raw_env):
    """``raw_env`` with PettingZoo's classic checks: an illegal action ends the episode with
    ``illegal_reward`` for the offender (TerminateIllegalWrapper semantics) instead of raising."""

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
) -> CheckedCallPartnerEnv:
    """The call-your-partner environment with PettingZoo's classic checks (see the module docstring)."""
    return CheckedCallPartnerEnv(render_mode=render_mode, illegal_reward=illegal_reward, max_hands=max_hands, **flags)


def make_env(checked: bool = True, **flags: Any) -> raw_env:
    """Dispatch target for ``rook_env.env(game="call_partner", ...)``: :func:`env` when
    ``checked`` (the default), else :class:`raw_env`; ``flags`` as for either."""
    return env(**flags) if checked else raw_env(**flags)

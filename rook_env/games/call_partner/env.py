"""Call-your-partner Rook: 4, 5 or 6 players, secret partnerships (PettingZoo AEC, classic family).

This module docstring is the environment's documentation page (README has the full tables).

| Import             | ``rook_env.env(game="call_partner", players=5)`` (checked) or ``rook_env.raw_env(...)``; also ``rook_env.call_partner.env`` |
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
semantics): an ``IllegalActionWarning``, the episode ends, the offender receives ``illegal_reward``
(default -1) and the others 0. Actions outside the action space, non-integer actions, or stepping
before ``reset()`` raise in both. Everything else (misuse errors, copying and pickling) is the
shared wrapper's, :class:`rook_env.core.aec.TrickTakingEnv`, as for the partnership game.

``max_hands`` (any episode kind) truncates the episode once that many hands are played; the
next hand is already dealt and shown.

Rendering: ``render_mode="ansi"`` / ``"human"`` (text) or ``"rgb_array"`` (the table drawn with
Pillow, ``pip install "rook_env[render]"``: every seat's cards, the auction, contract, the called
card(s) and the partners as far as they are revealed, with the secret partner marked as spectator
information); :func:`rook_env.core.render.draw_seat_view` draws what one seat may know.

Reset options: ``hands`` (n lists of card ids) with ``nest``, ``dealer``, ``scores`` (n ints).

Version history:
- v0: initial release.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from pettingzoo import AECEnv

from rook_env.core.aec import OPTION_KEYS, CheckedMixin, TrickTakingEnv, env_metadata
from .config import CallPartnerConfig
from .observation import CallPartnerView, decode, encode
from .rules import OVER, CallPartnerState

__all__ = ["OPTION_KEYS", "CheckedCallPartnerEnv", "env", "hand_rewards", "make_env", "raw_env"]


def hand_rewards(config: CallPartnerConfig, hand_scores: Sequence[int], game_winner: int) -> list[float]:
    """Every seat's reward for a finished hand (``raw_env``'s flag ``reward``, RULES.md C12)."""
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


class raw_env(TrickTakingEnv):
    """The call-your-partner AEC environment. Flags: RULES.md section C and
    :class:`rook_env.games.call_partner.config.CallPartnerConfig`."""

    GAME = "call_partner"
    RENDER_TEXT = "rook_env.games.call_partner.render:render_text"
    _NOT_COPIED = TrickTakingEnv._NOT_COPIED + ("_obs",)

    metadata = env_metadata("rook_call_partner_v0")

    # Observations are encoded on demand, once per step and seat (the state has no encoder).
    def _obs_reset(self, game: CallPartnerState) -> None:
        self._obs: dict[int, np.ndarray] = {}

    def _obs_update(self, seat: int, action: int, phase: int, high_bid: int, deals: int) -> None:
        self._obs = {}

    def _obs_of(self, seat: int) -> np.ndarray:
        obs = self._obs.get(seat)
        if obs is None:
            obs = self._obs[seat] = encode(self._game, seat, ol=self.obs_layout)
        return obs

    def _hand_rewards(self, result: dict[str, Any], game_winner: int) -> list[float]:
        return hand_rewards(self.config, result["hand_scores"], game_winner)

    def _end_of_hand(self, game: CallPartnerState) -> None:
        if game.phase != OVER and self.max_hands is not None and game.hands_played >= self.max_hands:
            self.truncations = {a_: True for a_ in self.agents}
        if game.phase == OVER:
            self.terminations = {a_: True for a_ in self.agents}

    def _extra_state_size(self) -> int:
        return self.n  # the partner seats

    def _extra_state(self, out: np.ndarray, base: int, seat: int) -> None:
        for s in self._game.partners:
            out[base + (s - seat) % self.n] = 1.0

    def decode(self, agent: str) -> CallPartnerView:
        """This seat's observation as a readable :class:`CallPartnerView`."""
        return decode(self._obs_of(self.agent_seat[agent]), self.config)


class CheckedCallPartnerEnv(CheckedMixin, raw_env):
    """``raw_env`` with PettingZoo's classic checks: an illegal action ends the episode with
    ``illegal_reward`` for the offender (TerminateIllegalWrapper semantics) instead of raising."""


def env(
    render_mode: str | None = None, illegal_reward: float = -1.0, max_hands: int | None = None, **flags: Any
) -> AECEnv:
    """The call-your-partner environment with PettingZoo's classic checks (see the module docstring)."""
    return CheckedCallPartnerEnv(render_mode=render_mode, illegal_reward=illegal_reward, max_hands=max_hands, **flags)


def make_env(checked: bool = True, **flags: Any) -> raw_env:
    """:func:`env` when ``checked`` (the default), else :class:`raw_env`; ``flags`` as for either."""
    return env(**flags) if checked else raw_env(**flags)

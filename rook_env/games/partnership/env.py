"""Rook: four-player partnership trick-taking with an auction (PettingZoo AEC, classic family).

This module docstring is the environment's documentation page (see README for tables).

| Import             | ``from rook_env import env`` (checked) or ``raw_env`` (raises on misuse) |
| Other games        | ``env(game="call_partner", players=5, ...)``: :mod:`rook_env.games`      |
|--------------------|--------------------------------------------------------------------------|
| Registered id      | ``pettingzoo.make("aec", "rook_env/Rook-v1", **flags)`` (PettingZoo >= 1.27) |
| Actions            | Discrete(58) (default deck; see :mod:`rook_env.games.partnership.cards`)                    |
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

from typing import Any

import numpy as np
from pettingzoo import AECEnv

from .cards import N_SEATS
from rook_env.core.aec import (
    OPTION_KEYS,
    RENDER_MODES,
    CheckedMixin,
    IllegalActionWarning,
    NotResetError,
    TrickTakingEnv,
    env_metadata,
)
from .observation import SCORE_CLIP, ObservationEncoder, decode
from .rules import OVER, RookState

__all__ = ["AGENTS", "AGENT_SEAT", "ENV_ID", "OPTION_KEYS", "RENDER_MODES", "CheckedRookEnv", "IllegalActionWarning",
           "NotResetError", "env", "raw_env"]

# The registered id (namespace/name-version); metadata["name"] is its name-version part.
ENV_ID = "rook_env/Rook-v1"  # the PettingZoo registry id (the game registers it in its package)

AGENTS = tuple(f"player_{i}" for i in range(N_SEATS))
AGENT_SEAT = {a: i for i, a in enumerate(AGENTS)}


class raw_env(TrickTakingEnv):
    """The Rook AEC environment. Flags: see RULES.md and :class:`rook_env.games.partnership.config.RookConfig`;
    ``game="call_partner"`` (with ``players``) builds call-your-partner Rook's instead."""

    GAME = "partnership"
    RENDER_TEXT = "rook_env.games.partnership.render:render_text"
    _NOT_COPIED = TrickTakingEnv._NOT_COPIED + ("_enc",)

    metadata = env_metadata(ENV_ID.split("/")[1])

    def __init__(self, render_mode: str | None = None, max_hands: int | None = None, game: Any = None,
                 **flags: Any) -> None:
        super().__init__(render_mode=render_mode, max_hands=max_hands, **flags)
        if self.max_hands is not None and self.config.episode != "game":
            raise ValueError(
                f"max_hands={self.max_hands} applies only to episode='game'; a hand episode is always one hand"
            )

    def _check_scores(self, game: RookState, scores: Any) -> list[int]:
        scores = game.check_scores(scores)
        limit = int(SCORE_CLIP * self.config.target_score)
        if max(abs(scores[0]), abs(scores[1])) > limit:
            raise ValueError(
                f"scores={scores} out of range: each must be within -{limit}..{limit} "
                f"(SCORE_CLIP={SCORE_CLIP:g} times target_score={self.config.target_score}), "
                "the scores the observation encodes exactly"
            )
        return scores

    def _prepare_state(self, game: RookState) -> None:
        # Game episodes between weak agents can last very long (sets keep both scores low):
        # after max_hands hands the game stops at the end of a hand, showing no further deal.
        game.hand_limit = self.max_hands

    # The four observations are kept up to date incrementally (ObservationEncoder, the hot path).
    def _obs_reset(self, game: RookState) -> None:
        self._enc = ObservationEncoder(game)
        self._enc.rebuild()

    def _obs_update(self, seat: int, action: int, phase: int, high_bid: int, deals: int) -> None:
        self._enc.update(seat, action, phase, high_bid, deals)

    def _obs_of(self, seat: int) -> np.ndarray:
        return self._enc.obs[seat]

    def _obs_saved(self) -> np.ndarray:
        return self._enc.obs

    def _obs_restore(self, saved: np.ndarray | None) -> None:
        if saved is not None:
            self._enc.obs[:] = saved

    def _hand_rewards(self, result: dict[str, Any], game_winner: int) -> list[float]:
        """Per seat: the team's reward (RULES.md R11; see the module docstring)."""
        delta = result["hand_scores"]
        mode = self.config.reward
        out = []
        for seat in range(N_SEATS):
            t = seat & 1
            if mode == "score_diff":
                r = delta[t] - delta[1 - t]
            elif mode == "team_score":
                r = delta[t]
            elif self.config.episode == "game":
                r = 0 if game_winner < 0 else (1 if game_winner == t else -1)
            else:
                d = delta[t] - delta[1 - t]
                r = (d > 0) - (d < 0)
            out.append(r)
        return out

    def _end_of_hand(self, game: RookState) -> None:
        if game.phase == OVER:
            # Over without a winner in a game episode: stopped at max_hands (game.hand_limit).
            truncated = game.winner < 0 and self.config.episode == "game"
            done = self.truncations if truncated else self.terminations
            for a_ in self.agents:
                done[a_] = True

    def decode(self, agent: str):
        """This seat's observation as a readable :class:`rook_env.games.partnership.observation.PlayerView`."""
        return decode(self.observe(agent)["observation"], self.config)


class CheckedRookEnv(CheckedMixin, raw_env):
    """``raw_env`` with PettingZoo's classic checks implemented natively (fast). Order
    enforcement and action bounds are shared with ``raw_env``; here an illegal action ends
    the episode with ``illegal_reward`` for the offender (TerminateIllegalWrapper semantics)
    instead of raising."""


def env(
    render_mode: str | None = None,
    illegal_reward: float = -1.0,
    max_hands: int | None = None,
    game: str | None = None,
    **flags: Any,
) -> AECEnv:
    """The environment of ``game`` (default ``"partnership"``) with PettingZoo's classic checks
    (see the module docstring). ``game="call_partner"`` makes call-your-partner Rook for 4-6
    players (``players=``, RULES.md section C); ``flags`` are that game's (:mod:`rook_env.games`)."""
    return CheckedRookEnv(render_mode=render_mode, illegal_reward=illegal_reward, max_hands=max_hands, game=game,
                          **flags)

"""The game a run trains on, the only game-specific part of training: :class:`Game` holds the batched
engine (:class:`rook_env.vector.RookVectorEnv`, or :class:`rook_env.vector.call_partner.CallPartnerVectorEnv`
for call-your-partner Rook), the seat count, the learning groups, the heuristic and the fair match used for
evaluation; :func:`game_of` builds it from a :class:`~rook_env.training.config.Config`. Collection, the warm
start, evaluation and checkpoints are one piece of code for both games, parametrised by it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from rook_env import raw_env
from rook_env.agents import make_agent
from rook_env.agents.registry import game_config
from rook_env.vector import RookVectorEnv

from .config import Config, game_flags


class RowByRow:
    """``act_batch`` for an agent that decides from one observation alone and keeps no card memory
    (the call-your-partner heuristic): one ``act`` per row, so the table keys are not needed."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent

    def reset(self) -> None:
        self.agent.reset()

    def act_batch(self, obs: np.ndarray, mask: np.ndarray, keys: np.ndarray | None = None) -> np.ndarray:
        act = self.agent.act
        return np.array([act({"observation": o, "action_mask": m}) for o, m in zip(obs, mask)], np.int64)


@dataclass(frozen=True)
class Game:
    """All that collection, the warm start, evaluation and checkpoints need to know of the game:
    the training loop is one loop, parametrised by this (:func:`game_of`).

    A non-self episode's learner plays the seats ``s`` with ``s % groups == g`` for a group ``g``
    drawn per episode: one team (seats g and g + 2) in the partnership game (``groups=2``), one seat
    in call-your-partner Rook (``groups=seats``), the opponent kind filling the other seats: the
    same "candidate against the field" as the rotation evaluation."""

    name: str
    seats: int
    groups: int
    flags: dict[str, Any]  # the rule flags the game's env constructors take (no "game" key)
    vector_env: Callable[..., Any]  # (num_envs, **flags): RookVectorEnv's batched API
    raw_env: Callable[..., Any]  # (**flags): the PettingZoo AEC env (sizes of observations, actions, critic input)
    heuristic: str  # agent spec of the game's heuristic (opponent kind and eval opponent "heuristic")
    match: Callable[..., tuple[float, tuple[float, float]]]  # (factory, opponent spec, deals, seed, agent flags)
    eval_unit: str  # what match measures
    phases: tuple[str, ...]  # decision phases of the observation's leading phase one-hot (BC accuracy)
    phase_columns: int  # width of that one-hot

    @property
    def agent_flags(self) -> dict[str, Any]:
        return {**self.flags, "game": self.name}

    def heuristic_batch(self) -> Any:
        """The game's heuristic with ``act_batch(obs, mask, keys)``; keys are ``table * seats + seat``."""
        agent = make_agent(self.heuristic, **self.agent_flags)
        return agent if hasattr(agent, "act_batch") else RowByRow(agent)


def duplicate_match(factory: Callable, opponent: str, deals: int, seed: int, flags: dict,
                    game_scores: bool = False, engine: str = "env") -> tuple[float, tuple[float, float]]:
    """Partnership duplicate (rook_env.evaluation.play_match): each deal with both seatings; points per deal.
    ``game_scores``: every hand is dealt with its game's running score (a game-episode run's agent reads it);
    ``engine="tables"``: the hands as tables of the batched engine (rook_env.evaluation.tables)."""
    from rook_env.evaluation import play_match
    from rook_env.evaluation.tables import TABLES_BLOCK_SIZE

    flags = {k: v for k, v in flags.items() if k != "game"}
    extra = {"engine": engine, "block_size": TABLES_BLOCK_SIZE} if engine == "tables" else {}
    res = play_match(factory, opponent, deals=deals, seed=seed, flags=flags, duplicate=True, workers=1,
                     game_scores=game_scores, **extra)
    return float(res.mean), tuple(float(x) for x in res.ci)


def rotation_match(factory: Callable, opponent: str, deals: int, seed: int,
                   flags: dict) -> tuple[float, tuple[float, float]]:
    """Call-your-partner rotation (rook_env.evaluation.play_rotation_match): the policy in one chair,
    ``opponent`` in the others, each deal played in every rotation; the policy's hand score minus
    the mean of the others' (its mean score_diff)."""
    from rook_env.evaluation.call_partner import play_rotation_match

    res = play_rotation_match([factory, opponent], deals=deals, seed=seed, flags=flags, workers=1, check=False)
    return float(res.mean), tuple(float(x) for x in res.ci)


def game_of(cfg: Config) -> Game:
    """The :class:`Game` of a config."""
    if cfg.game == "call_partner":
        from rook_env.call_partner import raw_env as call_partner_env
        from rook_env.call_partner.rules import PHASE_NAMES
        from rook_env.vector.call_partner import CallPartnerVectorEnv

        flags = {k: v for k, v in game_flags(cfg).items() if k != "game"}
        flags["players"] = n = game_config(game_flags(cfg)).players
        return Game("call_partner", n, n, flags, CallPartnerVectorEnv, call_partner_env, "call_partner_heuristic",
                    rotation_match, "points per hand over the field (rotation, greedy)", PHASE_NAMES[:6],
                    len(PHASE_NAMES))
    return Game("partnership", 4, 2, dict(cfg.env_flags), RookVectorEnv, raw_env, "heuristic", duplicate_match,
                "points per deal (duplicate, greedy)", ("bid", "discard", "trump", "play"), 5)


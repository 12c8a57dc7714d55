"""Uniformly random legal play (seeded): the floor every agent must beat."""

from __future__ import annotations

import random
from typing import Any, Mapping

import numpy as np

from .base import check_batch, legal_from
from .registry import AgentFamily, game_config, register_family


class RandomAgent:
    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def reset(self) -> None:
        pass

    def act(self, observation: Mapping[str, np.ndarray], info: Mapping[str, Any] | None = None) -> int:
        legal = legal_from(observation)
        return int(legal[self.rng.randrange(legal.size)])

    def act_batch(self, observations: np.ndarray, masks: np.ndarray, keys: np.ndarray | None = None) -> np.ndarray:
        """Actions (N,) int64: what ``act`` would choose for each row, in row order (one draw per row)."""
        obs, masks, _ = check_batch(observations, masks, keys, np.asarray(observations).shape[-1],
                                    np.asarray(masks).shape[-1])
        return np.array([self.act({"observation": o, "action_mask": m}) for o, m in zip(obs, masks)], np.int64)


def _build(spec: str, seed: int | None, game: str, rules: dict[str, Any]) -> RandomAgent:
    game_config({**rules, "game": game})  # a random agent ignores the rules, but a bad flag is still an error
    return RandomAgent(seed=seed)


register_family(AgentFamily("random", _build, names=("random",)))

"""Uniformly random legal play (seeded): the floor every agent must beat."""

from __future__ import annotations

import random
from typing import Any, Mapping

import numpy as np

from .base import legal_from


class RandomAgent:
    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def reset(self) -> None:
        pass

    def act(self, observation: Mapping[str, np.ndarray], info: Mapping[str, Any] | None = None) -> int:
        legal = legal_from(observation)
        return int(legal[self.rng.randrange(legal.size)])

"""The agent protocol and the factory.

Every agent plays one seat from that seat's PettingZoo observation only::

    action = agent.act(observation, info=None)   # observation: {"observation": vec, "action_mask": mask}
    agent.reset()                                # optional, at the start of each hand/episode

``make_agent(spec, seed=None, **flags)`` builds one from a spec: ``"random"``,
``"heuristic"``, ``"ppo"`` (the shipped checkpoint) or a checkpoint path.
"""

from __future__ import annotations

from typing import Any, Mapping, Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Agent(Protocol):
    def act(self, observation: Mapping[str, np.ndarray], info: Mapping[str, Any] | None = None) -> int: ...

    def reset(self) -> None: ...


def legal_from(observation: Mapping[str, np.ndarray]) -> np.ndarray:
    """The legal action ids of an observation; raises if the mask is empty (not this seat's turn)."""
    legal = np.flatnonzero(observation["action_mask"])
    if legal.size == 0:
        raise ValueError("the action mask is empty: this seat has no legal action (not its turn, or the hand is over)")
    return legal


def make_agent(spec: str, seed: int | None = None, **flags: Any) -> Agent:
    """Build an agent from a spec string; ``flags`` are the environment's rule flags."""
    if spec == "random":
        from .random_agent import RandomAgent

        return RandomAgent(seed=seed)
    if spec == "heuristic":
        from .heuristic import HeuristicAgent

        return HeuristicAgent(seed=seed, **flags)
    if spec == "ppo" or spec.endswith(".pt"):
        from .ppo_agent import PPOAgent

        return PPOAgent.load(None if spec == "ppo" else spec, seed=seed, **flags)
    raise ValueError(f"unknown agent spec {spec!r}; use 'random', 'heuristic', 'ppo' or a checkpoint path ending in .pt")

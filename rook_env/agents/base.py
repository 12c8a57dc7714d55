"""The agent protocol: what every Rook agent provides. Imports no agent implementation.

Every agent plays one seat from that seat's PettingZoo observation only::

    action = agent.act(observation, info=None)   # observation: {"observation": vec, "action_mask": mask}
    agent.reset()                                # optional, at the start of each hand/episode
    agent.fallbacks                              # optional int: decisions where the agent's own rules
                                                 # found no move and it fell back to a default one

Agents are built from spec strings by :func:`rook_env.agents.registry.make_agent`.
"""

from __future__ import annotations

from typing import Any, Mapping, Protocol, runtime_checkable

import numpy as np

__all__ = ["Agent", "legal_from"]


@runtime_checkable
class Agent(Protocol):
    """Plays one seat from its observation. ``reset()`` and an integer ``fallbacks`` attribute are
    optional (:mod:`rook_env.loop` calls ``reset`` when present; evaluation reports ``fallbacks``)."""

    def act(self, observation: Mapping[str, np.ndarray], info: Mapping[str, Any] | None = None) -> int: ...


def legal_from(observation: Mapping[str, np.ndarray]) -> np.ndarray:
    """The legal action ids of an observation; raises if the mask is empty (not this seat's turn)."""
    legal = np.flatnonzero(observation["action_mask"])
    if legal.size == 0:
        raise ValueError("the action mask is empty: this seat has no legal action (not its turn, or the hand is over)")
    return legal

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

__all__ = ["Agent", "check_batch", "legal_from"]


@runtime_checkable
class Agent(Protocol):
    """Plays one seat from its observation. ``reset()`` and an integer ``fallbacks`` attribute are
    optional (:mod:`rook_env.core.loop` calls ``reset`` when present; evaluation reports ``fallbacks``)."""

    def act(self, observation: Mapping[str, np.ndarray], info: Mapping[str, Any] | None = None) -> int: ...


def legal_from(observation: Mapping[str, np.ndarray]) -> np.ndarray:
    """The legal action ids of an observation; raises if the mask is empty (not this seat's turn)."""
    legal = np.flatnonzero(observation["action_mask"])
    if legal.size == 0:
        raise ValueError("the action mask is empty: this seat has no legal action (not its turn, or the hand is over)")
    return legal


def check_batch(observations: Any, masks: Any, keys: Any, size: int, n_actions: int
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """``act_batch``'s arguments as arrays, or a ValueError naming what is wrong: ``(N, size)`` observations,
    ``(N, n_actions)`` masks with a legal action in every row, and ``keys`` None or N distinct integers."""
    obs = np.asarray(observations)
    masks = np.asarray(masks)
    if obs.ndim != 2 or obs.shape[1] != size:
        raise ValueError(f"observations have shape {obs.shape}, expected (N, {size}) for this configuration")
    if masks.shape != (obs.shape[0], n_actions):
        raise ValueError(f"masks have shape {masks.shape}, expected ({obs.shape[0]}, {n_actions})")
    empty = np.flatnonzero(~masks.any(axis=1))
    if empty.size:
        raise ValueError(f"rows {empty[:10].tolist()} have an empty action mask (no legal action)")
    if keys is not None:
        keys = np.asarray(keys)
        if keys.shape != (obs.shape[0],) or not np.issubdtype(keys.dtype, np.integer):
            raise ValueError(f"keys must be {obs.shape[0]} integers (one per row), got shape {keys.shape}")
        if np.unique(keys).size != keys.size:
            raise ValueError("keys must be distinct within one act_batch call")
    return obs, masks, keys


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


def batched(agent: Any) -> Any:
    """``agent`` with ``act_batch(obs, mask, keys)``: itself where it has one, else :class:`RowByRow` of it."""
    return agent if hasattr(agent, "act_batch") else RowByRow(agent)

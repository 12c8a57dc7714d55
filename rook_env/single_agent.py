"""A single-agent Gymnasium view of Rook, for libraries that train one policy on a ``gymnasium.Env``
(Stable-Baselines3 / sb3-contrib ``MaskablePPO``, Tianshou, TorchRL's ``GymEnv``, ...).

The learner controls one or more seats (by default a whole partnership, seats 0 and 2: observations
are seat-relative, so one policy plays both partners); the other seats are played by agents with the
``act(observation, info)`` protocol of :mod:`agents` (e.g. ``agents.make_agent("heuristic")``).
``step`` plays the learner's action, then the other seats, until a learner seat must act again or the
hand ends.

- observation: the acting learner seat's observation vector (``Box``), as in the AEC environment;
- the action mask: ``info["action_mask"]`` and the ``action_masks()`` method (sb3-contrib's convention);
- reward: what the AEC environment paid the learner's seats since its previous step (for a partnership,
  the team's reward once, not twice); an episode is one hand (``episode="game"``: a whole game);
- an illegal action raises ``ValueError`` (nothing is remapped).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import gymnasium
import numpy as np

from .env import AGENTS, raw_env
from .rules import OVER

class SingleAgentRookEnv(gymnasium.Env):
    """Rook as a single-agent ``gymnasium.Env`` (see the module docstring)."""

    metadata = {"render_modes": ["ansi", "human", "rgb_array"], "render_fps": raw_env.metadata["render_fps"]}

    def __init__(
        self,
        opponents: Mapping[int, Any] | Any,
        learner_seats: Sequence[int] = (0, 2),
        render_mode: str | None = None,
        **flags: Any,
    ) -> None:
        seats = tuple(learner_seats)
        if not seats or len(set(seats)) != len(seats) or not all(s in (0, 1, 2, 3) for s in seats):
            raise ValueError(f"learner_seats must be distinct seats 0..3, got {learner_seats!r}")
        if any(s & 1 != seats[0] & 1 for s in seats):
            raise ValueError(f"learner_seats {seats} must belong to one team (seats 0 and 2, or 1 and 3)")
        others = [s for s in range(4) if s not in seats]
        if isinstance(opponents, Mapping):
            missing = [s for s in others if s not in opponents]
            extra = [s for s in opponents if s not in others]
            if missing or extra:
                raise ValueError(f"opponents must give an agent for exactly the seats {others}; "
                                 f"missing {missing}, not other seats {extra}")
            self.others = {s: opponents[s] for s in others}
        else:  # one agent object plays every other seat (agents act from the observation alone)
            self.others = {s: opponents for s in others}
        for s, ag in self.others.items():
            if not callable(getattr(ag, "act", None)):
                raise ValueError(f"the agent for seat {s} has no act(observation, info) method")
        self.learner_seats = seats
        self.aec = raw_env(render_mode=render_mode, **flags)
        self.render_mode = render_mode
        self.observation_space = self.aec.observation_spaces[AGENTS[0]]["observation"]
        self.action_space = self.aec.action_spaces[AGENTS[0]]
        self._mask: np.ndarray | None = None

    # ---------------------------------------------------------------- gymnasium
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self.aec.reset(seed=seed, options=options)
        for ag in {id(a): a for a in self.others.values()}.values():
            if callable(getattr(ag, "reset", None)):
                ag.reset()
        self._play_others()  # the learner bids in every hand, so no reward can arise here
        return self._observe()

    def step(self, action: Any):
        if self._done():
            raise RuntimeError("step() after the episode ended; call reset()")
        self.aec.step(action)  # raises ValueError on an illegal action
        reward = self._learner_reward() + self._play_others()
        terminated = self.aec.game.phase == OVER
        truncated = not terminated and self._truncated()
        obs, info = self._observe()
        return obs, reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """Legal actions of the learner seat to act, as booleans (sb3-contrib ``MaskablePPO``)."""
        return self._mask.astype(bool)

    def render(self):
        return self.aec.render()

    # ------------------------------------------------------------------ helpers
    def _learner_reward(self) -> float:
        # The AEC env pays rewards on the step that ends a hand and clears them on the next
        # step, so reading them after every step counts each hand once. Partners receive the
        # same reward: the team's is counted once.
        return float(self.aec.rewards[AGENTS[self.learner_seats[0]]])

    def _truncated(self) -> bool:
        return bool(self.aec.truncations[AGENTS[self.learner_seats[0]]])

    def _done(self) -> bool:
        return self.aec.game.phase == OVER or self._truncated()

    def _play_others(self) -> float:
        reward = 0.0
        aec = self.aec
        while not self._done() and aec.game.current not in self.learner_seats:
            seat = aec.game.current
            name = AGENTS[seat]
            aec.step(self.others[seat].act(aec.observe(name), aec.infos[name]))
            reward += self._learner_reward()
        return reward

    def _observe(self):
        aec = self.aec
        seat = aec.game.current
        if self._done() or seat not in self.learner_seats:
            seat = self.learner_seats[0]  # the episode is over: an all-zero mask
        obs = aec.observe(AGENTS[seat])
        self._mask = obs["action_mask"]
        return obs["observation"], {"action_mask": obs["action_mask"], "seat": seat}

"""A single-agent Gymnasium view of Rook, for libraries that train one policy on a ``gymnasium.Env``
(Stable-Baselines3 / sb3-contrib ``MaskablePPO``, Tianshou, TorchRL's ``GymEnv``, ...).

``gymnasium.make("rook_env/RookSingleAgent-v0", **kwargs)`` builds it by id (registered on
``import rook_env``); the defaults are the learner partnership (seats 0 and 2) against the heuristic.
It takes the arguments of :func:`rook_env.env`: ``game=`` (:mod:`rook_env.games`), ``players=`` and the
rule flags; with ``game="call_partner"`` the learner plays one seat (default seat 0; partnerships
change every hand) and the other seats default to that game's heuristic.

The learner controls one or more seats (by default a whole partnership, seats 0 and 2: observations
are seat-relative, so one policy plays both partners); the other seats are played by agents with the
``act(observation, info)`` protocol of :mod:`rook_env.agents`: an agent object, ``{seat: agent}``, or a
``make_agent`` spec string such as ``"heuristic"`` or ``"random"`` (one agent per seat, reseeded from the
``reset`` seed so that a seeded episode is reproducible).
``step`` plays the learner's action, then the other seats, until a learner seat must act again or the
hand ends.

- observation: the acting learner seat's observation vector (``Box``), as in the AEC environment;
- the action mask: ``info["action_mask"]`` and the ``action_masks()`` method (sb3-contrib's convention);
  all zeros once the episode is over;
- reward: what the AEC environment paid the learner's seats since its previous step (for a partnership,
  the team's reward once, not twice); an episode is one hand (``episode="game"``: a whole game);
- an illegal action (legal in the action space, not in the mask), ``illegal_action=``:

  - ``"terminate"`` (default, as :func:`rook_env.env` does): a warning, the episode ends
    (``terminated=True``) with ``illegal_reward`` (default -1) as the step's reward and
    ``info["illegal_action"] = {"seat": ..., "action": ...}``; nothing is remapped or played. This is what
    lets Gymnasium's and SB3's ``check_env`` (which step ``action_space.sample()``) run unmodified;
  - ``"raise"``: ``ValueError`` naming the action, the phase and the legal actions; the state is unchanged.

  An action outside the action space, or a non-integer one, raises in both modes; so does ``step`` before
  ``reset`` (``RuntimeError``).
"""

from __future__ import annotations

import warnings
from typing import Any, Mapping, Sequence

import gymnasium
import numpy as np

from .agents import make_agent
from .core.aec import RENDER_MODES, IllegalActionWarning
from .core.loop import play_turns
from .games import get_game
from .games.partnership.env import raw_env

SINGLE_AGENT_ID = "rook_env/RookSingleAgent-v0"
ILLEGAL_ACTION_MODES = ("terminate", "raise")


class SingleAgentRookEnv(gymnasium.Env):
    """Rook as a single-agent ``gymnasium.Env`` (see the module docstring)."""

    metadata = {"render_modes": RENDER_MODES, "render_fps": raw_env.metadata["render_fps"], "name": SINGLE_AGENT_ID}

    def __init__(
        self,
        opponents: Mapping[int, Any] | Any = None,
        learner_seats: Sequence[int] | None = None,
        render_mode: str | None = None,
        illegal_action: str = "terminate",
        illegal_reward: float = -1.0,
        max_hands: int | None = None,
        game: str | None = None,
        **flags: Any,
    ) -> None:
        spec = get_game(game)
        # flags: rule flags only (players among them); checked here, before the agents are built
        self.aec = raw_env(render_mode=render_mode, max_hands=max_hands, game=spec.name, **flags)
        n = len(self.aec.possible_agents)
        teams = spec.groups  # fixed partnerships (seats s % teams alike): the learner may play a whole team
        seats = tuple(range(0, n, teams) if teams else (0,)) if learner_seats is None else tuple(learner_seats)
        if not seats or len(set(seats)) != len(seats) or not all(s in range(n) for s in seats):
            raise ValueError(f"learner_seats must be distinct seats 0..{n - 1}, got {learner_seats!r}")
        if teams and any(s % teams != seats[0] % teams for s in seats):
            raise ValueError(f"learner_seats {seats} must belong to one team (seats 0 and 2, or 1 and 3)")
        if not teams and len(seats) != 1:
            raise ValueError(f"learner_seats {seats}: game={spec.name!r} has no fixed partnerships, "
                             "so the learner plays one seat")
        if illegal_action not in ILLEGAL_ACTION_MODES:
            raise ValueError(f"illegal_action={illegal_action!r}; allowed: {', '.join(ILLEGAL_ACTION_MODES)}")
        if opponents is None:
            if spec.heuristic is None:
                raise ValueError(f"game={spec.name!r} has no heuristic agent to play the other seats; pass opponents=")
            opponents = spec.heuristic
        if not spec.takes_players:
            flags.pop("players", None)  # checked by raw_env above: the game's one table size
        flags = {**flags, "game": spec.name}  # make_agent's flags name the game
        others = [s for s in range(n) if s not in seats]
        self._spec: str | None = None
        if isinstance(opponents, str):  # a make_agent spec: one agent per seat, reseeded on seeded resets
            self._spec = opponents
            self.others = self._make_others(None, others, flags)
        elif isinstance(opponents, Mapping):
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
        self.illegal_action = illegal_action
        self.illegal_reward = float(illegal_reward)
        self._flags = flags
        self.render_mode = render_mode
        self._names = self.aec.possible_agents
        self.observation_space = self.aec.observation_spaces[self._names[0]]["observation"]
        self.action_space = self.aec.action_spaces[self._names[0]]
        self._mask: np.ndarray | None = None
        self._ended_illegal = False

    def _make_others(self, seed: int | None, seats: Sequence[int], flags: Mapping[str, Any]) -> dict[int, Any]:
        return {s: make_agent(self._spec, seed=None if seed is None else seed * 4 + s, **flags) for s in seats}

    # ---------------------------------------------------------------- gymnasium
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        if self._spec is not None and seed is not None:
            self.others = self._make_others(seed, list(self.others), self._flags)
        self.aec.reset(seed=seed, options=options)
        self._ended_illegal = False
        for ag in {id(a): a for a in self.others.values()}.values():
            if callable(getattr(ag, "reset", None)):
                ag.reset()
        self._play_others()  # the learner bids in every hand, so no reward can arise here
        return self._observe()

    def step(self, action: Any):
        if getattr(self.aec, "game", None) is None:
            raise RuntimeError("step() called before reset(); call reset() first")
        if self._done():
            raise RuntimeError("step() after the episode ended; call reset()")
        if self.illegal_action == "terminate":
            a = self.aec.as_action(action)  # out of the action space / not an integer: raises
            if not self._mask[a]:
                seat = self.aec.game.current
                warnings.warn(f"[rook_env] {self.aec.game.illegal_message(a)}; the episode ends and "
                              f"the learner receives {self.illegal_reward}", IllegalActionWarning)
                self._ended_illegal = True
                obs, info = self._observe()
                info["illegal_action"] = {"seat": seat, "action": a}
                return obs, self.illegal_reward, True, False, info
            action = a
        self.aec.step(action)  # "raise" mode: ValueError on an illegal action
        reward = self._learner_reward() + self._play_others()
        terminated = self.aec.game.is_over
        truncated = not terminated and self._truncated()
        obs, info = self._observe()
        return obs, reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """Legal actions of the learner seat to act, as booleans (sb3-contrib ``MaskablePPO``)."""
        if self._mask is None:
            raise RuntimeError("action_masks() called before reset(); call reset() first")
        return self._mask.astype(bool)

    def render(self):
        return self.aec.render()

    # ------------------------------------------------------------------ helpers
    def _learner_reward(self) -> float:
        # The AEC env pays rewards on the step that ends a hand and clears them on the next
        # step, so reading them after every step counts each hand once. Partners receive the
        # same reward: the team's is counted once.
        return float(self.aec.rewards[self._names[self.learner_seats[0]]])

    def _truncated(self) -> bool:
        return bool(self.aec.truncations[self._names[self.learner_seats[0]]])

    def _done(self) -> bool:
        return self._ended_illegal or self.aec.game.is_over or self._truncated()

    def _play_others(self) -> float:
        """The other seats play (the one play loop, :func:`rook_env.core.loop.play_turns`) until the
        learner is to act or the episode ends; returns the learner's reward meanwhile."""
        rewards: list[float] = []
        play_turns(self.aec, self.others, stop=lambda seat: seat in self.learner_seats,
                   on_step=lambda _step: rewards.append(self._learner_reward()))
        return sum(rewards)

    def _observe(self):
        aec = self.aec
        seat = aec.game.current
        done = self._done()
        if done or seat not in self.learner_seats:
            seat = self.learner_seats[0]
        obs = aec.observe(self._names[seat])
        mask = obs["action_mask"]
        if done:  # the episode is over: an all-zero mask, even after an illegal action mid-hand
            mask = np.zeros_like(mask)
        self._mask = mask
        return obs["observation"], {"action_mask": mask, "seat": seat}


if SINGLE_AGENT_ID not in gymnasium.registry:
    gymnasium.register(SINGLE_AGENT_ID, entry_point="rook_env.single_agent:SingleAgentRookEnv")

"""The PettingZoo AEC wrapper every game shares: :class:`TrickTakingEnv` and its checked form.

A game's environment subclasses :class:`TrickTakingEnv` and names its game (``GAME``: the registry
gives its rules state, layout and observation layout) and its text renderer (``RENDER_TEXT``, a
``"module:attribute"`` string, imported when first drawn);
it overrides only what differs: how its observations are kept (``_obs_*``), the rewards of a
finished hand (``_hand_rewards``), what ends or cuts an episode (``_end_of_hand``), and what the
global state adds after the hidden cards (``_extra_state``). :func:`checked` builds the class with
PettingZoo's classic checks (``TerminateIllegalWrapper`` semantics, implemented natively).

Every environment class takes ``game=`` (and ``players=``, the rule flags): a ``game`` other than
its own builds that game's class of the same kind, so ``rook_env.raw_env(game="call_partner",
players=5)`` and ``rook_env.env(game="call_partner")`` work from one door (:mod:`rook_env.games`).
"""

from __future__ import annotations

import copy
import importlib.util
import random
import warnings
from collections.abc import Mapping
from typing import Any, Callable

import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv

from .registry import get_game, load_ref, resolve_game
from .deck import bits
from .flags import as_float, as_int
from .observation import unpack_mask

__all__ = ["OPTION_KEYS", "RENDER_MODES", "CheckedMixin", "IllegalActionWarning", "NotResetError", "TrickTakingEnv",
           "env_metadata"]

OPTION_KEYS = ("hands", "nest", "dealer", "scores")  # the reset options every game takes

# "rgb_array" draws with Pillow, an optional extra (rook_env[render]): it is listed as a render mode only
# where Pillow is installed, so that checkers which make the environment in every listed mode
# (gymnasium's check_env) pass without it; asking for it without Pillow says which extra to install.
RENDER_MODES = ["human", "ansi"] + (["rgb_array"] if importlib.util.find_spec("PIL") is not None else [])


class NotResetError(RuntimeError, AttributeError):
    """The environment was used before ``reset()``.

    A ``RuntimeError``; also an ``AttributeError`` so that ``hasattr(env, "game")`` and
    ``getattr(env, "game", None)`` keep their usual meaning before the first reset.
    """


class IllegalActionWarning(UserWarning):
    """A checked environment was stepped with an illegal action: the episode ended with ``illegal_reward``."""


def env_metadata(name: str) -> dict[str, Any]:
    """PettingZoo metadata of a game's environment class (``name``: the id's name-version part)."""
    return {"render_modes": RENDER_MODES, "name": name, "is_parallelizable": False, "render_fps": 1}


class TrickTakingEnv(AECEnv, EzPickle):
    """The AEC environment of one registered game (see the module docstring for the hooks)."""

    GAME = ""  # the registered game (rook_env.games) this class plays
    CHECKED = False  # True for the classic-checks form (checked_env of the registry)
    RENDER_TEXT = ""  # "module:attribute" of render_text(state) -> str
    RENDER_IMAGE = "rook_env.core.render:draw_table"  # the spectator's table, drawn with Pillow
    _NOT_COPIED: tuple[str, ...] = ("_game", "layout", "obs_layout")  # rebuilt or shared when copying

    def __new__(cls, *args: Any, game: Any = None, **kwargs: Any):
        # One door for every game: a game other than this class's builds that game's class.
        if game is None or (isinstance(game, str) and game == cls.GAME):
            return super().__new__(cls)
        spec = get_game(game)
        other = spec.load("checked_env" if cls.CHECKED else "raw_env")
        return other(*args, **kwargs)

    def __init__(self, render_mode: str | None = None, max_hands: int | None = None, game: Any = None,
                 **flags: Any) -> None:
        EzPickle.__init__(self, render_mode=render_mode, max_hands=max_hands, **flags)
        super().__init__()
        if render_mode == "rgb_array":
            load_ref("rook_env.core.drawing:require_pillow")()  # fail here, naming the extra, not at render()
        if render_mode is not None and render_mode not in ("human", "ansi", "rgb_array"):
            raise ValueError(
                f"render_mode={render_mode!r} is not allowed; allowed values: None, human, ansi, rgb_array"
            )
        self.render_mode = render_mode
        self.config = resolve_game(self.GAME, **flags)[1]
        if max_hands is not None:
            max_hands = as_int(max_hands, "max_hands")
            if max_hands <= 0:
                raise ValueError(f"max_hands={max_hands} must be a positive integer or None")
        self.max_hands = max_hands  # game episodes are truncated after this many hands
        self._parts()
        self.n = len(self._seat_names())
        self.possible_agents = self._seat_names()
        self.agent_seat = {a: i for i, a in enumerate(self.possible_agents)}
        n_act = self.layout.n_actions
        obs_space = spaces.Dict(
            {
                # Copies: the cached layout's bound arrays must not be reachable through a space.
                "observation": spaces.Box(self.obs_layout.low.copy(), self.obs_layout.high.copy(), dtype=np.float32),
                "action_mask": spaces.Box(0, 1, (n_act,), dtype=np.int8),
            }
        )
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(n_act) for a in self.possible_agents}
        # state(): a seat's observation, then the other hands (n - 1), the nest as dealt, the
        # discards ((n + 1) * n_cards), then what the game adds (_extra_state_size).
        n_hidden = (self.n + 1) * self.layout.n_cards + self._extra_state_size()
        self.state_space = spaces.Box(
            np.concatenate([self.obs_layout.low, np.zeros(n_hidden, np.float32)]),
            np.concatenate([self.obs_layout.high, np.ones(n_hidden, np.float32)]),
            dtype=np.float32,
        )
        self._rng: random.Random | None = None
        self._game: Any = None
        self._mask: int | None = None
        # Before the first reset: no agent is active.
        self.agents = []
        self.agent_selection = None
        self.rewards, self._cumulative_rewards, self.infos = {}, {}, {}
        self.terminations, self.truncations = {}, {}

    def _parts(self) -> None:
        """The game's rules state class and the layouts of this config, from the registry."""
        spec = get_game(self.GAME)
        self._state_class: Callable[[Any], Any] = spec.load("state")
        self.layout = spec.load("layout")(self.config)
        self.obs_layout = spec.load("obs_layout")(self.config)

    def _seat_names(self) -> list[str]:
        return [f"player_{i}" for i in range(self._players())]

    def _players(self) -> int:
        return getattr(self.config, "players", get_game(self.GAME).default_players)

    @property
    def game(self) -> Any:
        """The pure rules state of the current episode (after ``reset()``)."""
        game = self._game
        if game is None:
            raise NotResetError("env.game does not exist before reset(); call reset() first")
        return game

    @game.setter
    def game(self, state: Any) -> None:
        # Point the environment at a rules state (a batched engine's table, in a lock-step test):
        # observations and state() then describe it.
        self._game = state
        self._mask = None
        if state is not None:
            self._obs_reset(state)

    # ------------------------------------------------------------- PettingZoo
    def _unknown_agent(self, agent: Any) -> ValueError:
        return ValueError(f"unknown agent {agent!r}; agents are {', '.join(self.possible_agents)}")

    def observation_space(self, agent: str) -> spaces.Space:
        try:
            return self.observation_spaces[agent]
        except (KeyError, TypeError):
            raise self._unknown_agent(agent) from None

    def action_space(self, agent: str) -> spaces.Space:
        try:
            return self.action_spaces[agent]
        except (KeyError, TypeError):
            raise self._unknown_agent(agent) from None

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        # Everything is checked before anything changes: a rejected reset leaves the
        # current episode and the RNG stream as they were.
        if seed is not None:
            seed = as_int(seed, "seed")
            if seed < 0:
                raise ValueError(f"seed={seed} must be a non-negative integer or None")
        if options is None:
            options = {}
        elif not isinstance(options, Mapping):
            raise ValueError(f"options must be a dict with keys {', '.join(OPTION_KEYS)} (or None), got {options!r}")
        game = self._state_class(self.config)
        scores = options.get("scores")
        if scores is not None:
            scores = self._check_scores(game, scores)
        rng = self._rng if seed is None and self._rng is not None else random.Random(seed)
        game.rng = rng
        self._prepare_state(game)
        game.new_game(  # checks dealer, hands and nest before drawing from rng
            dealer=options.get("dealer"),
            scores=scores,
            hands=options.get("hands"),
            nest=options.get("nest"),
        )
        unknown = [k for k in options if k not in OPTION_KEYS]
        if unknown:
            # Not an error: PettingZoo's api_test resets with arbitrary options. Not silent either.
            warnings.warn(
                f"ignoring unknown reset option(s) {', '.join(map(repr, unknown))}; known: {', '.join(OPTION_KEYS)}"
            )
        self._rng = rng
        self._game = game
        self._obs_reset(game)
        self._mask = None
        agents = self.possible_agents
        self.agents = list(agents)
        self.rewards = {a: 0 for a in agents}
        self._cumulative_rewards = {a: 0 for a in agents}
        self._rewards_dirty = False
        self.terminations = {a: False for a in agents}
        self.truncations = {a: False for a in agents}
        self.infos = {a: {} for a in agents}
        self._skip_agent_selection = None
        self.agent_selection = agents[game.current]

    def _check_scores(self, game: Any, scores: Any) -> list[int]:
        """The ``scores`` reset option checked (a game may bound them further)."""
        return game.check_scores(scores)

    def _prepare_state(self, game: Any) -> None:
        """Set up a fresh rules state before its first deal (a hook; nothing by default)."""

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        game = self._game
        if game is None:
            raise NotResetError("observe() called before reset(); call reset() first")
        try:
            seat = self.agent_seat[agent]
        except (KeyError, TypeError):  # TypeError: an unhashable "agent"
            raise self._unknown_agent(agent) from None
        if seat == game.current and game.phase != game.OVER:
            if self._mask is None:
                self._mask = game.legal_mask()
            mask = unpack_mask(self._mask, self.layout.n_actions)
        else:
            mask = np.zeros(self.layout.n_actions, np.int8)
        return {"observation": self._obs_of(seat).copy(), "action_mask": mask}

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """(observation, cumulative reward, terminated, truncated, info) of ``agent_selection``."""
        if self._game is None:
            raise NotResetError("last() called before reset(); call reset() first")
        agent = self.agent_selection
        try:
            return (
                self.observe(agent) if observe else None,
                self._cumulative_rewards[agent],
                self.terminations[agent],
                self.truncations[agent],
                self.infos[agent],
            )
        except KeyError:
            if not self.agents:
                raise RuntimeError("last() called after every agent is done; call reset() first") from None
            raise

    def _done_error(self, action: Any) -> RuntimeError:
        return RuntimeError(f"step({action!r}) called after every agent is done; call reset() first")

    def _dead_step(self, action: Any) -> bool:
        """Handle a step of a done agent (PettingZoo's dead step); True when it was one."""
        agent = self.agent_selection
        try:
            if self.terminations[agent] or self.truncations[agent]:
                self._was_dead_step(action)
                return True
        except KeyError:  # the episode is over and every agent has been removed
            raise self._done_error(action) from None
        return False

    def _begin_step(self, action: Any) -> int | None:
        """The checks every step starts with: reset first, PettingZoo's dead step (None returned),
        an integer action inside the action space (returned)."""
        if self._game is None:
            raise NotResetError("step() called before reset(); call reset() first")
        if self._dead_step(action):
            return None
        return action if type(action) is int and 0 <= action < self.layout.n_actions else self.as_action(action)

    def step(self, action: Any) -> None:
        a = self._begin_step(action)
        if a is None:
            return
        game, agent = self._game, self.agent_selection
        seat, phase, high_bid, deals, hands_played = (
            game.current, game.phase, game.high_bid, game.deals, game.hands_played
        )
        game.apply(a, self._mask)  # raises ValueError on an illegal action
        self._mask = None
        self._cumulative_rewards[agent] = 0
        if self.infos[agent]:  # the last hand's result was shown at this seat's turn; now it is stale
            self.infos[agent] = {}
        if self._rewards_dirty:
            self._clear_rewards()
            self._rewards_dirty = False
        self._obs_update(seat, a, phase, high_bid, deals)
        if game.hands_played != hands_played:
            self._hand_finished()
            self._end_of_hand(game)
        self.agent_selection = self.possible_agents[game.current]
        if self.render_mode == "human":
            self.render()

    def as_action(self, action: Any) -> int:
        """``action`` as an action id of this environment, else ``ValueError`` saying why (None, not
        an integer, outside the action space)."""
        if action is None:
            raise ValueError(f"action None given for {self.agent_selection}, which is not done; pass an action id")
        try:
            a = as_int(action, "action")
        except ValueError:
            raise ValueError(f"action {action!r} is not an integer action id") from None
        if not 0 <= a < self.layout.n_actions:
            raise ValueError(f"action {a} is outside the action space Discrete({self.layout.n_actions})")
        return a

    def _hand_finished(self) -> None:
        res = self._game.hand_result
        for agent, r in zip(self.possible_agents, self._hand_rewards(res, self._game.winner)):
            self.rewards[agent] = r
            self._cumulative_rewards[agent] += r
            self.infos[agent] = {"hand": dict(res)}
        self._rewards_dirty = True

    # Hooks ---------------------------------------------------------------
    def _hand_rewards(self, result: dict[str, Any], game_winner: int) -> list[float]:  # pragma: no cover
        """Every seat's reward for a finished hand (flag ``reward``)."""
        raise NotImplementedError

    def _end_of_hand(self, game: Any) -> None:  # pragma: no cover
        """Set terminations / truncations after a finished hand."""
        raise NotImplementedError

    def _obs_reset(self, game: Any) -> None:  # pragma: no cover
        """Start keeping the observations of a new rules state."""
        raise NotImplementedError

    def _obs_update(self, seat: int, action: int, phase: int, high_bid: int, deals: int) -> None:  # pragma: no cover
        """The observations after ``seat`` played ``action`` in ``phase``."""
        raise NotImplementedError

    def _obs_of(self, seat: int) -> np.ndarray:  # pragma: no cover
        """The current observation of ``seat`` (not copied)."""
        raise NotImplementedError

    def _obs_saved(self) -> Any:
        """What copying and pickling keep of the observations (None: rebuilt from the state)."""
        return None

    def _obs_restore(self, saved: Any) -> None:
        """Restore :meth:`_obs_saved` after :meth:`_obs_reset` of a copied state."""

    def _extra_state_size(self) -> int:
        return 0

    def _extra_state(self, out: np.ndarray, base: int, seat: int) -> None:
        """Write what the game's global state adds after the discards, from ``out[base]``."""

    # ------------------------------------------------------------ global state
    def state(self) -> np.ndarray:
        """Global state for centralized critics: seat 0's view plus what is hidden from it."""
        return self.state_for(self.possible_agents[0])

    def state_for(self, agent: str) -> np.ndarray:
        """Full-information vector relative to ``agent``: its observation, then the hands of the
        other seats (rel 1 .. n-1), the nest as dealt, the discards, then what the game adds."""
        game = self._game
        if game is None:
            raise NotResetError("state() called before reset(); call reset() first")
        try:
            seat = self.agent_seat[agent]
        except (KeyError, TypeError):
            raise self._unknown_agent(agent) from None
        N, n = self.layout.n_cards, self.n
        out = np.zeros(self.state_space.shape, np.float32)
        size = self.obs_layout.size
        out[:size] = self._obs_of(seat)
        for k in range(1, n):
            for c in bits(game.hands[(seat + k) % n]):
                out[size + (k - 1) * N + c] = 1.0
        base = size + (n - 1) * N
        for c in bits(game.nest):
            out[base + c] = 1.0
        for c in bits(game.discards):
            out[base + N + c] = 1.0
        self._extra_state(out, base + 2 * N, seat)
        return out

    # -------------------------------------------------------------- rendering
    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            warnings.warn("render() called with render_mode=None; pass render_mode='ansi', 'human' or 'rgb_array'")
            return None
        if self._game is None:
            raise NotResetError("render() called before reset(); call reset() first")
        if self.render_mode == "rgb_array":  # the spectator view, imported when first drawn
            return load_ref(self.RENDER_IMAGE)(self._game)
        text = load_ref(self.RENDER_TEXT)(self._game)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass

    # --------------------------------------------------------------- helpers
    def legal_actions(self) -> list[int]:
        """Legal action ids of the seat to act."""
        return self.game.legal_actions()

    # -------------------------------------------------------------- copying
    def __deepcopy__(self, memo: dict) -> "TrickTakingEnv":
        new = self.__class__.__new__(self.__class__)
        memo[id(self)] = new
        for k, v in self.__dict__.items():
            if k in self._NOT_COPIED:
                continue
            setattr(new, k, copy.deepcopy(v, memo))
        new.layout, new.obs_layout = self.layout, self.obs_layout  # shared, immutable
        new._game = None
        if self._game is not None:
            new._game = self._game.clone()
            new._game.rng = new._rng  # one RNG stream per env, as in reset()
            new._obs_reset(new._game)
            new._obs_restore(self._obs_saved())
        return new

    def __getstate__(self) -> dict[str, Any]:
        # The whole state, not just the constructor arguments (EzPickle's default): an
        # environment pickled mid-hand (Ray, multiprocessing) continues where it was.
        state = {k: v for k, v in self.__dict__.items() if k not in self._NOT_COPIED or k == "_game"}
        state["_obs"] = self._obs_saved() if self._game is not None else None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        state = dict(state)
        obs = state.pop("_obs")
        self.__dict__.update(state)
        self._parts()
        if self._game is not None:
            self._obs_reset(self._game)
            self._obs_restore(obs)


class CheckedMixin:
    """PettingZoo's classic checks implemented natively (fast): an illegal action ends the episode
    with ``illegal_reward`` for the offender (``TerminateIllegalWrapper`` semantics) instead of
    raising. Order enforcement and action bounds are the raw environment's."""

    CHECKED = True

    def __init__(self, render_mode: str | None = None, illegal_reward: float = -1.0, max_hands: int | None = None,
                 game: Any = None, **flags: Any) -> None:
        illegal_reward = as_float(illegal_reward, "illegal_reward")
        super().__init__(render_mode=render_mode, max_hands=max_hands, **flags)  # type: ignore[call-arg]
        EzPickle.__init__(self, render_mode=render_mode, illegal_reward=illegal_reward, max_hands=max_hands, **flags)
        self.illegal_reward = illegal_reward

    def step(self, action: Any) -> None:
        a = self._begin_step(action)  # type: ignore[attr-defined]
        if a is None:
            return
        game, agent = self._game, self.agent_selection  # type: ignore[attr-defined]
        if self._mask is None:
            self._mask = game.legal_mask()
        if not (self._mask >> a) & 1:
            warnings.warn(
                f"[rook_env] {game.illegal_message(a, self._mask)}; "
                f"the episode ends and {agent} receives {self.illegal_reward}",
                IllegalActionWarning,
            )
            self._cumulative_rewards[agent] = 0
            self.terminations = {a_: True for a_ in self.agents}
            self.truncations = {a_: True for a_ in self.agents}
            self.rewards = {a_: 0 for a_ in self.agents}
            self.rewards[agent] = self.illegal_reward
            self._accumulate_rewards()
            self._rewards_dirty = True
            self.infos = {a_: {"illegal_action": {"agent": agent, "action": a}} for a_ in self.agents}
            self._deads_step_first()
            return
        super().step(a)  # type: ignore[misc]

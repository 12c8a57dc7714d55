"""The batched engine's shared part: :class:`RookVectorEnv`, its argument checks and its step loop.

Every game's engine is a subclass that fills in what differs between the games (its state, its
phases, its observation writes); what is the same for every game lives here once:

- the arguments (``num_envs``, ``game``, ``players``, ``max_hands``, ``illegal_action``,
  ``illegal_reward``, ``deal_source``, ``backend``, the rule flags) and their errors;
- :meth:`RookVectorEnv.reset` and :meth:`RookVectorEnv.step`: check the actions, refuse or
  terminate illegal ones, advance the tables, pay the illegal reward, deal again and start the
  ended episodes (auto-reset), refresh the masks and observations, assemble ``info``;
- the views (``current_player``, ``action_mask``, ``observation``, ``observe``, ``state_for``),
  with the seat checks;
- the numpy helpers of both engines and of the trainers: :func:`check_actions`,
  :func:`sample_legal` / :func:`pick_legal`, :func:`unpack_bits`.

``RookVectorEnv(num_envs, game="call_partner", ...)`` returns the engine of that game, the class its
:class:`~rook_env.games.GameSpec` names as ``vector`` (an instance of a subclass, so
``isinstance(env, RookVectorEnv)`` holds for every game); the game's flags and ``players`` are
checked by :func:`rook_env.games.resolve_game`, with the errors of ``rook_env.env``. A game's engine
implements these hooks (see :mod:`rook_env.games.partnership.vector` and
:mod:`rook_env.games.call_partner.vector`)::

    GAME = "my_game"                      # its name in the game registry (rook_env.games)
    COMPILED = False                      # True: it has numba kernels (backend "numba")
    def _setup(self) -> None              # layout, spaces, state arrays; sets n_seats, layout,
                                          # obs_dim, n_actions, state_dim, current, the spaces
    def _new_episodes(self, fixed) -> None        # reset: one entry per table (None or an option dict)
    def _legal_ok(self, actions) -> bool array    # the actions are legal
    def _illegal_line(self, table, action) -> str # why, for the error message
    def _new_facts(self) -> facts                 # the container of the finished hands' facts
    def _advance(self, actions, illegal, rewards, terminated, truncated, hand_over, facts) -> again
    def _deal(self, again, new) -> None           # deal again within an episode / start new ones
    def _refresh(self) -> None                    # _mask, _obs_now and current from the state
    def _hand_info(self, facts) -> info["hand"]
    def _observe(self, seats) -> (N, D) float32     # the seats' observations
    def _hidden_sets(self, seats) -> (N, n + 1) uint64  # the other hands (relative 1 .. n - 1), the
                                                     # nest as dealt, the discards: state_for's cards
    def _extra_state(self, out, seats) -> None       # optional: what state_for adds after them
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
from gymnasium import spaces

from . import kernels
from .registry import get_game, resolve_game

ILLEGAL_MODES = ("raise", "terminate")
BACKENDS = ("auto", "numpy", "numba")  # "auto": numba where installed and the game has kernels
# reset(options=[...]) and deal_source entries: raw_env.reset(options=...)'s keys, the same for every game
OPTION_KEYS = ("hands", "nest", "dealer", "scores")
U64 = np.dtype("<u8")  # card sets; little-endian so that a view as bytes unpacks bit i to element i
DealSource = Callable[[np.ndarray, np.ndarray], Sequence[Any]]


def unpack_bits(masks: np.ndarray, n: int) -> np.ndarray:
    """``uint64`` card masks of any shape -> uint8 0/1 array with a trailing axis of ``n`` (bit i -> i)."""
    raw = np.ascontiguousarray(masks, U64).view(np.uint8).reshape(masks.shape + (8,))
    return np.unpackbits(raw, axis=-1, count=n, bitorder="little")


def sample_legal(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of an ``(N, A)`` 0/1 mask (vectorised), int64.

    One uniform draw per row picks the k-th legal action (k < number of legal actions);
    every row needs at least one legal action. Compiled where numba is installed (the same
    actions: :func:`pick_legal` is the reference)."""
    u = rng.random(mask.shape[0])
    if kernels.AVAILABLE:
        return kernels.compiled_pick_legal()(mask, u, np.full(mask.shape[0], -1, np.int64))
    return pick_legal(mask, u)


def pick_legal(mask: np.ndarray, u: np.ndarray) -> np.ndarray:
    """The k-th legal action of each row of ``mask``, k = floor(``u`` * number of legal actions), numpy."""
    n, A = mask.shape
    legal = mask.reshape(-1) != 0
    pos = legal.nonzero()[0]  # the legal actions' flat positions, row after row
    row_start = np.arange(0, n * A, A)
    count = np.add.reduceat(legal, row_start, dtype=np.int64)  # legal actions per row
    k = (u * count).astype(np.int64)
    return pos[np.cumsum(count) - count + k] - row_start


def check_actions(actions: Any, num_envs: int, n_actions: int) -> np.ndarray:
    """``actions`` as an ``(N,)`` int64 array, or ValueError naming what is wrong (shape, dtype, or the
    tables whose action lies outside ``0..n_actions-1``)."""
    N, A = num_envs, n_actions
    a = np.asarray(actions)
    if a.shape != (N,):
        raise ValueError(f"actions must have shape ({N},) (one per table), got {a.shape}")
    if a.dtype.kind not in "iu":
        raise ValueError(f"actions must be integer action ids, got dtype {a.dtype}")
    a = a.astype(np.int64, copy=False)
    out = a.view(np.uint64) >= A  # negative actions wrap to huge values
    if out.any():
        bad = np.flatnonzero(out)
        raise ValueError(
            f"action(s) outside the action space Discrete({A}) at table(s) "
            + ", ".join(f"{i} ({a[i]})" for i in bad[:10]) + (f" and {len(bad) - 10} more" if len(bad) > 10 else "")
        )
    return a


def engine_class(game: str | None = None) -> type[RookVectorEnv]:
    """The batched engine class of ``game`` (None: the default game), from the game registry's ``vector``
    part (imported on first use: a game's rules load only when it is played)."""
    return get_game(game).load("vector")


class RookVectorEnv:
    """``num_envs`` tables of one game stepped together; see :mod:`rook_env.vector` for the API."""

    GAME = ""  # the game of a subclass (its name in rook_env.games)
    COMPILED = False  # the game's engine has numba kernels

    def __new__(cls, *args: Any, game: str | None = None, **kwargs: Any) -> RookVectorEnv:
        if cls is RookVectorEnv:  # the front door: the engine of the game asked for
            cls = engine_class(game)
        return super().__new__(cls)

    def __init__(
        self,
        num_envs: int,
        *,
        game: str | None = None,
        players: int | None = None,
        max_hands: int | None = None,
        illegal_action: str = "raise",
        illegal_reward: float = -1.0,
        deal_source: DealSource | None = None,
        backend: str = "auto",
        **flags: Any,
    ) -> None:
        if game is not None and getattr(game, "name", game) != self.GAME:  # a name or a GameSpec
            raise ValueError(f"{type(self).__name__} plays game {self.GAME!r}, not game={game!r}; "
                             f"use RookVectorEnv(num_envs, game={game!r}, ...)")
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs <= 0:
            raise ValueError(f"num_envs={num_envs!r} must be a positive integer")
        if max_hands is not None and (isinstance(max_hands, bool) or not isinstance(max_hands, int) or max_hands <= 0):
            raise ValueError(f"max_hands={max_hands!r} must be a positive integer or None")
        if illegal_action not in ILLEGAL_MODES:
            raise ValueError(f"illegal_action={illegal_action!r} is not allowed; allowed values: {', '.join(ILLEGAL_MODES)}")
        if deal_source is not None and not callable(deal_source):
            raise ValueError(f"deal_source={deal_source!r} must be callable(tables, new_game) or None")
        self.game = self.GAME
        self.num_envs = int(num_envs)
        self.max_hands = max_hands
        self.illegal_action = illegal_action
        self.illegal_reward = float(illegal_reward)
        self.deal_source = deal_source
        self.backend = self._resolve_backend(backend)
        # the registry checks the flags and players with errors naming the game (and the game that has a flag)
        self.config = resolve_game(self.GAME, **flags, **({} if players is None else {"players": players}))[1]
        self._ar = np.arange(self.num_envs)
        self._rng: np.random.Generator | None = None
        self._mask: np.ndarray | None = None  # returned to the caller; None until reset()
        self._obs_now: np.ndarray | None = None
        self._setup()

    def _resolve_backend(self, backend: str) -> str:
        """``backend`` as run: "numba" (compiled kernels) or "numpy"; a clear error where it cannot run."""
        if backend not in BACKENDS:
            raise ValueError(f"backend={backend!r} is not allowed; allowed values: {', '.join(BACKENDS)}")
        if backend == "numba" and not self.COMPILED:
            raise ValueError(f"backend='numba': game {self.GAME!r} has no compiled kernels; use 'auto' or 'numpy'")
        if backend == "numba" and not kernels.AVAILABLE:
            raise ValueError("backend='numba' needs the numba package: pip install 'rook_env[fast]' (or numba)")
        if backend == "auto":
            return "numba" if self.COMPILED and kernels.AVAILABLE else "numpy"
        return backend

    def _set_spaces(self, low: np.ndarray, high: np.ndarray, n_actions: int) -> None:
        self.obs_dim = len(low)
        self.n_actions = n_actions
        self.single_observation_space = spaces.Box(low, high, dtype=np.float32)
        self.single_action_space = spaces.Discrete(n_actions)

    # ------------------------------------------------------------------ hooks (each game's engine)
    def _setup(self) -> None:
        raise NotImplementedError

    # ------------------------------------------------------------------ reset
    def reset(self, seed: int | None = None, options: Sequence[dict | None] | None = None):
        """Start a new episode at every table; returns ``(obs, info)`` (see :mod:`rook_env.vector`).

        ``options``: None, or one entry per table: None (random deal) or a dict with
        ``raw_env.reset``'s keys ``hands``, ``nest``, ``dealer``, ``scores``.
        """
        N = self.num_envs
        if seed is not None or self._rng is None:
            self._rng = np.random.default_rng(seed)
        if options is not None and (isinstance(options, dict) or not isinstance(options, Sequence)
                                    or len(options) != N):
            raise ValueError(
                f"options must be None or a list of {N} entries (one per table: a dict with keys "
                f"{', '.join(OPTION_KEYS)}, or None), got {type(options).__name__}"
                + (f" of length {len(options)}" if isinstance(options, Sequence) else "")
            )
        self._new_episodes([None] * N if options is None else list(options))
        self._refresh()
        return self._obs_now, {"seat": self.current.copy(), "action_mask": self._mask}

    @staticmethod
    def _check_option_keys(opt: Any, where: str) -> dict:
        """One table's fixed deal: a dict of OPTION_KEYS, or ValueError naming ``where``."""
        if not isinstance(opt, dict):
            raise ValueError(f"{where} must be a dict with keys {', '.join(OPTION_KEYS)} or None, got {opt!r}")
        unknown = sorted(set(opt) - set(OPTION_KEYS))
        if unknown:
            raise ValueError(f"{where}: unknown key(s) {', '.join(map(str, unknown))}; known: {', '.join(OPTION_KEYS)}")
        return opt

    # ------------------------------------------------------------------ step (the shared loop)
    def step(self, actions: Any):
        """One action per table for its seat to act; returns ``(obs, rewards, terminated, truncated, info)``."""
        self._require_reset("step()")
        N = self.num_envs
        a = check_actions(actions, N, self.n_actions)
        ok = self._legal_ok(a)
        illegal = np.zeros(N, bool)
        if not ok.all():
            bad = np.flatnonzero(~ok)
            if self.illegal_action == "raise":  # before anything is applied anywhere
                raise ValueError(self._illegal_message(bad, a))
            illegal[bad] = True
        rewards = np.zeros((N, self.n_seats), np.float32)
        terminated = np.zeros(N, bool)
        truncated = np.zeros(N, bool)
        hand_over = np.zeros(N, bool)
        facts = self._new_facts()
        again = self._advance(a, illegal, rewards, terminated, truncated, hand_over, facts)
        if illegal.any():  # PettingZoo's TerminateIllegalWrapper: the offender pays, the episode ends
            bad = np.flatnonzero(illegal)
            rewards[bad, self.current[bad]] = self.illegal_reward
            terminated[bad] = True
        new = (terminated | truncated).nonzero()[0]
        if len(again) or len(new):
            self._deal(again, new)
        self._refresh()
        info = {"seat": self.current.copy(), "action_mask": self._mask, "hand_over": hand_over,
                "hand": self._hand_info(facts), "illegal": illegal}
        return self._obs_now, rewards, terminated, truncated, info

    def _illegal_message(self, bad: np.ndarray, a: np.ndarray) -> str:
        lines = [f"table {i}: {self._illegal_line(i, int(a[i]))}" for i in bad[:10].tolist()]
        more = f"\n... and {len(bad) - 10} more table(s)" if len(bad) > 10 else ""
        return (f"illegal action(s) at {len(bad)} table(s) {bad[:10].tolist()}; nothing was applied at any table:\n"
                + "\n".join(lines) + more)

    # ------------------------------------------------------------------ views
    @property
    def current_player(self) -> np.ndarray:
        """``(N,)`` the absolute seat to act at every table."""
        self._require_reset("current_player")
        return self.current.copy()

    @property
    def action_mask(self) -> np.ndarray:
        """``(N, A)`` int8 legal actions of the seat to act (a copy)."""
        self._require_reset("action_mask")
        return self._mask.copy()

    @property
    def observation(self) -> np.ndarray:
        """``(N, D)`` float32 observation of the seat to act (a copy)."""
        self._require_reset("observation")
        return self._obs_now.copy()

    def observe(self, seat: Any) -> np.ndarray:
        """``(N, D)`` float32: the observation of absolute ``seat`` (an int, or one per table) at every table."""
        self._require_reset("observe()")
        return self._observe(self._seats(seat))

    def state_for(self, seat: Any) -> np.ndarray:
        """``(N, state_dim)`` float32, ``raw_env.state_for`` of absolute ``seat`` (an int, or one per table):
        the seat's observation, the hands of the seats after it (relative 1 .. n - 1), the nest as dealt,
        the discards, then what the game adds (``_extra_state``)."""
        self._require_reset("state_for()")
        seats = self._seats(seat)
        N, D, nc = self.num_envs, self.obs_dim, self.layout.n_cards
        hidden = D + (self.n_seats + 1) * nc
        out = np.zeros((N, self.state_dim), np.float32)
        out[:, :D] = self._observe(seats)
        out[:, D:hidden] = unpack_bits(self._hidden_sets(seats), nc).reshape(N, -1)
        self._extra_state(out[:, hidden:], seats)
        return out

    def _state_dim(self, extra: int = 0) -> int:
        """``state_for``'s size: the observation, n + 1 card sets, ``extra`` entries of the game."""
        return self.obs_dim + (self.n_seats + 1) * self.layout.n_cards + extra

    def _extra_state(self, out: np.ndarray, seats: np.ndarray) -> None:
        """Write what the game's ``state_for`` adds after the discards (none by default)."""

    def _seats(self, seat: Any) -> np.ndarray:
        s = np.asarray(seat)
        n = self.n_seats
        if s.dtype.kind not in "iu" or s.shape not in ((), (self.num_envs,)) or ((s < 0) | (s >= n)).any():
            raise ValueError(f"seat must be an absolute seat 0..{n - 1} or one per table "
                             f"(shape ({self.num_envs},)), got {seat!r}")
        return np.broadcast_to(s.astype(np.int64), (self.num_envs,))

    def _require_reset(self, what: str) -> None:
        if self._mask is None:
            raise RuntimeError(f"{what} used before reset(); call reset() first")

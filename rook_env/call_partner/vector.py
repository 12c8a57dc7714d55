"""Batched call-your-partner Rook: ``num_envs`` tables behind :class:`rook_env.vector.RookVectorEnv`'s API.

The same game as :class:`rook_env.call_partner.raw_env` (every rule flag, ``episode="hand"``
and ``"game"``, ``max_hands``), with observations, masks and rewards bit for bit those of
``raw_env``; ``tests/test_call_partner_vector.py`` plays both in lock-step for 4, 5 and 6
players. Unlike ``RookVectorEnv`` this engine is **not vectorised**: it keeps one pure
:class:`~rook_env.call_partner.rules.CallPartnerState` per table and steps them in a Python
loop (apply, ``legal_mask``, ``encode``), without the PettingZoo bookkeeping of ``raw_env``.
It gives trainers the batched interface (one forward pass for every table); the cost per
decision is that of the rules and the encoder.

API (``N = num_envs``, ``n = players``, ``D = obs_dim``, ``A = n_actions``)::

    env = CallPartnerVectorEnv(N, max_hands=None, **flags)   # flags: rook_env.call_partner's
    obs, info = env.reset(seed=None, options=None)
    obs, rewards, terminated, truncated, info = env.step(actions)

- ``obs``: ``(N, D)`` float32, the observation of the seat to act at every table.
- ``info["seat"]``: ``(N,)`` int64, that seat (absolute, 0..n-1).
- ``info["action_mask"]``: ``(N, A)`` int8, its legal actions.
- ``actions``: ``(N,)`` integers, one action per table for its seat to act.
- ``rewards``: ``(N, n)`` float32 for the absolute seats; non-zero only on the step that ends
  a hand, with the flag ``reward``'s meaning exactly as in ``raw_env``.
- ``terminated`` / ``truncated``: ``(N,)`` bool; the episode (a hand, or a game with
  ``episode="game"``) ended / was cut by ``max_hands``.
- ``info["hand_over"]``: ``(N,)`` bool, a hand was finished on this step (in game episodes
  also hands that do not end the game); ``info["hand"]``: a list of ``N`` entries, the
  finished hand's result (``raw_env``'s ``infos[agent]["hand"]`` dict) or ``None``.

Auto-reset (``RookVectorEnv``'s convention): a table whose episode ends on a step is reset in
that same step: its ``rewards`` and ``info["hand"]`` describe the hand that just ended, while
``obs``, ``info["seat"]`` and ``info["action_mask"]`` are already the first decision of the
next episode (a new deal from the table's own stream, a new random first dealer, scores 0).

Deals: ``reset(seed)`` draws one integer seed per table (``table_seeds``) from
``numpy.random.default_rng(seed)``; table ``i`` deals from ``random.Random(table_seeds[i])``
exactly as ``raw_env.reset(seed=table_seeds[i])`` does, and later episodes continue that
stream as ``raw_env.reset()`` without a seed does. ``reset(options=[...])`` fixes per-table
deals with ``raw_env``'s keys ``hands``, ``nest``, ``dealer``, ``scores`` (``None``: random).

Illegal actions raise ``ValueError`` naming every offending table, its action, seat, phase and
legal actions; nothing is applied at any table for that call. Other members: ``observe(seat)``
and ``state_for(seat)`` (``raw_env.state_for``'s layout), ``current_player``, ``states`` (the
rules states; read them, do not change them), ``table_seeds``, ``single_observation_space``,
``single_action_space``, ``config``, ``layout``, ``obs_layout``, ``players``, ``obs_dim``,
``n_actions``, ``state_dim``.
"""

from __future__ import annotations

import random
from typing import Any, Sequence

import numpy as np
from gymnasium import spaces

from ..vector import check_actions
from .config import make_config
from .env import OPTION_KEYS, hand_rewards, raw_env
from .layout import layout_for
from .observation import encode, obs_layout
from .rules import OVER, CallPartnerState

__all__ = ["CallPartnerVectorEnv", "hand_rewards"]


class CallPartnerVectorEnv:
    """``num_envs`` call-your-partner tables with a batched interface; see the module docstring."""

    def __init__(self, num_envs: int, *, max_hands: int | None = None, **flags: Any) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs <= 0:
            raise ValueError(f"num_envs={num_envs!r} must be a positive integer")
        if max_hands is not None and (isinstance(max_hands, bool) or not isinstance(max_hands, int) or max_hands <= 0):
            raise ValueError(f"max_hands={max_hands!r} must be a positive integer or None")
        self.num_envs = N = int(num_envs)
        self.max_hands = max_hands
        self.config = make_config(**flags)
        self.players = self.config.players
        self.layout = L = layout_for(self.config)
        self.obs_layout = ol = obs_layout(self.config)
        self.obs_dim = ol.size
        self.n_actions = L.n_actions
        self._mask_bytes = (L.n_actions + 7) // 8
        # state_for() borrows raw_env's (one scratch env reads each table's state): one layout, one code path.
        self._scratch = raw_env(**flags)
        self.state_dim = self._scratch.state_space.shape[0]
        self.single_observation_space = spaces.Box(ol.low, ol.high, dtype=np.float32)
        self.single_action_space = spaces.Discrete(L.n_actions)
        self.states: list[CallPartnerState] = []
        self.table_seeds: list[int] = []
        self._rng: np.random.Generator | None = None
        self._legal: list[int] = []  # legal actions of the seat to act, as int bitmasks
        self._obs = np.zeros((N, ol.size), np.float32)
        self._mask: np.ndarray | None = None
        self.current = np.zeros(N, np.int64)

    # ------------------------------------------------------------------ reset
    def reset(self, seed: int | None = None, options: Sequence[dict | None] | None = None):
        """Start a new episode at every table; returns ``(obs, info)`` (see the module docstring)."""
        N = self.num_envs
        if seed is not None or self._rng is None:
            self._rng = np.random.default_rng(seed)
        if options is not None and (isinstance(options, dict) or not isinstance(options, Sequence)
                                    or len(options) != N):
            raise ValueError(f"options must be None or a list of {N} entries (one per table: a dict with keys "
                             f"{', '.join(OPTION_KEYS)}, or None), got {type(options).__name__}")
        self.table_seeds = [int(s) for s in self._rng.integers(2**63, size=N)]
        self.states = []
        for i, s in enumerate(self.table_seeds):
            state = CallPartnerState(self.config)
            state.rng = random.Random(s)
            opt = dict(options[i] or {}) if options is not None else {}
            unknown = sorted(set(opt) - set(OPTION_KEYS))
            if unknown:
                raise ValueError(f"options[{i}]: unknown key(s) {', '.join(unknown)}; known: {', '.join(OPTION_KEYS)}")
            try:
                state.new_game(dealer=opt.get("dealer"), scores=opt.get("scores"), hands=opt.get("hands"),
                               nest=opt.get("nest"))
            except ValueError as exc:
                raise ValueError(f"options[{i}]: {exc}") from None
            self.states.append(state)
        self._legal = [0] * N
        for i in range(N):
            self._refresh(i)
        self._pack_mask()
        return self._obs, {"seat": self.current.copy(), "action_mask": self._mask}

    def _refresh(self, i: int) -> None:
        """Table ``i``'s seat to act, its legal actions and observation."""
        state = self.states[i]
        self.current[i] = state.current
        self._legal[i] = state.legal_mask()
        encode(state, state.current, out=self._obs[i], ol=self.obs_layout)

    def _pack_mask(self) -> None:
        raw = b"".join(m.to_bytes(self._mask_bytes, "little") for m in self._legal)
        bits = np.frombuffer(raw, np.uint8).reshape(self.num_envs, self._mask_bytes)
        self._mask = np.unpackbits(bits, axis=1, count=self.n_actions, bitorder="little").view(np.int8)

    # ------------------------------------------------------------------ step
    def step(self, actions: Any):
        """One action per table for its seat to act; returns ``(obs, rewards, terminated, truncated, info)``."""
        if self._mask is None:
            raise RuntimeError("step() used before reset(); call reset() first")
        N, n = self.num_envs, self.players
        a = check_actions(actions, self.num_envs, self.n_actions).tolist()
        legal = self._legal
        bad = [i for i in range(N) if not (legal[i] >> a[i]) & 1]
        if bad:
            lines = [f"table {i}: {self.states[i].illegal_message(a[i], legal[i])}" for i in bad[:10]]
            more = f"\n... and {len(bad) - 10} more table(s)" if len(bad) > 10 else ""
            raise ValueError(f"illegal action(s) at {len(bad)} table(s) {bad[:10]}; nothing was applied at any "
                             f"table:\n" + "\n".join(lines) + more)
        rewards = np.zeros((N, n), np.float32)
        terminated = np.zeros(N, bool)
        truncated = np.zeros(N, bool)
        hand_over = np.zeros(N, bool)
        hands: list[dict | None] = [None] * N
        cfg = self.config
        for i in range(N):
            state = self.states[i]
            played = state.hands_played
            state.apply(a[i], legal[i])
            if state.hands_played != played:  # a hand ended (in a game, the next one may be dealt already)
                res = state.hand_result
                rewards[i] = hand_rewards(cfg, res["hand_scores"], state.winner)
                hands[i] = dict(res)
                hand_over[i] = True
                if state.phase == OVER:
                    terminated[i] = True
                elif self.max_hands is not None and state.hands_played >= self.max_hands:
                    truncated[i] = True
                if terminated[i] or truncated[i]:
                    state.new_game()  # auto-reset: the table's stream deals the next episode
            self._refresh(i)
        self._pack_mask()
        info = {"seat": self.current.copy(), "action_mask": self._mask, "hand_over": hand_over, "hand": hands}
        return self._obs, rewards, terminated, truncated, info

    # ------------------------------------------------------------------ views
    @property
    def current_player(self) -> np.ndarray:
        """``(N,)`` the absolute seat to act at every table."""
        return self.current.copy()

    @property
    def phase(self) -> np.ndarray:
        """``(N,)`` phase ids (:data:`rook_env.call_partner.rules.PHASE_NAMES`)."""
        return np.array([s.phase for s in self.states], np.int64)

    def _seats(self, seat: Any) -> list[int]:
        s = np.asarray(seat)
        if s.dtype.kind not in "iu" or s.shape not in ((), (self.num_envs,)) or ((s < 0) | (s >= self.players)).any():
            raise ValueError(f"seat must be an absolute seat 0..{self.players - 1} or one per table "
                             f"(shape ({self.num_envs},)), got {seat!r}")
        return np.broadcast_to(s, (self.num_envs,)).tolist()

    def observe(self, seat: Any) -> np.ndarray:
        """``(N, D)`` float32: the observation of absolute ``seat`` (an int, or one per table) at every table."""
        if self._mask is None:
            raise RuntimeError("observe() used before reset(); call reset() first")
        out = np.empty((self.num_envs, self.obs_dim), np.float32)
        for i, s in enumerate(self._seats(seat)):
            encode(self.states[i], s, out=out[i], ol=self.obs_layout)
        return out

    def state_for(self, seat: Any) -> np.ndarray:
        """``(N, state_dim)`` float32, ``raw_env.state_for`` of absolute ``seat`` at every table:
        its observation, the other hands, the nest as dealt, the discards and the partner seats."""
        if self._mask is None:
            raise RuntimeError("state_for() used before reset(); call reset() first")
        env = self._scratch
        out = np.empty((self.num_envs, self.state_dim), np.float32)
        for i, s in enumerate(self._seats(seat)):
            env.game = self.states[i]
            out[i] = env.state_for(env.possible_agents[s])
        env.game = None
        return out

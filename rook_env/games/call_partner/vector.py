"""Call-your-partner's batched engine: one pure rules state per table, stepped in a Python loop.

``RookVectorEnv(N, game="call_partner", players=5, **flags)`` returns it; the API is
:mod:`rook_env.vector`'s (its shared step loop, auto-reset and ``illegal_action`` modes
included). The same game as :class:`rook_env.call_partner.raw_env` (every rule flag,
``episode="hand"`` and ``"game"``, ``max_hands``), with observations, masks and rewards bit for
bit those of ``raw_env``; ``tests/test_vector.py`` plays both in lock-step for 4, 5
and 6 players. Unlike the partnership engine this one is **not vectorised**: it keeps one
:class:`~rook_env.games.call_partner.rules.CallPartnerState` per table and steps them in a loop
(apply, ``legal_mask``, ``encode``), without the PettingZoo bookkeeping of ``raw_env``. It
gives trainers the batched interface (one forward pass for every table); the cost per decision
is that of the rules and the encoder. No compiled kernels (``backend="numba"`` is refused) and
no ``deal_source`` (each table deals from its own stream).

What differs from the partnership engine: ``rewards`` is ``(N, players)``; ``info["hand"]`` is
a list of ``N`` entries, the finished hand's result (``raw_env``'s ``infos[agent]["hand"]``
dict) or ``None``; ``state_for(seat)`` is ``raw_env.state_for``'s layout (the observation, the
other hands, the nest as dealt, the discards, the partner seats), read from the rules states.

Deals: ``reset(seed)`` draws one integer seed per table (``table_seeds``) from
``numpy.random.default_rng(seed)``; table ``i`` deals from ``random.Random(table_seeds[i])``
exactly as ``raw_env.reset(seed=table_seeds[i])`` does, and later episodes continue that
stream as ``raw_env.reset()`` without a seed does.

Further members: ``states`` (the rules states; read them, do not change them), ``table_seeds``,
``players``.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from .env import hand_rewards
from .layout import layout_for
from .observation import encode, obs_layout
from .rules import OVER, CallPartnerState
from rook_env.core.vector import U64, RookVectorEnv

__all__ = ["CallPartnerVectorEnv"]


class CallPartnerVectorEnv(RookVectorEnv):
    """``num_envs`` call-your-partner tables with a batched interface; see the module docstring."""

    GAME = "call_partner"

    def _setup(self) -> None:
        if self.deal_source is not None:
            raise ValueError("deal_source: game 'call_partner' deals from each table's own stream; fix deals "
                             "with reset(options=[...]) instead")
        N = self.num_envs
        self.players = self.n_seats = n = self.config.players
        self.layout = L = layout_for(self.config)
        self.obs_layout = ol = obs_layout(self.config)
        self._set_spaces(ol.low, ol.high, L.n_actions)
        self.state_dim = self._state_dim(extra=n)  # state_for adds the partner seats (relative)
        self._mask_bytes = (L.n_actions + 7) // 8
        self.states: list[CallPartnerState] = []
        self.table_seeds: list[int] = []
        self._legal: list[int] = []  # legal actions of the seat to act, as int bitmasks
        self._obs_now = np.zeros((N, ol.size), np.float32)
        self.current = np.zeros(N, np.int64)

    # ------------------------------------------------------------------ reset
    def _new_episodes(self, options: list[dict | None]) -> None:
        self.table_seeds = [int(s) for s in self._rng.integers(2**63, size=self.num_envs)]
        self.states = []
        for i, s in enumerate(self.table_seeds):
            state = CallPartnerState(self.config)
            state.rng = random.Random(s)
            opt = self._check_option_keys(options[i], f"options[{i}]") if options[i] is not None else {}
            try:
                state.new_game(dealer=opt.get("dealer"), scores=opt.get("scores"), hands=opt.get("hands"),
                               nest=opt.get("nest"))
            except ValueError as exc:
                raise ValueError(f"options[{i}]: {exc}") from None
            self.states.append(state)
        self._legal = [0] * self.num_envs

    # ------------------------------------------------------------------ step (RookVectorEnv.step's hooks)
    def _legal_ok(self, a: np.ndarray) -> np.ndarray:
        return np.array([(m >> x) & 1 for m, x in zip(self._legal, a.tolist())], bool)

    def _illegal_line(self, i: int, action: int) -> str:
        return self.states[i].illegal_message(action, self._legal[i])

    def _new_facts(self) -> list[dict | None]:
        return [None] * self.num_envs

    def _advance(self, a: np.ndarray, illegal: np.ndarray, rewards: np.ndarray, terminated: np.ndarray,
                 truncated: np.ndarray, hand_over: np.ndarray, facts: list[dict | None]) -> np.ndarray:
        """Apply the actions table by table (the rules deal redeals and a game's next hand themselves)."""
        cfg, legal, skip = self.config, self._legal, illegal.tolist()
        for i, action in enumerate(a.tolist()):
            if skip[i]:
                continue
            state = self.states[i]
            played = state.hands_played
            state.apply(action, legal[i])
            if state.hands_played != played:  # a hand ended (in a game, the next one may be dealt already)
                res = state.hand_result
                rewards[i] = hand_rewards(cfg, res["hand_scores"], state.winner)
                facts[i] = dict(res)
                hand_over[i] = True
                if state.phase == OVER:
                    terminated[i] = True
                elif self.max_hands is not None and state.hands_played >= self.max_hands:
                    truncated[i] = True
        return self._ar[:0]

    def _deal(self, again: np.ndarray, new: np.ndarray) -> None:
        for i in new.tolist():
            self.states[i].new_game()  # auto-reset: the table's own stream deals the next episode

    def _hand_info(self, facts: list[dict | None]) -> list[dict | None]:
        return facts

    def _refresh(self) -> None:
        """Every table's seat to act, its legal actions and observation."""
        ol, out, legal = self.obs_layout, self._obs_now, self._legal
        for i, state in enumerate(self.states):
            self.current[i] = state.current
            legal[i] = state.legal_mask()
            encode(state, state.current, out=out[i], ol=ol)
        raw = b"".join(m.to_bytes(self._mask_bytes, "little") for m in legal)
        bits = np.frombuffer(raw, np.uint8).reshape(self.num_envs, self._mask_bytes)
        self._mask = np.unpackbits(bits, axis=1, count=self.n_actions, bitorder="little").view(np.int8)

    # ------------------------------------------------------------------ views
    @property
    def phase(self) -> np.ndarray:
        """``(N,)`` phase ids (:data:`rook_env.games.call_partner.rules.PHASE_NAMES`)."""
        return np.array([s.phase for s in self.states], np.int64)

    def _observe(self, seats: np.ndarray) -> np.ndarray:
        out = np.empty((self.num_envs, self.obs_dim), np.float32)
        for i, s in enumerate(seats.tolist()):
            encode(self.states[i], s, out=out[i], ol=self.obs_layout)
        return out

    def _hidden_sets(self, seats: np.ndarray) -> np.ndarray:
        n = self.players
        return np.array([[st.hands[(s + k) % n] for k in range(1, n)] + [st.nest, st.discards]
                         for st, s in zip(self.states, seats.tolist())], U64)

    def _extra_state(self, out: np.ndarray, seats: np.ndarray) -> None:
        """The partner seats, relative to the seat (one-hot), as ``raw_env.state_for``."""
        n = self.players
        for i, (st, s) in enumerate(zip(self.states, seats.tolist())):
            out[i, [(p - s) % n for p in st.partners]] = 1.0

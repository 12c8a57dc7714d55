"""The partnership game's batched engine: tables as rows of arrays (structure of arrays), numpy.

``RookVectorEnv(N, **flags)`` (the default game) returns it; the API is :mod:`rook_env.vector`'s.
The same game as :class:`rook_env.raw_env` (every rule flag, Circus Rook included,
``episode="hand"`` and ``"game"``, ``max_hands``), with the observations bit for bit those
of ``raw_env``; ``tests/test_vector.py`` plays both in lock-step to check it. Card sets are
``uint64`` bitmasks (bit ``id``; the full deck's 57 cards fit), every table's state is one row
of a few arrays, and legality, trick resolution, scoring and the incremental update of all four
seats' observations are masked array operations per phase: no Python loop over tables in a
step. With ``backend="numba"`` (what ``"auto"`` takes where numba is installed) card play,
legality with the observation gather and :func:`~rook_env.vector.sample_legal` run as the
compiled loops of :mod:`rook_env.games.partnership.kernels` instead, on the same state arrays;
``backend="numpy"`` is the reference the kernels mirror.

``info["hand"]`` holds the finished hands' facts as arrays with ``raw_env``'s
``infos[agent]["hand"]`` keys: ``bidder``, ``bid``, ``trump``, ``made`` ``(N,)``; ``counters``,
``bonus``, ``hand_scores``, ``scores``, ``tricks_won`` ``(N, 2)`` per team (teams {0, 2} and
{1, 3}); ``last_trick_team``, ``game_winner`` ``(N,)``; with ``circus_rook="on"`` also
``circus`` ``(N,)`` bool (circus was called in that hand); with ``trump_calls="extended"``
also ``call`` ``(N,)``, the contract as an index into ``env.layout.contract_names``
(``raw_env`` gives the name, e.g. ``"green low"``). Rows without a finished hand hold -1 (0 for
per-team entries, False for ``made``/``circus``). (The integer entries are column views of one
array.)

Circus Rook (``circus_rook="on"``, RULES.md F20): the bidder's ``TRUMP`` decision may be the
``circus`` action; then the seat on its left names the contract and the table enters phase
``rook_env.games.partnership.rules.CIRCUS``, where four steps (namer, bidder, bidder's partner, bidder's right)
each pass one card (a card action), delivered together after the fourth; the namer leads.
Its state and observation writes run only with the flag on.

Deals are drawn from the engine's ``numpy.random.Generator`` (not the same deals as
``raw_env``'s stream). ``state_for(seat)`` is ``(N, D + 5 * n_cards)``: the seat's observation,
the hands of its left, partner and right, the nest as dealt and the discards. Further members:
``scores`` ``(N, 2)``, ``dealer``, ``hands_played`` (copies).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from . import kernels
from .cards import N_COLOURS, N_SEATS, layout_for
from .observation import REL, REL_ONE_HOT, SCORE_CLIP, ObservationEncoder, obs_layout
from .rules import BID, CIRCUS, DISCARD, OVER, PHASE_NAMES, PLAY, TRUMP, RookState, contract_tables
from rook_env.core.vector import U64, RookVectorEnv, unpack_bits

SEATS = np.arange(N_SEATS)
# info["hand"]: name -> column(s) of one (N, FACT_COLUMNS) int64 array ("made" is returned as bool)
FACTS = {"bidder": 0, "bid": 1, "trump": 2, "made": 3, "counters": slice(4, 6), "bonus": slice(6, 8),
         "hand_scores": slice(8, 10), "scores": slice(10, 12), "tricks_won": slice(12, 14), "last_trick_team": 14,
         "game_winner": 15}
FACT_COLUMNS = 16
FACT_DEFAULTS = np.array([-1, -1, -1, 0] + [0] * 10 + [-1, -1], np.int64)  # where no hand ended
# Optional columns after those, as in raw_env: circus_rook="on" adds "circus" (bool: circus was called, default
# False); trump_calls="extended" adds "call" (the contract's index into ``env.layout.contract_names``; raw_env
# gives the name; -1 where no hand ended).
EXTRA_FACT_DEFAULTS = {"circus": 0, "call": -1}
# Per-hand state of a fresh deal: n_discards, high_bid (bid level index), bidder, n_passed, trump, leader,
# trick_len, n_tricks (finished this hand), last_trick_team, nest_has_counters (0/1), call (trump call index).
HAND_STATE_COLUMNS = ("n_discards", "high_bid", "bidder", "n_passed", "trump", "leader", "trick_len", "n_tricks",
                      "last_trick_team", "nest_has_counters", "call")
HAND_STATE_INIT = np.array([0, -1, -1, 0, -1, -1, 0, 0, -1, 0, -1], np.int64)
# The observation's scaled numbers, counters .. scores, as offsets from ``counters``.
NUM_SIZE = 7  # counters 2 + tricks_won 2 + tricks_left 1 + scores 2
NUM_TRICKS_LEFT, NUM_SCORES = 4, 5
# REL_ONE_HOT in the store's dtype: numpy's fancy assignment is several times slower when it casts.
REL_ONE_HOT_U8 = REL_ONE_HOT.astype(np.uint8)


class PartnershipVectorEnv(RookVectorEnv):
    """``num_envs`` partnership Rook tables stepped together; see the module docstring."""

    GAME = "partnership"
    COMPILED = True  # rook_env.games.partnership.kernels

    def _setup(self) -> None:
        cfg = self.config
        self.n_seats = N_SEATS
        self.layout = L = layout_for(cfg)
        self.obs_layout = ol = obs_layout(cfg)
        self._set_spaces(ol.low, ol.high, L.n_actions)
        self.state_dim = self._state_dim()
        self._scratch = RookState(cfg)  # validates fixed deals with raw_env's errors
        self._german = cfg.nest_discard == "no_counters_unless_forced"
        self._circus_on = cfg.circus_rook == "on"
        self._build_tables()
        self._alloc_obs()
        self._alloc_state()
        if self.backend == "numba":
            self._kernel_args()

    def _alloc_obs(self) -> None:
        """Every seat's observation at every table, kept up to date by the step's writes."""
        N, D, ol = self.num_envs, self.obs_dim, self.obs_layout
        self._row0 = self._ar * (N_SEATS * D)  # flat offset of each table's seat-0 observation
        # All four seats' observations, kept in two parts: the 0/1 entries as uint8 (a quarter of the
        # memory: the many scattered writes stay in cache) and the NUM_SIZE scaled numbers from
        # ``counters`` to ``scores`` as float32, once per team (partners see the same numbers);
        # _gather joins them into float32 vectors.
        assert ol.SCORES + 2 - ol.COUNTERS == NUM_SIZE, "counters .. scores must be adjacent"
        self._obs = np.zeros((N, N_SEATS, D), np.uint8)
        self._flat = self._obs.reshape(-1)
        self._num = np.zeros((N, 2, NUM_SIZE), np.float32)  # per team: seats 0, 2 see row 0; 1, 3 row 1
        self._row_of = self._ar * N_SEATS  # row of seat 0 in the (N * 4, D) view
        self._team_row0 = self._ar * 2  # row of team 0 in the (N * 2, NUM_SIZE) view
        self._num_flat = self._num.reshape(-1)
        # _write_totals: the divisors of counters, tricks won, tricks left (twice: both teams) and their
        # flat columns in a table's (2 * NUM_SIZE,) numbers
        tp, nt = float(self.layout.total_points), float(self.layout.n_tricks)
        self._totals_div = np.array([tp, tp, nt, nt, nt] * 2)
        self._totals_cols = np.r_[0:NUM_SCORES, NUM_SIZE:NUM_SIZE + NUM_SCORES]

    def _alloc_state(self) -> None:
        """The state arrays, one row per table (see RookState for the meaning of each field)."""
        N, cfg = self.num_envs, self.config
        self.hands = np.zeros((N, N_SEATS), U64)
        self.nest = np.zeros(N, U64)  # as dealt
        self.discards = np.zeros(N, U64)
        # the per-hand counters and seats, one column each of one matrix (a new deal resets it in one write)
        self._hand_state = np.empty((N, len(HAND_STATE_INIT)), np.int64)
        self._hand_state[:] = HAND_STATE_INIT
        (self.n_discards, self.high_bid, self.bidder, self.n_passed, self.trump, self.leader, self.trick_len,
         self.n_tricks, self.last_trick_team, self.nest_has_counters, self.call) = self._hand_state.T
        self._phase = np.full(N, OVER, np.int64)
        self.current = np.zeros(N, np.int64)
        self._dealer = np.zeros(N, np.int64)
        self.passed = np.zeros((N, N_SEATS), bool)
        self.trick = np.zeros((N, N_SEATS), np.int64)  # cards of the current trick in play order
        self.tricks_won = np.zeros((N, 2), np.int64)
        self.points = np.zeros((N, 2), np.int64)
        self._scores = np.zeros((N, 2), np.int64)
        # flat views for 1-d fancy indexing (cheaper than (table, seat) pairs)
        self._hands_flat = self.hands.reshape(-1)
        self._trick_flat = self.trick.reshape(-1)
        self._points_flat = self.points.reshape(-1)
        self._tricks_won_flat = self.tricks_won.reshape(-1)
        self._hands_played = np.zeros(N, np.int64)
        # Circus Rook (read and written only with circus_rook="on"): circus called, and the card each
        # seat has set aside to pass to its left (-1: not chosen yet), delivered when all four chose.
        self.circus = np.zeros(N, bool)
        self.passing = np.full((N, N_SEATS), -1, np.int64)
        # the phases step() hands to a handler, in order (a table's phase is fixed before any handler runs)
        self._step_phases = (PLAY, BID, DISCARD, TRUMP) + ((CIRCUS,) if self._circus_on else ())
        extras = [k for k, on in (("circus", self._circus_on), ("call", cfg.trump_calls == "extended")) if on]
        self._facts = {**FACTS, **{k: FACT_COLUMNS + i for i, k in enumerate(extras)}}
        fact_defaults = np.append(FACT_DEFAULTS, [EXTRA_FACT_DEFAULTS[k] for k in extras]).astype(np.int64)
        self._facts_init = np.tile(fact_defaults, (N, 1))  # step() starts from a copy (a memcpy)
        self._legal: np.ndarray | None = None  # (N, words) uint64: the legal actions as bits (_mask: returned)

    def _kernel_args(self) -> None:
        """The constants the compiled kernels take (see their docstrings for the order)."""
        self._kernels = kernels.compiled()
        ol, L, D, cfg = self.obs_layout, self.layout, self.obs_dim, self.config
        self._k_play_ints = np.array(
            [D, L.n_cards, L.n_tricks, N_COLOURS, self._black_two, self._rook, ol.LEADER, NUM_SIZE,
             *[HAND_STATE_COLUMNS.index(c) for c in ("leader", "trick_len", "n_tricks", "last_trick_team",
                                                      "call")]], np.int64)
        self._k_refresh_u64 = np.array([self._no_counter, self._counter_mask, self._bid0_bit, self._redeal_bit,
                                        self._trump_bits, self._circus_bit], U64)
        self._k_refresh_ints = np.array([L.n_cards, self._free_key, self._extra_shift, self._german,
                                         cfg.no_counter_redeal == "on", self._circus_on], np.int64)
        self._k_ended = np.empty(self.num_envs, np.int64)

    # ------------------------------------------------------------------ lookup tables
    def _build_tables(self) -> None:
        """Per-configuration constants: card masks, trick powers, flat observation offsets."""
        L, ol, D = self.layout, self.obs_layout, self.obs_dim
        n, nb = L.n_cards, L.n_bids
        self._card_bit = np.array([1 << c for c in range(n)], U64)
        # colour masks; index -1 (no trump / no colour) is the last, empty entry
        self._colour_mask = np.array(list(L.colour_mask) + [0], U64)
        self._card_colour = np.array(L.card_colour, np.int64)  # Rook Bird: -1
        self._card_points = np.array(L.card_points, np.int64)
        self._counter_mask = U64.type(L.counter_mask)
        self._rook_bit = U64.type(L.rook_bit)
        self._no_counter = U64.type(L.all_cards & ~L.counter_mask)
        self._rook_high = self.config.rook_rank == "high"
        self._bid_values = np.array(L.bids, np.int64)
        self._levels = np.arange(nb)
        # The rules' ContractTables per trump call k (a colour with the default calls).
        ct = contract_tables(self.config)
        nk = L.n_contracts
        # _power[k, led, card]: a card's power in a trick led in effective suit ``led`` (-1: cannot win)
        self._power_flat = np.array(ct.power, np.float64).reshape(-1)
        self._eff = np.array(ct.eff, np.int64).reshape(-1)  # [k * n + card]: effective suit
        self._call_trump = np.array(ct.trump, np.int64)
        self._call_trumps = np.array(ct.trumps + [0], U64)  # index -1: no call yet
        self._black_two = ct.black_two
        self._rook = L.rook
        # Following suit (RookState._play_mask) as lookups on key = k * n + led card: the cards that
        # follow, and those playable when one can follow (with the cards playable at any time).
        # The extra key n * nk ("free": leading, or any phase but play) allows every card.
        follow = [ct.follow[k][c] for k in range(nk) for c in range(n)]
        plus = [ct.follow[k][c] | ct.any_time[k] for k in range(nk) for c in range(n)]
        self._free_key = nk * n
        self._follow = np.array(follow + [L.all_cards], U64)
        self._follow_plus = np.array(plus + [L.all_cards], U64)
        # card actions exist in the discard, play and circus (passing) phases only; index: phase id
        self._phase_cards = np.array([L.all_cards if ph in (DISCARD, PLAY, CIRCUS) else 0
                                      for ph in range(len(PHASE_NAMES))], U64)
        rel = np.array(REL)  # rel[me, seat]
        me = np.arange(N_SEATS)
        # flat offsets within a table's (4, D) block, one row per acting seat s
        self._play_off = np.array(
            [np.concatenate([me * D + ol.TRICK + rel[me, s] * n, me * D + ol.PLAYED + rel[me, s] * n])
             for s in range(N_SEATS)])  # (4, 8): + card id
        self._pass_off = np.array([me * D + ol.PASSES + rel[me, s] * (nb + 1) for s in range(N_SEATS)])  # + level + 1
        self._bid_off = np.array(
            [np.concatenate([me * D + ol.CONTRACT, me * D + ol.BIDS + rel[me, s] * nb]) for s in range(N_SEATS)]
        )  # (4, 8): + level
        self._all_rows = me * D  # (4,): + a section offset, every seat's row
        # a card played by seat s: 0 at its own HAND entry, 1 at _play_off[s] (+ card id)
        self._card_off = np.concatenate([(me * D + ol.HAND)[:, None], self._play_off], axis=1)  # (4, 9)
        self._card_val = np.array([0] + [1] * (2 * N_SEATS), np.uint8)
        self._hand_nest_off = np.concatenate([ol.HAND + np.arange(n), ol.NEST + np.arange(n)])  # + a seat's row
        self._row_off: dict[tuple[int, int], np.ndarray] = {}  # _put_rows' offsets by (start, width)
        self._phase_off: dict[tuple[int, int], np.ndarray] = {}  # _write_phase's by (old, new)
        self._off_on = np.array([0, 1], np.uint8)
        # legal actions as bits: cards at 0..n-1, then pass, bids, trumps, redeal (relative to n)
        self._n_words = (L.n_actions + 63) // 64
        self._extra_shift = n
        self._pass_bit = U64.type(1 << (L.PASS - n))
        self._bid0_bit = U64.type(1 << (L.BID0 - n))
        # by high bid + 1 (0: none yet): pass and every bid above the high bid
        self._pass_and_bids_above = np.array(
            [(1 << (L.PASS - n)) | ((((1 << nb) - 1) >> lo) << lo << (L.BID0 - n)) for lo in range(nb + 1)], U64)
        self._trump_bits = U64.type(((1 << L.n_contracts) - 1) << (L.TRUMP0 - n))
        self._redeal_bit = U64.type(1 << (L.REDEAL - n))
        self._circus_bit = U64.type(1 << (L.CIRCUS - n) if L.CIRCUS >= 0 else 0)

    # ------------------------------------------------------------------ properties
    @property
    def scores(self) -> np.ndarray:
        """``(N, 2)`` game scores of teams 0 and 1 (a copy)."""
        return self._scores.copy()

    @property
    def dealer(self) -> np.ndarray:
        return self._dealer.copy()

    @property
    def phase(self) -> np.ndarray:
        """``(N,)`` phase ids (``rook_env.games.partnership.rules``: BID, DISCARD, TRUMP, PLAY; CIRCUS with ``circus_rook``)."""
        return self._phase.copy()

    @property
    def hands_played(self) -> np.ndarray:
        """``(N,)`` hands finished in the current episode."""
        return self._hands_played.copy()

    # ------------------------------------------------------------------ reset
    def _new_episodes(self, options: list[dict | None]) -> None:
        fixed = [None if o is None else self._check_option(o, f"options[{i}]", True) for i, o in enumerate(options)]
        self._new_game(self._ar, fixed)

    def _check_option(self, opt: Any, where: str, new_game: bool) -> tuple:
        """Validate one fixed deal as ``raw_env.reset(options=...)`` does -> (hands, nest, dealer, scores)."""
        self._check_option_keys(opt, where)
        if not new_game and ("dealer" in opt or "scores" in opt):
            raise ValueError(f"{where}: a deal inside a game (redeal or next hand) takes only 'hands' and 'nest'")
        st = self._scratch
        dealer = opt.get("dealer")
        try:
            st.new_game(dealer=0 if dealer is None else dealer, scores=opt.get("scores"),
                        hands=opt.get("hands"), nest=opt.get("nest"))
        except ValueError as e:
            raise ValueError(f"{where}: {e}") from None
        given = opt.get("hands") is not None or opt.get("nest") is not None
        return (list(st.hands) if given else None, st.nest if given else None,
                None if dealer is None else st.dealer, list(st.scores))

    # ------------------------------------------------------------------ dealing
    def _new_game(self, idx: np.ndarray, fixed: Sequence[tuple | None]) -> None:
        """Start new episodes at tables ``idx`` (scores 0 or given, first dealer drawn or given) and deal."""
        if not len(idx):
            return
        self._start_games(idx, fixed)
        self._deal_cards(idx, [None if f is None or f[0] is None else (f[0], f[1]) for f in fixed])

    def _start_games(self, idx: np.ndarray, fixed: Sequence[tuple | None]) -> None:
        """New episodes at tables ``idx``: first dealer drawn or given, scores 0 or given (no deal yet)."""
        m = len(idx)
        dealers = self._rng.integers(0, N_SEATS, m)
        scores = np.zeros((m, 2), np.int64)
        for k, f in enumerate(fixed):
            if f is not None:
                if f[2] is not None:
                    dealers[k] = f[2]
                scores[k] = f[3]
        self._dealer[idx] = dealers
        self._scores[idx] = scores
        self._hands_played[idx] = 0

    def _deal_cards(self, idx: np.ndarray, fixed: Sequence[tuple | None]) -> None:
        """Deal at tables ``idx`` by their current dealer: fixed ``(hands, nest)`` or drawn."""
        L = self.layout
        m, n, hs = len(idx), L.n_cards, L.hand_size
        perm = self._rng.random((m, n)).argsort(axis=1)  # a uniform shuffle per table
        bits = self._card_bit[perm]
        ns = L.nest_size
        nest = bits[:, :ns].sum(axis=1, dtype=U64)
        hands = bits[:, ns:ns + N_SEATS * hs].reshape(m, N_SEATS, hs).sum(axis=2, dtype=U64)
        if any(f is not None for f in fixed):
            for k, f in enumerate(fixed):
                if f is not None:
                    hands[k] = f[0]
                    nest[k] = f[1]
        self.hands[idx] = hands
        self.nest[idx] = nest
        self.discards[idx] = 0
        self._phase[idx] = BID
        self.current[idx] = (self._dealer[idx] + 1) & 3
        self._hand_state[idx] = HAND_STATE_INIT
        self.passed[idx] = False
        self.tricks_won[idx] = 0
        self.points[idx] = 0
        if self._circus_on:
            self.circus[idx] = False
            self.passing[idx] = -1
        # the fresh-deal observation (ObservationEncoder._fresh_deal), built in small dense blocks and
        # written with one row write per store (fancy writes mixed with slices are several times slower)
        ol = self.obs_layout
        fresh = np.zeros((m, N_SEATS, self.obs_dim), np.uint8)
        fresh[:, :, ol.PHASE + BID] = 1
        fresh[:, :, ol.DEALER:ol.DEALER + N_SEATS] = REL_ONE_HOT_U8[self._dealer[idx]]
        fresh[:, :, ol.HAND:ol.HAND + n] = unpack_bits(hands, n)
        self._obs[idx] = fresh
        num = np.zeros((m, 2, NUM_SIZE), np.float32)  # counters and tricks won 0, all tricks left
        num[:, :, NUM_TRICKS_LEFT] = 1.0
        sc = self._scores[idx] / self.config.target_score  # float64, then clipped and rounded to float32
        sc = np.minimum(np.maximum(sc, -SCORE_CLIP, out=sc), SCORE_CLIP, out=sc).astype(np.float32)
        num[:, 0, NUM_SCORES:] = sc
        num[:, 1, NUM_SCORES:] = sc[:, ::-1]  # team 1's rows: its own score first
        self._num[idx] = num

    def _deal_sourced(self, idx: np.ndarray, new_game: np.ndarray) -> None:
        """Deal (``new_game``: start a new episode) at tables ``idx``, asking ``deal_source`` first."""
        if not len(idx):
            return
        if self.deal_source is None:
            fixed: list = [None] * len(idx)
        else:
            got = list(self.deal_source(idx.copy(), new_game.copy()))
            if len(got) != len(idx):
                raise ValueError(f"deal_source returned {len(got)} entries for {len(idx)} tables")
            fixed = [None if o is None else self._check_option(o, f"deal_source entry for table {t}", bool(ng))
                     for o, t, ng in zip(got, idx.tolist(), new_game.tolist())]
        # new episodes first (their dealers drawn), then one deal for all: new episodes' tables, then the
        # others (the same random stream as dealing the two groups one after the other)
        ng_list = new_game.tolist()
        new_fixed = [f for f, ng in zip(fixed, ng_list) if ng]
        if new_fixed:
            self._start_games(idx[new_game], new_fixed)
        order = np.concatenate([idx[new_game], idx[~new_game]]) if 0 < len(new_fixed) < len(idx) else idx
        hands = new_fixed + [f for f, ng in zip(fixed, ng_list) if not ng]
        self._deal_cards(order, [None if f is None or f[0] is None else (f[0], f[1]) for f in hands])

    # ------------------------------------------------------------------ loading given positions
    def load_states(self, states: Sequence[RookState], tables: Any = None, observations: bool = True,
                    refresh: bool = True) -> tuple[np.ndarray, dict]:
        """Put rules states into tables: table ``tables[i]`` continues from ``states[i]`` (any phase but
        over), as if it had been stepped there; returns ``(obs, info)`` as ``reset``.

        ``tables``: table indices (default ``0 .. len(states) - 1``). The states must have this engine's
        configuration. A state object may be given several times (it is encoded once); the states are
        only read. Game scores, dealer and hands played come along, so ``episode="game"`` tables go on
        to the next hand. The engine need not have been reset; then the other tables hold no hand
        (their masks are empty) until loaded or reset, and ``step`` needs every table playable.
        ``observations=False`` skips writing the loaded tables' observations (the costly part): they hold
        stale values until the tables are reset or loaded again, for callers that only run the compiled
        card play on the state (search playing sampled worlds out: :mod:`rook_env.agents.search.batched`).
        ``refresh=False`` (with ``observations=False``) also leaves every table's mask and current observation
        stale (their refresh covers the whole engine): for those callers, which never step the tables;
        the returned arrays are then stale too (None before the engine's first reset or refreshing load).
        """
        states = list(states)
        idx = np.arange(len(states)) if tables is None else np.asarray(tables, np.int64).reshape(-1)
        if len(idx) != len(states):
            raise ValueError(f"load_states: {len(states)} states for {len(idx)} tables")
        if len(idx) and (idx.min() < 0 or idx.max() >= self.num_envs or np.unique(idx).size != idx.size):
            raise ValueError(f"load_states: tables must be distinct indices in 0..{self.num_envs - 1}, got {idx.tolist()}")
        C = self.obs_layout.COUNTERS
        # the distinct states in the order first met (C-level maps: search loads one state into many tables)
        ids = list(map(id, states))
        first = sorted(dict(zip(reversed(ids), range(len(ids) - 1, -1, -1))).values())
        distinct: list[RookState] = [states[i] for i in first]
        for i, st in zip(first, distinct):
            if not isinstance(st, RookState) or st.config != self.config:
                raise ValueError(f"load_states: states[{i}] is not a RookState of this engine's configuration "
                                 f"({type(st).__name__})")
            if st.phase == OVER:
                raise ValueError(f"load_states: states[{i}] is over (phase 'over'); "
                                 "load a state with a decision to make")
        if not distinct:
            if refresh or observations:
                self._refresh()
            return self._obs_now, {"seat": self.current.copy(), "action_mask": self._mask}
        # one row per distinct state, then one fancy write per field (a state may fill many tables)
        rows = {ids[i]: r for r, i in enumerate(first)}  # id(state) -> its row among the distinct states
        pick = np.fromiter(map(rows.__getitem__, ids), np.int64, len(ids))
        ints = np.array([[st.discards.bit_count(), st.high_bid, st.bidder, st.n_passed, st.trump, st.leader,
                          len(st.trick), len(st.tricks), st.last_trick_team, int(st.nest_has_counters), st.call,
                          st.phase, st.current, st.dealer, st.hands_played, st.circus,
                          *st.tricks_won, *st.points, *st.scores, *(st.trick + [0] * (N_SEATS - len(st.trick))),
                          *(st.passing if len(st.passing) == N_SEATS else [-1] * N_SEATS), *st.passed]
                         for st in distinct], np.int64)[pick]
        cards = np.array([[*st.hands, st.nest, st.discards] for st in distinct], U64)[pick]
        h = len(HAND_STATE_INIT)
        self._hand_state[idx] = ints[:, :h]
        (self._phase[idx], self.current[idx], self._dealer[idx], self._hands_played[idx],
         self.circus[idx]) = ints[:, h:h + 5].T
        self.tricks_won[idx] = ints[:, h + 5:h + 7]
        self.points[idx] = ints[:, h + 7:h + 9]
        self._scores[idx] = ints[:, h + 9:h + 11]
        self.trick[idx] = ints[:, h + 11:h + 15]
        self.passing[idx] = ints[:, h + 15:h + 19]
        self.passed[idx] = ints[:, h + 19:h + 23] != 0
        self.hands[idx] = cards[:, :N_SEATS]
        self.nest[idx] = cards[:, N_SEATS]
        self.discards[idx] = cards[:, N_SEATS + 1]
        if observations:
            obs = np.empty((len(distinct), N_SEATS, self.obs_dim), np.float32)
            for k, st in enumerate(distinct):
                enc = ObservationEncoder(st)
                enc.rebuild()
                obs[k] = enc.obs
            obs = obs[pick]
            self._obs[idx] = obs  # the 0/1 entries (the scaled numbers are kept per team in _num)
            self._num[idx] = obs[:, :2, C:C + NUM_SIZE]  # seats 0 and 1: teams 0 and 1
        if self._rng is None:  # auto-reset after a loaded hand deals from the engine's stream
            self._rng = np.random.default_rng()
        if refresh or observations:
            self._refresh()
        return self._obs_now, {"seat": self.current.copy(), "action_mask": self._mask}

    def finish_hands(self, tables: np.ndarray) -> dict[str, np.ndarray]:
        """Score the hands whose last card a caller's own kernel has played at ``tables`` (as ``step`` does
        on a hand's last card) and return their facts (``info["hand"]``'s keys, rows in ``tables``' order).

        The tables are left as they are (their hands over, no new deal): load or reset them before stepping.
        Used by :mod:`rook_env.agents.search.batched`, whose compiled rollouts play the cards on these arrays."""
        idx = np.asarray(tables, np.int64).reshape(-1)
        if len(idx) and (self.n_tricks[idx] != self.layout.n_tricks).any():
            raise ValueError("finish_hands: some of these tables have cards left to play")
        N = self.num_envs
        rewards = np.zeros((N, N_SEATS), np.float32)
        flags = np.zeros(N, bool)
        facts = self._new_facts()
        self._finish_hands(idx, rewards, flags, flags.copy(), facts)
        return self._hand_info(facts[idx])

    # ------------------------------------------------------------------ observation writes
    def _write_totals(self, idx: np.ndarray) -> None:
        # counters (2), tricks_won (2), tricks_left (1) are adjacent (ObservationEncoder._write_totals)
        # team 0's five numbers, then team 1's (pairs swapped), divided as the encoder does (float64),
        # rounded to float32 and written with one flat scatter
        pts, won = self.points[idx], self.tricks_won[idx]
        left = (self.layout.n_tricks - self.n_tricks[idx])[:, None]
        counts = np.concatenate((pts, won, left, pts[:, ::-1], won[:, ::-1], left), axis=1)
        v = (counts / self._totals_div).astype(np.float32)
        self._num_flat[(idx * (2 * NUM_SIZE))[:, None] + self._totals_cols] = v

    def _gather(self, rows: np.ndarray, team_rows: np.ndarray | None = None) -> np.ndarray:
        """float32 observations of flat seat rows ``table * 4 + seat`` (``team_rows``: ``table * 2 + team``)."""
        out = self._obs.reshape(-1, self.obs_dim).take(rows, axis=0).astype(np.float32)
        C = self.obs_layout.COUNTERS
        if team_rows is None:
            team_rows = (rows >> 2 << 1) | (rows & 1)
        out[:, C:C + NUM_SIZE] = self._num.reshape(-1, NUM_SIZE).take(team_rows, axis=0)
        return out

    def _write_phase(self, idx: np.ndarray, old: int, new: int) -> None:
        """Phase ``old`` -> ``new`` in every seat's row at tables ``idx`` (one scatter)."""
        off = self._phase_off.get((old, new))
        if off is None:
            off = self._phase_off[old, new] = (self._all_rows + self.obs_layout.PHASE)[:, None] + np.array([old, new])
        self._flat[self._row0[idx][:, None, None] + off] = self._off_on

    def _put_rows(self, idx: np.ndarray, start: int, values: np.ndarray) -> None:
        """Write ``values`` ``(len(idx), 4, w)`` at section offset ``start`` of every seat's row
        (a flat scatter: much cheaper than ``obs[idx, :, a:b] = values``)."""
        w = values.shape[-1]
        off = self._row_off.get((start, w))
        if off is None:
            off = self._row_off[start, w] = self._all_rows[:, None] + np.arange(start, start + w)
        self._flat[self._row0[idx][:, None, None] + off] = values

    # ------------------------------------------------------------------ step (RookVectorEnv.step's hooks)
    def _legal_ok(self, a: np.ndarray) -> np.ndarray:
        if self._n_words == 1:
            return ((self._legal[:, 0] >> a.view(U64)) & U64.type(1)) != 0
        return ((self._legal[self._ar, a >> 6] >> (a & 63).astype(U64)) & U64.type(1)) != 0

    def _illegal_line(self, i: int, action: int) -> str:
        L = self.layout
        legal = np.flatnonzero(self._mask[i]).tolist()
        legal_txt = ", ".join(f"{x} ({L.action_name(x)})" for x in legal)
        return (f"illegal action {action} ({L.action_name(action)}) for player_{self.current[i]} "
                f"in phase {PHASE_NAMES[self._phase[i]]!r}; legal actions: {legal_txt}")

    def _new_facts(self) -> np.ndarray:
        return self._facts_init.copy()  # the finished hands' facts, one row per table

    def _advance(self, a: np.ndarray, illegal: np.ndarray, rewards: np.ndarray, terminated: np.ndarray,
                 truncated: np.ndarray, hand_over: np.ndarray, facts: np.ndarray) -> np.ndarray:
        """Apply the actions phase by phase; returns the tables to deal again within their episode."""
        N, phase = self.num_envs, self._phase
        if illegal.any():
            phase = np.where(illegal, OVER, phase)
        counts = np.bincount(phase, minlength=len(PHASE_NAMES))
        # the tables of each phase, fixed before any handler moves a table to its next phase
        groups = [(ph, (phase == ph).nonzero()[0] if counts[ph] < N else self._ar)
                  for ph in self._step_phases if counts[ph]]
        redeal: list[np.ndarray] = []
        for ph, idx in groups:
            if ph == PLAY:
                finished = self._step_play(idx, a[idx])
                if len(finished):
                    more = self._finish_hands(finished, rewards, terminated, truncated, facts)
                    hand_over[finished] = True
                    redeal.append(more)  # next hand of a game: dealt like a redeal
            elif ph == BID:
                redeal.append(self._step_bid(idx, a[idx]))
            elif ph == DISCARD:
                self._step_discard(idx, a[idx])
            elif ph == TRUMP:
                self._step_trump(idx, a[idx])
            else:
                self._step_circus(idx, a[idx])
        return np.concatenate(redeal) if redeal else self._ar[:0]

    def _deal(self, again: np.ndarray, new: np.ndarray) -> None:
        """Redeals and next hands of a game, then new episodes (ended or illegal), in one draw."""
        idx = np.concatenate([again, new])
        flags = np.zeros(len(idx), bool)
        flags[len(again):] = True
        self._deal_sourced(idx, flags)

    def _hand_info(self, facts: np.ndarray) -> dict[str, np.ndarray]:
        hand = {name: facts[:, cols] for name, cols in self._facts.items()}
        hand["made"] = hand["made"] != 0
        if self._circus_on:
            hand["circus"] = hand["circus"] != 0
        return hand

    def play_kernel_args(self) -> tuple:
        """The arguments of :func:`rook_env.games.partnership.kernels.play_cards` between the tables and cards and ``ended``:
        this engine's state arrays (played on in place) and constants. For callers that play cards with
        their own compiled loops (:mod:`rook_env.agents.search.batched`); ``backend="numba"`` only."""
        return (self.current, self._hands_flat, self._trick_flat, self._hand_state, self._points_flat,
                self._tricks_won_flat, self.discards, self._flat, self._num_flat, self._card_bit, self._card_off,
                self._card_val, self._play_off, self._eff, self._power_flat, self._card_points, REL_ONE_HOT_U8,
                self._all_rows, self._totals_div, self._k_play_ints)

    # ------------------------------------------------------------------ phases
    def _step_play(self, p: np.ndarray, c: np.ndarray) -> np.ndarray:
        """Play card ``c`` at tables ``p``; returns the tables whose hand just ended."""
        if self.backend == "numba":
            ended = self._k_ended
            n = self._kernels.play_cards(p, c, *self.play_kernel_args(), ended)
            return ended[:n].copy()
        ol, L, f = self.obs_layout, self.layout, self._flat
        s = self.current[p]
        row = self._row_of[p]  # (table, seat 0) in the flat (N * 4,) views
        self._hands_flat[row + s] ^= self._card_bit[c]
        # one scatter: the card leaves the player's hand, enters trick and played in every seat's row
        f[(self._row0[p] + c)[:, None] + self._card_off[s]] = self._card_val
        tl = self.trick_len[p]
        self._trick_flat[row + tl] = c
        tl += 1
        self.trick_len[p] = tl & 3  # a full trick (4) starts again at 0
        self.current[p] = (s + 1) & 3
        q = p[tl == N_SEATS]
        if not len(q):
            return q
        cards = self.trick[q]
        k = self.call[q]
        led = self._eff[k * L.n_cards + cards[:, 0]]  # effective suit: a led Rook Bird is a trump lead
        win = self._power_flat[((k * N_COLOURS + led) * L.n_cards)[:, None] + cards].argmax(axis=1)
        if self._black_two >= 0:  # the black 2 takes a trick the Rook Bird would win
            b2 = cards == self._black_two
            takes = (cards[np.arange(len(q)), win] == self._rook) & b2.any(axis=1)
            win = np.where(takes, b2.argmax(axis=1), win)
        old_leader = self.leader[q]
        winner = (old_leader + win) & 3
        team = winner & 1
        tq = 2 * q + team
        self._points_flat[tq] += self._card_points[cards].sum(axis=1)
        self._tricks_won_flat[tq] += 1
        nt = self.n_tricks[q] + 1
        self.n_tricks[q] = nt
        last = nt == L.n_tricks
        r = q[last]
        if len(r):  # the last trick also takes the nest (the discards)
            tl_team = team[last]
            self.last_trick_team[r] = tl_team
            self.points[r, tl_team] += unpack_bits(self.discards[r], L.n_cards) @ self._card_points
        # clear the trick: its four cards in every seat's row (cheaper than the whole section)
        by = (old_leader[:, None] + SEATS) & 3  # who played each card
        f[(self._row0[q][:, None, None] + cards[:, :, None]) + self._play_off[by][:, :, :N_SEATS]] = 0.0
        self._put_rows(q, ol.LEADER, REL_ONE_HOT_U8[winner])
        self.leader[q] = winner
        self.current[q] = winner
        self._write_totals(q)
        return r

    def _step_bid(self, b: np.ndarray, a: np.ndarray) -> np.ndarray:
        """Pass / bid / redeal at tables ``b``; returns the tables to deal again (same dealer)."""
        L, ol, f = self.layout, self.obs_layout, self._flat
        s = self.current[b]
        is_pass = a == L.PASS
        is_redeal = a == L.REDEAL
        is_bid = ~(is_pass | is_redeal)
        ended = np.zeros(len(b), bool)
        again = is_redeal.copy()
        if is_pass.any():
            P, sp = b[is_pass], s[is_pass]
            hb = self.high_bid[P]
            f[(self._row0[P] + hb + 1)[:, None] + self._pass_off[sp]] = 1.0
            self.passed[P, sp] = True
            npass = self.n_passed[P] + 1
            self.n_passed[P] = npass
            three = npass == 3
            ended[is_pass] = three & (hb >= 0)
            if self.config.all_pass == "redeal":
                again[is_pass] = three & (hb < 0)
        if is_bid.any():
            B, sb = b[is_bid], s[is_bid]
            lvl = a[is_bid] - L.BID0
            prev = self.high_bid[B]
            self.high_bid[B] = lvl
            self.bidder[B] = sb
            self._put_rows(B, ol.BIDDER, REL_ONE_HOT_U8[sb])
            had = prev >= 0  # clear the previous contract's entry
            f[(self._row0[B[had]] + prev[had])[:, None] + (self._all_rows + ol.CONTRACT)] = 0.0
            f[(self._row0[B] + lvl)[:, None] + self._bid_off[sb]] = 1.0
            ended[is_bid] = (lvl == L.n_bids - 1) | (self.n_passed[B] == 3)
        go_on = ~(ended | again)
        if go_on.any():  # the next seat that has not passed
            C, sc = b[go_on], s[go_on]
            nxt = (sc + 3) & 3
            for off in (2, 1):
                cand = (sc + off) & 3
                nxt = np.where(self.passed[C, cand], nxt, cand)
            self.current[C] = nxt
        if ended.any():  # the bidder takes the nest, unseen by others
            E = b[ended]
            bidder = self.bidder[E]
            self.current[E] = bidder
            self.hands[E, bidder] |= self.nest[E]
            new = TRUMP if self._german or not L.nest_size else DISCARD
            self._phase[E] = new
            # its hand and the nest in its own row, one scatter
            both = np.stack([self.hands[E, bidder], self.nest[E]], axis=1)
            f[(self._row0[E] + bidder * self.obs_dim)[:, None] + self._hand_nest_off] = \
                unpack_bits(both, L.n_cards).reshape(len(E), -1)
            self._write_phase(E, BID, new)
        return b[again]

    def _step_discard(self, d: np.ndarray, c: np.ndarray) -> None:
        ol, D, f = self.obs_layout, self.obs_dim, self._flat
        s = self.current[d]  # the bidder
        bit = self._card_bit[c]
        self._hands_flat[self._row_of[d] + s] ^= bit
        self.discards[d] |= bit
        nd = self.n_discards[d] + 1
        self.n_discards[d] = nd
        base = self._row0[d] + s * D + c
        f[base + ol.HAND] = 0.0
        f[base + ol.DISCARDS] = 1.0
        done = nd == self.layout.nest_size
        if not done.any():
            return
        X = d[done]
        if self._german:
            nhc = (self.discards[X] & self._counter_mask) != 0
            self.nest_has_counters[X] = nhc
            self._obs[X[nhc], :, ol.NEST_COUNTERS] = 1.0
            self._start_play(X, DISCARD)
        else:
            self._phase[X] = TRUMP
            self._write_phase(X, DISCARD, TRUMP)

    def _step_trump(self, t: np.ndarray, a: np.ndarray) -> None:
        circus = None
        if self._circus_on:
            called = a == self.layout.CIRCUS
            if called.any():  # public; the player on the bidder's left names trump (RULES.md F20)
                C = t[called]
                self.circus[C] = True
                self.current[C] = (self.bidder[C] + 1) & 3
                self._obs[C, :, self.obs_layout.CIRCUS] = 1
                t, a = t[~called], a[~called]
            circus = self.circus[t]  # trump named after a circus call: the card passing follows
        k = a - self.layout.TRUMP0
        self.call[t] = k
        self.trump[t] = self._call_trump[k]
        self._flat[(self._row0[t] + k)[:, None] + (self._all_rows + self.obs_layout.TRUMP)] = 1.0
        if self._german:  # never with circus (the configuration refuses the combination)
            self._phase[t] = DISCARD
            self._write_phase(t, TRUMP, DISCARD)
        elif circus is not None and circus.any():
            P = t[circus]  # the namer, already to act, passes first
            self._phase[P] = CIRCUS
            self._write_phase(P, TRUMP, CIRCUS)
            self._start_play(t[~circus], TRUMP)
        else:
            self._start_play(t, TRUMP)

    def _step_circus(self, t: np.ndarray, c: np.ndarray) -> None:
        """Circus Rook's card passing at tables ``t``: the seat to act sets card ``c`` aside for its left.

        Order: trump namer (bidder + 1), bidder, bidder's partner, bidder's right; after the fourth
        choice the four cards are delivered at once and the namer leads (RookState._apply_circus_pass)."""
        ol, D, f = self.obs_layout, self.obs_dim, self._flat
        s = self.current[t]
        b = self.bidder[t]
        self._hands_flat[self._row_of[t] + s] ^= self._card_bit[c]
        self.passing[t, s] = c
        base = self._row0[t] + s * D + c
        f[base + ol.HAND] = 0.0
        f[base + ol.PASSED] = 1.0
        last = s == ((b + 3) & 3)
        go_on = ~last
        if go_on.any():
            sg, bg = s[go_on], b[go_on]
            self.current[t[go_on]] = np.where(sg == ((bg + 1) & 3), bg, np.where(sg == bg, (bg + 2) & 3, (bg + 3) & 3))
        if not last.any():
            return
        X = t[last]
        cards = self.passing[X]  # (m, 4) by giver; giver g's card goes to seat g + 1
        to = (SEATS + 1) & 3
        self.hands[X[:, None], to] |= self._card_bit[cards]
        at = (self._row0[X][:, None] + to * D) + cards  # the receivers' rows, + card
        f[at + ol.HAND] = 1.0
        f[at + ol.RECEIVED] = 1.0
        self._start_play(X, CIRCUS, leader=(self.bidder[X] + 1) & 3)  # the trump namer leads

    def _start_play(self, idx: np.ndarray, old: int, leader: np.ndarray | None = None) -> None:
        """Play begins at tables ``idx`` (phase ``old`` before); ``leader``: given (circus), else ``first_lead``."""
        if leader is None:
            fl = self.config.first_lead
            if fl == "left_of_dealer":
                leader = (self._dealer[idx] + 1) & 3
            elif fl == "left_of_bidder":
                leader = (self.bidder[idx] + 1) & 3
            else:
                leader = self.bidder[idx]
        self.leader[idx] = leader
        self.current[idx] = leader
        self._phase[idx] = PLAY
        self._write_phase(idx, old, PLAY)
        self._put_rows(idx, self.obs_layout.LEADER, REL_ONE_HOT_U8[leader])

    def _finish_hands(self, h: np.ndarray, rewards: np.ndarray, terminated: np.ndarray, truncated: np.ndarray,
                      facts: np.ndarray) -> np.ndarray:
        """Score the hands just ended at tables ``h`` (RookState._finish_hand); fill rewards, flags and facts.

        Returns the tables whose game goes on (their next hand is to be dealt, dealer rotated)."""
        cfg = self.config
        m = len(h)
        k = np.arange(m)
        tw = self.tricks_won[h]
        bonus = np.zeros((m, 2), np.int64)
        if cfg.majority_tricks_bonus:
            differ = tw[:, 0] != tw[:, 1]
            bonus[k[differ], (tw[differ, 1] > tw[differ, 0]).astype(np.int64)] += cfg.majority_tricks_bonus
        ltt = self.last_trick_team[h]
        if cfg.last_trick_bonus:
            bonus[k, ltt] += cfg.last_trick_bonus
        captured = self.points[h]
        total = captured + bonus
        bidder = self.bidder[h]
        bid_team = bidder & 1
        bid = self._bid_values[self.high_bid[h]]
        made = total[k, bid_team] >= bid
        delta = np.empty((m, 2), np.int64)
        delta[k, bid_team] = np.where(made, total[k, bid_team], -bid)
        delta[k, 1 - bid_team] = total[k, 1 - bid_team]
        scores = self._scores[h] + delta
        self._scores[h] = scores
        hp = self._hands_played[h] + 1
        self._hands_played[h] = hp
        winner = np.where((scores.max(axis=1) >= cfg.target_score) & (scores[:, 0] != scores[:, 1]),
                          (scores[:, 1] > scores[:, 0]).astype(np.int64), -1)
        # rewards of the four absolute seats (raw_env._hand_finished)
        team = np.arange(N_SEATS) & 1  # seat -> team
        own, opp = delta[:, team], delta[:, 1 - team]  # (m, 4)
        if cfg.reward == "score_diff":
            r = own - opp
        elif cfg.reward == "team_score":
            r = own
        elif cfg.episode == "game":
            r = np.where(winner[:, None] < 0, 0, np.where(winner[:, None] == team, 1, -1))
        else:
            r = np.sign(own - opp)
        rewards[h] = r
        out = np.empty((m, facts.shape[1]), np.int64)  # the columns of FACTS
        out[:, 0] = bidder
        out[:, 1] = bid
        out[:, 2] = self.trump[h]
        out[:, 3] = made
        out[:, 4:6] = captured
        out[:, 6:8] = bonus
        out[:, 8:10] = delta
        out[:, 10:12] = scores
        out[:, 12:14] = tw
        out[:, 14] = ltt
        out[:, 15] = winner
        if self._circus_on:
            out[:, self._facts["circus"]] = self.circus[h]
        if "call" in self._facts:
            out[:, self._facts["call"]] = self.call[h]
        facts[h] = out
        if cfg.episode == "game":
            over = winner >= 0
            terminated[h[over]] = True
            go_on = h[~over]
            self._dealer[go_on] = (self._dealer[go_on] + 1) & 3
            if self.max_hands is not None:
                cut = hp[~over] >= self.max_hands
                truncated[go_on[cut]] = True
                go_on = go_on[~cut]
            return go_on
        terminated[h] = True
        return h[:0]

    # ------------------------------------------------------------------ legality and views
    def _refresh(self) -> None:
        """The mask and observation of the seat to act at every table, from the state."""
        N, L = self.num_envs, self.layout
        if self.backend == "numba":
            self._legal = np.empty((N, self._n_words), U64)
            self._mask = np.empty((N, L.n_actions), np.int8)
            self._obs_now = np.empty((N, self.obs_dim), np.float32)
            self._kernels.refresh(
                self._phase, self.current, self._hands_flat, self.trick_len, self._trick_flat, self.call,
                self.n_passed, self.high_bid, self.circus, self._follow, self._follow_plus, self._phase_cards,
                self._pass_and_bids_above, self._call_trumps, self._k_refresh_u64, self._k_refresh_ints,
                self._obs.reshape(-1, self.obs_dim), self._num.reshape(-1, NUM_SIZE), self.obs_layout.COUNTERS,
                self._legal, self._mask, self._obs_now)
            return
        n = L.n_cards
        phase, cur = self._phase, self.current
        counts = np.bincount(phase, minlength=len(PHASE_NAMES))
        hand = self._hands_flat[self._row_of + cur]
        if counts[PLAY]:  # following: the row of (trump, led card) in the follow tables, or "free"
            following = self.trick_len > 0  # a trick is under way (only ever in play: 0 at a deal and after a trick)
            key = np.where(following, self.call * n + self._trick_flat[self._row_of], self._free_key)
            follow = hand & self._follow[key]
            cards = np.where(follow != 0, hand & self._follow_plus[key], hand) & self._phase_cards[phase]
        else:
            cards = hand & self._phase_cards[phase]
        if counts[DISCARD] and self._german:  # counters only when every card left is a counter or a trump
            free = hand & self._no_counter
            disc = np.where((free & ~self._call_trumps[self.call]) != 0, free, hand)
            cards = np.where(phase == DISCARD, disc, cards)
        if counts[BID] or counts[TRUMP]:
            extra = U64.type(0)  # pass, bids, trumps, redeal: bit (action - n_cards)
            if counts[BID]:
                isb = phase == BID
                forced = isb & (self.n_passed == 3) & (self.high_bid < 0)  # all_pass=dealer_forced
                # pass and the levels above the high bid (a lookup by high bid + 1)
                open_ = self._pass_and_bids_above[self.high_bid + 1]
                extra = np.where(isb, np.where(forced, self._bid0_bit, open_), extra)
                if self.config.no_counter_redeal == "on":
                    extra |= np.where(isb & ((hand & self._counter_mask) == 0), self._redeal_bit, U64.type(0))
            if counts[TRUMP]:
                trumps = self._trump_bits
                if self._circus_on:  # the bidder may call circus instead (once)
                    trumps = np.where(self.circus, trumps, trumps | self._circus_bit)
                extra = np.where(phase == TRUMP, trumps, extra)
            first = cards | (extra << U64.type(self._extra_shift))
            if self._n_words > 1:
                words = np.stack([first, extra >> U64.type(64 - self._extra_shift)], axis=1)
            else:
                words = first.reshape(N, 1)
        else:
            words = np.zeros((N, self._n_words), U64)
            words[:, 0] = cards
        self._legal = words  # (N, words) legal actions as bits (see _build_tables)
        self._mask = np.unpackbits(words.view(np.uint8), axis=1, count=L.n_actions, bitorder="little").view(np.int8)
        self._obs_now = self._gather(self._row_of + cur, self._team_row0 + (cur & 1))

    def _observe(self, seats: np.ndarray) -> np.ndarray:
        return self._gather(self._row_of + seats)

    def _hidden_sets(self, seats: np.ndarray) -> np.ndarray:
        others = self.hands[self._ar[:, None], (seats[:, None] + np.arange(1, N_SEATS)) & 3]  # (N, 3)
        return np.concatenate([others, self.nest[:, None], self.discards[:, None]], axis=1)

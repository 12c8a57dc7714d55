"""Seat-relative observation vectors: layout, incremental encoder, and decoder.

Every position is relative to the observing seat: ``0 = me, 1 = left, 2 = partner,
3 = right`` (``rel = (seat - me) % 4``), and teams are "mine" then "theirs", so one
policy can play every seat. Values are 0/1 except the few scaled numbers noted.

Default layout (tournament deck: N = 41 cards, B = 11 bid levels), 583 floats::

    name            size          meaning
    phase           5             one-hot: bid, discard, trump, play, over
    hand            N   = 41      cards I hold (the bidder's 14 while discarding)
    bids            4*B = 44      [rel][level] = 1: that seat made that bid
    passes          4*(B+1) = 48  [rel][k]: that seat passed when the high bid was level k-1 (k=0: no bid yet)
    bidder          4             rel seat of the (current) high bidder
    contract        B   = 11      level of the (current) high bid
    trump           4             trump colour, once named
    leader          4             rel seat that led the current trick
    trick           4*N = 164     [rel][card]: cards in the current trick, by who played them
    played          4*N = 164     [rel][card]: every card played this hand, by who played it
    nest            N   = 41      the nest as picked up (bidder only; zeros for others)
    discards        N   = 41      the bidder's discards, the new nest (bidder only)
    nest_counters   1             announced that the nest holds counters (nest_discard=no_counters_unless_forced)
    counters        2             counters taken: my team, their team (/ points per deck)
    tricks_won      2             tricks taken: my team, their team (/ tricks per hand)
    tricks_left     1             tricks still to play (/ tricks per hand)
    scores          2             game scores: my team, their team (/ target_score, clipped to +-SCORE_CLIP)
    dealer          4             rel seat of the dealer
    ------------------------------------------------------------------
    5+41+44+48+4+11+4+4+164+164+41+41+1+2+2+1+2+4 = 583 (OBS_SIZE)

The games of RULES.md "More games" keep this order and these names; sizes follow the deck
(N = 40 or 56 without the Rook Bird) and the bid levels, and:

- ``trump`` has one entry per contract: 4 (colours), or 10 with ``trump_calls="extended"``
  (red/yellow/green/black high, the same low, no trump high, no trump low: the action order);
- with ``circus_rook="on"``: ``phase`` has a sixth entry, ``circus`` (the card passing), and
  three sections follow ``dealer``: ``circus`` (1, circus was called: public), ``passed``
  (N, the card this seat passed to its left) and ``received`` (N, the card it received from its
  right, once all four are delivered). Nobody else sees a passed card;
- with ``nest="off"`` the ``nest``, ``discards`` and ``nest_counters`` entries stay 0.

``obs_layout(config).table()`` lists every section of a configuration.

Every entry is bounded: 0/1 and fractions in [0, 1], the scores in [-SCORE_CLIP, SCORE_CLIP]
(``clip(score / target_score, -4, 4)``: exact for any score a fixed ``reset`` may set, and for every
score of a game short of four targets' worth of sets). The layout depends only on the action
:class:`Layout` (deck, bids, contracts, circus), so configurations sharing it share one :class:`ObsLayout`.

The exact size for a configuration is ``ObsLayout(config).size`` (default: see
``DEFAULT_OBS_LAYOUT.size``); ``ObsLayout.sections`` lists ``(name, start, stop)``.
:func:`decode` turns a vector back into a readable :class:`PlayerView`.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Sequence

import numpy as np

from .cards import N_SEATS, Layout, bits, contract_trump, layout_for
from .config import RookConfig
from rook_env.core.observation import SectionLayout, encode_common, relative_seats, unpack_mask
from .rules import BID, CIRCUS, DISCARD, OVER, PHASE_NAMES, PLAY, TRUMP, RookState

# The score entries hold clip(score / target_score, -SCORE_CLIP, SCORE_CLIP): finite Box bounds that
# normalisation wrappers and space checkers accept. The batched engine encodes them the same way.
SCORE_CLIP = 4.0


class ObsLayout(SectionLayout):
    """Offsets of every observation section for one configuration (or its action :class:`Layout`)."""

    def __init__(self, config: RookConfig | Layout) -> None:
        L = config if isinstance(config, Layout) else layout_for(config)
        n, b = L.n_cards, L.n_bids
        self.L = L
        circus = L.CIRCUS >= 0
        sizes = [
            ("phase", 6 if circus else 5),
            ("hand", n),
            ("bids", 4 * b),
            ("passes", 4 * (b + 1)),
            ("bidder", 4),
            ("contract", b),
            ("trump", L.n_contracts),
            ("leader", 4),
            ("trick", 4 * n),
            ("played", 4 * n),
            ("nest", n),
            ("discards", n),
            ("nest_counters", 1),
            ("counters", 2),
            ("tricks_won", 2),
            ("tricks_left", 1),
            ("scores", 2),
            ("dealer", 4),
        ]
        if circus:
            sizes += [("circus", 1), ("passed", n), ("received", n)]
        self._build_sections(sizes, SCORE_CLIP)  # the scores: clip(score / target_score, -4, 4)


def obs_layout(config: RookConfig) -> ObsLayout:
    """The (shared) observation layout of a configuration: cached per deck and bid levels, the
    only things it depends on, so environments that differ in other flags add nothing."""
    return _obs_layout(layout_for(config))


@lru_cache(maxsize=64)
def _obs_layout(layout: Layout) -> ObsLayout:
    return ObsLayout(layout)


DEFAULT_OBS_LAYOUT = obs_layout(RookConfig())
OBS_SIZE = DEFAULT_OBS_LAYOUT.size

# REL[me][seat] = (seat - me) % 4
REL = relative_seats(N_SEATS)
# REL_ONE_HOT[seat][me] = one-hot of REL[me][seat]: a (4, 4) block for a rel-seat section of all four rows.
REL_ONE_HOT = np.array(
    [[[1.0 if r == REL[me][seat] else 0.0 for r in range(N_SEATS)] for me in range(N_SEATS)] for seat in range(N_SEATS)],
    np.float32,
)


class ObservationEncoder:
    """Keeps the four seats' observation vectors of one :class:`RookState` up to date.

    ``rebuild()`` writes them from scratch; ``update(...)`` applies one action's effect
    incrementally (the hot path). Both give the same result: tests check it step by step.
    """

    def __init__(self, state: RookState) -> None:
        self.state = state
        self.ol = obs_layout(state.config)
        self.obs = np.zeros((N_SEATS, self.ol.size), np.float32)
        self.flat = self.obs.reshape(-1)  # a view: flat[seat * size + i]
        ol, n, D = self.ol, state.L.n_cards, self.ol.size
        # _play_offsets[seat]: flat offsets (add the card id) of "seat played it" in every row.
        self._play_offsets = tuple(
            tuple(o for me in range(N_SEATS) for o in (me * D + ol.TRICK + REL[me][seat] * n,
                                                       me * D + ol.PLAYED + REL[me][seat] * n))
            for seat in range(N_SEATS)
        )

    # ---------------------------------------------------------------- rebuild
    def rebuild(self) -> None:
        """Write all four vectors from the state (a fresh deal takes a fast path)."""
        st = self.state
        if st.phase == BID and not st.bid_history:
            self._fresh_deal()
        else:
            for seat in range(N_SEATS):
                encode(st, seat, self.obs[seat], self.ol)

    def _fresh_deal(self) -> None:
        # Right after a deal only the phase, own hand, scores, dealer and tricks left are set.
        st, ol, obs = self.state, self.ol, self.obs
        L = st.L
        obs.fill(0.0)
        obs[:, ol.PHASE + BID] = 1.0
        obs[:, ol.TRICKS_LEFT] = 1.0
        obs[:, ol.DEALER:ol.DEALER + 4] = REL_ONE_HOT[st.dealer]
        self._write_scores()
        n = L.n_cards
        for seat in range(N_SEATS):
            obs[seat, ol.HAND:ol.HAND + n] = unpack_mask(st.hands[seat], n)

    # ----------------------------------------------------------------- update
    def update(self, seat: int, action: int, phase: int, high_bid: int, deals: int) -> None:
        """Apply the effect of ``seat`` having played ``action`` in ``phase``.

        ``high_bid`` and ``deals`` are the state's values *before* the action; a new
        deal (a redeal, the next hand of a game) rebuilds.
        """
        st = self.state
        if st.deals != deals:
            self.rebuild()
            return
        ol, L, f, D = self.ol, st.L, self.flat, self.ol.size
        if phase == PLAY:
            # The card leaves the hand and joins the trick and the played record.
            f[seat * D + ol.HAND + action] = 0.0
            for off in self._play_offsets[seat]:
                f[off + action] = 1.0
            if not st.trick:  # the trick is complete: clear it, count it
                obs = self.obs
                obs[:, ol.TRICK:ol.TRICK + 4 * L.n_cards] = 0.0
                obs[:, ol.LEADER:ol.LEADER + 4] = REL_ONE_HOT[st.leader]
                self._write_totals()
                if st.phase == OVER:
                    self._write_phase(PLAY)
                    self._write_scores()
            return
        if phase == BID:
            if action == L.PASS:
                k = high_bid + 1
                base = ol.PASSES + k
                for me in range(N_SEATS):
                    f[me * D + base + REL[me][seat] * (L.n_bids + 1)] = 1.0
            else:
                lvl = action - L.BID0
                obs = self.obs
                obs[:, ol.BIDDER:ol.BIDDER + 4] = REL_ONE_HOT[seat]
                obs[:, ol.CONTRACT:ol.CONTRACT + L.n_bids] = 0.0
                obs[:, ol.CONTRACT + lvl] = 1.0
                for me in range(N_SEATS):
                    f[me * D + ol.BIDS + REL[me][seat] * L.n_bids + lvl] = 1.0
            if st.phase != BID:  # the auction ended: the bidder takes the nest
                b = st.bidder
                for c in bits(st.nest):
                    f[b * D + ol.HAND + c] = 1.0
                    f[b * D + ol.NEST + c] = 1.0
                self._write_phase(BID)
            return
        if phase == DISCARD:
            f[seat * D + ol.HAND + action] = 0.0
            f[seat * D + ol.DISCARDS + action] = 1.0
            if st.phase != DISCARD:
                if st.nest_has_counters:
                    self.obs[:, ol.NEST_COUNTERS] = 1.0
                self._after_setup_phase(DISCARD)
            return
        if phase == TRUMP:
            if action == L.CIRCUS:  # public; the same seat names no trump: its left does
                self.obs[:, ol.CIRCUS] = 1.0
                return
            self.obs[:, ol.TRUMP + st.call] = 1.0
            self._after_setup_phase(TRUMP)
            return
        # CIRCUS: the card is set aside; all four delivered at once after the last choice
        f[seat * D + ol.HAND + action] = 0.0
        f[seat * D + ol.PASSED + action] = 1.0
        if st.phase != CIRCUS:
            for giver, card in enumerate(st.passing):
                me = (giver + 1) % N_SEATS
                f[me * D + ol.HAND + card] = 1.0
                f[me * D + ol.RECEIVED + card] = 1.0
            self._after_setup_phase(CIRCUS)

    def _after_setup_phase(self, old: int) -> None:
        self._write_phase(old)
        st = self.state
        if st.phase == PLAY:
            self.obs[:, self.ol.LEADER:self.ol.LEADER + 4] = REL_ONE_HOT[st.leader]

    def _write_phase(self, old: int) -> None:
        obs, P = self.obs, self.ol.PHASE
        obs[:, P + old] = 0.0
        obs[:, P + self.state.phase] = 1.0

    def _write_scores(self) -> None:
        st, S = self.state, self.ol.SCORES
        s0, s1 = scaled_scores(st.scores, st.config.target_score)
        self.obs[0::2, S:S + 2] = (s0, s1)
        self.obs[1::2, S:S + 2] = (s1, s0)

    def _write_totals(self) -> None:
        # counters (2), tricks_won (2) and tricks_left (1) are adjacent: one write per team.
        st, C = self.state, self.ol.COUNTERS
        L = st.L
        tot, nt = float(L.total_points), float(L.n_tricks)
        p0, p1 = st.points[0] / tot, st.points[1] / tot
        w0, w1 = st.tricks_won[0] / nt, st.tricks_won[1] / nt
        left = (L.n_tricks - len(st.tricks)) / nt
        self.obs[0::2, C:C + 5] = (p0, p1, w0, w1, left)
        self.obs[1::2, C:C + 5] = (p1, p0, w1, w0, left)


def scaled_scores(scores: Sequence[int], target_score: int) -> tuple[float, float]:
    """The two score entries of the observation: ``clip(score / target_score, -SCORE_CLIP, SCORE_CLIP)``."""
    return (
        min(max(scores[0] / target_score, -SCORE_CLIP), SCORE_CLIP),
        min(max(scores[1] / target_score, -SCORE_CLIP), SCORE_CLIP),
    )


def encode(state: RookState, me: int, out: np.ndarray | None = None, ol: ObsLayout | None = None) -> np.ndarray:
    """Write seat ``me``'s observation of ``state`` from scratch (the reference encoder)."""
    ol = ol or obs_layout(state.config)
    if out is None:
        out = np.zeros(ol.size, np.float32)
    else:
        out[:] = 0.0
    L: Layout = state.L
    encode_common(state, me, out, ol, REL[me])
    if state.call >= 0:
        out[ol.TRUMP + state.call] = 1.0
    t = me & 1
    out[ol.COUNTERS] = state.points[t] / L.total_points
    out[ol.COUNTERS + 1] = state.points[1 - t] / L.total_points
    out[ol.TRICKS_WON] = state.tricks_won[t] / L.n_tricks
    out[ol.TRICKS_WON + 1] = state.tricks_won[1 - t] / L.n_tricks
    scaled = scaled_scores(state.scores, state.config.target_score)
    out[ol.SCORES] = scaled[t]
    out[ol.SCORES + 1] = scaled[1 - t]
    if state.circus:
        out[ol.CIRCUS] = 1.0
        passing = state.passing
        if passing and passing[me] >= 0:
            out[ol.PASSED + passing[me]] = 1.0
        if passing and min(passing) >= 0:  # all four chosen: delivered
            out[ol.RECEIVED + passing[(me - 1) % N_SEATS]] = 1.0
    return out


# ---------------------------------------------------------------------- decoding
@dataclass
class PlayerView:
    """What one seat knows, decoded from its observation. Seats are relative (0 = me,
    1 = left, 2 = partner, 3 = right); cards are card ids; bids are point values."""

    phase: str
    hand: list[int]
    bids: list[tuple[int, int]]  # (rel seat, bid value), in auction order
    passes: list[tuple[int, int | None]]  # (rel seat, high bid when passing or None)
    bidder: int | None
    contract: int | None
    trump: int | None
    leader: int | None
    trick: list[tuple[int, int]]  # (rel seat, card) in play order
    played: dict[int, int]  # card -> rel seat that played it (current trick included)
    nest: list[int]
    discards: list[int]
    nest_has_counters: bool
    counters: tuple[int, int]  # my team, their team
    tricks_won: tuple[int, int]
    tricks_left: int
    scores: tuple[int, int]
    dealer: int
    call: str | None = None  # the trump call once named: "green", or "green low", "no trump high" (extended)
    circus: bool = False  # circus was called (circus_rook)
    circus_passed: int | None = None  # circus: the card this seat passed to its left
    circus_received: int | None = None  # circus: the card it received from its right
    layout: Layout = field(repr=False, default=None)  # type: ignore[assignment]

    @property
    def passed(self) -> set[int]:
        return {s for s, _ in self.passes}

    def unseen(self) -> int:
        """Bitmask of cards this seat has not seen: not in hand, not played, not in its own nest/discards."""
        known = sum(1 << c for c in self.hand) | sum(1 << c for c in self.played)
        known |= sum(1 << c for c in self.nest) | sum(1 << c for c in self.discards)
        return self.layout.all_cards & ~known


def decode(vec: np.ndarray | Sequence[float], config: RookConfig | None = None) -> PlayerView:
    """Turn an observation vector (or the PettingZoo dict's ``"observation"``) into a :class:`PlayerView`."""
    config = config or RookConfig()
    L = layout_for(config)
    m = decode_masks(vec, config)
    return PlayerView(
        phase=PHASE_NAMES[m.phase],
        hand=bits(m.hand),
        bids=[(r, L.bids[lvl]) for r, lvl in m.bids],
        passes=[(r, None if lvl < 0 else L.bids[lvl]) for r, lvl in m.passed],
        bidder=None if m.bidder < 0 else m.bidder,
        contract=None if m.contract < 0 else L.bids[m.contract],
        trump=None if m.trump < 0 else m.trump,
        call=None if m.call < 0 else L.contract_name(m.call),
        circus=m.circus,
        circus_passed=None if m.circus_passed < 0 else m.circus_passed,
        circus_received=None if m.circus_received < 0 else m.circus_received,
        leader=None if m.leader < 0 else m.leader,
        trick=list(m.trick),
        played={c: r for r in range(N_SEATS) for c in bits(m.played[r])},
        nest=bits(m.nest),
        discards=bits(m.discards),
        nest_has_counters=m.nest_counters,
        counters=m.counters,
        tricks_won=m.tricks_won,
        tricks_left=m.tricks_left,
        scores=m.scores,
        dealer=m.dealer,
        layout=L,
    )


class MaskView:
    """One seat's observation as bitmasks and indices (seat-relative: 0 me, 1 left, 2 partner, 3 right).

    The fast form for agents (see :func:`decode_masks`); :class:`PlayerView` is the readable one.
    Bids and passes hold bid *level indices* (``-1``: none)."""

    __slots__ = (
        "phase", "hand", "bids", "passed", "bidder", "contract", "trump", "leader", "trick",
        "played", "played_all", "nest", "discards", "nest_counters", "counters", "tricks_won",
        "tricks_left", "scores", "dealer", "call", "circus", "circus_passed", "circus_received",
    )

    def __init__(self) -> None:
        self.phase = BID
        self.hand = 0
        self.bids: list[tuple[int, int]] = []  # (rel, level index) in auction order
        self.passed: list[tuple[int, int]] = []  # (rel, high level index when passing, -1 = none)
        self.bidder = -1
        self.call = -1  # level index
        self.trump = -1  # trump colour (-1: none yet, or no trump)
        self.call = -1  # contract index (-1: none yet)
        self.circus = False
        self.circus_passed = -1  # card ids (-1: none)
        self.circus_received = -1
        self.leader = -1
        self.trick: list[tuple[int, int]] = []  # (rel, card) in play order
        self.played = [0, 0, 0, 0]  # card masks by rel seat
        self.played_all = 0
        self.nest = 0
        self.discards = 0
        self.nest_counters = False
        self.counters = (0, 0)
        self.tricks_won = (0, 0)
        self.tricks_left = 0
        self.scores = (0, 0)
        self.dealer = 0


def decode_masks(vec: Any, config: RookConfig) -> MaskView:
    """Parse an observation vector into a :class:`MaskView`: one pass over its non-zero entries."""
    ol = obs_layout(config)
    L = ol.L
    n, nb = L.n_cards, L.n_bids
    v = np.asarray(vec)
    if v.shape != (ol.size,):
        raise ValueError(f"observation has shape {v.shape}, expected ({ol.size},) for this configuration")
    idx = np.flatnonzero(v > 0.5).tolist()
    out = MaskView()
    b = ol.bounds
    pos = [bisect_left(idx, x) for x in b]
    # phase
    seg = idx[pos[0]:pos[1]]
    out.phase = seg[0] - ol.PHASE if seg else BID
    hand = 0
    for i in idx[pos[1]:pos[2]]:
        hand |= 1 << (i - ol.HAND)
    out.hand = hand
    bids = [((i - ol.BIDS) // nb, (i - ol.BIDS) % nb) for i in idx[pos[2]:pos[3]]]
    bids.sort(key=lambda x: x[1])
    out.bids = bids
    out.passed = [((i - ol.PASSES) // (nb + 1), (i - ol.PASSES) % (nb + 1) - 1) for i in idx[pos[3]:pos[4]]]
    seg = idx[pos[4]:pos[5]]
    out.bidder = seg[0] - ol.BIDDER if seg else -1
    seg = idx[pos[5]:pos[6]]
    out.contract = seg[0] - ol.CONTRACT if seg else -1
    seg = idx[pos[6]:pos[7]]
    out.call = seg[0] - ol.TRUMP if seg else -1
    out.trump = contract_trump(out.call) if seg else -1
    seg = idx[pos[7]:pos[8]]
    out.leader = seg[0] - ol.LEADER if seg else -1
    tc = {}
    for i in idx[pos[8]:pos[9]]:
        j = i - ol.TRICK
        tc[j // n] = j % n
    if tc and out.leader >= 0:
        out.trick = [((out.leader + k) & 3, tc[(out.leader + k) & 3]) for k in range(4) if (out.leader + k) & 3 in tc]
    played = [0, 0, 0, 0]
    for i in idx[pos[9]:pos[10]]:
        j = i - ol.PLAYED
        played[j // n] |= 1 << (j % n)
    out.played = played
    out.played_all = played[0] | played[1] | played[2] | played[3]
    m = 0
    for i in idx[pos[10]:pos[11]]:
        m |= 1 << (i - ol.NEST)
    out.nest = m
    m = 0
    for i in idx[pos[11]:pos[12]]:
        m |= 1 << (i - ol.DISCARDS)
    out.discards = m
    out.nest_counters = pos[13] > pos[12]
    seg = idx[pos[17]:]
    out.dealer = seg[0] - ol.DEALER if seg else 0
    if len(b) > 18:  # circus_rook: circus, passed, received
        out.circus = pos[19] > pos[18]
        seg = idx[pos[19]:pos[20]]
        out.circus_passed = seg[0] - ol.PASSED if seg else -1
        seg = idx[pos[20]:]
        out.circus_received = seg[0] - ol.RECEIVED if seg else -1
    tot, nt = L.total_points, L.n_tricks
    out.counters = (round(float(v[ol.COUNTERS]) * tot), round(float(v[ol.COUNTERS + 1]) * tot))
    out.tricks_won = (round(float(v[ol.TRICKS_WON]) * nt), round(float(v[ol.TRICKS_WON + 1]) * nt))
    out.tricks_left = round(float(v[ol.TRICKS_LEFT]) * nt)
    ts = config.target_score
    out.scores = (round(float(v[ol.SCORES]) * ts), round(float(v[ol.SCORES + 1]) * ts))
    return out

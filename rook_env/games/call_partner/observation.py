"""Seat-relative observations of call-your-partner Rook: layout, encoder and decoder.

Every seat position is relative to the observer: ``rel = (seat - me) % n`` (0 = me, 1 = my
left, ..., n - 1 = my right), so one policy can play every seat. Values are 0/1 except the
scaled numbers noted. Default layout (5 players, full deck: n = 5 seats, N = 57 cards,
B = 21 bid levels), 1084 floats::

    name            size              meaning
    phase           7                 one-hot: bid, discard, trump, rook, call, play, over
    hand            N     = 57        cards I hold (the bidder's hand with the nest while discarding)
    bids            n*B   = 105       [rel][level] = 1: that seat made that bid
    passes          n*(B+1) = 110     [rel][k]: that seat passed when the high bid was level k-1 (k=0: none)
    bidder          n     = 5         rel seat of the (current) high bidder
    contract        B     = 21        level of the (current) high bid
    trump           4                 trump colour, once named
    rook            2                 Rook high / Rook low, once chosen
    called          N     = 57        the called card(s), once called (public)
    partners        n     = 5         [rel] = 1: that seat is known *to me* to be the bidder's partner:
                                      rel 0 from the call if I hold a called card; any seat once it
                                      has played a called card (RULES.md C6.4, C11)
    nest_counters   1                 the table was told that the new nest holds counters
    leader          n     = 5         rel seat that led the current trick
    trick           n*N   = 285       [rel][card]: cards in the current trick, by who played them
    played          n*N   = 285       [rel][card]: every card played this hand, by who played it
    nest            N     = 57        the nest as picked up (bidder only; zeros for others)
    discards        N     = 57        the bidder's discards, the new nest (bidder only)
    points          n     = 5         points taken per rel seat (/ 200; the last trick's nest and 20 included)
    tricks_won      n     = 5         tricks taken per rel seat (/ tricks per hand)
    tricks_left     1                 tricks still to play (/ tricks per hand)
    scores          n     = 5         game scores per rel seat (/ target_score; may be < 0 or > 1)
    dealer          n     = 5         rel seat of the dealer
    -----------------------------------------------------------------------------
    7+57+105+110+5+21+4+2+57+5+1+5+285+285+57+57+5+5+1+5+5 = 1084 (5 players, full deck)

The exact size of a configuration is ``obs_layout(config).size``; ``obs_layout(config).table()``
lists every section as ``(name, start, stop, size)``. :func:`encode` writes one seat's vector
from the state (direct encoding: it reads only the public record, the seat's own hand and, for
the bidder, its nest and discards); :func:`decode` turns a vector back into a readable
:class:`CallPartnerView`.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Sequence

import numpy as np

from rook_env.core.observation import SectionLayout, encode_common
from .config import CallPartnerConfig
from .layout import ROOK_CHOICES, CallPartnerLayout, layout_for
from .rules import BID, N_PHASES, PHASE_NAMES, CallPartnerState

N_COLOURS = 4


class CallPartnerObsLayout(SectionLayout):
    """Offsets of every observation section for one configuration."""

    def __init__(self, config: CallPartnerConfig) -> None:
        L = layout_for(config)
        n, N, B = config.players, L.n_cards, L.n_bids
        self.L = L
        self.config = config
        self.n = n
        sizes = [
            ("phase", N_PHASES), ("hand", N), ("bids", n * B), ("passes", n * (B + 1)), ("bidder", n),
            ("contract", B), ("trump", N_COLOURS), ("rook", len(ROOK_CHOICES)), ("called", N), ("partners", n),
            ("nest_counters", 1), ("leader", n), ("trick", n * N), ("played", n * N), ("nest", N),
            ("discards", N), ("points", n), ("tricks_won", n), ("tricks_left", 1), ("scores", n), ("dealer", n),
        ]
        self._build_sections(sizes, np.inf)  # the scores: score / target_score, unbounded


@lru_cache(maxsize=None)
def obs_layout(config: CallPartnerConfig) -> CallPartnerObsLayout:
    return CallPartnerObsLayout(config)


def known_partners(state: CallPartnerState, me: int) -> list[int]:
    """Seats that seat ``me`` knows to be the bidder's partners (RULES.md C11.3): itself from the
    call when it holds a called card, and every seat that has played a called card."""
    seats = set()
    for c in state.called:
        if state.played >> c & 1:
            seats.add(state.played_by[c])
        elif state.hands[me] >> c & 1:
            seats.add(me)
    return sorted(seats)


def encode(state: CallPartnerState, me: int, out: np.ndarray | None = None,
           ol: CallPartnerObsLayout | None = None) -> np.ndarray:
    """Write seat ``me``'s observation of ``state`` (see the module docstring for the layout)."""
    ol = ol or obs_layout(state.config)
    if out is None:
        out = np.zeros(ol.size, np.float32)
    else:
        out[:] = 0.0
    L: CallPartnerLayout = state.L
    n = state.n
    rel = [(s - me) % n for s in range(n)]
    encode_common(state, me, out, ol, rel)
    if state.trump >= 0:
        out[ol.TRUMP + state.trump] = 1.0
    if state.rook_high >= 0:
        out[ol.ROOK + (0 if state.rook_high else 1)] = 1.0
    for c in state.called:
        out[ol.CALLED + c] = 1.0
    for s in known_partners(state, me):
        out[ol.PARTNERS + rel[s]] = 1.0
    target = state.config.target_score
    for s in range(n):
        r = rel[s]
        out[ol.POINTS + r] = state.points[s] / L.total_points
        out[ol.TRICKS_WON + r] = state.tricks_won[s] / L.n_tricks
        out[ol.SCORES + r] = state.scores[s] / target
    return out


# ---------------------------------------------------------------------- decoding
@dataclass
class CallPartnerView:
    """What one seat knows, decoded from its observation. Seats are relative (0 = me, 1 = my
    left, ..., n - 1 = my right); cards are card ids; bids are point values."""

    players: int
    phase: str
    hand: list[int]
    bids: list[tuple[int, int]]  # (rel seat, bid value), in auction order
    passes: list[tuple[int, int | None]]  # (rel seat, high bid when passing or None)
    bidder: int | None
    contract: int | None
    trump: int | None
    rook: str | None  # "high", "low" or None
    called: list[int]
    known_partners: list[int]  # rel seats known to this seat as the bidder's partners
    nest_has_counters: bool
    leader: int | None
    trick: list[tuple[int, int]]  # (rel seat, card) in play order
    played: dict[int, int]  # card -> rel seat that played it (the current trick included)
    nest: list[int]
    discards: list[int]
    points: list[int]  # per rel seat
    tricks_won: list[int]
    tricks_left: int
    scores: list[int]
    dealer: int
    layout: CallPartnerLayout = field(repr=False, default=None)  # type: ignore[assignment]

    @property
    def i_am_partner(self) -> bool:
        """This seat holds (or held) a called card: it plays on the bidder's side."""
        return 0 in self.known_partners

    def unseen(self) -> int:
        """Bitmask of the cards this seat has not seen (not in hand, not played, not in its nest/discards)."""
        known = 0
        for c in [*self.hand, *self.played, *self.nest, *self.discards]:
            known |= 1 << c
        return self.layout.all_cards & ~known

    def text(self) -> str:
        """A short readable summary."""
        L = self.layout
        names = lambda cs: " ".join(L.card_name(c) for c in cs) or "-"  # noqa: E731
        lines = [
            f"phase: {self.phase}   dealer: rel {self.dealer}",
            f"hand: {names(self.hand)}",
            f"bids: {', '.join(f'rel {r} {v}' for r, v in self.bids) or '-'}",
        ]
        if self.bidder is not None:
            lines.append(f"contract: rel {self.bidder} {self.contract}")
        if self.trump is not None:
            lines.append(f"trump: {('red', 'yellow', 'green', 'black')[self.trump]}  rook: {self.rook or '-'}")
        if self.called:
            lines.append(f"called: {names(self.called)}   known partners: {self.known_partners or '-'}")
        if self.nest or self.discards:
            lines.append(f"nest: {names(self.nest)}   discards: {names(self.discards)}")
        if self.nest_has_counters:
            lines.append("announced: the nest holds counters")
        if self.trick:
            lines.append("trick: " + " ".join(f"rel{r}:{L.card_name(c)}" for r, c in self.trick))
        lines.append(f"points: {self.points}   tricks: {self.tricks_won}   scores: {self.scores}")
        return "\n".join(lines)


def decode(vec: np.ndarray | Sequence[float], config: CallPartnerConfig | None = None) -> CallPartnerView:
    """Turn an observation vector (or the PettingZoo dict's ``"observation"``) into a :class:`CallPartnerView`."""
    config = config or CallPartnerConfig()
    ol = obs_layout(config)
    L, n, N, B = ol.L, ol.n, ol.L.n_cards, ol.L.n_bids
    v = np.asarray(vec, dtype=np.float64)
    if v.shape != (ol.size,):
        raise ValueError(f"observation has shape {v.shape}, expected ({ol.size},) for this configuration")

    # One pass over the non-zero entries, split by section (a bisection of the section starts): the heuristic
    # decodes every observation it acts on, so this is on the hot path of evaluations and play-outs.
    idx = np.flatnonzero(v > 0.5).tolist()

    def on(name: str) -> list[int]:
        sl = ol.slices[name]
        a = bisect_left(idx, sl.start)
        return [i - sl.start for i in idx[a:bisect_left(idx, sl.stop, a)]]

    def first(name: str) -> int | None:
        idx = on(name)
        return idx[0] if idx else None

    bids = sorted(((i // B, i % B) for i in on("bids")), key=lambda x: x[1])
    passes = [(i // (B + 1), i % (B + 1) - 1) for i in on("passes")]
    contract = first("contract")
    leader = first("leader")
    by_rel = {i // N: i % N for i in on("trick")}
    trick = []
    if leader is not None:
        trick = [((leader + k) % n, by_rel[(leader + k) % n]) for k in range(n) if (leader + k) % n in by_rel]
    rook = first("rook")
    scale = lambda name, k: [round(float(x) * k) for x in v[ol.slices[name]]]  # noqa: E731
    phase = first("phase")
    return CallPartnerView(
        players=n,
        phase=PHASE_NAMES[phase if phase is not None else BID],
        hand=on("hand"),
        bids=[(r, L.bids[lvl]) for r, lvl in bids],
        passes=[(r, None if lvl < 0 else L.bids[lvl]) for r, lvl in passes],
        bidder=first("bidder"),
        contract=None if contract is None else L.bids[contract],
        trump=first("trump"),
        rook=None if rook is None else ROOK_CHOICES[rook],
        called=on("called"),
        known_partners=on("partners"),
        nest_has_counters=bool(v[ol.NEST_COUNTERS] > 0.5),
        leader=leader,
        trick=trick,
        played={i % N: i // N for i in on("played")},
        nest=on("nest"),
        discards=on("discards"),
        points=scale("points", L.total_points),
        tricks_won=scale("tricks_won", L.n_tricks),
        tricks_left=round(float(v[ol.TRICKS_LEFT]) * L.n_tricks),
        scores=scale("scores", config.target_score),
        dealer=first("dealer") or 0,
        layout=L,
    )

"""Observation pieces every game shares: the action mask as a vector, seat-relative positions, and
the sections of the public record every game's observation has (:func:`encode_common`).

An observation layout names its sections by offset (``ol.PHASE``, ``ol.HAND``, ...); the sections
below have the same meaning in every game (RULES.md R10, C11): what a seat may know and nothing more.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .deck import bits

__all__ = ["SectionLayout", "encode_common", "relative_seats", "unpack_mask"]


class SectionLayout:
    """Offsets of an observation's sections, in order: ``ol.HAND`` is where section ``hand`` starts
    (the size of the whole vector is the sum of the sections' sizes, ``ol.size``)."""

    def _build_sections(self, sizes: Sequence[tuple[str, int]], score_bound: float) -> None:
        self.sections: list[tuple[str, int, int]] = []
        start = 0
        for name, size in sizes:
            self.sections.append((name, start, start + size))
            setattr(self, name.upper(), start)
            start += size
        self.size = start
        self.slices = {name: slice(a, z) for name, a, z in self.sections}
        # Section starts in layout order (for a bisection of the non-zero entries).
        self.bounds = tuple(a for _, a, _ in self.sections)
        # Box bounds: [0, 1] everywhere but the scores, [-score_bound, score_bound].
        self.low = np.zeros(self.size, np.float32)
        self.high = np.ones(self.size, np.float32)
        self.low[self.slices["scores"]] = -score_bound
        self.high[self.slices["scores"]] = score_bound

    def table(self) -> list[tuple[str, int, int, int]]:
        """(name, start, stop, size) for every section."""
        return [(name, a, z, z - a) for name, a, z in self.sections]


def unpack_mask(mask: int, n: int) -> np.ndarray:
    """Bitmask -> fresh int8 0/1 array of length ``n`` (bit i -> element i)."""
    raw = np.frombuffer(mask.to_bytes((n + 7) // 8, "little"), np.uint8)
    return np.unpackbits(raw, count=n, bitorder="little").view(np.int8)


def relative_seats(n: int) -> tuple[tuple[int, ...], ...]:
    """``REL[me][seat]``: where ``seat`` sits as seen from ``me`` (0 = me, 1 = my left, ...)."""
    return tuple(tuple((s - me) % n for s in range(n)) for me in range(n))


def encode_common(state: Any, me: int, out: np.ndarray, ol: Any, rel: Sequence[int]) -> None:
    """Write the sections every game shares into ``out`` (zeroed): the phase, the own hand, every
    pass and bid by relative seat, the bidder and contract, the leader, the trick in progress and
    every card played by relative seat, the nest and discards (to the bidder only, after the
    auction), the nest announcement, the tricks left and the dealer. ``rel[seat]``: where ``seat``
    sits seen from ``me``."""
    L = state.L
    N, B, n = L.n_cards, L.n_bids, state.n
    out[ol.PHASE + state.phase] = 1.0
    for c in bits(state.hands[me]):
        out[ol.HAND + c] = 1.0
    high = -1
    for seat, a in state.bid_history:
        if a == L.PASS:
            out[ol.PASSES + rel[seat] * (B + 1) + high + 1] = 1.0
        elif a != L.REDEAL:
            high = a - L.BID0
            out[ol.BIDS + rel[seat] * B + high] = 1.0
    if state.bidder >= 0:
        out[ol.BIDDER + rel[state.bidder]] = 1.0
        out[ol.CONTRACT + state.high_bid] = 1.0
    if state.leader >= 0:
        out[ol.LEADER + rel[state.leader]] = 1.0
    for i, c in enumerate(state.trick):
        out[ol.TRICK + rel[(state.leader + i) % n] * N + c] = 1.0
    for c in bits(state.played):
        out[ol.PLAYED + rel[state.played_by[c]] * N + c] = 1.0
    if me == state.bidder and state.phase != state.BID:  # only the bidder saw the nest (R10.3, C11.2)
        for c in bits(state.nest):
            out[ol.NEST + c] = 1.0
        for c in bits(state.discards):
            out[ol.DISCARDS + c] = 1.0
    if state.nest_has_counters:
        out[ol.NEST_COUNTERS] = 1.0
    out[ol.TRICKS_LEFT] = (L.n_tricks - len(state.tricks)) / L.n_tricks
    out[ol.DEALER + rel[state.dealer]] = 1.0

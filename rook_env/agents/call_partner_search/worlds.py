"""Uniform deals of the cards a call-your-partner seat cannot see, fast at tables of up to six hands and a nest.

:class:`Deals` is the independent player's exact sampler (:class:`rook_env.agents.independent.sampler.DealSampler`:
cards grouped by the holders allowed to take them, the deals of every split counted by a dynamic programme) with
two changes for six holders: a split of a group is enumerated only where the later holders have room for the rest
(the last group, the cards every holder may take, then has one split instead of thousands), and the nest's need for
a counter is met by drawing again (a deal drawn uniformly under the other constraints is kept when the nest holds a
counter: uniform among the deals that meet every constraint), with the exact count of the need as the fallback after
:data:`REDRAWS` misses.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from rook_env.core.deck import bits

from ..independent.sampler import DealSampler, Holder

__all__ = ["Deals", "QUICK", "REDRAWS"]

QUICK = 64  # draws by rejection per deal before the exact count takes over
REDRAWS = 200  # draws without a counter in the nest before the exact count of the need takes over


class Deals:
    """Uniform deals of ``unseen`` among ``holders`` (:class:`~rook_env.agents.independent.sampler.Holder`; at most
    one needs a counter, from ``counters``). ValueError when the sizes do not add up or no deal fits.

    A deal is first drawn by rejection (the cards only one holder may take placed, the rest shuffled into the room
    left, kept when every constraint holds: :data:`QUICK` tries); after misses, by the exact count, where holders
    under the same constraints are merged into one (their cards are split between them by a shuffle afterwards:
    uniform, as they are interchangeable) and the counter need is met by drawing again (:data:`REDRAWS`) before
    it is counted too. Each way draws uniformly among the deals that fit, so their mixture does."""

    def __init__(self, unseen: int, holders: Sequence[Holder], counters: int = 0) -> None:
        self.holders = list(holders)
        sizes = [h.size for h in self.holders]
        if any(s < 0 for s in sizes) or sum(sizes) != unseen.bit_count():
            raise ValueError(f"holder sizes {tuple(sizes)} do not add up to the {unseen.bit_count()} unseen cards")
        self.counters = counters
        self.unseen = unseen
        self.need = next((i for i, h in enumerate(self.holders) if h.needs_counter), -1)
        # the quick draw: forced cards placed, the room left per holder, the free cards
        self._forced = [0] * len(self.holders)
        free = []
        for c in bits(unseen):
            allowed = [i for i, h in enumerate(self.holders) if not h.forbidden >> c & 1]
            if not allowed:
                raise ValueError(f"no holder may take card {c}")
            if len(allowed) == 1:
                self._forced[allowed[0]] |= 1 << c
            else:
                free.append(c)
        self._free_cards = free
        self._room = [h.size - f.bit_count() for h, f in zip(self.holders, self._forced)]
        if any(r < 0 for r in self._room):
            raise ValueError("no deal of the unseen cards fits what the seat knows")
        self._groups: list[list[int]] | None = None  # merged holders (built on the first miss)
        self._plain: DealSampler | None = None
        self._exact: DealSampler | None = None

    def _quick(self, rng: random.Random) -> list[int] | None:
        deck = list(self._free_cards)
        rng.shuffle(deck)
        out = list(self._forced)
        pos = 0
        for i, h in enumerate(self.holders):
            room = self._room[i]
            m = 0
            for c in deck[pos:pos + room]:
                m |= 1 << c
            if m & h.forbidden:
                return None
            out[i] |= m
            pos += room
        if self.need >= 0 and not out[self.need] & self.counters:
            return None
        return out

    def _build(self) -> None:
        keys: dict[tuple[int, bool], list[int]] = {}
        for i, h in enumerate(self.holders):
            keys.setdefault((h.forbidden, h.needs_counter), []).append(i)
        self._groups = list(keys.values())
        merged = [Holder(sum(self.holders[i].size for i in g), self.holders[g[0]].forbidden) for g in self._groups]
        self._plain = DealSampler(self.unseen, merged)  # ValueError when no deal fits even without the need
        if self.need >= 0:
            self._need_group = next(j for j, g in enumerate(self._groups) if self.need in g)

    def _split(self, merged: list[int], rng: random.Random) -> list[int]:
        out = [0] * len(self.holders)
        for g, mask in zip(self._groups, merged):
            if len(g) == 1:
                out[g[0]] = mask
                continue
            cards = bits(mask)
            rng.shuffle(cards)
            pos = 0
            for i in g:
                for c in cards[pos:pos + self.holders[i].size]:
                    out[i] |= 1 << c
                pos += self.holders[i].size
        return out

    def sample(self, rng: random.Random) -> list[int]:
        """One deal drawn uniformly: the card mask of each holder, in ``holders`` order."""
        for _ in range(QUICK):
            deal = self._quick(rng)
            if deal is not None:
                return deal
        if self._groups is None:
            self._build()
        if self.need < 0:
            return self._split(self._plain.sample(rng), rng)
        if self._exact is None:
            for _ in range(REDRAWS):
                merged = self._plain.sample(rng)
                if merged[self._need_group] & self.counters:
                    return self._split(merged, rng)
            merged_holders = [Holder(sum(self.holders[i].size for i in g), self.holders[g[0]].forbidden,
                                     needs_counter=self.need in g) for g in self._groups]
            self._exact = DealSampler(self.unseen, merged_holders, self.counters)
        return self._split(self._exact.sample(rng), rng)

"""Uniform deals of the cards a seat cannot see, under hard constraints (the independent player's own sampler).

A *holder* is a place unseen cards lie in (another seat's hand, or the nest) with a fixed number of cards, a set
of cards it cannot hold (a seat that failed to follow a suit holds none of it) and, for the nest under the
German discard rule, whether it must hold a counter. :class:`DealSampler` draws deals uniformly among all deals
that fit, exactly (no rejection): the cards are grouped by the set of holders allowed to take them, the number
of fitting deals of every split of a group between holders is counted by a dynamic programme (a product of
multinomials), and a deal draws each group's split in proportion to its count, then shuffles the group's cards
into it.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from math import comb

from rook_env.games.partnership.cards import bits

__all__ = ["DealSampler", "Holder"]


class Holder:
    """A place for unseen cards: ``size`` of them, none of ``forbidden``, and a counter when ``needs_counter``."""

    __slots__ = ("forbidden", "needs_counter", "size")

    def __init__(self, size: int, forbidden: int = 0, needs_counter: bool = False) -> None:
        self.size = size
        self.forbidden = forbidden
        self.needs_counter = needs_counter

    def __repr__(self) -> str:
        return f"Holder(size={self.size}, forbidden={self.forbidden:#x}, needs_counter={self.needs_counter})"


class DealSampler:
    """Uniform sampler of the deals of ``unseen`` among ``holders`` (see the module docstring); ``counters``: the
    counter cards (read only when a holder needs one). ValueError when the sizes do not add up to the unseen
    cards or no deal fits."""

    def __init__(self, unseen: int, holders: Sequence[Holder], counters: int = 0) -> None:
        self.holders = list(holders)
        sizes = tuple(h.size for h in self.holders)
        if any(s < 0 for s in sizes) or sum(sizes) != unseen.bit_count():
            raise ValueError(f"holder sizes {sizes} do not add up to the {unseen.bit_count()} unseen cards")
        needs = [i for i, h in enumerate(self.holders) if h.needs_counter]
        if len(needs) > 1:
            raise ValueError("at most one holder may need a counter")
        self.need = needs[0] if needs else -1
        groups: dict[tuple[int, bool], list[int]] = {}
        for c in bits(unseen):
            allowed = sum(1 << i for i, h in enumerate(self.holders) if not h.forbidden >> c & 1)
            if not allowed:
                raise ValueError(f"no holder may take card {c}")
            groups.setdefault((allowed, self.need >= 0 and bool(counters >> c & 1)), []).append(c)
        self.groups = [(allowed, counter, cards) for (allowed, counter), cards in sorted(groups.items())]
        self._table: dict[tuple[int, tuple[int, ...], bool], tuple[list[int], list[tuple[int, ...]]]] = {}
        self.total = self._count(0, sizes, self.need < 0)
        if not self.total:
            raise ValueError("no deal of the unseen cards fits what the seat knows")

    def _splits(self, allowed: int, n: int, caps: tuple[int, ...]) -> list[tuple[int, ...]]:
        """Every way to put ``n`` cards into the allowed holders within their capacities ``caps`` (a holder takes no
        fewer than the holders after it cannot hold: a branch with no split at its end is never entered)."""
        idx = [i for i in range(len(caps)) if allowed >> i & 1]
        room = [0] * (len(idx) + 1)  # room[j]: the capacity of the allowed holders from the j-th on
        for j in range(len(idx) - 1, -1, -1):
            room[j] = room[j + 1] + caps[idx[j]]
        out: list[tuple[int, ...]] = []
        if n > room[0]:
            return out
        split = [0] * len(caps)

        def fill(j: int, left: int) -> None:
            i = idx[j]
            if j == len(idx) - 1:
                if left <= caps[i]:
                    split[i] = left
                    out.append(tuple(split))
                    split[i] = 0
                return
            for x in range(max(0, left - room[j + 1]), min(left, caps[i]) + 1):
                split[i] = x
                fill(j + 1, left - x)
            split[i] = 0

        fill(0, n)
        return out

    def _count(self, g: int, caps: tuple[int, ...], got: bool) -> int:
        """The number of deals of groups ``g``.. into capacities ``caps`` (``got``: the counter need is met);
        files each split's cumulative count for :meth:`sample`."""
        if g == len(self.groups):
            return int(got and not any(caps))
        key = (g, caps, got)
        if key in self._table:
            weights = self._table[key][0]
            return weights[-1] if weights else 0
        allowed, counter, cards = self.groups[g]
        n = len(cards)
        weights: list[int] = []
        splits: list[tuple[int, ...]] = []
        total = 0
        for split in self._splits(allowed, n, caps):
            ways, left = 1, n
            for x in split:  # the multinomial n! / prod(x!)
                ways *= comb(left, x)
                left -= x
            rest = self._count(g + 1, tuple(c - x for c, x in zip(caps, split)),
                               got or (counter and split[self.need] > 0))
            if rest:
                total += ways * rest
                weights.append(total)
                splits.append(split)
        self._table[key] = (weights, splits)
        return total

    def sample(self, rng: random.Random) -> list[int]:
        """One deal drawn uniformly: the card mask of each holder, in ``holders`` order."""
        caps = tuple(h.size for h in self.holders)
        got = self.need < 0
        out = [0] * len(self.holders)
        for g, (_, counter, cards) in enumerate(self.groups):
            weights, splits = self._table[(g, caps, got)]
            pick = rng.randrange(weights[-1])
            lo, hi = 0, len(weights) - 1
            while lo < hi:  # the first cumulative count above pick
                mid = (lo + hi) // 2
                if weights[mid] > pick:
                    hi = mid
                else:
                    lo = mid + 1
            split = splits[lo]
            deck = list(cards)
            rng.shuffle(deck)
            pos = 0
            for i, x in enumerate(split):
                for c in deck[pos:pos + x]:
                    out[i] |= 1 << c
                pos += x
            got = got or (counter and split[self.need] > 0)
            caps = tuple(c - x for c, x in zip(caps, split))
        return out

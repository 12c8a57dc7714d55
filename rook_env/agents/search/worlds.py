"""Sampled worlds for the search agent: deals of the unseen cards consistent with what a seat knows.

During card play a seat knows its hand, every card played and by whom, the trump, the contract,
and (as bidder) the nest it picked up and the five cards it laid down. It also knows, from its
own memory of the hand (:func:`rook_env.agents.heuristic.play.known_voids`), which seats failed
to follow suit. Every other card is *unseen*; it lies in one of the other hands or, for a seat
that is not the bidder, in the nest (the bidder's discards). A *world* gives every unseen card a
holder such that

* every holder gets exactly the number of cards it holds (others' hand sizes follow from the
  tricks played and the current trick; the nest holds 5);
* a seat known to be void in an effective suit gets none of its cards;
* with ``nest_discard="no_counters_unless_forced"``: the nest holds a counter exactly when that
  was announced, and a bidder who laid a counter down holds nothing but counters and trumps
  (it may discard a counter only when every other card left is a counter or a trump, and only
  discards came out of its hand since).

:class:`WorldSampler` draws such worlds *uniformly* among all consistent ones (exactly, not by
rejection): unseen cards are grouped by the set of holders that may take them, a dynamic
programme counts the completions of every split of a group between holders (the number of
deals with given counts is a product of multinomials), and a world draws each group's split
with probability proportional to its completions, then deals each group's cards at random.
Bidding signals are not used (they are soft evidence, not constraints).

:func:`world_template` and :func:`make_world` turn a seat's view and a sampled deal into a
:class:`rook_env.games.partnership.rules.RookState` in card play, seats relative to the searching seat (it is
seat 0, so its team is team 0), configured to end with the hand (``episode="hand"``).
"""

from __future__ import annotations

import random
from dataclasses import replace
from functools import lru_cache
from math import factorial
from typing import Sequence

from rook_env.games.partnership.cards import N_SEATS, bits
from rook_env.games.partnership.config import RookConfig
from rook_env.games.partnership.rules import PLAY, RookState

from ..heuristic.tables import CardTables, SeatView

__all__ = ["NEST", "Holder", "WorldSampler", "fork", "holders_for", "make_world", "world_template"]

NEST = 4  # holder id of the nest (the discards) in a sampled deal; seats are 1..3 (relative)
_FACT = [factorial(i) for i in range(64)]


class Holder:
    """Where unseen cards may go: a relative seat (1..3) or :data:`NEST`, how many it takes,
    the cards it cannot hold, and (nest only) whether it must hold at least one counter."""

    __slots__ = ("who", "size", "forbidden", "needs_counter")

    def __init__(self, who: int, size: int, forbidden: int = 0, needs_counter: bool = False) -> None:
        self.who = who
        self.size = size
        self.forbidden = forbidden
        self.needs_counter = needs_counter

    def __repr__(self) -> str:
        return f"Holder(who={self.who}, size={self.size}, forbidden={self.forbidden:#x}, needs_counter={self.needs_counter})"


def holders_for(tab: CardTables, view: SeatView, voids: Sequence[int]) -> tuple[int, list[Holder]]:
    """The unseen cards of a seat in card play and their possible holders (see the module docstring).

    ``voids``: effective-suit bits by relative seat (from ``known_voids``). Returns ``(unseen, holders)``.
    """
    trump = view.trump
    suit = tab.suit[trump]
    i_bid = view.bidder == 0
    known = view.hand | view.played_all | (view.nest | view.discards if i_bid else 0)
    unseen = tab.all_cards & ~known
    tricks_left = view.tricks_left
    in_trick = {r for r, _ in view.trick}
    forced_rule = tab.config.nest_discard == "no_counters_unless_forced"
    holders = []
    for r in (1, 2, 3):
        forbidden = 0
        for s in range(4):
            if voids[r] >> s & 1:
                forbidden |= suit[s]
        if forced_rule and view.nest_counters and view.bidder == r:
            # it laid a counter down: only counters and trumps were left in its hand then
            forbidden |= tab.all_cards & ~tab.counter_mask & ~tab.colour_mask[trump]
        holders.append(Holder(r, tricks_left - (r in in_trick), forbidden & unseen))
    nest_size = tab.layout.nest_size  # 5, 4 without the Rook Bird, 0 without a nest
    if not i_bid and nest_size:
        forbidden, needs = 0, False
        if forced_rule:
            if view.nest_counters:
                needs = True
            else:
                forbidden = tab.counter_mask & unseen
        holders.append(Holder(NEST, nest_size, forbidden, needs))
    return unseen, holders


class WorldSampler:
    """Uniform sampler of the deals of ``unseen`` among ``holders`` (exact; see the module docstring).

    ``counter_mask``: the counters (used only when a holder ``needs_counter``). Raises ``ValueError``
    when the sizes do not add up or no deal satisfies the constraints.
    """

    def __init__(self, unseen: int, holders: Sequence[Holder], counter_mask: int = 0) -> None:
        self.holders = list(holders)
        n_h = len(self.holders)
        sizes = tuple(h.size for h in self.holders)
        if any(s < 0 for s in sizes) or sum(sizes) != unseen.bit_count():
            raise ValueError(f"holder sizes {sizes} do not add up to the {unseen.bit_count()} unseen cards")
        self.need = -1  # index of the holder that needs a counter (-1: none)
        for i, h in enumerate(self.holders):
            if h.needs_counter:
                self.need = i
        # group the cards by the holders allowed to take them (and, where it matters, by counter-ness)
        groups: dict[tuple[int, bool], list[int]] = {}
        for c in bits(unseen):
            allowed = 0
            for i, h in enumerate(self.holders):
                if not h.forbidden >> c & 1:
                    allowed |= 1 << i
            key = (allowed, self.need >= 0 and bool(counter_mask >> c & 1))
            groups.setdefault(key, []).append(c)
        # most constrained groups first; the last group's split is then forced by what is left
        order = sorted(groups, key=lambda k: (k[0].bit_count(), k))
        self.groups = [(k[0], k[1], groups[k]) for k in order]
        self.n_holders = n_h
        self._memo: dict[tuple[int, tuple[int, ...], bool], int] = {}
        self._choices: dict[tuple[int, tuple[int, ...], bool], tuple[list[int], list[tuple[int, ...]]]] = {}
        self.total = self._count(0, sizes, self.need < 0)
        if self.total == 0:
            raise ValueError("no deal of the unseen cards satisfies the constraints (sizes, voids, nest)")

    # ---------------------------------------------------------------- counting
    def _splits(self, g: int, caps: tuple[int, ...]) -> list[tuple[int, ...]]:
        """Every split (cards per holder) of group ``g`` within the remaining capacities."""
        allowed, _, cards = self.groups[g]
        n = len(cards)
        idx = [i for i in range(self.n_holders) if allowed >> i & 1]
        out: list[tuple[int, ...]] = []
        k = [0] * self.n_holders

        def rec(j: int, left: int) -> None:
            i = idx[j]
            if j == len(idx) - 1:
                if left <= caps[i]:
                    k[i] = left
                    out.append(tuple(k))
                    k[i] = 0
                return
            for x in range(min(left, caps[i]) + 1):
                k[i] = x
                rec(j + 1, left - x)
            k[i] = 0

        if g == len(self.groups) - 1:
            # the last group takes exactly what is left
            if sum(caps) == n and all(allowed >> i & 1 for i in range(self.n_holders) if caps[i]):
                out.append(caps)
        elif idx:
            rec(0, n)
        elif n == 0:
            out.append(tuple(k))
        return out

    def _count(self, g: int, caps: tuple[int, ...], got: bool) -> int:
        """Number of deals of groups ``g``.. into the capacities ``caps`` (``got``: the counter need is met)."""
        if g == len(self.groups):
            return 1 if got and not any(caps) else 0
        key = (g, caps, got)
        if key in self._memo:
            return self._memo[key]
        _, is_counter, cards = self.groups[g]
        n = len(cards)
        weights: list[int] = []
        splits: list[tuple[int, ...]] = []
        cum = 0
        for k in self._splits(g, caps):
            w = _FACT[n]
            for x in k:
                w //= _FACT[x]
            got2 = got or (is_counter and k[self.need] > 0)
            w *= self._count(g + 1, tuple(c - x for c, x in zip(caps, k)), got2)
            if w:
                cum += w
                weights.append(cum)
                splits.append(k)
        self._memo[key] = cum
        self._choices[key] = (weights, splits)
        return cum

    # ---------------------------------------------------------------- sampling
    def sample(self, rng: random.Random) -> list[int]:
        """One uniformly drawn deal: the card mask of each holder, in ``holders`` order."""
        caps = tuple(h.size for h in self.holders)
        got = self.need < 0
        out = [0] * self.n_holders
        for g, (_, is_counter, cards) in enumerate(self.groups):
            weights, splits = self._choices[(g, caps, got)]
            pick = rng.randrange(weights[-1])
            lo, hi = 0, len(weights) - 1
            while lo < hi:  # first cumulative weight above pick
                mid = (lo + hi) // 2
                if weights[mid] > pick:
                    hi = mid
                else:
                    lo = mid + 1
            k = splits[lo]
            deck = list(cards)
            rng.shuffle(deck)
            pos = 0
            for i, x in enumerate(k):
                for c in deck[pos:pos + x]:
                    out[i] |= 1 << c
                pos += x
            if is_counter and k[self.need] > 0:
                got = True
            caps = tuple(c - x for c, x in zip(caps, k))
        return out


# ============================================================================ worlds
def world_config(config: RookConfig) -> RookConfig:
    """The configuration of a world: the table's rules, ending with the hand (no next deal)."""
    return config if config.episode == "hand" else replace(config, episode="hand")


def world_template(config: RookConfig, view: SeatView, counters: tuple[int, int]) -> RookState:
    """The public part of the current position as a state (seats relative to the seat, which is 0):
    hands, nest and discards are filled in per world by :func:`make_world`. ``counters``: the points
    taken so far by (my team, their team)."""
    # a copy of a blank state (making one, with its tables and its generator, costs more than this whole
    # function); every list the template holds is made anew below
    st = RookState.__new__(RookState)
    for name, value in _blank(world_config(config)):
        setattr(st, name, value)
    L = st.L
    st.scores = [0, 0]
    st.deals = 1
    st.phase = PLAY
    st.current = 0
    st.hands = [view.hand, 0, 0, 0]
    st.nest = view.nest
    st.discards = view.discards
    st.bid_history = []
    st.high_bid = view.contract
    st.bidder = view.bidder
    st.passed = [bool(view.passed >> r & 1) for r in range(N_SEATS)]
    st.n_passed = sum(st.passed)
    st.set_call(view.call)  # trump colour and the call's card tables (low / no trump included)
    st.circus, st.passing = False, []  # card play: any circus passing is over
    st.trick = [card for _, card in view.trick]
    st.leader = view.trick[0][0] if view.trick else 0
    n_done = L.n_tricks - view.tricks_left
    st.tricks = [(-1, ())] * n_done  # what was played in which trick is not kept; only the count matters
    st.played = view.played_all
    played_by = [-1] * L.n_cards
    for r in range(N_SEATS):
        for c in bits(view.played[r]):
            played_by[c] = r
    st.played_by = played_by
    st.tricks_won = list(view.tricks_won)
    st.points = list(counters)
    st.last_trick_team = -1
    st.nest_has_counters = view.nest_counters
    st.hand_result = None
    return st


@lru_cache(maxsize=None)
def _blank(config: RookConfig) -> tuple[tuple[str, object], ...]:
    """The fields a new state of ``config`` has set, which :func:`world_template` copies."""
    st = RookState(config)
    return tuple((name, getattr(st, name)) for name in _SLOTS if hasattr(st, name))


def fork(state: RookState) -> RookState:
    """A copy of a world in card play for one rollout: :meth:`RookState.clone` without copying the
    random generator (a world ends with its hand and never deals again, so it shares its source's)."""
    new = RookState.__new__(RookState)
    for name in _SLOTS:
        setattr(new, name, getattr(state, name))
    new.hands = state.hands[:]
    new.trick = state.trick[:]
    new.tricks = state.tricks[:]
    new.played_by = state.played_by[:]
    new.tricks_won = state.tricks_won[:]
    new.points = state.points[:]
    new.scores = state.scores[:]
    return new


_SLOTS = RookState.state_fields()


def make_world(template: RookState, holders: Sequence[Holder], deal: Sequence[int]) -> RookState:
    """A copy of ``template`` with the sampled ``deal`` (one mask per holder) filled in."""
    st = fork(template)
    for h, mask in zip(holders, deal):
        if h.who == NEST:
            st.discards = mask
            st.nest = mask  # the nest as picked up is unknown; only the discards count at the end
        else:
            st.hands[h.who] = mask
    return st

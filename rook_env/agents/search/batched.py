"""Determinised search at engine speed: sampled worlds played out as tables of the batched engine.

:class:`BatchedRollouts` takes the worlds of one decision or of many (each a
:class:`rook_env.rules.RookState` in card play, :func:`.worlds.make_world`'s) and the cards to try
in each, and returns the hand score (the world's team 0 minus team 1) of every (world, card) pair.
Every pair is one table of a :class:`rook_env.vector.RookVectorEnv` (the partnership engine with its
compiled kernels): the worlds are loaded with ``load_states`` (a world fills one table per card it
is tried with), and one compiled loop over the tables plays each table's card and then the rest of
its hand with the greedy rule of :class:`.rollout.GreedyRollout` (:func:`greedy_card`, the same
choices: ``tests/test_search_batched.py`` checks them against the Python rollout), each card applied by
the engine's own card-play kernel (:func:`rook_env.kernels.play_cards`); the engine's ``finish_hands``
scores the hands. Python touches each world once (loading) and each decision once; no Python runs per
card played.

Needs numba (the engine's ``backend="numba"``) and the colour calls (``trump_calls="colour"``, the
greedy rule's tables); :func:`supported` says whether a configuration qualifies. The search agent
(:mod:`.agent`) uses this engine where it can and its Python rollouts elsewhere.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from rook_env import kernels
from rook_env.cards import N_SEATS
from rook_env.config import RookConfig
from rook_env.rules import PLAY, RookState

from ..heuristic.tables import card_tables
from rook_env.vector.partnership import HAND_STATE_COLUMNS

from .worlds import NEST, Holder, WorldSampler, world_config

__all__ = ["BatchedRollouts", "sample_deals", "supported"]

U64 = np.uint64
_compiled = None  # (greedy_card, play_out) once numba has compiled them


def supported(config: RookConfig) -> bool:
    """Whether batched rollouts can run this configuration (numba installed, colour trump calls)."""
    return kernels.AVAILABLE and config.trump_calls == "colour"


# ============================================================================ kernels (compiled by numba)
def greedy_card(t, current, hands_flat, trick_flat, hand_state, discards, follow, follow_plus, free_key, n,
                all_cards, tpow_all, rp, pts, colour, higher_all, trumps_all, cols):
    """:class:`.rollout.GreedyRollout`'s card for the seat to act at table ``t`` of the engine's arrays
    (the same rules, the same ties: the first card in id order). ``cols``: hand_state columns of
    leader, trick_len, bidder, trump, call."""
    LEADER, TRICK_LEN, BIDDER, TRUMP, CALL = cols[0], cols[1], cols[2], cols[3], cols[4]
    zero = U64(0)
    one = U64(1)
    row = t * 4
    s = current[t]
    hand = hands_flat[row + s]
    tl = hand_state[t, TRICK_LEN]
    key = hand_state[t, CALL] * n + trick_flat[row] if tl > 0 else free_key
    legal = hand & follow[key]
    legal = hand & follow_plus[key] if legal != zero else hand
    if legal & (legal - one) == zero:  # one card: no choice
        return _lowest(legal)
    trump = hand_state[t, TRUMP]
    trumps = trumps_all[trump]  # (tables are indexed in two dimensions: a row view would cost a reference count)
    held = hands_flat[row] | hands_flat[row + 1] | hands_flat[row + 2] | hands_flat[row + 3] | discards[t]
    outside = held & ~hand & all_cards  # not played and not this seat's: what it has not seen
    if tl == 0:
        bidder_side = ((s ^ hand_state[t, BIDDER]) & 1) == 0
        pull = bidder_side and (outside & trumps) != zero
        best_trump, best_side = -1, -1
        m = legal
        while m != zero:  # the legal cards in id order
            c = _lowest(m)
            m &= m - one
            if (higher_all[trump, c] & outside) != zero:
                continue  # not a master
            if tpow_all[trump, c] >= 0:
                if pull and (best_trump < 0 or tpow_all[trump, c] < tpow_all[trump, best_trump]):
                    best_trump = c
            elif best_side < 0 or pts[c] > pts[best_side] or (pts[c] == pts[best_side] and rp[c] > rp[best_side]):
                best_side = c
        if best_trump >= 0:
            return best_trump
        if best_side >= 0:
            return best_side
        return _cheapest(legal, trump, tpow_all, pts, rp, True)
    led_card = trick_flat[row]
    led = colour[led_card] if tpow_all[trump, led_card] < 0 else trump
    win_i, win_power = 0, -1.0
    trick_points = 0
    for i in range(tl):
        c = trick_flat[row + i]
        trick_points += pts[c]
        p = tpow_all[trump, c] if tpow_all[trump, c] >= 0 else (rp[c] if colour[c] == led else -1.0)
        if p > win_power:
            win_i, win_power = i, p
    win_card = trick_flat[row + win_i]
    last = tl == 3
    if (hand_state[t, LEADER] + win_i) & 3 == s ^ 2:  # partner winning
        sure = last or ((higher_all[trump, win_card] & outside) == zero and (tpow_all[trump, win_card] >= 0 or (outside & trumps) == zero))
        if not sure:
            return _cheapest(legal, trump, tpow_all, pts, rp, True)
        best = -1  # smear: side cards first, most points, lowest rank
        m = legal
        while m != zero:
            c = _lowest(m)
            m &= m - one
            if best < 0:
                best = c
                continue
            a_side, b_side = tpow_all[trump, c] < 0, tpow_all[trump, best] < 0
            if a_side != b_side:
                if a_side:
                    best = c
            elif pts[c] != pts[best]:
                if pts[c] > pts[best]:
                    best = c
            elif -rp[c] > -rp[best]:
                best = c
        return best
    low_win, low_sure = -1, -1  # cheapest winner by (power, id); cheapest sure winner
    low_p, sure_p = 0.0, 0.0
    m = legal
    while m != zero:
        c = _lowest(m)
        m &= m - one
        p = tpow_all[trump, c] if tpow_all[trump, c] >= 0 else (rp[c] if colour[c] == led else -1.0)
        if p > win_power:
            if low_win < 0 or p < low_p:
                low_win, low_p = c, p
            if (higher_all[trump, c] & outside) == zero and (low_sure < 0 or p < sure_p):
                low_sure, sure_p = c, p
    if low_win >= 0:
        if last:
            return low_win
        if low_sure >= 0:
            return low_sure
        if tl == 2 or trick_points:
            return low_win
    return _cheapest(legal, trump, tpow_all, pts, rp, False)


_DEBRUIJN = np.uint64(0x03F79D71B4CB0A89)
_DEBRUIJN_INDEX = np.zeros(64, np.int64)
for _i in range(64):  # in Python integers (numpy scalars warn on the wrap-around the kernel relies on)
    _DEBRUIJN_INDEX[(((1 << _i) * int(_DEBRUIJN)) & (2 ** 64 - 1)) >> 58] = _i


def _lowest(m):
    """The index of the lowest set bit of a non-zero uint64 (a de Bruijn multiply: no loop)."""
    return _DEBRUIJN_INDEX[((m & (~m + U64(1))) * _DEBRUIJN) >> U64(58)]


def _cheapest(legal, trump, tpow_all, pts, rp, trumps_first_key):
    """The first card minimising (is trump, points, rank) (``trumps_first_key``) or (points, is trump, rank)."""
    one = U64(1)
    best = -1
    m = legal
    while m != U64(0):
        c = _lowest(m)
        m &= m - one
        if best < 0:
            best = c
            continue
        ta, tb = tpow_all[trump, c] >= 0, tpow_all[trump, best] >= 0
        if trumps_first_key:
            if ta != tb:
                if tb:
                    best = c
                continue
            if pts[c] != pts[best]:
                if pts[c] < pts[best]:
                    best = c
                continue
        else:
            if pts[c] != pts[best]:
                if pts[c] < pts[best]:
                    best = c
                continue
            if ta != tb:
                if tb:
                    best = c
                continue
        if rp[c] < rp[best]:
            best = c
    return best


def play_out(tables, first, greedy_args, play_args, p1, c1, ended1):
    """Play table ``tables[j]``'s card ``first[j]``, then its hand to the end with :func:`greedy_card`,
    every card applied by the engine's card-play kernel."""
    (current, hands_flat, trick_flat, hand_state, discards, follow, follow_plus, free_key, n, all_cards,
     tpow_all, rp, pts, colour, higher_all, trumps_all, cols) = greedy_args
    (_, _, _, _, points_flat, tricks_won_flat, _, flat, num_flat, card_bit, card_off, card_val, play_off, eff,
     power_flat, card_points, rel_one_hot, all_rows, totals_div, ints) = play_args
    for j in range(tables.shape[0]):
        t = tables[j]
        card = first[j]
        while True:
            if card < 0:
                card = _greedy(t, current, hands_flat, trick_flat, hand_state, discards, follow, follow_plus,
                               free_key, n, all_cards, tpow_all, rp, pts, colour, higher_all, trumps_all, cols)
            p1[0] = t
            c1[0] = card
            done = _play_cards(p1, c1, current, hands_flat, trick_flat, hand_state, points_flat, tricks_won_flat,
                               discards, flat, num_flat, card_bit, card_off, card_val, play_off, eff, power_flat,
                               card_points, rel_one_hot, all_rows, totals_div, ints, ended1)
            card = -1
            if done:
                break


_greedy = None  # the compiled greedy_card and the engine's play_cards, read by play_out when numba compiles it
_play_cards = None


def compiled():
    """(greedy_card, play_out), compiled on first use (numba)."""
    global _compiled, _greedy, _play_cards
    if _compiled is None:
        import numba

        # inlined into play_out: a call between compiled functions would pay reference counting on each of
        # its many array arguments, per card played (the engine's play_cards is compiled here once more)
        inline = numba.njit(nogil=True, inline="always")
        _play_cards = inline(kernels.play_cards)
        globals()["_lowest"] = inline(_lowest)
        globals()["_cheapest"] = inline(_cheapest)
        _greedy = inline(greedy_card)
        _compiled = (_greedy, numba.njit(nogil=True, cache=True)(play_out))
    return _compiled


# ============================================================================ the rollouts
class BatchedRollouts:
    """Hand scores of sampled worlds, each tried with given cards, played out on the batched engine
    (see the module docstring). ``capacity``: tables of the first engine (it grows to the largest
    request; a request of more than ``max_tables`` pairs runs in several passes)."""

    def __init__(self, config: RookConfig, capacity: int = 128, max_tables: int = 8192) -> None:
        if not supported(config):
            raise ValueError("batched rollouts need numba and trump_calls='colour' "
                             f"(numba installed: {kernels.AVAILABLE}, trump_calls={config.trump_calls!r})")
        self.config = world_config(config)
        self.max_tables = int(max_tables)
        self._greedy, self._play_out = compiled()
        tab = card_tables(self.config)
        cols = [HAND_STATE_COLUMNS.index(c) for c in ("leader", "trick_len", "bidder", "trump", "call")]
        self._consts = (U64(tab.all_cards), tab.trump_power_array, tab.rank_power_array,
                        np.array(tab.points, np.int64), np.array(tab.colour, np.int64), tab.higher_array.astype(U64),
                        np.array([tab.suit[t][t] for t in range(4)], U64), np.array(cols, np.int64))
        self._n = tab.n_cards
        self._one = np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(1, np.int64)  # p1, c1, ended1
        self.env = None
        self._grow(min(int(capacity), self.max_tables))

    def __deepcopy__(self, memo: dict) -> BatchedRollouts:
        # a fresh engine: copying would cut the kernels' argument views off the copied arrays, and no state
        # outlives a call
        return BatchedRollouts(self.config, self.capacity, self.max_tables)

    def _grow(self, tables: int) -> None:
        """A new engine of ``tables`` tables (the kernels' arguments are views of its arrays)."""
        from rook_env.vector import RookVectorEnv  # numpy and the kernels only

        self.env = env = RookVectorEnv(tables, backend="numba", **self.config.to_dict())
        self.capacity = tables
        self._greedy_args = (env.current, env._hands_flat, env._trick_flat, env._hand_state, env.discards,
                             env._follow, env._follow_plus, env._free_key, self._n) + self._consts
        self._play_args = env.play_kernel_args()

    def _run(self, tables: np.ndarray, first: np.ndarray) -> np.ndarray:
        """Play the loaded ``tables`` out (first cards ``first``); their hand scores, team 0 minus team 1."""
        self._play_out(tables, first, self._greedy_args, self._play_args, *self._one)
        hs = self.env.finish_hands(tables)["hand_scores"]
        return hs[:, 0] - hs[:, 1]

    def _tables_for(self, k: int) -> int:
        """Tables per pass for ``k`` pairs (the engine grows to fit, up to ``max_tables``)."""
        if k > self.capacity and self.capacity < self.max_tables:
            self._grow(min(max(k, 2 * self.capacity), self.max_tables))
        return self.capacity

    def score_pairs(self, worlds: Sequence[RookState], cards: Sequence[int]) -> np.ndarray:
        """The hand score (team 0 minus team 1) of each world ``worlds[i]`` after card ``cards[i]`` (legal
        for the seat to act) and greedy play to the end of the hand; a world may be given many times."""
        if len(worlds) != len(cards):
            raise ValueError(f"{len(worlds)} worlds for {len(cards)} cards")
        for i, w in enumerate(worlds):
            if w.phase != PLAY:
                raise ValueError(f"worlds[{i}] is not in card play")
        out = np.empty(len(worlds), np.int64)
        first = np.asarray(cards, np.int64)
        cap = self._tables_for(len(worlds))
        for lo in range(0, len(worlds), cap):
            chunk = worlds[lo:lo + cap]
            tables = np.arange(len(chunk), dtype=np.int64)
            self.env.load_states(chunk, tables, observations=False)
            out[lo:lo + len(chunk)] = self._run(tables, first[lo:lo + cap])
        return out

    def score_deals(self, template: RookState, holders: Sequence[Holder], deals: Sequence[Sequence[int]] | np.ndarray,
                    cards: Sequence[int]) -> np.ndarray:
        """``(len(deals), len(cards))`` hand scores of the worlds :func:`.worlds.make_world` would make of
        ``template`` and each deal (one mask per holder: a list of them, or :func:`sample_deals`' array), each
        tried with every card: the template is loaded
        once per table and the deals written over its hidden cards (no world state is built)."""
        n_w, n_c = len(deals), len(cards)
        cards_u = np.array([[*template.hands, template.nest, template.discards]] * n_w, U64)  # per world
        deals = np.asarray(deals, U64).reshape(n_w, len(holders))
        for j, h in enumerate(holders):
            col = deals[:, j]
            if h.who == NEST:  # as make_world: the nest as picked up is unknown; the discards count
                cards_u[:, N_SEATS] = col
                cards_u[:, N_SEATS + 1] = col
            else:
                cards_u[:, h.who] = col
        per_table = np.repeat(cards_u, n_c, axis=0)
        first = np.tile(np.asarray(cards, np.int64), n_w)
        out = np.empty(n_w * n_c, np.int64)
        cap = self._tables_for(n_w * n_c)
        env = self.env
        for lo in range(0, n_w * n_c, cap):
            k = min(cap, n_w * n_c - lo)
            tables = np.arange(k, dtype=np.int64)
            env.load_states([template] * k, tables, observations=False)
            env.hands[:k] = per_table[lo:lo + k, :N_SEATS]
            env.nest[:k] = per_table[lo:lo + k, N_SEATS]
            env.discards[:k] = per_table[lo:lo + k, N_SEATS + 1]
            out[lo:lo + k] = self._run(tables, first[lo:lo + k])
        return out.reshape(n_w, n_c)


# ============================================================================ compiled world sampling
def draw_deals(seed, k, group_cards, group_start, state_start, split_cum, split_counts, split_next, out):
    """``k`` deals drawn as :meth:`.worlds.WorldSampler.sample` draws them (each group's split by its share
    of the completions, then its cards shuffled), from numba's generator seeded with ``seed``.

    State ``s`` (the root is 0) of group ``g = `` its depth has splits ``state_start[s] .. state_start[s + 1]``
    with cumulative probabilities ``split_cum``, counts per holder ``split_counts`` and next states
    ``split_next``; group ``g``'s cards are ``group_cards[group_start[g]:group_start[g + 1]]``."""
    np.random.seed(seed)
    n_groups = group_start.shape[0] - 1
    n_h = out.shape[1]
    deck = np.empty(group_cards.shape[0], np.int64)
    for w in range(k):
        for i in range(n_h):
            out[w, i] = U64(0)
        s = 0
        for g in range(n_groups):
            lo, hi = state_start[s], state_start[s + 1]
            u = np.random.random()
            j = lo
            while j < hi - 1 and split_cum[j] <= u:
                j += 1
            a, b = group_start[g], group_start[g + 1]
            m = b - a
            for i in range(m):
                deck[i] = group_cards[a + i]
            for i in range(m - 1, 0, -1):  # Fisher-Yates
                r = np.random.randint(0, i + 1)
                deck[i], deck[r] = deck[r], deck[i]
            pos = 0
            for h in range(n_h):
                for _ in range(split_counts[j, h]):
                    out[w, h] |= U64(1) << U64(deck[pos])
                    pos += 1
            s = split_next[j]
    return out


_draw = None


def sampler_tables(sampler: WorldSampler) -> tuple[np.ndarray, ...]:
    """The arrays :func:`draw_deals` reads, from a :class:`.worlds.WorldSampler`'s counted splits
    (its exact integer weights as cumulative probabilities)."""
    groups = sampler.groups
    n_g = len(groups)
    group_cards = np.array([c for _, _, cards in groups for c in cards], np.int64)
    group_start = np.cumsum([0] + [len(cards) for _, _, cards in groups]).astype(np.int64)
    root = (0, tuple(h.size for h in sampler.holders), sampler.need < 0)
    ids = {root: 0}
    order = [root]
    cum, counts, nxt, starts = [], [], [], [0]
    i = 0
    while i < len(order):  # breadth first: a state's splits are contiguous, states numbered as met
        key = order[i]
        i += 1
        g, caps, got = key
        weights, splits = sampler._choices[key]
        total = weights[-1]
        is_counter = groups[g][1]
        for wgt, k in zip(weights, splits):
            cum.append(wgt / total)
            counts.append(k)
            if g + 1 < n_g:
                got2 = got or (is_counter and k[sampler.need] > 0)
                child = (g + 1, tuple(c - x for c, x in zip(caps, k)), got2)
                if child not in ids:
                    ids[child] = len(order)
                    order.append(child)
                nxt.append(ids[child])
            else:
                nxt.append(0)
        starts.append(len(cum))
    return (group_cards, group_start, np.array(starts, np.int64), np.array(cum, np.float64),
            np.array(counts, np.int64).reshape(-1, len(sampler.holders)), np.array(nxt, np.int64))


def sample_deals(sampler: WorldSampler, k: int, seed: int) -> np.ndarray:
    """``(k, holders)`` uint64: ``k`` deals drawn uniformly (as ``sampler.sample``), compiled; a function
    of ``seed`` (0 .. 2**32 - 1) and the sampler's constraints."""
    global _draw
    out = np.zeros((k, len(sampler.holders)), U64)
    if not sampler.groups:
        return out
    if _draw is None:
        import numba

        _draw = numba.njit(nogil=True, cache=True)(draw_deals)
    return _draw(seed, k, *sampler_tables(sampler), out)

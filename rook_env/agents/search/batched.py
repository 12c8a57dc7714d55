"""Determinised search at engine speed: sampled worlds played out as tables of the batched engine.

:class:`BatchedRollouts` takes the worlds of one decision or of many and the cards to try in each, and
returns the hand score (the world's team 0 minus team 1) of every (world, card) pair. Every pair is one table
of a :class:`rook_env.vector.RookVectorEnv` (the partnership engine with its compiled kernels): a decision's
template world (:func:`.worlds.world_template`) is loaded into its tables with ``load_states`` and each world's
hidden cards written over it (:meth:`BatchedRollouts.score_worlds`; :meth:`BatchedRollouts.score_pairs` loads
whole states), and one compiled loop over the tables plays each table's card and then the rest of its hand
with the greedy rule of :class:`.rollout.GreedyRollout` (:func:`greedy_card`, the same choices:
``tests/test_search_batched.py`` checks them against the Python rollout), each card applied by the engine's own
card-play kernel (:func:`rook_env.games.partnership.kernels.play_cards`, inlined without its observation writes); the engine's
``finish_hands`` scores the hands. The tables of many decisions (``SearchAgent.act_batch``) are loaded, played
and scored together; no Python runs per card played.

The worlds are drawn by compiled code too (:func:`sample_many`): :func:`deal_tables` is the dynamic programme
of :class:`.worlds.WorldSampler` (the same groups, splits and order) and :func:`draw_deals` its draw, for the
decisions of a call in one compiled loop.

Needs numba (the engine's ``backend="numba"``) and the colour calls (``trump_calls="colour"``, the
greedy rule's tables); :func:`supported` says whether a configuration qualifies. The search agent
(:mod:`.agent`) uses this engine where it can and its Python rollouts elsewhere.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from rook_env.core.kernels import jit
from rook_env.games.partnership import kernels
from rook_env.games.partnership.cards import N_SEATS
from rook_env.games.partnership.config import RookConfig
from rook_env.games.partnership.rules import PLAY, RookState
from rook_env.games.partnership.vector import HAND_STATE_COLUMNS
from rook_env.vector import RookVectorEnv

from ..heuristic.tables import card_tables
from .worlds import NEST, Holder, world_config

__all__ = ["BatchedRollouts", "holder_arrays", "sample_deals", "sample_many", "supported", "world_cards"]

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
                               card_points, rel_one_hot, all_rows, totals_div, ints, ended1, False)
            card = -1
            if done:
                break


_greedy = None  # the compiled greedy_card and the engine's play_cards, read by play_out when numba compiles it
_play_cards = None


def compiled():
    """(greedy_card, play_out), compiled on first use (numba)."""
    global _compiled, _greedy, _play_cards
    if _compiled is None:
        # inlined into play_out: a call between compiled functions would pay reference counting on each of
        # its many array arguments, per card played (the engine's play_cards is compiled here once more)
        def inline(fn: Any) -> Any:
            return jit(fn, inline="always", cache=False)

        _play_cards = inline(kernels.play_cards)
        globals()["_lowest"] = inline(_lowest)
        globals()["_cheapest"] = inline(_cheapest)
        _greedy = inline(greedy_card)
        _compiled = (_greedy, jit(play_out))
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
            self.env.load_states(chunk, tables, observations=False, refresh=False)
            out[lo:lo + len(chunk)] = self._run(tables, first[lo:lo + cap])
        return out

    def score_worlds(self, templates: Sequence[RookState], cards: np.ndarray, tried: Sequence[Sequence[int]]
                     ) -> list[np.ndarray]:
        """The hand scores of the worlds of many decisions: decision ``j``'s worlds are ``templates[j]`` (a
        :func:`.worlds.world_template`) with the cards ``cards[j, w]`` (seats 0..3, nest, discards:
        :func:`world_cards`), each tried with every card of ``tried[j]``; returns, per decision, a
        ``(worlds, len(tried[j]))`` array. One table per (decision, world, card), every table of a pass
        loaded, played out and scored together (the template loaded, its hidden cards written over)."""
        J, n_w = cards.shape[:2]
        n_c = np.array([len(a) for a in tried], np.int64)
        per_dec = n_w * n_c  # tables of each decision
        start = np.concatenate(([0], np.cumsum(per_dec)))
        T = int(start[-1])
        dec = np.repeat(np.arange(J), per_dec)  # the decision of each table
        per_table = np.repeat(cards.reshape(J * n_w, N_SEATS + 2), np.repeat(n_c, n_w), axis=0)
        acts = np.fromiter((a for t in tried for a in t), np.int64, int(n_c.sum()))
        act_start = np.concatenate(([0], np.cumsum(n_c)))[:-1]
        first = acts[act_start[dec] + (np.arange(T) - start[dec]) % n_c[dec]]  # cards cycle within a world
        out = np.empty(T, np.int64)
        cap = self._tables_for(T)
        env = self.env
        dec_list = dec.tolist()
        for lo in range(0, T, cap):
            k = min(cap, T - lo)
            tables = np.arange(k, dtype=np.int64)
            env.load_states(list(map(templates.__getitem__, dec_list[lo:lo + k])), tables, observations=False,
                            refresh=False)
            env.hands[:k] = per_table[lo:lo + k, :N_SEATS]
            env.nest[:k] = per_table[lo:lo + k, N_SEATS]
            env.discards[:k] = per_table[lo:lo + k, N_SEATS + 1]
            out[lo:lo + k] = self._run(tables, first[lo:lo + k])
        return [out[start[j]:start[j + 1]].reshape(n_w, n_c[j]) for j in range(J)]

    def score_deals(self, template: RookState, holders: Sequence[Holder], deals: Sequence[Sequence[int]] | np.ndarray,
                    cards: Sequence[int]) -> np.ndarray:
        """``(len(deals), len(cards))`` hand scores of one decision's worlds: ``template`` with each deal (one
        mask per holder) written over its holders' cards, each tried with every card of ``cards`` (-1: the
        greedy rule plays from the first card on; the auction search's play-outs). :meth:`score_worlds` for
        one decision."""
        n_w = len(deals)
        deals = np.asarray(deals, U64).reshape(n_w, len(holders))
        world = np.array([[[*template.hands, template.nest, template.discards]] * n_w], U64)  # (1, worlds, 6)
        for j, h in enumerate(holders):  # any number of holders (the auction's deals have five: 4 seats, nest)
            world[0, :, h.who] = deals[:, j]
            if h.who == NEST:  # as make_world: the nest as picked up is unknown; the discards count
                world[0, :, N_SEATS + 1] = deals[:, j]
        return self.score_worlds([template], world, [list(cards)])[0]


# ============================================================================ compiled world sampling
# The uniform sampler of :class:`.worlds.WorldSampler` (the same groups, the same dynamic programme over
# (group, capacities left, counter need met), the same order of splits) in compiled code, for many decisions
# in one call: its counts are float64 (the exact integers can pass 2**63 in the full deck; a relative error
# of 1e-16 in a split's probability does not change the distribution measurably).
def deal_tables(unseen, n_h, sizes, forbidden, need, counter_mask, fact):
    """The tables :func:`draw_deals` reads for one decision, and the number of consistent deals (0.0: none).

    ``unseen``: the unseen cards (uint64); holders ``0 .. n_h - 1`` take ``sizes[i]`` of them and none of
    ``forbidden[i]``; holder ``need`` (-1: none) must take one of ``counter_mask``. ``fact``: float64 factorials.
    Returns ``(group_cards, group_start, state_start, split_cum, split_counts, split_next, total)``."""
    one = U64(1)
    # group the cards by the holders that may take them (and, where it matters, by counter-ness)
    gmask = np.zeros(32, U64)
    n_cards = 0
    for c in range(64):
        if (unseen >> U64(c)) & one:
            n_cards += 1
            allowed = 0
            for i in range(n_h):
                if not (forbidden[i] >> U64(c)) & one:
                    allowed |= 1 << i
            ctr = 1 if need >= 0 and (counter_mask >> U64(c)) & one else 0
            gmask[2 * allowed + ctr] |= one << U64(c)
    # most constrained groups first (WorldSampler's order: holders allowed, their set, counter-ness)
    gkeys = np.empty(32, np.int64)
    n_g = 0
    for pc in range(5):
        for key in range(32):
            a = key >> 1
            if gmask[key] != U64(0) and (a & 1) + (a >> 1 & 1) + (a >> 2 & 1) + (a >> 3 & 1) == pc:
                gkeys[n_g] = key
                n_g += 1
    group_start = np.zeros(n_g + 1, np.int64)
    group_cards = np.empty(n_cards, np.int64)
    pos = 0
    for g in range(n_g):
        m = gmask[gkeys[g]]
        for c in range(64):
            if (m >> U64(c)) & one:
                group_cards[pos] = c
                pos += 1
        group_start[g + 1] = pos
    total_size = 0
    bad = False
    for i in range(n_h):
        total_size += sizes[i]
        bad = bad or sizes[i] < 0 or sizes[i] > 63
    if bad or total_size != n_cards or (n_g > 0 and gkeys[0] >> 1 == 0) or n_g == 0:
        # sizes off, or cards nobody may take (0 deals); or no unseen card (one empty deal, if no counter is needed)
        total = 1.0 if not bad and total_size == 0 and n_cards == 0 and need < 0 else 0.0
        return (group_cards, group_start, np.zeros(2, np.int64), np.zeros(0), np.zeros((0, 4), np.int64),
                np.zeros(0, np.int64), total)
    # forward: every reachable state (group, capacities left, need met), numbered as met; its splits in order
    root = 0
    for i in range(n_h):
        root |= sizes[i] << (6 * i)
    if need < 0:
        root |= 1 << 24
    ids = {root: 0}
    keys = [root]
    sp_start = [0]
    sp_k = [0]  # the splits' counts, 4 per split (the first entry a placeholder for typing)
    sp_child = [0]  # child state, -1: the hand is complete, -2: complete without the counter needed
    sp_mult = [0.0]
    sp_k.pop()
    sp_child.pop()
    sp_mult.pop()
    caps = np.zeros(4, np.int64)
    k = np.zeros(4, np.int64)
    x = np.zeros(4, np.int64)
    idx = np.zeros(4, np.int64)
    s = 0
    while s < len(keys):
        key = keys[s]
        g = key >> 25
        got = key >> 24 & 1
        for i in range(4):
            caps[i] = key >> (6 * i) & 63
        allowed = gkeys[g] >> 1
        is_ctr = gkeys[g] & 1
        n = group_start[g + 1] - group_start[g]
        m = 0
        for i in range(n_h):
            if allowed >> i & 1:
                idx[m] = i
                m += 1
        last = g == n_g - 1
        # the splits in WorldSampler._splits' order: the first holder's count most significant, the last
        # holder taking what is left (the last group takes exactly the capacities left)
        more = True
        if last:
            left = 0
            fits = True
            for i in range(n_h):
                left += caps[i]
                if caps[i] and not allowed >> i & 1:
                    fits = False
            more = fits and left == n
        for i in range(4):
            x[i] = 0
        while more:
            for i in range(4):
                k[i] = 0
            if last:
                for i in range(n_h):
                    k[i] = caps[i]
                emit = True
                more = False
            else:
                used = 0
                for j in range(m - 1):
                    k[idx[j]] = x[j]
                    used += x[j]
                k[idx[m - 1]] = n - used
                emit = n - used <= caps[idx[m - 1]]
                p = m - 2  # the next split: an odometer over all but the last holder
                while p >= 0:
                    x[p] += 1
                    used_p = 0
                    for j in range(p + 1):
                        used_p += x[j]
                    if x[p] <= caps[idx[p]] and used_p <= n:
                        break
                    x[p] = 0
                    p -= 1
                more = p >= 0
            if emit:
                got2 = got
                if is_ctr and need >= 0 and k[need] > 0:
                    got2 = 1
                mult = fact[n]
                for i in range(4):
                    mult /= fact[k[i]]
                if last:
                    child = -1 if got2 else -2
                else:
                    ck = (g + 1) << 25 | got2 << 24
                    for i in range(4):
                        ck |= (caps[i] - k[i]) << (6 * i)
                    if ck in ids:
                        child = ids[ck]
                    else:
                        child = len(keys)
                        ids[ck] = child
                        keys.append(ck)
                for i in range(4):
                    sp_k.append(k[i])
                sp_child.append(child)
                sp_mult.append(mult)
        sp_start.append(len(sp_child))
        s += 1
    # backward: the completions of each state (children are numbered after their parents)
    n_st = len(keys)
    count = np.zeros(n_st)
    weight = np.zeros(len(sp_child))
    for s in range(n_st - 1, -1, -1):
        tot = 0.0
        for j in range(sp_start[s], sp_start[s + 1]):
            ch = sp_child[j]
            w = sp_mult[j] * (1.0 if ch == -1 else 0.0 if ch == -2 else count[ch])
            weight[j] = w
            tot += w
        count[s] = tot
    total = count[0]
    # the states reached by splits of non-zero weight, renumbered breadth first (the draw's tables)
    new_id = np.full(n_st, -1, np.int64)
    new_id[0] = 0
    order = [0]
    cum = [0.0]
    cum.pop()
    counts = [0]
    counts.pop()
    nxt = [0]
    nxt.pop()
    starts = [0]
    i = 0
    while i < len(order) and total > 0.0:
        s = order[i]
        i += 1
        run = 0.0
        for j in range(sp_start[s], sp_start[s + 1]):
            if weight[j] > 0.0:
                run += weight[j]
                cum.append(run / count[s])
                for h in range(4):
                    counts.append(sp_k[4 * j + h])
                ch = sp_child[j]
                if ch >= 0:
                    if new_id[ch] < 0:
                        new_id[ch] = len(order)
                        order.append(ch)
                    nxt.append(new_id[ch])
                else:
                    nxt.append(0)
        starts.append(len(cum))
    return (group_cards, group_start, np.array(starts, np.int64), np.array(cum),
            np.array(counts, np.int64).reshape(-1, 4), np.array(nxt, np.int64), total)


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


def sample_worlds(unseen, n_h, sizes, forbidden, need, counter_mask, seeds, fact, out, totals):
    """:func:`deal_tables` and :func:`draw_deals` for decisions ``j``: ``out[j]`` (k, 4) the deals of decision
    ``j`` drawn from seed ``seeds[j]``, ``totals[j]`` its number of consistent deals (0.0: none, no deals)."""
    k = out.shape[1]
    for j in range(unseen.shape[0]):
        (group_cards, group_start, state_start, split_cum, split_counts, split_next,
         total) = _deal_tables(unseen[j], n_h[j], sizes[j], forbidden[j], need[j], counter_mask, fact)
        totals[j] = total
        if total > 0.0:
            _draw_deals(seeds[j], k, group_cards, group_start, state_start, split_cum, split_counts, split_next,
                        out[j])


_deal_tables = None  # compiled deal_tables and draw_deals, read by sample_worlds when numba compiles it
_draw_deals = None
_sample_worlds = None
_FACT = np.array([float(math.factorial(i)) for i in range(64)])


def holder_arrays(holders_list: Sequence[Sequence[Holder]]) -> tuple[np.ndarray, ...]:
    """``(n_h, sizes, forbidden, need, who)`` of many decisions' holders (:func:`.worlds.holders_for`), as
    arrays of 4 columns (unused columns: size 0, who -1)."""
    J = len(holders_list)
    n_h = np.empty(J, np.int64)
    sizes = np.zeros((J, 4), np.int64)
    forbidden = np.zeros((J, 4), U64)
    need = np.full(J, -1, np.int64)
    who = np.full((J, 4), -1, np.int64)
    for j, hs in enumerate(holders_list):
        n_h[j] = len(hs)
        for i, h in enumerate(hs):
            sizes[j, i] = h.size
            forbidden[j, i] = h.forbidden
            who[j, i] = h.who
            if h.needs_counter:
                need[j] = i
    return n_h, sizes, forbidden, need, who


def sample_many(unseen: Sequence[int], holders_list: Sequence[Sequence[Holder]], counter_mask: int, k: int,
                seeds: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """``(deals, ok)``: ``deals[j]`` (k, 4) uint64, ``k`` deals of decision ``j``'s ``unseen`` cards among its
    holders drawn uniformly (as :meth:`.worlds.WorldSampler.sample`) in compiled code, a function of
    ``seeds[j]`` (0 .. 2**32 - 1) and the constraints; ``ok[j]``: some deal is consistent (else no deals)."""
    global _deal_tables, _draw_deals, _sample_worlds
    if _sample_worlds is None:
        _deal_tables, _draw_deals = jit(deal_tables), jit(draw_deals)
        _sample_worlds = jit(sample_worlds)
    J = len(unseen)
    n_h, sizes, forbidden, need, _ = holder_arrays(holders_list)
    out = np.zeros((J, k, 4), U64)
    totals = np.zeros(J)
    _sample_worlds(np.array(unseen, U64).reshape(J), n_h, sizes, forbidden, need, U64(counter_mask),
                   np.array(seeds, np.int64).reshape(J), _FACT, out, totals)
    return out, totals > 0.0


def sample_deals(unseen: int, holders: Sequence[Holder], counter_mask: int, k: int, seed: int) -> np.ndarray:
    """``(k, len(holders))`` uint64: one decision's :func:`sample_many` (raises ``ValueError`` as
    :class:`.worlds.WorldSampler` does when no deal is consistent)."""
    deals, ok = sample_many([unseen], [holders], counter_mask, k, [seed])
    if not ok[0]:
        raise ValueError("no deal of the unseen cards satisfies the constraints (sizes, voids, nest)")
    return deals[0, :, :len(holders)]


def world_cards(template_cards: np.ndarray, who: np.ndarray, deals: np.ndarray) -> np.ndarray:
    """``(J, k, 6)`` uint64 hands of seats 0..3, nest and discards of the worlds of ``J`` decisions: each
    decision's template cards ``template_cards[j]`` (6,) with its deals ``deals[j]`` (k, 4) written over the
    cards of their holders ``who[j]`` (:func:`holder_arrays`; as :func:`.worlds.make_world`, the nest as
    picked up is unknown, so a nest deal is both nest and discards)."""
    J, k = deals.shape[:2]
    out = np.repeat(template_cards[:, None, :], k, axis=1)
    for i in range(who.shape[1]):
        rows = np.flatnonzero(who[:, i] >= 0)
        col = who[rows, i]
        out[rows, :, col] = deals[rows, :, i]
        nest = rows[col == NEST]
        out[nest, :, N_SEATS + 1] = deals[nest, :, i]
    return out

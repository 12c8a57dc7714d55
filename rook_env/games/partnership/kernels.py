"""Compiled kernels for the batched engine's hot paths (optional: needs ``numba``).

:class:`rook_env.games.partnership.vector.PartnershipVectorEnv` (the partnership game's batched
engine) runs on numpy alone; with ``backend="numba"`` (or ``"auto"`` where numba is installed:
``pip install rook_env[fast]``) three of its per-step passes run as one loop over tables each,
compiled by numba, instead of a few dozen numpy calls:

- :func:`play_cards`: the play phase of ``PartnershipVectorEnv._step_play`` (a card leaves the hand,
  enters the trick in every seat's observation; a full trick is resolved, scored and cleared);
- :func:`refresh`: ``PartnershipVectorEnv._refresh``, the legal actions (as bits and as the int8
  mask) and the float32 observation of the seat to act at every table;
- ``pick_legal``: :func:`rook_env.core.kernels.pick_legal`, :func:`rook_env.vector.sample_legal`'s choice.

The numpy code in ``rook_env/vector/partnership.py`` is the reference: every kernel mirrors one numpy method
line for line, and ``tests/test_vector.py`` plays both backends in lock-step with ``raw_env``
(bitwise observations, masks, rewards and hand facts, every rule flag). Why compiled: at
N = 1024 tables most of a numpy step is the fixed cost of many small array calls and the
temporaries between them; a fused loop touches each table's few words once.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from rook_env.core.kernels import AVAILABLE, compiled_pick_legal, jit

from .rules import BID, DISCARD, PLAY, TRUMP

__all__ = ["AVAILABLE", "compiled", "play_cards", "refresh"]

_compiled: SimpleNamespace | None = None


def compiled() -> SimpleNamespace:
    """The compiled kernels (``play_cards``, ``refresh``, and the core's ``pick_legal``); needs numba."""
    global _compiled
    if _compiled is None:
        _compiled = SimpleNamespace(play_cards=jit(play_cards), refresh=jit(refresh), pick_legal=compiled_pick_legal())
    return _compiled


def play_cards(p, c, current, hands_flat, trick_flat, hand_state, points_flat, tricks_won_flat,
               discards, flat, num_flat, card_bit, card_off, card_val, play_off, eff, power_flat,
               card_points, rel_one_hot, all_rows, totals_div, ints, ended, observe=True):
    """``PartnershipVectorEnv._step_play`` for tables ``p`` playing cards ``c``; writes the tables whose
    hand ended into ``ended`` (in ``p``'s order) and returns their number. ``observe=False``: the state
    only, no observation written (search's play-outs, which inline this with the constant False, so that
    the compiler drops those writes: half the time per card).

    ``hand_state`` columns as ``HAND_STATE_INIT``; ``ints``: D, n_cards, n_tricks, n_colours,
    black_two, rook, LEADER offset, NUM_SIZE, the hand_state columns of leader, trick_len,
    n_tricks, last_trick_team, call."""
    D, n, n_tr, n_col, black_two, rook, leader_off, num_size = (
        ints[0], ints[1], ints[2], ints[3], ints[4], ints[5], ints[6], ints[7])
    LEADER, TRICK_LEN, N_TRICKS, LAST_TEAM, CALL = ints[8], ints[9], ints[10], ints[11], ints[12]
    n_ended = 0
    block = 4 * D
    for j in range(p.shape[0]):
        t = p[j]
        card = c[j]
        s = current[t]
        row = t * 4
        row0 = t * block
        hands_flat[row + s] ^= card_bit[card]
        if observe:
            for k in range(card_off.shape[1]):  # leaves the hand, enters trick and played
                flat[row0 + card + card_off[s, k]] = card_val[k]
        tl = hand_state[t, TRICK_LEN]
        trick_flat[row + tl] = card
        tl += 1
        hand_state[t, TRICK_LEN] = tl & 3
        current[t] = (s + 1) & 3
        if tl != 4:
            continue
        k_call = hand_state[t, CALL]
        led = eff[k_call * n + trick_flat[row]]
        base = (k_call * n_col + led) * n
        win = 0
        best = power_flat[base + trick_flat[row]]
        for i in range(1, 4):  # argmax: the first of the highest
            pw = power_flat[base + trick_flat[row + i]]
            if pw > best:
                best = pw
                win = i
        if black_two >= 0 and trick_flat[row + win] == rook:
            for i in range(4):
                if trick_flat[row + i] == black_two:
                    win = i
                    break
        old_leader = hand_state[t, LEADER]
        winner = (old_leader + win) & 3
        team = winner & 1
        total = 0
        for i in range(4):
            total += card_points[trick_flat[row + i]]
        points_flat[2 * t + team] += total
        tricks_won_flat[2 * t + team] += 1
        nt = hand_state[t, N_TRICKS] + 1
        hand_state[t, N_TRICKS] = nt
        if nt == n_tr:  # the last trick also takes the nest (the discards)
            hand_state[t, LAST_TEAM] = team
            d = discards[t]
            nest_pts = 0
            for b in range(n):
                if (d >> np.uint64(b)) & np.uint64(1):
                    nest_pts += card_points[b]
            points_flat[2 * t + team] += nest_pts
            ended[n_ended] = t
            n_ended += 1
        hand_state[t, LEADER] = winner
        current[t] = winner
        if not observe:
            continue
        for i in range(4):  # clear the trick in every seat's row
            by = (old_leader + i) & 3
            cd = trick_flat[row + i]
            for me in range(4):
                flat[row0 + cd + play_off[by, me]] = 0
        for me in range(4):  # the leader (relative) in every seat's row
            for r in range(4):
                flat[row0 + all_rows[me] + leader_off + r] = rel_one_hot[winner, me, r]
        # _write_totals: counters, tricks won, tricks left per team, float64 division then float32
        left = n_tr - nt
        nb = t * 2 * num_size
        p0, p1 = points_flat[2 * t], points_flat[2 * t + 1]
        w0, w1 = tricks_won_flat[2 * t], tricks_won_flat[2 * t + 1]
        vals = (p0, p1, w0, w1, left, p1, p0, w1, w0, left)
        for i in range(5):
            num_flat[nb + i] = np.float32(vals[i] / totals_div[i])
            num_flat[nb + num_size + i] = np.float32(vals[5 + i] / totals_div[5 + i])
    return n_ended

def refresh(phase, current, hands_flat, trick_len, trick_flat, call, n_passed, high_bid, circus,
            follow, follow_plus, phase_cards, pass_and_bids_above, call_trumps, u64s, ints,
            obs2d, num2d, counters_col, legal, mask, out):
    """``PartnershipVectorEnv._refresh``: ``legal`` ``(N, words)`` bits, ``mask`` ``(N, A)`` int8 and ``out``
    ``(N, D)`` float32 of the seat to act at every table.

    ``u64s``: no_counter, counter_mask, bid0_bit, redeal_bit, trump_bits, circus_bit;
    ``ints``: n_cards, free_key, extra_shift, german, no_counter_redeal, circus_on."""
    no_counter, counter_mask, bid0_bit, redeal_bit, trump_bits, circus_bit = (
        u64s[0], u64s[1], u64s[2], u64s[3], u64s[4], u64s[5])
    n, free_key, shift, german, redeal_on, circus_on = ints[0], ints[1], ints[2], ints[3], ints[4], ints[5]
    zero = np.uint64(0)
    n_words = legal.shape[1]
    A = mask.shape[1]
    D = obs2d.shape[1]
    W = num2d.shape[1]
    for t in range(phase.shape[0]):
        ph = phase[t]
        cur = current[t]
        hand = hands_flat[t * 4 + cur]
        if ph == PLAY:
            key = call[t] * n + trick_flat[t * 4] if trick_len[t] > 0 else free_key
            if hand & follow[key] != zero:
                cards = hand & follow_plus[key]
            else:
                cards = hand
            cards &= phase_cards[ph]
        else:
            cards = hand & phase_cards[ph]
        if german and ph == DISCARD:  # counters only when every card left is a counter or a trump
            free = hand & no_counter
            cards = free if (free & ~call_trumps[call[t]]) != zero else hand
        extra = zero
        if ph == BID:
            if n_passed[t] == 3 and high_bid[t] < 0:
                extra = bid0_bit
            else:
                extra = pass_and_bids_above[high_bid[t] + 1]
            if redeal_on and (hand & counter_mask) == zero:
                extra |= redeal_bit
        elif ph == TRUMP:
            extra = trump_bits
            if circus_on and not circus[t]:
                extra |= circus_bit
        legal[t, 0] = cards | (extra << np.uint64(shift))
        if n_words > 1:
            legal[t, 1] = extra >> np.uint64(64 - shift)
        for a in range(A):
            mask[t, a] = np.int8((legal[t, a >> 6] >> np.uint64(a & 63)) & np.uint64(1))
        r = t * 4 + cur
        for j in range(D):
            out[t, j] = obs2d[r, j]
        tr = t * 2 + (cur & 1)
        for j in range(W):
            out[t, counters_col + j] = num2d[tr, j]

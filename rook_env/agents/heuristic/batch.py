"""The heuristic's card play for many seats at once, in numpy arrays (rows x cards).

The twin of play.py: the same float expressions, evaluated in the same order for
every (row, card), so that each row gets exactly the card ``choose_card`` gives (tests check it
over many thousands of decisions). Card sets are int64 bitmasks (at most 57 cards).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Callable

import numpy as np

from rook_env.games.partnership.rules import PLAY

from .play import (
    DEF_TRUMP, DRAW_LONG, DRAW_PARTNER, DRAW_SURE, EXTRA, K_MASTER, K_MASTER_SAFE, K_NEST, K_ROOK, K_SECOND,
    K_TOP_TRUMP, K_TRUMP, K_TRUMP1, K_VOID, NEST_IF_COUNTERS, SURE, TIE, Memory,
)
from .tables import CardTables, SeatReader



def _popcount(masks: np.ndarray) -> np.ndarray:
    """Set bits per element, as int64 (np.bitwise_count gives uint8)."""
    return np.bitwise_count(masks).astype(np.int64)


class BatchCardPlay:
    """Reads observations into arrays and chooses cards for the rows in regular card play."""

    def __init__(self, tab: CardTables, reader: SeatReader) -> None:
        self.tab = tab
        self.reader = reader
        self.ol = reader.ol
        n = tab.n_cards
        self.n = n
        self.cards = np.arange(n, dtype=np.int64)
        self.colour = np.array(tab.colour, np.int64)
        self.rook_high = tab.rook_high
        self.rook_bit = np.int64(tab.rook_bit)
        self.can_show = np.int64(tab.all_cards & ~(tab.rook_bit if tab.rook_high else 0))
        self.all_cards = np.int64(tab.all_cards)
        self.counter_mask = np.int64(tab.counter_mask)

    def __deepcopy__(self, memo: dict) -> BatchCardPlay:
        return self  # holds no state of its own

    # ---------------------------------------------------------------- reading
    def select(self, obs: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, list[int]]:
        """Rows decided in arrays (card play, a legal card, a regular trick) and the other rows."""
        ol, n = self.ol, self.n
        on = obs > 0.5
        phase = on[:, ol.PHASE:ol.PHASE + 5]
        playing = phase[:, PLAY] & ~phase[:, :PLAY].any(axis=1)
        legal_cards = masks[:, :n] != 0
        # a legal card outside the hand: only a malformed observation; the scalar path copes with it
        in_hand = ~(legal_cards & ~on[:, ol.HAND:ol.HAND + n]).any(axis=1)
        has_card = legal_cards.any(axis=1) & in_hand
        trick = self.reader.section_masks(on, ol.TRICK, 4, n)
        one_each = (_popcount(trick) <= 1).all(axis=1)
        leader = _first_set(on[:, ol.LEADER:ol.LEADER + 4])
        present = ((trick != 0) * np.array([1, 2, 4, 8])).sum(axis=1)
        count = _popcount(present)
        expected = _rotate4((1 << count) - 1, np.maximum(leader, 0))
        regular = one_each & ((present == 0) | ((leader >= 0) & (present == expected)))
        chosen = playing & has_card & regular
        if self.tab.layout.n_contracts > 4:  # low and no-trump calls: the scalar path (choose_card_generic)
            chosen &= ~on[:, ol.TRUMP + 4:ol.TRUMP + self.tab.layout.n_contracts].any(axis=1)
        return np.flatnonzero(chosen), np.flatnonzero(~chosen).tolist()

    def _read(self, obs: np.ndarray, masks: np.ndarray) -> SimpleNamespace:
        ol, n, reader = self.ol, self.n, self.reader
        on = obs > 0.5
        v = SimpleNamespace()
        v.hand = reader.section_masks(on, ol.HAND, 1, n)[:, 0]
        v.played = reader.section_masks(on, ol.PLAYED, 4, n)
        v.played_all = np.bitwise_or.reduce(v.played, axis=1)
        v.nest = reader.section_masks(on, ol.NEST, 1, n)[:, 0]
        v.discards = reader.section_masks(on, ol.DISCARDS, 1, n)[:, 0]
        trick = reader.section_masks(on, ol.TRICK, 4, n)
        v.trick_all = np.bitwise_or.reduce(trick, axis=1)
        v.leader = np.maximum(_first_set(on[:, ol.LEADER:ol.LEADER + 4]), 0)
        v.trump = np.maximum(_first_set(on[:, ol.TRUMP:ol.TRUMP + 4]), 0)
        v.bidder = _first_set(on[:, ol.BIDDER:ol.BIDDER + 4])
        v.nest_counters = on[:, ol.NEST_COUNTERS]
        nt = self.tab.n_tricks
        v.tricks_won = np.rint(obs[:, ol.TRICKS_WON:ol.TRICKS_WON + 2].astype(np.float64) * nt).astype(np.int64)
        v.tricks_left = np.rint(obs[:, ol.TRICKS_LEFT].astype(np.float64) * nt).astype(np.int64)
        v.present = trick != 0  # (R, 4) by rel seat
        v.position = v.present.sum(axis=1)
        # the trick in play order: rel seat and card of the k-th card (card -1 when not yet played)
        rows = np.arange(obs.shape[0])
        v.trick_rel = (v.leader[:, None] + np.arange(4)) & 3
        by_order = trick[rows[:, None], v.trick_rel]
        v.trick_card = np.where(by_order != 0, _popcount(by_order - 1), -1)
        v.legal = masks[:, :n] != 0
        return v

    # ---------------------------------------------------------------- choosing
    def choose(self, obs: np.ndarray, masks: np.ndarray,
               recall: Callable[[list[int]], list[Memory | None]]) -> tuple[np.ndarray, list[Memory]]:
        """Cards (R,) for rows returned by :meth:`select`, and each row's memory to file;
        ``recall(hands)`` gives the rows' memories from their hands."""
        tab = self.tab
        v = self._read(obs, masks)
        memories = recall(v.hand.tolist())
        R = obs.shape[0]
        rows = np.arange(R)
        at = rows[:, None]
        trump = v.trump
        eff = tab.effective_suit_array[trump]  # (R, n) by card id
        suit = tab.suit_array[trump]  # (R, 4)
        trumps = suit[rows, trump]
        higher = tab.higher_array[trump]  # (R, n) by card id
        hand = v.hand
        # columns: the cards in hand, ascending (legal cards are among them), padded with unheld ones
        held = ((hand[:, None] >> self.cards) & 1) != 0
        width = max(int(held.sum(axis=1).max()), 1)
        cards = np.argsort(~held, axis=1, kind="stable")[:, :width]  # (R, width) card ids
        legal = v.legal[at, cards] & held[at, cards]
        eff_c = eff[at, cards]
        higher_c = higher[at, cards]
        points = tab.points_array[cards]
        voids = self._voids(v, memories, trump, eff, suit)
        unseen = self.all_cards & ~hand & ~v.played_all & ~v.nest & ~v.discards
        position = v.position
        tricks_left = v.tricks_left
        # hypergeometric rows p_none[r][k] of the other seats (r = 1..3), voids excluded from their pools
        pool = np.repeat(unseen[:, None], 4, axis=1)
        for s in range(4):
            pool &= np.where(voids >> s & 1, ~suit[:, s:s + 1], np.int64(-1))
        sizes = np.maximum(tricks_left[:, None] - v.present, 0)
        p_none = tab.p_none_array[_popcount(pool), sizes]  # (R, 4, n + 1)
        odds = _Odds(self, rows, trump, eff, suit, trumps, higher, pool, voids, p_none)

        n_unseen = _popcount(unseen)
        unseen_points = self._points(unseen & self.counter_mask)
        safe_n = np.maximum(n_unseen, 1)
        mean_counter = np.where(n_unseen > 0, unseen_points / safe_n, 0.0)
        nest_value = self._nest_value(v, unseen_points, n_unseen, safe_n)
        trick_points = self._points(v.trick_all).astype(np.float64)
        trick_points = np.where(tricks_left <= 1, trick_points + nest_value, trick_points)
        cfg = tab.config
        if cfg.majority_tricks_bonus:
            open_majority = v.tricks_won.max(axis=1) * 2 <= tab.n_tricks
            trick_points = np.where(open_majority, trick_points + 2.0 * cfg.majority_tricks_bonus / tab.n_tricks,
                                    trick_points)
        extra = EXTRA * mean_counter * (3 - position)
        my_trumps = hand & trumps
        opp_trumps = unseen & trumps & (pool[:, 1] | pool[:, 3])
        keep = self._keep_values(v, odds, cards, eff_c, higher_c, suit, trumps, unseen, my_trumps, opp_trumps,
                                 nest_value, mean_counter, points)

        p = self._p_take(v, odds, rows, cards, eff, eff_c, trump, position)
        pos = position[:, None]

        score = (2.0 * p - 1.0) * (trick_points[:, None] + points + extra[:, None]) - keep
        bonus = self._lead_bonus(v, p, eff_c, trump, my_trumps, opp_trumps, points)
        score = np.where(pos == 0, score + bonus, score)
        score = score - 0.01 * tab.rank_power_array[cards]
        chosen = cards[rows, np.argmax(np.where(legal, score, -np.inf), axis=1)]

        after = hand & ~(np.int64(1) << chosen)
        lead = np.where(position > 0, v.trick_card[:, 0], -1)
        filed = [
            Memory(h, tuple(pl), ld, tuple(vd))
            for h, pl, ld, vd in zip(after.tolist(), v.played.tolist(), lead.tolist(), voids.tolist())
        ]
        return chosen, filed

    def _p_take(self, v: SimpleNamespace, odds: _Odds, rows: np.ndarray, cards: np.ndarray, eff: np.ndarray,
                eff_c: np.ndarray, trump: np.ndarray, position: np.ndarray) -> np.ndarray:
        """(R, width): the chance that this side takes the trick with each card, leading or following."""
        R = rows.shape[0]
        # chance that this side takes the trick, per card
        led_now = eff[rows, np.maximum(v.trick_card[:, 0], 0)]
        led = np.where(position[:, None] == 0, eff_c, led_now[:, None])
        q1 = odds.p_beat(1, cards, led)
        q2 = odds.p_beat(2, cards, led)
        q3 = odds.p_beat(3, cards, led)
        p_mine = (1.0 - q1) * (1.0 - q3)
        p_lead = np.where(p_mine > 0.999, p_mine, p_mine + (1.0 - p_mine) * q2 / (q1 + q2 + q3 + TIE))
        # following: the current winner of the trick
        power = np.full((R, 4), -np.inf)
        for k in range(4):
            card_k = np.maximum(v.trick_card[:, k], 0)
            power[:, k] = np.where(v.trick_card[:, k] >= 0, self._strength(trump, card_k, led_now), -np.inf)
        first = np.argmax(power, axis=1)
        win_power = power[rows, first]
        win_rel = v.trick_rel[rows, first]
        win_card = np.maximum(v.trick_card[rows, first], 0)[:, None]
        ours = (win_rel == 0) | (win_rel == 2)
        b1 = odds.p_beat(1, win_card, led_now[:, None])[:, 0]
        b2 = odds.p_beat(2, win_card, led_now[:, None])[:, 0]
        p_lose = np.select(
            [position == 3, position == 2],
            [np.where(ours, 1.0, 0.0), np.where(ours, 1.0 - b1, 0.0)],
            np.where(ours, 1.0 - b1 * (1.0 - 0.5 * b2), b2 * (1.0 - 0.3 * b1)),
        )
        pos = position[:, None]
        p_win = np.select([pos == 3, pos == 2], [1.0, 1.0 - q1], 1.0 - q1 * (1.0 - 0.5 * q2))
        beats = self._strength(trump[:, None], cards, led_now[:, None]) > win_power[:, None]
        p = np.where(pos == 0, p_lead, np.where(beats, p_win, p_lose[:, None]))
        return p

    def _voids(self, v: SimpleNamespace, memories: list[Memory | None], trump: np.ndarray, eff: np.ndarray,
               suit: np.ndarray) -> np.ndarray:
        """known_voids for every row: remembered, the trick played to last, the current trick."""
        R = len(memories)
        rows = np.arange(R)
        none = Memory(-1, (0, 0, 0, 0), -1, (0, 0, 0, 0))
        table = [none if m is None else m for m in memories]
        m_hand = np.array([m.hand for m in table], np.int64)
        m_played = np.array([m.played for m in table], np.int64).reshape(R, 4)
        m_lead = np.array([m.lead for m in table], np.int64)
        m_voids = np.array([m.voids for m in table], np.int64).reshape(R, 4)
        before = np.bitwise_or.reduce(m_played, axis=1)
        valid = (m_hand == v.hand) & (before & ~v.played_all == 0)
        voids = np.where(valid[:, None], m_voids, 0)
        mine = v.played[:, 0] & ~m_played[:, 0]
        single = valid & (_popcount(mine) == 1)
        lead_card = np.where(m_lead >= 0, m_lead, _popcount(np.where(single, mine, 1) - 1))
        led = eff[rows, np.clip(lead_card, 0, self.n - 1)]
        off = self.can_show & ~suit[rows, led] & ~v.trick_all
        for r in (1, 2, 3):
            shown = single & ((v.played[:, r] & ~m_played[:, r] & off) != 0)
            voids[:, r] |= np.where(shown, np.int64(1) << led, 0)
        first = v.trick_card[:, 0]
        led_now = eff[rows, np.maximum(first, 0)]
        for k in (1, 2, 3):
            card = v.trick_card[:, k]
            safe = np.maximum(card, 0)
            shown = (card >= 0) & (eff[rows, safe] != led_now) & ((self.can_show >> safe & 1) != 0)
            rel = v.trick_rel[:, k]
            voids[rows, rel] |= np.where(shown, np.int64(1) << led_now, 0)
        return voids

    def _points(self, mask: np.ndarray) -> np.ndarray:
        """Points (int64) of each card set in ``mask`` (R,)."""
        total = np.zeros(mask.shape, np.int64)
        for value, cards in self.tab.counters_by_value:
            total += value * _popcount(mask & cards)
        return total

    def _strength(self, trump: np.ndarray, card: np.ndarray, led: np.ndarray) -> np.ndarray:
        tab = self.tab
        power = tab.trump_power_array[trump, card]
        side = np.where(self.colour[card] == led, tab.rank_power_array[card], -1.0)
        return np.where(power >= 0, power, side)

    def _nest_value(self, v: SimpleNamespace, unseen_points: np.ndarray, n_unseen: np.ndarray,
                    safe_n: np.ndarray) -> np.ndarray:
        tab = self.tab
        if tab.config.nest_discard == "no_counters_unless_forced":
            others = np.where(v.nest_counters, NEST_IF_COUNTERS * tab.scale, 0.0)
        else:
            others = np.where(n_unseen > 0, 5.0 * unseen_points / safe_n, 0.0)
        value = np.where(v.bidder == 0, self._points(v.discards).astype(np.float64), others)
        return value + tab.config.last_trick_bonus

    def _keep_values(self, v, odds, cards, eff, higher, suit, trumps, unseen, my_trumps, opp_trumps,
                     nest_value, mean_counter, points) -> np.ndarray:
        """Keep values (R, width) of the column cards; ``eff``, ``higher``, ``points`` are per column."""
        tab = self.tab
        R = eff.shape[0]
        rows = np.arange(R)
        trump = v.trump
        is_trump = eff == trump[:, None]
        # three tricks or more left
        n_above = _popcount(higher & unseen[:, None])
        k_trump = np.where(n_above == 0, K_TOP_TRUMP, np.where(n_above == 1, K_TRUMP1, K_TRUMP))
        if self.rook_high:
            k_trump = np.where(cards == tab.rook, K_ROOK, k_trump)
        mine = (my_trumps[:, None] >> cards & 1) != 0
        power = np.where(mine, tab.trump_power_array[trump[:, None], cards], -np.inf)
        top_trump = cards[rows, np.argmax(power, axis=1)]
        top = (cards == top_trump[:, None]) & (my_trumps != 0)[:, None] & (nest_value > 0)[:, None]
        k_trump = np.where(top, k_trump + K_NEST * nest_value[:, None], k_trump)
        master = np.where(((opp_trumps != 0) | (my_trumps == 0))[:, None], K_MASTER, K_MASTER_SAFE)
        k_side = np.where(n_above == 0, master, np.where(n_above == 1, K_SECOND, 0.0))
        in_suit = _popcount(hand_suits(v.hand, suit)[rows[:, None], eff])
        k_side = np.where((my_trumps != 0)[:, None] & (in_suit == 1), k_side - K_VOID, k_side)
        keep = np.where(is_trump, k_trump, k_side) * tab.scale
        # two tricks left: what the card brings to the last trick
        last = odds.last_trick()
        q1 = last.holds_any(1, higher)
        q2 = last.holds_any(2, higher)
        q3 = last.holds_any(3, higher)
        p_mine = (1.0 - q1) * (1.0 - q3)
        p_trump = p_mine + (1.0 - p_mine) * q2 / (q1 + q2 + q3 + TIE)
        above = higher | trumps[:, None]
        s1 = last.holds_any(1, above)
        s3 = last.holds_any(3, above)
        wins = 0.5 * (1.0 - s1) * (1.0 - s3)
        p_side = wins + (1.0 - wins) / 3.0
        p_last = np.where(is_trump, p_trump, p_side)
        base = nest_value + 3.0 * mean_counter
        keep_two = (2.0 * p_last - 1.0) * (base[:, None] + points)
        tl = v.tricks_left[:, None]
        return np.where(tl <= 1, 0.0, np.where(tl == 2, keep_two, keep))

    def _lead_bonus(self, v, p, eff, trump, my_trumps, opp_trumps, points) -> np.ndarray:
        scale = self.tab.scale
        n_mine = _popcount(my_trumps)[:, None]
        n_opp = _popcount(opp_trumps)[:, None]
        long = (n_mine >= 3) & (n_mine >= n_opp / 2)
        bidder_bonus = np.where(p > SURE, DRAW_SURE * scale,
                                np.where(long, (DRAW_LONG - 0.3 * points) * scale, 0.0))
        partner_bonus = np.where(p > SURE, DRAW_PARTNER * scale, 0.0)
        defender_bonus = np.where(p < SURE, DEF_TRUMP * scale, 0.0)
        bidder = v.bidder[:, None]
        bonus = np.where(bidder == 0, bidder_bonus, np.where(bidder == 2, partner_bonus, defender_bonus))
        applies = (eff == trump[:, None]) & (opp_trumps != 0)[:, None]
        return np.where(applies, bonus, 0.0)


class _Odds:
    """play._Odds for every row: p_none rows per seat, card sets (R, m) or (R, 1)."""

    def __init__(self, play: BatchCardPlay, rows, trump, eff, suit, trumps, higher, pool, voids, p_none) -> None:
        self.play = play
        self.rows = rows[:, None]
        self.trump = trump
        self.eff = eff
        self.suit = suit
        self.trumps = trumps
        self.higher = higher
        self.pool = pool
        self.voids = voids
        self.p_none = p_none

    def last_trick(self) -> _Odds:
        """The same pools with one card each (the last trick)."""
        p_none = self.play.tab.p_none_array[_popcount(self.pool), np.ones_like(self.pool)]
        return _Odds(self.play, self.rows[:, 0], self.trump, self.eff, self.suit, self.trumps, self.higher,
                     self.pool, self.voids, p_none)

    def holds_any(self, r: int, cards: np.ndarray) -> np.ndarray:
        k = _popcount(cards & self.pool[:, r:r + 1])
        return 1.0 - self.p_none[self.rows, r, k]

    def p_void(self, r: int, s: np.ndarray) -> np.ndarray:
        in_suit = _popcount(self.pool[:, r:r + 1] & self.suit[self.rows, s])
        return np.where((self.voids[:, r:r + 1] >> s & 1) != 0, 1.0, self.p_none[self.rows, r, in_suit])

    def p_beat(self, r: int, winner: np.ndarray, led: np.ndarray) -> np.ndarray:
        """Chance that seat ``r`` can beat the card ``winner`` (R, m) of a trick led in ``led`` (R, m)."""
        play = self.play
        rook_bit = play.rook_bit
        above = self.higher[self.rows, winner] & self.pool[:, r:r + 1]
        trump = self.trump[:, None]
        p_void = self.p_void(r, led)
        if play.rook_high:
            p_rook_above = self.holds_any(r, above & rook_bit)
            p_rook = self.holds_any(r, np.full((above.shape[0], 1), rook_bit))
            trumps = self.trumps & ~rook_bit
        else:
            p_rook_above = p_rook = np.zeros((above.shape[0], 1))
            trumps = self.trumps
        led_trump = self.holds_any(r, above)
        off_trump = p_rook_above + (1.0 - p_rook_above) * p_void * self.holds_any(r, above & ~rook_bit)
        p_follow = led_trump  # the same set: cards of the winner's suit above it
        p_ruff = p_void * self.holds_any(r, trumps[:, None])
        side = 1.0 - (1.0 - p_rook) * (1.0 - p_follow) * (1.0 - p_ruff)
        is_trump = self.eff[self.rows, winner] == trump
        out = np.where(is_trump, np.where(led == trump, led_trump, off_trump), side)
        if play.rook_high:
            out = np.where(winner == play.tab.rook, 0.0, out)
        return out


def hand_suits(hand: np.ndarray, suit: np.ndarray) -> np.ndarray:
    """Cards of each effective suit in each hand (R, 4)."""
    return hand[:, None] & suit


def _first_set(bits: np.ndarray) -> np.ndarray:
    """Index of the first True per row (-1 when none)."""
    return np.where(bits.any(axis=1), np.argmax(bits, axis=1), -1)


def _rotate4(mask: np.ndarray, by: np.ndarray) -> np.ndarray:
    """Rotate 4-bit masks left by ``by`` (rel seats counted from the leader)."""
    return ((mask << by) | (mask >> (4 - by))) & 0b1111

"""The heuristic's fixed tables (card facts per trump colour, hypergeometric odds) and its
observation reader (a seat's observation as integer bitmasks).

Everything here depends only on the configuration, so it is built once per configuration
(:func:`card_tables`, :func:`seat_reader`) and shared by every :class:`HeuristicAgent`.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from rook_env.games.partnership.cards import N_COLOURS, N_SEATS, bits, layout_for
from rook_env.games.partnership.config import RookConfig
from rook_env.games.partnership.observation import obs_layout
from rook_env.games.partnership.rules import BID, TRUMP_POWER, contract_tables

TRUMP_BASE_POWER = TRUMP_POWER  # a trump's power is this plus its rank power (rules.ContractTables)


class CardTables:
    """Card facts that do not change during a hand, per trump colour ``T`` (0..3).

    Card sets are ``int`` bitmasks over card ids. The *effective suit* of a card is its colour,
    except the Rook Bird (and a little-rook red 2), which belongs to the trump colour. The tables
    are those of the rules' colour calls *high* (``rook_env.games.partnership.rules.ContractTables``, calls 0..3);
    low and no-trump calls are played by :func:`rook_env.agents.heuristic.play.choose_card_generic`.
    """

    def __init__(self, config: RookConfig) -> None:
        layout = layout_for(config)
        self.layout = layout
        self.config = config
        n_cards = layout.n_cards
        self.n_cards = n_cards
        self.rook = layout.rook
        self.rook_bit = layout.rook_bit
        self.rook_high = config.rook_rank == "high"
        self.points = layout.card_points
        self.colour = layout.card_colour
        self.rank_power = layout.rank_order
        self.colour_mask = layout.colour_mask
        self.counter_mask = layout.counter_mask
        self.all_cards = layout.all_cards
        self.total_points = layout.total_points
        self.scale = layout.total_points / 120.0  # weights are written on the 120-point tournament scale
        self.hand_size = layout.hand_size
        self.n_tricks = layout.n_tricks
        # (value, cards worth it) per counter value: points of a card set in a few popcounts
        self.counters_by_value = tuple(
            (value, sum(1 << c for c in range(n_cards) if self.points[c] == value))
            for value in sorted(set(self.points) - {0})
        )
        # suit[T][s]: cards of effective suit s; effective_suit[T][c]; trump_power[T][c] (-1: not a trump);
        # higher[T][c]: cards of c's effective suit that beat c; order[T][s]: suit s strongest first.
        self.suit: list[tuple[int, ...]] = []
        self.effective_suit: list[tuple[int, ...]] = []
        self.trump_power: list[tuple[float, ...]] = []
        self.higher: list[tuple[int, ...]] = []
        self.order: list[tuple[tuple[int, ...], ...]] = []
        self.contracts = ct = contract_tables(config)
        for trump in range(N_COLOURS):  # the call "trump colour, high"
            eff = ct.eff[trump]
            suit = tuple(sum(1 << c for c in range(n_cards) if eff[c] == s) for s in range(N_COLOURS))
            by_led = ct.power[trump][0]
            tpow = tuple(by_led[c] if eff[c] == trump else -1.0 for c in range(n_cards))
            power = [tpow[c] if tpow[c] >= 0 else float(self.rank_power[c]) for c in range(n_cards)]
            higher = tuple(
                sum(1 << d for d in bits(suit[eff[c]]) if power[d] > power[c]) for c in range(n_cards)
            )
            order = tuple(tuple(sorted(bits(suit[s]), key=lambda c: -power[c])) for s in range(N_COLOURS))
            self.suit.append(suit)
            self.effective_suit.append(eff)
            self.trump_power.append(tpow)
            self.higher.append(higher)
            self.order.append(order)
        # p_none[pool][drawn][k]: chance that `drawn` cards taken at random from `pool` unseen cards
        # miss `k` given ones (hypergeometric), for every size that can occur.
        self.p_none = _p_none_table(n_cards, self.hand_size)
        # The same tables as arrays, for the batched card play.
        self.p_none_array = np.array(self.p_none, np.float64)
        self.suit_array = np.array(self.suit, np.int64)  # (4 trumps, 4 suits)
        self.higher_array = np.array(self.higher, np.int64)  # (4, n_cards)
        self.effective_suit_array = np.array(self.effective_suit, np.int64)
        self.trump_power_array = np.array(self.trump_power, np.float64)
        self.points_array = np.array(self.points, np.float64)
        self.rank_power_array = np.array(self.rank_power, np.float64)
        self.card_bits = np.left_shift(np.int64(1), np.arange(n_cards, dtype=np.int64))

    def __deepcopy__(self, memo: dict) -> CardTables:
        return self  # immutable and shared by every agent of the configuration

    def points_of(self, cards: int) -> int:
        """Counter points of the card set ``cards``."""
        total = 0
        for value, mask in self.counters_by_value:
            total += value * (cards & mask).bit_count()
        return total

    def strength(self, card: int, trump: int, led: int) -> float:
        """Power of ``card`` in a trick whose led effective suit is ``led`` (-1: it cannot win)."""
        power = self.trump_power[trump][card]
        if power >= 0:
            return power
        if self.colour[card] == led:
            return float(self.rank_power[card])
        return -1.0


def _p_none_table(n_cards: int, hand_size: int) -> list[list[list[float]]]:
    table = []
    for pool in range(n_cards + 1):
        rows = []
        for drawn in range(hand_size + 1):
            row = []
            for k in range(n_cards + 1):
                if k <= 0 or drawn <= 0:
                    p = 1.0
                elif pool - k < drawn:
                    p = 0.0
                else:
                    p = 1.0
                    for i in range(drawn):
                        p *= (pool - k - i) / (pool - i)
                row.append(p)
            rows.append(row)
        table.append(rows)
    return table


@lru_cache(maxsize=None)
def card_tables(config: RookConfig) -> CardTables:
    return CardTables(config)


# ============================================================================ observation reader
class SeatView:
    """What the heuristic reads from one seat's observation. Seats are relative (0 me, 1 left,
    2 partner, 3 right); card sets are bitmasks; -1 means "none yet"."""

    __slots__ = ("phase", "hand", "bidder", "contract", "trump", "call", "trick", "played", "played_all", "nest",
                 "discards", "nest_counters", "tricks_won", "tricks_left", "partner_bid", "passed")

    phase: int
    hand: int
    bidder: int
    contract: int  # bid level index
    trump: int  # trump colour of a colour call high (-1: none yet, or a low / no-trump call)
    call: int  # the trump call: contract index (-1: none yet; 0..3 the colours high)
    trick: list[tuple[int, int]]  # (rel seat, card) in play order
    played: list[int]  # card masks by rel seat (the current trick included)
    played_all: int
    nest: int
    discards: int
    nest_counters: bool
    tricks_won: tuple[int, int]  # my team, their team
    tricks_left: int
    partner_bid: bool  # the partner made a bid in the auction
    passed: int  # bit r: rel seat r has passed


class SeatReader:
    """Reads observation vectors of one configuration into :class:`SeatView` (scalar) or arrays (batch).

    The vector's 0/1 entries are packed into one ``int`` (bit ``i`` = entry ``i`` > 0.5), and each
    section is a shift and a mask of it; the few scaled numbers are read directly.
    """

    def __init__(self, config: RookConfig) -> None:
        ol = obs_layout(config)
        self.ol = ol
        self.size = ol.size
        layout = ol.L
        self.n_cards = n = layout.n_cards
        self.n_bids = layout.n_bids
        self.card_mask = (1 << n) - 1
        self.n_tricks = layout.n_tricks
        self.phase_bits = (1 << (ol.HAND - ol.PHASE)) - 1  # the phase section (6 entries with circus_rook)
        self.call_bits = (1 << layout.n_contracts) - 1

    def __deepcopy__(self, memo: dict) -> SeatReader:
        return self  # immutable and shared

    def read(self, vec: np.ndarray, packed: int | None = None) -> SeatView:
        """The view of one observation vector (``packed``: its entries > 0.5 as bits, if known)."""
        ol, n, full = self.ol, self.n_cards, self.card_mask
        vec = np.asarray(vec)
        if vec.shape != (self.size,):
            raise ValueError(f"observation has shape {vec.shape}, expected ({self.size},) for this configuration")
        if packed is None:
            packed = int.from_bytes(np.packbits(vec > 0.5, bitorder="little").tobytes(), "little")
        v = SeatView()
        v.phase = _lowest(packed >> ol.PHASE & self.phase_bits, BID)
        v.hand = packed >> ol.HAND & full
        v.bidder = _lowest(packed >> ol.BIDDER & 0b1111, -1)
        v.contract = _lowest(packed >> ol.CONTRACT & ((1 << self.n_bids) - 1), -1)
        v.call = _lowest(packed >> ol.TRUMP & self.call_bits, -1)
        v.trump = v.call if v.call < N_COLOURS else -1
        leader = _lowest(packed >> ol.LEADER & 0b1111, -1)
        trick = []
        if leader >= 0:
            cards = packed >> ol.TRICK
            for k in range(N_SEATS):
                rel = (leader + k) & 3
                m = cards >> (rel * n) & full
                if m:
                    trick.append((rel, m.bit_length() - 1))
        v.trick = trick
        played = packed >> ol.PLAYED
        v.played = [played & full, played >> n & full, played >> 2 * n & full, played >> 3 * n & full]
        v.played_all = v.played[0] | v.played[1] | v.played[2] | v.played[3]
        v.nest = packed >> ol.NEST & full
        v.discards = packed >> ol.DISCARDS & full
        v.nest_counters = bool(packed >> ol.NEST_COUNTERS & 1)
        nb = self.n_bids
        v.partner_bid = bool(packed >> (ol.BIDS + 2 * nb) & ((1 << nb) - 1))
        passes = packed >> ol.PASSES
        row = (1 << (nb + 1)) - 1
        v.passed = 0
        for r in range(N_SEATS):
            if passes >> (r * (nb + 1)) & row:
                v.passed |= 1 << r
        nt = self.n_tricks
        v.tricks_won = (round(float(vec[ol.TRICKS_WON]) * nt), round(float(vec[ol.TRICKS_WON + 1]) * nt))
        v.tricks_left = round(float(vec[ol.TRICKS_LEFT]) * nt)
        return v

    def section_masks(self, on: np.ndarray, start: int, rows: int, width: int) -> np.ndarray:
        """Bitmasks (N, rows) int64 of ``rows`` consecutive sections of ``width`` (<= 63) entries."""
        block = on[:, start:start + rows * width].reshape(on.shape[0], rows, width)
        packed = np.packbits(block, axis=2, bitorder="little")
        out = np.zeros((on.shape[0], rows, 8), np.uint8)
        out[:, :, :packed.shape[2]] = packed
        return out.view("<i8")[:, :, 0]


def _lowest(mask: int, default: int) -> int:
    """Index of the lowest set bit of ``mask`` (``default`` when none)."""
    return (mask & -mask).bit_length() - 1 if mask else default


@lru_cache(maxsize=None)
def seat_reader(config: RookConfig) -> SeatReader:
    return SeatReader(config)

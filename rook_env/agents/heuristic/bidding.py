"""The heuristic's hand model: bidding, discard and trump choice from one linear value.

One feature function, :func:`hand_features`, and one weight vector per deck and Rook rank,
:data:`HAND_WEIGHTS`, value a hand for a trump as the counter points (120-point scale, nest
included) that the bidding side takes. The same model serves both uses:
  * bidding: the dealt hand, with the feature ``nest_unseen`` set (its weight carries the average
    gain from the unseen nest and the discard); the best trump's value is calibrated for dealt
    hands (:data:`BID_CALIBRATION`, fitted with the weights), less :data:`BID_MARGIN`, plus the
    expected trick bonuses;
  * discard and trump: every candidate plan's kept hand after the discard, ``nest_unseen`` clear,
    the discarded points entering through the feature ``nest`` (their points at the chance of
    taking the last trick).
The weights are least-squares fits to simulated hands: ``python tools/fit_hand_model.py`` (seed
7001, 2,000 deals per deck and Rook rank, every seat forced to bid the minimum in turn, heuristic
play all round, half the hands also played with a random plan so that the planning rows cover the
alternatives the planner ranks).

Measured against the previous heuristic (commit b29787b: a fitted bid model beside a hand-weighted planning value),
duplicate, 2,000 deals, seed 20261201 (``play_match`` of this agent against that one; points per
deal, 95% interval): default game +2.09 [+0.34, +3.95]; full deck +0.46 [-2.07, +2.93];
Rook Bird low +5.74 [+3.40, +8.15]; no Rook Bird +1.40 [-0.15, +3.20].
On seed 20261130, where the calibration and the margin were chosen: the fitted planning with the
previous bidding +2.53 [+1.05, +4.11]; the model's bidding uncalibrated with the previous planning
-3.08 [-4.62, -1.61]; the single model in the full deck without the margin -6.90 [-9.98, -3.82],
with it -1.65 [-4.24, +0.89]. Reproduce with ``tools/fit_hand_model.py``'s seed and
``rook_env.evaluation.play_match``.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from rook_env.games.partnership.cards import N_COLOURS, bits

from .tables import CardTables, SeatView

# The features of hand_features(), in order (per hand and trump; counts over the three side suits).
HAND_FEATURES = (
    "1",
    "nest_unseen",  # 1: a dealt hand, the nest still to come (bidding); 0: a hand kept after the discard
    "trumps",  # trump length, per 9 cards
    "rook",  # the Rook Bird held
    "top1", "top2", "top3",  # the three highest trumps other than the Rook Bird, each held or not
    "top_run",  # top trumps held in sequence (the Rook Bird counted in its place)
    "masters",  # side masters held
    "master_seconds",  # side seconds held with their master
    "seconds",  # side seconds held
    "voids", "singletons",
    "long_voids", "long_singletons",  # the same, counted only with LONG_TRUMPS or more trumps to ruff with
    "unguarded",  # points of side counters that a higher card not held can take
    "points",  # counter points held
    "trump_points",  # counter points among the trumps held
    "nest",  # the discarded points at the chance of taking the last trick (see _p_last_trick)
)
N_FEATURES = len(HAND_FEATURES)  # 19
LONG_TRUMPS = 4.0  # trumps (per 9 cards) from which voids and singletons are ruffing chances

# HAND_WEIGHTS[(deck, rook_rank)]: weights of HAND_FEATURES, in points on the 120-point scale.
HAND_WEIGHTS: dict[tuple[str, str], tuple[float, ...]] = {
    ('tournament', 'high'): (33.30, 20.96, 4.83, 15.17, 6.55, 2.34, 1.01, -0.29, -0.67, 1.13, 0.29, 0.13, 0.82, 2.63, -1.14, -0.61, 0.62, -0.32, 0.12),
    ('tournament', 'low'): (36.07, 22.93, 4.47, -0.88, 8.06, 3.76, 0.87, 1.83, 6.96, 0.33, 0.90, 3.17, 1.57, 2.38, -1.45, -0.04, 0.02, 0.30, 0.08),
    ('tournament', 'ten_and_half'): (36.13, 22.46, 4.25, 2.38, 7.66, 3.19, 1.21, 2.03, 6.42, 0.65, 0.79, 3.04, 1.51, 2.30, -1.43, -0.08, 0.06, 0.21, 0.09),
    ('full', 'high'): (33.91, 14.51, 4.89, 9.95, 3.85, 0.62, 1.48, -0.41, 1.92, -2.02, 1.01, 0.27, -0.13, 3.44, 1.05, -0.37, 0.44, 0.01, 0.16),
    ('full', 'low'): (36.95, 16.82, 3.87, -0.74, 4.77, 2.24, 1.11, 1.71, 3.14, -2.84, 1.20, 4.13, 0.19, 2.90, 1.33, -0.50, 0.53, -0.13, 0.20),
    ('full', 'ten_and_half'): (37.18, 16.51, 3.58, 0.94, 5.35, 2.72, 1.21, 1.43, 3.30, -2.87, 1.16, 4.28, 0.07, 2.68, 1.60, -0.47, 0.50, -0.14, 0.21),
}

# BID_CALIBRATION[(deck, rook_rank)]: (offset, slope) of the bidding estimate, offset + slope * value of the
# dealt hand: the least-squares line of the points taken on the model's value, dealt hands only. The slopes
# are shared with the kept hands, whose features tell more; on a dealt hand their spread is shrunk.
BID_CALIBRATION: dict[tuple[str, str], tuple[float, float]] = {
    ('tournament', 'high'): (15.11, 0.823),
    ('tournament', 'low'): (24.08, 0.730),
    ('tournament', 'ten_and_half'): (22.39, 0.745),
    ('full', 'high'): (7.78, 0.903),
    ('full', 'low'): (8.67, 0.892),
    ('full', 'ten_and_half'): (8.03, 0.901),
}

# Weights in points on the 120-point tournament scale.
BID_MARGIN = 3.0  # bidding values a hand this much below its expected points: a set costs the whole bid
PARTNER_OVERCALL = 15.0  # overcall a partner's bid only with this much more in hand
PARTNER_SUPPORT = 5.0  # a partner who bid is worth this much more
BONUS_SHARE = 0.8  # expected share of the trick bonuses that the bidding side takes
REDEAL_BELOW = 90.0  # a hand without counters is below average (about 86): redeal unless it is long in trump
DISCARD_COUNTER = 8.0  # preference for laying unguarded counters in the nest (nest_discard="any")
CACHE_SIZE = 4096  # hands remembered by the estimate and plan caches (act_batch serves many tables)


def hand_features(tab: CardTables, hand: int, trump: int, nest_points: float = 0.0,
                  nest_unseen: bool = False) -> tuple[float, ...]:
    """The features of :data:`HAND_FEATURES` for ``hand`` and ``trump`` (counts per 9-card hand,
    points on the 120-point scale). ``nest_points``: the points discarded to the nest (a kept hand);
    ``nest_unseen``: the hand is the dealt one, the nest still to come."""
    top_cards, trump_order, side_suits = _feature_cards(tab)[trump]
    per_nine = 9.0 / tab.hand_size
    trumps = (hand & tab.suit[trump][trump]).bit_count() * per_nine
    top_run = 0
    for card in trump_order:
        if not hand & card:
            break
        top_run += 1
    masters = master_seconds = seconds = voids = singletons = 0
    unguarded = 0
    for cards, master, second, counters in side_suits:
        held = hand & cards
        count = held.bit_count()
        if count == 0:
            voids += 1
            continue
        if count == 1:
            singletons += 1
        if held & master:
            masters += 1
            if held & second:
                master_seconds += 1
        if held & second:
            seconds += 1
        for bit, higher, points in counters:
            if held & bit and higher & ~held:
                unguarded += points
    long = 1.0 if trumps >= LONG_TRUMPS else 0.0
    scale = tab.scale
    p_last = min(0.95, 0.3 + 0.1 * trumps + 0.1 * top_run)
    return (1.0, 1.0 if nest_unseen else 0.0, trumps, 1.0 if hand & tab.rook_bit else 0.0,
            1.0 if hand & top_cards[0] else 0.0, 1.0 if hand & top_cards[1] else 0.0,
            1.0 if hand & top_cards[2] else 0.0, float(top_run), float(masters), float(master_seconds),
            float(seconds), float(voids), float(singletons), long * voids, long * singletons, unguarded / scale,
            tab.points_of(hand) / scale, tab.points_of(hand & tab.suit[trump][trump]) / scale,
            p_last * nest_points / scale)


def linear_value(weights: Sequence[float], features: Sequence[float]) -> float:
    """The model's value: the weighted sum of the features."""
    return sum(w * f for w, f in zip(weights, features))


@cache
def _feature_cards(tab: CardTables) -> tuple:
    """Per trump: (the three top trumps other than the Rook Bird, the trumps strongest first, each as a
    bit; per side suit (its cards, its master's bit, its second's bit, (bit, higher cards, points) per
    counter))."""
    out = []
    for trump in range(N_COLOURS):
        order = tab.order[trump]
        tops = tuple(1 << c for c in order[trump] if c != tab.rook)[:3]
        side = tuple(
            (tab.suit[trump][s], 1 << order[s][0], 1 << order[s][1],
             tuple((1 << c, tab.higher[trump][c], tab.points[c]) for c in order[s] if tab.points[c]))
            for s in range(N_COLOURS) if s != trump)
        out.append((tops, tuple(1 << c for c in order[trump]), side))
    return tuple(out)


class HandModel:
    """Bidding, discarding and naming trump for one configuration (with small per-hand caches)."""

    def __init__(self, tab: CardTables, weights: Sequence[float] | None = None) -> None:
        self.tab = tab
        self.config = tab.config
        key = (tab.config.deck, tab.config.rook_rank)
        self.weights = tuple(HAND_WEIGHTS[key] if weights is None else weights)
        self.bid_offset, self.bid_slope = BID_CALIBRATION[key]
        if len(self.weights) != N_FEATURES:
            raise ValueError(f"the hand model takes {N_FEATURES} weights ({', '.join(HAND_FEATURES)}), "
                             f"got {len(self.weights)}")
        self.forced_discard = tab.config.nest_discard == "no_counters_unless_forced"
        self._estimates: dict[int, float] = {}
        self._plans: dict[tuple[int, int], tuple[float, int, int]] = {}

    def clear(self) -> None:
        self._estimates.clear()
        self._plans.clear()

    def value(self, hand: int, trump: int, nest_points: float = 0.0, nest_unseen: bool = False) -> float:
        """Counter points (on the deck's scale) the bidding side takes with ``hand`` and ``trump``:
        a dealt hand (``nest_unseen``) or a hand kept after discarding ``nest_points``."""
        features = hand_features(self.tab, hand, trump, nest_points, nest_unseen)
        return linear_value(self.weights, features) * self.tab.scale

    def estimate(self, hand: int) -> float:
        """Bidding estimate of a dealt hand: its best trump's value, calibrated (:data:`BID_CALIBRATION`),
        less :data:`BID_MARGIN`, plus the expected trick bonuses."""
        value = self._estimates.get(hand)
        if value is None:
            cfg = self.config
            bonus = BONUS_SHARE * (cfg.majority_tricks_bonus + cfg.last_trick_bonus)
            best = max(self.value(hand, trump, nest_unseen=True) for trump in range(N_COLOURS))
            value = (self.bid_offset - BID_MARGIN) * self.tab.scale + self.bid_slope * best + bonus
            if len(self._estimates) > CACHE_SIZE:
                self._estimates.clear()
            self._estimates[hand] = value
        return value

    # ---------------------------------------------------------------- bidding
    def bid(self, view: SeatView, legal: int) -> int:
        tab, layout = self.tab, self.tab.layout
        bids = layout.bids
        scale = tab.scale
        estimate = self.estimate(view.hand)
        if legal >> layout.REDEAL & 1 and estimate < REDEAL_BELOW * scale:
            return layout.REDEAL
        levels = [i for i in range(layout.n_bids) if legal >> (layout.BID0 + i) & 1]
        if not levels:
            return layout.PASS
        if not legal >> layout.PASS & 1:  # the dealer is forced to bid
            return layout.BID0 + levels[0]
        if view.bidder == 0:  # never raise its own bid
            return layout.PASS
        limit = estimate
        if view.bidder == 2:
            # the partner holds the bid: take it over only with a much better hand
            if limit < bids[view.contract] + PARTNER_OVERCALL * scale:
                return layout.PASS
        elif view.partner_bid:
            limit += PARTNER_SUPPORT * scale
        cheapest = levels[0]
        if bids[cheapest] > limit:
            return layout.PASS
        target = cheapest
        if not view.passed & 0b1010 and view.bidder not in (1, 3):
            # both opponents still in the auction and a strong hand: jump to a few steps below the limit
            step = self.config.bid_step
            jump = max((i for i in levels if bids[i] <= limit - 2 * step), default=cheapest)
            if bids[jump] - bids[cheapest] >= 3 * step:
                target = max(cheapest, jump - 2)
        return layout.BID0 + target

    # ---------------------------------------------------------------- discard and trump
    def discard(self, view: SeatView, legal_cards: int) -> int:
        tab = self.tab
        fourteen = view.hand | view.discards
        _, trump, plan = self.plan(fourteen, view.trump if self.forced_discard else -1)
        todo = plan & ~view.discards & legal_cards
        if todo:
            # non-counters first (keeps the no-counters rule's order legal)
            return min(bits(todo), key=lambda c: (tab.points[c] > 0, tab.rank_power[c]))
        # the plan is done or illegal: the legal card cheapest to lose
        effective = tab.effective_suit[trump]

        def cost(card: int) -> float:
            value = float(tab.rank_power[card]) + 3.0 * tab.points[card]
            if card == tab.rook:
                value += 200
            elif effective[card] == trump:
                value += 50
            return value

        return min(bits(legal_cards), key=cost) if legal_cards else -1

    def name_trump(self, view: SeatView, legal: int) -> int:
        tab = self.tab
        if self.forced_discard:  # trump is named before the discard
            _, trump, _ = self.plan(view.hand)
        else:
            nest_points = tab.points_of(view.discards)
            trump = max(range(N_COLOURS), key=lambda t: self.value(view.hand, t, nest_points))
        action = tab.layout.TRUMP0 + trump
        return action if legal >> action & 1 else -1

    def plan(self, fourteen: int, trump: int = -1) -> tuple[float, int, int]:
        """Best (value, trump, discard mask) for the bidder's 14-card hand (``trump`` fixed unless -1)."""
        key = (fourteen, trump)
        best = self._plans.get(key)
        if best is not None:
            return best
        for t in [trump] if trump >= 0 else range(N_COLOURS):
            for discard in self._discard_options(fourteen, t):
                value = self.value(fourteen & ~discard, t, self.tab.points_of(discard))
                if best is None or value > best[0]:
                    best = (value, t, discard)
        if len(self._plans) > CACHE_SIZE:
            self._plans.clear()
        self._plans[key] = best
        return best

    def _discard_options(self, fourteen: int, trump: int) -> list[int]:
        """Candidate discards: for each set of side suits to void, keep trumps, the Rook Bird and side
        masters, then lay down the lowest side cards, trumps only when no side card is left."""
        tab = self.tab
        suit = tab.suit[trump]
        trumps = fourteen & suit[trump]
        side = fourteen & ~trumps
        masters = 0  # top side cards held in sequence
        for s in range(N_COLOURS):
            if s == trump:
                continue
            for c in tab.order[trump][s]:
                if not fourteen >> c & 1:
                    break
                masters |= 1 << c
        higher = tab.higher[trump]

        def side_keep(card: int) -> float:  # lower: discarded first
            if masters >> card & 1:
                return 100.0 + tab.rank_power[card]
            value = float(tab.rank_power[card])
            if tab.points[card] and not self.forced_discard and higher[card] & ~fourteen:
                value -= DISCARD_COUNTER  # an unguarded counter is better off in the nest than lost in play
            return value

        def trump_keep(card: int) -> float:
            return (50.0 if card == tab.rook else 0.0) + tab.trump_power[trump][card] + (20.0 if tab.points[card] else 0.0)

        side_order = sorted(bits(side), key=side_keep)
        trump_order = sorted(bits(trumps), key=trump_keep)
        side_suits = [s for s in range(N_COLOURS) if s != trump]
        options: list[int] = []
        for chosen in range(1 << len(side_suits)):
            voided = 0
            for j, s in enumerate(side_suits):
                if chosen >> j & 1:
                    voided |= suit[s] & side & ~masters
            if voided.bit_count() > 5:
                continue
            discard = _fill(voided, side_order + trump_order)
            if self.forced_discard and discard & tab.counter_mask and side & ~tab.counter_mask & ~discard:
                continue  # counters only when every non-counter side card is discarded too
            if discard not in options:
                options.append(discard)
        if self.forced_discard:
            # always one legal option: non-counter side cards, non-counter trumps, then the rest
            points = tab.points
            order = ([c for c in side_order if not points[c]] + [c for c in trump_order if not points[c]]
                     + [c for c in side_order if points[c]] + [c for c in trump_order if points[c]])
            discard = _fill(0, order)
            if discard not in options:
                options.append(discard)
        return options


def _fill(discard: int, order: list[int]) -> int:
    """``discard`` completed to five cards from ``order``."""
    for card in order:
        if discard.bit_count() >= 5:
            break
        discard |= 1 << card
    return discard

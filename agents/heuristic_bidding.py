"""The heuristic's bidding, discard and trump choice.

Two hand values, each where it measured best (duplicate A/B play, 2,000 deals per run):
  * bidding: a linear model of the dealt hand, :func:`hand_features` with weights fitted to
    simulated hands (:data:`BID_WEIGHTS`), the points (120-point scale) the bidding side takes
    for a given trump; its intercept carries the average unseen nest and partner. Bidding with
    the hand-weighted value below instead (calibrated to the same mean) lost 0.6 to 1.5 points
    per deal;
  * discard and trump: a hand-weighted value of the hand kept after the discard plus the
    discarded points at the chance of taking the last trick (:meth:`HandModel._kept_value`).
    Using the fitted model there lost 1.0 to 1.8 points per deal.
"""

from __future__ import annotations

from functools import lru_cache

from rook_env.cards import N_COLOURS, bits

from .heuristic_tables import CardTables, SeatView

# Hand model: least-squares fits to simulated hands (every seat forced to bid the minimum in turn,
# heuristic play all round; 2,500 deals for the default game, 1,200 for the others).
BID_FEATURES = ("1", "trumps", "rook", "top1", "top2", "top3", "masters", "seconds", "voids", "singletons",
                "points", "trump_points")
BID_WEIGHTS: dict[tuple[str, str], tuple[float, ...]] = {
    ("tournament", "high"): (58.03, 3.37, 13.07, 7.00, 3.38, 1.79, 3.83, 1.04, 1.53, 0.49, 0.14, 0.03),
    ("tournament", "low"): (62.78, 3.60, 3.24, 9.36, 4.70, 2.80, 5.65, 0.56, 1.88, 0.73, 0.04, 0.06),
    ("tournament", "ten_and_half"): (62.13, 3.43, 5.51, 9.11, 4.90, 2.63, 5.85, 0.70, 2.04, 0.77, 0.01, 0.08),
    ("full", "high"): (46.62, 4.70, 8.48, 3.98, 2.38, 0.76, 6.28, 1.71, 1.20, 0.82, 0.10, 0.18),
    ("full", "low"): (50.68, 4.08, 0.00, 8.01, 3.24, 2.08, 7.25, 1.94, 2.24, 1.01, 0.03, 0.26),
    ("full", "ten_and_half"): (50.68, 4.08, 1.50, 8.01, 3.24, 2.08, 7.25, 1.94, 2.24, 1.01, 0.03, 0.26),
}

# Weights in points on the 120-point tournament scale.
PARTNER_OVERCALL = 15.0  # overcall a partner's bid only with this much more in hand
PARTNER_SUPPORT = 5.0  # a partner who bid is worth this much more
BONUS_SHARE = 0.8  # expected share of the trick bonuses that the bidding side takes
REDEAL_BELOW = 90.0  # a hand without counters is below average (about 86): redeal unless it is long in trump
DISCARD_COUNTER = 8.0  # preference for laying unguarded counters in the nest (nest_discard="any")
CACHE_SIZE = 4096  # hands remembered by the estimate and plan caches (act_batch serves many tables)


def hand_features(tab: CardTables, hand: int, trump: int) -> tuple[float, ...]:
    """The features of :data:`BID_FEATURES` for a hand and trump (normalised to a 9-card hand)."""
    top1, top2, top3, side_suits = _feature_cards(tab)[trump]
    trumps = (hand & tab.suit[trump][trump]).bit_count() * 9.0 / tab.hand_size
    masters = seconds = voids = singletons = 0.0
    for cards, master, second in side_suits:
        count = (hand & cards).bit_count()
        if count == 0:
            voids += 1
        elif count == 1:
            singletons += 1
        if hand & master:
            masters += 1
        if hand & second:
            seconds += 1
    return (1.0, trumps, 1.0 if hand & tab.rook_bit else 0.0, 1.0 if hand & top1 else 0.0,
            1.0 if hand & top2 else 0.0, 1.0 if hand & top3 else 0.0, masters, seconds, voids, singletons,
            tab.points_of(hand) / tab.scale, tab.points_of(hand & tab.suit[trump][trump]) / tab.scale)


@lru_cache(maxsize=None)
def _feature_cards(tab: CardTables) -> tuple:
    """Per trump: the three top trumps other than the Rook Bird (as bits), and for each side suit
    (its cards, its master's bit, its second card's bit)."""
    out = []
    for trump in range(N_COLOURS):
        tops = [1 << c for c in tab.order[trump][trump] if c != tab.rook][:3]
        side = tuple((tab.suit[trump][s], 1 << tab.order[trump][s][0], 1 << tab.order[trump][s][1])
                     for s in range(N_COLOURS) if s != trump)
        out.append((*tops, side))
    return tuple(out)


class HandModel:
    """Bidding, discarding and naming trump for one configuration (with small per-hand caches)."""

    def __init__(self, tab: CardTables) -> None:
        self.tab = tab
        self.config = tab.config
        self.weights = BID_WEIGHTS[(tab.config.deck, tab.config.rook_rank)]
        self.forced_discard = tab.config.nest_discard == "no_counters_unless_forced"
        self._estimates: dict[int, float] = {}
        self._plans: dict[tuple[int, int], tuple[float, int, int]] = {}

    def clear(self) -> None:
        self._estimates.clear()
        self._plans.clear()

    def value(self, hand: int, trump: int) -> float:
        """Points (on the deck's scale) the bidding side takes with ``hand`` and ``trump``."""
        return sum(w * f for w, f in zip(self.weights, hand_features(self.tab, hand, trump))) * self.tab.scale

    def estimate(self, hand: int) -> float:
        """Bidding estimate of a dealt hand: its best trump's value plus the expected trick bonuses."""
        value = self._estimates.get(hand)
        if value is None:
            cfg = self.config
            bonus = BONUS_SHARE * (cfg.majority_tricks_bonus + cfg.last_trick_bonus)
            value = max(self.value(hand, trump) for trump in range(N_COLOURS)) + bonus
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
                target = jump - 2 if jump - 2 > cheapest else cheapest
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
            trump = max(range(N_COLOURS), key=lambda t: self._kept_value(view.hand, t, nest_points))
        action = tab.layout.TRUMP0 + trump
        return action if legal >> action & 1 else -1

    def _kept_value(self, kept: int, trump: int, nest_points: float) -> float:
        """Points the bidding side takes with the ``kept`` hand and ``trump``, the discarded
        ``nest_points`` counted at the chance of taking the last trick. Hand-weighted: planning
        with the fitted model instead lost 1 to 1.8 points per deal in duplicate A/B play."""
        tab = self.tab
        suit = tab.suit[trump]
        top = 0  # top trumps held in sequence
        for c in tab.order[trump][trump]:
            if not kept >> c & 1:
                break
            top += 1
        honours = sum(1 for c in tab.order[trump][trump][:3] if kept >> c & 1)
        masters = 0.0
        voids = singletons = 0
        unguarded = 0  # points of side counters that a higher unseen card of their suit can take
        for s in range(N_COLOURS):
            if s == trump:
                continue
            held = kept & suit[s]
            count = held.bit_count()
            if count == 0:
                voids += 1
                continue
            if count == 1:
                singletons += 1
            order = tab.order[trump][s]
            if held >> order[0] & 1:
                masters += 1.0
                if held >> order[1] & 1:
                    masters += 0.5
            for c in bits(held & tab.counter_mask):
                if tab.higher[trump][c] & ~held:
                    unguarded += tab.points[c]
        rook = 1 if kept & tab.rook_bit else 0
        scale = tab.scale
        length = (kept & suit[trump]).bit_count() * 9.0 / tab.hand_size  # trump length per 9 cards
        value = (
            22.0
            + 6.0 * length
            + 4.0 * top
            + 3.0 * honours
            + (6.0 * rook if tab.rook_high else 2.0 * rook)
            + 7.0 * masters
            + (2.5 * voids + 1.0 * singletons) * (1.0 if length >= 4 else 0.5)
            - 0.15 * unguarded / scale
        ) * scale
        p_last = min(0.95, 0.3 + 0.1 * length + 0.1 * top)
        return value + p_last * nest_points

    def plan(self, fourteen: int, trump: int = -1) -> tuple[float, int, int]:
        """Best (value, trump, discard mask) for the bidder's 14-card hand (``trump`` fixed unless -1)."""
        key = (fourteen, trump)
        best = self._plans.get(key)
        if best is not None:
            return best
        for t in [trump] if trump >= 0 else range(N_COLOURS):
            for discard in self._discard_options(fourteen, t):
                value = self._kept_value(fourteen & ~discard, t, self.tab.points_of(discard))
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

"""The heuristic's card play, one decision at a time (the batched twin is batch.py).

A decision scores every legal card ``c`` as::

    (2 p - 1) * (trick points + points of c + expected points still to come) - keep value of c
        (+ a lead bonus when leading) - 0.01 * rank power of c   (lower cards win ties)

``p`` being the chance that its side takes the trick, computed from the unseen cards each
other seat may hold (hypergeometric odds, known voids excluded). The keep value is what the
card is worth later in the hand. Both implementations evaluate the same float expressions in
the same order, so they choose the same card; tests check it.
"""

from __future__ import annotations

from typing import NamedTuple

from rook_env.games.partnership.cards import N_COLOURS, bits

from .tables import CardTables, SeatView

# Weights, in points on the 120-point tournament scale (multiplied by CardTables.scale).
K_ROOK = 24.0  # keep value of the (high) Rook Bird
K_TOP_TRUMP = 10.0  # ... of a trump no unseen card beats
K_TRUMP1 = 6.0  # ... of a trump one unseen card beats
K_TRUMP = 3.0  # ... of any other trump
K_MASTER = 8.0  # ... of a side master while opponents may trump
K_MASTER_SAFE = 3.0  # ... of a side master once they cannot
K_SECOND = 1.5  # ... of a side card one unseen card beats
K_VOID = 1.5  # shedding the last card of a side suit while holding trumps
K_NEST = 1.0  # share of the nest's value added to the top trump's keep value
EXTRA = 0.3  # share of the average unseen counter each seat still to play adds
DRAW_SURE = 12.0  # bidder leading a sure trump while opponents may hold trumps
DRAW_LONG = 6.0  # bidder leading a low trump when long in them
DRAW_PARTNER = 4.0  # bidder's partner leading a sure trump
DEF_TRUMP = -3.0  # defender leading a trump that is not sure
SURE = 0.8  # a trick chance above this counts as sure (lead bonuses)
NEST_IF_COUNTERS = 12.0  # assumed nest value once "the nest holds counters" is announced
TIE = 1e-9  # keeps the partner's share of the "somebody beats it" chance finite


class Memory(NamedTuple):
    """What a seat remembers from its previous card-play decision in this hand."""

    hand: int  # its hand after that play (the key the next decision is matched by)
    played: tuple[int, int, int, int]  # cards played by rel seat before its card
    lead: int  # the card led to that trick (-1: it led)
    voids: tuple[int, int, int, int]  # known voids by rel seat (effective-suit bits)


def known_voids(tab: CardTables, view: SeatView, trump: int, memory: Memory | None) -> list[int]:
    """Voids (effective-suit bits by rel seat) shown by failures to follow: those remembered and
    the ones of the trick this seat played to last (from ``memory``, when it matches this
    view), and those of the current trick."""
    eff = tab.effective_suit[trump]
    suit = tab.suit[trump]
    # the Rook Bird played high never shows a void: it may be played on any lead
    can_show = tab.all_cards & ~(tab.rook_bit if tab.rook_high else 0)
    voids = [0, 0, 0, 0]
    if memory is not None and memory.hand == view.hand:
        before = memory.played
        if not (before[0] | before[1] | before[2] | before[3]) & ~view.played_all:
            voids = list(memory.voids)
            mine = view.played[0] & ~before[0]
            if mine.bit_count() == 1:
                # the cards the others played since are the rest of that trick and the current one
                led = eff[memory.lead if memory.lead >= 0 else mine.bit_length() - 1]
                current = 0
                for _, card in view.trick:
                    current |= 1 << card
                off = can_show & ~suit[led] & ~current
                for r in (1, 2, 3):
                    if view.played[r] & ~before[r] & off:
                        voids[r] |= 1 << led
    if view.trick:
        led = eff[view.trick[0][1]]
        for r, card in view.trick[1:]:
            if eff[card] != led and can_show >> card & 1:
                voids[r] |= 1 << led
    return voids


class _Odds:
    """Chances about the unseen cards of the other seats (rel 1..3) in one decision."""

    __slots__ = ("tab", "trump", "voids", "pool", "p_none", "trumps", "suit", "higher", "eff")

    def __init__(self, tab: CardTables, trump: int, unseen: int, voids: list[int], sizes: list[int]) -> None:
        self.tab = tab
        self.trump = trump
        self.voids = voids
        self.suit = suit = tab.suit[trump]
        self.trumps = suit[trump]
        self.higher = tab.higher[trump]
        self.eff = tab.effective_suit[trump]
        pool = [0, 0, 0, 0]
        rows = [tab.p_none[0][0]] * 4
        for r in (1, 2, 3):
            m = unseen
            for s in range(N_COLOURS):
                if voids[r] >> s & 1:
                    m &= ~suit[s]
            pool[r] = m
            rows[r] = tab.p_none[m.bit_count()][max(sizes[r], 0)]
        self.pool = pool
        self.p_none = rows  # p_none[r][k]: seat r holds none of k given cards of its pool

    def holds_any(self, r: int, cards: int) -> float:
        return 1.0 - self.p_none[r][(cards & self.pool[r]).bit_count()]

    def p_void(self, r: int, s: int) -> float:
        if self.voids[r] >> s & 1:
            return 1.0
        return self.p_none[r][(self.pool[r] & self.suit[s]).bit_count()]

    def p_beat(self, r: int, winner: int, led: int) -> float:
        """Chance that seat ``r`` (still to play, holding some cards) can beat the card ``winner``."""
        tab = self.tab
        rook_bit = tab.rook_bit
        if tab.rook_high and winner == tab.rook:
            return 0.0
        above = self.higher[winner] & self.pool[r]
        if self.eff[winner] == self.trump:
            if led == self.trump:
                return self.holds_any(r, above)
            p_rook = self.holds_any(r, above & rook_bit) if tab.rook_high else 0.0
            return p_rook + (1.0 - p_rook) * self.p_void(r, led) * self.holds_any(r, above & ~rook_bit)
        # the winner is the best card of the led side suit
        p_rook = self.holds_any(r, rook_bit) if tab.rook_high else 0.0
        p_follow = self.holds_any(r, above)
        trumps = self.trumps & ~rook_bit if tab.rook_high else self.trumps
        p_ruff = self.p_void(r, led) * self.holds_any(r, trumps)
        return 1.0 - (1.0 - p_rook) * (1.0 - p_follow) * (1.0 - p_ruff)


def choose_card(tab: CardTables, view: SeatView, legal_cards: int, memory: Memory | None) -> tuple[int, Memory]:
    """The card to play (a member of ``legal_cards``, non-empty) and what to remember of it."""
    trump = view.trump if view.trump >= 0 else 0
    voids = known_voids(tab, view, trump, memory)
    if legal_cards & (legal_cards - 1):
        card = _best_card(tab, view, trump, legal_cards, voids)
    else:
        card = legal_cards.bit_length() - 1
    lead = view.trick[0][1] if view.trick else -1
    return card, Memory(view.hand & ~(1 << card), tuple(view.played), lead, tuple(voids))


def _best_card(tab: CardTables, view: SeatView, trump: int, legal_cards: int, voids: list[int]) -> int:
    points = tab.points
    eff = tab.effective_suit[trump]
    hand = view.hand
    unseen = tab.all_cards & ~hand & ~view.played_all & ~view.nest & ~view.discards
    position = len(view.trick)
    tricks_left = view.tricks_left
    sizes = [0, tricks_left, tricks_left, tricks_left]
    for r, _ in view.trick:
        if r:
            sizes[r] = tricks_left - 1
    odds = _Odds(tab, trump, unseen, voids, sizes)
    nest_value = _nest_value(tab, view, unseen)
    trick_points = float(sum([points[card] for _, card in view.trick]))
    if tricks_left <= 1:
        trick_points += nest_value
    cfg = tab.config
    if cfg.majority_tricks_bonus and max(view.tricks_won) * 2 <= tab.n_tricks:
        # the majority is still open: every trick carries a share of its bonus
        trick_points += 2.0 * cfg.majority_tricks_bonus / tab.n_tricks
    extra = EXTRA * _mean_unseen_counter(tab, unseen) * (3 - position)
    keep = _keep_values(tab, view, trump, legal_cards, unseen, odds, nest_value)
    my_trumps = hand & tab.suit[trump][trump]
    opp_trumps = unseen & tab.suit[trump][trump] & (odds.pool[1] | odds.pool[3])
    if position:
        led = eff[view.trick[0][1]]
        win_rel, win_card = view.trick[0]
        win_power = tab.strength(win_card, trump, led)
        for r, card in view.trick[1:]:
            power = tab.strength(card, trump, led)
            if power > win_power:
                win_rel, win_card, win_power = r, card, power
        p_lose_to_winner = -1.0  # computed once, when first needed
    best_card, best_score = (legal_cards & -legal_cards).bit_length() - 1, -1e9
    cards = legal_cards
    while cards:
        low = cards & -cards
        cards ^= low
        card = low.bit_length() - 1
        if position == 0:
            p = _p_lead(odds, card, eff[card])
        elif tab.strength(card, trump, led) > win_power:
            p = _p_after(odds, position, 0, card, led)
        else:
            if p_lose_to_winner < 0:
                p_lose_to_winner = _p_after(odds, position, win_rel, win_card, led)
            p = p_lose_to_winner
        score = (2.0 * p - 1.0) * (trick_points + points[card] + extra) - keep[card]
        if position == 0:
            score += _lead_bonus(tab, view, trump, card, p, my_trumps, opp_trumps)
        score -= 0.01 * tab.rank_power[card]
        if score > best_score:
            best_card, best_score = card, score
    return best_card


def _nest_value(tab: CardTables, view: SeatView, unseen: int) -> float:
    """What the nest (and the last-trick bonus) is worth to whoever takes the last trick."""
    if view.bidder == 0:
        value = float(tab.points_of(view.discards))
    elif tab.config.nest_discard == "no_counters_unless_forced":
        value = NEST_IF_COUNTERS * tab.scale if view.nest_counters else 0.0
    else:
        value = 5.0 * tab.points_of(unseen) / n if (n := unseen.bit_count()) else 0.0
    return value + tab.config.last_trick_bonus


def _mean_unseen_counter(tab: CardTables, unseen: int) -> float:
    n = unseen.bit_count()
    return tab.points_of(unseen) / n if n else 0.0


def _p_lead(odds: _Odds, card: int, led: int) -> float:
    q1 = odds.p_beat(1, card, led)
    q3 = odds.p_beat(3, card, led)
    p_mine = (1.0 - q1) * (1.0 - q3)  # a partner who overtakes is no loss
    if p_mine > 0.999:
        return p_mine
    q2 = odds.p_beat(2, card, led)
    # somebody beats the card: the partner is the highest of them in proportion to its chance
    return p_mine + (1.0 - p_mine) * q2 / (q1 + q2 + q3 + TIE)


def _p_after(odds: _Odds, position: int, win_rel: int, win_card: int, led: int) -> float:
    """Chance that this side takes the trick when ``win_card`` (of ``win_rel``) wins it after this play."""
    ours = win_rel in (0, 2)
    if position == 3:
        return 1.0 if ours else 0.0
    if position == 2:  # only the left seat is still to play
        return 1.0 - odds.p_beat(1, win_card, led) if ours else 0.0
    # position 1: the left seat, then the partner
    p_left = odds.p_beat(1, win_card, led)
    p_partner = odds.p_beat(2, win_card, led)
    if ours:
        return 1.0 - p_left * (1.0 - 0.5 * p_partner)
    return p_partner * (1.0 - 0.3 * p_left)


def _keep_values(tab: CardTables, view: SeatView, trump: int, legal_cards: int, unseen: int, odds: _Odds,
                 nest_value: float) -> list[float]:
    """Keep value of each legal card (indexed by card id): what it is worth later in the hand."""
    keep = [0.0] * tab.n_cards
    tricks_left = view.tricks_left
    if tricks_left <= 1:
        return keep
    if tricks_left == 2:
        return _keep_for_last_trick(tab, trump, legal_cards, unseen, odds, nest_value)
    eff = tab.effective_suit[trump]
    suit = tab.suit[trump]
    higher = tab.higher[trump]
    hand = view.hand
    my_trumps = hand & suit[trump]
    opp_trumps = unseen & suit[trump] & (odds.pool[1] | odds.pool[3])
    top_trump = -1
    if my_trumps:
        top_trump = max((c for c in range(tab.n_cards) if my_trumps >> c & 1), key=tab.trump_power[trump].__getitem__)
    cards = legal_cards
    while cards:
        low = cards & -cards
        cards ^= low
        card = low.bit_length() - 1
        n_above = (higher[card] & unseen).bit_count()
        if eff[card] == trump:
            if tab.rook_high and card == tab.rook:
                k = K_ROOK
            elif n_above == 0:
                k = K_TOP_TRUMP
            elif n_above == 1:
                k = K_TRUMP1
            else:
                k = K_TRUMP
            if card == top_trump and nest_value > 0:
                k += K_NEST * nest_value
        else:
            if n_above == 0:
                k = K_MASTER if (opp_trumps or not my_trumps) else K_MASTER_SAFE
            elif n_above == 1:
                k = K_SECOND
            else:
                k = 0.0
            if my_trumps and (hand & suit[eff[card]]).bit_count() == 1:
                k -= K_VOID  # shedding it makes a void
        keep[card] = k * tab.scale
    return keep


def _keep_for_last_trick(tab: CardTables, trump: int, legal_cards: int, unseen: int, odds: _Odds,
                         nest_value: float) -> list[float]:
    """Second-to-last trick: a card's keep value is what it brings to the last trick."""
    last = _Odds(tab, trump, unseen, odds.voids, [0, 1, 1, 1])
    base = nest_value + 3.0 * _mean_unseen_counter(tab, unseen)
    eff = tab.effective_suit[trump]
    higher = tab.higher[trump]
    trumps = tab.suit[trump][trump]
    keep = [0.0] * tab.n_cards
    cards = legal_cards
    while cards:
        low = cards & -cards
        cards ^= low
        card = low.bit_length() - 1
        if eff[card] == trump:
            above = higher[card]
            q1, q2, q3 = last.holds_any(1, above), last.holds_any(2, above), last.holds_any(3, above)
            p_mine = (1.0 - q1) * (1.0 - q3)
            p_win = p_mine + (1.0 - p_mine) * q2 / (q1 + q2 + q3 + TIE)
        else:
            above = higher[card] | trumps
            q1, q3 = last.holds_any(1, above), last.holds_any(3, above)
            wins = 0.5 * (1.0 - q1) * (1.0 - q3)  # it wins only if its colour is led (say, half the time)
            p_win = wins + (1.0 - wins) / 3.0
        keep[card] = (2.0 * p_win - 1.0) * (base + tab.points[card])
    return keep


def _lead_bonus(tab: CardTables, view: SeatView, trump: int, card: int, p: float, my_trumps: int,
                opp_trumps: int) -> float:
    """Leading a trump: the bidding side pulls trumps, defenders avoid leading unsure ones."""
    if tab.effective_suit[trump][card] != trump or not opp_trumps:
        return 0.0
    scale = tab.scale
    if view.bidder == 0:
        if p > SURE:
            return DRAW_SURE * scale
        n_mine = my_trumps.bit_count()
        if n_mine >= 3 and n_mine >= opp_trumps.bit_count() / 2:
            return (DRAW_LONG - 0.3 * tab.points[card]) * scale
        return 0.0
    if view.bidder == 2:
        return DRAW_PARTNER * scale if p > SURE else 0.0
    return DEF_TRUMP * scale if p < SURE else 0.0  # defenders rarely lead trumps


# ---------------------------------------------------------------------- low and no-trump calls
def choose_card_generic(tab: CardTables, view: SeatView, legal_cards: int) -> int:
    """Card play under any trump call (the heuristic uses it for low and no-trump calls, which it
    never makes itself but must answer): the rules' own card order for the call, no odds.

    Leading: a master (no unseen card of its suit beats it), counters first; else the lowest card
    of its longest suit. Following an opponent who is winning: take the trick with the lowest card
    that beats it (last to play, third to play, or the trick holds points). Following a winning
    partner: as last to play, add the richest card that does not overtake it; otherwise, and in
    every other case, throw the cheapest card.
    """
    ct, k, points = tab.contracts, view.call, tab.points
    eff, follow = ct.eff[k], ct.follow[k]
    cards = bits(legal_cards)
    hand = view.hand
    if not view.trick:
        unseen = tab.all_cards & ~hand & ~view.played_all & ~view.nest & ~view.discards
        masters = []
        for c in cards:
            power = ct.power[k][eff[c]]
            if not any(power[d] > power[c] for d in bits(unseen & follow[c])):
                masters.append(c)
        if masters:
            return max(masters, key=lambda c: (points[c], -c))
        return min(cards, key=lambda c: (-(hand & follow[c]).bit_count(), ct.power[k][eff[c]][c], c))
    power = ct.power[k][eff[view.trick[0][1]]]
    win_rel, win_card = max(view.trick, key=lambda rc: power[rc[1]])
    last = len(view.trick) == 3
    cheapest = min(cards, key=lambda c: (points[c], power[c], c))
    if win_rel == 2:  # the partner is winning
        if last:
            return max(cards, key=lambda c: (points[c] if power[c] <= power[win_card] else -1, -power[c], -c))
        return cheapest
    winners = [c for c in cards if power[c] > power[win_card]]
    trick_points = sum(points[c] for _, c in view.trick)
    if winners and (last or trick_points or len(view.trick) == 2):
        return min(winners, key=lambda c: (power[c] - (5.0 * points[c] if last else 0.0), c))
    return cheapest


def circus_pass(tab: CardTables, view: SeatView, legal_cards: int) -> int:
    """Circus Rook: the card to pass on (to the left, always an opponent): the cheapest to lose,
    never a trump when a side card is left; lowest first."""
    k = view.call if view.call >= 0 else 0
    trumps = tab.contracts.trumps[k]
    order = tab.contracts.power[k]
    return min(bits(legal_cards), key=lambda c: (bool(trumps >> c & 1), tab.points[c] > 0,
                                                 order[tab.contracts.eff[k][c]][c], c))

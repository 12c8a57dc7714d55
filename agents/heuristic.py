"""A rule-based Rook player that acts only on its own observation.

``HeuristicAgent(seed=None, **flags)`` (``flags``: the environment's rule flags) reads the
seat's observation vector, with :func:`parse_view` (the content of :func:`rook_env.decode`,
parsed several times faster; a test checks that they agree), and the action mask, and
always returns a legal action: when its preferred action is not in the mask, or anything
goes wrong, it falls back to the best legal one (cards: the cheapest to lose; else pass; else
the lowest id). It never looks at the environment, other seats' observations, ``info`` or
hidden state. Between calls it remembers only what it saw itself (cards played by whom,
failures to follow), keyed by its own hand, so one instance may serve several seats, and
``reset()`` is optional. Deterministic: ``seed`` is accepted for the protocol and unused.

Rules it plays by
-----------------
Bidding
  * Estimate, for each trump, the points its side takes as bidder from the pre-nest hand:
    trump length, the Rook Bird, the top three other trumps, side masters (14s; 1s in the
    full deck) and second-highest cards, voids and singletons it can build on with the discard,
    counters held; the intercept carries the average value of the unseen nest and of the
    partner. It is a linear model per deck and Rook rank, fitted to simulated hands
    (``_BID_WEIGHTS``), scaled to the deck's points. Keep the best trump's estimate.
  * Bid the cheapest legal bid while it is at most ``estimate - BID_MARGIN``, else pass; jump
    (to a few steps below its limit) only to pre-empt two opponents still in the auction with
    a much stronger hand. It never raises its own bid.
  * Partner holds the bid: pass unless its estimate beats the partner's bid by
    ``PARTNER_OVERCALL``; a partner who bid earlier adds ``PARTNER_SUPPORT`` to its limit.
  * Dealer forced to bid the minimum: bids it (or calls a redeal when legal and weak).
  * Redeal only when legal (no counter in hand) and the estimate is below ``REDEAL_BELOW``.
Discarding and naming trump
  * Plan discard and trump together over the 14 cards: for each trump and each set of side
    suits to void, keep trumps, the Rook Bird and side masters, void short side suits, then
    discard the lowest side cards (unguarded counters first: the bidder usually takes the last
    trick and so the nest), trumps only when there is no side card left; score each plan with
    a hand evaluation that counts the nest's points at the chance of taking the last trick.
  * Trump: the plan's trump, i.e. by length and strength of the nest-merged hand.
  * ``nest_discard=no_counters_unless_forced``: name the best plan's trump first, then
    discard within the mask, non-counters first (counters only when forced).
Card play (with card counting)
  * Counts cards (played ones, its own hand, and as bidder its discard) and infers voids from
    failures to follow; the chance that a seat still to play can beat a card is computed
    hypergeometrically from the unseen cards that seat may hold.
  * Plays the legal card with the best value ``(2 p - 1) * (trick points + card points +
    expected points still to come) - future value of the card``, ``p`` being the chance that
    its side takes the trick. Future values: the Rook Bird, trumps that no (or one) unseen
    card beats, side masters, less for shedding the last card of a side suit while holding
    trumps. This gives: second hand low; third hand high (the lowest card likely to hold);
    no overtaking of a partner who is winning; counters fed to a trick the partner is sure
    to win; the lowest winning card when last to play (a winning counter first); non-counters
    thrown to the opponents' tricks; ruffing with the lowest trump that wins.
  * Leading: the bidder pulls trumps while an opponent may still hold one (sure trumps first,
    low trumps when long in them); its partner cashes sure trumps; defenders avoid leading
    unsure trumps; everyone cashes a sure winner (the highest remaining card of a colour)
    when it is unlikely to be trumped, else leads low from a colour the opponents are not
    known to be void in.
  * The last trick takes the nest: its value (known to the bidder from its discard; the
    announced "nest holds counters" flag, or the average unseen counter, for the others) is
    added to the top trump's future value and to the last trick's points, and in the
    second-to-last trick the card kept is valued by its chance to win the last trick.
"""

from __future__ import annotations

import random
from functools import lru_cache
from typing import Any, Mapping

import numpy as np

from rook_env.cards import N_COLOURS, bits, layout_for, rank_power
from rook_env.config import RookConfig, make_config
from rook_env.observation import MaskView as View
from rook_env.observation import decode_masks as parse_view
from rook_env.rules import BID, DISCARD, PLAY, TRUMP

__all__ = ["HeuristicAgent", "View", "parse_view"]


def _pc(x: int) -> int:
    return x.bit_count()


# ============================================================================ tables
class _Tables:
    """Everything about cards that does not change during a hand, per trump colour."""

    def __init__(self, config: RookConfig) -> None:
        L = layout_for(config)
        self.L = L
        self.config = config
        n = L.n_cards
        self.n = n
        self.rook = R = L.rook
        self.rbit = L.rook_bit
        self.mode = config.rook_rank
        self.rook_high = config.rook_rank == "high"
        rook_pow = {"high": 1000.0, "low": 100.0, "ten_and_half": 110.5}[config.rook_rank]
        self.pts = L.card_points
        self.colour = L.card_colour
        self.rp = tuple([rank_power(r) for r in L.card_rank[:-1]] + [0])
        self.cmask = L.colour_mask
        self.counter_mask = L.counter_mask
        self.total = L.total_points
        self.scale = L.total_points / 120.0
        self.hand_size = L.hand_size
        self.n_tricks = L.n_tricks
        # Per trump colour T: effective suit masks (the Rook Bird joins trump), the effective
        # suit of each card, its power as a trump (-1 if not a trump), and the mask of the
        # cards of its own effective suit that beat it.
        self.suit: list[tuple[int, ...]] = []
        self.esuit: list[tuple[int, ...]] = []
        self.tpow: list[tuple[float, ...]] = []
        self.higher: list[tuple[int, ...]] = []
        self.order: list[tuple[tuple[int, ...], ...]] = []  # cards of each effective suit, strongest first
        for T in range(N_COLOURS):
            suit = tuple(self.cmask[c] | (self.rbit if c == T else 0) for c in range(N_COLOURS))
            es = tuple([self.colour[c] for c in range(n - 1)] + [T])
            tp = tuple(
                (rook_pow if c == R else (100.0 + self.rp[c] if self.colour[c] == T else -1.0)) for c in range(n)
            )
            power = [tp[c] if tp[c] >= 0 else float(self.rp[c]) for c in range(n)]
            hi = []
            for c in range(n):
                m = 0
                for d in bits(suit[es[c]]):
                    if power[d] > power[c]:
                        m |= 1 << d
                hi.append(m)
            order = tuple(tuple(sorted(bits(suit[s]), key=lambda c: -power[c])) for s in range(N_COLOURS))
            self.suit.append(suit)
            self.esuit.append(es)
            self.tpow.append(tp)
            self.higher.append(tuple(hi))
            self.order.append(order)
        self._pnone: dict[tuple[int, int, int], float] = {}

    def p_none(self, N: int, h: int, k: int) -> float:
        """Chance that ``h`` cards drawn from ``N`` miss ``k`` given ones."""
        if k <= 0 or h <= 0:
            return 1.0
        if N - k < h:
            return 0.0
        key = (N, h, k)
        p = self._pnone.get(key)
        if p is None:
            p = 1.0
            for i in range(h):
                p *= (N - k - i) / (N - i)
            self._pnone[key] = p
        return p

    def key(self, card: int, T: int, led: int) -> float:
        """Strength of ``card`` in a trick whose led effective suit is ``led``."""
        tp = self.tpow[T][card]
        if tp >= 0:
            return tp
        if self.colour[card] == led:
            return float(self.rp[card])
        return -1.0


@lru_cache(maxsize=None)
def _tables(config: RookConfig) -> _Tables:
    return _Tables(config)


# ============================================================================ play context
class _Ctx:
    """Per-decision card-play context: unseen cards, voids, hand sizes, probabilities."""

    __slots__ = ("tab", "T", "U", "pool", "N", "h", "void", "suit", "higher", "rook_high", "rbit", "trumps", "gamma")

    def __init__(self, tab: _Tables, T: int, unseen: int, voids: list[int], sizes: list[int],
                 bidder: int = -1, boost: float = 0.0) -> None:
        self.tab = tab
        self.T = T
        self.U = unseen
        self.void = voids
        self.suit = suit = tab.suit[T]
        self.higher = tab.higher[T]
        self.rook_high = tab.rook_high
        self.rbit = tab.rbit
        self.trumps = suit[T]
        pool = [0, 0, 0, 0]
        N = [0, 0, 0, 0]
        for r in (1, 2, 3):
            m = unseen
            vd = voids[r]
            if vd:
                for s in range(N_COLOURS):
                    if vd >> s & 1:
                        m &= ~suit[s]
            pool[r] = m
            N[r] = _pc(m)
        self.pool = pool
        self.N = N
        self.h = sizes
        # the bidder is likely long in trump: chances of holding none of some trumps are raised
        # to the power gamma (> 1 for the bidder, < 1 for the others)
        g = [1.0, 1.0, 1.0, 1.0]
        if boost and bidder > 0:
            for r in (1, 2, 3):
                g[r] = 1.0 + boost if r == bidder else 1.0 / (1.0 + 0.5 * boost)
        self.gamma = g

    def holds_any(self, r: int, A: int) -> float:
        A &= self.pool[r]
        k = _pc(A)
        if not k:
            return 0.0
        p = self.tab.p_none(self.N[r], self.h[r], k)
        if not A & ~self.trumps:
            p **= self.gamma[r]
        return 1.0 - p

    def p_void(self, r: int, s: int) -> float:
        if self.void[r] >> s & 1:
            return 1.0
        p = self.tab.p_none(self.N[r], self.h[r], _pc(self.pool[r] & self.suit[s]))
        if s == self.T:
            p **= self.gamma[r]
        return p

    def p_beat(self, r: int, w: int, led: int) -> float:
        """Chance that seat ``r`` (still to play) can beat the winning card ``w``."""
        if self.h[r] <= 0:
            return 0.0
        T = self.T
        rb = self.rbit
        if self.rook_high and w == self.tab.rook:
            return 0.0
        hi = self.higher[w] & self.pool[r]
        if self.tab.esuit[T][w] == T:
            if led == T:
                return self.holds_any(r, hi)
            pr = self.holds_any(r, hi & rb) if self.rook_high else 0.0
            return pr + (1.0 - pr) * self.p_void(r, led) * self.holds_any(r, hi & ~rb)
        # w is the best card of the led side suit
        pr = self.holds_any(r, rb) if self.rook_high else 0.0
        pf = self.holds_any(r, hi)
        tr = self.trumps & ~rb if self.rook_high else self.trumps
        pt = self.p_void(r, led) * self.holds_any(r, tr)
        return 1.0 - (1.0 - pr) * (1.0 - pf) * (1.0 - pt)


class _Memory:
    __slots__ = ("played", "lead", "voids")

    def __init__(self, played: list[int], lead: int, voids: list[int]) -> None:
        self.played = played
        self.lead = lead
        self.voids = voids


# Bidding model: expected points (120-point scale) that the bidding side takes, linear in
# _features(); least-squares fits to simulated hands (every seat forced to bid the minimum in
# turn, heuristic play all round; 2,500 deals for the default game, 1,200 for the others).
_BID_FEATURES = ("1", "trumps", "rook", "top1", "top2", "top3", "masters", "seconds", "voids", "singletons",
                 "points", "trump_points")
_BID_WEIGHTS: dict[tuple[str, str], tuple[float, ...]] = {
    ("tournament", "high"): (58.03, 3.37, 13.07, 7.00, 3.38, 1.79, 3.83, 1.04, 1.53, 0.49, 0.14, 0.03),
    ("tournament", "low"): (62.78, 3.60, 3.24, 9.36, 4.70, 2.80, 5.65, 0.56, 1.88, 0.73, 0.04, 0.06),
    ("tournament", "ten_and_half"): (62.13, 3.43, 5.51, 9.11, 4.90, 2.63, 5.85, 0.70, 2.04, 0.77, 0.01, 0.08),
    ("full", "high"): (46.62, 4.70, 8.48, 3.98, 2.38, 0.76, 6.28, 1.71, 1.20, 0.82, 0.10, 0.18),
    ("full", "low"): (50.68, 4.08, 0.00, 8.01, 3.24, 2.08, 7.25, 1.94, 2.24, 1.01, 0.03, 0.26),
    ("full", "ten_and_half"): (50.68, 4.08, 1.50, 8.01, 3.24, 2.08, 7.25, 1.94, 2.24, 1.01, 0.03, 0.26),
}


# ============================================================================ the agent
class HeuristicAgent:
    """Rule-based player (see the module docstring for its rules)."""

    # Tunable weights (points on the 120-point tournament scale).
    BID_MARGIN = 0.0
    PARTNER_OVERCALL = 15.0  # overcall a partner's bid only with this much in hand
    PARTNER_SUPPORT = 5.0  # a partner who bid is worth this much more
    JUMP = True
    K_ROOK = 24.0  # future value of the (high) Rook Bird
    K_TOP_TRUMP = 10.0  # ... of a trump no unseen card beats
    K_TRUMP1 = 6.0  # ... of a trump one unseen card beats
    K_TRUMP = 3.0  # ... of any other trump
    K_MASTER = 8.0  # ... of a side master while opponents may trump
    K_MASTER_SAFE = 3.0  # ... of a side master once they cannot
    K_SECOND = 1.5  # ... of a side card one unseen card beats
    K_VOID = 1.5  # shedding the last card of a side suit while holding trumps
    K_NEST = 1.0  # share of the nest's value added to the top trump's future value
    EXTRA = 0.3  # share of the average unseen counter each seat still to play adds
    DRAW_SURE = 12.0  # bidder leading a sure trump while opponents may hold trumps
    DRAW_LONG = 6.0  # bidder leading a low trump when long in them
    DRAW_PARTNER = 4.0  # bidder's partner leading a sure trump
    DEF_TRUMP = -3.0  # defender leading a trump that is not sure
    TRUMP_BOOST = 0.0  # how much likelier the bidder is than others to hold a given trump
    DISC_COUNTER = 8.0  # preference for laying unguarded counters in the nest (discard="any")
    USE_MEMORY = True  # infer voids from earlier tricks (remembered between calls)
    LAST2 = True  # second-to-last trick: value the card kept by its chance in the last trick
    strict = False  # tests set this to re-raise internal errors instead of falling back
    BONUS_SHARE = 0.8  # expected share of the trick bonuses that the bidding side takes
    REDEAL_BELOW = 90.0  # a hand without counters is below average (about 86): redeal unless it is long in trump

    def __init__(self, seed: int | None = None, **flags: Any) -> None:
        self.config = make_config(**flags)
        self.tab = _tables(self.config)
        self.L = self.tab.L
        self.rng = random.Random(seed)
        self._mem: dict[int, _Memory] = {}
        self.n_fallbacks = 0  # times the preferred action was illegal (or an error occurred)
        self._plans: dict[tuple[int, int], tuple[float, int, int]] = {}
        self._est: dict[int, tuple[float, int]] = {}
        self._bid_w = _BID_WEIGHTS[(self.config.deck, self.config.rook_rank)]

    def reset(self) -> None:
        self._mem.clear()
        self._plans.clear()
        self._est.clear()

    # ------------------------------------------------------------------ entry
    def act(self, observation: Mapping[str, np.ndarray], info: Mapping[str, Any] | None = None) -> int:
        mask_arr = np.asarray(observation["action_mask"])
        legal_ids = np.flatnonzero(mask_arr).tolist()
        if not legal_ids:
            raise ValueError(
                "the action mask is empty: this seat has no legal action (not its turn, or the hand is over)"
            )
        legal = 0
        for a in legal_ids:
            legal |= 1 << a
        try:
            view = parse_view(observation["observation"], self.config)
            a = self._decide(view, legal, legal_ids)
        except Exception:  # never crash: fall back to a safe legal action
            if self.strict:
                raise
            a = -1
        if a < 0 or not (legal >> a) & 1:
            self.n_fallbacks += 1
            a = self._fallback(legal_ids)
        return int(a)

    def _fallback(self, legal_ids: list[int]) -> int:
        L = self.L
        cards = [a for a in legal_ids if a < L.n_cards]
        if cards:
            tab = self.tab
            return min(cards, key=lambda c: (tab.pts[c], tab.rp[c]))
        if L.PASS in legal_ids:
            return L.PASS
        return legal_ids[0]

    def _decide(self, v: View, legal: int, legal_ids: list[int]) -> int:
        L = self.L
        if len(legal_ids) == 1 and v.phase != PLAY:
            return legal_ids[0]
        if v.phase == PLAY:
            return self._play(v, legal & L.card_mask)
        if v.phase == BID:
            return self._bid(v, legal)
        if v.phase == DISCARD:
            return self._discard(v, legal & L.card_mask)
        if v.phase == TRUMP:
            return self._trump(v, legal)
        return legal_ids[0]

    # ================================================================= evaluation
    def _eval(self, hand: int, T: int, nest_pts: float) -> float:
        """Expected points of the bidding side with ``hand`` (after the discard) and trump ``T``."""
        tab = self.tab
        suit = tab.suit[T]
        tmask = hand & suit[T]
        t = _pc(tmask)
        rb = tab.rbit
        # top trumps held in sequence from the highest
        sure = 0
        for c in tab.order[T][T]:
            if hand >> c & 1:
                sure += 1
            else:
                break
        top2 = tab.order[T][T][:3]
        honours = sum(1 for c in top2 if hand >> c & 1)
        masters = 0.0
        voids = 0
        short = 0
        unguarded = 0
        for s in range(N_COLOURS):
            if s == T:
                continue
            m = hand & suit[s]
            k = _pc(m)
            if k == 0:
                voids += 1
                continue
            if k == 1:
                short += 1
            order = tab.order[T][s]
            if m >> order[0] & 1:
                masters += 1.0
                if m >> order[1] & 1:
                    masters += 0.5
            # counters not protected by the suit's top cards
            for c in bits(m & tab.counter_mask):
                if tab.higher[T][c] & ~m:
                    unguarded += tab.pts[c]
        rook = 1 if hand & rb else 0
        sc = tab.scale
        n9 = tab.hand_size
        # trump length relative to the hand size (9 in tournament, 13 in full)
        tl = t * 9.0 / n9
        est = (
            22.0
            + 6.0 * tl
            + 4.0 * sure
            + 3.0 * honours
            + (6.0 * rook if tab.rook_high else 2.0 * rook)
            + 7.0 * masters
            + (2.5 * voids + 1.0 * short) * (1.0 if tl >= 4 else 0.5)
            - 0.15 * unguarded / sc
        ) * sc
        p_last = min(0.95, 0.3 + 0.1 * tl + 0.1 * sure)
        return est + p_last * nest_pts

    def _discard_options(self, H: int, T: int) -> list[int]:
        tab = self.tab
        suit = tab.suit[T]
        forced_mode = self.config.nest_discard == "no_counters_unless_forced"
        trumps = H & suit[T]
        side = H & ~trumps
        cm = tab.counter_mask
        masters = 0
        for s in range(N_COLOURS):
            if s == T:
                continue
            order = tab.order[T][s]
            m = H & suit[s]
            for c in order:  # masters: top cards held in sequence
                if m >> c & 1:
                    masters |= 1 << c
                else:
                    break
        hi = tab.higher[T]

        def side_keep(c: int) -> float:
            # lower = discard first
            if masters >> c & 1:
                return 100.0 + tab.rp[c]
            v = float(tab.rp[c])
            if tab.pts[c] and not forced_mode:
                # unguarded counters are better off in the nest than lost in play
                v -= self.DISC_COUNTER if hi[c] & ~H else 0.0
            return v

        def trump_keep(c: int) -> float:
            return (50.0 if c == tab.rook else 0.0) + tab.tpow[T][c] + (20.0 if tab.pts[c] else 0.0)

        side_sorted = sorted(bits(side), key=side_keep)
        trump_sorted = sorted(bits(trumps), key=trump_keep)
        opts = []
        for sub in range(8):
            cols = [s for s in range(N_COLOURS) if s != T]
            V = 0
            for j, s in enumerate(cols):
                if sub >> j & 1:
                    V |= suit[s] & side & ~masters
            if _pc(V) > 5:
                continue
            D = V
            for c in side_sorted:
                if _pc(D) >= 5:
                    break
                D |= 1 << c
            for c in trump_sorted:
                if _pc(D) >= 5:
                    break
                D |= 1 << c
            if forced_mode and D & cm:
                # counters only when every non-counter side card is discarded too
                free_side = side & ~cm
                if free_side & ~D:
                    continue
            if D not in opts:
                opts.append(D)
        if forced_mode:
            # greedy legal option: non-counter side cards first, then non-counter trumps, then the rest
            D = 0
            order = ([c for c in side_sorted if not tab.pts[c]] + [c for c in trump_sorted if not tab.pts[c]]
                     + [c for c in side_sorted if tab.pts[c]] + [c for c in trump_sorted if tab.pts[c]])
            for c in order:
                if _pc(D) >= 5:
                    break
                D |= 1 << c
            if D not in opts:
                opts.append(D)
        return opts

    def _plan(self, H: int, trump: int = -1) -> tuple[float, int, int]:
        """Best (value, trump, discard mask) for the 14-card hand ``H``."""
        key = (H, trump)
        p = self._plans.get(key)
        if p is not None:
            return p
        tab = self.tab
        best = None
        for T in ([trump] if trump >= 0 else range(N_COLOURS)):
            for D in self._discard_options(H, T):
                val = self._eval(H & ~D, T, sum(tab.pts[c] for c in bits(D)))
                if best is None or val > best[0]:
                    best = (val, T, D)
        if len(self._plans) > 64:
            self._plans.clear()
        self._plans[key] = best
        return best

    def _features(self, hand: int, T: int) -> tuple[float, ...]:
        """Bidding features of a pre-nest hand for trump ``T`` (normalised to a 9-card hand)."""
        tab = self.tab
        suit = tab.suit[T]
        norm = 9.0 / tab.hand_size
        t = _pc(hand & suit[T]) * norm
        rook = 1.0 if hand & tab.rbit else 0.0
        tops = [c for c in tab.order[T][T] if c != tab.rook][:3]
        top1, top2, top3 = (1.0 if hand >> c & 1 else 0.0 for c in tops)
        masters = sec = voids = short = 0.0
        for s in range(N_COLOURS):
            if s == T:
                continue
            m = hand & suit[s]
            k = _pc(m)
            if k == 0:
                voids += 1
            elif k == 1:
                short += 1
            order = tab.order[T][s]
            if m >> order[0] & 1:
                masters += 1
            if m >> order[1] & 1:
                sec += 1
        sc = tab.scale
        pts = sum(tab.pts[c] for c in bits(hand)) / sc
        tpts = sum(tab.pts[c] for c in bits(hand & suit[T])) / sc
        return (1.0, t, rook, top1, top2, top3, masters, sec, voids, short, pts, tpts)

    def _estimate(self, hand: int) -> tuple[float, int]:
        """Bidding estimate (points the side takes as bidder, best trump) of a pre-nest hand."""
        e = self._est.get(hand)
        if e is not None:
            return e
        w = self._bid_w
        best_v, best_t = -1e9, 0
        for T in range(N_COLOURS):
            f = self._features(hand, T)
            val = sum(a * b for a, b in zip(w, f))
            if val > best_v:
                best_v, best_t = val, T
        cfg = self.config
        # the bidding side usually takes the majority of tricks and the last trick
        bonus = self.BONUS_SHARE * (cfg.majority_tricks_bonus + cfg.last_trick_bonus)
        e = (best_v * self.tab.scale + bonus, best_t)
        if len(self._est) > 64:
            self._est.clear()
        self._est[hand] = e
        return e

    # ================================================================= bidding
    def _bid(self, v: View, legal: int) -> int:
        L, tab = self.L, self.tab
        bids = L.bids
        est, _ = self._estimate(v.hand)
        step = self.config.bid_step
        can_redeal = bool(legal >> L.REDEAL & 1)
        bid_levels = [i for i in range(L.n_bids) if legal >> (L.BID0 + i) & 1]
        can_pass = bool(legal >> L.PASS & 1)
        if can_redeal and est < self.REDEAL_BELOW * tab.scale:
            return L.REDEAL
        if not bid_levels:
            return L.PASS
        if not can_pass:  # dealer forced
            return L.BID0 + bid_levels[0]
        if v.bidder == 0:  # never raise its own bid (the auction does not ask it to)
            return L.PASS
        limit = est - self.BID_MARGIN * tab.scale
        partner_bid = max((lvl for r, lvl in v.bids if r == 2), default=-1)
        if v.bidder == 2:
            # partner holds the bid: take it over only with a much better hand
            if limit < bids[v.contract] + self.PARTNER_OVERCALL * tab.scale:
                return L.PASS
        elif partner_bid >= 0:
            limit += self.PARTNER_SUPPORT * tab.scale
        nxt = bid_levels[0]
        if bids[nxt] > limit:
            return L.PASS
        # pre-empt: both opponents still active and a strong hand -> jump to a level below the limit
        passed = {r for r, _ in v.passed}
        target = nxt
        if self.JUMP and 1 not in passed and 3 not in passed and v.bidder not in (1, 3):
            jump = max((i for i in bid_levels if bids[i] <= limit - 2 * step), default=nxt)
            if bids[jump] - bids[nxt] >= 3 * step:
                target = jump - 2 if jump - 2 > nxt else nxt
        return L.BID0 + target

    # ================================================================= discard / trump
    def _discard(self, v: View, legal_cards: int) -> int:
        tab = self.tab
        H = v.hand | v.discards
        trump = v.trump if self.config.nest_discard == "no_counters_unless_forced" else -1
        _, T, D = self._plan(H, trump)
        todo = D & ~v.discards & legal_cards
        if todo:
            # non-counters first (keeps the German rule's order legal)
            cards = sorted(bits(todo), key=lambda c: (tab.pts[c] > 0, tab.rp[c]))
            return cards[0]
        # fallback: the legal card cheapest to lose
        T = T if T >= 0 else 0

        def cost(c: int) -> float:
            x = float(tab.rp[c]) + 3.0 * tab.pts[c]
            if c == tab.rook:
                x += 200
            elif tab.esuit[T][c] == T:
                x += 50
            return x

        return min(bits(legal_cards), key=cost) if legal_cards else -1

    def _trump(self, v: View, legal: int) -> int:
        L, tab = self.L, self.tab
        if self.config.nest_discard == "no_counters_unless_forced":
            _, T, _ = self._plan(v.hand)
        else:
            nest_pts = sum(tab.pts[c] for c in bits(v.discards))
            T = max(range(N_COLOURS), key=lambda t: self._eval(v.hand, t, nest_pts))
        a = L.TRUMP0 + T
        if legal >> a & 1:
            return a
        return -1

    # ================================================================= card play
    def _voids(self, v: View, T: int) -> list[int]:
        """Known voids (effective-suit bitmasks by rel seat), from memory and the current trick."""
        tab = self.tab
        es = tab.esuit[T]
        rook, rh = tab.rook, tab.rook_high
        mem = self._mem.pop(v.hand, None) if self.USE_MEMORY else None
        trick_cards = 0
        for _, c in v.trick:
            trick_cards |= 1 << c
        voids = [0, 0, 0, 0]
        if mem is not None and not (mem.played[0] | mem.played[1] | mem.played[2] | mem.played[3]) & ~v.played_all:
            voids = list(mem.voids)
            mine = v.played[0] & ~mem.played[0]
            if _pc(mine) == 1:
                lead = mem.lead if mem.lead >= 0 else mine.bit_length() - 1
                s = es[lead]
                for r in (1, 2, 3):
                    for c in bits(v.played[r] & ~mem.played[r] & ~trick_cards):
                        if es[c] != s and not (rh and c == rook):
                            voids[r] |= 1 << s
        if v.trick:
            s = es[v.trick[0][1]]
            for r, c in v.trick[1:]:
                if es[c] != s and not (rh and c == rook):
                    voids[r] |= 1 << s
        return voids

    def _remember(self, v: View, card: int, voids: list[int]) -> None:
        if len(self._mem) > 32:
            self._mem.clear()
        played = list(v.played)  # without my card: the next call finds it as my one new card
        lead = v.trick[0][1] if v.trick else -1
        self._mem[v.hand & ~(1 << card)] = _Memory(played, lead, voids)

    def _play(self, v: View, legal: int) -> int:
        T = v.trump if v.trump >= 0 else 0
        voids = self._voids(v, T)
        cards = bits(legal)
        if not cards:
            return -1
        if len(cards) == 1:
            c = cards[0]
        else:
            c = self._choose_card(v, T, cards, voids)
        self._remember(v, c, voids)
        return c

    def _choose_card(self, v: View, T: int, cards: list[int], voids: list[int]) -> int:
        tab = self.tab
        pts = tab.pts
        es = tab.esuit[T]
        hand = v.hand
        we_bid = v.bidder in (0, 2)
        i_bid = v.bidder == 0
        unseen = tab.L.all_cards & ~hand & ~v.played_all & ~v.nest & ~v.discards
        pos = len(v.trick)
        tl = v.tricks_left
        sizes = [0, tl, tl, tl]
        for r, _ in v.trick:
            if r:
                sizes[r] = tl - 1
        bid_rel = v.bidder if v.bidder is not None else -1
        ctx = _Ctx(tab, T, unseen, voids, sizes, bid_rel, self.TRUMP_BOOST)
        suitT = tab.suit[T]
        my_trumps = hand & suitT[T]
        last_trick = tl <= 1
        # the nest's value to whoever takes the last trick
        if i_bid:
            nest_val = float(sum(pts[c] for c in bits(v.discards)))
        elif self.config.nest_discard == "no_counters_unless_forced":
            nest_val = 12.0 * tab.scale if v.nest_counters else 0.0
        else:
            n_unseen = _pc(unseen)
            up = sum(pts[c] for c in bits(unseen & tab.counter_mask))
            nest_val = 5.0 * up / n_unseen if n_unseen else 0.0
        cfg = self.config
        nest_val += cfg.last_trick_bonus  # both go to whoever takes the last trick
        # trick so far
        trick_pts = sum(pts[c] for _, c in v.trick)
        if last_trick:
            trick_pts += nest_val
        if cfg.majority_tricks_bonus and max(v.tricks_won) * 2 <= tab.n_tricks:
            # the majority is still open: every trick carries a share of its bonus
            trick_pts += 2.0 * cfg.majority_tricks_bonus / tab.n_tricks
        if pos:
            led = es[v.trick[0][1]]
            wr, wc = v.trick[0]
            wk = tab.key(wc, T, led)
            for r, c in v.trick[1:]:
                k = tab.key(c, T, led)
                if k > wk:
                    wr, wc, wk = r, c, k
        else:
            led = -1
            wr, wc, wk = -1, -1, -2.0
        n_unseen = _pc(unseen)
        avg = (sum(pts[c] for c in bits(unseen & tab.counter_mask)) / n_unseen) if n_unseen else 0.0
        rest = 3 - pos
        extra = self.EXTRA * avg * rest
        opp_trumps = unseen & suitT[T] & (ctx.pool[1] | ctx.pool[3])
        # keep values
        keep = self._keep_values(v, T, cards, unseen, ctx, nest_val)
        best_c, best_s = cards[0], -1e9
        cache: dict[tuple[int, int], float] = {}
        for c in cards:
            if pos == 0:
                lead_s = es[c]
                p = self._p_lead(ctx, c, lead_s)
            else:
                k = tab.key(c, T, led)
                if k > wk:
                    p = self._p_after(ctx, pos, 0, c, led)
                else:
                    ck = (wr, wc)
                    p = cache.get(ck)
                    if p is None:
                        p = self._p_after(ctx, pos, wr, wc, led)
                        cache[ck] = p
            val = trick_pts + pts[c] + extra
            s = (2.0 * p - 1.0) * val - keep[c]
            if pos == 0:
                s += self._lead_bonus(T, c, p, we_bid, i_bid, my_trumps, opp_trumps)
            # tie-breaks: lower cards first
            s -= 0.01 * tab.rp[c]
            if s > best_s:
                best_c, best_s = c, s
        return best_c

    def _p_lead(self, ctx: _Ctx, c: int, s: int) -> float:
        q1 = ctx.p_beat(1, c, s)
        q3 = ctx.p_beat(3, c, s)
        p_me = (1.0 - q1) * (1.0 - q3)  # a partner who overtakes is no loss
        if p_me > 0.999:
            return p_me
        q2 = ctx.p_beat(2, c, s)
        # somebody beats my card: the partner is the highest of them in proportion to its chance
        return p_me + (1.0 - p_me) * q2 / (q1 + q2 + q3 + 1e-9)

    def _p_after(self, ctx: _Ctx, pos: int, wr: int, wc: int, led: int) -> float:
        """Chance that my side takes the trick when ``wc`` (by rel ``wr``) is winning after my play."""
        ours = wr in (0, 2)
        if pos == 3:
            return 1.0 if ours else 0.0
        if pos == 2:  # only left to play
            return 1.0 - ctx.p_beat(1, wc, led) if ours else 0.0
        # pos == 1: left, then partner
        pb1 = ctx.p_beat(1, wc, led)
        pp = ctx.p_beat(2, wc, led)
        if ours:
            return 1.0 - pb1 * (1.0 - 0.5 * pp)
        return pp * (1.0 - 0.3 * pb1)

    def _keep_values(
        self, v: View, T: int, cards: list[int], unseen: int, ctx: _Ctx, nest_val: float
    ) -> dict[int, float]:
        tab = self.tab
        es = tab.esuit[T]
        suit = tab.suit[T]
        hand = v.hand
        tl = v.tricks_left
        out = {}
        if tl <= 1:
            for c in cards:
                out[c] = 0.0
            return out
        sc = tab.scale
        if tl == 2 and self.LAST2:
            return self._keep_last(T, cards, unseen, ctx, nest_val)
        my_trumps = hand & suit[T]
        opp_trumps = unseen & suit[T] & (ctx.pool[1] | ctx.pool[3])
        top_trump = -1
        if my_trumps:
            top_trump = max(bits(my_trumps), key=lambda c: tab.tpow[T][c])
        for c in cards:
            nh = _pc(tab.higher[T][c] & unseen)
            if es[c] == T:
                if tab.rook_high and c == tab.rook:
                    k = self.K_ROOK
                elif nh == 0:
                    k = self.K_TOP_TRUMP
                elif nh == 1:
                    k = self.K_TRUMP1
                else:
                    k = self.K_TRUMP
                if c == top_trump and nest_val > 0 and tl >= 2:
                    k += self.K_NEST * nest_val
            else:
                s = es[c]
                if nh == 0:
                    k = self.K_MASTER if (opp_trumps or not my_trumps) else self.K_MASTER_SAFE
                elif nh == 1:
                    k = self.K_SECOND
                else:
                    k = 0.0
                if my_trumps and _pc(hand & suit[s]) == 1:
                    k -= self.K_VOID  # shedding it makes a void
            out[c] = k * sc
        return out

    def _keep_last(self, T: int, cards: list[int], unseen: int, ctx: _Ctx, nest_val: float) -> dict[int, float]:
        """Second-to-last trick: a card's future value is what it brings to the last trick."""
        tab = self.tab
        es = tab.esuit[T]
        last = _Ctx(tab, T, unseen, ctx.void, [0, 1, 1, 1])
        last.gamma = ctx.gamma
        n_unseen = _pc(unseen)
        avg = (sum(tab.pts[c] for c in bits(unseen & tab.counter_mask)) / n_unseen) if n_unseen else 0.0
        base = nest_val + 3.0 * avg
        trumps = tab.suit[T][T]
        out = {}
        for c in cards:
            if es[c] == T:
                hi = tab.higher[T][c]
                q1, q2, q3 = last.holds_any(1, hi), last.holds_any(2, hi), last.holds_any(3, hi)
                p_me = (1.0 - q1) * (1.0 - q3)
                pi = p_me + (1.0 - p_me) * q2 / (q1 + q2 + q3 + 1e-9)
            else:
                hi = tab.higher[T][c] | trumps
                q1, q3 = last.holds_any(1, hi), last.holds_any(3, hi)
                w = 0.5 * (1.0 - q1) * (1.0 - q3)  # it wins only if its colour is led (say, half the time)
                pi = w + (1.0 - w) / 3.0
            out[c] = (2.0 * pi - 1.0) * (base + tab.pts[c])
        return out

    def _lead_bonus(self, T: int, c: int, p: float, we_bid: bool, i_bid: bool, my_trumps: int,
                    opp_trumps: int) -> float:
        """Leading: the bidding side pulls trumps, defenders avoid leading unsure trumps."""
        tab = self.tab
        sc = tab.scale
        if tab.esuit[T][c] != T:
            return 0.0
        if not opp_trumps:
            return 0.0
        n_my = _pc(my_trumps)
        n_opp = _pc(opp_trumps)
        if i_bid:
            if p > 0.8:
                return self.DRAW_SURE * sc
            if n_my >= 3 and n_my >= n_opp / 2:
                return (self.DRAW_LONG - 0.3 * tab.pts[c]) * sc
            return 0.0
        if we_bid:
            return self.DRAW_PARTNER * sc if p > 0.8 else 0.0
        # defenders rarely lead trump
        return self.DEF_TRUMP * sc if p < 0.8 else 0.0

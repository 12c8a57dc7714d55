"""A rule-based call-your-partner player that acts only on its own observation.

``CallPartnerHeuristic(seed=None, **flags)`` (``flags``: the environment's rule flags, e.g.
``players=6``) decodes its seat's observation with :func:`rook_env.call_partner.decode` and
always returns an action of the mask (a preferred action outside the mask falls back to the
lowest legal id). It never looks at the environment, other seats, ``info`` or hidden state,
and keeps no memory between calls, so one instance may serve several seats. Deterministic.

Rules it plays by (RULES.md section C)
---------------------------------------
Bidding
  * Hand strength for each trump colour: per card, the Rook Bird 20; a trump 6 plus 12 / 8 /
    5 / 3 for the 1 / 14 / 13 / 12; a side 1 10, a side 14 3; plus half of the counters held.
    The estimate of the side's points is ``BID_INTERCEPT + BID_SLOPE * strength`` (scaled to
    the hand size), fitted to simulated hands in which this agent plays every seat.
  * Bid the cheapest legal bid while it is at most ``estimate - BID_MARGIN``, else pass.
    Stuck as dealer: bid the minimum (or call a redeal when legal and weak).
Nest, trump, Rook and the call
  * Trump: the colour of greatest strength over the hand with the nest.
  * Discard: never trumps or the Rook; lowest side cards first, counters and side 1s last,
    short side colours first (voids let it ruff). Within the mask under the German rule.
  * Rook high (the Rook Bird is then the top trump).
  * Call the highest trump it lacks (the Rook Bird first, then the trump 1, 14, ...), never a
    card it laid in the nest; with six players the two highest.
Card play, with partner inference from its own observation
  * Friends: as bidder, the seats that have played a called card; as the holder of a called
    card, the bidder and those seats; as a defender, every seat that is neither the bidder nor
    a known partner once every called card has shown up, else no one (an unknown seat may be
    the secret partner).
  * Leading: the bidding side pulls trumps with the highest remaining trump; anyone cashes
    a side card that no unseen card of its colour beats; else lead low from the longest side
    colour.
  * Following: a friend winning for sure (nothing unseen can beat its card, or I am last)
    gets my highest counter; otherwise take the trick with the cheapest sure winner, with a
    winning counter when last, or with the highest winner when the trick holds 10+ points;
    else throw the cheapest card (no counters, low, side colours first).
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from rook_env.games.call_partner import raw_env
from rook_env.games.call_partner.config import make_config
from rook_env.games.call_partner.layout import layout_for
from rook_env.games.call_partner.observation import CallPartnerView, decode
from rook_env.games.call_partner.rules import card_power
from rook_env.games.partnership.cards import bits

from ..base import legal_from
from ..random_agent import RandomAgent

__all__ = ["CallPartnerHeuristic"]

N_COLOURS = 4
# Bidding model per player count: side points ~ intercept + slope * strength per 10 cards, fitted
# by least squares to 200-300 simulated hands each (seat 0 bids 100, this agent plays every seat;
# residual sd about 30 points).
BID_MODEL = {4: (113.5, 0.60), 5: (112.0, 0.58), 6: (130.0, 0.43)}
BID_MARGIN = 10
REDEAL_BELOW = 110
TRUMP_BONUS = {1: 12, 14: 8, 13: 5, 12: 3}
SIDE_BONUS = {1: 10, 14: 3}


class CallPartnerHeuristic:
    def __init__(self, seed: int | None = None, **flags: Any) -> None:
        self.config = make_config(**flags)
        self.L = layout_for(self.config)
        self.n = self.config.players

    def reset(self) -> None:
        pass

    # ------------------------------------------------------------------ entry
    def act(self, observation: Mapping[str, np.ndarray], info: Mapping[str, Any] | None = None) -> int:
        legal_ids = legal_from(observation)
        legal = 0
        for a in legal_ids.tolist():
            legal |= 1 << a
        v = decode(observation["observation"], self.config)
        phase = v.phase
        if phase == "bid":
            a = self._bid(v, legal)
        elif phase == "discard":
            a = self._discard(v, legal)
        elif phase == "trump":
            a = self.L.TRUMP0 + self._best_trump(self._mask(v.hand))
        elif phase == "rook":
            a = self.L.ROOK_HIGH
        elif phase == "call":
            a = self._call(v, legal)
        else:
            a = self._play(v, legal)
        return a if legal >> a & 1 else int(legal_ids[0])

    # --------------------------------------------------------------- helpers
    @staticmethod
    def _mask(cards: list[int]) -> int:
        m = 0
        for c in cards:
            m |= 1 << c
        return m

    def strength(self, hand: int, trump: int) -> float:
        """Hand strength with ``trump`` as trump (module docstring)."""
        L = self.L
        s = 0.0
        for c in bits(hand):
            if c == L.rook:
                s += 20
                continue
            rank = L.card_rank[c]
            if L.card_colour[c] == trump:
                s += 6 + TRUMP_BONUS.get(rank, 0)
            else:
                s += SIDE_BONUS.get(rank, 0)
            s += L.card_points[c] / 2
        return s

    def _best_trump(self, hand: int) -> int:
        return max(range(N_COLOURS), key=lambda t: (self.strength(hand, t), (hand & self.L.colour_mask[t]).bit_count()))

    def estimate(self, hand: int) -> float:
        """Estimated points of the side when this hand bids with its best trump."""
        best = max(self.strength(hand, t) for t in range(N_COLOURS))
        intercept, slope = BID_MODEL[self.n]
        return intercept + slope * best * 10 / self.L.hand_size

    # --------------------------------------------------------------- bidding
    def _bid(self, v: CallPartnerView, legal: int) -> int:
        L = self.L
        est = self.estimate(self._mask(v.hand))
        if not legal >> L.PASS & 1:  # stuck as dealer
            if legal >> L.REDEAL & 1 and est < REDEAL_BELOW:
                return L.REDEAL
            return L.BID0
        for i, value in enumerate(L.bids):
            if legal >> (L.BID0 + i) & 1:
                return L.BID0 + i if value <= est - BID_MARGIN else L.PASS
        return L.PASS

    # -------------------------------------------------------- nest and call
    def _discard(self, v: CallPartnerView, legal: int) -> int:
        L = self.L
        hand = self._mask(v.hand)
        trump = v.trump if v.trump is not None else self._best_trump(hand)
        length = [(hand & L.colour_mask[c]).bit_count() for c in range(N_COLOURS)]

        def keep_value(c: int) -> tuple:
            if c == L.rook or L.card_colour[c] == trump:
                return (2, L.card_power[c])
            counter = L.card_points[c] > 0 or L.card_rank[c] == 1
            return (1 if counter else 0, length[L.card_colour[c]], L.card_power[c])

        return min(bits(legal & L.all_cards), key=keep_value)

    def _call(self, v: CallPartnerView, legal: int) -> int:
        L = self.L
        trump = v.trump
        own_nest = self._mask(v.discards)
        order = [L.rook] + sorted(bits(L.colour_mask[trump]), key=lambda c: -L.card_power[c])
        for c in order:
            if legal >> c & 1 and not own_nest >> c & 1:
                return c
        return min(bits(legal & L.all_cards & ~own_nest) or bits(legal & L.all_cards))

    # ------------------------------------------------------------- card play
    def friends(self, v: CallPartnerView) -> set[int]:
        """Rel seats known to play on my side (module docstring)."""
        n = self.n
        known = set(v.known_partners)
        bidder = v.bidder
        if bidder == 0:
            return known - {0}
        if 0 in known:
            return ({bidder} | known) - {0}
        # A defender: the called cards are all accounted for when each has been played
        # (or cannot be anywhere but the nest: not the case as far as this seat can tell).
        played = set(v.played)
        if all(c in played for c in v.called):
            return set(range(1, n)) - {bidder} - known
        return set()

    def _play(self, v: CallPartnerView, legal: int) -> int:
        L, n = self.L, self.n
        trump, rook_high = v.trump, v.rook == "high"
        cards = bits(legal & self.L.all_cards)
        unseen = v.unseen()
        friends = self.friends(v)
        on_bid_side = v.bidder == 0 or 0 in v.known_partners

        def sure(card: int, led: int) -> bool:
            """No unseen card can beat ``card`` in a trick led in ``led``."""
            p = card_power(L, card, trump, rook_high, led)
            for u in bits(unseen):
                if card_power(L, u, trump, rook_high, led) > p:
                    return False
            return True

        def cheap(c: int) -> tuple:
            is_trump = c == L.rook or L.card_colour[c] == trump
            return (L.card_points[c], is_trump, L.card_power[c])

        if not v.trick:  # leading
            trumps = [c for c in cards if c == L.rook or L.card_colour[c] == trump]
            unseen_trumps = unseen & (L.colour_mask[trump] | L.rook_bit)
            if on_bid_side and trumps and unseen_trumps:
                top = max(trumps, key=lambda c: card_power(L, c, trump, rook_high, trump))
                if sure(top, trump):
                    return top
            for c in sorted(cards, key=lambda c: -L.card_points[c]):
                col = L.card_colour[c]
                if col >= 0 and col != trump and sure_in_colour(L, c, unseen):
                    return c
            side = [c for c in cards if c != L.rook and L.card_colour[c] != trump]
            pool = side or cards
            length = {col: sum(1 for c in pool if L.card_colour[c] == col) for col in range(N_COLOURS)}
            return min(pool, key=lambda c: (L.card_points[c], -length.get(L.card_colour[c], 0), L.card_power[c]))

        led_card = v.trick[0][1]
        led = trump if led_card == L.rook else L.card_colour[led_card]
        powers = [card_power(L, c, trump, rook_high, led) for _, c in v.trick]
        best_i = max(range(len(powers)), key=lambda i: powers[i])
        winner_rel, winning = v.trick[best_i][0], powers[best_i]
        last = len(v.trick) == n - 1
        trick_points = sum(L.card_points[c] for _, c in v.trick)
        if winner_rel in friends and (last or sure(v.trick[best_i][1], led)):
            return max(cards, key=lambda c: (L.card_points[c], -L.card_power[c]))
        winners = [c for c in cards if card_power(L, c, trump, rook_high, led) > winning]
        if winners and winner_rel not in friends:
            if last:
                return max(winners, key=lambda c: (L.card_points[c], -card_power(L, c, trump, rook_high, led)))
            sure_w = [c for c in winners if sure(c, led)]
            if sure_w:
                return min(sure_w, key=lambda c: card_power(L, c, trump, rook_high, led))
            if trick_points >= 10:
                return max(winners, key=lambda c: card_power(L, c, trump, rook_high, led))
        return min(cards, key=cheap)


def sure_in_colour(L, card: int, unseen: int) -> bool:
    """No unseen card of ``card``'s colour ranks above it (it wins unless trumped)."""
    col = L.card_colour[card]
    p = L.card_power[card]
    m = unseen & L.colour_mask[col]
    while m:
        low = m & -m
        if L.card_power[low.bit_length() - 1] > p:
            return False
        m ^= low
    return True


def measure(players: int = 5, hands: int = 300, seed: int = 0, opponent: str = "random") -> tuple[float, float]:
    """Mean individual ``score_diff`` of one heuristic seat against ``opponent`` agents (random
    or this heuristic) over ``hands`` deals, the heuristic seat rotating with the deal; returns
    (mean, standard error)."""
    e = raw_env(players=players, reward="score_diff")
    me = CallPartnerHeuristic(players=players)
    other = RandomAgent(seed=seed) if opponent == "random" else me
    diffs = []
    for k in range(hands):
        e.reset(seed=seed + k)
        seat = f"player_{k % players}"
        total = 0.0
        for agent in e.agent_iter():
            obs, reward, term, trunc, _ = e.last()
            if agent == seat:
                total += reward
            e.step(None if term or trunc else (me if agent == seat else other).act(obs))
        diffs.append(total)
    arr = np.asarray(diffs, dtype=float)
    return float(arr.mean()), float(arr.std(ddof=1) / np.sqrt(len(arr)))


if __name__ == "__main__":  # python -m rook_env.agents.heuristic.call_partner [players] [hands] [opponent]
    import sys

    args = sys.argv[1:]
    p, h = (int(args[0]) if args else 5), (int(args[1]) if len(args) > 1 else 300)
    opp = args[2] if len(args) > 2 else "random"
    mean, se = measure(p, h, opponent=opp)
    print(f"{p} players, {h} hands, heuristic vs {opp}: mean score_diff {mean:+.1f} (95% CI +/- {1.96 * se:.1f})")

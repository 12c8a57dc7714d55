"""The pure rules of four-player partnership Rook (RULES.md): no gymnasium, no numpy.

:class:`RookState` holds one table: the deal, the auction, the nest, trump, the tricks,
and the game score. It answers ``legal_mask()`` / ``legal_actions()`` and takes
``apply(action)``, one legal/apply pair per phase, and ``clone()``s cheaply for search.
Card sets are ``int`` bitmasks over card ids (see :mod:`rook_env.games.partnership.cards`).

The deal, auction, nest exchange and trick play are the shared trick-taking core's
(:class:`rook_env.core.rules.TrickState`); this module holds what the partnership game changes:
the contract and its card tables, Circus Rook, team credit (R1) and scoring (R8, F9, F10).

Phases, in order: ``BID`` -> ``DISCARD`` -> ``TRUMP`` -> ``PLAY`` -> ``OVER``
(with ``nest_discard="no_counters_unless_forced"`` the bidder names trump before
discarding: ``BID`` -> ``TRUMP`` -> ``DISCARD`` -> ``PLAY``; with ``nest="off"`` there is
no ``DISCARD``; with ``circus_rook="on"`` a called circus adds ``CIRCUS``, the card
passing, between ``TRUMP`` and ``PLAY``). In ``episode="game"`` a finished hand that
does not end the game deals the next hand (dealer rotated) and returns to ``BID``.

The contract (a trump colour, or with ``trump_calls="extended"`` a colour or no trump,
high or low) fixes how cards follow and win: :class:`ContractTables` holds that per
contract, built once per configuration.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Sequence

from .cards import N_COLOURS, N_SEATS, bits, contract_low, contract_trump, layout_for
from .config import RookConfig
from rook_env.core.rules import TrickState

BID, DISCARD, TRUMP, PLAY, OVER, CIRCUS = range(6)
PHASE_NAMES = ("bid", "discard", "trump", "play", "over", "circus")
# Trick-taking power of the Rook Bird per ``rook_rank`` in a colour contract called high; a trump
# ranks TRUMP_POWER + its order, a card of the led colour its order (see ContractTables).
ROOK_POWER = {"high": 1000.0, "low": 100.0, "ten_and_half": 110.5}
TRUMP_POWER = 100.0
LITTLE_ROOK_POWER = 150.0  # the red 2 with red_two_little_rook: above every trump card, below a high Rook Bird
ROOK_RANK_LOW_CALL = 10.5  # the Rook Bird's rank in low and no-trump contracts ("the 10.5")
REVERSE = 20  # a low contract's order of a rank: REVERSE - its normal order (all orders lie in 1..15)


class ContractTables:
    """How cards follow and win under each contract of one configuration (RULES.md R6, R7, F7, F18, F19).

    Per contract index ``k`` (the action ``TRUMP0 + k``): ``trump[k]`` colour (-1: no trump),
    ``trumps[k]`` the trump cards as a mask, ``eff[k][card]`` the card's effective suit (its colour;
    the Rook Bird and a little-rook red 2 belong to the trump colour, the Rook Bird to red in no
    trump), ``follow[k][card]`` the cards of that effective suit, ``any_time[k]`` the cards that
    may be played even when one can follow (the high Rook Bird), ``power[k][led][card]`` the
    card's power in a trick led in effective suit ``led`` (-1: it cannot win). ``black_two``: the
    card that takes a trick the Rook Bird would win (-1: none).
    """

    def __init__(self, config: RookConfig) -> None:
        L = layout_for(config)
        n = L.n_cards
        rook = L.rook
        red_two = L.card_id(0, 2) if config.red_two_little_rook == "on" else -1
        self.black_two = L.card_id(3, 2) if config.black_two_trump == "on" else -1
        self.rook = rook
        self.trump, self.trumps, self.eff, self.follow, self.any_time, self.power = [], [], [], [], [], []
        for k in range(L.n_contracts):
            t, low = contract_trump(k), contract_low(k)
            order = [(REVERSE - o if low else float(o)) for o in L.rank_order]
            eff = list(L.card_colour)
            tp = [-1.0] * n  # trump power
            for c in range(n):
                if c == rook:
                    if t < 0:  # no trump: the red 10.5
                        eff[c] = 0
                        order[c] = REVERSE - ROOK_RANK_LOW_CALL if low else ROOK_RANK_LOW_CALL
                    else:
                        eff[c] = t
                        tp[c] = TRUMP_POWER + REVERSE - ROOK_RANK_LOW_CALL if low else ROOK_POWER[config.rook_rank]
                elif c == red_two and t >= 0:
                    eff[c] = t
                    tp[c] = LITTLE_ROOK_POWER
                elif eff[c] == t:
                    tp[c] = TRUMP_POWER + order[c]
            suit = [sum(1 << c for c in range(n) if eff[c] == s) for s in range(N_COLOURS)]
            self.trump.append(t)
            self.trumps.append(suit[t] if t >= 0 else 0)
            self.eff.append(tuple(eff))
            self.follow.append(tuple(suit[e] for e in eff))
            high_rook = t >= 0 and not low and config.rook_rank == "high"
            self.any_time.append(L.rook_bit if high_rook else 0)
            self.power.append(tuple(
                tuple(tp[c] if tp[c] >= 0 else (order[c] if eff[c] == led else -1.0) for c in range(n))
                for led in range(N_COLOURS)
            ))

    def winner_index(self, contract: int, cards: Sequence[int]) -> int:
        """Index (in play order) of the card that wins a trick under ``contract``."""
        eff = self.eff[contract]
        power = self.power[contract][eff[cards[0]]]
        best, best_power = 0, -1.0
        for i, c in enumerate(cards):
            p = power[c]
            if p > best_power:
                best, best_power = i, p
        if self.black_two >= 0 and cards[best] == self.rook and self.black_two in cards:
            return list(cards).index(self.black_two)  # the black 2 takes the trick the Rook Bird would win (F17)
        return best


@lru_cache(maxsize=64)
def contract_tables(config: RookConfig) -> ContractTables:
    """The (shared, immutable) contract tables of a configuration."""
    return ContractTables(config)


def team_of(seat: int) -> int:
    """Team 0 = seats {0, 2}, team 1 = seats {1, 3}."""
    return seat & 1


class RookState(TrickState):
    """One table of Rook. Create it, then :meth:`deal` (or :meth:`new_game`).

    The deal, auction, nest exchange and trick play are :class:`rook_env.core.rules.TrickState`'s;
    this class adds the contract (trump or an extended call), Circus Rook, team credit and scoring.
    """

    BID, DISCARD, TRUMP, PLAY, OVER, CIRCUS = BID, DISCARD, TRUMP, PLAY, OVER, CIRCUS
    PHASE_NAMES = PHASE_NAMES

    __slots__ = (
        "_ct", "_circus_on", "_follow", "_any_time", "_trumps",
        "last_trick_team", "call", "circus", "passing",
    )
    _LISTS = TrickState._LISTS + ("passing",)

    def __init__(self, config: RookConfig | None = None, seed: int | None = None) -> None:
        config = config or RookConfig()
        super().__init__(config, layout_for(config), N_SEATS, 2, seed)
        self._ct = contract_tables(config)
        self._circus_on = config.circus_rook == "on"
        self.call = -1
        self.circus = False

    def _scores_wanted(self) -> str:
        return "two integers (team 0, team 1)"

    def _new_hand(self) -> None:
        self.call = -1  # trump call: contract index, the action - TRUMP0 (-1: not named yet)
        self.circus = False  # circus called (circus_rook)
        self.passing: list[int] = []  # circus: the card each seat has chosen to pass (-1: not yet)
        self.last_trick_team = -1

    # ------------------------------------------------------------ legal moves
    def _phase_mask(self, phase: int) -> int:
        if phase == TRUMP:
            if self._circus_on and not self.circus:
                return self.L.trump_mask | 1 << self.L.CIRCUS
            return self.L.trump_mask
        return self.hands[self.current]  # CIRCUS: the card to pass

    def _trump_cards(self) -> int:
        return self._trumps

    def _play_mask(self) -> int:
        hand = self.hands[self.current]
        trick = self.trick
        if not trick:
            return hand
        # The cards of the led card's effective suit (a led Rook Bird is a trump lead), plus the
        # cards playable at any time (the high Rook Bird); holding none, any card (R7.1, F7).
        follow = hand & self._follow[trick[0]]
        if follow:
            return follow | (hand & self._any_time)
        return hand

    # ------------------------------------------------------------------ apply
    def _apply_phase(self, phase: int, action: int) -> None:
        if phase == TRUMP:
            self._apply_trump(action)
        else:
            self._apply_circus_pass(action)

    def _end_auction(self) -> None:
        if not self.L.nest_size:  # no nest: trump (or circus) right after the auction (F14)
            self.current = self.bidder
            self.phase = TRUMP
            return
        super()._end_auction()

    def _discards_done(self) -> None:
        if self.config.nest_discard == "no_counters_unless_forced":
            self.nest_has_counters = bool(self.discards & self.L.counter_mask)
            self._start_play()
        else:
            self.phase = TRUMP

    def _apply_trump(self, action: int) -> None:
        L = self.L
        if action == L.CIRCUS:  # the player on the bidder's left names trump (F20)
            self.circus = True
            self.current = (self.bidder + 1) % N_SEATS
            return
        self.set_call(action - L.TRUMP0)
        if self.config.nest_discard == "no_counters_unless_forced":
            self.phase = DISCARD
        elif self.circus:
            self.phase = CIRCUS
            self.passing = [-1] * N_SEATS
            # the trump namer (already to act) passes first, then the bidder, its partner, its right
        else:
            self._start_play()

    def set_call(self, call: int) -> None:
        """Name the trump call (the action ``TRUMP0 + call``): trump colour and card tables."""
        ct = self._ct
        self.call = call
        self.trump = ct.trump[call]
        self._follow = ct.follow[call]
        self._any_time = ct.any_time[call]
        self._trumps = ct.trumps[call]

    def _apply_circus_pass(self, card: int) -> None:
        s = self.current
        self.hands[s] ^= 1 << card  # set aside: delivered when all four have chosen
        self.passing[s] = card
        b = self.bidder
        if s != (b + 3) % N_SEATS:
            # order: namer (b + 1), bidder, bidder's partner (b + 2), bidder's right (b + 3)
            self.current = b if s == (b + 1) % N_SEATS else (s + 2) % N_SEATS if s == b else (s + 1) % N_SEATS
            return
        for giver, c in enumerate(self.passing):
            self.hands[(giver + 1) % N_SEATS] |= 1 << c  # to the player on the giver's left
        self._start_play()

    def _first_leader(self) -> int:
        if self.circus:  # the trump namer leads (F20)
            return (self.bidder + 1) % N_SEATS
        return super()._first_leader()

    def _trick_winner(self, trick: list[int]) -> int:
        return self._ct.winner_index(self.call, trick)

    def _credit(self, winner: int, points: int) -> None:
        team = winner & 1  # partners share their tricks (R1)
        self.points[team] += points
        self.tricks_won[team] += 1

    def _last_trick(self, winner: int) -> None:
        # The last trick also takes the nest (R7.4).
        team = self.last_trick_team = winner & 1
        pts = self.L.card_points
        self.points[team] += sum(pts[c] for c in bits(self.discards))

    def trick_winner_index(self, cards: Sequence[int]) -> int:
        """Index (in play order) of the card that wins a trick under the current contract (or,
        when none is named, under the colour ``trump`` called high)."""
        return self._ct.winner_index(self.call if self.call >= 0 else self.trump, cards)

    # ---------------------------------------------------------------- scoring
    def _finish_hand(self) -> None:
        """Score the hand for the two teams (RULES.md R8, F9, F10), then the game (R9)."""
        cfg = self.config
        captured = list(self.points)  # counters, nest included
        bonus = [0, 0]
        if cfg.majority_tricks_bonus and self.tricks_won[0] != self.tricks_won[1]:
            bonus[0 if self.tricks_won[0] > self.tricks_won[1] else 1] += cfg.majority_tricks_bonus
        if cfg.last_trick_bonus:
            bonus[self.last_trick_team] += cfg.last_trick_bonus
        bid_team = team_of(self.bidder)
        bid = self.L.bids[self.high_bid]
        total = [captured[0] + bonus[0], captured[1] + bonus[1]]
        made = total[bid_team] >= bid
        delta = [0, 0]
        delta[bid_team] = total[bid_team] if made else -bid
        delta[1 - bid_team] = total[1 - bid_team]
        self.scores[0] += delta[0]
        self.scores[1] += delta[1]
        self.hands_played += 1
        self._game_winner()
        self.hand_result = {
            "bidder": self.bidder,
            "bid": bid,
            "trump": self.trump,  # -1 for a no-trump contract
            "counters": captured,
            "bonus": bonus,
            "hand_scores": delta,
            "made": made,
            "scores": list(self.scores),
            "last_trick_team": self.last_trick_team,
            "tricks_won": list(self.tricks_won),
            "game_winner": self.winner,
        }
        if cfg.trump_calls == "extended":
            self.hand_result["call"] = self.L.contract_name(self.call)
        if self._circus_on:
            self.hand_result["circus"] = self.circus
        self._next_hand_or_over()

    # ------------------------------------------------------------------ misc
    def to_dict(self) -> dict[str, Any]:
        """The global state (all hands, nest, discards): for centralized critics and logs."""
        return {
            **self._public_dict(),
            "call": self.call,
            "circus": self.circus,
            "passing": list(self.passing),
            **self._play_dict(),
        }

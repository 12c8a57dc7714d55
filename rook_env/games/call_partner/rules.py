"""The pure rules of call-your-partner Rook (RULES.md section C): standard library only.

:class:`CallPartnerState` holds one table of 4, 5 or 6 players: the deal, the auction, the
nest, trump, the Rook's rank, the called card(s), the tricks, and every player's game score.
The deal, auction, nest exchange and trick play are the shared core's
(:class:`rook_env.core.rules.TrickState`); this module holds what differs: the nest
announcement, Rook high or low, the call and partners, the 2s flags (F17, F18), per-seat
credit and individual scoring (C8).
It answers ``legal_mask()`` / ``legal_actions()`` and takes ``apply(action)`` (one legal/apply
pair per phase), and ``clone()``s cheaply for search. Card sets are ``int`` bitmasks over card
ids (see :mod:`rook_env.games.call_partner.layout`), as in :class:`rook_env.games.partnership.rules.RookState`.

Phases, in order (RULES.md C5-C6): ``BID`` -> ``DISCARD`` (one card per action, as many as
the nest held; then the public "nest holds counters" announcement) -> ``TRUMP`` -> ``ROOK``
(high or low) -> ``CALL`` (one card; two with six players) -> ``PLAY`` -> ``OVER``. With
``nest_discard="no_counters_unless_forced"`` trump comes before the discard (RULES.md D4 of
the partnership game): ``BID`` -> ``TRUMP`` -> ``DISCARD`` -> ``ROOK`` -> ``CALL``. In
``episode="game"`` a finished hand that does not end the game deals the next one.
"""

from __future__ import annotations

from typing import Any, Sequence

from rook_env.core.rules import TrickState
from .config import CallPartnerConfig
from .layout import LAST_TRICK_POINTS, ROOK_CHOICES, CallPartnerLayout, bits, layout_for

BID, DISCARD, TRUMP, ROOK, CALL, PLAY, OVER = range(7)
PHASE_NAMES = ("bid", "discard", "trump", "rook", "call", "play", "over")
N_PHASES = len(PHASE_NAMES)

TRUMP_POWER = 100  # a trump beats every card of the led colour
ROOK_HIGH_POWER = TRUMP_POWER + 16  # above the trump 1 (rank power 15): RULES.md C6.2
ROOK_LOW_POWER = TRUMP_POWER + 1  # below the lowest trump (the 2, or the 5 without 2s-4s): C6.2
LITTLE_ROOK_POWER = ROOK_HIGH_POWER - 0.5  # red_two_little_rook: under a high Rook Bird, above every trump (F18)


def card_power(L: CallPartnerLayout, card: int, trump: int, rook_high: bool, led: int) -> float:
    """Strength of ``card`` in a trick whose led suit is ``led`` (RULES.md C7.3): trumps and the
    Rook Bird above every card of the led colour, the rest -1 (they never win). With the flag
    ``red_two_little_rook`` the red 2 is a trump above every other trump card (F18)."""
    if card == L.rook:
        return ROOK_HIGH_POWER if rook_high else ROOK_LOW_POWER
    if card == L.little_rook:
        return LITTLE_ROOK_POWER
    col = L.card_colour[card]
    if col == trump:
        return TRUMP_POWER + L.card_power[card]
    if col == led:
        return L.card_power[card]
    return -1


def trick_winner_index(L: CallPartnerLayout, cards: Sequence[int], trump: int, rook_high: bool) -> int:
    """Index (in play order) of the card that wins a trick; a led Rook Bird (or little rook) is a
    trump lead. With ``black_two_trump`` the black 2 takes a trick the Rook Bird would win (F17)."""
    led = L.card_colour[cards[0]]
    if led < 0 or cards[0] == L.little_rook:
        led = trump
    best, best_power = 0, -2.0
    for i, c in enumerate(cards):
        p = card_power(L, c, trump, rook_high, led)
        if p > best_power:
            best, best_power = i, p
    if L.black_two >= 0 and cards[best] == L.rook and L.black_two in cards:
        return list(cards).index(L.black_two)
    return best


class CallPartnerState(TrickState):
    """One call-your-partner table. Create it, then :meth:`new_game` (or :meth:`deal`).

    The deal, auction, nest exchange and trick play are :class:`rook_env.core.rules.TrickState`'s;
    this class adds the nest announcement, Rook high or low, the call and partners, per-seat
    credit and individual scoring.
    """

    BID, DISCARD, TRUMP, PLAY, OVER = BID, DISCARD, TRUMP, PLAY, OVER
    PHASE_NAMES = PHASE_NAMES

    __slots__ = ("rook_high", "called", "partners", "last_trick_winner")
    _LISTS = TrickState._LISTS + ("called",)

    def __init__(self, config: CallPartnerConfig | None = None, seed: int | None = None) -> None:
        config = config or CallPartnerConfig()
        super().__init__(config, layout_for(config), config.players, config.players, seed)

    def _scores_wanted(self) -> str:
        return f"{self.n} integers (one per seat)"

    def _new_hand(self) -> None:
        self.rook_high = -1  # 1 high, 0 low, -1 not chosen yet
        self.called: list[int] = []
        self.partners: tuple[int, ...] = ()  # fixed when the call is complete (RULES.md C6.4)
        self.last_trick_winner = -1

    # ------------------------------------------------------------ legal moves
    def _phase_mask(self, phase: int) -> int:
        if phase == TRUMP:
            return self.L.trump_mask
        if phase == ROOK:
            return self.L.rook_mask
        # CALL: any card not in the bidder's hand, its own discards and the Rook Bird included;
        # with six players two different cards (RULES.md C6.3, C6.5).
        mask = self.L.all_cards & ~self.hands[self.bidder]
        for c in self.called:
            mask &= ~(1 << c)
        return mask

    def _trump_cards(self) -> int:
        return self.L.trump_cards[self.trump]

    def _play_mask(self) -> int:
        # Follow suit when able; the Rook Bird (and a little rook) is a trump like the others (C7.1-C7.2).
        L = self.L
        trick = self.trick
        if not trick:
            return self.hands[self.current]
        return self._follow_mask(L.suit_cards[self.trump][trick[0]])

    # ------------------------------------------------------------------ apply
    def _apply_phase(self, phase: int, action: int) -> None:
        if phase == TRUMP:
            self.trump = action - self.L.TRUMP0
            self.phase = DISCARD if self.config.nest_discard == "no_counters_unless_forced" else ROOK
        elif phase == ROOK:
            self.rook_high = 1 if action == self.L.ROOK_HIGH else 0
            self.phase = CALL
        else:
            self._apply_call(action)

    def _discards_done(self) -> None:
        # The table is told whether the new nest holds counters (C5.2).
        self.nest_has_counters = bool(self.discards & self.L.counter_mask)
        self.phase = ROOK if self.config.nest_discard == "no_counters_unless_forced" else TRUMP

    def _apply_call(self, card: int) -> None:
        self.called.append(card)
        if len(self.called) == self.config.n_called:
            self.partners = self.called_holders()
            self._start_play()

    def called_holders(self) -> tuple[int, ...]:
        """Seats holding (or having played) a called card, ascending: the bidder's partners.
        A called card in the nest has no holder (RULES.md C6.4)."""
        seats = set()
        for c in self.called:
            if self.played >> c & 1:
                seats.add(self.played_by[c])
            else:
                for s, h in enumerate(self.hands):
                    if h >> c & 1:
                        seats.add(s)
        return tuple(sorted(seats))

    def _trick_winner(self, trick: list[int]) -> int:
        return trick_winner_index(self.L, trick, self.trump, self.rook_high == 1)

    def _credit(self, winner: int, points: int) -> None:
        self.points[winner] += points  # scores are individual (C1.2)
        self.tricks_won[winner] += 1

    def _last_trick(self, winner: int) -> None:
        # The last trick takes the nest and 20 points (RULES.md C2.2, C8.1).
        self.last_trick_winner = winner
        pts = self.L.card_points
        self.points[winner] += sum(pts[c] for c in bits(self.discards)) + LAST_TRICK_POINTS

    def trick_winner_index(self, cards: Sequence[int]) -> int:
        """Index (in play order) of the card that wins ``cards`` under this hand's trump and Rook."""
        return trick_winner_index(self.L, cards, self.trump, self.rook_high == 1)

    # ---------------------------------------------------------------- scoring
    @property
    def side(self) -> tuple[int, ...]:
        """The bidding side: the bidder and its partners (known to the state, not to the seats)."""
        return tuple(sorted({self.bidder, *self.partners}))

    def _finish_hand(self) -> None:
        # Individual scoring (RULES.md C8): the side's total P against the bid.
        L, n = self.L, self.n
        side = self.side
        bid = L.bids[self.high_bid]
        side_points = sum(self.points[s] for s in side)
        made = side_points >= bid
        delta = [L.total_points - side_points] * n
        for s in side:
            delta[s] = side_points if made else -bid
        for s in range(n):
            self.scores[s] += delta[s]
        self.hands_played += 1
        self._game_winner()  # a tie at the top plays on (C9.2)
        self.hand_result = {
            "bidder": self.bidder,
            "bid": bid,
            "trump": self.trump,
            "rook": ROOK_CHOICES[1 - self.rook_high],
            "called": list(self.called),
            "partners": list(self.partners),
            "alone": not self.partners,
            "side": list(side),
            "points": list(self.points),
            "side_points": side_points,
            "made": made,
            "hand_scores": delta,
            "scores": list(self.scores),
            "tricks_won": list(self.tricks_won),
            "last_trick_winner": self.last_trick_winner,
            "game_winner": self.winner,
        }
        self._next_hand_or_over()

    # ------------------------------------------------------------------ misc
    def to_dict(self) -> dict[str, Any]:
        """The global state (all hands, nest, discards, partners): for centralized critics and logs."""
        d = self._public_dict()
        return {
            "players": self.n,
            **{k: d[k] for k in ("phase", "current_player", "dealer", "hands", "nest", "discards")},
            "nest_has_counters": self.nest_has_counters,
            **{k: d[k] for k in ("bid_history", "bidder", "bid", "trump")},
            "rook": None if self.rook_high < 0 else ROOK_CHOICES[1 - self.rook_high],
            "called": list(self.called),
            "partners": list(self.partners),
            **self._play_dict(),
        }

"""The pure rules of call-your-partner Rook (RULES.md section C): standard library only.

:class:`CallPartnerState` holds one table of 4, 5 or 6 players: the deal, the auction, the
nest, trump, the Rook's rank, the called card(s), the tricks, and every player's game score.
It answers ``legal_mask()`` / ``legal_actions()`` and takes ``apply(action)`` (one legal/apply
pair per phase), and ``clone()``s cheaply for search. Card sets are ``int`` bitmasks over card
ids (see :mod:`rook_env.call_partner.layout`), as in :class:`rook_env.rules.RookState`.

Phases, in order (RULES.md C5-C6): ``BID`` -> ``DISCARD`` (one card per action, as many as
the nest held; then the public "nest holds counters" announcement) -> ``TRUMP`` -> ``ROOK``
(high or low) -> ``CALL`` (one card; two with six players) -> ``PLAY`` -> ``OVER``. With
``nest_discard="no_counters_unless_forced"`` trump comes before the discard (RULES.md D4 of
the partnership game): ``BID`` -> ``TRUMP`` -> ``DISCARD`` -> ``ROOK`` -> ``CALL``. In
``episode="game"`` a finished hand that does not end the game deals the next one.
"""

from __future__ import annotations

import operator
import random
from typing import Any, Sequence

from .config import CallPartnerConfig
from .layout import LAST_TRICK_POINTS, ROOK_CHOICES, CallPartnerLayout, bits, layout_for

BID, DISCARD, TRUMP, ROOK, CALL, PLAY, OVER = range(7)
PHASE_NAMES = ("bid", "discard", "trump", "rook", "call", "play", "over")
N_PHASES = len(PHASE_NAMES)

TRUMP_POWER = 100  # a trump beats every card of the led colour
ROOK_HIGH_POWER = TRUMP_POWER + 16  # above the trump 1 (rank power 15): RULES.md C6.2
ROOK_LOW_POWER = TRUMP_POWER + 1  # below the lowest trump (the 2, or the 5 without 2s-4s): C6.2


def _as_int(value: Any) -> int | None:
    """``value`` as a plain int when it is an integer (numpy integers included, bools not), else None."""
    if isinstance(value, bool):
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None


def card_power(L: CallPartnerLayout, card: int, trump: int, rook_high: bool, led: int) -> int:
    """Strength of ``card`` in a trick whose led colour is ``led`` (RULES.md C7.3): trumps and
    the Rook Bird above every card of the led colour, the rest -1 (they never win)."""
    if card == L.rook:
        return ROOK_HIGH_POWER if rook_high else ROOK_LOW_POWER
    col = L.card_colour[card]
    if col == trump:
        return TRUMP_POWER + L.card_power[card]
    if col == led:
        return L.card_power[card]
    return -1


def trick_winner_index(L: CallPartnerLayout, cards: Sequence[int], trump: int, rook_high: bool) -> int:
    """Index (in play order) of the card that wins a trick; a led Rook Bird is a trump lead."""
    led = L.card_colour[cards[0]]
    if led < 0:
        led = trump
    best, best_power = 0, -2
    for i, c in enumerate(cards):
        p = card_power(L, c, trump, rook_high, led)
        if p > best_power:
            best, best_power = i, p
    return best


class CallPartnerState:
    """One call-your-partner table. Create it, then :meth:`new_game` (or :meth:`deal`)."""

    __slots__ = (
        "config", "L", "n", "rng",
        # game
        "scores", "dealer", "hands_played", "deals", "winner", "hand_result",
        # hand
        "hands", "nest", "discards", "phase", "current", "bid_history", "high_bid", "bidder", "passed",
        "n_passed", "trump", "rook_high", "called", "partners", "leader", "trick", "tricks", "played",
        "played_by", "tricks_won", "points", "last_trick_winner", "nest_has_counters",
    )

    def __init__(self, config: CallPartnerConfig | None = None, seed: int | None = None) -> None:
        self.config = config or CallPartnerConfig()
        self.L = layout_for(self.config)
        self.n = self.config.players
        self.rng = random.Random(seed)
        self.scores = [0] * self.n
        self.dealer = 0
        self.hands_played = 0
        self.deals = 0
        self.winner = -1
        self.hand_result: dict[str, Any] | None = None

    # ------------------------------------------------------------------ deal
    def new_game(
        self,
        dealer: int | None = None,
        scores: Sequence[int] | None = None,
        hands: Sequence[Sequence[int]] | None = None,
        nest: Sequence[int] | None = None,
    ) -> None:
        """Start a game: scores (default 0 each), first dealer (default drawn from ``rng``), first deal."""
        n = self.n
        if scores is not None:
            try:
                vals = [_as_int(v) for v in scores]
            except TypeError:
                raise ValueError(f"scores must be {n} integers, got {scores!r}") from None
            if len(vals) != n or any(v is None for v in vals):
                raise ValueError(f"scores must be {n} integers (one per seat), got {scores!r}")
            self.scores = vals  # type: ignore[assignment]
        else:
            self.scores = [0] * n
        if dealer is None:
            seat: int | None = self.rng.randrange(n)
        else:
            seat = _as_int(dealer)
            if seat is None or not 0 <= seat < n:
                raise ValueError(f"dealer must be a seat 0..{n - 1}, got {dealer!r}")
        self.dealer = seat
        self.hands_played = 0
        self.deals = 0
        self.winner = -1
        self.hand_result = None
        self.deal(hands, nest)

    def deal(self, hands: Sequence[Sequence[int]] | None = None, nest: Sequence[int] | None = None) -> None:
        """Deal a hand by the current dealer: given cards, or shuffled from ``self.rng``."""
        L, n = self.L, self.n
        if hands is None and nest is None:
            deck = list(range(L.n_cards))
            self.rng.shuffle(deck)
            # One card at a time clockwise from the dealer's left; one card to the nest after
            # each of the first nest_size rounds (RULES.md C3.2).
            masks = [0] * n
            nest_mask = 0
            it = iter(deck)
            for rnd in range(L.hand_size):
                for i in range(1, n + 1):
                    masks[(self.dealer + i) % n] |= 1 << next(it)
                if rnd < L.nest_size:
                    nest_mask |= 1 << next(it)
        else:
            masks, nest_mask = self._check_deal(hands, nest)
        self.hands = masks
        self.nest = nest_mask
        self.discards = 0
        self.phase = BID
        self.current = (self.dealer + 1) % n
        self.bid_history: list[tuple[int, int]] = []
        self.high_bid = -1  # index into L.bids
        self.bidder = -1
        self.passed = [False] * n
        self.n_passed = 0
        self.trump = -1
        self.rook_high = -1  # 1 high, 0 low, -1 not chosen yet
        self.called: list[int] = []
        self.partners: tuple[int, ...] = ()  # fixed when the call is complete (RULES.md C6.4)
        self.leader = -1
        self.trick: list[int] = []  # cards of the current trick, in play order from the leader
        self.tricks: list[tuple[int, tuple[int, ...]]] = []  # finished tricks: (leader, cards)
        self.played = 0
        self.played_by = [-1] * L.n_cards
        self.tricks_won = [0] * n
        self.points = [0] * n  # counters captured per seat (the last trick's nest and 20 included)
        self.last_trick_winner = -1
        self.nest_has_counters = False
        self.deals += 1

    def _check_deal(self, hands: Any, nest: Any) -> tuple[list[int], int]:
        L, n = self.L, self.n
        if hands is None or nest is None:
            raise ValueError(f"a fixed deal needs both 'hands' ({n} lists) and 'nest'")
        try:
            hands, nest = [list(h) for h in hands], list(nest)
        except TypeError:
            raise ValueError(
                f"'hands' must be {n} lists of card ids and 'nest' a list of card ids, got {hands!r} and {nest!r}"
            ) from None
        if len(hands) != n:
            raise ValueError(f"'hands' must hold {n} lists (one per player), got {len(hands)}")
        seen: dict[int, str] = {}
        masks = []
        parts = [(f"hands[{i}]", h, L.hand_size) for i, h in enumerate(hands)] + [("nest", nest, L.nest_size)]
        for where, cards, size in parts:
            if len(cards) != size:
                raise ValueError(f"{where} must hold {size} cards with {n} players and the {L.deck} deck, got {len(cards)}")
            mask = 0
            for raw in cards:
                c = _as_int(raw)
                if c is None or not 0 <= c < L.n_cards:
                    raise ValueError(f"{where} holds unknown card id {raw!r}; card ids are 0..{L.n_cards - 1}")
                if c in seen:
                    raise ValueError(f"card {c} ({L.card_name(c)}) is dealt twice: in {seen[c]} and {where}")
                seen[c] = where
                mask |= 1 << c
            masks.append(mask)
        return masks[:n], masks[n]

    # ------------------------------------------------------------ legal moves
    def legal_mask(self) -> int:
        """Legal actions of the seat to act, as a bitmask over action ids (0 when over)."""
        phase = self.phase
        if phase == PLAY:
            return self._play_mask()
        if phase == BID:
            return self._bid_mask()
        if phase == DISCARD:
            return self._discard_mask()
        if phase == TRUMP:
            return self.L.trump_mask
        if phase == ROOK:
            return self.L.rook_mask
        if phase == CALL:
            # Any card not in the bidder's hand, its own discards and the Rook Bird included;
            # with six players two different cards (RULES.md C6.3, C6.5).
            mask = self.L.all_cards & ~self.hands[self.bidder]
            for c in self.called:
                mask &= ~(1 << c)
            return mask
        return 0

    def legal_actions(self) -> list[int]:
        return bits(self.legal_mask())

    def _bid_mask(self) -> int:
        L, cfg = self.L, self.config
        s = self.current
        # No-counter redeal on one's own bidding turn (RULES.md C4.4).
        redeal = (1 << L.REDEAL) if cfg.no_counter_redeal == "on" and not self.hands[s] & L.counter_mask else 0
        if self.n_passed == self.n - 1 and self.high_bid < 0:
            return (1 << L.BID0) | redeal  # all passed: the dealer is stuck at the minimum (C4.3)
        above = self.high_bid + 1
        bids = (L.bid_mask >> (L.BID0 + above)) << (L.BID0 + above)
        return (1 << L.PASS) | bids | redeal

    def _discard_mask(self) -> int:
        L = self.L
        hand = self.hands[self.bidder]
        if self.config.nest_discard == "any":
            return hand
        # German rule: counters only when every card left is a counter or a trump.
        free = hand & ~L.counter_mask
        if free & ~L.colour_mask[self.trump]:
            return free
        return hand

    def _play_mask(self) -> int:
        # Follow suit when able; the Rook Bird is a trump like the others (RULES.md C7.1-C7.2).
        L = self.L
        hand = self.hands[self.current]
        trick = self.trick
        if not trick:
            return hand
        led = L.card_colour[trick[0]]
        if led < 0 or led == self.trump:  # a led Rook Bird is a trump lead
            follow = hand & (L.colour_mask[self.trump] | L.rook_bit)
        else:
            follow = hand & L.colour_mask[led]
        return follow or hand

    # ------------------------------------------------------------------ apply
    def apply(self, action: int, legal: int | None = None) -> None:
        """Apply a legal action of the seat to act; an illegal one raises ``ValueError``.

        ``legal``: the current ``legal_mask()`` when the caller already has it."""
        if legal is None:
            legal = self.legal_mask()
        if not isinstance(action, int) or action < 0 or not (legal >> action) & 1:
            raise ValueError(self.illegal_message(action, legal))
        phase = self.phase
        if phase == PLAY:
            self._apply_play(action)
        elif phase == BID:
            self._apply_bid(action)
        elif phase == DISCARD:
            self._apply_discard(action)
        elif phase == TRUMP:
            self.trump = action - self.L.TRUMP0
            self.phase = DISCARD if self.config.nest_discard == "no_counters_unless_forced" else ROOK
        elif phase == ROOK:
            self.rook_high = 1 if action == self.L.ROOK_HIGH else 0
            self.phase = CALL
        else:
            self._apply_call(action)

    def illegal_message(self, action: Any, legal: int | None = None) -> str:
        L = self.L
        if legal is None:
            legal = self.legal_mask()
        ok = isinstance(action, int) and 0 <= action < L.n_actions
        name = L.action_name(action) if ok else "out of range"
        legal_txt = ", ".join(f"{a} ({L.action_name(a)})" for a in bits(legal))
        return (
            f"illegal action {action!r} ({name}) for player_{self.current} in phase "
            f"{PHASE_NAMES[self.phase]!r}; legal actions: {legal_txt or 'none (the hand is over)'}"
        )

    def _apply_bid(self, action: int) -> None:
        L, n = self.L, self.n
        s = self.current
        self.bid_history.append((s, action))
        if action == L.REDEAL:
            self.deal()  # the same dealer deals again, scores unchanged
            return
        if action == L.PASS:
            self.passed[s] = True
            self.n_passed += 1
            if self.n_passed == n - 1:
                if self.high_bid >= 0:
                    self._end_auction()
                    return
                if self.config.all_pass == "redeal":
                    self.deal()
                    return
        else:
            self.high_bid = action - L.BID0
            self.bidder = s
            if self.high_bid == L.n_bids - 1 or self.n_passed == n - 1:
                self._end_auction()
                return
        nxt = (s + 1) % n
        while self.passed[nxt]:
            nxt = (nxt + 1) % n
        self.current = nxt

    def _end_auction(self) -> None:
        b = self.bidder
        self.current = b
        self.hands[b] |= self.nest  # the bidder takes the nest, unseen by others (C5.1)
        self.phase = TRUMP if self.config.nest_discard == "no_counters_unless_forced" else DISCARD

    def _apply_discard(self, card: int) -> None:
        bit = 1 << card
        self.hands[self.bidder] ^= bit
        self.discards |= bit
        if self.discards.bit_count() == self.L.nest_size:
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

    def _start_play(self) -> None:
        fl = self.config.first_lead
        if fl == "left_of_dealer":
            self.leader = (self.dealer + 1) % self.n
        elif fl == "left_of_bidder":
            self.leader = (self.bidder + 1) % self.n
        else:
            self.leader = self.bidder
        self.current = self.leader
        self.phase = PLAY

    def _apply_play(self, card: int) -> None:
        s = self.current
        n = self.n
        self.hands[s] ^= 1 << card
        self.played |= 1 << card
        self.played_by[card] = s
        trick = self.trick
        trick.append(card)
        if len(trick) < n:
            self.current = (s + 1) % n
            return
        L = self.L
        winner = (self.leader + trick_winner_index(L, trick, self.trump, self.rook_high == 1)) % n
        pts = L.card_points
        self.points[winner] += sum(pts[c] for c in trick)
        self.tricks_won[winner] += 1
        self.tricks.append((self.leader, tuple(trick)))
        self.trick = []
        self.leader = self.current = winner
        if len(self.tricks) == L.n_tricks:
            # The last trick takes the nest and 20 points (RULES.md C2.2, C8.1).
            self.last_trick_winner = winner
            self.points[winner] += sum(pts[c] for c in bits(self.discards)) + LAST_TRICK_POINTS
            self._finish_hand()

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
        cfg, L, n = self.config, self.L, self.n
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
        top = max(self.scores)
        if top >= cfg.target_score and self.scores.count(top) == 1:  # a tie at the top plays on (C9.2)
            self.winner = self.scores.index(top)
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
        if cfg.episode == "game" and self.winner < 0:
            self.dealer = (self.dealer + 1) % n
            self.deal()
        else:
            self.phase = OVER

    # ------------------------------------------------------------------ misc
    @property
    def is_over(self) -> bool:
        return self.phase == OVER

    def clone(self) -> "CallPartnerState":
        """An independent copy (the RNG state included)."""
        new = CallPartnerState.__new__(CallPartnerState)
        for name in CallPartnerState.__slots__:
            if hasattr(self, name):
                setattr(new, name, getattr(self, name))
        new.rng = random.Random()
        new.rng.setstate(self.rng.getstate())
        for name in ("scores", "hands", "bid_history", "passed", "called", "trick", "tricks", "played_by",
                     "tricks_won", "points"):
            if hasattr(self, name):
                setattr(new, name, list(getattr(self, name)))
        new.hand_result = dict(self.hand_result) if self.hand_result else None
        return new

    def to_dict(self) -> dict[str, Any]:
        """The global state (all hands, nest, discards, partners): for centralized critics and logs."""
        L = self.L
        return {
            "players": self.n,
            "phase": PHASE_NAMES[self.phase],
            "current_player": self.current,
            "dealer": self.dealer,
            "hands": [bits(h) for h in self.hands],
            "nest": bits(self.nest),
            "discards": bits(self.discards),
            "nest_has_counters": self.nest_has_counters,
            "bid_history": [(s, L.action_name(a)) for s, a in self.bid_history],
            "bidder": self.bidder,
            "bid": L.bids[self.high_bid] if self.high_bid >= 0 else None,
            "trump": self.trump,
            "rook": None if self.rook_high < 0 else ROOK_CHOICES[1 - self.rook_high],
            "called": list(self.called),
            "partners": list(self.partners),
            "leader": self.leader,
            "trick": list(self.trick),
            "tricks": [(lead, list(cards)) for lead, cards in self.tricks],
            "points": list(self.points),
            "tricks_won": list(self.tricks_won),
            "scores": list(self.scores),
            "winner": self.winner,
        }

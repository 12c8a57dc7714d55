"""The pure rules of four-player partnership Rook (RULES.md): no gymnasium, no numpy.

:class:`RookState` holds one table: the deal, the auction, the nest, trump, the tricks,
and the game score. It answers ``legal_mask()`` / ``legal_actions()`` and takes
``apply(action)``, one legal/apply pair per phase, and ``clone()``s cheaply for search.
Card sets are ``int`` bitmasks over card ids (see :mod:`rook_env.cards`).

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

import random
from functools import lru_cache
from typing import Any, Sequence

from .cards import N_COLOURS, N_SEATS, Layout, bits, contract_low, contract_trump, layout_for
from .config import RookConfig, as_int

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


class RookState:
    """One table of Rook. Create it, then :meth:`deal` (or :meth:`new_game`)."""

    __slots__ = (
        "config", "L", "rng", "_ct", "_circus_on", "_follow", "_any_time", "_trumps",
        # game
        "scores", "dealer", "hands_played", "deals", "winner",
        # hand
        "hands", "nest", "discards", "phase", "current",
        "bid_history", "high_bid", "bidder", "passed", "n_passed",
        "trump", "leader", "trick", "tricks", "played", "played_by",
        "tricks_won", "points", "last_trick_team", "nest_has_counters", "hand_result",
        "hand_limit", "call", "circus", "passing",
    )

    def __init__(self, config: RookConfig | None = None, seed: int | None = None) -> None:
        self.config = config or RookConfig()
        self.L: Layout = layout_for(self.config)
        self.rng = random.Random(None if seed is None else as_int(seed, "seed"))
        self._ct = contract_tables(self.config)
        self._circus_on = self.config.circus_rook == "on"
        self.scores = [0, 0]
        self.dealer = 0
        self.hands_played = 0
        self.deals = 0
        self.winner = -1
        self.phase = OVER
        self.trump = self.call = -1
        self.circus = False
        self.hand_result: dict[str, Any] | None = None
        # episode="game": stop (phase OVER, no winner) after this many hands instead of dealing
        # the next one, so that a truncated game never shows a deal that will not be played.
        self.hand_limit: int | None = None

    # ------------------------------------------------------------------ setup
    def new_game(
        self,
        dealer: int | None = None,
        scores: Sequence[int] | None = None,
        hands: Sequence[Sequence[int]] | None = None,
        nest: Sequence[int] | None = None,
    ) -> None:
        """Start a game (or a single hand): scores, first dealer (drawn when None), deal.

        Every argument is checked before anything changes: a bad one raises ``ValueError``
        and leaves the state and its RNG as they were.
        """
        new_scores = [0, 0] if scores is None else self.check_scores(scores)
        seat = None if dealer is None else self.check_dealer(dealer)
        deal = None if hands is None and nest is None else self._check_deal(hands, nest)
        if seat is None:
            seat = self.rng.randrange(N_SEATS)
        self.scores = new_scores
        self.dealer = seat
        self.hands_played = 0
        self.deals = 0
        self.winner = -1
        self.hand_result = None
        self.deal(checked=deal)

    @staticmethod
    def check_scores(scores: Any) -> list[int]:
        """``scores`` as two ints (team 0, team 1), else ``ValueError``."""
        try:
            if isinstance(scores, (str, bytes)) or len(scores) != 2:
                raise ValueError
            return [as_int(s, "score") for s in scores]
        except (TypeError, ValueError):
            raise ValueError(f"scores must be two integers (team 0, team 1), got {scores!r}") from None

    @staticmethod
    def check_dealer(dealer: Any) -> int:
        """``dealer`` as a seat 0..3, else ``ValueError``."""
        seat = as_int(dealer, "dealer")
        if not 0 <= seat < N_SEATS:
            raise ValueError(f"dealer must be a seat 0..{N_SEATS - 1}, got {dealer!r}")
        return seat

    def deal(
        self,
        hands: Sequence[Sequence[int]] | None = None,
        nest: Sequence[int] | None = None,
        checked: tuple[list[int], int] | None = None,
    ) -> None:
        """Deal a hand by the current dealer: given cards, or shuffled from ``self.rng``.

        ``checked``: a deal already validated by :meth:`_check_deal` (hand masks, nest mask).
        """
        L = self.L
        if checked is not None:
            masks, nest_mask = checked
        elif hands is None and nest is None:
            deck = list(range(L.n_cards))
            self.rng.shuffle(deck)
            # Deal one at a time clockwise from the dealer's left; after each of the
            # first nest_size rounds one card goes to the nest (RULES.md "Deal").
            hand_lists: list[list[int]] = [[], [], [], []]
            nest_list: list[int] = []
            it = iter(deck)
            nest_size = L.nest_size
            for rnd in range(L.hand_size):
                for i in range(1, N_SEATS + 1):
                    hand_lists[(self.dealer + i) % N_SEATS].append(next(it))
                if rnd < nest_size:
                    nest_list.append(next(it))
            masks = [sum(1 << c for c in h) for h in hand_lists]
            nest_mask = sum(1 << c for c in nest_list)
        else:
            masks, nest_mask = self._check_deal(hands, nest)
        self.hands = masks
        self.nest = nest_mask
        self.discards = 0
        self.phase = BID
        self.current = (self.dealer + 1) % N_SEATS
        self.bid_history: list[tuple[int, int]] = []
        self.high_bid = -1  # index into L.bids
        self.bidder = -1
        self.passed = [False] * N_SEATS
        self.n_passed = 0
        self.trump = -1  # trump colour (-1: not named yet, or a no-trump contract)
        self.call = -1  # trump call: contract index, the action - TRUMP0 (-1: not named yet)
        self.circus = False  # circus called (circus_rook)
        self.passing: list[int] = []  # circus: the card each seat has chosen to pass (-1: not yet)
        self.leader = -1
        self.trick: list[int] = []  # cards of the current trick, in play order from the leader
        self.tricks: list[tuple[int, tuple[int, ...]]] = []  # finished tricks: (leader, cards)
        self.played = 0
        self.played_by = [-1] * L.n_cards
        self.tricks_won = [0, 0]
        self.points = [0, 0]
        self.last_trick_team = -1
        self.nest_has_counters = False
        self.deals += 1

    def _check_deal(self, hands: Any, nest: Any) -> tuple[list[int], int]:
        """A fixed deal as (four hand masks, nest mask), else ``ValueError`` saying what is wrong."""
        L = self.L
        if nest is None and L.nest_size == 0 and hands is not None:
            nest = []  # a game without a nest: 'nest' may be left out
        if hands is None or nest is None:
            raise ValueError("a fixed deal needs both 'hands' (four lists) and 'nest'")

        def card_list(cards: Any) -> list[Any]:
            # A string is iterable but never a list of card ids (list("abcd") would be four "cards").
            if isinstance(cards, (str, bytes, dict)):
                raise TypeError
            return list(cards)

        try:
            hand_lists, nest_list = [card_list(h) for h in card_list(hands)], card_list(nest)
        except TypeError:
            raise ValueError(
                f"'hands' must be four lists of card ids and 'nest' a list of card ids, got {hands!r} and {nest!r}"
            ) from None
        if len(hand_lists) != N_SEATS:
            raise ValueError(f"'hands' must hold {N_SEATS} lists, got {len(hand_lists)}")
        seen: dict[int, str] = {}
        masks = []
        where_cards = [(f"hands[{i}]", h, L.hand_size) for i, h in enumerate(hand_lists)]
        for where, cards, size in where_cards + [("nest", nest_list, L.nest_size)]:
            if len(cards) != size:
                raise ValueError(f"{where} must hold {size} cards, got {len(cards)}")
            mask = 0
            for raw in cards:
                try:
                    c = as_int(raw, "card id")
                except ValueError:
                    c = -1
                if not 0 <= c < L.n_cards:
                    raise ValueError(f"{where} holds unknown card id {raw!r}; card ids are 0..{L.n_cards - 1}")
                if c in seen:
                    raise ValueError(f"card {c} ({L.card_name(c)}) is dealt twice: in {seen[c]} and {where}")
                seen[c] = where
                mask |= 1 << c
            masks.append(mask)
        return masks[:N_SEATS], masks[N_SEATS]

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
            if self._circus_on and not self.circus:
                return self.L.trump_mask | 1 << self.L.CIRCUS
            return self.L.trump_mask
        if phase == CIRCUS:
            return self.hands[self.current]
        return 0

    def legal_actions(self) -> list[int]:
        return bits(self.legal_mask())

    def _bid_mask(self) -> int:
        L, cfg = self.L, self.config
        s = self.current
        redeal = (1 << L.REDEAL) if cfg.no_counter_redeal == "on" and not self.hands[s] & L.counter_mask else 0
        if self.n_passed == 3 and self.high_bid < 0:
            # all_pass=dealer_forced: the dealer's only bid is the minimum.
            return (1 << L.BID0) | redeal
        above = self.high_bid + 1
        bids = (L.bid_mask >> (L.BID0 + above)) << (L.BID0 + above)
        return (1 << L.PASS) | bids | redeal

    def _discard_mask(self) -> int:
        L = self.L
        hand = self.hands[self.bidder]
        if self.config.nest_discard == "any":
            return hand
        # German rule: counters only when every card left is a counter or a trump (no trump: a counter).
        free = hand & ~L.counter_mask
        if free & ~self._trumps:
            return free
        return hand

    def _play_mask(self) -> int:
        hand = self.hands[self.current]
        trick = self.trick
        if not trick:
            return hand
        # The cards of the led card's effective suit (a led Rook Bird is a trump lead), plus the
        # cards playable at any time (the high Rook Bird); holding none, any card.
        follow = hand & self._follow[trick[0]]
        if follow:
            return follow | (hand & self._any_time)
        return hand

    # ------------------------------------------------------------------ apply
    def apply(self, action: int, legal: int | None = None) -> None:
        """Apply a legal action of the seat to act; an illegal one raises ``ValueError``.

        ``legal``: the current ``legal_mask()`` when the caller already has it (saves recomputing).
        """
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
            self._apply_trump(action)
        else:
            self._apply_circus_pass(action)

    def illegal_message(self, action: Any, legal: int | None = None) -> str:
        L = self.L
        if legal is None:
            legal = self.legal_mask()
        name = L.action_name(action) if isinstance(action, int) and 0 <= action < L.n_actions else "out of range"
        legal_txt = ", ".join(f"{a} ({L.action_name(a)})" for a in bits(legal))
        return (
            f"illegal action {action!r} ({name}) for player_{self.current} in phase "
            f"{PHASE_NAMES[self.phase]!r}; legal actions: {legal_txt or 'none (the hand is over)'}"
        )

    def _apply_bid(self, action: int) -> None:
        L = self.L
        s = self.current
        self.bid_history.append((s, action))
        if action == L.REDEAL:
            self.deal()
            return
        if action == L.PASS:
            self.passed[s] = True
            self.n_passed += 1
            if self.n_passed == 3:
                if self.high_bid >= 0:
                    self._end_auction()
                    return
                if self.config.all_pass == "redeal":
                    self.deal()
                    return
        else:
            self.high_bid = action - L.BID0
            self.bidder = s
            if self.high_bid == L.n_bids - 1 or self.n_passed == 3:
                self._end_auction()
                return
        nxt = (s + 1) % N_SEATS
        while self.passed[nxt]:
            nxt = (nxt + 1) % N_SEATS
        self.current = nxt

    def _end_auction(self) -> None:
        b = self.bidder
        self.current = b
        if not self.L.nest_size:  # no nest: trump (or circus) right after the auction
            self.phase = TRUMP
            return
        self.hands[b] |= self.nest  # the bidder takes the nest, unseen by others
        self.phase = TRUMP if self.config.nest_discard == "no_counters_unless_forced" else DISCARD

    def _apply_discard(self, card: int) -> None:
        bit = 1 << card
        self.hands[self.bidder] ^= bit
        self.discards |= bit
        if self.discards.bit_count() == self.L.nest_size:
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

    def _start_play(self) -> None:
        fl = self.config.first_lead
        if self.circus:  # the trump namer leads
            self.leader = (self.bidder + 1) % N_SEATS
        elif fl == "left_of_dealer":
            self.leader = (self.dealer + 1) % N_SEATS
        elif fl == "left_of_bidder":
            self.leader = (self.bidder + 1) % N_SEATS
        else:
            self.leader = self.bidder
        self.current = self.leader
        self.phase = PLAY

    def _apply_play(self, card: int) -> None:
        s = self.current
        self.hands[s] ^= 1 << card
        self.played |= 1 << card
        self.played_by[card] = s
        trick = self.trick
        trick.append(card)
        if len(trick) < N_SEATS:
            self.current = (s + 1) % N_SEATS
            return
        winner = (self.leader + self._ct.winner_index(self.call, trick)) % N_SEATS
        team = winner & 1
        pts = self.L.card_points
        self.points[team] += pts[trick[0]] + pts[trick[1]] + pts[trick[2]] + pts[trick[3]]
        self.tricks_won[team] += 1
        self.tricks.append((self.leader, tuple(trick)))
        self.trick = []
        self.leader = self.current = winner
        if len(self.tricks) == self.L.n_tricks:
            # The last trick also takes the nest.
            self.last_trick_team = team
            self.points[team] += sum(pts[c] for c in bits(self.discards))
            self._finish_hand()

    def trick_winner_index(self, cards: Sequence[int]) -> int:
        """Index (in play order) of the card that wins a trick under the current contract (or,
        when none is named, under the colour ``trump`` called high)."""
        return self._ct.winner_index(self.call if self.call >= 0 else self.trump, cards)

    # ---------------------------------------------------------------- scoring
    def _finish_hand(self) -> None:
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
        target = cfg.target_score
        if max(self.scores) >= target and self.scores[0] != self.scores[1]:
            self.winner = 0 if self.scores[0] > self.scores[1] else 1
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
        if cfg.episode == "game" and self.winner < 0 and (
            self.hand_limit is None or self.hands_played < self.hand_limit
        ):
            self.dealer = (self.dealer + 1) % N_SEATS
            self.deal()
        else:
            self.phase = OVER

    # ------------------------------------------------------------------ misc
    @property
    def is_over(self) -> bool:
        return self.phase == OVER

    def clone(self) -> "RookState":
        """An independent copy (the RNG state included)."""
        new = RookState.__new__(RookState)
        for name in RookState.__slots__:
            if hasattr(self, name):
                setattr(new, name, getattr(self, name))
        new.rng = random.Random()
        new.rng.setstate(self.rng.getstate())
        new.scores = list(self.scores)
        new.hands = list(self.hands)
        new.bid_history = list(self.bid_history)
        new.passed = list(self.passed)
        new.trick = list(self.trick)
        new.tricks = list(self.tricks)
        new.played_by = list(self.played_by)
        new.passing = list(self.passing)
        new.tricks_won = list(self.tricks_won)
        new.points = list(self.points)
        new.hand_result = dict(self.hand_result) if self.hand_result else None
        return new

    def to_dict(self) -> dict[str, Any]:
        """The global state (all hands, nest, discards): for centralized critics and logs."""
        L = self.L
        return {
            "phase": PHASE_NAMES[self.phase],
            "current_player": self.current,
            "dealer": self.dealer,
            "hands": [bits(h) for h in self.hands],
            "nest": bits(self.nest),
            "discards": bits(self.discards),
            "bid_history": [(s, L.action_name(a)) for s, a in self.bid_history],
            "bidder": self.bidder,
            "bid": L.bids[self.high_bid] if self.high_bid >= 0 else None,
            "trump": self.trump,
            "call": self.call,
            "circus": self.circus,
            "passing": list(self.passing),
            "leader": self.leader,
            "trick": list(self.trick),
            "tricks": [(lead, list(cards)) for lead, cards in self.tricks],
            "points": list(self.points),
            "tricks_won": list(self.tricks_won),
            "scores": list(self.scores),
            "winner": self.winner,
        }

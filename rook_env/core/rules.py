"""The rules every trick-taking game of the package shares: pure Python, no numpy.

:class:`TrickState` holds what Rook's games have in common (RULES.md R3 to R5 and R7, and C3 to
C5 and C7 for call-your-partner): the deal with a nest, the auction with passes, bids and the
no-counter redeal, the bidder's nest exchange, the first lead and trick play. A game subclasses it
(:class:`rook_env.games.partnership.rules.RookState`, :class:`rook_env.games.call_partner.rules.CallPartnerState`) and adds
only what differs: its phases after the auction, how a trick is won, who is credited with it, and
the scoring of a hand. OpenSpiel's style: a pure state with ``legal_mask()`` / ``apply()`` /
``clone()``, apart from the environment that wraps it.

Hooks a game provides (all called from the methods below):

- ``_phase_mask(phase)`` / ``_apply_phase(phase, action)``: its own phases (trump, the call, ...);
- ``_play_mask()``: the cards the seat to act may play; ``_trump_cards()``: the trump cards;

- the phase ids ``BID``, ``DISCARD``, ``TRUMP``, ``PLAY``, ``OVER`` and ``PHASE_NAMES`` as class
  attributes (each game numbers its phases; observations encode those numbers);
- ``_after_nest()``: the phase after the bidder took the nest (``DISCARD``, or ``TRUMP`` first);
- ``_discards_done()``: what follows the last discard;
- ``_trick_winner(trick) -> int``: the index (in play order) of the card that wins a full trick;
- ``_credit(winner, points)``: book a won trick's points to the winner's side or seat;
- ``_last_trick(winner)``: what the last trick takes besides its cards (the nest, a bonus);
- ``_finish_hand()``: score the hand, then deal the next one or end (``_next_hand_or_over``);
- ``_scores_wanted()``: how the error of a bad ``scores`` option names the scores.

Card sets are ``int`` bitmasks over card ids; legal-action sets are bitmasks over action ids.
"""

from __future__ import annotations

import random
from typing import Any, Sequence

from .deck import bits
from .flags import as_int

__all__ = ["TrickState"]


class TrickState:
    """One table of a Rook game: the shared part (see the module docstring for the hooks)."""

    # Phase ids; a game sets its own numbering (its observation encodes them).
    BID = DISCARD = TRUMP = PLAY = OVER = -1
    PHASE_NAMES: tuple[str, ...] = ()

    __slots__ = (
        "config", "L", "n", "n_scores", "rng",
        # game
        "scores", "dealer", "hands_played", "deals", "winner", "hand_result", "hand_limit",
        # hand
        "hands", "nest", "discards", "phase", "current", "bid_history", "high_bid", "bidder", "passed",
        "n_passed", "trump", "leader", "trick", "tricks", "played", "played_by", "tricks_won", "points",
        "nest_has_counters",
    )
    # Lists of a hand or a game copied by clone() (the rest is immutable or copied by the game).
    _LISTS = ("scores", "hands", "bid_history", "passed", "trick", "tricks", "played_by", "tricks_won", "points")

    def __init__(self, config: Any, layout: Any, players: int, n_scores: int, seed: int | None = None) -> None:
        self.config = config
        self.L = layout
        self.n = players
        self.n_scores = n_scores  # one score per team (partnership) or per seat (call-your-partner)
        self.rng = random.Random(None if seed is None else as_int(seed, "seed"))
        self.scores = [0] * n_scores
        self.dealer = 0
        self.hands_played = 0
        self.deals = 0
        self.winner = -1
        self.phase = self.OVER
        self.trump = -1
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
        and leaves the state and its RNG as they were (RULES.md R3.5, C3.2).
        """
        new_scores = [0] * self.n_scores if scores is None else self.check_scores(scores)
        seat = None if dealer is None else self.check_dealer(dealer)
        deal = None if hands is None and nest is None else self._check_deal(hands, nest)
        if seat is None:
            seat = self.rng.randrange(self.n)
        self.scores = new_scores
        self.dealer = seat
        self.hands_played = 0
        self.deals = 0
        self.winner = -1
        self.hand_result = None
        self.deal(checked=deal)

    def check_scores(self, scores: Any) -> list[int]:
        """``scores`` as ``n_scores`` ints, else ``ValueError``."""
        try:
            if isinstance(scores, (str, bytes)) or len(scores) != self.n_scores:
                raise ValueError
            return [as_int(s, "score") for s in scores]
        except (TypeError, ValueError):
            raise ValueError(f"scores must be {self._scores_wanted()}, got {scores!r}") from None

    def _scores_wanted(self) -> str:
        """How the error of a bad ``scores`` names them (a game may say what they belong to)."""
        return f"{self.n_scores} integers"

    def check_dealer(self, dealer: Any) -> int:
        """``dealer`` as a seat 0..n-1, else ``ValueError``."""
        seat = as_int(dealer, "dealer")
        if not 0 <= seat < self.n:
            raise ValueError(f"dealer must be a seat 0..{self.n - 1}, got {dealer!r}")
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
        L, n = self.L, self.n
        if checked is not None:
            masks, nest_mask = checked
        elif hands is None and nest is None:
            deck = list(range(L.n_cards))
            self.rng.shuffle(deck)
            # One card at a time clockwise from the dealer's left; after each of the first
            # nest_size rounds one card goes to the nest (RULES.md "Deal", C3.2).
            masks = [0] * n
            nest_mask = 0
            it = iter(deck)
            nest_size = L.nest_size
            for rnd in range(L.hand_size):
                for i in range(1, n + 1):
                    masks[(self.dealer + i) % n] |= 1 << next(it)
                if rnd < nest_size:
                    nest_mask |= 1 << next(it)
        else:
            masks, nest_mask = self._check_deal(hands, nest)
        self.hands = masks
        self.nest = nest_mask
        self.discards = 0
        self.phase = self.BID
        self.current = (self.dealer + 1) % n
        self.bid_history: list[tuple[int, int]] = []
        self.high_bid = -1  # index into L.bids
        self.bidder = -1
        self.passed = [False] * n
        self.n_passed = 0
        self.trump = -1  # trump colour (-1: not named yet, or a no-trump contract)
        self.leader = -1
        self.trick: list[int] = []  # cards of the current trick, in play order from the leader
        self.tricks: list[tuple[int, tuple[int, ...]]] = []  # finished tricks: (leader, cards)
        self.played = 0
        self.played_by = [-1] * L.n_cards
        self.tricks_won = [0] * self.n_scores
        self.points = [0] * self.n_scores
        self.nest_has_counters = False
        self._new_hand()
        self.deals += 1

    def _new_hand(self) -> None:
        """Reset the game's own per-hand fields (a hook; nothing by default)."""

    def _check_deal(self, hands: Any, nest: Any) -> tuple[list[int], int]:
        """A fixed deal as (n hand masks, nest mask), else ``ValueError`` saying what is wrong."""
        L, n = self.L, self.n
        if nest is None and L.nest_size == 0 and hands is not None:
            nest = []  # a game without a nest: 'nest' may be left out
        if hands is None or nest is None:
            raise ValueError(f"a fixed deal needs both 'hands' ({n} lists) and 'nest'")

        def card_list(cards: Any) -> list[Any]:
            # A string is iterable but never a list of card ids (list("abcd") would be four "cards").
            if isinstance(cards, (str, bytes, dict)):
                raise TypeError
            return list(cards)

        try:
            hand_lists, nest_list = [card_list(h) for h in card_list(hands)], card_list(nest)
        except TypeError:
            raise ValueError(
                f"'hands' must be {n} lists of card ids and 'nest' a list of card ids, got {hands!r} and {nest!r}"
            ) from None
        if len(hand_lists) != n:
            raise ValueError(f"'hands' must hold {n} lists (one per player), got {len(hand_lists)}")
        # One pass over the cards with the dealt ones as a bit mask: branch labels reset thousands of deals a second
        # (counterfactual labels), so the common case (plain ints, each dealt once) stays cheap.
        dealt = 0
        masks = []
        groups = [(f"hands[{i}]", h, L.hand_size) for i, h in enumerate(hand_lists)]
        groups.append(("nest", nest_list, L.nest_size))
        for where, cards, size in groups:
            if len(cards) != size:
                raise ValueError(f"{where} must hold {size} cards with {n} players and the {L.deck} deck, "
                                 f"got {len(cards)}")
            mask = 0
            for raw in cards:
                if type(raw) is int:
                    c = raw
                else:
                    try:
                        c = as_int(raw, "card id")
                    except ValueError:
                        c = -1
                if not 0 <= c < L.n_cards:
                    raise ValueError(f"{where} holds unknown card id {raw!r}; card ids are 0..{L.n_cards - 1}")
                bit = 1 << c
                if dealt & bit:
                    first = next(groups[i][0] for i, m in enumerate(masks + [mask]) if m & bit)
                    raise ValueError(f"card {c} ({L.card_name(c)}) is dealt twice: in {first} and {where}")
                dealt |= bit
                mask |= bit
            masks.append(mask)
        return masks[:n], masks[n]

    # ------------------------------------------------------------ legal moves
    def legal_actions(self) -> list[int]:
        return bits(self.legal_mask())

    def legal_mask(self) -> int:
        """Legal actions of the seat to act, as a bitmask over action ids (0 when over)."""
        phase = self.phase
        if phase == self.PLAY:
            return self._play_mask()
        if phase == self.BID:
            return self._bid_mask()
        if phase == self.DISCARD:
            return self._discard_mask()
        if phase == self.OVER:
            return 0
        return self._phase_mask(phase)

    def _phase_mask(self, phase: int) -> int:  # pragma: no cover - per game
        """The legal mask of one of the game's own phases."""
        raise NotImplementedError

    def _play_mask(self) -> int:  # pragma: no cover - per game
        raise NotImplementedError

    def _trump_cards(self) -> int:  # pragma: no cover - per game
        """The trump cards of the named trump (a mask), for the German discard rule."""
        raise NotImplementedError

    def _bid_mask(self) -> int:
        """Pass, the bids above the high bid, and the no-counter redeal (RULES.md R4, F3, F4; C4)."""
        L = self.L
        s = self.current
        redeal = (1 << L.REDEAL) if self.config.no_counter_redeal == "on" and not self.hands[s] & L.counter_mask else 0
        if self.n_passed == self.n - 1 and self.high_bid < 0:
            # all_pass=dealer_forced: the dealer's only bid is the minimum.
            return (1 << L.BID0) | redeal
        above = self.high_bid + 1
        bids = (L.bid_mask >> (L.BID0 + above)) << (L.BID0 + above)
        return (1 << L.PASS) | bids | redeal

    def _discard_mask(self) -> int:
        """The bidder's cards it may lay in the nest (RULES.md F5, D23; C5.1)."""
        hand = self.hands[self.bidder]
        if self.config.nest_discard == "any":
            return hand
        # German rule: counters only when every card left is a counter or a trump (no trump: a counter).
        free = hand & ~self.L.counter_mask
        if free & ~self._trump_cards():
            return free
        return hand

    def _follow_mask(self, follow: int) -> int:
        """Card play: the cards of the led suit (``follow``), or any card holding none (R7.1, C7.2)."""
        hand = self.hands[self.current]
        return (hand & follow) or hand

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
        if phase == self.PLAY:
            self._apply_play(action)
        elif phase == self.BID:
            self._apply_bid(action)
        elif phase == self.DISCARD:
            self._apply_discard(action)
        else:
            self._apply_phase(phase, action)

    def _apply_phase(self, phase: int, action: int) -> None:  # pragma: no cover - per game
        """Apply an action of one of the game's own phases."""
        raise NotImplementedError

    def illegal_message(self, action: Any, legal: int | None = None) -> str:
        L = self.L
        if legal is None:
            legal = self.legal_mask()
        name = L.action_name(action) if isinstance(action, int) and 0 <= action < L.n_actions else "out of range"
        legal_txt = ", ".join(f"{a} ({L.action_name(a)})" for a in bits(legal))
        return (
            f"illegal action {action!r} ({name}) for player_{self.current} in phase "
            f"{self.PHASE_NAMES[self.phase]!r}; legal actions: {legal_txt or 'none (the hand is over)'}"
        )

    def _apply_bid(self, action: int) -> None:
        """A pass, a bid or a redeal (RULES.md R4, F3, F4; C4)."""
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
        """The bidder takes the nest, unseen by others (RULES.md R5.1, C5.1)."""
        b = self.bidder
        self.current = b
        self.hands[b] |= self.nest
        self.phase = self.TRUMP if self.config.nest_discard == "no_counters_unless_forced" else self.DISCARD

    def _apply_discard(self, card: int) -> None:
        """The bidder lays one card in the nest (RULES.md R5.2, C5.1)."""
        bit = 1 << card
        self.hands[self.bidder] ^= bit
        self.discards |= bit
        if self.discards.bit_count() == self.L.nest_size:
            self._discards_done()

    def _discards_done(self) -> None:  # pragma: no cover - every game with a nest defines it
        raise NotImplementedError

    def _first_leader(self) -> int:
        """The seat that leads the first trick (flag ``first_lead``, RULES.md F6, C7.1)."""
        fl = self.config.first_lead
        if fl == "left_of_dealer":
            return (self.dealer + 1) % self.n
        if fl == "left_of_bidder":
            return (self.bidder + 1) % self.n
        return self.bidder

    def _start_play(self) -> None:
        self.leader = self.current = self._first_leader()
        self.phase = self.PLAY

    def _apply_play(self, card: int) -> None:
        """Play a card; a full trick goes to its winner, who leads next (RULES.md R7, C7)."""
        s = self.current
        self.hands[s] ^= 1 << card
        self.played |= 1 << card
        self.played_by[card] = s
        trick = self.trick
        trick.append(card)
        n = self.n
        if len(trick) < n:
            self.current = (s + 1) % n
            return
        winner = (self.leader + self._trick_winner(trick)) % n
        pts = self.L.card_points
        self._credit(winner, sum([pts[c] for c in trick]))
        self.tricks.append((self.leader, tuple(trick)))
        self.trick = []
        self.leader = self.current = winner
        if len(self.tricks) == self.L.n_tricks:
            self._last_trick(winner)
            self._finish_hand()

    def _trick_winner(self, trick: list[int]) -> int:  # pragma: no cover - per game
        raise NotImplementedError

    def _credit(self, winner: int, points: int) -> None:  # pragma: no cover - per game
        raise NotImplementedError

    def _last_trick(self, winner: int) -> None:  # pragma: no cover - per game
        raise NotImplementedError

    def _finish_hand(self) -> None:  # pragma: no cover - per game
        raise NotImplementedError

    # ---------------------------------------------------------------- scoring
    def _game_winner(self) -> None:
        """After a hand: the one highest score at or above ``target_score`` wins; a tie at the top
        plays on (RULES.md R9, C9)."""
        scores = self.scores
        top = max(scores)
        if top >= self.config.target_score and scores.count(top) == 1:
            self.winner = scores.index(top)

    def _next_hand_or_over(self) -> None:
        """Game episodes deal the next hand (dealer rotated) until a winner or ``hand_limit``."""
        if self.config.episode == "game" and self.winner < 0 and (
            self.hand_limit is None or self.hands_played < self.hand_limit
        ):
            self.dealer = (self.dealer + 1) % self.n
            self.deal()
        else:
            self.phase = self.OVER

    # ------------------------------------------------------------------ misc
    @property
    def is_over(self) -> bool:
        return self.phase == self.OVER

    @classmethod
    def state_fields(cls) -> tuple[str, ...]:
        """Every field of the state: the slots of the game's class and of the core's."""
        return tuple(name for klass in cls.__mro__ for name in getattr(klass, "__slots__", ()))

    def clone(self):
        """An independent copy (the RNG state included)."""
        cls = type(self)
        new = cls.__new__(cls)
        for name in cls.state_fields():
            if hasattr(self, name):
                setattr(new, name, getattr(self, name))
        new.rng = random.Random()
        new.rng.setstate(self.rng.getstate())
        for name in self._LISTS:
            if hasattr(self, name):
                setattr(new, name, list(getattr(self, name)))
        new.hand_result = dict(self.hand_result) if self.hand_result else None
        return new

    def _public_dict(self) -> dict[str, Any]:
        """The fields of :meth:`to_dict` every game has (all hands included: a global view)."""
        L = self.L
        return {
            "phase": self.PHASE_NAMES[self.phase],
            "current_player": self.current,
            "dealer": self.dealer,
            "hands": [bits(h) for h in self.hands],
            "nest": bits(self.nest),
            "discards": bits(self.discards),
            "bid_history": [(s, L.action_name(a)) for s, a in self.bid_history],
            "bidder": self.bidder,
            "bid": L.bids[self.high_bid] if self.high_bid >= 0 else None,
            "trump": self.trump,
        }

    def _play_dict(self) -> dict[str, Any]:
        """The card play and the score of :meth:`to_dict` (after the game's own fields)."""
        return {
            "leader": self.leader,
            "trick": list(self.trick),
            "tricks": [(lead, list(cards)) for lead, cards in self.tricks],
            "points": list(self.points),
            "tricks_won": list(self.tricks_won),
            "scores": list(self.scores),
            "winner": self.winner,
        }

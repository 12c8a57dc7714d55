"""Cards, deal sizes and the action-id layout of call-your-partner Rook.

Card ids: ``id = n_ranks * colour + rank_index`` (red 0, yellow 1, green 2, black 3), the Rook
Bird last. Full deck (ranks 1..14, the 1 above the 14): ``14 * colour + (rank - 1)``, Rook 56,
the same ids as the partnership game's full deck. ``deck="no_twos_to_fours"`` (ranks 1, 5..14):
``11 * colour + index``, Rook 44.

Action ids, always in this order (full deck, bids 100..200 by 5)::

    0 .. 56    a card: discard it / call it / play it   (n_cards = 57)
    57         pass                                     (1)
    58 .. 78   bid 100, 105, ..., 200                   (n_bids = 21)
    79 .. 82   trump red, yellow, green, black          (4)
    83 .. 84   rook high, rook low                      (2)
    85         call a redeal (no counter in hand)       (1)
    -----------------------------------------------------------
    86 actions = 57 + 1 + 21 + 4 + 2 + 1   (no_twos_to_fours: 74 = 45 + 1 + 21 + 4 + 2 + 1)

The card actions mean "discard" in the discard phase, "call" in the call phase and "play" in
the play phase; the phase is in the observation. Card sets are ``int`` bitmasks over card ids;
legal-action sets are bitmasks over action ids. Pure Python (standard library only).
"""

from __future__ import annotations

from functools import lru_cache

from rook_env.core.deck import COLOUR_LETTERS, COLOUR_NAMES, N_COLOURS, RANK_POINTS, ROOK_NAME, DeckLayout, bits, rank_power
from .config import CallPartnerConfig

# Ranks of each deck, in id order (RULES.md C2.1).
DECK_RANKS = {"full": tuple(range(1, 15)), "no_twos_to_fours": (1,) + tuple(range(5, 15))}
LAST_TRICK_POINTS = 20  # the last trick is worth 20 besides its counters (RULES.md C2.2)
# (nest size, hand size) per deck and player count (RULES.md C3.1).
DEAL_SIZES = {
    ("full", 4): (5, 13), ("full", 5): (7, 10), ("full", 6): (3, 9),
    ("no_twos_to_fours", 4): (5, 10), ("no_twos_to_fours", 5): (5, 8), ("no_twos_to_fours", 6): (3, 7),
}
ROOK_CHOICES = ("high", "low")

__all__ = [
    "COLOUR_NAMES", "DEAL_SIZES", "DECK_RANKS", "LAST_TRICK_POINTS", "ROOK_CHOICES", "CallPartnerLayout",
    "bits", "layout_for", "rank_power",
]  # COLOUR_NAMES, bits and rank_power: the core's (rook_env.core.deck), for this game's importers


class CallPartnerLayout(DeckLayout):
    """Deck, deal sizes and action ids of one configuration; ids <-> meanings <-> short text.

    Obtain it with :func:`layout_for` (cached per deck, player count, bid range and 2s flags)."""

    def __init__(self, deck: str, players: int, bids: tuple[int, ...], black_two_trump: bool = False,
                 red_two_little_rook: bool = False) -> None:
        self.deck = deck
        self.players = players
        self._build_deck(DECK_RANKS[deck], True, RANK_POINTS)
        self.nest_size, self.hand_size = DEAL_SIZES[deck, players]
        assert self.nest_size + players * self.hand_size == self.n_cards
        self.n_tricks = self.hand_size
        # Action ids (module docstring): cards, PASS, bids, trumps (the core's), then the game's.
        self._build_bids(bids, N_COLOURS)
        self.ROOK_HIGH = self.TRUMP0 + N_COLOURS
        self.ROOK_LOW = self.ROOK_HIGH + 1
        self.REDEAL = self.ROOK_LOW + 1
        self.n_actions = self.REDEAL + 1
        self.counter_points = sum(self.card_points)  # 180
        self.total_points = self.counter_points + LAST_TRICK_POINTS  # 200 per hand
        self.rook_mask = (1 << self.ROOK_HIGH) | (1 << self.ROOK_LOW)
        self._name_cards(tuple(
            ROOK_NAME if c == self.rook else f"{COLOUR_LETTERS[self.card_colour[c]]}{self.card_rank[c]}"
            for c in range(self.n_cards)
        ))
        # Trick power of a card within its colour (the 1 above the 14).
        self.card_power = tuple(rank_power(r) for r in self.card_rank[:-1]) + (0,)
        # The 2s of RULES.md F17 and F18 (full deck only; -1: not in play).
        self.black_two = self.card_id(3, 2) if black_two_trump else -1
        self.little_rook = self.card_id(0, 2) if red_two_little_rook else -1
        little = 1 << self.little_rook if red_two_little_rook else 0
        # Per trump colour: the trump cards (the colour, the Rook Bird, a little rook) and, per led
        # card, the cards that follow it (a led Rook Bird or little rook is a trump lead; C7.2, F18).
        self.trump_cards = tuple(self.colour_mask[t] | self.rook_bit | little for t in range(N_COLOURS))
        self.suit_cards = tuple(
            tuple(self.trump_cards[t] if col < 0 or col == t or c == self.little_rook
                  else self.colour_mask[col] & ~little for c, col in enumerate(self.card_colour))
            for t in range(N_COLOURS)
        )

    def _own_kind(self, action: int) -> str:
        if action < self.ROOK_HIGH:
            return "trump"
        if action < self.REDEAL:
            return "rook"
        return "redeal"

    def _own_name(self, kind: str, action: int) -> str:
        if kind == "trump":
            return f"trump {COLOUR_NAMES[action - self.TRUMP0]}"
        if kind == "rook":
            return f"rook {ROOK_CHOICES[action - self.ROOK_HIGH]}"
        return kind

    def _parse_own(self, t: str) -> int | None:
        if t == "redeal":
            return self.REDEAL
        if t.startswith("trump "):
            colour = t[6:]
            if colour in COLOUR_NAMES:
                return self.TRUMP0 + COLOUR_NAMES.index(colour)
            raise ValueError(f"unknown trump colour {colour!r}; one of {', '.join(COLOUR_NAMES)}")
        if t.startswith("rook "):
            choice = t[5:]
            if choice in ROOK_CHOICES:
                return self.ROOK_HIGH + ROOK_CHOICES.index(choice)
            raise ValueError(f"unknown Rook rank {choice!r}; 'rook high' or 'rook low'")
        return None


@lru_cache(maxsize=64)  # bounded: a sweep over bid ranges must not grow memory for good
def _layout(deck: str, players: int, bids: tuple[int, ...], black_two: bool, little_rook: bool) -> CallPartnerLayout:
    return CallPartnerLayout(deck, players, bids, black_two, little_rook)


def layout_for(config: CallPartnerConfig) -> CallPartnerLayout:
    """The (shared, immutable) layout of a configuration."""
    return _layout(config.deck, config.players, config.bids, config.black_two_trump == "on",
                   config.red_two_little_rook == "on")

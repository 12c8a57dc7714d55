"""Cards and the action-id layout.

Card ids: ``id = n_ranks * colour + rank_index`` with colours red=0, yellow=1, green=2,
black=3; the Rook Bird is the last id. For the default tournament deck (ranks 5..14)
that is ``10 * colour + (rank - 5)`` and the Rook Bird is 40; for the full deck
(ranks 1..14, the 1 ranking above the 14) it is ``14 * colour + (rank - 1)`` and the
Rook Bird is 56.

Action ids, always in this order (default tournament deck, bids 70..120 by 5)::

    0 .. 40    play / discard a card          (n_cards)
    41         pass                           (1)
    42 .. 52   bid 70, 75, ..., 120           (n_bids)
    53 .. 56   name trump red, yellow, green, black   (4)
    57         call a redeal                  (1)
    -----------------------------------------------------
    58 actions = 41 + 1 + 11 + 4 + 1

The games of RULES.md "More games" keep this order and change sizes: the cards follow the
deck (no Rook Bird: 40 or 56 cards, ids as above without the last one), the bids follow the
bid range, ``trump_calls="extended"`` has ten contract actions in place of the four colours
(``TRUMP0 + k``: k = 0..3 red/yellow/green/black *high*, 4..7 the same colours *low*, 8 *no
trump high*, 9 *no trump low*), and ``circus_rook="on"`` adds one action after the redeal,
``circus`` (``CIRCUS``). Circus Rook's card passing uses the card actions. Every layout lists
itself with ``Layout.table()``.

Hands and other card sets are Python ``int`` bitmasks over card ids (bit ``id``);
legal-action sets are bitmasks over action ids.
"""

from __future__ import annotations

from functools import lru_cache

from .config import RookConfig
from rook_env.core.deck import (  # the deck every game shares; re-exported: the partnership game's names
    COLOUR_LETTERS,
    COLOUR_NAMES,
    N_COLOURS,
    RANK_POINTS,
    ROOK_NAME,
    ROOK_POINTS,
    DeckLayout,
    bits,
    rank_power,
)

N_SEATS = 4
# Ranks of each deck, in id order; rank_power orders them within a colour.
DECK_RANKS = {"tournament": tuple(range(5, 15)), "full": tuple(range(1, 15))}
NEST_SIZE = 5  # the nest with the Rook Bird in the deck (4 without it)


# Standard-card names (flag card_names="standard", tournament deck): suits for the colours,
# J Q K A for 11..14, the joker for the Rook Bird.
STANDARD_COLOUR_NAMES = ("hearts", "diamonds", "clubs", "spades")
STANDARD_COLOUR_LETTERS = "HDCS"
STANDARD_RANKS = {11: "J", 12: "Q", 13: "K", 14: "A"}
JOKER_NAME = "Joker"
# Contracts of trump_calls="extended", in action order after TRUMP0 (see the module docstring).
N_CONTRACTS_EXTENDED = 2 * N_COLOURS + 2
NO_TRUMP_HIGH, NO_TRUMP_LOW = 2 * N_COLOURS, 2 * N_COLOURS + 1


def contract_trump(contract: int) -> int:
    """Trump colour of a contract index (-1: no trump)."""
    return contract % N_COLOURS if contract < 2 * N_COLOURS else -1


def contract_low(contract: int) -> bool:
    """True for the *low* contracts (the order within every colour reversed)."""
    return N_COLOURS <= contract < 2 * N_COLOURS or contract == NO_TRUMP_LOW


class Layout(DeckLayout):
    """Deck and action-id layout for one configuration; ids <-> meanings <-> short text.

    Obtain it with :func:`layout_for` (cached per the flags it depends on).
    """

    def __init__(self, deck: str, bids: tuple[int, ...], rook_bird: bool = True, nest: bool = True,
                 ones: str | None = None, card_names: str = "rook", trump_calls: str = "colour",
                 circus: bool = False) -> None:
        self.deck = deck
        self.ones = ones
        one_points = RANK_POINTS[1] if ones != "low" else 0  # a low 1 counts nothing (F15)
        self._build_deck(DECK_RANKS[deck], rook_bird, {**RANK_POINTS, 1: one_points})
        # A nest of 5 with the Rook Bird, 4 without (the deck shares out evenly), none without a nest.
        self.nest_size = (NEST_SIZE if rook_bird else NEST_SIZE - 1) if nest else 0
        self.hand_size = (self.n_cards - self.nest_size) // N_SEATS
        self.n_tricks = self.hand_size
        self.n_contracts = N_CONTRACTS_EXTENDED if trump_calls == "extended" else N_COLOURS
        # Action ids: cards, PASS, bids, contracts (the core's), then REDEAL and CIRCUS.
        self._build_bids(bids, self.n_contracts)
        self.REDEAL = self.TRUMP0 + self.n_contracts
        self.CIRCUS = self.REDEAL + 1 if circus else -1
        self.n_actions = self.REDEAL + (2 if circus else 1)
        # Order of each card within its colour (the Rook Bird: 0): 2 < ... < 14 < 1, or 1 < 2 < ... with ones="low".
        self.rank_order = tuple(
            [self.rank_power_of(r) for r in self.card_rank[:N_COLOURS * self.n_ranks]] + ([0] if rook_bird else [])
        )
        self.total_points = sum(self.card_points)
        self.card_mask = self.all_cards  # action bits that are cards
        # Names.
        self.standard_names = card_names == "standard"
        self.colour_names = STANDARD_COLOUR_NAMES if self.standard_names else COLOUR_NAMES
        self.colour_letters = STANDARD_COLOUR_LETTERS if self.standard_names else COLOUR_LETTERS
        self.rook_name = JOKER_NAME if self.standard_names else ROOK_NAME
        self._name_cards(tuple(self._card_name(c) for c in range(self.n_cards)))
        if trump_calls == "extended":
            self.contract_names = tuple(
                [f"{c} high" for c in self.colour_names] + [f"{c} low" for c in self.colour_names]
                + ["no trump high", "no trump low"]
            )
        else:
            self.contract_names = self.colour_names
        self._name_to_contract = {n: k for k, n in enumerate(self.contract_names)}

    def rank_power_of(self, rank: int) -> int:
        """Order of a rank within its colour: the 1 above the 14 unless ``ones="low"``."""
        return rank if self.ones == "low" else rank_power(rank)

    def rank_text(self, rank: int) -> str:
        """A rank as shown: ``14``, or ``A`` with standard names."""
        return STANDARD_RANKS.get(rank, str(rank)) if self.standard_names else str(rank)

    def _card_name(self, card: int) -> str:
        if card == self.rook:
            return self.rook_name
        colour, rank = self.card_colour[card], self.card_rank[card]
        if self.standard_names:
            return f"{self.rank_text(rank)}{self.colour_letters[colour]}"
        return f"{COLOUR_LETTERS[colour]}{rank}"

    def _unknown_card_hint(self) -> str:
        example = "AH, 5S, Joker" if self.standard_names else ("R14, Y5, Rook" if self.has_rook else "R14, Y5")
        return f"; cards look like {example}"

    def trump_action(self, colour: int) -> int:
        """The action naming ``colour`` trump (its *high* contract with extended calls)."""
        return self.TRUMP0 + colour

    def contract_name(self, contract: int) -> str:
        """``green`` (colour calls) or ``green low``, ``no trump high`` (extended calls)."""
        return self.contract_names[contract]

    def _own_kind(self, action: int) -> str:
        if action < self.REDEAL:
            return "trump"
        return "redeal" if action == self.REDEAL else "circus"

    def _own_name(self, kind: str, action: int) -> str:
        # extended calls: ``green low``, ``no trump high``; colour calls: ``trump green``
        if kind == "trump":
            name = self.contract_names[action - self.TRUMP0]
            return name if self.n_contracts != N_COLOURS else f"trump {name}"
        return kind

    def _parse_own(self, t: str) -> int | None:
        # ``trump`` may precede a contract: ``trump green low``
        if t == "redeal":
            return self.REDEAL
        if t == "circus" and self.CIRCUS >= 0:
            return self.CIRCUS
        contract = t[6:] if t.startswith("trump ") else t
        contract = contract.replace("notrump", "no trump").replace("no-trump", "no trump")
        if contract in self._name_to_contract:
            return self.TRUMP0 + self._name_to_contract[contract]
        if t.startswith("trump ") or contract.startswith("no trump"):
            what = "trump colour" if self.n_contracts == N_COLOURS else "trump call"
            raise ValueError(f"unknown {what} {contract!r}; one of {', '.join(self.contract_names)}")
        return None


@lru_cache(maxsize=64)  # bounded: a sweep over bid ranges must not grow memory for good
def _layout(deck: str, bids: tuple[int, ...], rook_bird: bool = True, nest: bool = True, ones: str | None = None,
            card_names: str = "rook", trump_calls: str = "colour", circus: bool = False) -> Layout:
    return Layout(deck, bids, rook_bird, nest, ones, card_names, trump_calls, circus)


def layout_for(config: RookConfig) -> Layout:
    """The (shared, immutable) layout of a configuration."""
    return _layout(config.deck, config.bids, config.rook_bird == "on", config.nest == "on", config.ones,
                   config.card_names, config.trump_calls, config.circus_rook == "on")


DEFAULT_LAYOUT = layout_for(RookConfig())
# The default action ids as named constants (see the module docstring).
N_CARDS = DEFAULT_LAYOUT.n_cards  # 41
ROOK = DEFAULT_LAYOUT.rook  # 40
PASS = DEFAULT_LAYOUT.PASS  # 41
BID0 = DEFAULT_LAYOUT.BID0  # 42: bid 70
TRUMP0 = DEFAULT_LAYOUT.TRUMP0  # 53: trump red
REDEAL = DEFAULT_LAYOUT.REDEAL  # 57
N_ACTIONS = DEFAULT_LAYOUT.n_actions  # 58

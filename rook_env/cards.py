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

N_SEATS = 4
N_COLOURS = 4
COLOUR_NAMES = ("red", "yellow", "green", "black")
COLOUR_LETTERS = "RYGB"
ROOK_NAME = "Rook"

# Ranks of each deck, in id order; RANK_POWER orders them within a colour.
DECK_RANKS = {"tournament": tuple(range(5, 15)), "full": tuple(range(1, 15))}
# Counter value of a rank; the Rook Bird counts 20.
RANK_POINTS = {1: 15, 5: 5, 10: 10, 14: 10}
ROOK_POINTS = 20
NEST_SIZE = 5  # the nest with the Rook Bird in the deck (4 without it)


def rank_power(rank: int) -> int:
    """Order of a rank within its colour: 5 < ... < 14 < 1 (the 1 is high in the full deck)."""
    return 15 if rank == 1 else rank


def bits(mask: int) -> list[int]:
    """The set bit positions of ``mask``, ascending."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def popcount(mask: int) -> int:
    return mask.bit_count()


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


class Layout:
    """Deck and action-id layout for one configuration; ids <-> meanings <-> short text.

    Obtain it with :func:`layout_for` (cached per the flags it depends on).
    """

    def __init__(self, deck: str, bids: tuple[int, ...], rook_bird: bool = True, nest: bool = True,
                 ones: str | None = None, card_names: str = "rook", trump_calls: str = "colour",
                 circus: bool = False) -> None:
        self.deck = deck
        self.ranks: tuple[int, ...] = DECK_RANKS[deck]
        self.n_ranks = len(self.ranks)
        self.has_rook = rook_bird
        self.n_cards = N_COLOURS * self.n_ranks + (1 if rook_bird else 0)
        self.rook = self.n_cards - 1 if rook_bird else -1  # -1: no Rook Bird in the deck
        self.rook_bit = 1 << self.rook if rook_bird else 0
        # A nest of 5 with the Rook Bird, 4 without (the deck shares out evenly), none without a nest.
        self.nest_size = (NEST_SIZE if rook_bird else NEST_SIZE - 1) if nest else 0
        self.hand_size = (self.n_cards - self.nest_size) // N_SEATS
        self.n_tricks = self.hand_size
        self.ones = ones
        self.bids = bids
        self.n_bids = len(bids)
        self.n_contracts = N_CONTRACTS_EXTENDED if trump_calls == "extended" else N_COLOURS
        # Action ids.
        self.PASS = self.n_cards
        self.BID0 = self.PASS + 1
        self.TRUMP0 = self.BID0 + self.n_bids
        self.REDEAL = self.TRUMP0 + self.n_contracts
        self.CIRCUS = self.REDEAL + 1 if circus else -1
        self.n_actions = self.REDEAL + (2 if circus else 1)
        # Card masks.
        self.all_cards = (1 << self.n_cards) - 1
        self.colour_mask = tuple(((1 << self.n_ranks) - 1) << (c * self.n_ranks) for c in range(N_COLOURS))
        rook_tail = [-1] if rook_bird else []
        self.card_colour = tuple([c for c in range(N_COLOURS) for _ in range(self.n_ranks)] + rook_tail)
        self.card_rank = tuple(list(self.ranks) * N_COLOURS + ([0] if rook_bird else []))
        one_points = RANK_POINTS[1] if ones != "low" else 0  # a low 1 counts nothing (F15)
        points = {**RANK_POINTS, 1: one_points}
        self.card_points = tuple(
            [points.get(r, 0) for r in self.card_rank[:N_COLOURS * self.n_ranks]] + ([ROOK_POINTS] if rook_bird else [])
        )
        # Order of each card within its colour (the Rook Bird: 0): 2 < ... < 14 < 1, or 1 < 2 < ... with ones="low".
        self.rank_order = tuple(
            [self.rank_power_of(r) for r in self.card_rank[:N_COLOURS * self.n_ranks]] + ([0] if rook_bird else [])
        )
        self.counter_mask = sum(1 << c for c, p in enumerate(self.card_points) if p)
        self.total_points = sum(self.card_points)
        self.card_mask = self.all_cards  # action bits that are cards
        self.bid_mask = ((1 << self.n_bids) - 1) << self.BID0
        self.trump_mask = ((1 << self.n_contracts) - 1) << self.TRUMP0
        # Names.
        self.standard_names = card_names == "standard"
        self.colour_names = STANDARD_COLOUR_NAMES if self.standard_names else COLOUR_NAMES
        self.colour_letters = STANDARD_COLOUR_LETTERS if self.standard_names else COLOUR_LETTERS
        self.rook_name = JOKER_NAME if self.standard_names else ROOK_NAME
        self.card_names = tuple(self._card_name(c) for c in range(self.n_cards))
        self._name_to_card = {n.lower(): c for c, n in enumerate(self.card_names)}
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

    def card_id(self, colour: int, rank: int) -> int:
        """Card id of ``rank`` (e.g. 14) in ``colour`` (0..3)."""
        if rank not in self.ranks or not 0 <= colour < N_COLOURS:
            raise ValueError(f"no card of colour {colour} and rank {rank} in the {self.deck} deck")
        return colour * self.n_ranks + self.ranks.index(rank)

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

    def card_name(self, card: int) -> str:
        """Short text of a card: ``R14``, ``B5``, ``Rook`` (standard names: ``AH``, ``5S``, ``Joker``)."""
        return self.card_names[card]

    def parse_card(self, text: str) -> int:
        """Inverse of :meth:`card_name` (case-insensitive)."""
        try:
            return self._name_to_card[text.strip().lower()]
        except KeyError:
            example = "AH, 5S, Joker" if self.standard_names else ("R14, Y5, Rook" if self.has_rook else "R14, Y5")
            raise ValueError(f"unknown card {text!r}; cards look like {example}") from None

    def bid_action(self, value: int) -> int:
        if value not in self.bids:
            raise ValueError(f"bid {value} is not one of {self.bids}")
        return self.BID0 + self.bids.index(value)

    def trump_action(self, colour: int) -> int:
        """The action naming ``colour`` trump (its *high* contract with extended calls)."""
        return self.TRUMP0 + colour

    def contract_name(self, contract: int) -> str:
        """``green`` (colour calls) or ``green low``, ``no trump high`` (extended calls)."""
        return self.contract_names[contract]

    def action_kind(self, action: int) -> str:
        """'card', 'pass', 'bid', 'trump', 'redeal' or 'circus'."""
        if not 0 <= action < self.n_actions:
            raise ValueError(f"action {action} out of range 0..{self.n_actions - 1}")
        if action < self.n_cards:
            return "card"
        if action == self.PASS:
            return "pass"
        if action < self.TRUMP0:
            return "bid"
        if action < self.REDEAL:
            return "trump"
        return "redeal" if action == self.REDEAL else "circus"

    def action_name(self, action: int) -> str:
        """Short text of an action: ``R14``, ``Rook``, ``pass``, ``bid 85``, ``trump green``, ``redeal``
        (extended calls: ``green low``, ``no trump high``; Circus Rook: ``circus``)."""
        kind = self.action_kind(action)
        if kind == "card":
            return self.card_names[action]
        if kind == "bid":
            return f"bid {self.bids[action - self.BID0]}"
        if kind == "trump":
            name = self.contract_names[action - self.TRUMP0]
            return name if self.n_contracts != N_COLOURS else f"trump {name}"
        return kind

    def parse_action(self, text: str) -> int:
        """Inverse of :meth:`action_name` (case-insensitive; ``85`` alone means ``bid 85``;
        ``trump`` may precede a contract: ``trump green low``)."""
        t = " ".join(text.strip().lower().split())
        if t in ("pass", "redeal"):
            return self.PASS if t == "pass" else self.REDEAL
        if t == "circus" and self.CIRCUS >= 0:
            return self.CIRCUS
        if t.startswith("bid "):
            t = t[4:]
        if t.isdigit():
            return self.bid_action(int(t))
        contract = t[6:] if t.startswith("trump ") else t
        contract = contract.replace("notrump", "no trump").replace("no-trump", "no trump")
        if contract in self._name_to_contract:
            return self.TRUMP0 + self._name_to_contract[contract]
        if t.startswith("trump ") or contract.startswith("no trump"):
            what = "trump colour" if self.n_contracts == N_COLOURS else "trump call"
            raise ValueError(f"unknown {what} {contract!r}; one of {', '.join(self.contract_names)}")
        return self.parse_card(t)

    def table(self) -> list[tuple[int, str, str]]:
        """Every action as (id, kind, short text)."""
        return [(a, self.action_kind(a), self.action_name(a)) for a in range(self.n_actions)]


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

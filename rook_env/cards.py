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
NEST_SIZE = 5


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


class Layout:
    """Deck and action-id layout for one configuration; ids <-> meanings <-> short text.

    Obtain it with :func:`layout_for` (cached per deck and bid range).
    """

    def __init__(self, deck: str, bids: tuple[int, ...]) -> None:
        self.deck = deck
        self.ranks: tuple[int, ...] = DECK_RANKS[deck]
        self.n_ranks = len(self.ranks)
        self.n_cards = N_COLOURS * self.n_ranks + 1
        self.rook = self.n_cards - 1
        self.rook_bit = 1 << self.rook
        self.hand_size = (self.n_cards - NEST_SIZE) // N_SEATS
        self.n_tricks = self.hand_size
        self.bids = bids
        self.n_bids = len(bids)
        # Action ids.
        self.PASS = self.n_cards
        self.BID0 = self.PASS + 1
        self.TRUMP0 = self.BID0 + self.n_bids
        self.REDEAL = self.TRUMP0 + N_COLOURS
        self.n_actions = self.REDEAL + 1
        # Card masks.
        self.all_cards = (1 << self.n_cards) - 1
        self.colour_mask = tuple(((1 << self.n_ranks) - 1) << (c * self.n_ranks) for c in range(N_COLOURS))
        self.card_colour = tuple([c for c in range(N_COLOURS) for _ in range(self.n_ranks)] + [-1])
        self.card_rank = tuple(list(self.ranks) * N_COLOURS + [0])
        self.card_points = tuple(
            [RANK_POINTS.get(r, 0) for r in self.card_rank[:-1]] + [ROOK_POINTS]
        )
        self.counter_mask = sum(1 << c for c, p in enumerate(self.card_points) if p)
        self.total_points = sum(self.card_points)
        self.card_mask = self.all_cards  # action bits that are cards
        self.bid_mask = ((1 << self.n_bids) - 1) << self.BID0
        self.trump_mask = ((1 << N_COLOURS) - 1) << self.TRUMP0
        self.card_names = tuple(self._card_name(c) for c in range(self.n_cards))
        self._name_to_card = {n.lower(): c for c, n in enumerate(self.card_names)}

    def card_id(self, colour: int, rank: int) -> int:
        """Card id of ``rank`` (e.g. 14) in ``colour`` (0..3)."""
        if rank not in self.ranks or not 0 <= colour < N_COLOURS:
            raise ValueError(f"no card of colour {colour} and rank {rank} in the {self.deck} deck")
        return colour * self.n_ranks + self.ranks.index(rank)

    def _card_name(self, card: int) -> str:
        if card == self.rook:
            return ROOK_NAME
        return f"{COLOUR_LETTERS[self.card_colour[card]]}{self.card_rank[card]}"

    def card_name(self, card: int) -> str:
        """Short text of a card: ``R14``, ``B5``, ``Rook``."""
        return self.card_names[card]

    def parse_card(self, text: str) -> int:
        """Inverse of :meth:`card_name` (case-insensitive)."""
        try:
            return self._name_to_card[text.strip().lower()]
        except KeyError:
            raise ValueError(f"unknown card {text!r}; cards look like R14, Y5, Rook") from None

    def bid_action(self, value: int) -> int:
        if value not in self.bids:
            raise ValueError(f"bid {value} is not one of {self.bids}")
        return self.BID0 + self.bids.index(value)

    def trump_action(self, colour: int) -> int:
        return self.TRUMP0 + colour

    def action_kind(self, action: int) -> str:
        """'card', 'pass', 'bid', 'trump' or 'redeal'."""
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
        return "redeal"

    def action_name(self, action: int) -> str:
        """Short text of an action: ``R14``, ``Rook``, ``pass``, ``bid 85``, ``trump green``, ``redeal``."""
        kind = self.action_kind(action)
        if kind == "card":
            return self.card_names[action]
        if kind == "bid":
            return f"bid {self.bids[action - self.BID0]}"
        if kind == "trump":
            return f"trump {COLOUR_NAMES[action - self.TRUMP0]}"
        return kind

    def parse_action(self, text: str) -> int:
        """Inverse of :meth:`action_name` (case-insensitive; ``85`` alone means ``bid 85``)."""
        t = " ".join(text.strip().lower().split())
        if t in ("pass", "redeal"):
            return self.PASS if t == "pass" else self.REDEAL
        if t.startswith("bid "):
            t = t[4:]
        if t.isdigit():
            return self.bid_action(int(t))
        if t.startswith("trump "):
            t = t[6:]
            if t in COLOUR_NAMES:
                return self.TRUMP0 + COLOUR_NAMES.index(t)
            raise ValueError(f"unknown trump colour {t!r}; one of {', '.join(COLOUR_NAMES)}")
        return self.parse_card(t)

    def table(self) -> list[tuple[int, str, str]]:
        """Every action as (id, kind, short text)."""
        return [(a, self.action_kind(a), self.action_name(a)) for a in range(self.n_actions)]


@lru_cache(maxsize=64)  # bounded: a sweep over bid ranges must not grow memory for good
def _layout(deck: str, bids: tuple[int, ...]) -> Layout:
    return Layout(deck, bids)


def layout_for(config: RookConfig) -> Layout:
    """The (shared, immutable) layout of a configuration."""
    return _layout(config.deck, config.bids)


DEFAULT_LAYOUT = layout_for(RookConfig())
# The default action ids as named constants (see the module docstring).
N_CARDS = DEFAULT_LAYOUT.n_cards  # 41
ROOK = DEFAULT_LAYOUT.rook  # 40
PASS = DEFAULT_LAYOUT.PASS  # 41
BID0 = DEFAULT_LAYOUT.BID0  # 42: bid 70
TRUMP0 = DEFAULT_LAYOUT.TRUMP0  # 53: trump red
REDEAL = DEFAULT_LAYOUT.REDEAL  # 57
N_ACTIONS = DEFAULT_LAYOUT.n_actions  # 58

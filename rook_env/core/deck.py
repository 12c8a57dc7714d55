"""The Rook deck every game plays with, and the action ids every game shares (pure Python).

Card ids: ``id = n_ranks * colour + rank_index`` with colours red=0, yellow=1, green=2, black=3
(RULES.md R2, F8, C2.1); the Rook Bird, where the deck has it, is the last id. Counters: each 1
is worth 15, each 14 and 10 is worth 10, each 5 is worth 5, the Rook Bird 20 (R2.2, C2.2).

Every game's action ids start the same way: the cards (play / discard / call a card), then
``PASS``, then the bids ``BID0 ..``, then ``TRUMP0 ..``; what follows is the game's own
(:class:`rook_env.games.partnership.cards.Layout`, :class:`rook_env.games.call_partner.layout.CallPartnerLayout`).
:class:`DeckLayout` holds the part they share. Card sets are ``int`` bitmasks over card ids.
"""

from __future__ import annotations

__all__ = [
    "COLOUR_LETTERS", "COLOUR_NAMES", "N_COLOURS", "RANK_POINTS", "ROOK_NAME", "ROOK_POINTS", "DeckLayout", "bits",
    "rank_power",
]

N_COLOURS = 4
COLOUR_NAMES = ("red", "yellow", "green", "black")
COLOUR_LETTERS = "RYGB"
ROOK_NAME = "Rook"
# Counter value of a rank; the Rook Bird counts 20.
RANK_POINTS = {1: 15, 5: 5, 10: 10, 14: 10}
ROOK_POINTS = 20


def rank_power(rank: int) -> int:
    """Order of a rank within its colour: 2 < ... < 14 < 1 (the 1 is high unless a game says not)."""
    return 15 if rank == 1 else rank


def bits(mask: int) -> list[int]:
    """The set bit positions of ``mask``, ascending."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


class DeckLayout:
    """The cards and the first action ids of one configuration (see the module docstring).

    A game's layout calls :meth:`_build_deck` and :meth:`_build_bids`, then numbers its own
    actions after ``TRUMP0``, sets ``n_actions`` and names its cards (``card_names``).
    """

    deck: str
    ranks: tuple[int, ...]
    card_names: tuple[str, ...]
    n_actions: int

    def _build_deck(self, ranks: tuple[int, ...], rook_bird: bool, points: dict[int, int]) -> None:
        """Cards, colours, ranks, counter values and masks of a deck of ``ranks`` in four colours."""
        self.ranks = ranks
        self.n_ranks = len(ranks)
        self.has_rook = rook_bird
        self.n_cards = N_COLOURS * self.n_ranks + (1 if rook_bird else 0)
        self.rook = self.n_cards - 1 if rook_bird else -1  # -1: no Rook Bird in the deck
        self.rook_bit = 1 << self.rook if rook_bird else 0
        self.all_cards = (1 << self.n_cards) - 1
        self.colour_mask = tuple(((1 << self.n_ranks) - 1) << (c * self.n_ranks) for c in range(N_COLOURS))
        rook_tail = [-1] if rook_bird else []
        self.card_colour = tuple([c for c in range(N_COLOURS) for _ in range(self.n_ranks)] + rook_tail)
        self.card_rank = tuple(list(ranks) * N_COLOURS + ([0] if rook_bird else []))
        plain = N_COLOURS * self.n_ranks
        self.card_points = tuple([points.get(r, 0) for r in self.card_rank[:plain]]
                                 + ([ROOK_POINTS] if rook_bird else []))
        self.counter_mask = sum(1 << c for c, p in enumerate(self.card_points) if p)

    def _build_bids(self, bids: tuple[int, ...], n_trumps: int) -> None:
        """``PASS``, the bids from ``BID0`` and ``n_trumps`` trump actions from ``TRUMP0``."""
        self.bids = bids
        self.n_bids = len(bids)
        self.PASS = self.n_cards
        self.BID0 = self.PASS + 1
        self.TRUMP0 = self.BID0 + self.n_bids
        self.bid_mask = ((1 << self.n_bids) - 1) << self.BID0
        self.trump_mask = ((1 << n_trumps) - 1) << self.TRUMP0

    def _name_cards(self, names: tuple[str, ...]) -> None:
        self.card_names = names
        self._name_to_card = {n.lower(): c for c, n in enumerate(names)}

    def card_id(self, colour: int, rank: int) -> int:
        """Card id of ``rank`` (e.g. 14) in ``colour`` (0..3)."""
        if rank not in self.ranks or not 0 <= colour < N_COLOURS:
            raise ValueError(f"no card of colour {colour} and rank {rank} in the {self.deck} deck")
        return colour * self.n_ranks + self.ranks.index(rank)

    def card_name(self, card: int) -> str:
        """Short text of a card: ``R14``, ``B5``, ``Rook``."""
        return self.card_names[card]

    def parse_card(self, text: str) -> int:
        """Inverse of :meth:`card_name` (case-insensitive)."""
        try:
            return self._name_to_card[text.strip().lower()]
        except KeyError:
            raise ValueError(f"unknown card {text!r}{self._unknown_card_hint()}") from None

    def _unknown_card_hint(self) -> str:
        return f" in the {self.deck} deck; cards look like R14, Y5, Rook"

    def bid_action(self, value: int) -> int:
        if value not in self.bids:
            raise ValueError(f"bid {value} is not one of {self.bids}")
        return self.BID0 + self.bids.index(value)

    def action_kind(self, action: int) -> str:
        """'card', 'pass', 'bid', or the game's kind of a later action (``_own_kind``)."""
        try:
            inside = 0 <= action < self.n_actions and not isinstance(action, (bool, float))
        except TypeError:
            inside = False
        if not inside:
            raise ValueError(f"action {action!r} out of range 0..{self.n_actions - 1}")
        if action < self.n_cards:
            return "card"
        if action == self.PASS:
            return "pass"
        if action < self.TRUMP0:
            return "bid"
        return self._own_kind(action)

    def _own_kind(self, action: int) -> str:  # pragma: no cover - per game
        raise NotImplementedError

    def action_name(self, action: int) -> str:
        """Short text of an action: ``R14``, ``Rook``, ``pass``, ``bid 85``, ``trump green``, ..."""
        kind = self.action_kind(action)
        if kind == "card":
            return self.card_names[action]
        if kind == "bid":
            return f"bid {self.bids[action - self.BID0]}"
        return self._own_name(kind, action)

    def _own_name(self, kind: str, action: int) -> str:
        """The text of an action after the bids (the kind itself unless a game says more)."""
        return kind

    def parse_action(self, text: str) -> int:
        """Inverse of :meth:`action_name` (case-insensitive; ``85`` alone means ``bid 85``)."""
        t = " ".join(text.strip().lower().split())
        if t == "pass":
            return self.PASS
        if t.startswith("bid "):
            t = t[4:]
        if t.isdigit():
            return self.bid_action(int(t))
        own = self._parse_own(t)
        return self.parse_card(t) if own is None else own

    def _parse_own(self, text: str) -> int | None:  # pragma: no cover - per game
        """The game's own action named by ``text`` (normalised), None when it names none."""
        raise NotImplementedError

    def table(self) -> list[tuple[int, str, str]]:
        """Every action as (id, kind, short text)."""
        return [(a, self.action_kind(a), self.action_name(a)) for a in range(self.n_actions)]

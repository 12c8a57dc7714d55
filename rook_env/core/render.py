"""What a table shows, as text and as a scene to draw, for every game.

A game's ``render_text(state)`` is the omniscient table view (every hand and the nest), for
spectators and debugging; ``render_text(state, seat=s)`` shows only what seat ``s``
may know (its own hand, the nest only if it is the bidder), for human play and logs.

One text view and one pair of drawn scenes serve every game; a game supplies only what differs
(a :class:`TableParts` subclass: its header line, how a seat is named, its contract lines, its totals, and
the extra fields of its scenes), in its package (:mod:`rook_env.games.partnership.render`,
:mod:`rook_env.games.call_partner.render`). The registry names each game's parts, so a caller holding any
state or environment finds them with :func:`table_parts`.

- :func:`table_text` -- the text view of a state, whole or for one seat;
- :func:`spectator_scene` -- the drawn spectator view (every card face up) as a
  :class:`~rook_env.core.drawing.Scene`;
- :func:`seat_scene` -- what one seat may know, built from its observation vector alone (through
  the game's ``decode``), so it cannot show a hidden card.

A new game's views are one subclass and one instance, named in its registration
(``render_scene=MY_GAME``)::

    class MyGameParts(TableParts):
        phase_names = PHASE_NAMES               # the game's phase names by id
        decode = staticmethod(decode)           # its observation decoder
        config_class = MyGameConfig             # its default rules

        def table_title(self, n): return f"My game ({n} players)"
        def header(self, state): return f"phase: {PHASE_NAMES[state.phase]}   dealer: P{state.dealer}"
        def totals(self, state): return ["scores: " + "  ".join(f"P{s} {v}" for s, v in enumerate(state.scores))]
        def seat_extra(self, view, seat, config): return {"counters": ..., "tricks_won": ..., "scores": ...}

    MY_GAME = MyGameParts()

The rest (``seat_label``, ``contract_lines``, ``spectator_extra``, ``nest_label``,
``snapshot_extra``, ``outcome``) has defaults to override where the game shows more.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from .deck import COLOUR_LETTERS, COLOUR_NAMES, ROOK_NAME, DeckLayout as Layout, bits, rank_power
from .registry import GameSpec, game_names, get_game
from .drawing import Scene, draw_scene

__all__ = [
    "TableParts", "auction_text", "bid_word", "contract_text", "draw_seat_view",
    "draw_table", "game_of", "hand_text", "seat_scene", "sorted_cards", "sorted_hand",
    "spectator_scene", "table_parts", "table_text",
]


# ------------------------------------------------------------------------------------ cards
def sorted_hand(L: Layout, mask: int) -> list[int]:
    """Cards of a hand sorted by colour, then rank (high first); the Rook Bird last."""
    # call-your-partner's layout has no rank_order: its 1s are always high
    order = getattr(L, "rank_order", None) or [rank_power(r) for r in L.card_rank]
    return sorted(bits(mask), key=lambda c: (L.card_colour[c] if c != L.rook else 9, -order[c]))


def sorted_cards(L: Layout, cards: Sequence[int]) -> list[int]:
    """A list of card ids sorted as :func:`sorted_hand` sorts a hand."""
    return sorted_hand(L, sum(1 << c for c in cards))


def hand_text(L: Layout, mask: int) -> str:
    """A hand grouped by colour: ``R: 14 10 5 | Y: 12 | ... | Rook`` (standard names: ``H: A 10 5 | ... | Joker``)."""
    rook_name = getattr(L, "rook_name", ROOK_NAME)
    letters = getattr(L, "colour_letters", COLOUR_LETTERS)
    rank_text = getattr(L, "rank_text", str)
    groups: dict[str, list[str]] = {}
    for c in sorted_hand(L, mask):
        if c == L.rook:
            groups.setdefault(rook_name, [])
        else:
            groups.setdefault(letters[L.card_colour[c]], []).append(rank_text(L.card_rank[c]))
    return " | ".join(k if k == rook_name else f"{k}: {' '.join(v)}" for k, v in groups.items()) or "-"


def auction_text(state: Any) -> str:
    """The auction in order: ``P1 bid 70, P2 pass, ...`` (``-`` before the first call)."""
    L = state.L
    return ", ".join(f"P{s} {L.action_name(a)}" for s, a in state.bid_history) or "-"


def contract_text(result: dict[str, Any]) -> str:
    """The contract of a finished hand: ``green``, or the named call (``green low``, ``no trump high``);
    call-your-partner: ``green, Rook high``."""
    if result.get("call"):
        return result["call"]
    colour = COLOUR_NAMES[result["trump"]] if result["trump"] >= 0 else "no trump"
    return f"{colour}, Rook {result['rook']}" if result.get("rook") else colour


def bid_word(L: Layout, action: int) -> str:
    """An auction action as one word: the bid's value (``"85"``), ``"pass"`` or ``"redeal"``."""
    kind = L.action_kind(action)
    return str(L.bids[action - L.BID0]) if kind == "bid" else kind


# -------------------------------------------------------------------------- a game's parts
class TableParts:
    """What one game shows differently; the rest of the text and the scenes is common. A game
    subclasses it and registers an instance as its ``render_scene`` part (:mod:`rook_env.games`).

    ``phase_names``: the game's phase names by id. ``header(state)``: the first text line.
    ``seat_label(s)``: a seat in the text (``"P0 (team 0)"``). ``contract_lines(state, seat)``:
    the lines between the nest and the tricks (announcements, trump, partners), for the
    spectator (``seat`` None) or one seat. ``totals(state)``: the closing lines (counters,
    scores). ``spectator_extra(state)`` / ``seat_extra(view, seat, config)``: the game's own
    fields of the spectator's and a seat's :class:`Scene` (a seat's figures among them).
    ``decode(vec, config)``: the game's observation decoder (a view with ``layout``, ``phase``,
    ``hand``, ``bids``, ``passes``, ...); ``config_class()``: the config used when none is given.
    ``nest_label(view, config, bidder)``: how a seat that did not win the auction sees the nest
    after the auction. ``snapshot_extra(state)`` / ``outcome(result)``: a replay's own entries
    of the table and how a finished hand went (in :meth:`hand_summary`).
    """

    phase_names: Sequence[str] = ()
    fixed_teams = False  # partners for the whole game (seats 0+2 and 1+3), not chosen hand by hand

    def table_title(self, n: int) -> str:
        """The table's name in titles (``n`` seats)."""
        raise NotImplementedError

    def header(self, state: Any) -> str:
        raise NotImplementedError

    def seat_label(self, s: int) -> str:
        return f"P{s}"

    def contract_lines(self, state: Any, seat: int | None) -> list[str]:
        return []

    def totals(self, state: Any) -> list[str]:
        raise NotImplementedError

    def spectator_extra(self, state: Any) -> dict[str, Any]:
        return {}

    def seat_extra(self, view: Any, seat: int, config: Any) -> dict[str, Any]:
        raise NotImplementedError

    # The game's observation decoder, ``decode(vec, config) -> view``, and its rules config class
    # (``config_class()``: the default rules, when a seat's view is drawn without a config).
    decode: Callable[[Any, Any], Any]
    config_class: Callable[[], Any]

    def nest_label(self, view: Any, config: Any, bidder: int | None) -> str:
        return f"nest (with P{bidder})"

    def snapshot_extra(self, state: Any) -> dict[str, Any]:
        """The game's own entries of a replay's snapshot of the table (:func:`rook_env.evaluation.replay.snapshot`)."""
        return {}

    def hand_summary(self, result: dict[str, Any]) -> str:
        """One line on a finished hand (``result``: the hand result, as a replay stores it)."""
        scores = " / ".join(f"{v:+d}" for v in result["hand_scores"])
        return (f"P{result['bidder']} bid {result['bid']} in {contract_text(result)}, {self.outcome(result)}; "
                f"hand scores {scores}")

    def outcome(self, result: dict[str, Any]) -> str:
        """How a finished hand went, in :meth:`hand_summary`: ``"made"`` or ``"set"``, and the game's own."""
        return "made" if result["made"] else "set"

    # The same three views for every game, through the game's parts.
    def text(self, state: Any, seat: int | None = None) -> str:
        """The table as text: every seat's view (``seat`` None), or only what ``seat`` may know."""
        return table_text(state, self, seat)

    def spectator(self, state: Any) -> Scene:
        return spectator_scene(state, self)

    def seat_view(self, observation: Any, seat: int, config: Any = None, to_act: int | None = None) -> Scene:
        return seat_scene(observation, seat, self, config, to_act)


def game_of(obj: Any) -> GameSpec:
    """The registry's spec (:mod:`rook_env.games`) of the game of ``obj``: a rules state, an environment
    (wrapped or not) or a game's name (None: the default game)."""
    if obj is None or isinstance(obj, str):
        return get_game(obj)
    state = getattr(getattr(obj, "unwrapped", obj), "game", obj)  # an environment's state
    for name in game_names():
        spec = get_game(name)
        if isinstance(state, spec.load("state")):
            return spec
    raise TypeError(f"{type(obj).__name__} is no registered game's state or environment "
                    f"(games: {', '.join(game_names())})")


def table_parts(game: Any = None) -> TableParts:
    """The :class:`TableParts` of a game (its ``render_scene`` part in the registry): its name
    (``"call_partner"``; None: the default game), or a rules state or an environment of it."""
    return game_of(game).load("render_scene")


# ------------------------------------------------------------------------------------ text
def table_text(state: Any, parts: TableParts, seat: int | None = None) -> str:
    """The table as text (module docstring): every seat's view, or only what ``seat`` may know."""
    L, n = state.L, len(state.hands)
    phase = parts.phase_names[state.phase]
    lines = [parts.header(state)]
    for s in range(n):
        if seat is None or s == seat:
            lines.append(f"{parts.seat_label(s)} hand: {hand_text(L, state.hands[s])}")
    lines.append(f"auction: {auction_text(state)}")
    if state.bidder >= 0:
        lines.append(f"{'high bid' if phase == 'bid' else 'contract'}: P{state.bidder} {L.bids[state.high_bid]}")
    if phase != "bid" and L.nest_size and (seat is None or seat == state.bidder):
        lines.append(f"nest (as dealt): {hand_text(L, state.nest)}   discards: {hand_text(L, state.discards)}")
    lines += parts.contract_lines(state, seat)
    if state.tricks:
        lead, cards = state.tricks[-1]
        shown = " ".join(f"P{(lead + i) % n}:{L.card_name(c)}" for i, c in enumerate(cards))
        won = (lead + state.trick_winner_index(cards)) % n
        lines.append(f"last trick ({len(state.tricks)}/{L.n_tricks}): {shown}  -> won by P{won}")
    if state.leader >= 0 and phase == "play":
        trick = " ".join(f"P{(state.leader + i) % n}:{L.card_name(c)}" for i, c in enumerate(state.trick))
        lines.append(f"trick {len(state.tricks) + 1} led by P{state.leader}: {trick or '-'}")
    lines += parts.totals(state)
    return "\n".join(lines)


# ---------------------------------------------------------------------------------- scenes
def spectator_scene(state: Any, parts: TableParts) -> Scene:
    """The spectator's scene: every hand, the nest as dealt and the discards face up, plus the
    game's own fields (``parts.spectator_extra``)."""
    L, n = state.L, len(state.hands)
    phase = parts.phase_names[state.phase]
    last = last_winner = None
    if state.tricks:
        lead, cards = state.tricks[-1]
        last = [((lead + i) % n, c) for i, c in enumerate(cards)]
        last_winner = (lead + state.trick_winner_index(cards)) % n
    return Scene(
        layout=L,
        n_seats=n,
        bottom=0,
        title="spectator view",
        phase=phase,
        to_act=None if phase == "over" else state.current,
        dealer=state.dealer,
        hands=[sorted_hand(L, h) for h in state.hands],
        auction=[(s, bid_word(L, a)) for s, a in state.bid_history],
        bidder=state.bidder if state.bidder >= 0 else None,
        contract=L.bids[state.high_bid] if state.high_bid >= 0 else None,
        trump=state.trump if state.trump >= 0 else None,
        trick=[((state.leader + i) % n, c) for i, c in enumerate(state.trick)] if phase == "play" else [],
        last_trick=last,
        last_winner=last_winner,
        nest=sorted_hand(L, state.nest),
        nest_label="nest (as dealt)" if phase != "bid" else "nest",
        discards=sorted_hand(L, state.discards) if phase != "bid" else None,
        nest_has_counters=state.nest_has_counters,
        counters=list(state.points),
        tricks_won=list(state.tricks_won),
        scores=list(state.scores),
        tricks_left=L.n_tricks - len(state.tricks),
        **parts.spectator_extra(state),
    )


def seat_scene(observation: Any, seat: int, parts: TableParts, config: Any = None,
               to_act: int | None = None) -> Scene:
    """Seat ``seat``'s scene, from its observation vector (or the PettingZoo dict) alone, so it
    cannot show what the seat may not know: its own hand face up, the others as backs, the nest
    and discards only for the bidder. ``to_act``: the seat to act (public at a table; the
    observation does not hold it)."""
    vec = observation["observation"] if isinstance(observation, dict) else observation
    config = config if config is not None else parts.config_class()
    view = parts.decode(vec, config)
    L = view.layout
    n = getattr(view, "players", 4)  # a view without a seat count is of the four-seat partnership table

    def ab(rel: int) -> int:
        return (seat + rel) % n

    # Other hands: the cards dealt minus the cards each seat was seen to play. The bidder's count
    # while it holds the nest is not in the observation (its discards are hidden), so it shows the
    # hand size and the nest as "with the bidder" until the discard is done.
    played_by = [0] * n
    for rel in view.played.values():
        played_by[rel] += 1
    hands: list[list[int] | int] = [
        sorted_cards(L, view.hand) if (s - seat) % n == 0 else L.hand_size - played_by[(s - seat) % n]
        for s in range(n)
    ]
    bidder = None if view.bidder is None else ab(view.bidder)
    # The auction in order is not in the observation; per seat we know each bid and each pass.
    auction = [(ab(rel), str(value)) for rel, value in view.bids]
    auction += [(ab(rel), "pass") for rel, _high in view.passes]
    nest: list[int] | int | None
    if view.phase == "bid":
        nest, discards, label = L.nest_size, None, "nest"
    elif bidder == seat:
        nest, discards, label = sorted_cards(L, view.nest), sorted_cards(L, view.discards), "nest (as dealt)"
    else:
        nest, discards, label = L.nest_size, None, parts.nest_label(view, config, bidder)
    return Scene(
        layout=L,
        n_seats=n,
        bottom=seat,
        title=f"P{seat}'s view",
        phase=view.phase,
        to_act=to_act,
        dealer=ab(view.dealer),
        hands=hands,
        auction=auction,
        bidder=bidder,
        contract=view.contract,
        trump=view.trump,
        trick=[(ab(rel), c) for rel, c in view.trick],
        last_trick=None,
        last_winner=None,
        nest=nest,
        nest_label=label,
        discards=discards,
        nest_has_counters=view.nest_has_counters,
        tricks_left=view.tricks_left,
        **parts.seat_extra(view, seat, config),
    )


def draw_table(state: Any) -> Any:
    """The spectator view of ``state`` (a state of any registered game) as an (H, W, 3) ``uint8``
    array: what ``env.render()`` returns with ``render_mode="rgb_array"``."""
    return draw_scene(table_parts(state).spectator(state))


def draw_seat_view(env: Any, agent: str) -> Any:
    """What ``agent`` (e.g. ``"player_2"``) may know at ``env``'s table, as an (H, W, 3) ``uint8`` array.

    Drawn from the seat's observation only (plus who is to act, which every seat sees)."""
    raw = env.unwrapped
    seat = raw.possible_agents.index(agent)
    game = raw.game
    if game is None:
        raise RuntimeError("draw_seat_view() needs reset() first")
    to_act = None if game.is_over else game.current
    vec = raw.observe(agent)["observation"]
    return draw_scene(table_parts(game).seat_view(vec, seat, raw.config, to_act))

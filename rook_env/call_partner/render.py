"""Text rendering of a call-your-partner table.

``render_text(state)`` is the omniscient view (every hand, the nest, the partners) for
spectators and debugging. ``render_text(state, seat=s)`` shows only what seat ``s`` may know:
its own hand, the nest only if it is the bidder, and the partners only as far as it knows them
(RULES.md C11), for human play and logs.

The drawn table (``render_mode="rgb_array"``, :mod:`rook_env.render_image`) uses the two scenes
built here: :func:`scene_from_state` (the spectator: every card, the secret partner marked as
such) and :func:`scene_from_observation` (one seat, from its observation vector alone).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..cards import COLOUR_NAMES
from ..render import hand_text, sorted_hand
from .config import CallPartnerConfig
from .layout import ROOK_CHOICES
from .observation import decode, known_partners
from .rules import BID, OVER, PHASE_NAMES, PLAY, CallPartnerState

if TYPE_CHECKING:  # the drawing module is imported when a table is drawn, not with the environment
    from ..render_image import Scene


def render_text(state: CallPartnerState, seat: int | None = None) -> str:
    L, n = state.L, state.n
    lines = [
        f"call-your-partner Rook, {n} players   phase: {PHASE_NAMES[state.phase]}   dealer: P{state.dealer}"
        + ("" if state.phase == OVER else f"   to act: P{state.current}")
    ]
    for s in range(n):
        if seat is None or s == seat:
            lines.append(f"P{s} hand: {hand_text(L, state.hands[s])}")
    auction = ", ".join(f"P{s} {L.action_name(a)}" for s, a in state.bid_history) or "-"
    lines.append(f"auction: {auction}")
    if state.bidder >= 0:
        lines.append(f"{'high bid' if state.phase == BID else 'contract'}: P{state.bidder} {L.bids[state.high_bid]}")
    if state.phase != BID and (seat is None or seat == state.bidder):
        lines.append(f"nest (as dealt): {hand_text(L, state.nest)}   discards: {hand_text(L, state.discards)}")
    if state.discards.bit_count() == L.nest_size:
        lines.append(f"announced: the nest {'holds' if state.nest_has_counters else 'holds no'} counters")
    if state.trump >= 0:
        rook = "" if state.rook_high < 0 else f"   Rook {'high' if state.rook_high else 'low'}"
        lines.append(f"trump: {COLOUR_NAMES[state.trump]}{rook}")
    if state.called:
        called = " ".join(L.card_name(c) for c in state.called)
        if seat is None:
            partners = " ".join(f"P{s}" for s in state.partners) or "none (the bidder plays alone)"
        else:
            partners = " ".join(f"P{s}" for s in known_partners(state, seat)) or "unknown"
        lines.append(f"called: {called}   partners: {partners}")
    if state.tricks:
        lead, cards = state.tricks[-1]
        shown = " ".join(f"P{(lead + i) % n}:{L.card_name(c)}" for i, c in enumerate(cards))
        won = (lead + state.trick_winner_index(cards)) % n
        lines.append(f"last trick ({len(state.tricks)}/{L.n_tricks}): {shown}  -> won by P{won}")
    if state.leader >= 0 and state.phase == PLAY:
        trick = " ".join(f"P{(state.leader + i) % n}:{L.card_name(c)}" for i, c in enumerate(state.trick))
        lines.append(f"trick {len(state.tricks) + 1} led by P{state.leader}: {trick or '-'}")
    lines.append("points: " + "  ".join(f"P{s} {p}" for s, p in enumerate(state.points)))
    lines.append("scores: " + "  ".join(f"P{s} {p}" for s, p in enumerate(state.scores)))
    return "\n".join(lines)


# ------------------------------------------------------------------------------ the drawn table
# Scenes for rook_env.render_image (render_mode="rgb_array"): the same drawing as the partnership
# game, with n seats, per-seat figures and a side panel. Importing needs no Pillow; drawing does.
def nest_announced(state: CallPartnerState) -> bool:
    """Whether the table has been told if the new nest holds counters (the discard is complete)."""
    return state.discards.bit_count() == state.L.nest_size


def _announced_in_phase(phase: str, nest_discard: str) -> bool:
    """The same from a seat's view: the phase tells whether the discard is done (RULES.md C5.2;
    with ``nest_discard="no_counters_unless_forced"`` trump is named before the discard)."""
    before = ("bid", "discard", "trump") if nest_discard == "no_counters_unless_forced" else ("bid", "discard")
    return phase not in before


def spectator_partners(state: CallPartnerState) -> tuple[list[int], list[int], str | None]:
    """The bidder's partners as a spectator sees them: (revealed by a played called card, still
    secret, one line of text such as ``"P3 (secret)"`` or ``"none: the bidder plays alone"``;
    None before the call)."""
    holders = list(state.called_holders()) if state.called else []
    revealed = [s for s in holders if any(state.played >> c & 1 and state.played_by[c] == s for c in state.called)]
    secret = [s for s in holders if s not in revealed]
    if not state.called:
        text = None
    elif len(state.called) == state.config.n_called and not holders:
        text = "none: the bidder plays alone"
    else:
        text = ", ".join(f"P{s}" + ("" if s in revealed else " (secret)") for s in holders) or "-"
    return revealed, secret, text


def scene_from_state(state: CallPartnerState) -> "Scene":
    """The spectator's scene: every hand, the nest as dealt and the discards face up; partners
    revealed by a played called card are marked ``partner``, the others ``secret partner``
    (what no seat but the holder knows yet)."""
    from ..render_image import Scene, _bid_word

    L, n = state.L, state.n
    last = last_winner = None
    if state.tricks:
        lead, cards = state.tricks[-1]
        last = [((lead + i) % n, c) for i, c in enumerate(cards)]
        last_winner = (lead + state.trick_winner_index(cards)) % n
    revealed, secret, partners_text = spectator_partners(state)
    notes = []
    if state.hand_result is not None:
        res = state.hand_result
        verdict = "made" if res["made"] else "set"
        side = "+".join(f"P{s}" for s in res["side"])
        notes.append(f"last hand: P{res['bidder']} bid {res['bid']}, {verdict} by {side} with {res['side_points']}")
    over = state.phase == OVER
    return Scene(
        layout=L,
        n_seats=n,
        bottom=0,
        title="spectator view",
        phase=PHASE_NAMES[state.phase],
        to_act=None if over else state.current,
        dealer=state.dealer,
        hands=[sorted_hand(L, h) for h in state.hands],
        auction=[(s, _bid_word(L, a)) for s, a in state.bid_history],
        bidder=state.bidder if state.bidder >= 0 else None,
        contract=L.bids[state.high_bid] if state.high_bid >= 0 else None,
        trump=state.trump if state.trump >= 0 else None,
        trick=[((state.leader + i) % n, c) for i, c in enumerate(state.trick)] if state.phase == PLAY else [],
        last_trick=last,
        last_winner=last_winner,
        nest=sorted_hand(L, state.nest),
        nest_label="nest (as dealt)" if state.phase != BID else "nest",
        discards=sorted_hand(L, state.discards) if state.phase != BID else None,
        nest_has_counters=state.nest_has_counters,
        counters=list(state.points),
        tricks_won=list(state.tricks_won),
        scores=list(state.scores),
        tricks_left=L.n_tricks - len(state.tricks),
        notes=notes,
        teams=False,
        rook=None if state.rook_high < 0 else ROOK_CHOICES[1 - state.rook_high],
        called=list(state.called),
        partners=revealed,
        secret_partners=secret,
        partners_text=partners_text,
        nest_announced=nest_announced(state),
    )


def scene_from_observation(observation: Any, seat: int, config: CallPartnerConfig | None = None,
                           to_act: int | None = None) -> "Scene":
    """Seat ``seat``'s scene, from its observation vector (or the PettingZoo dict) alone, so it
    cannot show what the seat may not know: its own hand face up, the others as backs, the nest
    only for the bidder, and as partners only the seats it knows (itself when it holds a called
    card; any seat that has played one). ``to_act``: the seat to act (public at a table)."""
    from ..render_image import Scene, _sorted

    vec = observation["observation"] if isinstance(observation, dict) else observation
    config = config or CallPartnerConfig()
    view = decode(vec, config)
    L, n = view.layout, view.players

    def ab(rel: int) -> int:
        return (seat + rel) % n

    # Other hands: the cards dealt minus the cards each seat was seen to play. The bidder's count
    # while it holds the nest is not in the observation (its discards are hidden), so it shows the
    # hand size and the nest as "with the bidder" until the discard is done.
    played_by = [0] * n
    for rel in view.played.values():
        played_by[rel] += 1
    hands: list[list[int] | int] = [
        _sorted(L, view.hand) if (s - seat) % n == 0 else L.hand_size - played_by[(s - seat) % n]
        for s in range(n)
    ]
    bidder = None if view.bidder is None else ab(view.bidder)
    # The auction in order is not in the observation; per seat we know each bid and each pass.
    auction = [(ab(rel), str(value)) for rel, value in view.bids]
    auction += [(ab(rel), "pass") for rel, _high in view.passes]
    announced = _announced_in_phase(view.phase, config.nest_discard)
    if view.phase == "bid":
        nest: list[int] | int | None = L.nest_size
        label, discards = "nest", None
    elif bidder == seat:
        nest, discards, label = _sorted(L, view.nest), _sorted(L, view.discards), "nest (as dealt)"
    else:
        nest, discards = L.nest_size, None
        label = "new nest (face down)" if announced else f"nest (with P{bidder})"
    known = sorted(ab(rel) for rel in view.known_partners)
    n_called = config.n_called
    if not view.called:
        partners_text = None
    elif known:
        partners_text = ", ".join(f"P{s}" + (" (me)" if s == seat else "") for s in known)
        if len(known) < n_called and len(view.called) == n_called:
            partners_text += ", and unknown"
    else:
        partners_text = "unknown" if bidder != seat else "unknown (not yet played)"
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
        counters=[view.points[(s - seat) % n] for s in range(n)],
        tricks_won=[view.tricks_won[(s - seat) % n] for s in range(n)],
        scores=[view.scores[(s - seat) % n] for s in range(n)],
        tricks_left=view.tricks_left,
        teams=False,
        rook=view.rook,
        called=list(view.called),
        partners=known,
        partners_text=partners_text,
        nest_announced=announced,
    )

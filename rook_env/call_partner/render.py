"""Text rendering of a call-your-partner table.

``render_text(state)`` is the omniscient view (every hand, the nest, the partners) for
spectators and debugging. ``render_text(state, seat=s)`` shows only what seat ``s`` may know:
its own hand, the nest only if it is the bidder, and the partners only as far as it knows them
(RULES.md C11), for human play and logs.
"""

from __future__ import annotations

from ..cards import COLOUR_NAMES
from ..render import hand_text
from .observation import known_partners
from .rules import BID, OVER, PHASE_NAMES, PLAY, CallPartnerState


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

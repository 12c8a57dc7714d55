"""Text rendering of a table: hands, auction, trump, trick, counters, scores.

``render_text(state)`` is the omniscient table view (every hand and the nest), for
spectators and debugging. ``render_text(state, seat=s)`` shows only what seat ``s``
may know (its own hand, the nest only if it is the bidder), for human play and logs.
"""

from __future__ import annotations

from .cards import COLOUR_LETTERS, N_SEATS, ROOK_NAME, Layout, bits, rank_power
from .rules import BID, CIRCUS, PHASE_NAMES, PLAY, RookState


def sorted_hand(L: Layout, mask: int) -> list[int]:
    """Cards of a hand sorted by colour, then rank (high first); the Rook Bird last."""
    # call-your-partner's layout has no rank_order: its 1s are always high
    order = getattr(L, "rank_order", None) or [rank_power(r) for r in L.card_rank]
    return sorted(bits(mask), key=lambda c: (L.card_colour[c] if c != L.rook else 9, -order[c]))


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


def auction_text(state: RookState) -> str:
    L = state.L
    return ", ".join(f"P{s} {L.action_name(a)}" for s, a in state.bid_history) or "-"


def render_text(state: RookState, seat: int | None = None) -> str:
    L = state.L
    lines = [
        f"phase: {PHASE_NAMES[state.phase]}   dealer: P{state.dealer}   to act: "
        + (f"P{state.current}" if PHASE_NAMES[state.phase] != "over" else "-")
    ]
    for s in range(N_SEATS):
        if seat is None or s == seat:
            lines.append(f"P{s} (team {s & 1}) hand: {hand_text(L, state.hands[s])}")
    lines.append(f"auction: {auction_text(state)}")
    if state.bidder >= 0:
        bid = L.bids[state.high_bid]
        lines.append(f"{'high bid' if state.phase == BID else 'contract'}: P{state.bidder} {bid}")
    if state.phase != BID and L.nest_size and (seat is None or seat == state.bidder):
        lines.append(f"nest (as dealt): {hand_text(L, state.nest)}   discards: {hand_text(L, state.discards)}")
    if state.nest_has_counters:
        lines.append("announced: the nest holds counters")
    if state.circus:
        lines.append(f"circus: P{(state.bidder + 1) % N_SEATS} names trump and leads")
    if state.call >= 0:
        lines.append(f"trump: {L.contract_name(state.call)}")
    if state.circus and state.passing:
        # a seat sees only the card it passed and, once delivered, the card it received
        delivered = min(state.passing) >= 0
        for s in range(N_SEATS):
            card = state.passing[s]
            if card < 0:
                continue
            if seat is None:
                lines.append(f"circus pass: P{s} -> P{(s + 1) % N_SEATS}: {L.card_name(card)}")
            elif seat == s:
                lines.append(f"circus pass: you -> P{(s + 1) % N_SEATS}: {L.card_name(card)}")
            elif delivered and seat == (s + 1) % N_SEATS:
                lines.append(f"circus pass: P{s} -> you: {L.card_name(card)}")
    if state.phase == CIRCUS:
        lines.append(f"circus passing: P{state.current} chooses a card")
    if state.tricks:
        lead, cards = state.tricks[-1]
        shown = " ".join(f"P{(lead + i) % N_SEATS}:{L.card_name(c)}" for i, c in enumerate(cards))
        won = (lead + state.trick_winner_index(cards)) % N_SEATS
        lines.append(f"last trick ({len(state.tricks)}/{L.n_tricks}): {shown}  -> won by P{won}")
    if state.leader >= 0 and state.phase == PLAY:
        trick = " ".join(f"P{(state.leader + i) % N_SEATS}:{L.card_name(c)}" for i, c in enumerate(state.trick))
        lines.append(f"trick {len(state.tricks) + 1} led by P{state.leader}: {trick or '-'}")
    lines.append(
        f"counters: team0 {state.points[0]}  team1 {state.points[1]}   tricks: {state.tricks_won[0]}-{state.tricks_won[1]}"
    )
    lines.append(f"scores: team0 {state.scores[0]}  team1 {state.scores[1]}")
    return "\n".join(lines)

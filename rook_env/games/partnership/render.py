"""The partnership game's parts of the table views (:class:`rook_env.core.render.TableParts`).

``render_text(state)`` is the omniscient table view (every hand and the nest), for spectators and
debugging; ``render_text(state, seat=s)`` shows only what seat ``s`` may know (its own hand, the nest
only if it is the bidder), for human play and logs.
"""

from __future__ import annotations

from typing import Any

from rook_env.core.render import TableParts

from .cards import N_SEATS
from .config import RookConfig
from .observation import decode
from .rules import CIRCUS, PHASE_NAMES, RookState

__all__ = ["PARTNERSHIP", "PartnershipParts", "render_text"]


class PartnershipParts(TableParts):
    """The partnership game: four seats in two teams, figures per team."""

    phase_names = PHASE_NAMES
    fixed_teams = True

    def table_title(self, n: int) -> str:
        return "Rook"

    def seat_label(self, s: int) -> str:
        return f"P{s} (team {s & 1})"

    def header(self, state: RookState) -> str:
        return (f"phase: {PHASE_NAMES[state.phase]}   dealer: P{state.dealer}   to act: "
                + (f"P{state.current}" if PHASE_NAMES[state.phase] != "over" else "-"))

    def contract_lines(self, state: RookState, seat: int | None) -> list[str]:
        L = state.L
        lines = []
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
        return lines

    def totals(self, state: RookState) -> list[str]:
        return [
            f"counters: team0 {state.points[0]}  team1 {state.points[1]}   "
            f"tricks: {state.tricks_won[0]}-{state.tricks_won[1]}",
            f"scores: team0 {state.scores[0]}  team1 {state.scores[1]}",
        ]

    def spectator_extra(self, state: RookState) -> dict[str, Any]:
        notes = []
        if state.hand_result is not None:
            res = state.hand_result
            verdict = "made" if res["made"] else "set"
            notes.append(f"last hand: P{res['bidder']} bid {res['bid']}, {verdict}; "
                         f"hand scores {res['hand_scores'][0]:+d} / {res['hand_scores'][1]:+d}")
        return {"notes": notes, "call": state.L.contract_name(state.call) if state.call >= 0 else None}

    def seat_extra(self, view: Any, seat: int, config: Any) -> dict[str, Any]:
        def per_team(pair: tuple[int, int]) -> list[int]:  # the observation's order is mine, theirs
            return [pair[0], pair[1]] if seat & 1 == 0 else [pair[1], pair[0]]

        return {"call": view.call, "counters": per_team(view.counters), "tricks_won": per_team(view.tricks_won),
                "scores": per_team(view.scores)}

    def snapshot_extra(self, state: RookState) -> dict[str, Any]:
        # a no-trump call has no colour: the call is written out
        return {"trump": state.L.contract_name(state.call)} if state.trump < 0 and state.call >= 0 else {}

    decode = staticmethod(decode)
    config_class = RookConfig


PARTNERSHIP = PartnershipParts()
render_text = PARTNERSHIP.text  # the partnership table as text (module docstring)

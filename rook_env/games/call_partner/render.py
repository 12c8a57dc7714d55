"""Call-your-partner's parts of the table views (:class:`rook_env.core.render.TableParts`).

``render_text(state)`` is the omniscient view (every hand, the nest, the partners) for
spectators and debugging. ``render_text(state, seat=s)`` shows only what seat ``s`` may know:
its own hand, the nest only if it is the bidder, and the partners only as far as it knows them
(RULES.md C11), for human play and logs.

The drawn table (``render_mode="rgb_array"``, :mod:`rook_env.core.drawing`) uses the common scenes
of :mod:`rook_env.core.render` with this game's fields (:data:`CALL_PARTNER`): ``CALL_PARTNER.spectator(state)``
(every card, the secret partner marked as such) and ``CALL_PARTNER.seat_view(observation, seat)`` (one
seat, from its observation vector alone): n seats, per-seat figures and a side panel instead of teams.
"""

from __future__ import annotations

from typing import Any

from rook_env.games.partnership.cards import COLOUR_NAMES
from rook_env.core.render import TableParts
from .config import CallPartnerConfig
from .layout import ROOK_CHOICES
from .observation import decode, known_partners
from .rules import OVER, PHASE_NAMES, CallPartnerState

__all__ = ["CALL_PARTNER", "nest_announced", "render_text", "spectator_partners"]


# --------------------------------------------------------- what a seat and a spectator know
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


class CallPartnerParts(TableParts):
    """Call-your-partner: n seats without fixed teams, figures per seat, the partners as far as known."""

    phase_names = PHASE_NAMES

    def table_title(self, n: int) -> str:
        return f"Call-your-partner Rook ({n} players)"

    def header(self, state: CallPartnerState) -> str:
        return (f"call-your-partner Rook, {state.n} players   phase: {PHASE_NAMES[state.phase]}   "
                f"dealer: P{state.dealer}"
                + ("" if state.phase == OVER else f"   to act: P{state.current}"))

    def contract_lines(self, state: CallPartnerState, seat: int | None) -> list[str]:
        L = state.L
        lines = []
        if nest_announced(state):
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
        return lines

    def totals(self, state: CallPartnerState) -> list[str]:
        return ["points: " + "  ".join(f"P{s} {p}" for s, p in enumerate(state.points)),
                "scores: " + "  ".join(f"P{s} {p}" for s, p in enumerate(state.scores))]

    def spectator_extra(self, state: CallPartnerState) -> dict[str, Any]:
        """Partners revealed by a played called card are marked ``partner``, the others ``secret
        partner`` (what no seat but the holder knows yet)."""
        revealed, secret, partners_text = spectator_partners(state)
        notes = []
        if state.hand_result is not None:
            res = state.hand_result
            verdict = "made" if res["made"] else "set"
            side = "+".join(f"P{s}" for s in res["side"])
            notes.append(f"last hand: P{res['bidder']} bid {res['bid']}, {verdict} by {side} with {res['side_points']}")
        return {
            "notes": notes, "teams": False, "rook": None if state.rook_high < 0 else ROOK_CHOICES[1 - state.rook_high],
            "called": list(state.called), "partners": revealed, "secret_partners": secret,
            "partners_text": partners_text, "nest_announced": nest_announced(state),
        }

    def seat_extra(self, view: Any, seat: int, config: CallPartnerConfig) -> dict[str, Any]:
        """As partners only the seats ``seat`` knows (itself when it holds a called card; any seat
        that has played one); figures per seat."""
        n = view.players
        known = sorted((seat + rel) % n for rel in view.known_partners)
        bidder = None if view.bidder is None else (seat + view.bidder) % n
        if not view.called:
            partners_text = None
        elif known:
            partners_text = ", ".join(f"P{s}" + (" (me)" if s == seat else "") for s in known)
            if len(known) < config.n_called and len(view.called) == config.n_called:
                partners_text += ", and unknown"
        else:
            partners_text = "unknown" if bidder != seat else "unknown (not yet played)"
        return {
            "counters": [view.points[(s - seat) % n] for s in range(n)],
            "tricks_won": [view.tricks_won[(s - seat) % n] for s in range(n)],
            "scores": [view.scores[(s - seat) % n] for s in range(n)],
            "teams": False, "rook": view.rook, "called": list(view.called), "partners": known,
            "partners_text": partners_text, "nest_announced": _announced_in_phase(view.phase, config.nest_discard),
        }

    def nest_label(self, view: Any, config: CallPartnerConfig, bidder: int | None) -> str:
        """A seat other than the bidder sees the new nest face down once the discard is announced."""
        announced = _announced_in_phase(view.phase, config.nest_discard)
        return "new nest (face down)" if announced else f"nest (with P{bidder})"

    def snapshot_extra(self, state: CallPartnerState) -> dict[str, Any]:
        revealed, secret, text = spectator_partners(state)
        return {"rook": None if state.rook_high < 0 else ROOK_CHOICES[1 - state.rook_high],
                "called": [state.L.card_name(c) for c in state.called], "partners": revealed,
                "secret_partners": secret, "partners_text": text, "nest_announced": nest_announced(state)}

    def outcome(self, result: dict[str, Any]) -> str:
        called = " ".join(result.get("called_names", []))
        partners = f"partner {' '.join(f'P{s}' for s in result['partners'])}" if result["partners"] else "alone"
        return f"called {called} ({partners}), {'made' if result['made'] else 'set'} with {result['side_points']}"

    decode = staticmethod(decode)
    config_class = CallPartnerConfig


CALL_PARTNER = CallPartnerParts()
render_text = CALL_PARTNER.text  # the call-your-partner table as text (module docstring)

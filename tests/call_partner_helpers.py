"""Helpers for the call-your-partner tests: fixed deals by card name, scripted set-up, random play."""

from __future__ import annotations

import random
from typing import Iterable

from rook_env.games.call_partner.config import CallPartnerConfig
from rook_env.games.call_partner.layout import layout_for
from rook_env.games.call_partner.rules import BID, CALL, DISCARD, PLAY, ROOK, TRUMP, CallPartnerState


def cp_ids(text: str, layout) -> list[int]:
    return [layout.parse_card(t) for t in text.split()]


def cp_deal(config: CallPartnerConfig, fixed: dict[int, str] | None = None, nest: str = ""):
    """A legal deal where seat ``s`` holds the cards named in ``fixed[s]`` and the nest holds
    ``nest``; the rest is filled in id order. Returns ``(hands, nest)`` as id lists."""
    L = layout_for(config)
    fixed = fixed or {}
    hands = [cp_ids(fixed.get(s, ""), L) for s in range(config.players)]
    nest_ids = cp_ids(nest, L)
    used = {c for h in hands for c in h} | set(nest_ids)
    assert len(used) == sum(map(len, hands)) + len(nest_ids), "a card is named twice"
    rest = [c for c in range(L.n_cards) if c not in used]
    for h in hands:
        while len(h) < L.hand_size:
            h.append(rest.pop(0))
    while len(nest_ids) < L.nest_size:
        nest_ids.append(rest.pop(0))
    assert not rest
    return hands, nest_ids


def scripted_setup(st: CallPartnerState, bid: int | None = None, discards: Iterable[int] | None = None,
                   trump: int = 0, rook: str = "high", called: Iterable[int] | None = None,
                   stop_at_call: bool = False) -> None:
    """From a fresh deal: the seat left of the dealer bids (the minimum by default), the others
    pass; the bidder discards ``discards`` (default: the nest as dealt, as far as the discard rule
    allows, then the lowest legal cards), names ``trump``, the
    Rook's rank and calls ``called`` (default: the lowest legal card(s)); ``stop_at_call``: stop
    in the call phase."""
    L = st.L
    assert st.phase == BID and not st.bid_history
    st.apply(L.bid_action(bid or L.bids[0]))
    for _ in range(st.n - 1):
        st.apply(L.PASS)
    for _ in range(4):
        if st.phase == DISCARD:
            if discards is not None:
                for c in discards:
                    st.apply(c)
                continue
            nest = bits_of(st.nest)
            while st.phase == DISCARD:
                legal = st.legal_actions()
                st.apply(next((c for c in nest if c in legal), legal[0]))
        elif st.phase == TRUMP:
            st.apply(L.TRUMP0 + trump)
        elif st.phase == ROOK:
            st.apply(L.ROOK_HIGH if rook == "high" else L.ROOK_LOW)
        elif st.phase == CALL:
            if stop_at_call:
                return
            for c in (called if called is not None else [None] * st.config.n_called):
                st.apply(st.legal_actions()[0] if c is None else c)
    assert st.phase == PLAY


def bits_of(mask: int) -> list[int]:
    return [i for i in range(mask.bit_length()) if mask >> i & 1]


def play_random(st: CallPartnerState, rng: random.Random, max_steps: int = 100_000) -> None:
    for _ in range(max_steps):
        if st.is_over:
            return
        st.apply(rng.choice(st.legal_actions()))
    raise AssertionError("the game did not end")

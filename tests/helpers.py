"""Shared helpers for the rule, flag, property and observation tests (``from helpers import ...``).

Fixed deals are written with card names (``R14``, ``B5``, ``Rook``) and turned into ids by
``layout.parse_card``; actions are driven by id through the environment (``parse_action``).
pytest puts ``tests/`` on the import path (the test folder is not a package), so test modules
import this module by name; fixtures, when there are shared ones, belong in ``conftest.py``.
"""

from __future__ import annotations

import random
from typing import Iterable, Sequence

import numpy as np

import rook_env
from rook_env.games.partnership.cards import DEFAULT_LAYOUT
from rook_env.games.partnership.config import RookConfig
from rook_env.games.partnership.cards import bits
from rook_env.games.partnership.rules import BID, DISCARD, PLAY, TRUMP, RookState

L = DEFAULT_LAYOUT


def ids(text: str, layout=L) -> list[int]:
    """Card ids of a space-separated list of card names."""
    return [layout.parse_card(t) for t in text.split()]


def deal_from_tricks(tricks: Sequence[tuple[dict[int, str], int]], nest: str, layout=L):
    """The hands that play exactly ``tricks`` (each ``({seat: card name}, expected winner)``).

    The nest is given too; the bidder is expected to discard the nest cards again, so no hand
    changes through the nest. Returns ``(hands, nest)`` as card-id lists for ``reset(options=...)``.
    """
    hands: list[list[int]] = [[], [], [], []]
    for cards, _winner in tricks:
        assert sorted(cards) == [0, 1, 2, 3]
        for seat, name in cards.items():
            hands[seat].append(layout.parse_card(name))
    return hands, ids(nest, layout)


def complete_deal(fixed: dict[int, str], nest: str = "", layout=L):
    """A legal deal where seat ``s`` holds the cards named in ``fixed[s]`` (and the nest holds
    ``nest``); the remaining cards are filled in id order. Returns ``(hands, nest)`` as id lists."""
    hands = [ids(fixed.get(s, ""), layout) for s in range(4)]
    nest_ids = ids(nest, layout)
    used = {c for h in hands for c in h} | set(nest_ids)
    rest = [c for c in range(layout.n_cards) if c not in used]
    for s in range(4):
        while len(hands[s]) < layout.hand_size:
            hands[s].append(rest.pop(0))
    while len(nest_ids) < 5:
        nest_ids.append(rest.pop(0))
    assert not rest
    return hands, nest_ids


def step_text(e, *actions: str) -> None:
    """Step the env with actions given as text (``"bid 85"``, ``"pass"``, ``"R14"``, ``"trump black"``)."""
    for a in actions:
        e.step(e.unwrapped.layout.parse_action(a))


def play_tricks(e, tricks: Sequence[tuple[dict[int, str], int]]) -> None:
    """Play the scripted tricks through the env: each seat plays its card of the current trick,
    and after every trick the expected winner must lead (or the hand must be over)."""
    game = e.unwrapped.game
    L_ = e.unwrapped.layout
    for k, (cards, winner) in enumerate(tricks):
        for _ in range(4):
            seat = int(e.agent_selection.split("_")[1])
            e.step(L_.parse_card(cards[seat]))
        if k < len(tricks) - 1:
            assert game.leader == winner, f"trick {k + 1}: expected player_{winner} to win"
        else:  # the hand is scored (and in a game the next one may already be dealt)
            assert game.hand_result is not None
            assert game.hand_result["last_trick_team"] == winner % 2, "last trick: wrong winner"


# ---------------------------------------------------------------------------------------------
# Designed deals for the worked scoring examples of RULES.md. Dealer 3, so player_0 bids first and
# leads trick one; player_0 bids, the others pass; the nest holds no counter (R6 R7 Y6 Y7 G6) and
# player_0 lays the same five cards down again; trump is black. Every trick but the last is all of
# one colour (everyone follows), the last is one card each, so every scripted card is legal.
# Counters per trick are noted as team0 / team1.
NEST = "R6 R7 Y6 Y7 G6"

_RED = [
    ({0: "R14", 1: "R5", 2: "R10", 3: "R8"}, 0),  # 25 / -
    ({0: "R9", 1: "R11", 2: "R13", 3: "R12"}, 2),  # 0 / -
]
_BLACK = [
    ({2: "B14", 3: "B5", 0: "B10", 1: "B8"}, 2),  # 25 / -
    ({2: "B9", 3: "B11", 0: "B13", 1: "B12"}, 0),  # 0 / -
]

# Bid 85: team 0 captures 90, team 1 30.
DEAL_90_30 = _RED + _BLACK + [
    ({0: "G5", 1: "G8", 2: "G9", 3: "G11"}, 3),  # - / 5
    ({3: "Y14", 0: "Y5", 1: "Y10", 2: "Y8"}, 3),  # - / 25
    ({3: "Y9", 0: "Y11", 1: "Y12", 2: "Y13"}, 2),  # 0 / -
    ({2: "G14", 3: "G10", 0: "G12", 1: "G13"}, 2),  # 20 / -
    ({2: "G7", 3: "B6", 0: "Rook", 1: "B7"}, 0),  # 20 (+ nest 0) / -
]
# Bid 85: team 0 captures 80, team 1 40 (G9 and G10 swapped).
DEAL_80_40 = _RED + _BLACK + [
    ({0: "G5", 1: "G8", 2: "G10", 3: "G11"}, 3),  # - / 15
    ({3: "Y14", 0: "Y5", 1: "Y10", 2: "Y8"}, 3),  # - / 25
    ({3: "Y9", 0: "Y11", 1: "Y12", 2: "Y13"}, 2),  # 0 / -
    ({2: "G14", 3: "G9", 0: "G12", 1: "G13"}, 2),  # 10 / -
    ({2: "G7", 3: "B6", 0: "Rook", 1: "B7"}, 0),  # 20 / -
]
# Bid 90: team 0 captures 105, team 1 15.
DEAL_105_15 = _RED + _BLACK + [
    ({0: "G5", 1: "G8", 2: "G9", 3: "G11"}, 3),  # - / 5
    ({3: "Y14", 0: "Y8", 1: "Y9", 2: "Y11"}, 3),  # - / 10
    ({3: "Y12", 0: "Y5", 1: "Y10", 2: "Y13"}, 2),  # 15 / -
    ({2: "G14", 3: "G10", 0: "G12", 1: "G13"}, 2),  # 20 / -
    ({2: "G7", 3: "B6", 0: "Rook", 1: "B7"}, 0),  # 20 / -
]
# Bid 95: team 0 captures 75, team 1 45 (the Rook falls to player_3 in the last trick).
DEAL_75_45 = _RED + _BLACK + [
    ({0: "G5", 1: "G8", 2: "G10", 3: "G11"}, 3),  # - / 15
    ({3: "Y14", 0: "Y8", 1: "Y9", 2: "Y11"}, 3),  # - / 10
    ({3: "Y12", 0: "Y5", 1: "Y10", 2: "Y13"}, 2),  # 15 / -
    ({2: "G14", 3: "G9", 0: "G12", 1: "G13"}, 2),  # 10 / -
    ({2: "G7", 3: "Rook", 0: "B6", 1: "B7"}, 3),  # - / 20
]
# Bid 100: team 0 captures exactly 100, team 1 20.
DEAL_100_20 = _RED + _BLACK + [
    ({0: "G8", 1: "G9", 2: "G10", 3: "G11"}, 3),  # - / 10
    ({3: "Y14", 0: "Y8", 1: "Y9", 2: "Y11"}, 3),  # - / 10
    ({3: "Y12", 0: "Y5", 1: "Y10", 2: "Y13"}, 2),  # 15 / -
    ({2: "G14", 3: "G5", 0: "G12", 1: "G13"}, 2),  # 15 / -
    ({2: "G7", 3: "B6", 0: "Rook", 1: "B7"}, 0),  # 20 / -
]


def play_designed_hand(e, tricks, bid: int, scores=None, nest: str = NEST) -> None:
    """Reset ``e`` with a designed deal (dealer 3), player_0 bids ``bid``, the others pass,
    player_0 lays the nest down again, names black, and the scripted tricks are played."""
    hands, nest_ids = deal_from_tricks(tricks, nest)
    options = {"hands": hands, "nest": nest_ids, "dealer": 3}
    if scores is not None:
        options["scores"] = list(scores)
    e.reset(seed=0, options=options)
    step_text(e, f"bid {bid}", "pass", "pass", "pass")
    game = e.unwrapped.game
    if game.config.nest_discard == "no_counters_unless_forced":
        step_text(e, "trump black", *nest.split())
    else:
        step_text(e, *nest.split(), "trump black")
    assert game.trump == 3 and game.bidder == 0
    play_tricks(e, tricks)


def state_in_play(fixed: dict[int, str], trump: str, nest: str = "", config: RookConfig | None = None,
                  dealer: int = 3) -> RookState:
    """A RookState driven legally into the first trick: ``fixed`` cards dealt (the rest filled),
    the seat left of the dealer bids the minimum, the others pass, the bidder lays the nest down
    again and names ``trump`` (a colour name)."""
    cfg = config or RookConfig()
    Lc = rook_env.layout_for(cfg)
    hands, nest_ids = complete_deal(fixed, nest, Lc)
    st = RookState(cfg)
    st.new_game(dealer=dealer, hands=hands, nest=nest_ids)
    st.apply(Lc.BID0)
    for _ in range(3):
        st.apply(Lc.PASS)
    setup = [Lc.parse_action(f"trump {trump}")]
    if cfg.nest_discard == "no_counters_unless_forced":
        setup = setup + nest_ids
    else:
        setup = nest_ids + setup
    for a in setup:
        st.apply(a)
    assert st.phase == PLAY
    return st


# ---------------------------------------------------------------------------------------------
# Random play at the RookState level.
def play_random(st: RookState, rng: random.Random, max_steps: int = 100_000) -> Iterable[int]:
    """Apply random legal actions until the state is over; yields each action after applying it."""
    for _ in range(max_steps):
        if st.is_over:
            return
        a = rng.choice(st.legal_actions())
        st.apply(a)
        yield a
    raise AssertionError("game did not end")


# ---------------------------------------------------------------- hidden-card shuffles (agent information tests)
def hidden_from(st: RookState, me: int) -> tuple[list[int], int]:
    """Seats (other than ``me``) whose cards are hidden, and whether the nest is hidden."""
    nest_hidden = not (st.bidder == me and st.phase != BID)
    return [s for s in range(4) if s != me], nest_hidden


def shuffle_hidden(st: RookState, me: int, rng: random.Random) -> RookState:
    """A copy of ``st`` with the cards ``me`` cannot see permuted among their holders."""
    new = st.clone()
    others, nest_hidden = hidden_from(st, me)
    if st.phase == BID:
        # during the auction the nest lies face down
        pool_holders = [("hand", s) for s in others] + [("nest", None)]
    elif st.phase in (DISCARD, TRUMP) and st.bidder != me:
        pool_holders = [("hand", s) for s in others if s != st.bidder]
    else:
        pool_holders = [("hand", s) for s in others]
        if nest_hidden and st.phase == PLAY:
            pool_holders.append(("discards", None))
    masks = []
    for kind, s in pool_holders:
        masks.append(st.hands[s] if kind == "hand" else (st.nest if kind == "nest" else st.discards))
    cards = [c for m in masks for c in bits(m)]
    rng.shuffle(cards)
    i = 0
    for (kind, s), m in zip(pool_holders, masks):
        k = m.bit_count()
        new_mask = sum(1 << c for c in cards[i:i + k])
        i += k
        if kind == "hand":
            new.hands[s] = new_mask
        elif kind == "nest":
            new.nest = new_mask
        else:
            new.discards = new_mask
    return new


def legal_mask_array(st: RookState) -> np.ndarray:
    m = st.legal_mask()
    return np.array([(m >> a) & 1 for a in range(st.L.n_actions)], np.int8)


def seat_observation(st: RookState, me: int) -> dict:
    """Seat ``me``'s observation dict of ``st`` (as the environment gives it): its vector and action mask."""
    from rook_env.games.partnership.observation import encode

    return {"observation": encode(st, me), "action_mask": legal_mask_array(st)}


def strict_search(seed: int = 0, samples: int = 4, **kw):
    """A SearchAgent whose internal errors raise instead of falling back (its heuristic's too)."""
    from rook_env.agents.search import SearchAgent

    ag = SearchAgent(seed=seed, samples=samples, **kw)
    ag.strict = True
    ag.heuristic.strict = True
    return ag

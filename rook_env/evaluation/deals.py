"""Seeded deals of evaluation: deal ``i`` of seed ``s`` is the same on every machine and process."""

from __future__ import annotations

import hashlib
import random
from typing import Any, Mapping

import numpy as np

from rook_env.agents.registry import game_config, split_game
from rook_env.games.partnership.cards import bits
from rook_env.games import get_game

__all__ = ["check_flags", "derive_seed", "hand_flags", "make_deal"]


def derive_seed(*parts: Any) -> int:
    """A 63-bit seed from any parts (stable across processes and Python runs)."""
    parts = tuple(int(p) if isinstance(p, (int, np.integer)) and not isinstance(p, bool) else p for p in parts)
    digest = hashlib.blake2b(repr(parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> 1


def make_deal(seed: int, index: int, flags: Mapping[str, Any] | None = None) -> tuple[dict[str, Any], int]:
    """Deal ``index`` of the stream of ``seed``: (reset options {hands, nest, dealer}, env seed).
    Cards are dealt as RULES.md says (one at a time from the dealer's left, with the nest between);
    the dealer rotates (``index % n`` for the game's ``n`` seats: 4, or ``players`` with
    ``game="call_partner"``); the env seed drives any redeal inside the hand. Every game of the
    registry deals here through its rules state."""
    seed, index = int(seed), int(index)
    game, _ = split_game(flags)
    config = game_config(flags)
    state = get_game(game).load("state")(config)  # the game's rules state deals as the game does
    seats = state.n
    state.rng = random.Random(derive_seed("deal", seed, index))
    state.new_game(dealer=index % seats)
    options = {"hands": [bits(h) for h in state.hands], "nest": bits(state.nest), "dealer": index % seats}
    return options, derive_seed("env", seed, index)


def hand_flags(flags: Mapping[str, Any] | None) -> tuple[dict[str, Any], bool]:
    """A training run's rule flags as evaluation takes them: ``(flags without episode, game_scores)``.
    Evaluation plays single hands; an ``episode="game"`` agent reads the running score, so its hands are
    dealt with their game's score (``play_match(..., game_scores=True)``)."""
    flags = dict(flags or {})
    return flags, flags.pop("episode", "hand") == "game"


def check_flags(flags: Mapping[str, Any] | None) -> dict[str, Any]:
    """The rule flags of an evaluation as a dict (``game`` included when given); raises ValueError
    naming a bad flag, or when ``episode`` is set (evaluation plays single hands and builds games
    from the deal stream)."""
    flags = dict(flags or {})
    if flags.get("episode", "hand") != "hand":
        raise ValueError(
            "evaluation plays single hands (episode=hand); games to target_score are built from the deal "
            "stream, so do not set episode"
        )
    game_config(flags)  # raises ValueError naming a bad flag
    return flags

"""Rule flags of RULES.md, validated in one place.

Every flag is a keyword argument of ``rook_env.env(...)`` / ``rook_env.raw_env(...)``
(and of :class:`rook_env.rules.RookState`). A bad name or value raises ``ValueError``
naming it and the allowed values; nothing is silently accepted or remapped.
"""

from __future__ import annotations

import operator
from dataclasses import asdict, dataclass, fields
from typing import Any


def as_int(value: Any, name: str) -> int:
    """``value`` as a plain ``int``, else ``ValueError`` naming ``name``.

    Python and numpy integers (anything with ``__index__``) are accepted; booleans (Python's and
    numpy's), floats, strings and None are not: ``1.5`` or ``"3"`` is a mistake, never rounded or parsed.
    The one integer check of the package: flags, seeds, seats, scores, card ids and actions use it.
    """
    # numpy's bool is named "bool_" (numpy 1) or "bool" (numpy 2); numpy 1 still gives it __index__.
    if not isinstance(value, bool) and type(value).__name__ not in ("bool", "bool_"):
        try:
            return operator.index(value)
        except TypeError:
            pass
    raise ValueError(f"{name}={value!r} must be an integer")


def as_float(value: Any, name: str) -> float:
    """``value`` as a finite ``float`` (ints, floats, numpy numbers), else ``ValueError`` naming ``name``."""
    if not isinstance(value, (str, bytes, bool)) and type(value).__name__ not in ("bool", "bool_"):
        try:
            out = float(value)
        except (TypeError, ValueError):
            pass
        else:
            if abs(out) < float("inf"):  # not inf, not nan
                return out
            raise ValueError(f"{name}={value!r} must be a finite number")
    raise ValueError(f"{name}={value!r} must be a number")


# Allowed values of the enumerated flags (the first is the default).
CHOICES: dict[str, tuple[str, ...]] = {
    "all_pass": ("dealer_forced", "redeal"),
    "no_counter_redeal": ("on", "off"),
    "nest_discard": ("any", "no_counters_unless_forced"),
    "first_lead": ("left_of_dealer", "left_of_bidder", "bidder"),
    "rook_rank": ("high", "low", "ten_and_half"),
    "deck": ("tournament", "full"),
    "episode": ("hand", "game"),
    "reward": ("score_diff", "team_score", "win_loss"),
}


@dataclass(frozen=True)
class RookConfig:
    """The rules of one table. Defaults are Kentucky Discard tournament Rook."""

    target_score: int = 300
    min_bid: int | None = None  # None: 70 for the tournament deck, 100 for the full deck
    max_bid: int | None = None  # None: 120 for the tournament deck, 180 for the full deck
    bid_step: int = 5
    all_pass: str = "dealer_forced"
    no_counter_redeal: str = "on"
    nest_discard: str = "any"
    first_lead: str = "left_of_dealer"
    rook_rank: str = "high"
    deck: str = "tournament"
    majority_tricks_bonus: int = 0
    last_trick_bonus: int = 0
    episode: str = "hand"
    reward: str = "score_diff"

    def __post_init__(self) -> None:
        for name, allowed in CHOICES.items():
            value = getattr(self, name)
            if name == "no_counter_redeal" and isinstance(value, bool):
                # Accept Python booleans for the on/off flag, stored canonically.
                object.__setattr__(self, name, "on" if value else "off")
                continue
            if not isinstance(value, str) or value not in allowed:
                raise ValueError(f"{name}={value!r} is not allowed; allowed values: {', '.join(allowed)}")
        if self.min_bid is None:
            object.__setattr__(self, "min_bid", 70 if self.deck == "tournament" else 100)
        if self.max_bid is None:
            object.__setattr__(self, "max_bid", 120 if self.deck == "tournament" else 180)
        for name in ("target_score", "min_bid", "max_bid", "bid_step", "majority_tricks_bonus", "last_trick_bonus"):
            object.__setattr__(self, name, as_int(getattr(self, name), name))  # numpy integers too
        if self.target_score <= 0:
            raise ValueError(f"target_score={self.target_score} must be positive")
        if self.bid_step <= 0:
            raise ValueError(f"bid_step={self.bid_step} must be positive")
        if self.min_bid <= 0:
            raise ValueError(f"min_bid={self.min_bid} must be positive")
        if self.max_bid < self.min_bid:
            raise ValueError(f"max_bid={self.max_bid} must be >= min_bid={self.min_bid}")
        if (self.max_bid - self.min_bid) % self.bid_step:
            raise ValueError(
                f"max_bid - min_bid = {self.max_bid - self.min_bid} must be a multiple of bid_step={self.bid_step}"
            )
        for name in ("majority_tricks_bonus", "last_trick_bonus"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name}={getattr(self, name)} must be >= 0")

    @property
    def bids(self) -> tuple[int, ...]:
        """The legal bid values, lowest first."""
        return tuple(range(self.min_bid, self.max_bid + 1, self.bid_step))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


FLAG_NAMES: tuple[str, ...] = tuple(f.name for f in fields(RookConfig))


def make_config(**flags: Any) -> RookConfig:
    """Build a :class:`RookConfig`, rejecting unknown flag names with the list of known ones."""
    unknown = sorted(set(flags) - set(FLAG_NAMES))
    if unknown:
        raise ValueError(f"unknown rule flag(s) {', '.join(unknown)}; known flags: {', '.join(FLAG_NAMES)}")
    return RookConfig(**flags)

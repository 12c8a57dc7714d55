"""Rule flags of call-your-partner Rook (RULES.md section C), validated in one place.

Every flag is a keyword argument of ``rook_env.call_partner.env(...)`` / ``raw_env(...)``
and of :class:`CallPartnerConfig`. A bad name or value raises ``ValueError`` naming it and
the allowed values. Flags of the partnership game that make no sense here (``rook_rank``:
the bidder chooses Rook high or low every hand; the bonus flags: the last trick's 20 is part
of the 200 points) are refused with the reason (RULES.md C10).
"""

from __future__ import annotations

import operator
from dataclasses import asdict, dataclass, fields
from typing import Any

# Allowed values of the enumerated flags (the first is the default).
CHOICES: dict[str, tuple[Any, ...]] = {
    "players": (5, 4, 6),
    "deck": ("full", "no_twos_to_fours"),
    "all_pass": ("dealer_forced", "redeal"),
    "no_counter_redeal": ("on", "off"),
    "nest_discard": ("any", "no_counters_unless_forced"),
    "first_lead": ("left_of_dealer", "left_of_bidder", "bidder"),
    "episode": ("hand", "game"),
    "reward": ("score_diff", "team_score", "win_loss"),
}

# Flags of the partnership game refused here, with the reason (RULES.md C10).
NOT_HERE: dict[str, str] = {
    "rook_rank": "the bidder chooses 'rook high' or 'rook low' every hand (an action)",
    "majority_tricks_bonus": "call-your-partner has no trick bonuses; the last trick's 20 is part of the 200 points",
    "last_trick_bonus": "the last trick always scores 20 here (part of the 200 points)",
    "trump_calls": "the bidder names a colour as trump",
    "circus_rook": "circus Rook is a partnership variant",
    "nest": "call-your-partner is always played with a nest",
    "rook_bird": "call-your-partner is always played with the Rook Bird",
    "card_names": "call-your-partner uses Rook card names",
}


@dataclass(frozen=True)
class CallPartnerConfig:
    """The rules of one call-your-partner table. Defaults: 5 players, the full 57-card deck."""

    players: int = 5
    deck: str = "full"
    target_score: int = 500
    min_bid: int = 100
    max_bid: int = 200
    bid_step: int = 5
    all_pass: str = "dealer_forced"
    no_counter_redeal: str = "on"
    nest_discard: str = "any"
    first_lead: str = "left_of_dealer"
    episode: str = "hand"
    reward: str = "score_diff"

    def __post_init__(self) -> None:
        if self.no_counter_redeal is True or self.no_counter_redeal is False:
            object.__setattr__(self, "no_counter_redeal", "on" if self.no_counter_redeal else "off")
        for name in ("players", "target_score", "min_bid", "max_bid", "bid_step"):
            value = getattr(self, name)
            try:
                if isinstance(value, bool):
                    raise TypeError
                object.__setattr__(self, name, operator.index(value))  # numpy integers too
            except TypeError:
                raise ValueError(f"{name}={value!r} must be an integer") from None
        for name, allowed in CHOICES.items():
            if getattr(self, name) not in allowed:
                shown = ", ".join(str(a) for a in sorted(allowed, key=str))
                raise ValueError(f"{name}={getattr(self, name)!r} is not allowed; allowed values: {shown}")
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

    @property
    def bids(self) -> tuple[int, ...]:
        """The legal bid values, lowest first (100, 105, ..., 200 by default)."""
        return tuple(range(self.min_bid, self.max_bid + 1, self.bid_step))

    @property
    def n_called(self) -> int:
        """Cards the bidder calls: two with six players, else one (RULES.md C6.3)."""
        return 2 if self.players == 6 else 1

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


FLAG_NAMES: tuple[str, ...] = tuple(f.name for f in fields(CallPartnerConfig))


def make_config(**flags: Any) -> CallPartnerConfig:
    """Build a :class:`CallPartnerConfig`, rejecting unknown or inapplicable flag names."""
    for name in sorted(set(flags) & set(NOT_HERE)):
        raise ValueError(f"flag {name!r} does not apply to call-your-partner Rook: {NOT_HERE[name]}")
    unknown = sorted(set(flags) - set(FLAG_NAMES))
    if unknown:
        raise ValueError(
            f"unknown call-your-partner flag(s) {', '.join(unknown)}; known flags: {', '.join(FLAG_NAMES)}"
        )
    return CallPartnerConfig(**flags)

"""Rule flags of call-your-partner Rook (RULES.md section C), validated in one place.

Every flag is a keyword argument of ``rook_env.call_partner.env(...)`` / ``raw_env(...)``
and of :class:`CallPartnerConfig`. A bad name or value raises ``ValueError`` naming it and
the allowed values. Flags of the partnership game that make no sense here (``rook_rank``:
the bidder chooses Rook high or low every hand; the bonus flags: the last trick's 20 is part
of the 200 points) are refused with the reason (RULES.md C10). The 2s flags ``black_two_trump``
and ``red_two_little_rook`` work as in the partnership game (RULES.md F17, F18), with the full deck.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from rook_env.core.flags import COMMON_CHOICES, RulesConfig, as_int, check_choices, check_numbers, check_twos

# Allowed values of the enumerated flags (the first is the default).
CHOICES: dict[str, tuple[Any, ...]] = {
    "deck": ("full", "no_twos_to_fours"),
    **COMMON_CHOICES,
    # The 2s of RULES.md F17 and F18, as in the partnership game (full deck only).
    "black_two_trump": ("off", "on"),
    "red_two_little_rook": ("off", "on"),
}
PLAYERS = (5, 4, 6)  # the default first (RULES.md C1.1)
ON_OFF = ("no_counter_redeal", "black_two_trump", "red_two_little_rook")

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
    "ones": "the 1 always ranks above the 14 here",
    "preset": "the presets are tables of the partnership game",
}


@dataclass(frozen=True)
class CallPartnerConfig(RulesConfig):
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
    black_two_trump: str = "off"
    red_two_little_rook: str = "off"

    def __post_init__(self) -> None:
        object.__setattr__(self, "players", as_int(self.players, "players"))
        if self.players not in PLAYERS:
            raise ValueError(f"players={self.players!r} is not allowed; allowed values: "
                             f"{', '.join(map(str, sorted(PLAYERS)))}")
        check_choices(self, CHOICES, ON_OFF)
        check_twos(self)
        check_numbers(self, ("target_score", "min_bid", "max_bid", "bid_step"))

    @property
    def n_called(self) -> int:
        """Cards the bidder calls: two with six players, else one (RULES.md C6.3)."""
        return 2 if self.players == 6 else 1


FLAG_NAMES: tuple[str, ...] = tuple(f.name for f in fields(CallPartnerConfig))


def make_config(**flags: Any) -> CallPartnerConfig:
    """Build a :class:`CallPartnerConfig`, rejecting unknown or inapplicable flag names."""
    for name in sorted(set(flags) & set(NOT_HERE)):
        raise ValueError(f"flag {name!r} does not apply to call-your-partner Rook (game='call_partner'): "
                         f"{NOT_HERE[name]}; it is a flag of the partnership game (game='partnership')")
    unknown = sorted(set(flags) - set(FLAG_NAMES))
    if unknown:
        raise ValueError(
            f"unknown call-your-partner flag(s) {', '.join(unknown)} for game='call_partner'; "
            f"known flags: {', '.join(FLAG_NAMES)}"
        )
    return CallPartnerConfig(**flags)

"""Rule flags of the partnership game (RULES.md section F), validated in one place; the checks
every game shares (integers, bids, the common flags) are :mod:`rook_env.core.flags`'.

Every flag is a keyword argument of ``rook_env.env(...)`` / ``rook_env.raw_env(...)``
(and of :class:`rook_env.games.partnership.rules.RookState`). A bad name or value raises ``ValueError``
naming it and the allowed values; nothing is silently accepted or remapped.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from rook_env.core.flags import COMMON_CHOICES, RulesConfig, check_choices, check_numbers, check_twos

__all__ = ["CHOICES", "FLAG_NAMES", "ON_OFF", "ONES", "PRESETS", "RookConfig", "default_bids", "make_config"]

# Allowed values of the enumerated flags (the first is the default).
CHOICES: dict[str, tuple[str, ...]] = {
    **COMMON_CHOICES,
    "rook_rank": ("high", "low", "ten_and_half"),
    "deck": ("tournament", "full"),
    # The games of RULES.md "More games" (F13 to F20); every one is off (the default game) by default.
    "rook_bird": ("on", "off"),
    "nest": ("on", "off"),
    "card_names": ("rook", "standard"),
    "black_two_trump": ("off", "on"),
    "red_two_little_rook": ("off", "on"),
    "trump_calls": ("colour", "extended"),
    "circus_rook": ("off", "on"),
}
# On/off flags that also accept Python booleans (stored as "on" / "off").
ON_OFF = ("no_counter_redeal", "rook_bird", "nest", "black_two_trump", "red_two_little_rook", "circus_rook")
# flag ``ones`` (full deck only): None means "not applicable" (tournament deck) or "high" (full deck).
ONES = ("high", "low")

# Presets (RULES.md F21): named sets of flags; explicit flags override them, then all is validated.
PRESETS: dict[str, dict[str, Any]] = {
    "one_high_partnership": {"deck": "full", "rook_rank": "low", "majority_tricks_bonus": 20},
    "kentucky_discard_original": {"rook_bird": "off"},
    "regular_partnership": {"deck": "full", "ones": "low", "rook_bird": "off", "nest": "off",
                            "majority_tricks_bonus": 20, "min_bid": 70, "max_bid": 120},
}


def default_bids(deck: str, rook_bird: str, ones: str | None) -> tuple[int, int]:
    """(min_bid, max_bid) that follow the deck when unset (RULES.md F2, D19)."""
    if deck == "tournament" or ones == "low":
        return (70, 120) if rook_bird == "on" else (65, 100)
    return (100, 180) if rook_bird == "on" else (90, 160)


@dataclass(frozen=True)
class RookConfig(RulesConfig):
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
    rook_bird: str = "on"
    nest: str = "on"
    ones: str | None = None  # None: "high" with the full deck; the flag does not exist with the tournament deck
    card_names: str = "rook"
    black_two_trump: str = "off"
    red_two_little_rook: str = "off"
    trump_calls: str = "colour"
    circus_rook: str = "off"

    def __post_init__(self) -> None:
        check_choices(self, CHOICES, ON_OFF)
        self._check_combination()
        low, high = default_bids(self.deck, self.rook_bird, self.ones)
        if self.min_bid is None:
            object.__setattr__(self, "min_bid", low)
        if self.max_bid is None:
            object.__setattr__(self, "max_bid", high)
        check_numbers(self, ("target_score", "min_bid", "max_bid", "bid_step", "majority_tricks_bonus",
                             "last_trick_bonus"))
        for name in ("majority_tricks_bonus", "last_trick_bonus"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name}={getattr(self, name)} must be >= 0")

    def _check_combination(self) -> None:
        """The flags of RULES.md "More games" that need others (F13 to F20): a clear error otherwise."""
        if self.ones is not None:
            if self.ones not in ONES:
                raise ValueError(f"ones={self.ones!r} is not allowed; allowed values: {', '.join(ONES)}")
            if self.deck != "full":
                raise ValueError(f"ones={self.ones!r} needs deck='full': the tournament deck has no 1s")
        elif self.deck == "full":
            object.__setattr__(self, "ones", "high")
        if self.nest == "off" and self.rook_bird == "on":
            raise ValueError("nest='off' needs rook_bird='off': without a nest the deck must share out evenly "
                             "(40 or 56 cards), so the game without a nest has no Rook Bird")
        if self.nest == "off" and self.nest_discard != "any":
            raise ValueError(f"nest_discard={self.nest_discard!r} needs nest='on': without a nest nothing is discarded")
        if self.card_names == "standard" and self.deck != "tournament":
            raise ValueError("card_names='standard' needs deck='tournament' (standard cards without 2s to 4s)")
        check_twos(self)
        if self.black_two_trump == "on" and self.rook_bird == "off":
            raise ValueError("black_two_trump='on' needs rook_bird='on': the black 2 trumps the Rook Bird")
        if self.circus_rook == "on" and self.nest_discard != "any":
            raise ValueError(f"circus_rook='on' cannot be combined with nest_discard={self.nest_discard!r} "
                             "(trump would be named before the discard, circus after it)")


# The flags of make_config / env(...): the config's fields, and ``preset`` (expanded, never stored).
FLAG_NAMES: tuple[str, ...] = tuple(f.name for f in fields(RookConfig)) + ("preset",)


def make_config(**flags: Any) -> RookConfig:
    """Build a :class:`RookConfig`, rejecting unknown flag names with the list of known ones.

    ``preset`` (one of :data:`PRESETS`, or None) supplies a set of flags; flags given explicitly
    override the preset's values, and the result is validated like any other combination.
    """
    unknown = sorted(set(flags) - set(FLAG_NAMES))
    if unknown:
        raise ValueError(f"unknown rule flag(s) {', '.join(unknown)} for game='partnership'; "
                         f"known flags: {', '.join(FLAG_NAMES)}")
    preset = flags.pop("preset", None)
    if preset is not None:
        if not isinstance(preset, str) or preset not in PRESETS:
            raise ValueError(f"preset={preset!r} is not allowed; allowed values: None, {', '.join(PRESETS)}")
        flags = {**PRESETS[preset], **flags}
    try:
        return RookConfig(**flags)
    except ValueError as e:
        if preset is None:
            raise
        raise ValueError(f"preset={preset!r} with {flags}: {e}") from None

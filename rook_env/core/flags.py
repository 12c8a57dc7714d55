"""Rule-flag checking shared by every game: integer and number checks, the flags all games take,
and the validation of bids and targets. A bad name or value raises ``ValueError`` naming it and
the allowed values; nothing is silently accepted or remapped (RULES.md section F, C10).
"""

from __future__ import annotations

import operator
from dataclasses import asdict
from typing import Any

__all__ = ["COMMON_CHOICES", "RulesConfig", "as_float", "as_int", "check_choices", "check_numbers", "check_twos"]


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


# The enumerated flags every game takes (RULES.md F3 to F6, F11, F12; C4, C5, C7, C9, C12), the
# first value the default.
COMMON_CHOICES: dict[str, tuple[str, ...]] = {
    "all_pass": ("dealer_forced", "redeal"),
    "no_counter_redeal": ("on", "off"),
    "nest_discard": ("any", "no_counters_unless_forced"),
    "first_lead": ("left_of_dealer", "left_of_bidder", "bidder"),
    "episode": ("hand", "game"),
    "reward": ("score_diff", "team_score", "win_loss"),
}


def check_choices(config: Any, choices: dict[str, tuple[Any, ...]], on_off: tuple[str, ...]) -> None:
    """Check the enumerated flags of a frozen config; the ``on_off`` ones also take Python
    booleans, stored as ``"on"`` / ``"off"``."""
    for name, allowed in choices.items():
        value = getattr(config, name)
        if name in on_off and isinstance(value, bool):
            object.__setattr__(config, name, "on" if value else "off")
            continue
        if not isinstance(value, str) or value not in allowed:
            raise ValueError(f"{name}={value!r} is not allowed; allowed values: {', '.join(allowed)}")


def check_numbers(config: Any, names: tuple[str, ...]) -> None:
    """Make the integer flags ``names`` plain ints (numpy integers too) and check the bid range and
    target: positive, ``max_bid >= min_bid``, the range a whole number of ``bid_step``."""
    for name in names:
        object.__setattr__(config, name, as_int(getattr(config, name), name))
    if config.target_score <= 0:
        raise ValueError(f"target_score={config.target_score} must be positive")
    if config.bid_step <= 0:
        raise ValueError(f"bid_step={config.bid_step} must be positive")
    if config.min_bid <= 0:
        raise ValueError(f"min_bid={config.min_bid} must be positive")
    if config.max_bid < config.min_bid:
        raise ValueError(f"max_bid={config.max_bid} must be >= min_bid={config.min_bid}")
    if (config.max_bid - config.min_bid) % config.bid_step:
        raise ValueError(
            f"max_bid - min_bid = {config.max_bid - config.min_bid} must be a multiple of bid_step={config.bid_step}"
        )


def check_twos(config: Any) -> None:
    """The 2s flags (RULES.md F17, F18) need a deck with 2s: ``deck="full"``."""
    for name in ("black_two_trump", "red_two_little_rook"):
        if getattr(config, name) == "on" and config.deck != "full":
            raise ValueError(f"{name}='on' needs deck='full': only the full deck has the 2s")


class RulesConfig:
    """What every game's frozen config dataclass shares (a mixin without fields)."""

    __slots__ = ()
    min_bid: int
    max_bid: int
    bid_step: int

    @property
    def bids(self) -> tuple[int, ...]:
        """The legal bid values, lowest first."""
        return tuple(range(self.min_bid, self.max_bid + 1, self.bid_step))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)  # type: ignore[call-overload]

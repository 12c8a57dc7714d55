"""Words for the new-game form: each rule flag and its values as a player reads them (docs/flags.md).

The API still takes the flags' own names and values (``no_counter_redeal="off"``); these labels are
what the page shows beside them. A flag or value without an entry here is shown by :func:`readable`
(its name with spaces), so a game that adds a flag never shows a blank.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["FLAG_LABELS", "PRESET_LABELS", "flag_labels", "readable"]

# flag: (label, one line on what it does, {value: label})
FLAG_LABELS: dict[str, tuple[str, str, dict[str, str]]] = {
    "all_pass": ("When everyone passes", "the first seats all pass without a bid",
                 {"dealer_forced": "the dealer must bid the minimum", "redeal": "the same dealer deals again"}),
    "no_counter_redeal": ("Redeal a hand without counters",
                          "a player holding no counter may call a redeal on their bidding turn",
                          {"on": "allowed", "off": "not allowed"}),
    "nest_discard": ("Laying down into the nest", "which cards the bidder may lay down",
                     {"any": "any card", "no_counters_unless_forced": "no counters unless forced (German rule)"}),
    "first_lead": ("Who leads the first trick", "",
                   {"left_of_dealer": "left of the dealer", "left_of_bidder": "left of the bidder",
                    "bidder": "the bidder"}),
    "rook_rank": ("Rank of the Rook Bird", "",
                  {"high": "above every trump", "low": "below the trump 5", "ten_and_half": "between trump 10 and 11"}),
    "deck": ("Deck", "",
             {"tournament": "tournament (5 to 14 and the Rook)", "full": "full (1 to 14 and the Rook)",
              "no_twos_to_fours": "without the 2s, 3s and 4s"}),
    "rook_bird": ("Rook Bird card", "", {"on": "in the deck", "off": "left out"}),
    "nest": ("Nest", "", {"on": "dealt", "off": "no nest (needs no Rook Bird)"}),
    "card_names": ("Card names", "", {"rook": "Rook colours (R14, Y5)", "standard": "standard suits (AH, 5S)"}),
    "black_two_trump": ("Black 2 takes the Rook's trick", "full deck with the Rook Bird", {"off": "no", "on": "yes"}),
    "red_two_little_rook": ("Red 2 as the little Rook", "full deck", {"off": "no", "on": "yes"}),
    "trump_calls": ("Trump calls", "", {"colour": "a colour", "extended": "high or low, and no trump"}),
    "circus_rook": ("Circus Rook", "the bidder may call circus: every seat passes a card to its left",
                    {"off": "no", "on": "yes"}),
}
PRESET_LABELS: dict[str, str] = {
    "one_high_partnership": "1-high partnership (full deck, Rook low, 20 for most tricks)",
    "kentucky_discard_original": "Kentucky discard, original (no Rook Bird)",
    "regular_partnership": "regular partnership (full deck, 1s low, no Rook Bird, no nest)",
}


def readable(name: str) -> str:
    """A flag's or value's own name with spaces: ``majority_tricks_bonus`` -> ``majority tricks bonus``."""
    return str(name).replace("_", " ")


def flag_labels(choices: Mapping[str, Iterable[Any]]) -> dict[str, dict[str, Any]]:
    """``{flag: {"label", "help", "values": {value: label}}}`` for the enumerated flags ``choices``."""
    out = {}
    for name, values in choices.items():
        label, help_text, value_labels = FLAG_LABELS.get(name, (readable(name).capitalize(), "", {}))
        out[name] = {"label": label, "help": help_text,
                     "values": {str(v): value_labels.get(str(v), readable(v)) for v in values}}
    return out

"""Players built apart from the repository's heuristic and its search, so that a field of opponents holds more
than one style of play.

- :mod:`.pimc`: :class:`PIMCAgent`, determinised search for the whole hand with its own rollouts, bidding from
  simulated hand values, its own discards and trump;
- :mod:`.sampler`: its uniform deals of the hidden cards under what the seat knows.

The agent spec ``"pimc"`` (:func:`rook_env.agents.make_agent`), with options after a colon:
``"pimc:worlds=24"``, ``"pimc:worlds=16,rollout=random"`` (:data:`PIMC_OPTIONS`). It plays the partnership game.
"""

from __future__ import annotations

from typing import Any

from ..registry import AgentFamily, register_family
from ..spec_options import Option, parse_options
from .pimc import MAX_WORLDS, ROLLOUTS, PIMCAgent

__all__ = ["PIMC_OPTIONS", "PIMCAgent", "parse_pimc"]

# the options of a pimc spec ("pimc:worlds=24,rollout=greedy"): PIMCAgent's arguments
PIMC_OPTIONS = {"worlds": Option(int, f"a whole number in 1..{MAX_WORLDS} (default 24)", low=1,
                                 high=MAX_WORLDS),
                "rollout": Option(str, f"one of {', '.join(ROLLOUTS)} (default greedy)", choices=ROLLOUTS)}


def parse_pimc(spec: str) -> dict[str, Any]:
    """The :class:`PIMCAgent` arguments of a pimc spec (``"pimc:worlds=24"`` gives ``{"worlds": 24}``); ValueError
    names an unknown, repeated or malformed option."""
    head, colon, rest = spec.partition(":")
    if head != "pimc" or (colon and not rest.strip()):
        raise ValueError(f"agent spec {spec!r}: write 'pimc' or 'pimc:key=value,...' with keys "
                         f"{', '.join(PIMC_OPTIONS)}")
    return parse_options(spec, "pimc", rest, PIMC_OPTIONS) if colon else {}


def _build(spec: str, seed: int | None, game: str, rules: dict[str, Any]) -> PIMCAgent:
    return PIMCAgent(seed=seed, **parse_pimc(spec), **rules)


register_family(AgentFamily("pimc", _build, names=("pimc",), prefixes=("pimc:",), games=("partnership",),
                            forms="'pimc:worlds=24,rollout=greedy'"))

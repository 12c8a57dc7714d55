"""Determinised search for call-your-partner Rook: :class:`CallPartnerSearch` (:mod:`.agent`).

The agent spec ``"call_partner_search"`` (:func:`rook_env.agents.make_agent`, the call-your-partner game), with
options in brackets and the agent that bids after a colon (default ``call_partner_heuristic``)::

    "call_partner_search"                          16 worlds, the heuristic bids
    "call_partner_search[worlds=32]"               more worlds per decision
    "call_partner_search:ppo"                      the shipped network bids, search plays the rest
    "call_partner_search[contract=base]:ppo"       the network also lays down the nest, names trump, Rook, call

Options (:data:`SEARCH_OPTIONS`): ``worlds`` (1..1000) and ``contract`` (``search`` or ``base``).
"""

from __future__ import annotations

from typing import Any

from ..registry import AgentFamily, make_agent, register_family
from ..spec_options import Option, parse_options
from .agent import CONTRACT_MODES, MAX_WORLDS, CallPartnerSearch

__all__ = ["CallPartnerSearch", "SEARCH_OPTIONS", "parse_spec"]

NAME = "call_partner_search"
# the options of a spec ("call_partner_search[worlds=32,contract=base]:ppo"): CallPartnerSearch's arguments
SEARCH_OPTIONS = {"worlds": Option(int, f"a whole number in 1..{MAX_WORLDS} (default 16)", low=1,
                                   high=MAX_WORLDS),
                  "contract": Option(str, f"one of {', '.join(CONTRACT_MODES)} (default search)",
                                     choices=CONTRACT_MODES)}
FORMS = f"'{NAME}[worlds=16,contract=search]:<spec of the agent that bids>'"


def parse_spec(spec: str) -> tuple[dict[str, Any], str]:
    """``(options, base spec)`` of a call_partner_search spec (``"call_partner_search[worlds=32]:ppo"`` gives
    ``({"worlds": 32}, "ppo")``; no base: ``""``); ValueError names an unknown, repeated or malformed option."""
    head, colon, base = spec.partition(":")
    name, bracket, inside = head.partition("[")
    if name != NAME or (colon and not base.strip()) or (bracket and (not inside.endswith("]") or inside == "]")):
        raise ValueError(f"agent spec {spec!r}: write {NAME!r}, '{NAME}[key=value,...]' or '{NAME}[...]:<spec>' "
                         f"with keys {', '.join(SEARCH_OPTIONS)} (e.g. {FORMS})")
    options = parse_options(spec, NAME, inside[:-1], SEARCH_OPTIONS) if bracket else {}
    return options, base.strip()


def _build(spec: str, seed: int | None, game: str, rules: dict[str, Any]) -> CallPartnerSearch:
    options, base = parse_spec(spec)
    agent = make_agent(base, seed=seed, game=game, **rules) if base else None
    return CallPartnerSearch(seed=seed, base=agent, **options, **rules)


register_family(AgentFamily(NAME, _build, names=(NAME,), prefixes=(NAME + "[", NAME + ":"),
                            games=("call_partner",), forms=FORMS))

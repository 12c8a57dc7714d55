"""Search's agent specs: ``"search"``, ``"search-auction"``, ``"search-bids"`` and ``"search-values"``
(:class:`.agent.SearchAgent`'s ``auction`` modes), each with ``SearchAgent`` arguments in brackets and the agent it searches on top of after a
colon, registered with :func:`rook_env.agents.make_agent`::

    "search:ppo"                               search plays the cards; the network bids, discards, names trump
    "search-auction[:<spec>]"                  search also bids, discards and names trump (<spec>: what it leaves)
    "search-bids[:<spec>]"                     search also bids; <spec> discards and names trump
    "search-values:<network>"                  bids, discards and trump valued by the network playing them out
    "search[samples=96,worlds=learned]:ppo"    with SearchAgent arguments (:data:`SEARCH_OPTIONS`)

Search plays the partnership game.
"""

from __future__ import annotations

from typing import Any

from ..registry import AgentFamily, make_agent, register_family, unknown_spec
from ..spec_options import Option, parse_options
from .agent import SearchAgent

__all__ = ["SEARCH_AUCTION", "SEARCH_OPTIONS", "parse_search"]

# the search specs: SearchAgent's auction mode of each (search plays the cards)
SEARCH_AUCTION = {"search": "base", "search-auction": "search", "search-bids": "bids", "search-values": "values"}
# options a search spec may set in brackets ("search[samples=96,worlds=learned]:ppo"): SearchAgent's arguments
# (SearchAgent checks their ranges and words)
SEARCH_OPTIONS = {"samples": Option(int, "a whole number"), "worlds": Option(str, "a word or a path"),
                  "rollout": Option(str, "a word"), "engine": Option(str, "a word"),
                  "auction_samples": Option(int, "a whole number"), "boldness": Option(float, "a number"),
                  "values_top": Option(int, "a whole number")}


def parse_search(spec: str) -> tuple[str, dict[str, Any], str] | None:
    """``(head, options, base spec)`` of a search spec (``"search[samples=96,worlds=learned]:ppo"`` gives
    ``("search", {"samples": 96, "worlds": "learned"}, "ppo")``), None for a spec that is not one. The options in
    brackets are :class:`~rook_env.agents.search.SearchAgent` arguments (:data:`SEARCH_OPTIONS`); ValueError names
    an unknown or malformed one."""
    head, colon, rest = spec.partition(":")
    name, bracket, inside = head.partition("[")
    if name not in SEARCH_AUCTION or (colon and not rest):
        return None
    if not bracket:
        return name, {}, rest
    if not inside.endswith("]") or inside == "]":
        raise ValueError(f"agent spec {spec!r}: search options are written {name}[key=value,...], "
                         f"keys {', '.join(SEARCH_OPTIONS)}")
    return name, parse_options(spec, "search", inside[:-1], SEARCH_OPTIONS), rest


def _build(spec: str, seed: int | None, game: str, rules: dict[str, Any]) -> SearchAgent:
    search = parse_search(spec)
    if search is None:  # "search:" with nothing after the colon
        raise unknown_spec(spec, game)
    head, options, rest = search
    base = make_agent(rest, seed=seed, game=game, **rules) if rest else None
    return SearchAgent(seed=seed, base=base, auction=SEARCH_AUCTION[head], **options, **rules)


register_family(AgentFamily(
    # "search-values" is no agent alone: it values a network's actions, so it is written with one after a colon
    "search", _build, names=tuple(h for h in SEARCH_AUCTION if h != "search-values"), prefixes=tuple(h + sep for h in SEARCH_AUCTION for sep in ":["),
    games=("partnership",),
    forms="'search:<spec>' (e.g. 'search:ppo'), 'search-auction:<spec>', 'search-bids:<spec>', 'search-values:<network>', "
          "'search[samples=96,worlds=learned]:<spec>'"))

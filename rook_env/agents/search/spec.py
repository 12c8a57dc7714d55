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
from .agent import SearchAgent

__all__ = ["SEARCH_AUCTION", "SEARCH_OPTIONS", "parse_search"]

# the search specs: SearchAgent's auction mode of each (search plays the cards)
SEARCH_AUCTION = {"search": "base", "search-auction": "search", "search-bids": "bids", "search-values": "values"}
# options a search spec may set in brackets ("search[samples=96,worlds=learned]:ppo"): SearchAgent's arguments,
# each a whole number, a number or a word (SearchAgent validates the values)
SEARCH_OPTIONS = {"samples": int, "worlds": str, "rollout": str, "engine": str, "auction_samples": int,
                  "boldness": float, "values_top": int}


def parse_search(spec: str) -> tuple[str, dict[str, Any], str] | None:
    """``(head, options, base spec)`` of a search spec (``"search[samples=96,worlds=learned]:ppo"`` gives
    ``("search", {"samples": 96, "worlds": "learned"}, "ppo")``), None for a spec that is not one. The options in
    brackets are :class:`~rook_env.agents.search.SearchAgent` arguments (:data:`SEARCH_OPTIONS`); ValueError names
    an unknown or malformed one."""
    head, colon, rest = spec.partition(":")
    name, bracket, inside = head.partition("[")
    if name not in SEARCH_AUCTION or (colon and not rest):
        return None
    options: dict[str, Any] = {}
    if bracket:
        if not inside.endswith("]") or inside == "]":
            raise ValueError(f"agent spec {spec!r}: search options are written {name}[key=value,...], "
                             f"keys {', '.join(SEARCH_OPTIONS)}")
        for item in inside[:-1].split(","):
            key, eq, value = item.partition("=")
            key, value = key.strip(), value.strip()
            if key not in SEARCH_OPTIONS or not eq or not value:
                raise ValueError(f"agent spec {spec!r}: bad search option {item!r}; write key=value with a key "
                                 f"among {', '.join(SEARCH_OPTIONS)}")
            if key in options:
                raise ValueError(f"agent spec {spec!r}: search option {key!r} is given twice")
            if SEARCH_OPTIONS[key] is int:
                if not value.isdigit():
                    raise ValueError(f"agent spec {spec!r}: search option {key} must be a whole number, got {value!r}")
                options[key] = int(value)
            elif SEARCH_OPTIONS[key] is float:
                try:
                    options[key] = float(value)
                except ValueError:
                    raise ValueError(f"agent spec {spec!r}: search option {key} must be a number, got {value!r}") \
                        from None
            else:
                options[key] = value
    return name, options, rest


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

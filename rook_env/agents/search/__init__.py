"""Determinised search: :class:`SearchAgent` samples worlds consistent with the seat's knowledge and plays each
legal card out in them.

- :mod:`.agent`: the agent and its rollout policies;
- :mod:`.auction`: ``auction="search"``: bids, the nest discard and trump by play-outs of sampled deals;
- :mod:`.worlds`: sampling the hidden cards under every hard constraint;
- :mod:`.rollout`: playing a world to the end of the hand;
- :mod:`.batched`: the same search at engine speed (every world x card a table of the batched engine, compiled
  play-outs and world sampling), the agent's default engine where numba is installed;
- :mod:`.spec`: the search specs of :func:`rook_env.agents.make_agent` (``"search[samples=96]:ppo"``).
"""

from .agent import ROLLOUTS, SearchAgent
from .spec import SEARCH_OPTIONS, parse_search

__all__ = ["ROLLOUTS", "SEARCH_OPTIONS", "SearchAgent", "parse_search"]

"""Determinised search: :class:`SearchAgent` samples worlds consistent with the seat's knowledge and plays each
legal card out in them.

- :mod:`.agent`: the agent and its rollout policies;
- :mod:`.worlds`: sampling the hidden cards under every hard constraint;
- :mod:`.rollout`: playing a world to the end of the hand.
"""

from .agent import ROLLOUTS, SearchAgent

__all__ = ["ROLLOUTS", "SearchAgent"]

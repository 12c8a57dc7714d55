"""Agents that play Rook from their own observation (installed as ``rook_env.agents``).

- :mod:`.base`: the :class:`Agent` protocol and :func:`legal_from` (no implementation imported);
- :mod:`.random_agent`: the uniform random player;
- :mod:`.heuristic`: the rule-based players (partnership and call-your-partner);
- :mod:`.search`: determinised search on top of another agent;
- :mod:`.learned` (needs torch): the PPO network's agent and model;
- :mod:`.registry`: :func:`make_agent` and the team specs of matches.
"""

from .base import Agent, legal_from
from .random_agent import RandomAgent
from .registry import TeamSpec, build_agent, check_team, make_agent, parse_team

__all__ = ["Agent", "RandomAgent", "TeamSpec", "build_agent", "check_team", "legal_from", "make_agent", "parse_team"]

"""Agents that play Rook from their own observation (installed as ``rook_env.agents``).

- :mod:`.base`: the :class:`Agent` protocol and :func:`legal_from` (no implementation imported);
- :mod:`.registry`: :func:`make_agent`, the table of agent families it reads, and the team specs of matches;
- :mod:`.random_agent`: the uniform random player;
- :mod:`.heuristic`: the rule-based players (partnership and call-your-partner);
- :mod:`.search`: determinised search on top of another agent;
- :mod:`.learned`: trained networks (needs torch, loaded when one is first built);
- :mod:`.independent`: a search player built apart from the heuristic (``"pimc"``), for fields of opponents;
- :mod:`.call_partner_search`: determinised search for call-your-partner Rook (``"call_partner_search"``);
- :mod:`.checkpoints`: the trained files the shipped agents load.

Importing this package registers every family's specs (``"random"``, ``"heuristic"``, ``"search:ppo"``,
``"ppo"``, ``"best"``, ...) with :func:`make_agent`.
"""

from .base import Agent, RowByRow, batched, legal_from
from .registry import TeamSpec, build_agent, check_team, make_agent, parse_team
# each agent family registers its specs with make_agent on import (the registry imports none of them)
from .random_agent import RandomAgent
from . import heuristic, search, learned, independent, call_partner_search  # noqa: E402,F401,I001

__all__ = ["Agent", "RandomAgent", "RowByRow", "TeamSpec", "batched", "build_agent", "check_team", "legal_from", "make_agent",
           "parse_team"]

"""Rule-based players: :class:`HeuristicAgent` (partnership Rook) and :class:`CallPartnerHeuristic`.

- :mod:`.agent`: the partnership heuristic's decisions (bid, discard, trump, card);
- :mod:`.bidding`: the hand model that values a hand under each contract;
- :mod:`.play`, :mod:`.batch`: card play, one seat at a time and batched over tables;
- :mod:`.tables`: the card tables and the seat's view that all of them read;
- :mod:`.call_partner`: call-your-partner Rook's heuristic.

Their specs, ``"heuristic"`` and ``"call_partner_heuristic"``, are registered with
:func:`rook_env.agents.make_agent` here.
"""

from __future__ import annotations

from typing import Any

from ..registry import AgentFamily, register_family
from .agent import MEMORY_LIMIT, HeuristicAgent
from .call_partner import CallPartnerHeuristic

__all__ = ["MEMORY_LIMIT", "CallPartnerHeuristic", "HeuristicAgent"]


def _family(name: str, cls: type, game: str) -> AgentFamily:
    """The agent family of one game's heuristic: the spec its game's registry entry names
    (:attr:`rook_env.games.GameSpec.heuristic`)."""
    def build(spec: str, seed: int | None, game: str, rules: dict[str, Any]) -> Any:
        return cls(seed=seed, **rules)

    return AgentFamily(name, build, names=(name,), games=(game,))


register_family(_family("heuristic", HeuristicAgent, "partnership"))
register_family(_family("call_partner_heuristic", CallPartnerHeuristic, "call_partner"))

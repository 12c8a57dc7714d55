"""Rule-based players: :class:`HeuristicAgent` (partnership Rook) and :class:`CallPartnerHeuristic`.

- :mod:`.agent`: the partnership heuristic's decisions (bid, discard, trump, card);
- :mod:`.bidding`: the hand model that values a hand under each contract;
- :mod:`.play`, :mod:`.batch`: card play, one seat at a time and batched over tables;
- :mod:`.tables`: the card tables and the seat's view that all of them read;
- :mod:`.call_partner`: call-your-partner Rook's heuristic.
"""

from .agent import MEMORY_LIMIT, HeuristicAgent
from .call_partner import CallPartnerHeuristic

__all__ = ["MEMORY_LIMIT", "CallPartnerHeuristic", "HeuristicAgent"]

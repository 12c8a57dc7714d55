"""The trained files the shipped agents load, installed with the package (package data), each ``.pt`` with the
record of how it was trained and measured beside it (``.json``):

- each game's shipped network, what ``make_agent("ppo")`` plays: the game registry names the file per table size
  (:attr:`rook_env.games.GameSpec.networks`: ``ppo_default.pt`` for the partnership game, ``ppo_call_partner.pt``
  for call-your-partner Rook at 5 players);
- :data:`BEST_AUCTION`: the network that bids, discards and names trump for ``make_agent("best")`` in the
  partnership game (search plays the cards);
- :data:`HAND_MODEL`: the learned model of the hidden cards that ``"best"`` draws its worlds from.

Other networks (earlier ones, league opponents, best responses) are not package data: they are files of the
repository (``networks/``), played by path (``"networks/ppo_v5.pt"``, ``"ppo:<path>"``).
"""

from __future__ import annotations

import os

__all__ = ["BEST_AUCTION", "CHECKPOINT_DIR", "HAND_MODEL", "checkpoint"]

CHECKPOINT_DIR = os.path.dirname(os.path.abspath(__file__))


def checkpoint(name: str) -> str:
    """The path of the shipped file ``name`` (``"ppo_default.pt"``)."""
    return os.path.join(CHECKPOINT_DIR, name)


BEST_AUCTION = checkpoint("best_auction.pt")
HAND_MODEL = checkpoint("inference_default.npz")

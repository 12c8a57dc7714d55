"""rook_env: four-player partnership Rook (Kentucky Discard tournament rules) for RL.

``rook_env.env(**flags)`` / ``rook_env.raw_env(**flags)`` are PettingZoo AEC
environments (``game="call_partner"`` for call-your-partner Rook, 4-6 players);
``pettingzoo.make("aec", "rook_env/Rook-v1")`` makes the checked one (``"rook_env/RookCallPartner-v0"``
the call-your-partner one)
(PettingZoo 1.27 and newer, which have a registry; with 1.24 to 1.26 call ``rook_env.env()``).
The pure rules live in :mod:`rook_env.rules`; the action layout in
:mod:`rook_env.cards`; observations and their decoder in :mod:`rook_env.observation`.
"""

from __future__ import annotations

from .cards import BID0, N_ACTIONS, N_CARDS, PASS, REDEAL, ROOK, TRUMP0, Layout, layout_for
from .config import FLAG_NAMES, RookConfig, make_config
from .env import AGENTS, ENV_ID, CheckedRookEnv, IllegalActionWarning, NotResetError, env, raw_env
from .observation import OBS_SIZE, SCORE_CLIP, ObsLayout, PlayerView, decode, encode, obs_layout
from .rules import RookState, team_of
from .single_agent import SingleAgentRookEnv
from .vector import RookVectorEnv

__version__ = "0.1.0"

__all__ = [
    "AGENTS", "BID0", "ENV_ID", "FLAG_NAMES", "N_ACTIONS", "N_CARDS", "OBS_SIZE", "PASS", "REDEAL", "ROOK",
    "SCORE_CLIP", "TRUMP0", "CheckedRookEnv", "IllegalActionWarning", "Layout", "NotResetError", "ObsLayout",
    "PlayerView", "RookConfig", "RookState", "RookVectorEnv", "SingleAgentRookEnv", "decode", "encode", "env", "layout_for",
    "make_config", "obs_layout", "raw_env", "team_of",
]


def _register() -> None:
    """Register ``ENV_ID`` with PettingZoo's registry where there is one (PettingZoo >= 1.27)."""
    import pettingzoo

    registry = getattr(pettingzoo, "aec_registry", None)
    register = getattr(pettingzoo, "register", None)
    if registry is None or register is None:  # PettingZoo 1.24 to 1.26: no registry, nothing to do
        return
    if ENV_ID not in registry:
        register("aec", ENV_ID, entry_point="rook_env.env:env")
    from .call_partner import ENV_ID as CALL_PARTNER_ID

    if CALL_PARTNER_ID not in registry:
        register("aec", CALL_PARTNER_ID, entry_point="rook_env.call_partner.env:env")


_register()

"""rook_env: Rook for RL: four-player partnership Rook (Kentucky Discard tournament rules) and
call-your-partner Rook for 4 to 6 players.

``rook_env.env(**flags)`` / ``rook_env.raw_env(**flags)`` / :class:`SingleAgentRookEnv` take the same
arguments: ``game=`` (``"partnership"``, the default, or ``"call_partner"``; :func:`game_names`),
``players=`` and the game's rule flags. ``pettingzoo.make("aec", "rook_env/Rook-v1")`` makes the
checked partnership environment (``"rook_env/RookCallPartner-v0"`` the call-your-partner one;
PettingZoo 1.27 and newer, which have a registry; with 1.24 to 1.26 call ``rook_env.env()``).

Each game is a package of :mod:`rook_env.games` that registers itself (:mod:`rook_env.games.partnership`,
:mod:`rook_env.games.call_partner`, also importable as ``rook_env.call_partner``), built from one trick-taking
core, :mod:`rook_env.core` (rules, the AEC base, the batched-engine base, the drawing, the registry). The names
below are the partnership game's, the default.
"""

from __future__ import annotations

import pettingzoo

from rook_env.games.partnership.cards import BID0, N_ACTIONS, N_CARDS, PASS, REDEAL, ROOK, TRUMP0, Layout, layout_for
from rook_env.games.partnership.config import FLAG_NAMES, RookConfig, make_config
from rook_env.games.partnership.env import AGENTS, ENV_ID, CheckedRookEnv, IllegalActionWarning, NotResetError, env, raw_env
from .games import GameSpec, game_names, get_game
from rook_env.games.partnership.observation import OBS_SIZE, SCORE_CLIP, ObsLayout, PlayerView, decode, encode, obs_layout
from rook_env.games.partnership.rules import RookState, team_of
from .single_agent import SingleAgentRookEnv
from .vector import RookVectorEnv

__version__ = "0.18.0"

__all__ = [
    "AGENTS", "BID0", "ENV_ID", "FLAG_NAMES", "N_ACTIONS", "N_CARDS", "OBS_SIZE", "PASS", "REDEAL", "ROOK",
    "SCORE_CLIP", "TRUMP0", "CheckedRookEnv", "GameSpec", "IllegalActionWarning", "Layout", "NotResetError",
    "ObsLayout", "PlayerView", "RookConfig", "RookState", "RookVectorEnv", "SingleAgentRookEnv", "decode", "encode",
    "env", "game_names", "get_game", "layout_for", "make_config", "obs_layout", "raw_env", "team_of",
]


def _register() -> None:
    """Register every game's id with PettingZoo's registry where there is one (PettingZoo >= 1.27)."""
    registry = getattr(pettingzoo, "aec_registry", None)
    register = getattr(pettingzoo, "register", None)
    if registry is None or register is None:  # PettingZoo 1.24 to 1.26: no registry, nothing to do
        return
    for name in game_names():
        spec = get_game(name)
        if spec.env_id not in registry:
            register("aec", spec.env_id, entry_point=spec.checked_env)


_register()

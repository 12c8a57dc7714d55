"""Call-your-partner Rook for 4, 5 or 6 players (RULES.md section C): the game module of what
differs from the shared trick-taking core (:mod:`rook_env.core`), registered as
``game="call_partner"`` in :mod:`rook_env.games`.

``rook_env.env(game="call_partner", players=5, **flags)`` / ``rook_env.raw_env(...)`` (or this
package's ``env`` / ``raw_env``) are PettingZoo AEC environments (see :mod:`rook_env.call_partner.env`
for the documentation page); the pure rules live in :mod:`.rules`, the action layout in
:mod:`.layout`, observations and their decoder in :mod:`.observation`, the flags in :mod:`.config`.
"""

from __future__ import annotations

from ..games import get_game
from .config import FLAG_NAMES, CallPartnerConfig, make_config
from .env import CheckedCallPartnerEnv, env, make_env, raw_env
from .layout import CallPartnerLayout, layout_for
from .observation import CallPartnerObsLayout, CallPartnerView, decode, encode, known_partners, obs_layout
from .rules import CallPartnerState

ENV_ID = get_game("call_partner").env_id

__all__ = [
    "ENV_ID", "FLAG_NAMES", "CallPartnerConfig", "CallPartnerLayout", "CallPartnerObsLayout", "CallPartnerState",
    "CallPartnerView", "CheckedCallPartnerEnv", "decode", "encode", "env", "known_partners", "layout_for",
    "make_config", "make_env", "obs_layout", "raw_env",
]

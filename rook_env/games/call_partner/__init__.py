"""Call-your-partner Rook for 4, 5 or 6 players (RULES.md section C): the game's package of what differs
from the shared trick-taking core (:mod:`rook_env.core`), registering itself as ``game="call_partner"``.

``rook_env.env(game="call_partner", players=5, **flags)`` / ``rook_env.raw_env(...)`` (or this
package's ``env`` / ``raw_env``) are PettingZoo AEC environments (see :mod:`rook_env.call_partner.env`
for the documentation page); the pure rules live in :mod:`.rules`, the action layout in
:mod:`.layout`, observations and their decoder in :mod:`.observation`, the flags in :mod:`.config`.
"""

from __future__ import annotations

from rook_env.core.registry import GameSpec, register_game

from .config import FLAG_NAMES, CallPartnerConfig, make_config
from .env import CheckedCallPartnerEnv, env, make_env, raw_env
from .layout import CallPartnerLayout, layout_for
from .observation import CallPartnerObsLayout, CallPartnerView, decode, encode, known_partners, obs_layout
from .render import CALL_PARTNER
from .rules import PHASE_NAMES, CallPartnerState
from .vector import CallPartnerVectorEnv

SPEC = register_game(GameSpec(
    name="call_partner",
    title="call-your-partner Rook, 4 to 6 players",
    env_id="rook_env/RookCallPartner-v0",
    players=(5, 4, 6),
    takes_players=True,
    config=make_config,
    state=CallPartnerState,
    raw_env=raw_env,
    checked_env=CheckedCallPartnerEnv,
    layout=layout_for,
    obs_layout=obs_layout,
    vector=CallPartnerVectorEnv,
    heuristic="call_partner_heuristic",
    render_scene=CALL_PARTNER,
    rules_section="RULES.md section C",
    networks={5: "ppo_call_partner.pt"},
    groups=0,  # no fixed teams: every seat learns for itself
    phases=PHASE_NAMES[:6],
    phase_columns=len(PHASE_NAMES),
    eval_unit="points per hand over the field (rotation, greedy)",
    # the session and the match pull in the agents and evaluation layers: loaded when asked for
    extra={"play": "rook_env.games.call_partner.play:CallPartnerSession",
           "match": "rook_env.games.call_partner.match:play_rotation_match",
           "train_match": "rook_env.games.call_partner.match:train_match"},
))
ENV_ID = SPEC.env_id

__all__ = [
    "ENV_ID", "FLAG_NAMES", "SPEC", "CallPartnerConfig", "CallPartnerLayout", "CallPartnerObsLayout", "CallPartnerState",
    "CallPartnerView", "CheckedCallPartnerEnv", "decode", "encode", "env", "known_partners", "layout_for",
    "make_config", "make_env", "obs_layout", "raw_env",
]

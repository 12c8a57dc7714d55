"""Four-player partnership Rook, Kentucky Discard tournament rules (RULES.md R1-R10, F1-F21).

The game's package holds everything that is this game's: its rule flags (:mod:`.config`), the card and
action-id layout (:mod:`.cards`), the pure rules state (:mod:`.rules`), observations and their decoder
(:mod:`.observation`), the PettingZoo AEC class (:mod:`.env`, the environment's documentation page), the
batched engine (:mod:`.vector`) and its compiled kernels (:mod:`.kernels`), the table views (:mod:`.render`),
the terminal session (:mod:`.play`) and the duplicate match (:mod:`.match`). It registers itself as
``game="partnership"``, the default game.
"""

from __future__ import annotations

from rook_env.core.registry import register_game, GameSpec

from .cards import layout_for
from .config import make_config
from .env import ENV_ID, CheckedRookEnv, raw_env
from .observation import obs_layout
from .render import PARTNERSHIP
from .rules import RookState
from .vector import PartnershipVectorEnv

SPEC = register_game(GameSpec(
    name="partnership",
    title="four-player partnership Rook",
    env_id=ENV_ID,
    players=(4,),
    takes_players=False,
    config=make_config,
    state=RookState,
    raw_env=raw_env,
    checked_env=CheckedRookEnv,
    layout=layout_for,
    obs_layout=obs_layout,
    vector=PartnershipVectorEnv,
    heuristic="heuristic",
    render_scene=PARTNERSHIP,
    rules_section="RULES.md R1-R10, F1-F21",
    networks={4: "ppo_default.pt"},
    groups=2,  # two fixed teams: seats 0 and 2, seats 1 and 3
    phases=("bid", "discard", "trump", "play"),
    phase_columns=5,
    eval_unit="points per deal (duplicate, greedy)",
    match_options=("game_scores", "engine"),
    # the session and the match pull in the agents and evaluation layers: loaded when asked for
    extra={"play": "rook_env.games.partnership.play:PartnershipSession",
           "match": "rook_env.games.partnership.match:play_match",
           "train_match": "rook_env.games.partnership.match:train_match"},
))

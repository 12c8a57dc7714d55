"""Evaluate Rook agents: duplicate matches, games to the target score, round-robin ratings.

Takes agent specs (``"random"``, ``"heuristic"``, ``"ppo"``, ``"path/to.pt"``), or any object
with ``act(observation, info) -> action`` through a factory, so a policy trained with any RL
library plays against the baselines from the user's own code::

    from rook_env.evaluation import play_match, round_robin

    class MyAgent:                                   # the protocol of rook_env.agents.base
        def act(self, observation, info=None):       # observation: {"observation", "action_mask"}
            return my_policy(observation["observation"], observation["action_mask"])

    res = play_match(lambda seed: MyAgent(), "heuristic", deals=500, seed=0)
    res.mean, res.ci, res.games["win_rate"], res.to_dict()
    rr = round_robin(["random", "heuristic", lambda seed: MyAgent()], deals=500)
    fr = play_field(lambda seed: MyAgent(), deals=500)  # against the default field (evaluation.field)
    fr.field_mean, fr.field_ci, fr.minimum, fr.opponents[fr.worst], fr.rows()
    decision = ship_rule(fr, current_fr)  # may it replace the agent whose field is current_fr?

Call-your-partner Rook (individual scores) is evaluated by rotation: every agent of a field plays
every seat of the same deal (:mod:`.call_partner`)::

    from rook_env.evaluation import play_rotation_match

    res = play_rotation_match(["call_partner_heuristic", "random"], players=5, deals=500, seed=0)
    res.mean, res.ci                                 # the candidate's score minus the field's, per hand

Each game of the registry (:mod:`rook_env.games`) names its match scheme (its ``match`` part): two
fixed teams in duplicate, or a field rotated through every seat. Both schemes run on one engine
(:mod:`.blocks`: the checks of a match's arguments, its blocks of deals over worker processes, one
evaluated hand with illegal actions counted or raised) and one deal stream (:mod:`.deals`).

Modules: :mod:`.match` (duplicate team matches, :func:`play_match`), :mod:`.call_partner`
(rotation matches, :func:`play_rotation_match`), :mod:`.field` (one agent against a field of opponents on
the same deals, :func:`play_field`), :mod:`.blocks` (the match engine), :mod:`.deals` (seeded deals),
:mod:`.results` (:class:`MatchResult`), :mod:`.round_robin` (ratings with intervals),
:mod:`.stats` (intervals, Bradley-Terry), :mod:`.report` (tables and plots: the ``[tools]`` extra),
:mod:`.replays` (the hands of a match recorded again).
Team specs (``"heuristic+random"``, 2-tuples, factories) are parsed by
:func:`rook_env.agents.registry.parse_team`. The command line is ``rook-eval`` (``evaluate.py``).
"""

from __future__ import annotations

from rook_env.core.loop import IllegalActionError

from rook_env.games.call_partner.match import AgentStats, RotationResult, play_rotation_match
from .deals import check_flags, derive_seed, hand_flags, make_deal
from .field import DEFAULT_FIELD, FieldResult, ShipDecision, default_field, play_field, ship_check, ship_rule
from rook_env.games.partnership.match import play_match
from .results import DEFAULT_BLOCK_SIZE, REC_FIELDS, MatchResult, TeamStats
from .round_robin import RoundRobinResult, rating_intervals, round_robin
from .stats import (
    bootstrap_mean_ci,
    bradley_terry,
    elo_from_strengths,
    elo_ratings,
    game_winner,
    games_from_stream,
    wilson_interval,
)

__all__ = [
    "AgentStats", "RotationResult", "play_rotation_match",
    "DEFAULT_BLOCK_SIZE", "DEFAULT_FIELD", "REC_FIELDS", "FieldResult", "IllegalActionError", "MatchResult",
    "RoundRobinResult", "ShipDecision", "TeamStats",
    "bootstrap_mean_ci", "bradley_terry", "check_flags", "default_field", "derive_seed", "elo_from_strengths",
    "elo_ratings", "game_winner", "games_from_stream", "hand_flags", "make_deal", "play_field", "play_match",
    "rating_intervals", "round_robin", "ship_check", "ship_rule",
    "wilson_interval",
]

"""Replays of the hands an evaluation counted: pick hands of a :class:`MatchResult` and record them again.

    res = play_match("heuristic", "random", deals=500, seed=0)
    records, notes = match_replays(res, "heuristic", "random", n=5, by="swing")
    write_html(records, "runs/eval/replays.html")           # rook_env.replay's self-contained viewer

A hand of the match is rebuilt exactly: the deal's reset options and environment seed come from
:func:`.deals.make_deal` ``(seed, deal)``, and the agents of its block and seating are built with the
match's seeds; the deals of that block played before it in that seating are replayed first (quietly),
so agents that carry state between hands (a random agent's generator) are where they were. Each
recording is checked against the match's record of the hand; a difference (an agent that is not
reproducible from its seed) is reported in ``notes``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rook_env.agents.registry import parse_team, spec_label
from rook_env.env import raw_env
from rook_env.replay import SELECT_BY, HandRecord, record_hand

from .deals import make_deal
from .match import _Context, _play_hand, _seat_role, block_agents
from .results import FIELD, MatchResult

__all__ = ["match_replays", "select_rows"]


def select_rows(records: np.ndarray, n: int, by: str = "swing") -> list[int]:
    """Row indices of ``n`` hands of a match's records (rows in (deal, seating) order), as
    :func:`rook_env.replay.select_hands` picks them: ``"swing"`` the largest |score A - score B|,
    ``"set"`` the hands whose bidders were set (largest swing first), ``"order"`` the first ``n``;
    ties keep the match's order."""
    if by not in SELECT_BY:
        raise ValueError(f"by={by!r} is not allowed; allowed values: {', '.join(SELECT_BY)}")
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"n={n!r} must be a non-negative integer")
    order = np.lexsort((records[:, FIELD["seating"]], records[:, FIELD["deal"]]))
    if by == "order":
        return [int(i) for i in order[:n]]
    swing = np.abs(records[:, FIELD["score_a"]] - records[:, FIELD["score_b"]])
    pool = [int(i) for i in order if by == "swing" or records[i, FIELD["made"]] == 0]
    pool.sort(key=lambda i: -swing[i])  # stable: ties stay in the match's order
    return pool[:n]


def match_replays(result: MatchResult, spec_a: Any, spec_b: Any, n: int, by: str = "swing") -> tuple[
        list[HandRecord], list[str]]:
    """Record again ``n`` hands of ``result`` (played by team specs ``spec_a`` and ``spec_b``, as
    given to :func:`play_match`), chosen ``by`` :func:`select_rows`. Returns (records in the chosen
    order, notes on hands whose replay differs from the match's record)."""
    rows = select_rows(result.records, n, by)
    teams = (parse_team(spec_a, result.team_a), parse_team(spec_b, result.team_b))
    flags = {k: v for k, v in result.flags.items() if k != "game"}
    ctx = _Context(teams, flags, result.seed, result.duplicate, False, result.block_size, result.deals,
                   result.common_seeds)
    env = raw_env(**flags)
    rec = result.records
    wanted: dict[tuple[int, int], dict[int, int]] = {}  # (block, seating) -> {deal: row}
    for i in rows:
        deal, seating = int(rec[i, FIELD["deal"]]), int(rec[i, FIELD["seating"]])
        wanted.setdefault((deal // ctx.block_size, seating), {})[deal] = i
    recorded: dict[int, HandRecord] = {}
    notes: list[str] = []
    for (block, seating), deals in sorted(wanted.items()):
        agents = block_agents(ctx, block, seating)
        labels = []
        for seat in range(4):
            team, member = _seat_role(seating, seat)
            labels.append(f"{'AB'[team]}: {spec_label(teams[team].members[member])}")
        for deal in range(block * ctx.block_size, max(deals) + 1):
            if not ctx.duplicate and deal % 2 != seating:
                continue  # not played in this seating
            options, env_seed = make_deal(ctx.seed, deal, flags)
            if deal not in deals:
                _play_hand(env, agents, options, env_seed, seating, False, "")  # as the match played it
                continue
            i = deals[deal]
            hand = record_hand(env, agents, seed=env_seed, options=options, labels=labels)
            scores = hand.result["hand_scores"] if hand.result else None
            if scores is None or (scores[seating], scores[1 - seating]) != (
                    int(rec[i, FIELD["score_a"]]), int(rec[i, FIELD["score_b"]])):
                notes.append(f"deal {deal}, seating {seating}: the replay differs from the evaluated hand "
                             f"(an agent is not reproducible from its seed)")
            recorded[i] = hand
    return [recorded[i] for i in rows], notes

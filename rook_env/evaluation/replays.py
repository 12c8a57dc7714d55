"""Replays of the hands an evaluation counted: pick hands of a :class:`MatchResult` and record them again.

    res = play_match("heuristic", "random", deals=500, seed=0)
    records, notes = match_replays(res, "heuristic", "random", n=5, by="swing")
    write_html(records, "runs/eval/replays.html")           # rook_env.evaluation.replay's self-contained viewer

A hand of the match is rebuilt exactly: the deal's reset options and environment seed come from
:func:`.deals.make_deal` ``(seed, deal)``, and the agents of its block and seating are built with the
match's seeds; the deals of that block played before it in that seating are replayed first (quietly),
so agents that carry state between hands (a random agent's generator) are where they were. Each
recording is checked against the match's record of the hand; a difference (an agent that is not
reproducible from its seed) is reported in ``notes``.

Call-your-partner rotation matches have their counterpart, :func:`rotation_replays`: a hand is a
(deal, rotation) of a :class:`.call_partner.RotationResult`, chosen by :func:`select_rotation_hands`
(the largest swing: the best hand score minus the worst; the sets; or the first ones).
"""

from __future__ import annotations

from typing import Any, Callable, Hashable, Mapping, Sequence

import numpy as np

from rook_env.agents.registry import parse_team, spec_label, split_game
from rook_env.games import get_game
from .replay import HandRecord, check_selection, record_hand

from rook_env.games.call_partner import match as rotation
from .deals import make_deal
from rook_env.games.partnership.match import MatchContext, block_agents, play_seating, seat_role
from .results import FIELD, MatchResult

__all__ = ["match_replays", "rotation_replays", "select_rotation_hands", "select_rows"]


def select_rows(records: np.ndarray, n: int, by: str = "swing") -> list[int]:
    """Row indices of ``n`` hands of a match's records (rows in (deal, seating) order), as
    :func:`rook_env.evaluation.replay.select_hands` picks them: ``"swing"`` the largest |score A - score B|,
    ``"set"`` the hands whose bidders were set (largest swing first), ``"order"`` the first ``n``;
    ties keep the match's order."""
    check_selection(n, by)
    order = np.lexsort((records[:, FIELD["seating"]], records[:, FIELD["deal"]]))
    if by == "order":
        return [int(i) for i in order[:n]]
    swing = np.abs(records[:, FIELD["score_a"]] - records[:, FIELD["score_b"]])
    pool = [int(i) for i in order if by == "swing" or records[i, FIELD["made"]] == 0]
    pool.sort(key=lambda i: -swing[i])  # stable: ties stay in the match's order
    return pool[:n]


def _record_again(env: Any, wanted: Mapping[tuple[int, int], Mapping[int, Hashable]], block_size: int, arm_name: str,
                  table: Callable[[int, int], tuple[list[Any], list[str]]],
                  deal_of: Callable[[int, int], tuple[dict[str, Any], int] | None],
                  quietly: Callable[[list[Any], int, int, dict[str, Any], int], None],
                  same: Callable[[Any, int, HandRecord], bool]) -> tuple[dict[Any, HandRecord], list[str]]:
    """Record again the hands ``wanted[(block, arm)] = {deal: key}`` of a match (an arm: a seating or a
    rotation): per block and arm, the agents and seat labels ``table(block, arm)`` play the block's deals
    in order up to the last one wanted, the others ``quietly`` (agents carry state from hand to hand, so
    they must be where the match had them); ``deal_of(deal, arm)``: the deal's reset options and env
    seed (None: the arm did not play it); ``same(key, arm, hand)``: whether the recording matches the
    match's record. Returns ({key: record}, notes on the hands that differ)."""
    recorded: dict[Any, HandRecord] = {}
    notes: list[str] = []
    for (block, arm), deals in sorted(wanted.items()):
        agents, labels = table(block, arm)
        for deal in range(block * block_size, max(deals) + 1):
            dealt = deal_of(deal, arm)
            if dealt is None:
                continue
            options, env_seed = dealt
            if deal not in deals:
                quietly(agents, arm, deal, options, env_seed)
                continue
            hand = record_hand(env, agents, seed=env_seed, options=options, labels=labels)
            if not same(deals[deal], arm, hand):
                notes.append(f"deal {deal}, {arm_name} {arm}: the replay differs from the evaluated hand "
                             f"(an agent is not reproducible from its seed)")
            recorded[deals[deal]] = hand
    return recorded, notes


def match_replays(result: MatchResult, spec_a: Any, spec_b: Any, n: int, by: str = "swing") -> tuple[
        list[HandRecord], list[str]]:
    """Record again ``n`` hands of ``result`` (played by team specs ``spec_a`` and ``spec_b``, as
    given to :func:`play_match`), chosen ``by`` :func:`select_rows`. Returns (records in the chosen
    order, notes on hands whose replay differs from the match's record)."""
    rows = select_rows(result.records, n, by)
    teams = (parse_team(spec_a, result.team_a), parse_team(spec_b, result.team_b))
    flags = {k: v for k, v in result.flags.items() if k != "game"}
    ctx = MatchContext(teams, flags, result.seed, result.duplicate, False, result.block_size, result.deals,
                       result.common_seeds)
    env = get_game("partnership").load("raw_env")(**flags)
    rec = result.records
    wanted: dict[tuple[int, int], dict[int, int]] = {}  # (block, seating) -> {deal: row}
    for i in rows:
        deal, seating = int(rec[i, FIELD["deal"]]), int(rec[i, FIELD["seating"]])
        wanted.setdefault((deal // ctx.block_size, seating), {})[deal] = i

    def table(block: int, seating: int) -> tuple[list[Any], list[str]]:
        labels = []
        for seat in range(4):
            team, member = seat_role(seating, seat)
            labels.append(f"{'AB'[team]}: {spec_label(teams[team].members[member])}")
        return block_agents(ctx, block, seating), labels

    def deal_of(deal: int, seating: int) -> tuple[dict[str, Any], int] | None:
        if not ctx.duplicate and deal % 2 != seating:
            return None  # not played in this seating
        return make_deal(ctx.seed, deal, flags)

    def quietly(agents: list[Any], seating: int, deal: int, options: dict[str, Any], env_seed: int) -> None:
        play_seating(env, agents, options, env_seed, seating, False, "")

    def same(i: int, seating: int, hand: HandRecord) -> bool:
        scores = hand.result["hand_scores"] if hand.result else None
        return scores is not None and (scores[seating], scores[1 - seating]) == (
            int(rec[i, FIELD["score_a"]]), int(rec[i, FIELD["score_b"]]))

    recorded, notes = _record_again(env, wanted, ctx.block_size, "seating", table, deal_of, quietly, same)
    return [recorded[i] for i in rows], notes


def select_rotation_hands(records: np.ndarray, n: int, by: str = "swing") -> list[tuple[int, int]]:
    """``n`` hands, as (deal, rotation), of a rotation match's records (one row per deal, rotation
    and seat; :data:`.call_partner.ROT_FIELDS`), as :func:`rook_env.evaluation.replay.select_hands` picks them:
    ``"swing"`` the largest best-minus-worst hand score, ``"set"`` the hands whose bidders were set
    (largest swing first), ``"order"`` the first ``n``; ties keep the (deal, rotation) order."""
    check_selection(n, by)
    rf = rotation.RF
    rows = records[np.lexsort((records[:, rf["seat"]], records[:, rf["rotation"]], records[:, rf["deal"]]))]
    players = int(rows[:, rf["seat"]].max()) + 1 if rows.size else 1
    hands = rows.reshape(-1, players, records.shape[1])  # every hand has one row per seat
    keys = [(int(h[0, rf["deal"]]), int(h[0, rf["rotation"]])) for h in hands]
    if by == "order":
        return keys[:n]
    score = hands[:, :, rf["score"]]
    swing = score.max(axis=1) - score.min(axis=1)
    pool = [i for i in range(len(keys)) if by == "swing" or hands[i, 0, rf["made"]] == 0]
    pool.sort(key=lambda i: -swing[i])  # stable: ties stay in order
    return [keys[i] for i in pool[:n]]


def rotation_replays(result: "rotation.RotationResult", specs: Sequence[Any], n: int, by: str = "swing") -> tuple[
        list[HandRecord], list[str]]:
    """Record again ``n`` hands of a call-your-partner rotation match ``result``, played by the field
    ``specs`` (as given to :func:`.call_partner.play_rotation_match`), chosen ``by``
    :func:`select_rotation_hands`. Seats are labelled with the agent playing them in that rotation.
    Returns (records in the chosen order, notes on hands whose replay differs from the match's record)."""
    chosen = select_rotation_hands(result.records, n, by)
    _, rules = split_game(result.flags)
    members = rotation.field_specs(specs, result.players)
    ctx = rotation.RotationContext(tuple(members), rules, result.seed, False, result.block_size, result.deals)
    env = get_game("call_partner").load("raw_env")(**rules)
    names = rotation.labels(ctx.specs)
    rf, rec = rotation.RF, result.records
    wanted: dict[tuple[int, int], dict[int, tuple[int, int]]] = {}  # (block, rotation) -> {deal: (deal, rotation)}
    for deal, r in chosen:
        wanted.setdefault((deal // ctx.block_size, r), {})[deal] = (deal, r)

    def table(block: int, r: int) -> tuple[list[Any], list[str]]:
        return rotation.rotation_agents(ctx, block, r), [names[(s + r) % ctx.n] for s in range(ctx.n)]

    def deal_of(deal: int, r: int) -> tuple[dict[str, Any], int]:
        return make_deal(ctx.seed, deal, ctx.deal_flags)

    def quietly(row: list[Any], r: int, deal: int, options: dict[str, Any], env_seed: int) -> None:
        rotation.play_rotation_hand(env, row, ctx, deal, r, options, env_seed)

    def same(key: tuple[int, int], r: int, hand: HandRecord) -> bool:
        mine = rec[(rec[:, rf["deal"]] == key[0]) & (rec[:, rf["rotation"]] == r)]
        evaluated = [int(x) for x in mine[np.argsort(mine[:, rf["seat"]]), rf["score"]]]
        return hand.result is not None and list(hand.result["hand_scores"]) == evaluated

    recorded, notes = _record_again(env, wanted, ctx.block_size, "rotation", table, deal_of, quietly, same)
    return [recorded[key] for key in chosen], notes

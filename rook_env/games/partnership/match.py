"""The duplicate match engine: :func:`play_match` plays team A against team B on seeded deals.

Duplicate play (the default): deal ``i`` is generated from ``(seed, i)`` (hands, nest; the
dealer rotates ``i % 4``) and played twice through ``raw_env.reset(options=...)``, once with
team A in seats {0, 2} and once with A in seats {1, 3}; every seat keeps its cards, so each
hand is played by the same member role of the other team. Redeals inside a deal draw from an
environment RNG seeded per deal, identical in both seatings. The agent at seat ``s`` is seeded
from ``(seed, block, s)`` in *both* seatings (common random numbers): two identical teams
therefore produce exactly opposite results in the two seatings, and swapping the teams
negates every deal pair exactly.

Deals are processed in fixed blocks (``block_size`` deals; agents are built once per block),
so ``workers=N`` gives results identical to ``workers=1`` for the same seed.

Statistics: mean points per deal (team A's hand score minus team B's, averaged over the two
seatings of a deal) with a percentile bootstrap interval over deal pairs; games to
``target_score`` built from the deal stream (hand scores accumulated deal by deal, RULES.md's
end rule, one stream per seating) with a Wilson interval; contracts, sets, mean winning bid,
points as bidders / defenders; illegal actions (they must be zero: an illegal action raises in
``raw_env``; it is counted, replaced by the lowest legal action, and reported); fallbacks (the
sum of the agents' ``fallbacks`` counters, for agents that keep one); speed.
By default hands are played with the game score at 0-0 (agents do not see the running game score: the
hand-level view the agents are trained on). ``game_scores=True`` plays real games instead: each seating's
deal stream is cut into games to ``target_score`` as it is played, and every hand is dealt with the running
score of its game (reset option ``scores``), so agents that read the score (a game-level agent) can play
to it. Games restart at 0-0 at every block of deals (blocks stay independent, so ``workers`` does not
change results); a game unfinished at a block's end is not counted. The cards of every deal are the
same in both seatings, the scores each seating shows are its own game's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from rook_env.agents.registry import TeamSpec, build_agent, check_team, parse_team, split_game
from rook_env.core.registry import get_game
from .observation import SCORE_CLIP

from rook_env.evaluation.blocks import cached_env, check_match_args, fallbacks, play_hand, run_match
from rook_env.evaluation.deals import check_flags, derive_seed, make_deal
from rook_env.evaluation.results import DEFAULT_BLOCK_SIZE, FIELD, REC_FIELDS, MatchResult, team_stats
from rook_env.evaluation.stats import bootstrap_mean_ci, game_winner, games_from_stream, wilson_interval
from rook_env.evaluation.tables import TABLES_BLOCK_SIZE, run_block_tables

__all__ = ["MatchContext", "block_agents", "play_match", "play_seating", "seat_role", "train_match"]


def seat_role(seating: int, seat: int) -> tuple[int, int]:
    """(team 0=A / 1=B, member 0/1) of ``seat``: seating 0 puts A in seats {0, 2}, seating 1 in {1, 3}."""
    team = (seat & 1) ^ seating
    return team, seat >> 1


@dataclass(frozen=True)
class MatchContext:
    """What every block of a match needs: the teams, the rule flags, the seed and the scheme."""

    teams: tuple[TeamSpec, TeamSpec]
    flags: dict[str, Any]
    seed: int
    duplicate: bool
    strict: bool
    block_size: int
    deals: int
    common_seeds: bool = True
    game_scores: bool = False
    engine: str = "env"  # "env": raw_env hand by hand; "tables": a block's hands as tables of the batched engine


def _team_fallbacks(agents: Sequence[Any], seating: int) -> list[int]:
    """Sum of the ``fallbacks`` counters of each team's distinct agents ([A, B])."""
    out = [0, 0]
    seen: set[int] = set()
    for seat, agent in enumerate(agents):
        if id(agent) not in seen:
            seen.add(id(agent))
            out[seat_role(seating, seat)[0]] += fallbacks(agent)
    return out


def play_seating(env: Any, agents: Sequence[Any], options: dict[str, Any], env_seed: int, seating: int,
                 strict: bool, where: str) -> tuple[dict[str, Any], list[int], list[int], int]:
    """Play one hand in ``seating``; returns (hand result, illegal actions [A, B], fallbacks [A, B], steps)."""
    before = _team_fallbacks(agents, seating)

    def describe(seat: int) -> str:
        return f"{where}, seat {seat} (team {'AB'[seat_role(seating, seat)[0]]})"

    per_seat, steps = play_hand(env, agents, options, env_seed, strict, describe)
    illegal = [0, 0]
    for seat, count in enumerate(per_seat):
        illegal[seat_role(seating, seat)[0]] += count
    after = _team_fallbacks(agents, seating)
    return env.infos["player_0"]["hand"], illegal, [after[0] - before[0], after[1] - before[1]], steps


def block_agents(ctx: MatchContext, block: int, seating: int) -> list[Any]:
    """The agents of ``block`` in ``seating``, by seat; the seat's seed is shared by both
    seatings (common random numbers) unless ``ctx.common_seeds`` is False."""
    row = []
    for seat in range(4):
        team, member = seat_role(seating, seat)
        key = ("agent", ctx.seed, block, seat) if ctx.common_seeds else ("agent", ctx.seed, block, seating, seat)
        row.append(build_agent(ctx.teams[team].members[member], derive_seed(*key), ctx.flags))
    return row


def _run_block(block: int, ctx: MatchContext) -> list[tuple[int, ...]]:
    """Play the deals of one block (both seatings when duplicate); deterministic in (seed, block)."""
    env = cached_env(get_game("partnership").load("raw_env"), ctx.flags)
    start = block * ctx.block_size
    stop = min(ctx.deals, start + ctx.block_size)
    agents = {seating: block_agents(ctx, block, seating) for seating in (0, 1)}
    target = int(ctx.flags.get("target_score", 300))
    limit = int(SCORE_CLIP * target)  # what reset accepts; the observation clips scores there anyway
    game = {0: [0, 0], 1: [0, 0]}  # game_scores: each seating's running game score (A, B), 0-0 at a block's start
    out: list[tuple[int, ...]] = []
    for deal in range(start, stop):
        options, env_seed = make_deal(ctx.seed, deal, ctx.flags)
        for seating in (0, 1) if ctx.duplicate else (deal % 2,):
            ta = seating  # team index (0: seats {0,2}) of A
            if ctx.game_scores:
                a, b = (min(max(x, -limit), limit) for x in game[seating])
                options = dict(options, scores=[a, b] if ta == 0 else [b, a])
            res, illegal, fell_back, steps = play_seating(
                env, agents[seating], options, env_seed, seating, ctx.strict, f"deal {deal}, seating {seating}"
            )
            hs, ct = res["hand_scores"], res["counters"]
            if ctx.game_scores:
                g = game[seating]
                g[0] += int(hs[ta])
                g[1] += int(hs[1 - ta])
                if game_winner(g[0], g[1], target) >= 0:
                    g[0] = g[1] = 0
            out.append((
                deal, seating, int((res["bidder"] & 1) == ta), int(res["bid"]), int(bool(res["made"])),
                int(hs[ta]), int(hs[1 - ta]), int(ct[ta]), int(ct[1 - ta]),
                illegal[0], illegal[1], fell_back[0], fell_back[1], int(env.game.deals - 1), steps,
            ))
    return out


def _summarise(records: np.ndarray, ctx: MatchContext, confidence: float, n_boot: int, elapsed: float,
               workers: int) -> MatchResult:
    deal = records[:, FIELD["deal"]]
    diff = (records[:, FIELD["score_a"]] - records[:, FIELD["score_b"]]).astype(np.float64)
    per_deal = np.bincount(deal, weights=diff, minlength=ctx.deals) / np.bincount(deal, minlength=ctx.deals)
    mean = float(per_deal.mean())
    ci = bootstrap_mean_ci(per_deal, confidence=confidence, n_boot=n_boot, seed=derive_seed("bootstrap", ctx.seed) % 2**32)
    target = int(ctx.flags.get("target_score", 300))
    winners: list[int] = []
    unfinished = 0
    # One stream per seating; with game_scores one per (block, seating): the games the agents saw
    streams = [records[:, FIELD["seating"]]] if ctx.duplicate else [np.zeros(len(records), np.int64)]
    if ctx.game_scores:
        streams.append(records[:, FIELD["deal"]] // ctx.block_size)
    keys = np.stack(streams, axis=1)
    for key in np.unique(keys, axis=0):
        rows = records[(keys == key).all(axis=1)]
        w, pend = games_from_stream(zip(rows[:, FIELD["score_a"]].tolist(), rows[:, FIELD["score_b"]].tolist()), target)
        winners += w
        unfinished += pend
    won_a = sum(1 for w in winners if w == 0)
    played = len(winners)
    g_lo, g_hi = wilson_interval(won_a, played, confidence)
    games = {
        "target_score": target,
        "played": played,
        "won_a": won_a,
        "won_b": played - won_a,
        "win_rate": won_a / played if played else math.nan,
        "ci": [g_lo, g_hi],
        "hands_in_unfinished": unfinished,
    }
    return MatchResult(
        team_a=ctx.teams[0].name, team_b=ctx.teams[1].name, deals=ctx.deals, seed=ctx.seed,
        duplicate=ctx.duplicate, flags=dict(ctx.flags), confidence=confidence,
        pair_values=per_deal, mean=mean, ci=ci,
        pair_wins={"A": int((per_deal > 0).sum()), "B": int((per_deal < 0).sum()), "tied": int((per_deal == 0).sum())},
        games=games,
        teams={"A": team_stats(records, 0), "B": team_stats(records, 1)},
        illegal={"A": int(records[:, FIELD["illegal_a"]].sum()), "B": int(records[:, FIELD["illegal_b"]].sum())},
        fallbacks={"A": int(records[:, FIELD["fallbacks_a"]].sum()), "B": int(records[:, FIELD["fallbacks_b"]].sum())},
        hands=int(records.shape[0]), redeals=int(records[:, FIELD["redeals"]].sum()),
        steps=int(records[:, FIELD["steps"]].sum()), elapsed_s=elapsed, workers=workers, records=records,
        common_seeds=ctx.common_seeds, block_size=ctx.block_size, game_scores=ctx.game_scores,
    )


def play_match(
    spec_a: Any,
    spec_b: Any,
    deals: int = 2000,
    seed: int = 0,
    flags: Mapping[str, Any] | None = None,
    duplicate: bool = True,
    workers: int = 1,
    progress: bool = False,
    *,
    names: tuple[str | None, str | None] = (None, None),
    confidence: float = 0.95,
    n_boot: int = 2000,
    strict: bool = False,
    block_size: int = DEFAULT_BLOCK_SIZE,
    check: bool = True,
    common_seeds: bool = True,
    game_scores: bool = False,
    engine: str = "env",
) -> MatchResult:
    """Play team A against team B over ``deals`` seeded deals (each twice when ``duplicate``).

    ``spec_a`` / ``spec_b``: team specs (see :func:`parse_team`); ``flags``: the environment's
    rule flags; ``workers``: processes (results are identical for any value); ``strict``: raise
    :class:`IllegalActionError` on an illegal action instead of counting it; ``block_size``:
    deals per block (agents are rebuilt, freshly seeded, at each block; part of the seed's
    definition); ``check``: build every member once up front to fail early on a bad spec;
    ``common_seeds``: seed the agent at seat ``s`` identically in both seatings (common random
    numbers: identical teams cancel exactly, swapping A and B negates every deal pair); False
    seeds all eight seat-agents of a deal independently. ``game_scores``: deal each hand with the running
    score of its game (real games to ``target_score``, restarting at every block; see the module docstring)
    instead of 0-0. ``engine``: ``"env"`` plays every hand through ``raw_env`` with per-seat agents;
    ``"tables"`` plays a block's hands as tables of the batched engine, each team member deciding for all its
    seats at once (agents with ``act_batch``; far faster for networks; :mod:`rook_env.evaluation.tables` says what
    differs: redealt hands, one agent per member, no ``game_scores``); use a large ``block_size`` with it.
    """
    check_match_args(deals, workers, block_size, seed)
    if engine not in ("env", "tables"):
        raise ValueError(f"engine must be 'env' or 'tables', got {engine!r}")
    if engine == "tables" and game_scores:
        raise ValueError("engine='tables' plays every hand at 0-0: game_scores needs engine='env'")
    game, flags = split_game(check_flags(flags))
    if game != "partnership":
        raise ValueError(f"play_match plays the partnership game (two teams of two), not game={game!r}; "
                         f"call-your-partner Rook is evaluated by play_rotation_match")
    teams = (parse_team(spec_a, names[0]), parse_team(spec_b, names[1]))
    if check:
        for t in teams:
            check_team(t, flags)
    ctx = MatchContext(teams, flags, int(seed), bool(duplicate), bool(strict), int(block_size), deals, bool(common_seeds),
                   bool(game_scores), engine)
    records, elapsed, workers = run_match(_run_block if engine == "env" else run_block_tables, ctx, deals, block_size, workers,
                                          f"{teams[0].name} vs {teams[1].name}" if progress else None, len(REC_FIELDS))
    return _summarise(records, ctx, confidence, n_boot, elapsed, workers)


def train_match(factory: Callable, opponent: str, deals: int, seed: int, flags: dict,
                game_scores: bool = False, engine: str = "env") -> tuple[float, tuple[float, float]]:
    """A training run's match: :func:`play_match` in duplicate, in this process; (points per deal, 95% interval).

    ``game_scores``: every hand is dealt with its game's running score (a game-episode run's agent reads it);
    ``engine="tables"``: the hands as tables of the batched engine (:mod:`rook_env.evaluation.tables`)."""
    flags = {k: v for k, v in flags.items() if k != "game"}
    extra = {"engine": engine, "block_size": TABLES_BLOCK_SIZE} if engine == "tables" else {}
    res = play_match(factory, opponent, deals=deals, seed=seed, flags=flags, duplicate=True, workers=1,
                     game_scores=game_scores, **extra)
    return float(res.mean), (float(res.ci[0]), float(res.ci[1]))

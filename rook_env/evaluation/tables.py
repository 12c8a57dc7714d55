"""The duplicate match on the batched engine: a block's deals as tables of :class:`rook_env.vector.RookVectorEnv`.

``play_match(..., engine="tables")`` plays the same deals as the default engine (deal ``i`` from ``(seed, i)``,
both seatings when duplicate) and scores them the same way, but a block's hands are tables of one batched engine
stepped together, and every team member decides for all its seats at once through ``act_batch(observations,
masks, keys)`` (keys ``table * 4 + seat``, distinct per call, so the heuristic's card memory follows each seat):
the shipped network, the heuristic and the search agent have it. A network then plays thousands of hands a second
instead of a few, which makes selection on thousands of deals cheap (docs/evaluation.md).

What differs from the default engine, and why: one agent per team member serves all the block's tables (seeded
from ``(seed, block, team, member)``); a redeal inside a hand (the no-counter redeal, or four passes with
``all_pass="redeal"``) deals new cards drawn from ``(seed, deal, redeal number)``, the same in both seatings (so
identical teams still cancel), but not the cards the default engine's per-deal environment stream deals: hands
with a redeal differ between the engines, those without one play identically for deterministic agents
(``tests/test_evaluation_tables.py``). Running game scores (``game_scores``) are not
supported: every table's hand is played at 0-0.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rook_env.agents.registry import build_agent
from rook_env.core.loop import IllegalActionError
from rook_env.vector import RookVectorEnv

from .deals import derive_seed, make_deal
from .results import REC_FIELDS

__all__ = ["TABLES_BLOCK_SIZE", "run_block_tables"]

TABLES_BLOCK_SIZE = 1000  # evaluate.py --engine tables: deals per block (2,000 tables when duplicate)


def _team_agents(ctx: Any, block: int) -> dict[tuple[int, int], Any]:
    """One agent per (team, member) for the block; each must decide in batches."""
    agents = {}
    for team in (0, 1):
        for member in (0, 1):
            spec = ctx.teams[team].members[member]
            agent = build_agent(spec, derive_seed("agent", ctx.seed, block, team, member), ctx.flags)
            if not callable(getattr(agent, "act_batch", None)):
                raise ValueError(f"engine='tables' needs agents that decide in batches (act_batch); "
                                 f"{spec!r} ({type(agent).__name__}) has none: play it with engine='env'")
            if hasattr(agent, "reset"):
                agent.reset()
            agents[team, member] = agent
    return agents


def run_block_tables(block: int, ctx: Any) -> list[tuple[int, ...]]:
    """Play the deals of one block on the batched engine; records as the default engine's ``_run_block``."""
    start = block * ctx.block_size
    deals = np.arange(start, min(ctx.deals, start + ctx.block_size))
    options = [make_deal(ctx.seed, int(d), ctx.flags)[0] for d in deals]
    if ctx.duplicate:  # tables 0 .. n - 1: seating 0 (A in seats 0 and 2); n .. 2n - 1: seating 1
        deal, seating, options = np.concatenate([deals, deals]), np.repeat([0, 1], len(deals)), options + options
    else:
        deal, seating = deals, deals % 2
    n = len(deal)
    done = np.zeros(n, bool)
    steps = np.zeros(n, np.int64)
    redeals = np.zeros(n, np.int64)

    def redeal(tables: np.ndarray, new_game: np.ndarray) -> list[dict | None]:
        """The engine's deal_source: a redeal's cards from (seed, deal, redeal number), the same in both seatings;
        the hands after a table's hand ended are not played (None: the engine's own deal)."""
        out: list[dict | None] = []
        for t, new in zip(tables.tolist(), new_game.tolist()):
            if new or done[t]:
                out.append(None)
                continue
            redeals[t] += 1
            cards, _ = make_deal(derive_seed("redeal", ctx.seed, int(deal[t]), int(redeals[t])), 0, ctx.flags)
            out.append({"hands": cards["hands"], "nest": cards["nest"]})
        return out

    env = RookVectorEnv(n, deal_source=redeal, **ctx.flags)
    env.reset(seed=derive_seed("env", ctx.seed, block), options=options)
    agents = _team_agents(ctx, block)
    illegal = np.zeros((n, 2), np.int64)
    out: list[tuple[int, ...]] = [()] * n
    acts = np.zeros(n, np.int64)
    while not done.all():
        mask = env.action_mask
        obs = env.observation
        seat = env.current_player
        team = (seat & 1) ^ seating
        member = seat >> 1
        live = ~done
        for (t, m), agent in agents.items():
            rows = np.flatnonzero(live & (team == t) & (member == m))
            if len(rows):
                acts[rows] = agent.act_batch(obs[rows], mask[rows], rows * 4 + seat[rows])
        fin = np.flatnonzero(done)
        acts[fin] = mask[fin].argmax(1)  # finished tables play on in a new hand, ignored
        bad = np.flatnonzero(live & (mask[np.arange(n), acts] == 0))
        for i in bad.tolist():
            where = f"deal {deal[i]}, seating {seating[i]}, seat {seat[i]} (team {'AB'[team[i]]})"
            if ctx.strict:
                raise IllegalActionError(f"{where}: illegal action {acts[i]}", int(seat[i]), int(acts[i]))
            illegal[i, team[i]] += 1
            acts[i] = int(np.flatnonzero(mask[i])[0])  # the lowest legal action, as the default engine
        _, _, term, trunc, info = env.step(acts)
        steps[live] += 1
        ended = live & (term | trunc)
        hand = info["hand"]
        for i in np.flatnonzero(ended).tolist():
            ta = int(seating[i])
            hs, ct = hand["hand_scores"][i], hand["counters"][i]
            out[i] = (int(deal[i]), ta, int((hand["bidder"][i] & 1) == ta), int(hand["bid"][i]),
                      int(bool(hand["made"][i])), int(hs[ta]), int(hs[1 - ta]), int(ct[ta]), int(ct[1 - ta]),
                      int(illegal[i, 0]), int(illegal[i, 1]), 0, 0, int(redeals[i]), int(steps[i]))
        done |= ended
    order = np.lexsort((seating, deal))  # as the default engine: deal by deal, seating 0 first
    assert all(len(out[i]) == len(REC_FIELDS) for i in order)
    return [out[i] for i in order]

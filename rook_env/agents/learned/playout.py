"""Networks playing positions out on the batched engine: what each action of a decision is worth when a network
plays on from it (the counterfactual labels' branches, :mod:`rook_env.training.labels.counterfactual`; search's
auction over a network's values, :mod:`rook_env.agents.search.values`).

:func:`branch_values` loads rules states into a :class:`rook_env.vector.RookVectorEnv`, replays a prefix of actions,
plays one action instead and lets the network (its greedy action) play on to the end of the hand, at every seat or
at one team's with an ``opponent`` (an agent that decides in batches) at the other's; a branch's value is the acting
seat's team's hand score minus the other team's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from rook_env.games.partnership.rules import RookState
from rook_env.vector import RookVectorEnv

from ..heuristic.agent import HeuristicAgent
from .agent import PPOAgent

__all__ = ["MIN_ROWS", "at_least", "branch_values", "card_memory", "greedy_actions", "network_turns",
           "opponent_turns", "prefix_turns", "team_value"]


# The branches replay the trunk step by step in lock step (a branch is idle in no step): the engine deals new
# hands at the same steps as in the trunk's schedule, so a branch that throws its hand in (the redeal) draws the
# same cards from its block's stream whatever else changes; the network's forward passes are over the same rows
# (a row's logits can depend on its batch's size in the last bit, batches of 1 to 3 rows taking other kernels).
# What the replay does not redo is the opponent's work on the prefix (its actions there are the trunk's):
# see :func:`prefix_turns`.
MIN_ROWS = 32  # a stateless opponent's forward pass is never shrunk below this many rows (:func:`at_least`)


def greedy_actions(model: Any, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The network's greedy legal action per row (as :class:`~rook_env.agents.learned.agent.PPOAgent` plays)."""
    with torch.inference_mode():
        logits = model.actor_logits(torch.from_numpy(obs))
        return logits.masked_fill(~torch.from_numpy(mask.astype(bool)), -1e9).argmax(1).numpy()


def network_turns(model: Any, obs: np.ndarray, rows: np.ndarray, mask: np.ndarray, out: np.ndarray) -> None:
    """``out[rows]`` = the network's action at those tables (the only legal action where there is one); ``obs``
    and ``mask``: the engine's current ones (what ``step`` returns: no copy of every table's observation)."""
    if not len(rows):
        return
    m = mask[rows]
    out[rows] = m.argmax(1)  # the forced moves' (and the default) action
    choice = rows[m.sum(1) > 1]
    if len(choice):
        out[choice] = greedy_actions(model, obs[choice], mask[choice])


def opponent_turns(opponent: Any, obs: np.ndarray, mask: np.ndarray, seat: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The opponent's actions at ``rows`` (its seats to act there), its card memory keyed ``table * 4 + seat``."""
    return opponent.act_batch(obs[rows], mask[rows], rows * 4 + seat[rows])


def card_memory(opponent: Any) -> dict | None:
    """The card memories the heuristic keeps between its ``act_batch`` calls, by key (immutable ``Memory``
    tuples: a snapshot is a copy of the references); None for any other agent."""
    return opponent.keyed_memory if isinstance(opponent, HeuristicAgent) else None


def prefix_turns(opponent: Any) -> str:
    """What a branch does with the opponent's turns before its decision (the trunk's actions are replayed there):
    ``"none"``, a greedy plain network (a function of the row alone): not asked; ``"memory"``, the heuristic: not
    asked, its card memory at the decision is the trunk's (snapshots taken there); ``"all"``, any other agent
    (a random stream, a residual network's prior): asked at every turn, as the trunk asked it."""
    if isinstance(opponent, HeuristicAgent):
        return "memory"
    if isinstance(opponent, PPOAgent) and opponent.greedy and opponent.prior is None:
        return "none"
    return "all"


def at_least(rows: np.ndarray, every: np.ndarray, n: int = MIN_ROWS) -> np.ndarray:
    """``rows`` (sorted) with more of ``every`` (sorted, a superset) up to ``n`` rows, or all of ``every`` when it
    has at most ``n``: a network computes a row bitwise the same in every batch of more than a few rows, but not
    in batches of 1 to 3 (other kernels), so a pass the replay would have made over ``every`` is not shrunk to a
    size where its rows could come out otherwise (tests/test_label_speed_equality.py)."""
    if not len(rows) or len(rows) >= n:
        return rows
    if len(every) <= n:
        return every
    return np.union1d(rows, np.setdiff1d(every, rows, assume_unique=True)[: n - len(rows)])


def team_value(hand_scores: np.ndarray, seat: np.ndarray) -> np.ndarray:
    """The seat's team's hand score minus the other team's (team = seat % 2)."""
    team = seat & 1
    rows = np.arange(len(seat))
    return (hand_scores[rows, team] - hand_scores[rows, 1 - team]).astype(np.float32)


def branch_values(model: Any, flags: dict[str, Any], deals: Sequence[RookState], prefix: np.ndarray,
                  step: np.ndarray, action: np.ndarray, seat: np.ndarray, tables: int = 2048,
                  opponent: Any = None, seed: int | None = None, memories: Sequence[dict] | None = None) -> np.ndarray:
    """The value of each branch ``i``: deal ``deals[i]`` (a rules state before the first action), replay
    ``prefix[i, :step[i]]``, play ``action[i]``, let the network play on (at the acting seat's team only, with an
    ``opponent`` at the other team's seats); the acting ``seat[i]``'s team's hand score minus the other's.
    ``seed``: the engines' random streams, one per block of ``tables`` branches (a branch that throws its hand in,
    the redeal action, plays a new deal drawn from it), so the values are a function of the seed; None:
    unseeded. ``memories[i]``: the heuristic opponent's card memory at the decision, by seat (the trunk's; None:
    the heuristic is asked on the prefix again, :func:`prefix_turns`)."""
    n = len(deals)
    values = np.zeros(n, np.float32)
    mode = None if opponent is None else prefix_turns(opponent)
    if mode == "memory" and memories is None:
        mode = "all"
    for lo in range(0, n, tables):
        hi = min(n, lo + tables)
        env = RookVectorEnv(hi - lo, backend="numba", **flags)
        # a stream of its own per block, apart from the trunk's deals; reset draws from it as a reset with the
        # deals as options would (every table's dealer and shuffle), then the tables load their deals
        block_seed = None if seed is None else int(np.random.SeedSequence([seed, lo]).generate_state(1)[0])
        env.reset(seed=block_seed)
        obs, info = env.load_states(deals[lo:hi])
        mask, now = info["action_mask"], info["seat"]
        if opponent is not None:
            opponent.reset()
        if mode == "memory":
            kept = card_memory(opponent)
            for i, snap in enumerate(memories[lo:hi]):
                for s, m in snap.items():
                    kept[i * 4 + s] = m
        k, alt, pre, team = step[lo:hi], action[lo:hi], prefix[lo:hi], seat[lo:hi] & 1
        cards = slice(env.obs_layout.HAND, env.obs_layout.HAND + env.layout.n_cards)  # the seat's hand
        done = np.zeros(hi - lo, bool)
        acts = np.zeros(hi - lo, np.int64)
        t = 0
        while not done.all():
            acts[:] = pre[:, min(t, pre.shape[1] - 1)]
            acts[k == t] = alt[k == t]
            on = (k < t) & ~done  # playing on
            if opponent is None:
                network_turns(model, obs, np.flatnonzero(on), mask, acts)
            else:
                theirs = ~done & ((now & 1) != team)
                if mode == "all":  # in the prefix too: the opponent's memory follows the replay
                    rows = np.flatnonzero(theirs)
                else:
                    # not asked where the answer is known: a forced move (a network), a seat's last card (the
                    # heuristic: the card memory it would file is never read again)
                    sure = mask.sum(1) == 1 if mode == "none" else obs[:, cards].sum(1) == 1
                    known = np.flatnonzero(theirs & on & sure)
                    acts[known] = mask[known].argmax(1)
                    rows = np.flatnonzero(theirs & on & ~sure)
                    if mode == "none":
                        rows = at_least(rows, np.flatnonzero(theirs))
                if len(rows):
                    mine = opponent_turns(opponent, obs, mask, now, rows)
                    acts[rows[on[rows]]] = mine[on[rows]]
                network_turns(model, obs, np.flatnonzero(on & ~theirs), mask, acts)
            fin = np.flatnonzero(done)
            acts[fin] = mask[fin].argmax(1)  # finished tables play on in a new hand, ignored
            obs, _, term, trunc, info = env.step(acts)
            mask, now = info["action_mask"], info["seat"]
            ended = np.flatnonzero((term | trunc) & ~done)
            if len(ended):
                values[lo + ended] = team_value(info["hand"]["hand_scores"][ended], seat[lo + ended])
                done[ended] = True
            t += 1
    return values



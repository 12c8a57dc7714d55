"""Search labels for expert iteration: hands played by search, every searched card-play decision
recorded with the value search gave each card it tried.

Each hand is dealt from a seed and played in the partnership AEC environment by four search agents
(``search:<base>``: search picks the cards, ``base`` bids, discards and names trump), each acting on its
own seat's observation only. Every decision is recorded: the seat's observation vector, its action mask,
the action taken, the seat's critic input (``cin``: ``env.state_for(seat)``, what a central critic reads;
training only), and, where search ran (card play with a choice), the mean score difference (the seat's
team minus the other, in points) search measured for each card it tried (``q``; NaN where not tried: one
card of each set of equivalent cards is tried). When the hand ends, each record gets the hand's outcome
from its seat's side (``outcome``: the team's hand score minus the other team's).

Shards of ``shard_hands`` hands are written as ``<out>/shard_<seed>_<k>.npz`` as they finish, so a run cut
short keeps what it labelled and a rerun with the same arguments skips the shards that exist.

    python -m rook_env.training.search_labels --out runs/labels --hands 4000 --seed 1
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["label_hands", "main"]


def label_hands(hands: int, seed: int, base: Any = "ppo", samples: int = 24, seats: dict | None = None,
                **flags: Any) -> dict[str, np.ndarray]:
    """Play ``hands`` hands (deal seeds ``seed``, ``seed + 1``, ...) with search on every seat; the records
    (see the module docstring) as arrays. ``base``: an agent spec, or an agent (one instance for every
    seat: expert iteration's current network, rook_env.training.expert). ``seats``: the players of
    :func:`search_seats` to reuse (a process that labels hand after hand); ``base`` and ``samples`` are theirs then."""
    import rook_env

    env = rook_env.raw_env(**flags)
    n_actions = env.action_space("player_0").n
    seats = seats or search_seats(seed, base, samples, flags)
    obs_l, mask_l, cin_l, act_l, q_l, seat_l, out_l, hand_l = [], [], [], [], [], [], [], []
    for h in range(hands):
        env.reset(seed=seed + h)
        first = len(obs_l)
        for agent in env.agent_iter():
            obs, _, term, trunc, info = env.last()
            if term or trunc:
                scores = info["hand"]["hand_scores"]
                env.step(None)
                continue
            player = seats[agent]
            action = player.act(obs, info)
            q = np.full(n_actions, np.nan, np.float32)
            if player.last_values:
                for a, v in player.last_values.items():
                    q[a] = v
            obs_l.append(np.asarray(obs["observation"], np.float32))
            mask_l.append(np.asarray(obs["action_mask"], bool))
            cin_l.append(np.asarray(env.state_for(agent), np.float32))
            act_l.append(action)
            q_l.append(q)
            seat_l.append(env.possible_agents.index(agent))
            hand_l.append(seed + h)
            env.step(action)
        for i in range(first, len(obs_l)):
            team = seat_l[i] % 2
            out_l.append(float(scores[team] - scores[1 - team]))
    return {"obs": np.stack(obs_l), "mask": np.stack(mask_l), "cin": np.stack(cin_l), "action": np.asarray(act_l, np.int16),
            "q": np.stack(q_l), "seat": np.asarray(seat_l, np.int8), "outcome": np.asarray(out_l, np.float32),
            "hand": np.asarray(hand_l, np.int64)}


def search_seats(seed: int, base: Any, samples: int, flags: dict) -> dict:
    """The four search players (by agent name) of :func:`label_hands`."""
    import rook_env
    from rook_env.agents.search import SearchAgent

    names = rook_env.raw_env(**flags).possible_agents
    return {a: SearchAgent(seed=seed * 4 + i, samples=samples, base=base_agent(base, seed * 4 + i, flags), **flags)
            for i, a in enumerate(names)}


def base_agent(base: Any, seed: int, flags: dict) -> Any:
    """The agent that bids, discards and names trump under search: None (the heuristic's), an agent spec's, or
    ``base`` itself when it is an agent."""
    if not isinstance(base, str):
        return base
    from rook_env.agents import make_agent

    return None if base == "heuristic" else make_agent(base, seed=seed, **flags)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, help="folder of the shards")
    p.add_argument("--hands", type=int, default=1000)
    p.add_argument("--seed", type=int, default=1, help="the first deal's seed")
    p.add_argument("--shard-hands", type=int, default=200)
    p.add_argument("--samples", type=int, default=24, help="search's worlds per decision")
    p.add_argument("--base", default="ppo", help="the agent spec that bids, discards and names trump")
    p.add_argument("--workers", type=int, default=0, help="label workers on Ray (rook_env.training.ray_labels)")
    p.add_argument("--ray-address", default="auto", help="with --workers: the cluster (\"\": a local Ray)")
    a = p.parse_args(argv)
    if a.workers:
        from .ray_labels import main as ray_main

        return ray_main(a, label_hands)
    from .ray_labels import shard_plan, write_shard  # the shards cut and written as the Ray workers' are

    os.makedirs(a.out, exist_ok=True)
    for path, first, n in shard_plan(a.out, a.hands, a.seed, a.shard_hands):
        if os.path.exists(path):
            continue
        t0 = time.time()
        rec = label_hands(n, first, a.base, a.samples)
        write_shard(path, rec)
        n_q = int(np.isfinite(rec["q"]).any(axis=1).sum())
        print(f"{path}: {len(rec['obs'])} decisions, {n_q} searched, {time.time() - t0:.0f}s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

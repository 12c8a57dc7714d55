"""Search labels for expert iteration: hands played by search, every searched card-play decision recorded with
the value search gave each card it tried.

Each hand is dealt from a seed and played in the partnership AEC environment by four search agents
(``search:<base>``: search picks the cards, ``base`` bids, discards and names trump), each acting on its
own seat's observation only. Every decision is recorded: the seat's observation vector, its action mask,
the action taken, the seat's critic input (``cin``: ``env.state_for(seat)``, what a central critic reads;
training only), and, where search ran (card play with a choice), the mean score difference (the seat's
team minus the other, in points) search measured for each card it tried (``q``; NaN where not tried: one
card of each set of equivalent cards is tried). When the hand ends, each record gets the hand's outcome
from its seat's side (``outcome``: the team's hand score minus the other team's).

:func:`write_search_labels` writes shards of ``shard_hands`` hands as ``<out>/shard_<seed>_<k>.npz`` as they
finish (:func:`.shards.shard_plan`), here or on Ray label workers, so a run cut short keeps what it labelled and a
rerun with the same arguments skips the shards that exist; :mod:`rook_env.training.expert` reads them.

    rook-train search-labels --out runs/labels --hands 4000 --seed 1
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import rook_env
from rook_env.agents import make_agent
from rook_env.agents.search import SearchAgent

from .ray_workers import label_on_ray
from .shards import shard_plan, write_shard

__all__ = ["base_agent", "label_hands", "search_seats", "write_search_labels"]


def label_hands(hands: int, seed: int, base: Any = "ppo", samples: int = 24, seats: dict | None = None,
                **flags: Any) -> dict[str, np.ndarray]:
    """Play ``hands`` hands (deal seeds ``seed``, ``seed + 1``, ...) with search on every seat; the records
    (see the module docstring) as arrays. ``base``: an agent spec, or an agent (one instance for every
    seat: expert iteration's current network, rook_env.training.expert). ``seats``: the players of
    :func:`search_seats` to reuse (a process that labels hand after hand); ``base`` and ``samples`` are theirs then."""
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
    names = rook_env.raw_env(**flags).possible_agents
    return {a: SearchAgent(seed=seed * 4 + i, samples=samples, base=base_agent(base, seed * 4 + i, flags), **flags)
            for i, a in enumerate(names)}


def base_agent(base: Any, seed: int, flags: dict) -> Any:
    """The agent that bids, discards and names trump under search: None (the heuristic's), an agent spec's, or
    ``base`` itself when it is an agent."""
    if not isinstance(base, str):
        return base

    return None if base == "heuristic" else make_agent(base, seed=seed, **flags)


def write_search_labels(out: str, hands: int, seed: int = 1, shard_hands: int = 200, base: str = "ppo",
                        samples: int = 24, workers: int = 0, ray_address: str = "auto",
                        log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Label ``hands`` hands from deal seed ``seed`` in the shards of :func:`.shards.shard_plan`, in this process or
    (``workers`` > 0) by label workers on the Ray cluster at ``ray_address`` (the same shards); a ``log`` line per
    shard. Returns the shards written and the decisions labelled (on Ray, :func:`.ray_workers.label_on_ray`'s
    ledger)."""
    log = log or (lambda line: print(line, flush=True))
    if workers:
        return label_on_ray(label_hands, out, hands, seed, base, samples, shard_hands, workers, ray_address, log=log)
    os.makedirs(out, exist_ok=True)
    ledger = {"written": 0, "decisions": 0, "searched": 0}
    for path, first, n in shard_plan(out, hands, seed, shard_hands):
        if os.path.exists(path):
            continue
        t0 = time.time()
        rec = label_hands(n, first, base, samples)
        write_shard(path, rec)
        n_q = int(np.isfinite(rec["q"]).any(axis=1).sum())
        ledger["written"] += 1
        ledger["decisions"] += len(rec["obs"])
        ledger["searched"] += n_q
        log(f"{path}: {len(rec['obs'])} decisions, {n_q} searched, {time.time() - t0:.0f}s")
    return ledger

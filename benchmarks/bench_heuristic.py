"""Decision speed of the heuristic agent: act() before and after its rewrite, and act_batch.

    python benchmarks/bench_heuristic.py                 # default rules, 5 repeats
    python benchmarks/bench_heuristic.py --repeats 3 --hands 100 --old-ref 477dc6c

Prints decisions/s (median and range over repeats) of
  * ``raw_env`` agent steps (``step`` plus ``observe`` of the next seat), the unit of cost;
  * ``act()`` of the heuristic as it was at ``--old-ref`` (loaded from ``git show`` into a
    temporary module; skipped when git or that version is not available) and of today's;
  * ``act_batch`` over N tables stepped together (N = 64, 1024; keys = table * 4 + seat),
and each one's cost as a multiple of one raw_env step. Heuristic plays every seat.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import rook_env
from rook_env.agents.heuristic import HeuristicAgent
from rook_env.games.partnership.rules import OVER

REPO = Path(__file__).resolve().parents[1]
OLD_REF = "477dc6c"  # the last commit with the single-module heuristic


def load_old(ref: str):
    """The HeuristicAgent class of agents/heuristic.py at git ``ref`` (None if unavailable)."""
    try:
        src = subprocess.run(["git", "show", f"{ref}:agents/heuristic.py"], cwd=REPO, capture_output=True,
                             text=True, check=True).stdout
        path = Path(tempfile.mkdtemp()) / "heuristic_old.py"
        path.write_text(src)
        spec = importlib.util.spec_from_file_location("heuristic_old", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module.HeuristicAgent
    except Exception as exc:  # no git, unknown ref, or an old import that no longer resolves
        print(f"(act() before: not measured: {type(exc).__name__}: {str(exc).strip()[:120]})")
        return None


def time_act(agent_cls, hands: int, seed: int) -> tuple[float, float, int]:
    """Seconds in act(), seconds in env step + observe, decisions, over ``hands`` hands."""
    env = rook_env.raw_env()
    agents = [agent_cls(seed=s) for s in range(4)]
    t_act = t_env = 0.0
    decisions = 0
    for h in range(hands):
        env.reset(seed=seed + h)
        game = env.game
        obs = env.observe(env.agent_selection)
        while game.phase != OVER:
            t0 = time.perf_counter()
            action = agents[game.current].act(obs)
            t1 = time.perf_counter()
            env.step(action)
            if game.phase != OVER:
                obs = env.observe(env.agent_selection)
            t2 = time.perf_counter()
            t_act += t1 - t0
            t_env += t2 - t1
            decisions += 1
    return t_act, t_env, decisions


def time_batch(n_tables: int, steps: int, seed: int) -> tuple[float, int]:
    """Seconds in act_batch and decisions, over ``steps`` steps of ``n_tables`` tables."""
    envs = [rook_env.raw_env() for _ in range(n_tables)]
    for t, env in enumerate(envs):
        env.reset(seed=seed + t)
    agent = HeuristicAgent()
    size = envs[0].observation_space("player_0")["observation"].shape[0]
    n_actions = envs[0].action_space("player_0").n
    obs = np.empty((n_tables, size), np.float32)
    masks = np.empty((n_tables, n_actions), np.int8)
    seats = np.empty(n_tables, np.int64)
    elapsed = 0.0
    next_seed = seed + n_tables
    for _ in range(steps):
        for t, env in enumerate(envs):
            o = env.observe(env.agent_selection)
            obs[t] = o["observation"]
            masks[t] = o["action_mask"]
            seats[t] = env.game.current
        keys = np.arange(n_tables) * 4 + seats
        t0 = time.perf_counter()
        actions = agent.act_batch(obs, masks, keys)
        elapsed += time.perf_counter() - t0
        for env, a in zip(envs, actions.tolist()):
            env.step(a)
            if env.game.phase == OVER:
                env.reset(seed=next_seed)
                next_seed += 1
    return elapsed, n_tables * steps


def summary(rates: list[float]) -> str:
    return f"{statistics.median(rates):>10,.0f} [{min(rates):,.0f}, {max(rates):,.0f}]"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--hands", type=int, default=100, help="hands per repeat for act()")
    ap.add_argument("--steps", type=int, default=120, help="steps per repeat for act_batch (about 3 hands)")
    ap.add_argument("--old-ref", default=OLD_REF, help="git ref of the heuristic measured as 'before'")
    args = ap.parse_args()

    old_cls = load_old(args.old_ref)
    env_rates, rows = [], {}
    for r in range(args.repeats):
        seed = 1000 * r
        t_act, t_env, n = time_act(HeuristicAgent, args.hands, seed)
        env_rates.append(n / t_env)
        rows.setdefault("act() after", []).append(n / t_act)
        if old_cls is not None:
            t_act, t_env, n = time_act(old_cls, args.hands, seed)
            env_rates.append(n / t_env)
            rows.setdefault(f"act() before ({args.old_ref})", []).append(n / t_act)
        for n_tables in (64, 1024):
            elapsed, n = time_batch(n_tables, args.steps, seed)
            rows.setdefault(f"act_batch N={n_tables}", []).append(n / elapsed)
    env_median = statistics.median(env_rates)
    print(f"heuristic decision speed, default rules, {args.repeats} repeats: median [min, max] decisions/s; "
          f"cost in raw_env steps (median)")
    print(f"{'':28s} {'decisions/s':>28s} {'x env step':>11s}")
    print(f"{'raw_env step + observe':28s} {summary(env_rates):>28s} {1.0:>11.2f}")
    order = [k for k in rows if k.startswith("act() before")] + ["act() after", "act_batch N=64", "act_batch N=1024"]
    for name in order:
        print(f"{name:28s} {summary(rows[name]):>28s} {env_median / statistics.median(rows[name]):>11.2f}")


if __name__ == "__main__":
    sys.exit(main())

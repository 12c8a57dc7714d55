"""Environment speed: agent steps per second under random legal play.

Every step reads the acting seat's observation and action mask (``env.last()``) and
picks a uniformly random legal action, as an RL collector would. Measured in one run,
so the ratios are meaningful on a noisy shared machine:

- ``rook_env.raw_env``  (the AEC environment, no checks)
- ``rook_env.env()``    (order enforcement, bounds and illegal-action handling, native)
- ``rook_env.RookState`` (the pure rules core: legal actions + apply, no observation)
- OpenSpiel ``spades`` (PyPI ``open-spiel``), the reference: observation tensor and
  legal actions read at every step
- optionally (``--pz-wrappers``) ``raw_env`` under PettingZoo's three standard classic
  wrappers, to show what the native checks save.

Usage::

    python benchmarks/bench_env.py                 # ~1 minute
    python benchmarks/bench_env.py --steps 50000 --repeats 3 --json bench.json
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import time
from typing import Callable

import rook_env
from rook_env.rules import OVER, RookState


def bench_aec(make: Callable, steps: int, seed: int = 0) -> float:
    env = make()
    rng = random.Random(seed)
    done = 0
    episode = 0
    start = time.perf_counter()
    while done < steps:
        env.reset(seed=seed + episode)
        episode += 1
        for _agent in env.agent_iter():
            obs, _reward, term, trunc, _info = env.last()
            if term or trunc:
                env.step(None)
                continue
            legal = obs["action_mask"].nonzero()[0]
            env.step(int(legal[rng.randrange(len(legal))]))
            done += 1
    return done / (time.perf_counter() - start)


def bench_rules(steps: int, seed: int = 0) -> float:
    rng = random.Random(seed)
    done = 0
    start = time.perf_counter()
    while done < steps:
        state = RookState(seed=rng.randrange(1 << 30))
        state.new_game()
        while state.phase != OVER:
            legal = state.legal_actions()
            state.apply(legal[rng.randrange(len(legal))])
            done += 1
    return done / (time.perf_counter() - start)


def bench_spades(steps: int, seed: int = 0) -> float | None:
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game("spades")
    rng = random.Random(seed)
    done = 0
    start = time.perf_counter()
    while done < steps:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.randrange(len(outcomes))][0])
                continue
            player = state.current_player()
            state.observation_tensor(player)
            legal = state.legal_actions(player)
            state.apply_action(legal[rng.randrange(len(legal))])
            done += 1
    return done / (time.perf_counter() - start)


def pz_wrapped():
    from pettingzoo.utils import wrappers

    env = rook_env.raw_env()
    env = wrappers.TerminateIllegalWrapper(env, illegal_reward=-1)
    env = wrappers.AssertOutOfBoundsWrapper(env)
    return wrappers.OrderEnforcingWrapper(env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=60_000, help="agent steps per measurement")
    parser.add_argument("--repeats", type=int, default=3, help="measurements per subject; the best is reported")
    parser.add_argument("--pz-wrappers", action="store_true", help="also measure PettingZoo's classic wrappers")
    parser.add_argument("--json", help="write the results to this file")
    args = parser.parse_args()
    if args.steps <= 0 or args.repeats <= 0:
        parser.error("--steps and --repeats must be positive")

    subjects: dict[str, Callable[[], float | None]] = {
        "open_spiel spades (reference)": lambda: bench_spades(args.steps),
        "rook_env.raw_env": lambda: bench_aec(rook_env.raw_env, args.steps),
        "rook_env.env()": lambda: bench_aec(rook_env.env, args.steps),
        "rook_env.RookState (rules only)": lambda: bench_rules(args.steps),
    }
    if args.pz_wrappers:
        subjects["raw_env + PettingZoo classic wrappers"] = lambda: bench_aec(pz_wrapped, args.steps)
    results: dict[str, float | None] = {}
    # Interleave the repeats so that machine noise hits every subject alike.
    for _ in range(args.repeats):
        for name, fn in subjects.items():
            value = fn()
            if value is not None:
                results[name] = max(results.get(name) or 0.0, value)
            else:
                results.setdefault(name, None)
    ref = results.get("open_spiel spades (reference)")
    print(f"{'subject':40s} {'steps/s':>10s} {'vs spades':>10s}")
    for name, value in results.items():
        if value is None:
            print(f"{name:40s} {'n/a':>10s}   (pip install open-spiel)")
            continue
        ratio = f"{value / ref:.2f}x" if ref else "-"
        print(f"{name:40s} {value:10,.0f} {ratio:>10s}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {"steps": args.steps, "repeats": args.repeats, "machine": platform.platform(),
                 "python": platform.python_version(), "steps_per_second": results},
                f,
                indent=2,
            )


if __name__ == "__main__":
    main()

"""Environment speed: agent steps per second under random legal play.

Every step reads the acting seat's observation and action mask (``env.last()``) and
picks a uniformly random legal action, as an RL collector would. Measured in one run,
so the ratios are meaningful on a noisy shared machine:

- ``rook_env.raw_env``  (the AEC environment, no checks)
- ``rook_env.env()``    (order enforcement, bounds and illegal-action handling, native)
- ``rook_env.RookState`` (the pure rules core: legal actions + apply, no observation)
- ``rook_env.vector.RookVectorEnv`` with N = 1, 64, 1024 tables: every step produces the
  acting seats' observations ``(N, obs_dim)`` and masks ``(N, A)``, and the random legal
  actions are drawn vectorised (``rook_env.vector.sample_legal``); agent steps = N per step.
  Both backends where numba is installed: ``numba`` (the compiled kernels of
  ``rook_env.games.partnership.kernels``, what ``backend="auto"`` takes) and ``numpy`` (numpy alone, its
  actions drawn by the numpy ``pick_legal``)
- ``RookVectorEnv(64, game="call_partner", players=5)``: the other game's engine (one rules
  state per table, numpy, no kernels)
- OpenSpiel ``spades`` (PyPI ``open-spiel``), the reference: observation tensor and
  legal actions read at every step
- optionally (``--pz-wrappers``) ``raw_env`` under PettingZoo's three standard classic
  wrappers, to show what the native checks save.

Each subject is measured ``--repeats`` times, interleaved; the median and the range are
reported. The process is pinned to one CPU core (``--core``), so every subject runs on one core.

Usage::

    python benchmarks/bench_env.py                 # ~2 minutes
    python benchmarks/bench_env.py --steps 50000 --repeats 5 --json bench.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import time
from typing import Any, Callable

import numpy as np

import rook_env
from rook_env.games.partnership import kernels
from rook_env.games.partnership.rules import OVER, RookState
from rook_env.vector import RookVectorEnv, pick_legal, sample_legal

VECTOR_SIZES = (1, 64, 1024)
CALL_PARTNER_TABLES = 64  # call-your-partner's engine steps its tables in a loop: N changes little
CLOCK = time.perf_counter  # --clock cpu: time.process_time (CPU seconds: robust to other processes)
WARMUP_STEPS = 100  # batched steps before timing: the tables' phases spread out from the common start


def bench_aec(make: Callable, steps: int, seed: int = 0) -> float:
    env = make()
    rng = random.Random(seed)
    done = 0
    episode = 0
    start = CLOCK()
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
    return done / (CLOCK() - start)


def bench_rules(steps: int, seed: int = 0) -> float:
    rng = random.Random(seed)
    done = 0
    start = CLOCK()
    while done < steps:
        state = RookState(seed=rng.randrange(1 << 30))
        state.new_game()
        while state.phase != OVER:
            legal = state.legal_actions()
            state.apply(legal[rng.randrange(len(legal))])
            done += 1
    return done / (CLOCK() - start)


def numpy_sample(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """sample_legal without the compiled kernels (the same actions)."""
    return pick_legal(mask, rng.random(mask.shape[0]))


def bench_vector(num_envs: int, steps: int, seed: int = 0, backend: str = "auto", **game: Any) -> float:
    """Agent steps/s of the batched engine: ``num_envs`` agent steps per ``step`` call (``game``: ``game=``,
    ``players=`` and flags, as for ``RookVectorEnv``)."""
    env = RookVectorEnv(num_envs, backend=backend, **game)
    sample = sample_legal if env.backend == "numba" else numpy_sample
    _obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    mask = info["action_mask"]
    for _ in range(WARMUP_STEPS):
        _obs, _rew, _term, _trunc, info = env.step(sample(mask, rng))
        mask = info["action_mask"]
    calls = min(max(steps // num_envs, 50), 2000)
    start = CLOCK()
    for _ in range(calls):
        _obs, _rew, _term, _trunc, info = env.step(sample(mask, rng))
        mask = info["action_mask"]
    return calls * num_envs / (CLOCK() - start)


def bench_spades(steps: int, seed: int = 0) -> float | None:
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game("spades")
    rng = random.Random(seed)
    done = 0
    start = CLOCK()
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
    return done / (CLOCK() - start)


def pz_wrapped():
    from pettingzoo.utils import wrappers

    env = rook_env.raw_env()
    env = wrappers.TerminateIllegalWrapper(env, illegal_reward=-1)
    env = wrappers.AssertOutOfBoundsWrapper(env)
    return wrappers.OrderEnforcingWrapper(env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=60_000, help="agent steps per measurement")
    parser.add_argument("--vector-steps", type=int, default=100_000,
                        help="agent steps per measurement of the batched engine (50 to 2000 batched steps)")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="wall-clock time (default) or this process's CPU time (for a machine shared with other jobs)")
    parser.add_argument("--repeats", type=int, default=3, help="measurements per subject (median and range reported)")
    parser.add_argument("--core", type=int, default=None, help="CPU core to pin to (default: the first allowed)")
    parser.add_argument("--pz-wrappers", action="store_true", help="also measure PettingZoo's classic wrappers")
    parser.add_argument("--json", help="write the results to this file")
    args = parser.parse_args()
    if args.steps <= 0 or args.vector_steps <= 0 or args.repeats <= 0:
        parser.error("--steps, --vector-steps and --repeats must be positive")
    global CLOCK
    CLOCK = time.perf_counter if args.clock == "wall" else time.process_time
    core = None
    if hasattr(os, "sched_setaffinity"):
        core = args.core if args.core is not None else min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {core})

    try:
        import pyspiel  # noqa: F401

        have_spades = True
    except ImportError:
        have_spades = False
        print("open_spiel is not installed: OpenSpiel spades is skipped (pip install open-spiel)")
    subjects: dict[str, Callable[[], float | None]] = {}
    if have_spades:
        subjects["open_spiel spades (reference)"] = lambda: bench_spades(args.steps)
    subjects.update({
        "rook_env.raw_env": lambda: bench_aec(rook_env.raw_env, args.steps),
        "rook_env.env()": lambda: bench_aec(rook_env.env, args.steps),
        "rook_env.RookState (rules only)": lambda: bench_rules(args.steps),
    })
    backends = ("numba", "numpy") if kernels.AVAILABLE else ("numpy",)
    if not kernels.AVAILABLE:
        print("numba is not installed: RookVectorEnv is measured on its numpy backend only (pip install numba)")
    for backend in backends:
        for n in VECTOR_SIZES:
            subjects[f"RookVectorEnv N={n} ({backend})"] = \
                lambda n=n, b=backend: bench_vector(n, args.vector_steps, backend=b)
    # the other game's engine (one rules state per table, no kernels): its cost per decision
    subjects[f"RookVectorEnv call_partner 5p N={CALL_PARTNER_TABLES}"] = \
        lambda: bench_vector(CALL_PARTNER_TABLES, args.steps, backend="numpy", game="call_partner", players=5)
    if args.pz_wrappers:
        subjects["raw_env + PettingZoo classic wrappers"] = lambda: bench_aec(pz_wrapped, args.steps)
    results: dict[str, list[float]] = {name: [] for name in subjects}
    # Interleave the repeats so that machine noise hits every subject alike.
    for _ in range(args.repeats):
        for name, fn in subjects.items():
            results[name].append(fn())
    median = {name: statistics.median(v) for name, v in results.items()}
    ref = median.get("open_spiel spades (reference)")
    raw = median["rook_env.raw_env"]
    print(f"one core ({core}), {args.clock} clock, {args.repeats} interleaved repeats; "
          "agent steps/s: median [min, max]")
    print(f"{'subject':40s} {'median':>11s} {'range':>25s} {'vs spades':>10s} {'vs raw_env':>11s} "
          f"{'vs spades, each repeat [min, max]':>34s}")
    spades = results.get("open_spiel spades (reference)")
    for name, values in results.items():
        m = median[name]
        rng_txt = f"[{min(values):,.0f}, {max(values):,.0f}]"
        vs_ref = f"{m / ref:.2f}x" if ref else "-"
        # each repeat against the spades measurement of the same round (the same machine state)
        paired = [v / s for v, s in zip(values, spades)] if spades else []
        paired_txt = f"[{min(paired):.2f}x, {max(paired):.2f}x]" if paired else "-"
        print(f"{name:40s} {m:11,.0f} {rng_txt:>25s} {vs_ref:>10s} {m / raw:10.2f}x {paired_txt:>34s}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {"steps": args.steps, "vector_steps": args.vector_steps, "repeats": args.repeats, "core": core,
                 "clock": args.clock,
                 "machine": platform.platform(), "python": platform.python_version(),
                 "steps_per_second": {name: {"median": median[name], "min": min(v), "max": max(v), "all": v}
                                      for name, v in results.items()}},
                f,
                indent=2,
            )


if __name__ == "__main__":
    main()

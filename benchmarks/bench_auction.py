"""Time per decision of auction search: ``SearchAgent(auction="search")`` against the default ``SearchAgent``.

    PYTHONPATH=$PWD python benchmarks/bench_auction.py --hands 4

Plays ``--hands`` hands (deal seeds ``--seed``, ``--seed`` + 1, ...) with the auction-searching agent at every seat;
each observation is decided by it and then by the default search agent (the heuristic's auction, the same card
play), one after the other, so both see the same decisions under the same load. Prints, per phase, the decisions
and the median and mean time of each; on a shared machine the ratio is the figure to read.
"""

from __future__ import annotations

import argparse
import statistics
import time

import rook_env
from rook_env.agents.search import SearchAgent
from rook_env.games.partnership.rules import PHASE_NAMES


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hands", type=int, default=4, help="hands to play (default 4)")
    ap.add_argument("--seed", type=int, default=7203000, help="seed of the first deal (default 7203000)")
    args = ap.parse_args()
    if args.hands < 1:
        ap.error(f"--hands must be at least 1, got {args.hands}")
    env = rook_env.raw_env()
    searched, default = SearchAgent(seed=1, auction="search"), SearchAgent(seed=1)
    times: dict[str, tuple[list[float], list[float]]] = {}
    for h in range(args.hands):
        env.reset(seed=args.seed + h)
        while not env.game.is_over:
            obs = env.observe(env.agent_selection)
            a_times, d_times = times.setdefault(PHASE_NAMES[env.game.phase], ([], []))
            t = time.perf_counter()
            action = searched.act(obs)
            a_times.append(time.perf_counter() - t)
            t = time.perf_counter()
            default.act(obs)
            d_times.append(time.perf_counter() - t)
            env.step(action)
    for phase, (a, d) in times.items():
        print(f"{phase}: {len(a)} decisions, auction search median {1e3 * statistics.median(a):.1f} ms "
              f"(mean {1e3 * statistics.mean(a):.1f}), default median {1e3 * statistics.median(d):.2f} ms "
              f"(mean {1e3 * statistics.mean(d):.2f})")
    every_a = [x for a, _ in times.values() for x in a]
    every_d = [x for _, d in times.values() for x in d]
    print(f"all: {len(every_a)} decisions, auction search mean {1e3 * statistics.mean(every_a):.1f} ms, "
          f"default mean {1e3 * statistics.mean(every_d):.1f} ms")


if __name__ == "__main__":
    main()

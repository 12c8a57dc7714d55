"""Decision speed of the search agent for a few sample counts and rollout policies.

    python benchmarks/bench_search.py                                  # samples 8, 24, 48; greedy rollouts
    python benchmarks/bench_search.py --samples 24 --rollouts greedy heuristic --hands 8 --repeats 5

Search plays seats 0 and 2, the heuristic seats 1 and 3, on the same seeded deals for every
setting. Prints, per setting, the median and range over repeats of
  * card-play decisions per second (all of them; a single legal card is played without search),
  * milliseconds per searched hand (one seat's card play over a whole hand),
  * all of the search agent's decisions per second (bidding, discard and trump are the heuristic's).
"""

from __future__ import annotations

import argparse
import statistics
import time

import rook_env
from rook_env.agents.heuristic import HeuristicAgent
from rook_env.agents.search import ROLLOUTS, SearchAgent
from rook_env.rules import PLAY


def run(samples: int, rollout: str, hands: int, seed: int) -> tuple[float, float, float]:
    """(card-play decisions/s, ms per seat-hand of card play, all decisions/s) over ``hands`` hands."""
    env = rook_env.raw_env()
    search = [SearchAgent(seed=s, samples=samples, rollout=rollout) for s in (0, 2)]
    heur = HeuristicAgent()
    t_play = t_all = 0.0
    n_play = n_all = 0
    for h in range(hands):
        env.reset(seed=seed + h)
        game = env.game
        while not game.is_over:
            seat = game.current
            obs = env.observe(env.agent_selection)
            if seat & 1:
                action = heur.act(obs)
            else:
                in_play = game.phase == PLAY
                t0 = time.perf_counter()
                action = search[seat >> 1].act(obs)
                dt = time.perf_counter() - t0
                t_all += dt
                n_all += 1
                if in_play:
                    t_play += dt
                    n_play += 1
            env.step(action)
    return n_play / t_play, 1000.0 * t_play / (2 * hands), n_all / t_all


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--samples", type=int, nargs="+", default=[8, 24, 48])
    p.add_argument("--rollouts", nargs="+", default=["greedy"], choices=ROLLOUTS)
    p.add_argument("--hands", type=int, default=6, help="hands per repeat")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    print(f"search (seats 0, 2) vs heuristic, {args.hands} hands x {args.repeats} repeats; median [min, max]")
    print(f"{'rollout':>10} {'samples':>8} {'play decisions/s':>24} {'ms per seat-hand':>24} {'all decisions/s':>24}")
    for rollout in args.rollouts:
        for samples in args.samples:
            rows = [run(samples, rollout, args.hands, args.seed) for _ in range(args.repeats)]
            cells = []
            for col, fmt in ((0, ".1f"), (1, ".0f"), (2, ".1f")):
                xs = [r[col] for r in rows]
                cells.append(f"{statistics.median(xs):{fmt}} [{min(xs):{fmt}}, {max(xs):{fmt}}]")
            print(f"{rollout:>10} {samples:>8} {cells[0]:>24} {cells[1]:>24} {cells[2]:>24}")


if __name__ == "__main__":
    main()

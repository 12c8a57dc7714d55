"""Search with learned worlds against search with uniform worlds: a duplicate match, and the time per decision.

Both teams are :class:`~rook_env.agents.search.SearchAgent` with the same world count, rollout and
base (the heuristic bids, discards and names trump); they differ only in how worlds are drawn:
``worlds="learned"`` (the shipped holder model, or ``--model``) against ``worlds="uniform"``. The deal
seed (default 23_000) is not one the model was trained or selected on (those are RookState seeds
1,000,000.. and 2,000,000.., see ``tools/fit_inference.py``)::

    PYTHONPATH=$PWD python benchmarks/bench_inference.py --deals 300 --samples 8 --workers 2
"""

from __future__ import annotations

import argparse
import functools
import statistics
import time

import numpy as np

from rook_env.agents.search import SearchAgent
from rook_env.games.partnership.config import make_config
from rook_env.evaluation import play_match
from rook_env.games.partnership.observation import encode
from rook_env.games.partnership.rules import PLAY, RookState


def _search(seed: int | None, samples: int, worlds: str) -> SearchAgent:
    return SearchAgent(seed=seed, samples=samples, worlds=worlds)


def ms_per_decision(worlds: str, samples: int, hands: int) -> float:
    """Mean milliseconds per searched card-play decision over ``hands`` hands (deal seeds 0..) played by four searchers."""
    cfg = make_config()
    agents = [SearchAgent(seed=s, samples=samples, worlds=worlds) for s in range(4)]
    n_actions = RookState(cfg).L.n_actions
    spent, n = 0.0, 0
    for h in range(hands):
        st = RookState(cfg, seed=h)
        st.new_game()
        while not st.is_over:
            legal = st.legal_mask()
            obs = {"observation": encode(st, st.current),
                   "action_mask": np.array([legal >> a & 1 for a in range(n_actions)], np.int8)}
            t = time.perf_counter()
            a = agents[st.current].act(obs)
            if st.phase == PLAY and legal & (legal - 1):
                spent += time.perf_counter() - t
                n += 1
            st.apply(a)
    return 1000 * spent / n


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--deals", type=int, default=300)
    p.add_argument("--samples", type=int, default=8, help="worlds per decision, both sides")
    p.add_argument("--seed", type=int, default=23_000)
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--model", default="learned", help="'learned' (the shipped model) or a holder model .npz")
    p.add_argument("--time-hands", type=int, default=3, help="hands per timing repeat (0: no timing)")
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args()
    if args.time_hands:
        ratios = []
        for _ in range(args.repeats):
            learned_ms = ms_per_decision(args.model, args.samples, args.time_hands)
            uniform_ms = ms_per_decision("uniform", args.samples, args.time_hands)
            ratios.append(learned_ms / uniform_ms)
            print(f"ms per searched decision, {args.samples} worlds: learned {learned_ms:.1f}, uniform {uniform_ms:.1f}")
        print(f"time ratio learned/uniform: median {statistics.median(ratios):.2f} "
              f"(min {min(ratios):.2f}, max {max(ratios):.2f}, {args.repeats} repeats)")
    learned = functools.partial(_search, samples=args.samples, worlds=args.model)
    uniform = functools.partial(_search, samples=args.samples, worlds="uniform")
    t0 = time.perf_counter()
    res = play_match(learned, uniform, deals=args.deals, seed=args.seed, workers=args.workers,
                     names=(f"search {args.samples} learned worlds", f"search {args.samples} uniform worlds"))
    print(res.summary())
    print(f"{args.deals} duplicate deals in {time.perf_counter() - t0:.0f}s")


if __name__ == "__main__":
    main()

"""Search at engine speed: the search agent's decisions per second on the batched engine against the
Python rollouts, at equal world counts, in one run; and a duplicate match between the two.

    PYTHONPATH=$PWD python benchmarks/bench_search.py                         # speed: 24 worlds, 5 repeats
    PYTHONPATH=$PWD python benchmarks/bench_search.py --samples 24 96 --positions 150 --repeats 5
    PYTHONPATH=$PWD python benchmarks/bench_search.py --match 200 --match-seed 7000   # + the duplicate match
    PYTHONPATH=$PWD python benchmarks/bench_search.py --best 4 --repeats 3           # make_agent("best")'s time

Speed: the card-play positions (at least two distinct cards to choose from, so that search runs) of
``--hands`` seeded hands played by the heuristic are collected once; every repeat then times
``SearchAgent(engine="python")`` (today's rollouts, one world and card at a time in Python) and
``SearchAgent(engine="batched")`` (every world x card a table of the batched engine, played out by the
compiled kernels, the worlds drawn by the compiled sampler) on the same positions, one after the other,
with the same seed and world count. Prints decisions per second of each, the ratio per repeat (median [min,
max]) and how often both chose the same card (their worlds differ: the same distribution, other draws; on the
same worlds the two engines' values are equal, ``tests/test_search_batched.py``). The batched engine is
compiled (or its cached kernels loaded) and warmed up before the first repeat.

Match (``--match N``): ``rook_env.evaluation.play_match`` of search on the batched engine against search in
Python (both bid with the heuristic), N duplicate deals from ``--match-seed`` (seeds not used for tuning:
nothing here is tuned), and optionally a second match with more worlds for the batched engine
(``--match-samples``). Prints the mean score difference per deal with its 95% interval.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import time

import numpy as np

import rook_env
from rook_env.agents.heuristic import HeuristicAgent
from rook_env.agents.search import SearchAgent
from rook_env.rules import PLAY


def positions(hands: int, seed: int) -> list[dict]:
    """The searched card-play observations of ``hands`` hands played by the heuristic."""
    env = rook_env.raw_env()
    heur = HeuristicAgent(seed=seed)
    probe = SearchAgent(seed=0, samples=1, engine="python")
    out = []
    for h in range(hands):
        env.reset(seed=seed + h)
        game = env.game
        while not game.is_over:
            obs = env.observe(env.agent_selection)
            if game.phase == PLAY:
                probe.act(obs)
                if probe.last_values is not None and len(probe.last_values) > 1:
                    out.append(obs)
            env.step(heur.act(obs))
    return out


def time_decisions(agent: SearchAgent, obs_list: list[dict]) -> tuple[float, list[dict]]:
    """(decisions per second, the values of each decision)."""
    values = []
    t0 = time.perf_counter()
    for obs in obs_list:
        agent.reset()  # each position decided afresh (no memory), as act_batch's rows with keys of their own
        agent.act(obs)
        values.append(agent.last_values)
    return len(obs_list) / (time.perf_counter() - t0), values


def time_batch(agent: SearchAgent, obs_list: list[dict], batch: int) -> tuple[float, list[dict]]:
    """(decisions per second, the values of each decision) of ``act_batch`` over ``batch`` positions a call
    (each row its own key: no memory, as the fresh agent per decision of :func:`time_decisions`)."""
    obs = np.stack([o["observation"] for o in obs_list])
    masks = np.stack([o["action_mask"] for o in obs_list])
    values = []
    t0 = time.perf_counter()
    for lo in range(0, len(obs_list), batch):
        _, q = agent.act_batch(obs[lo:lo + batch], masks[lo:lo + batch], keys=np.arange(lo, lo + len(obs[lo:lo + batch])),
                               return_values=True)
        values += [{int(a): float(row[a]) for a in np.flatnonzero(np.isfinite(row))} for row in q]
    return len(obs_list) / (time.perf_counter() - t0), values


def summary(xs: list[float], fmt: str = ".1f") -> str:
    return f"{statistics.median(xs):{fmt}} [{min(xs):{fmt}}, {max(xs):{fmt}}]"


def best_times(hands: int, seed: int) -> tuple[float, float]:
    """(ms per decision of ``make_agent("best")`` over all its decisions, ms per card-play decision) in
    ``hands`` hands where it plays seats 0 and 2 and the heuristic seats 1 and 3."""
    from rook_env.agents import make_agent

    env = rook_env.raw_env()
    best = make_agent("best", seed=seed)
    heur = HeuristicAgent(seed=seed)
    t_all = t_play = 0.0
    n_all = n_play = 0
    for h in range(hands):
        env.reset(seed=seed + h)
        game = env.game
        while not game.is_over:
            obs = env.observe(env.agent_selection)
            if game.current & 1:
                env.step(heur.act(obs))
                continue
            in_play = game.phase == PLAY
            t0 = time.perf_counter()
            action = best.act(obs)
            dt = time.perf_counter() - t0
            t_all, n_all = t_all + dt, n_all + 1
            if in_play:
                t_play, n_play = t_play + dt, n_play + 1
            env.step(action)
    return 1000 * t_all / n_all, 1000 * t_play / n_play


def search_agent(seed: int | None, samples: int, engine: str) -> SearchAgent:
    return SearchAgent(seed=seed, samples=samples, engine=engine)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--samples", type=int, nargs="+", default=[24], help="worlds per decision")
    p.add_argument("--hands", type=int, default=8, help="hands whose searched positions are timed")
    p.add_argument("--repeats", type=int, default=5, help="speed repeats (0: no speed table, the match only)")
    p.add_argument("--batch", type=int, default=64, help="decisions per act_batch call")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--match", type=int, default=0, help="duplicate deals of batched vs Python search (0: none)")
    p.add_argument("--match-seed", type=int, default=7000)
    p.add_argument("--match-samples", type=int, default=0,
                   help="also match the batched engine with this many worlds against Python search at --samples[0]")
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--best", type=int, default=0, help="only time make_agent('best') over this many hands per repeat")
    args = p.parse_args()
    if args.best:
        best_times(1, args.seed + 10**6)  # warm-up: the network, the kernels (compiled or loaded from the cache)
        rows = [best_times(args.best, args.seed + 1000 * r) for r in range(args.repeats)]
        print(f"make_agent('best') in seats 0 and 2 against the heuristic, {args.best} hands x {args.repeats} repeats:")
        print(f"  ms per decision (all): {summary([r[0] for r in rows])}; "
              f"ms per card-play decision: {summary([r[1] for r in rows])}")
        return
    obs_list = positions(args.hands, args.seed) if args.repeats else []
    if args.repeats:
        print(f"{len(obs_list)} searched card-play positions from {args.hands} heuristic hands (seed {args.seed}); "
              f"{args.repeats} repeats, median [min, max]; decisions per second of the Python engine (act), the "
              f"batched engine one decision a call (act) and {args.batch} decisions a call (act_batch)")
        print(f"{'worlds':>6} {'python':>20} {'batched act':>22} {'batched act_batch':>22} {'speed-up act':>20} "
              f"{'speed-up act_batch':>20} {'same card':>9}")
        for samples in args.samples:
            old = SearchAgent(seed=1, samples=samples, engine="python")
            new = SearchAgent(seed=1, samples=samples, engine="batched")
            many = SearchAgent(seed=1, samples=samples, engine="batched")
            time_decisions(new, obs_list[:3])  # compile (or load the cached kernels) and warm up
            time_batch(many, obs_list[:3], 3)
            rows, agree = [], 0
            for _ in range(args.repeats):
                r_old, v_old = time_decisions(old, obs_list)
                r_new, v_new = time_decisions(new, obs_list)
                r_many, v_many = time_batch(many, obs_list, args.batch)
                if v_many != [{a: float(np.float32(v)) for a, v in d.items()} for d in v_new]:
                    raise SystemExit("act_batch's values differ from act's")  # it decides as act, to the last bit
                agree += sum(max(a, key=a.get) == max(b, key=b.get) for a, b in zip(v_old, v_new))
                rows.append((r_old, r_new, r_many, r_new / r_old, r_many / r_old))
            cols = [list(c) for c in zip(*rows)]
            print(f"{samples:>6} {summary(cols[0]):>20} {summary(cols[1]):>22} {summary(cols[2]):>22} "
                  f"{summary(cols[3]) + 'x':>20} {summary(cols[4]) + 'x':>20} {agree / (args.repeats * len(obs_list)):>9.0%}")
    if args.match:
        from rook_env.evaluation import play_match

        s0 = args.samples[0]
        pairs = [(s0, s0)] + ([(args.match_samples, s0)] if args.match_samples else [])
        for s_new, s_old in pairs:
            t0 = time.perf_counter()
            res = play_match(functools.partial(search_agent, samples=s_new, engine="batched"),
                             functools.partial(search_agent, samples=s_old, engine="python"),
                             deals=args.match, seed=args.match_seed, workers=args.workers,
                             names=(f"search batched {s_new} worlds", f"search python {s_old} worlds"))
            print(f"match, {args.match} duplicate deals from seed {args.match_seed} "
                  f"({time.perf_counter() - t0:.0f} s):")
            lo, hi = res.ci
            print(f"  {res.team_a} vs {res.team_b}: {res.mean:+.2f} per deal [{lo:+.2f}, {hi:+.2f}] "
                  f"({res.confidence:.0%} interval; deal pairs won A/B/tied {res.pair_wins})")


if __name__ == "__main__":
    main()

"""Search at engine speed: the search agent's decisions per second on the Python engine, on the batched
engine one decision a call (``act``) and many decisions a call (``act_batch``), at equal world counts, in one
run; and a duplicate match of the batched engine against the Python engine.

    PYTHONPATH=$PWD python benchmarks/bench_search.py                         # speed: 24 worlds, 5 repeats
    PYTHONPATH=$PWD python benchmarks/bench_search.py --samples 24 96 --hands 8 --repeats 5 --batch 64
    PYTHONPATH=$PWD python benchmarks/bench_search.py --repeats 0 --match 300 --match-seed 7100   # the match only
    PYTHONPATH=$PWD python benchmarks/bench_search.py --best 4 --repeats 3           # make_agent("best")'s time
    PYTHONPATH=$PWD python benchmarks/bench_search.py --best 4 --best-specs best "search:ppo"  # two specs, alternating

Speed: the card-play positions (at least two distinct cards to choose from, so that search runs) of
``--hands`` seeded hands played by the heuristic are collected once; every repeat then times, on the same
positions, one after the other, with the same seed and world count: ``SearchAgent(engine="python")`` (the
rollouts one world and card at a time in Python), ``SearchAgent(engine="batched")`` with ``act`` (one
decision a call: every world x card a table of the batched engine, played out by compiled kernels, the worlds
counted and drawn by compiled code) and with ``act_batch`` over ``--batch`` positions a call (the tables of all
of them loaded, played out and scored together). Each position is decided afresh (no memory of the hand).
Prints decisions per second of each (wall clock) and the speed-ups over the Python engine per repeat, by wall
clock and by this process's CPU time (on a shared machine the CPU time is the steadier measure), median [min,
max]; checks that ``act_batch`` gave exactly ``act``'s values; and says how often the batched and Python
engines chose the same card (their worlds are other draws of the same distribution; on the same worlds their
values are equal, ``tests/test_search_batched.py``). The batched engine is compiled (or its cached kernels
loaded) and warmed up before the first repeat.

Match (``--match N``): ``rook_env.evaluation.play_match`` of search on the batched engine against search in
Python (both bid with the heuristic), N duplicate deals from ``--match-seed`` (seeds not used for tuning:
nothing here is tuned), and optionally a second match with more worlds for the batched engine
(``--match-samples``). Prints the mean score difference per deal with its 95% interval. (The batched engine's
``act`` decides exactly as its ``act_batch``: ``tests/test_search_act_batch.py``.)
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
from rook_env.games.partnership.rules import PLAY


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


class Timed:
    """Wall-clock and CPU seconds of a block (``with Timed() as t: ...``; then ``t.wall``, ``t.cpu``)."""

    def __enter__(self) -> Timed:
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall, self.cpu = time.perf_counter() - self.wall, time.process_time() - self.cpu


def time_decisions(agent: SearchAgent, obs_list: list[dict]) -> tuple[Timed, list[dict]]:
    """(the time of ``act`` on every position, the values of each decision)."""
    values = []
    with Timed() as t:
        for obs in obs_list:
            agent.reset()  # each position decided afresh (no memory), as act_batch's rows with keys of their own
            agent.act(obs)
            values.append(agent.last_values)
    return t, values


def time_batch(agent: SearchAgent, obs_list: list[dict], batch: int) -> tuple[Timed, list[dict]]:
    """(the time of ``act_batch`` over ``batch`` positions a call, the values of each decision); each row has
    a key of its own: no memory, as the fresh decisions of :func:`time_decisions`."""
    obs = np.stack([o["observation"] for o in obs_list])
    masks = np.stack([o["action_mask"] for o in obs_list])
    q = np.empty(masks.shape, np.float32)
    with Timed() as t:
        for lo in range(0, len(obs_list), batch):
            hi = min(lo + batch, len(obs_list))
            q[lo:hi] = agent.act_batch(obs[lo:hi], masks[lo:hi], keys=np.arange(lo, hi), return_values=True)[1]
    return t, [{int(a): float(row[a]) for a in np.flatnonzero(np.isfinite(row))} for row in q]


def summary(xs: list[float], fmt: str = ".1f") -> str:
    """Median [min, max]."""
    return f"{statistics.median(xs):{fmt}} [{min(xs):{fmt}}, {max(xs):{fmt}}]"


def best_times(hands: int, seed: int, spec: str = "best") -> tuple[float, float, float]:
    """(ms per decision of ``make_agent(spec)`` over all its decisions, ms per card-play decision, ms per
    bid, discard or trump with a choice) in ``hands`` hands where it plays seats 0 and 2 and the heuristic seats
    1 and 3."""
    from rook_env.agents import make_agent

    env = rook_env.raw_env()
    best = make_agent(spec, seed=seed)
    heur = HeuristicAgent(seed=seed)
    t_all = t_play = t_auction = 0.0
    n_all = n_play = n_auction = 0
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
            elif np.count_nonzero(obs["action_mask"]) > 1:
                t_auction, n_auction = t_auction + dt, n_auction + 1
            env.step(action)
    return 1000 * t_all / n_all, 1000 * t_play / n_play, 1000 * t_auction / max(n_auction, 1)


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
    p.add_argument("--best", type=int, default=0,
                   help="only time make_agent(spec) for each of --best-specs over this many hands per repeat")
    p.add_argument("--best-specs", nargs="+", default=["best"],
                   help="with --best: the agent specs timed, one after the other in every repeat (the same hands)")
    args = p.parse_args()
    if args.best:
        for spec in args.best_specs:  # warm-up: the network, the kernels (compiled or loaded from the cache)
            best_times(1, args.seed + 10**6, spec)
        rows = {spec: [] for spec in args.best_specs}
        for r in range(args.repeats):  # alternating, so that a change of load falls on every spec alike
            for spec in args.best_specs:
                rows[spec].append(best_times(args.best, args.seed + 1000 * r, spec))
        for spec, times in rows.items():
            print(f"make_agent({spec!r}) in seats 0 and 2 against the heuristic, {args.best} hands x "
                  f"{args.repeats} repeats:")
            print(f"  ms per decision (all): {summary([t[0] for t in times])}; "
                  f"ms per card-play decision: {summary([t[1] for t in times])}; "
                  f"ms per bid, discard or trump with a choice: {summary([t[2] for t in times])}")
        return
    obs_list = positions(args.hands, args.seed) if args.repeats else []
    if args.repeats:
        print(f"{len(obs_list)} searched card-play positions from {args.hands} heuristic hands (seed {args.seed}); "
              f"{args.repeats} repeats, median [min, max]; decisions per second of the Python engine (act), the "
              f"batched engine one decision a call (act) and {args.batch} decisions a call (act_batch)")
        print(f"{'worlds':>6} {'python /s':>19} {'act /s':>21} {'act_batch /s':>21} {'act x (wall)':>18} "
              f"{'act_batch x (wall)':>19} {'act x (CPU)':>18} {'act_batch x (CPU)':>19} {'same card':>9}")
        for samples in args.samples:
            old = SearchAgent(seed=1, samples=samples, engine="python")
            new = SearchAgent(seed=1, samples=samples, engine="batched")
            many = SearchAgent(seed=1, samples=samples, engine="batched")
            time_decisions(new, obs_list[:3])  # compile (or load the cached kernels) and warm up
            time_batch(many, obs_list[:3], 3)
            rows, agree = [], 0
            n = len(obs_list)
            for _ in range(args.repeats):
                t_old, v_old = time_decisions(old, obs_list)
                t_new, v_new = time_decisions(new, obs_list)
                t_many, v_many = time_batch(many, obs_list, args.batch)
                if v_many != [{a: float(np.float32(v)) for a, v in d.items()} for d in v_new]:
                    raise SystemExit("act_batch's values differ from act's")  # it decides as act, to the last bit
                agree += sum(max(a, key=a.get) == max(b, key=b.get) for a, b in zip(v_old, v_new))
                rows.append((n / t_old.wall, n / t_new.wall, n / t_many.wall, t_old.wall / t_new.wall,
                             t_old.wall / t_many.wall, t_old.cpu / t_new.cpu, t_old.cpu / t_many.cpu))
            c = [summary(list(col)) for col in zip(*rows)]
            print(f"{samples:>6} {c[0]:>19} {c[1]:>21} {c[2]:>21} {c[3]:>18} {c[4]:>19} {c[5]:>18} {c[6]:>19} "
                  f"{agree / (args.repeats * n):>9.0%}")
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

"""RLlib sampling throughput on Rook with 1 and 2 env runners (local Ray), and their ratio.

    python benchmarks/bench_rllib.py [--steps 2000] [--repeats 3] [--runners 1 2]

Each env runner is a Ray actor holding one RookMultiAgentEnv and the shared RookMaskedPPOModule
([256, 256], as configs/rllib_laptop.yaml) with a heuristic opponent in half the episodes. One round
asks every runner for ``--steps`` env steps at once (``EnvRunnerGroup.foreach_env_runner``); the figure
is env steps per second of wall time (median and range over ``--repeats`` rounds after a warm-up).
The ratio says how sampling scales with runners on this machine (on a cluster: one runner per CPU).
"""

from __future__ import annotations

import argparse
import statistics
import time


def measure(n_runners: int, steps: int, repeats: int) -> list[float]:
    from rook_env.rllib import rook_ppo_config

    config = rook_ppo_config(num_env_runners=n_runners, hidden=[256, 256], seed=0,
                             opponents={"heuristic": ("heuristic", 0.5)})
    algo = config.build_algo()
    group = algo.env_runner_group

    def sample_round() -> float:
        t = time.perf_counter()
        episodes = group.foreach_env_runner(lambda r: r.sample(num_timesteps=steps), local_env_runner=False)
        done = sum(sum(len(e) for e in eps) for eps in episodes)  # env steps actually sampled
        return done / (time.perf_counter() - t)

    sample_round()  # warm-up: actor start, first forward passes
    rates = [sample_round() for _ in range(repeats)]
    algo.stop()
    return rates


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=2000, help="env steps per runner per round")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--runners", type=int, nargs="+", default=[1, 2])
    args = ap.parse_args()

    import ray

    ray.init(include_dashboard=False, log_to_driver=False)
    print(f"Ray resources: {ray.cluster_resources().get('CPU')} CPUs")
    medians = {}
    for n in args.runners:
        rates = measure(n, args.steps, args.repeats)
        medians[n] = statistics.median(rates)
        print(f"{n} env runner(s): {medians[n]:8.0f} env steps/s  (median of {args.repeats}; "
              f"range {min(rates):.0f}-{max(rates):.0f})", flush=True)
    ray.shutdown()
    base = medians[args.runners[0]]
    for n in args.runners[1:]:
        print(f"ratio {n} runners / {args.runners[0]}: {medians[n] / base:.2f}x")


if __name__ == "__main__":
    main()

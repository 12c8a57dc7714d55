"""RLlib sampling throughput on Rook per env runner: the multi-agent path and the vector env runner, side by side.

    PYTHONPATH=$PWD python benchmarks/bench_rllib.py [--steps 2000] [--repeats 3] [--tables 128] [--runners 1]

Two configurations, measured in one run on a local Ray, each with ``--runners`` remote env runners (Ray
actors, one CPU each), the shared RookMaskedPPOModule ([256, 256], as configs/rllib_laptop.yaml) and a
heuristic opponent in half the hands:

- ``multi-agent``: today's ``rook_ppo_config`` (RookMultiAgentEnv, one table per runner; RLlib steps one seat
  per ``env.step``);
- ``vector``: ``rook_vector_ppo_config`` (RookVectorEnvRunner: ``--tables`` tables of the batched engine per
  runner, one forward pass per step for all learner seats, the heuristic in one ``act_batch``).

One round asks every runner for ``--steps`` learner decisions at once (``foreach_env_runner``). The figure is
env steps per second of wall time per runner, where an env step is one decision at one table by any seat
(learner or opponent: what a MultiAgentEpisode's length counts), median and range over ``--repeats`` rounds
after a warm-up; the learner decisions per second (what PPO trains on) are printed too. The last line is the
ratio vector / multi-agent of the medians.
"""

from __future__ import annotations

import argparse
import statistics
import time


def measure(kind: str, n_runners: int, steps: int, repeats: int, tables: int) -> tuple[list[float], list[float]]:
    """(env steps/s per runner, learner decisions/s per runner) for each round."""
    if kind == "multi-agent":
        from rook_env.rllib import rook_ppo_config

        config = rook_ppo_config(num_env_runners=n_runners, hidden=[256, 256], seed=0,
                                 opponents={"heuristic": ("heuristic", 0.5)})
    else:
        from rook_env.rllib.vector import rook_vector_ppo_config

        config = rook_vector_ppo_config(num_env_runners=n_runners, hidden=[256, 256], seed=0, tables=tables,
                                        opponents={"heuristic": 0.5})
    algo = config.build_algo()
    group = algo.env_runner_group

    def sample_round() -> tuple[float, float]:
        t = time.perf_counter()
        if kind == "multi-agent":
            out = group.foreach_env_runner(lambda r: r.sample(num_timesteps=steps), local_env_runner=False)
            env_steps = sum(sum(len(e) for e in eps) for eps in out)  # env steps: every seat's
            decisions = sum(len(sa) for eps in out for e in eps for aid, sa in e.agent_episodes.items()
                            if e.module_for(aid) == "shared")  # the shared module's (learner) steps
        else:
            def run(r):
                before = r.engine_steps()
                eps = r.sample(num_timesteps=steps)
                return r.engine_steps() - before, sum(len(e) for e in eps)

            out = group.foreach_env_runner(run, local_env_runner=False)
            env_steps, decisions = sum(o[0] for o in out), sum(o[1] for o in out)
        dt = time.perf_counter() - t
        return env_steps / dt / n_runners, decisions / dt / n_runners

    sample_round()  # warm-up: actor start, numba compilation, first forward passes
    rounds = [sample_round() for _ in range(repeats)]
    algo.stop()
    return [r[0] for r in rounds], [r[1] for r in rounds]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=2000, help="learner decisions per runner per round")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--tables", type=int, default=128, help="tables per vector env runner")
    ap.add_argument("--runners", type=int, default=1, help="remote env runners per configuration")
    ap.add_argument("--old-steps", type=int, default=None,
                    help="decisions per round for the multi-agent path (default: --steps; it is slow)")
    args = ap.parse_args()

    import ray

    ray.init(include_dashboard=False, log_to_driver=False)
    print(f"Ray resources: {ray.cluster_resources().get('CPU')} CPUs; {args.runners} env runner(s) per row")
    medians = {}
    for kind, steps in (("multi-agent", args.old_steps or args.steps), ("vector", args.steps)):
        env_rates, decision_rates = measure(kind, args.runners, steps, args.repeats, args.tables)
        medians[kind] = statistics.median(env_rates)
        label = kind if kind == "multi-agent" else f"vector ({args.tables} tables)"
        print(f"{label:22s} {medians[kind]:9.0f} env steps/s per runner (range {min(env_rates):.0f}-"
              f"{max(env_rates):.0f}); {statistics.median(decision_rates):8.0f} learner decisions/s "
              f"(median of {args.repeats})", flush=True)
    ray.shutdown()
    print(f"ratio vector / multi-agent: {medians['vector'] / medians['multi-agent']:.1f}x")


if __name__ == "__main__":
    main()

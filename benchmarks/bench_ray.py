"""Collection on Ray against collection in-process, and what the learner can consume (docs/cluster.md; figures
in docs/results.md, Scale-out).

    PYTHONPATH=$PWD python benchmarks/bench_ray.py                          # configs/ppo.yaml, 3 repeats
    PYTHONPATH=$PWD python benchmarks/bench_ray.py --repeats 5 --set num_envs=64

Needs Ray (``pip install 'ray[default]'``). It starts a two-node Ray cluster on this machine
(:class:`rook_env.training.ray_cluster.LocalCluster`: one CPU per node, a token of its own) and measures, in one
run, interleaved in every repeat (after one warm-up rollout each):

* ``in-process``: the in-process :class:`~rook_env.training.collection.Collector` (what train.py runs without a
  ``ray`` section), learner decisions / collection time;
* ``ray x1``: one Ray collector actor (:class:`~rook_env.training.ray_collection.RayCollectors`), learner decisions
  received by the driver / wall time in steady state (:func:`ray_rate`), weights put in the object store for every
  rollout as in training;
* ``ray x2``: two Ray collectors, one on each node (the placement is logged), the same way;
* ``receiving``: the driver's own cost of taking rollouts in (``ray.get`` and :func:`~rook_env.training.ray_collection.unpack`),
  decisions / seconds: what bounds a learner whose update is fast (a GPU);
* ``learner``: the PPO update (the config's epochs and minibatches) on a rollout, decisions / update time: the
  rate of collection the learner can consume.

Figures: the median [min, max] over repeats, and the ratios ``ray x1 / in-process`` and ``ray x2 / ray x1`` per
repeat. No learner runs during the collection figures (the driver only receives), so they are what the
collectors deliver; in training the learner competes for the same cores on a machine this small.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
import torch

from rook_env import raw_env
from rook_env.agents.learned.model import ActorCritic
from rook_env.training import make_train_config
from rook_env.training.collection import Collector
from rook_env.training.ppo import PPOSettings, make_optimizer, ppo_update

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def rate(fn, rollouts: int) -> float:
    """Decisions per second of ``rollouts`` calls of ``fn`` (the in-process collector's collect)."""
    t0, n = time.perf_counter(), 0
    for _ in range(rollouts):
        n += len(fn()[0]["act"])
    return n / (time.perf_counter() - t0)


def ray_rate(collectors, model: ActorCritic, rollouts: int) -> float:
    """Decisions per second that ``collectors`` (a RayCollectors) deliver in steady state: the first rollout of each
    collector is taken untimed (it may have been finished before), then ``rollouts`` more are timed from there;
    at the end the rollouts in flight are waited for (not taken), so that no collector works during the next
    measurement."""
    import ray

    n_collectors = collectors.cfg.ray.collectors
    for _ in range(n_collectors):
        collectors.collect(model, 0.0)
    t0, n, receive = time.perf_counter(), 0, 0.0
    for _ in range(rollouts):
        batch, stats = collectors.collect(model, 0.0)
        n += len(batch["act"])
        receive += stats["ray"]["receive_seconds"]
    seconds = time.perf_counter() - t0
    ray.wait(list(collectors.pending), num_returns=len(collectors.pending))
    RECEIVE.append(n / receive)
    return n / seconds


RECEIVE: list[float] = []  # decisions per second of the driver's receiving (ray.get and unpacking), per measurement


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--config", default=os.path.join(REPO, "configs", "ppo.yaml"))
    p.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--rollouts", type=int, default=6,
                   help="rollouts per measurement (ray x2: twice as many); a rollout's rate varies by a third")
    args = p.parse_args()
    import ray

    from rook_env.training.ray_cluster import CLUSTER_ENV, LocalCluster

    for k, v in CLUSTER_ENV.items():  # this driver joins the cluster in the nodes' environment
        os.environ.setdefault(k, v)
    from rook_env.training.ray_collection import NAMESPACE, RayCollectors

    cfg = make_train_config(args.config, ["league=[]", *args.set])
    torch.set_num_threads(cfg.torch_threads)
    env = raw_env()
    obs_dim = env.observation_space("player_0")["observation"].shape[0]
    model = ActorCritic(obs_dim, env.action_space("player_0").n, cfg.hidden,
                        env.state_space.shape[0] if cfg.central_critic else None, cfg.critic_hidden).eval()
    optimizer = make_optimizer(model, cfg.lr, eps=1e-5)
    rng = np.random.default_rng(0)
    print(f"config {os.path.relpath(args.config, REPO)} {' '.join(args.set)}: {cfg.num_envs} tables, rollouts of "
          f">= {cfg.rollout_decisions} decisions, hidden {cfg.hidden}, critic {cfg.critic_hidden or cfg.hidden}, "
          f"{cfg.update_epochs} epochs of minibatches of {cfg.minibatch_size}; torch threads {cfg.torch_threads}; "
          f"{os.cpu_count()} CPUs")
    results: dict[str, list[float]] = {k: [] for k in ("in-process", "ray x1", "ray x2", "learner")}
    with LocalCluster(nodes=2, cpus=1) as cluster:
        ray.init(address=cluster.address, namespace=NAMESPACE, log_to_driver=False, _node_ip_address="127.0.0.1")
        local = Collector(cfg, torch.device("cpu"), rng)
        # half a CPU each, so that one and two collectors both stay placed (the second one on each node)
        one, two = (RayCollectors(make_train_config(args.config, ["league=[]", *args.set, f"ray.collectors={n}",
                                                                  "ray.num_cpus=0.5"]), rng) for n in (1, 2))
        batch = local.collect(model, 0.0)[0]  # warm-ups (the actors start in their first collect)
        ray_rate(one, model, 1)
        ray_rate(two, model, 2)
        ppo_update(model, optimizer, batch, PPOSettings.of(cfg), cfg.ent_coef)
        for r in range(args.repeats):
            results["in-process"].append(rate(lambda: local.collect(model, 0.0), args.rollouts))
            results["ray x1"].append(ray_rate(one, model, args.rollouts))
            results["ray x2"].append(ray_rate(two, model, 2 * args.rollouts))
            t0 = time.perf_counter()
            ppo_update(model, optimizer, batch, PPOSettings.of(cfg), cfg.ent_coef)
            results["learner"].append(len(batch["act"]) / (time.perf_counter() - t0))
            print(f"repeat {r + 1}: " + ", ".join(f"{k} {v[-1]:,.0f}" for k, v in results.items()), flush=True)
        one.close()
        two.close()
        ray.shutdown()

    def fmt(v: list[float]) -> str:
        return f"{statistics.median(v):>9,.0f} [{min(v):,.0f}, {max(v):,.0f}]"

    print("\ndecisions/s, median [min, max] over", args.repeats, "repeats")
    for k, v in results.items():
        print(f"  {k:<11} {fmt(v)}")
    print(f"  {'receiving':<11} {fmt(RECEIVE)}   (the driver's ray.get and unpacking alone, every Ray measurement)")
    r1 = [a / b for a, b in zip(results["ray x1"], results["in-process"])]
    r2 = [a / b for a, b in zip(results["ray x2"], results["ray x1"])]
    print(f"  ray x1 / in-process  {statistics.median(r1):.2f} [{min(r1):.2f}, {max(r1):.2f}]")
    print(f"  ray x2 / ray x1      {statistics.median(r2):.2f} [{min(r2):.2f}, {max(r2):.2f}]")


if __name__ == "__main__":
    main()

"""Training throughput: learner decisions per second for collection and for the PPO update, separately.

    python benchmarks/bench_train.py                        # default config's network and batch sizes
    python benchmarks/bench_train.py --config configs/smoke.yaml --iterations 2 --set num_envs=32

Collection is measured with the current untrained policy against the configured opponent mix
(pool snapshots need training history, so ``pool`` games count as self-play here). The update is
the full PPO update (``update_epochs`` passes over the rollout), reported as decisions processed
per second of update time, i.e. rollout size x epochs / seconds.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402

import train  # noqa: E402
from rook_env.agents.ppo_model import ActorCritic  # noqa: E402
from rook_env import raw_env  # noqa: E402


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--config", default=os.path.join(os.path.dirname(__file__), "..", "configs", "default.yaml"))
    p.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE")
    p.add_argument("--iterations", type=int, default=3)
    args = p.parse_args(argv)
    cfg = train.make_train_config(args.config, args.set)
    torch.set_num_threads(cfg.torch_threads)
    device = train.pick_device(cfg.device)
    rng = train.seed_everything(cfg.seed)
    env = raw_env(**cfg.env_flags)
    obs_dim = env.observation_space("player_0")["observation"].shape[0]
    critic_dim = env.state_space.shape[0] if cfg.central_critic else None
    model = ActorCritic(obs_dim, env.action_space("player_0").n, cfg.hidden, critic_dim).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr, eps=1e-5)
    col = train.Collector(cfg, device, rng)
    print(f"device {device}, torch threads {cfg.torch_threads}, num_envs {cfg.num_envs}, "
          f"rollout {cfg.rollout_decisions}, hidden {cfg.hidden}, central critic {cfg.central_critic}, "
          f"mix {cfg.opponent_mix}")
    c_dec = c_sec = u_dec = u_sec = 0.0
    env_sec = net_sec = 0.0
    for it in range(args.iterations):
        t0 = time.perf_counter()
        model.eval()
        batch, st = col.collect(model, 0.0)
        t1 = time.perf_counter()
        n = len(batch["act"])
        train.ppo_update(model, opt, batch, cfg, cfg.ent_coef)
        if device.type == "cuda":
            torch.cuda.synchronize()
        t2 = time.perf_counter()
        print(f"iteration {it}: {n} decisions, collect {n / (t1 - t0):,.0f} dec/s "
              f"(env+agents {st['t_env']:.2f}s, network {st['t_net']:.2f}s), "
              f"update {n * cfg.update_epochs / (t2 - t1):,.0f} dec/s ({t2 - t1:.2f}s)")
        if it > 0 or args.iterations == 1:  # the first iteration warms up
            c_dec += n
            c_sec += t1 - t0
            u_dec += n * cfg.update_epochs
            u_sec += t2 - t1
            env_sec += st["t_env"]
            net_sec += st["t_net"]
    print(f"\ncollection: {c_dec / c_sec:,.0f} learner decisions/s  (env + scripted agents {env_sec / c_sec:.0%}, "
          f"batched network {net_sec / c_sec:.0%})")
    print(f"update:     {u_dec / u_sec:,.0f} decisions/s  ({cfg.update_epochs} epochs, minibatch {cfg.minibatch_size})")
    per_iter = c_sec / max(1, args.iterations - 1) + u_sec / max(1, args.iterations - 1)
    print(f"overall:    {c_dec / (c_sec + u_sec):,.0f} learner decisions/s of training ({per_iter:.1f}s per iteration)")


if __name__ == "__main__":
    main()

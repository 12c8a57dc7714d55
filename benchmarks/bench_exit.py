"""What bounds expert iteration (docs/training.md, "Expert iteration"): search labels per second against the PPO
loop's decisions per second, and what the distillation loss adds to the update.

    python benchmarks/bench_exit.py                          # configs/ppo.yaml's network, 3 repeats
    python benchmarks/bench_exit.py --hands 4 --repeats 5

* labels, hand by hand (``act``): search on top of the shipped network plays ``--hands`` hands
  (rook_env.training.labels.search, one process, ``exit.samples`` worlds); searched decisions per second of wall
  time;
* labels, batched (``act_batch``, the online source's): the shipped network plays ``exit.tables`` tables and
  search rates its card plays (rook_env.training.labels.online.TableLabeller, one process), ``--steps`` steps
  (after one warm-up step: numba's compilation); searched decisions per second;
* update: one PPO update of a rollout of ``rollout_decisions`` (observations and masks of real searched hands,
  actions drawn among the legal ones, advantages and returns drawn at random: the work does not depend on them),
  without and with the distillation loss (``exit.batch`` labelled decisions per minibatch); decisions per second
  (rollout / update seconds). Interleaved, median [min, max] over repeats.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from rook_env.agents.learned.model import ActorCritic, load_checkpoint, model_from_checkpoint
from rook_env.training import config as config_mod
from rook_env.training.expert import ExpertIteration, LabelBuffer, labelled
from rook_env.training.labels.online import TableLabeller
from rook_env.training.ppo import PPOSettings, make_optimizer, ppo_update
from rook_env.training.labels.search import label_hands

SHIPPED = os.path.join(ROOT, "rook_env", "agents", "checkpoints", "ppo_default.pt")


def spread(xs: list[float]) -> str:
    return f"{statistics.median(xs):,.0f} [{min(xs):,.0f}, {max(xs):,.0f}]"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", default=os.path.join(ROOT, "configs", "ppo.yaml"))  # with the exit section's defaults
    p.add_argument("--hands", type=int, default=2, help="hands searched per repeat")
    p.add_argument("--steps", type=int, default=200, help="batched labeller steps per repeat")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--seed", type=int, default=7_500_000)
    a = p.parse_args()
    cfg = config_mod.make_train_config(a.config, ["exit.source=online"])
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    labels, batched, upd_off, upd_on = [], [], [], []
    records = []
    net = model_from_checkpoint(load_checkpoint(SHIPPED), SHIPPED).eval()
    labeller = TableLabeller(net, cfg.exit.tables, a.seed, cfg.exit.samples, {}, cfg.exit.worlds)
    labeller.step()  # numba compiles the batched search here
    for r in range(a.repeats):
        t0 = time.time()
        rec = label_hands(a.hands, a.seed + r * a.hands, samples=cfg.exit.samples)
        n = int(np.isfinite(rec["q"]).any(1).sum())
        labels.append(n / (time.time() - t0))
        records.append(rec)
        t0, n0 = time.time(), labeller.rated
        for _ in range(a.steps):
            labeller.step()
        batched.append((labeller.rated - n0) / (time.time() - t0))
        obs = np.concatenate([x["obs"] for x in records])
        mask = np.concatenate([x["mask"] for x in records])
        cin = np.concatenate([x["cin"] for x in records])
        idx = rng.integers(0, len(obs), cfg.rollout_decisions)
        act = np.array([rng.choice(np.flatnonzero(m)) for m in mask[idx]])
        batch = {"obs": obs[idx], "mask": mask[idx], "cin": cin[idx], "act": act,
                 "logp": np.full(len(idx), -1.0, np.float32), "val": rng.normal(size=len(idx)).astype(np.float32),
                 "adv": rng.normal(size=len(idx)).astype(np.float32),
                 "ret": rng.normal(size=len(idx)).astype(np.float32)}
        model = ActorCritic(obs.shape[1], mask.shape[1], cfg.hidden, cin.shape[1], cfg.critic_hidden)
        buf = LabelBuffer(cfg.exit.buffer)
        for x in records:
            buf.add(labelled(x, cin.shape[1]))
        ex = ExpertIteration.__new__(ExpertIteration)  # the loop's loss without a label source
        ex.cfg, ex.gen, ex.device, ex.buffer = cfg, torch.Generator().manual_seed(0), torch.device("cpu"), buf
        ex.ref = None  # no KL
        for extra, out in ((None, upd_off), (ex.loss(), upd_on)):
            opt = make_optimizer(model, cfg.lr)
            t0 = time.time()
            ppo_update(model, opt, batch, PPOSettings.of(cfg), cfg.ent_coef, torch.Generator().manual_seed(0), extra)
            out.append(len(idx) / (time.time() - t0))
        print(f"repeat {r + 1}: labels/s {labels[-1]:.1f} by act, {batched[-1]:.1f} by act_batch; update decisions/s {upd_off[-1]:,.0f} without, "
              f"{upd_on[-1]:,.0f} with the distillation loss", flush=True)
    print(f"search labels/s (one process, {cfg.exit.samples} worlds): {spread(labels)} hand by hand (act), "
          f"{spread(batched)} batched ({cfg.exit.tables} tables, act_batch); ratio "
          f"{statistics.median(b / x for b, x in zip(batched, labels)):.1f}x (median of the repeats')")
    print(f"PPO update decisions/s: {spread(upd_off)} without, {spread(upd_on)} with the distillation loss "
          f"(batch {cfg.exit.batch} per minibatch of {cfg.minibatch_size})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

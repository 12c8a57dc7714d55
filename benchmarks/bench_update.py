"""The PPO update's cost per decision: rook_env.training.ppo as it is against ppo.py at ``--old-ref``, in one run.

    PYTHONPATH=$PWD python benchmarks/bench_update.py                      # configs/ppo.yaml, 6 repeats
    PYTHONPATH=$PWD python benchmarks/bench_update.py --old-ref 1784ed1 --repeats 10
    PYTHONPATH=$PWD python benchmarks/bench_update.py --init rook_env/agents/checkpoints/ppo_default.pt  # trained

One rollout of the config (the in-process collector, an untrained policy) is updated by both versions, interleaved
in each repeat (the first repeat is a warm-up), each from the same copy of the model and optimizer with the same
minibatch shuffle, on ``torch_threads`` threads (1: the learner's core). The old side's network computes its
gradients in float32 (what ``--old-ref`` did), the new side's as the config's ``grad_precision`` says (auto:
bfloat16 products on a CPU that has them in hardware). Figures: update seconds per 1M decisions (rollout
decisions / update time; ``update_epochs`` passes), median [min, max] over the timed repeats, the ratio old /
new per repeat, and how far apart the two updated policies end: the mean KL between them on the rollout's
observations, against the KL that two float32 updates differing only in their minibatch shuffle end apart (the
update's own noise; the same weights, KL 0, when only the speed changed).
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from rook_env import raw_env
from rook_env.agents.learned.model import ActorCritic, load_checkpoint, model_from_checkpoint
from rook_env.training import make_train_config, ppo
from rook_env.training.collection import Collector

REPO = Path(__file__).resolve().parents[1]


def old_ppo(ref: str):
    """rook_env/training/ppo.py at git ``ref``, as a module of the package (its relative imports resolve)."""
    text = subprocess.run(["git", "show", f"{ref}:rook_env/training/ppo.py"], cwd=REPO, capture_output=True,
                          text=True, check=True).stdout
    path = Path(tempfile.mkdtemp()) / "ppo_old.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("rook_env.training.ppo_old", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--config", default=str(REPO / "configs" / "ppo.yaml"))
    p.add_argument("--old-ref", default="1784ed1", help="the commit whose ppo.py is the old side")
    p.add_argument("--repeats", type=int, default=6)
    p.add_argument("--init", default="", help="start from this checkpoint's network (default: the config's, untrained)")
    a = p.parse_args()
    cfg = make_train_config(a.config, [])
    torch.set_num_threads(cfg.torch_threads)
    env = raw_env(**cfg.env_flags)
    if a.init:  # a trained network (its own layer sizes): updates of a policy that has learned something
        model = model_from_checkpoint(load_checkpoint(a.init), a.init)
    else:
        model = ActorCritic(env.observation_space("player_0")["observation"].shape[0],
                            env.action_space("player_0").n, cfg.hidden,
                            env.state_space.shape[0] if cfg.central_critic else None, cfg.critic_hidden)
    collector = Collector(cfg, torch.device("cpu"), np.random.default_rng(cfg.seed))
    collector.pool.append(copy.deepcopy(model.actor).eval())
    batch, _ = collector.collect(model, 0.0)
    n = len(batch["act"])
    settings = ppo.PPOSettings.of(cfg)
    sides = {"old": old_ppo(a.old_ref).ppo_update, "new": ppo.ppo_update}
    precision = {"old": "float32", "new": cfg.grad_precision}
    obs, mask = torch.as_tensor(batch["obs"]), torch.as_tensor(batch["mask"])

    def updated(name: str, shuffle: int) -> tuple[ActorCritic, float]:
        m = copy.deepcopy(model)
        m.set_grad_precision(precision[name])
        opt = ppo.make_optimizer(m, cfg.lr, eps=1e-5)
        gen = torch.Generator()
        gen.manual_seed(shuffle)
        t0 = time.perf_counter()
        sides[name](m, opt, batch, settings, cfg.ent_coef, gen)
        return m, time.perf_counter() - t0

    def kl(x: ActorCritic, y: ActorCritic) -> float:
        with torch.no_grad():
            lx, ly = x.dist(obs, mask).log_probs, y.dist(obs, mask).log_probs
            return float(torch.where(mask, lx.exp() * (lx - ly), torch.zeros_like(lx)).sum(-1).mean())

    per_m: dict[str, list[float]] = {k: [] for k in sides}
    apart, noise = [], []
    for r in range(a.repeats + 1):
        models = {}
        for name in sides:
            models[name], seconds = updated(name, r)
            if r:
                per_m[name].append(seconds / n * 1e6)
        apart.append(kl(models["old"], models["new"]))
        if r == 0:  # the update's own noise, once: float32 with another shuffle
            noise.append(kl(models["old"], updated("old", 10_000)[0]))
    ratio = [o / w for o, w in zip(per_m["old"], per_m["new"])]
    print(f"{a.config}: rollout of {n} decisions, {settings.update_epochs} epochs of minibatches of "
          f"{settings.minibatch_size}, {cfg.torch_threads} thread(s); {a.repeats} repeats, median [min, max]; "
          f"gradient products: old float32, new {precision['new']} ({model.set_grad_precision(precision['new'])})")
    for name, xs in per_m.items():
        side = f"ppo.py at {a.old_ref}" if name == "old" else "ppo.py now"
        print(f"  {side}: {statistics.median(xs):.1f} [{min(xs):.1f}, {max(xs):.1f}] update seconds per 1M decisions")
    print(f"  old / new: {statistics.median(ratio):.3f} [{min(ratio):.3f}, {max(ratio):.3f}]")
    print(f"  KL between the two updated policies: max {max(apart):.1e} over repeats; two float32 updates with "
          f"different shuffles: {noise[0]:.1e}")


if __name__ == "__main__":
    main()

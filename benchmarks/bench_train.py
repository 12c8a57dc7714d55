"""Training throughput: learner decisions per second of collection, of the PPO update and end to end,
for the collector on the batched engine and the per-table collector it replaced, side by side.

The parts of one iteration (where the time goes). The old side is the collector of f6d7738 with that commit's
config, not a release: the end-to-end comparison with the first release, by real ``train.py`` runs, is
benchmarks/bench_train_runs.py.

    python benchmarks/bench_train.py                                  # default config, 3 repeats
    python benchmarks/bench_train.py --repeats 5 --clock cpu          # CPU time of this process
    python benchmarks/bench_train.py --config configs/smoke.yaml --set num_envs=32 --old-ref none

Each repeat runs one iteration (collect, then the full PPO update) with each collector, interleaved,
after one warm-up iteration each; the figures are the median [min, max] over repeats. The old
collector is train.py as it was at ``--old-ref`` (loaded from ``git show`` into a temporary module,
with that version's config file; skipped when git or that version is not available). Both play the
same opponent mix with one pool snapshot (the untrained policy), so ``pool`` games are played as such.

* collection: learner decisions of the rollout / collection time;
* update: learner decisions / update time (``update_epochs`` passes), and in brackets the
  decisions processed per second (rollout x epochs / time, the figure the old benchmark printed);
* end to end: learner decisions / (collection + update time), or with ``overlap`` (the new collector's
  third row, wall clock only) learner decisions / the wall time of an update run beside the next
  collection (train.py's asynchronous loop: two threads, so two cores);
* breakdown: shares of an iteration's time spent in the environment (steps, observations,
  ``state_for``), opponents (heuristic and random decisions, pool snapshots' forward passes),
  the learners' network (forward pass and sampling), bookkeeping (the collector's own work) and
  the update.
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

import torch

from rook_env import raw_env
from rook_env.agents.learned.model import ActorCritic
from rook_env.training import checkpoints, collection, config, loop, ppo

REPO = Path(__file__).resolve().parents[1]

OLD_REF = "f6d7738"  # the last commit whose train.py collects with one raw_env per table
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def new_ppo_update(model, optimizer, batch, cfg, ent_coef):
    """rook_env.training's update with the old train.py's call (the whole config)."""
    return ppo.ppo_update(model, optimizer, batch, ppo.PPOSettings.of(cfg), ent_coef)


# rook_env.training as the Subject sees a train module (the old train.py loaded by load_old has these names)
NEW = types.SimpleNamespace(seed_everything=checkpoints.seed_everything, make_optimizer=ppo.make_optimizer,
                            Collector=collection.Collector, ppo_update=new_ppo_update,
                            make_train_config=config.make_train_config)
PARTS = ("env", "opponents", "network", "bookkeeping", "update")


def load_old(ref: str):
    """train.py at git ``ref`` as a module, and that version's configs/ folder (None if unavailable)."""
    try:
        def show(path: str) -> str:
            return subprocess.run(["git", "show", f"{ref}:{path}"], cwd=REPO, capture_output=True, text=True,
                                  check=True).stdout

        folder = Path(tempfile.mkdtemp())
        (folder / "train_old.py").write_text(show("train.py"))
        (folder / "configs").mkdir()
        for name in ("default.yaml", "smoke.yaml"):
            (folder / "configs" / name).write_text(show(f"configs/{name}"))
        try:  # the PPO run: configs/ppo.yaml since 0.9.0, configs/default.yaml before
            (folder / "configs" / "ppo.yaml").write_text(show("configs/ppo.yaml"))
        except subprocess.CalledProcessError:
            (folder / "configs" / "ppo.yaml").write_text(show("configs/default.yaml"))
        spec = importlib.util.spec_from_file_location("train_old", folder / "train_old.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["train_old"] = module  # its dataclasses look their module up there
        spec.loader.exec_module(module)
        return module, folder / "configs"
    except Exception as exc:  # noqa: BLE001 - no git, unknown ref, or an old import that no longer resolves
        print(f"(old collector: not measured: {type(exc).__name__}: {str(exc).strip()[:160]})")
        return None, None


class Subject:
    """One collector with its model, optimizer and timers; ``iteration()`` -> per-part seconds."""

    def __init__(self, name: str, module, cfg, clock, overlap: bool = False) -> None:
        self.name, self.module, self.cfg, self.clock, self.overlap = name, module, cfg, clock, overlap
        torch.set_num_threads(cfg.torch_threads)
        self.device = loop.pick_device(cfg.device)
        rng = module.seed_everything(cfg.seed)
        env = raw_env(**cfg.env_flags)
        obs_dim = env.observation_space("player_0")["observation"].shape[0]
        critic_dim = env.state_space.shape[0] if cfg.central_critic else None
        self.model = ActorCritic(obs_dim, env.action_space("player_0").n, cfg.hidden, critic_dim,
                                 getattr(cfg, "critic_hidden", None)).to(self.device)  # the old Config has none
        if hasattr(module, "make_optimizer"):
            self.opt = module.make_optimizer(self.model, cfg.lr, eps=1e-5)
        else:  # the old train.py: plain Adam
            self.opt = torch.optim.Adam(self.model.parameters(), lr=cfg.lr, eps=1e-5)
        self.col = module.Collector(cfg, self.device, rng)
        self.col.pool.append(copy.deepcopy(self.model.actor).eval())
        self.old = not hasattr(self.col, "env")
        self.behaviour, self.ahead = copy.deepcopy(self.model).eval(), None  # overlap: the collector's weights
        if self.old:
            self._instrument_old()
        else:
            self.col.clock = clock

    def _instrument_old(self) -> None:
        """Time the old collector's env calls and scripted agents without touching its code."""
        clock, self.t_old = self.clock, {"env": 0.0, "opponents": 0.0}
        self.module.time = types.SimpleNamespace(perf_counter=clock, time=time.time)  # its t_env / t_net clock

        def timed(fn, part):
            def wrapper(*args, **kwargs):
                t = clock()
                try:
                    return fn(*args, **kwargs)
                finally:
                    self.t_old[part] += clock() - t
            return wrapper

        for table in self.col.tables:
            for name in ("reset", "step", "observe", "state_for"):
                setattr(table.env, name, timed(getattr(table.env, name), "env"))
        make_agent = self.module.make_agent

        def make_timed_agent(*args, **kwargs):
            agent = make_agent(*args, **kwargs)
            agent.act = timed(agent.act, "opponents")
            return agent

        self.module.make_agent = make_timed_agent

    def iteration(self) -> tuple[int, dict]:
        cfg, clock = self.cfg, self.clock
        if self.overlap:
            return self._overlapped()
        if self.old:
            self.t_old = {"env": 0.0, "opponents": 0.0}
        self.model.eval()
        t0 = clock()
        batch, st = self.col.collect(self.model, 0.0)
        t1 = clock()
        self.module.ppo_update(self.model, self.opt, batch, cfg, cfg.ent_coef)
        if self.device.type == "cuda":
            torch.cuda.synchronize()
        t2 = clock()
        if self.old:  # its t_env: env + scripted agents + its loops; t_net: stacking + forward passes
            parts = {"env": self.t_old["env"], "opponents": self.t_old["opponents"], "network": st["t_net"]}
        else:
            parts = {"env": st["t_env"], "opponents": st["t_opp"], "network": st["t_net"]}
        parts["bookkeeping"] = (t1 - t0) - sum(parts.values())
        parts.update(update=t2 - t1, collect=t1 - t0, iteration=t2 - t0)
        return len(batch["act"]), parts

    def _overlapped(self) -> tuple[int, dict]:
        """The loop's overlap (rook_env.training.loop): the update of the rollout collected ahead runs beside the
        next collection."""
        cfg, clock = self.cfg, self.clock
        if self.ahead is None:
            self.ahead = self.col.collect(self.behaviour, 0.0)
        batch, _ = self.ahead
        self.behaviour.load_state_dict(self.model.state_dict())
        seconds = {}

        def update():
            t = clock()
            out = self.module.ppo_update(self.model, self.opt, batch, cfg, cfg.ent_coef)
            seconds["update"] = clock() - t
            return out

        def collect():
            t = clock()
            out = self.col.collect(self.behaviour, 0.0)
            seconds["collect"] = clock() - t
            return out

        t0 = clock()
        _, self.ahead = loop.run_beside(update, collect)
        seconds["iteration"] = clock() - t0
        n = len(batch["act"])  # the next rollout's size differs a little: rates are per own size
        seconds["collect"] *= n / len(self.ahead[0]["act"])
        return n, {**{p: float("nan") for p in PARTS}, **seconds}


def fmt(values: list[float], unit: str = "") -> str:
    return f"{statistics.median(values):,.0f}{unit} [{min(values):,.0f}, {max(values):,.0f}]"


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--config", default=str(REPO / "configs" / "ppo.yaml"),
                   help="config of the new collector; the old one reads the same-named file of --old-ref")
    p.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE", help="override (both collectors)")
    p.add_argument("--new-set", action="append", default=[], metavar="FIELD=VALUE",
                   help="override for the new collector only (e.g. num_envs=256)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--clock", choices=sorted(CLOCKS), default="wall")
    p.add_argument("--old-ref", default=OLD_REF, help="git ref of the old train.py ('none': skip it)")
    args = p.parse_args(argv)
    clock = CLOCKS[args.clock]
    subjects = []
    if args.old_ref != "none":
        old, old_configs = load_old(args.old_ref)
        if old is not None:
            name = os.path.basename(args.config)
            old_cfg = old.make_train_config(str(old_configs / name) if (old_configs / name).is_file() else args.config,
                                            args.set)
            subjects.append(Subject(f"old ({args.old_ref}, raw_env per table)", old, old_cfg, clock))
    new_cfg = config.make_train_config(args.config, args.set + args.new_set)
    subjects.append(Subject("new (RookVectorEnv)", NEW, new_cfg, clock))
    if args.clock == "wall":  # two threads: a CPU clock would add them up
        subjects.append(Subject("new, overlap (update beside the next collection)", NEW, new_cfg, clock, overlap=True))
    for s in subjects:
        c = s.cfg
        print(f"{s.name}: device {s.device}, torch threads {c.torch_threads}, num_envs {c.num_envs}, rollout "
              f"{c.rollout_decisions}, epochs {c.update_epochs}, minibatch {c.minibatch_size}, hidden {c.hidden}, "
              f"critic {getattr(c, 'critic_hidden', None) or c.hidden}, central critic {c.central_critic}, "
              f"mix {dict(c.opponent_mix)}")
    print(f"clock: {args.clock}; one warm-up iteration each, then {args.repeats} interleaved repeats\n")
    results = {s.name: [] for s in subjects}
    for s in subjects:
        s.iteration()
    for r in range(args.repeats):
        for s in subjects:
            n, parts = s.iteration()
            results[s.name].append((n, parts))
            print(f"repeat {r} {s.name}: {n} decisions, collect {n / parts['collect']:,.0f}/s, "
                  f"update {n / parts['update']:,.0f}/s, end to end {n / parts['iteration']:,.0f}/s", flush=True)
    print()
    base = None
    header = ("| collector | learner decisions | collection dec/s | update dec/s (x epochs) | end to end dec/s | "
              "vs old | " + " | ".join(PARTS) + " |")
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    for s in subjects:
        rows = results[s.name]
        coll = [n / p["collect"] for n, p in rows]
        upd = [n / p["update"] for n, p in rows]
        e2e = [n / p["iteration"] for n, p in rows]
        med = statistics.median(e2e)
        base = base or med
        shares = []
        for part in PARTS:
            vals = [p[part] / p["iteration"] for _, p in rows]
            shares.append("beside" if s.overlap else f"{statistics.median(vals):.0%}")
        print(f"| {s.name} | {statistics.median([n for n, _ in rows]):,.0f} | {fmt(coll)} | {fmt(upd)} "
              f"({statistics.median(upd) * s.cfg.update_epochs:,.0f}) | {fmt(e2e)} | {med / base:.2f}x | "
              + " | ".join(shares) + " |")


if __name__ == "__main__":
    main()

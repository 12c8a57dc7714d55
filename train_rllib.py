"""Train Rook with Ray RLlib (new API stack): shared-policy PPO self-play, on a laptop or a Ray cluster.

    python train_rllib.py --config configs/rllib_laptop.yaml          # local Ray, 2 env runners
    RAY_ADDRESS=auto python train_rllib.py --config configs/rllib_cluster.yaml   # an existing cluster
    python train_rllib.py --config configs/rllib_smoke.yaml --set num_env_runners=0 --set iterations=1

Two env-runner paths (``runner``): ``vector`` (default; rook_env.rllib.vector: each runner steps ``tables``
tables of the batched engine at once, one forward pass per step, for ``game`` partnership or
call_partner; opponents ``heuristic`` / ``random`` played in arrays) and ``multi_agent`` (RLlib's
PettingZoo path, one table per env, about 50x slower per runner; opponents may also be ``ppo`` or an
``rllib:<checkpoint>`` snapshot). Partners share one network, as in train.py: every seat is the learning
module except, in the configured fraction of hands, the seats of one team (drawn per hand) played by the
frozen opponent. Ray is
reached at ``address`` from the config, else ``RAY_ADDRESS``, else a local Ray is started here; the
same config runs unchanged in both places and scales with ``num_env_runners``. The checkpoint written
to ``checkpoint_dir`` loads as a project agent: ``make_agent("rllib:<checkpoint_dir>")``.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import yaml


RUNNERS = ("vector", "multi_agent")
# RLlib's AlgorithmConfig.fault_tolerance() settings a config may give (docs/cluster.md, "When a node dies"): an env
# runner whose process or node dies is restarted by Ray (as the same runner index, on any node with room) and
# brought back into the run with the current weights; the iteration in progress samples from the others meanwhile.
FAULT_TOLERANCE_KEYS = ("restart_failed_env_runners", "max_num_env_runner_restarts",
                        "num_consecutive_env_runner_failures_tolerance", "env_runner_health_probe_timeout_s",
                        "env_runner_restore_timeout_s", "delay_between_env_runner_restarts_s",
                        "ignore_env_runner_failures")


def default_fault_tolerance() -> dict:
    """The recipe's fault tolerance (RLlib's defaults, stated so that a config shows them)."""
    return {"restart_failed_env_runners": True, "max_num_env_runner_restarts": 1000,
            "num_consecutive_env_runner_failures_tolerance": 100}


@dataclass
class RLlibRunConfig:
    name: str = "rllib"
    address: str | None = None             # "auto", "ray://host:10001", "host:6379"; None: RAY_ADDRESS or local
    seed: int = 1
    runner: str = "vector"                 # "vector" (batched engine per runner) or "multi_agent" (PettingZoo env)
    game: str = "partnership"              # vector runner: "partnership" or "call_partner" (players in env_flags)
    tables: int = 128                      # vector runner: tables stepped together per env runner
    iterations: int = 20
    num_env_runners: int = 2
    num_envs_per_env_runner: int = 1
    num_learners: int = 0                  # 0: the learner runs in the driver process
    env_flags: dict = field(default_factory=dict)
    reward_scale: float = 0.01
    hidden: list = field(default_factory=lambda: [256, 256])
    opponents: dict = field(default_factory=lambda: {"heuristic": ["heuristic", 0.5]})  # id: [spec, prob]
    lr: float = 3e-4
    train_batch_size: int = 4000           # env steps per iteration (per learner; vector: learner decisions)
    minibatch_size: int = 500
    num_epochs: int = 4
    entropy_coeff: float = 0.003
    illegal_action: str = "terminate"      # multi_agent: as rook_env.env(); "raise": stop at the first one (tests).
                                           # The vector runner's engine always raises (it samples legal actions)
    checkpoint_dir: str = ""               # "" -> runs/<name>/checkpoint
    eval_deals: int = 200                  # duplicate deals vs the heuristic at the end (0: none)
    fault_tolerance: dict = field(default_factory=default_fault_tolerance)  # AlgorithmConfig.fault_tolerance()

    @classmethod
    def load(cls, path: str | None, overrides: list[str]) -> "RLlibRunConfig":
        data: dict[str, Any] = {}
        if path:
            with open(path, encoding="utf-8") as f:
                data = yaml.safe_load(f) or {}
        for item in overrides:
            key, sep, value = item.partition("=")
            if not sep:
                raise SystemExit(f"--set expects field=value, got {item!r}")
            data[key] = yaml.safe_load(value)
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise SystemExit(f"unknown config field(s) {unknown}; known: {sorted(known)}")
        cfg = cls(**data)
        for name, (spec, prob) in cfg.opponents.items():
            if not isinstance(spec, str) or not 0 <= float(prob) <= 1:
                raise SystemExit(f"opponents.{name} must be [spec, probability in [0, 1]], got {[spec, prob]}")
        bad_ft = sorted(set(cfg.fault_tolerance) - set(FAULT_TOLERANCE_KEYS))
        if bad_ft:
            raise SystemExit(f"unknown fault_tolerance setting(s) {bad_ft}; known: {list(FAULT_TOLERANCE_KEYS)}")
        if cfg.runner not in RUNNERS:
            raise SystemExit(f"runner={cfg.runner!r}; allowed: {', '.join(RUNNERS)}")
        if cfg.runner == "vector":
            bad = {name: spec for name, (spec, _) in cfg.opponents.items() if spec not in ("heuristic", "random")}
            if bad:
                raise SystemExit(f"opponents {bad}: the vector runner plays heuristic and random opponents; "
                                 f"use runner: multi_agent for others")
        elif cfg.game != "partnership":
            raise SystemExit(f"game={cfg.game!r} needs runner: vector "
                             f"(the multi_agent path plays the partnership game)")
        if cfg.iterations < 1 or cfg.num_env_runners < 0 or cfg.train_batch_size < cfg.minibatch_size:
            raise SystemExit("need iterations >= 1, num_env_runners >= 0 and train_batch_size >= minibatch_size")
        return cfg


def build_algo(cfg: RLlibRunConfig):
    from rook_env.rllib import rook_ppo_config, rook_vector_ppo_config

    if cfg.runner == "vector":
        opponents: dict[str, float] = {}
        for spec, p in cfg.opponents.values():
            opponents[spec] = opponents.get(spec, 0.0) + float(p)
        config = rook_vector_ppo_config(
            game=cfg.game, flags=cfg.env_flags, tables=cfg.tables, opponents=opponents,
            reward_scale=cfg.reward_scale, hidden=cfg.hidden, num_env_runners=cfg.num_env_runners, seed=cfg.seed,
        )
    else:
        config = rook_ppo_config(
            flags=cfg.env_flags, reward_scale=cfg.reward_scale, hidden=cfg.hidden,
            opponents={k: (spec, float(p)) for k, (spec, p) in cfg.opponents.items()},
            num_env_runners=cfg.num_env_runners, num_envs_per_env_runner=cfg.num_envs_per_env_runner,
            seed=cfg.seed, illegal_action=cfg.illegal_action,
        )
    config.training(lr=cfg.lr, train_batch_size_per_learner=cfg.train_batch_size, minibatch_size=cfg.minibatch_size,
                    num_epochs=cfg.num_epochs, entropy_coeff=cfg.entropy_coeff)
    config.learners(num_learners=cfg.num_learners)
    config.fault_tolerance(**cfg.fault_tolerance)
    return config.build_algo()


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", help="YAML file (configs/rllib_*.yaml)")
    ap.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE", help="override a config field")
    args = ap.parse_args(argv)
    cfg = RLlibRunConfig.load(args.config, args.set)
    ckpt_dir = os.path.abspath(cfg.checkpoint_dir or os.path.join("runs", cfg.name, "checkpoint"))

    import ray

    address = cfg.address or os.environ.get("RAY_ADDRESS")
    ray.init(address=address, include_dashboard=False)  # None: start a local Ray on this machine
    print(f"Ray: {'cluster at ' + address if address else 'local'}; resources {ray.cluster_resources()}")
    try:
        algo = build_algo(cfg)
        if cfg.num_env_runners:  # where the env runners landed (on a cluster: spread over its nodes)
            nodes = algo.env_runner_group.foreach_env_runner(lambda r: ray.get_runtime_context().get_node_id(),
                                                             local_env_runner=False)
            print(f"{len(nodes)} env runner(s) ({cfg.runner}) on {len(set(nodes))} node(s)", flush=True)
        t0 = time.time()
        for it in range(1, cfg.iterations + 1):
            res = algo.train()
            runners = res["env_runners"]
            if cfg.runner == "vector":  # one episode per learner seat and hand
                shared = runners.get("module_episode_return_mean", {}).get("default_policy", float("nan"))
            else:  # one episode per hand, the module's return summed over its seats
                shared = runners.get("module_episode_returns_mean", {}).get("shared", float("nan"))
            faults = res.get("fault_tolerance", {})  # env runners healthy now, restarts so far (a node died)
            print(f"iter {it:4d}  env steps {int(runners['num_env_steps_sampled_lifetime']):9d}  "
                  f"return(learner) {shared / cfg.reward_scale:8.1f} pts/hand  "
                  f"{time.time() - t0:7.1f}s  runners {faults.get('num_healthy_workers', 0)}/{cfg.num_env_runners}"
                  f" restarts {faults.get('num_remote_worker_restarts', 0)}", flush=True)
        algo.save(ckpt_dir)
        summary: dict[str, Any] = {"config": asdict(cfg), "checkpoint": ckpt_dir, "iterations": cfg.iterations,
                                   "env_steps": int(runners["num_env_steps_sampled_lifetime"]),
                                   "minutes": round((time.time() - t0) / 60, 2)}
        algo.stop()
    finally:
        ray.shutdown()
    print(f"checkpoint: {ckpt_dir}  (load with make_agent('rllib:{ckpt_dir}'))")
    if cfg.eval_deals and cfg.game != "partnership":
        print(f"no evaluation: eval_deals is for the partnership game; evaluate a {cfg.game} checkpoint with "
              f"evaluate.py's rotation match")
    elif cfg.eval_deals:
        from rook_env.evaluation import play_match
        from rook_env.rllib import RLlibAgent

        m = play_match(lambda seed: RLlibAgent.load(ckpt_dir, seed=seed, **cfg.env_flags), "heuristic",
                       deals=cfg.eval_deals, seed=10_000, flags=cfg.env_flags)
        summary["vs_heuristic"] = {"mean": m.mean, "ci": list(m.ci), "illegal": m.illegal}
        print(f"vs heuristic over {cfg.eval_deals} duplicate deals: {m.mean:+.1f} "
              f"[{m.ci[0]:+.1f}, {m.ci[1]:+.1f}] points per deal; illegal actions {m.illegal}")
    with open(os.path.join(os.path.dirname(ckpt_dir), "summary.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=2)
    return summary


if __name__ == "__main__":
    main()

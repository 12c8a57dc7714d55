"""Ship a training run's best model: copy ``runs/<name>/agent.pt`` and evaluate it on held-out deals.

    python tools/ship.py runs/default --force              # replaces rook_env/agents/checkpoints/ppo_default.*
    python tools/ship.py runs/default --to /tmp/candidate  # writes /tmp/candidate.pt, .json, _curve.png

Writes ``DEST.pt`` (the model), ``DEST.json`` (how it was trained, how it was selected, and a duplicate
evaluation against random and heuristic on deals that training never saw, with the command that
reproduces each figure) and ``DEST_curve.png`` (the learning curve). An existing destination is never
replaced without ``--force``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from collections.abc import Sequence

from rook_env import evaluation
from rook_env.agents.learned.model import CheckpointError, load_checkpoint, model_from_checkpoint

SHIPPED = os.path.join("rook_env", "agents", "checkpoints", "ppo_default")  # PPOAgent.load(None) / make_agent("ppo")
HELD_OUT_SEED = 20261129  # not a training or checkpoint-selection seed (see rook_env.training.Config.eval_seed)


def ship(run_dir: str, dest: str, deals: int, seed: int = HELD_OUT_SEED, workers: int = 1,
         force: bool = False) -> dict:
    """Copy ``run_dir``/agent.pt to ``dest``.pt and write ``dest``.json with a held-out evaluation.

    Raises FileExistsError when a destination file exists and ``force`` is False, CheckpointError
    for an unusable checkpoint, OSError for a missing run."""
    outputs = [dest + ".pt", dest + ".json", dest + "_curve.png"]
    existing = [p for p in outputs if os.path.exists(p)]
    if existing and not force:
        raise FileExistsError(f"{', '.join(existing)} already exist(s): pass --force to replace, or another --to")
    with open(os.path.join(run_dir, "summary.json")) as fh:
        summary = json.load(fh)
    src = os.path.join(run_dir, "agent.pt")
    ckpt = load_checkpoint(src)
    model_from_checkpoint(ckpt, src)  # loads, or raises a clear error
    os.makedirs(os.path.dirname(dest) or ".", exist_ok=True)
    shutil.copyfile(src, dest + ".pt")
    flags = ckpt["env_flags"]
    game = ckpt.get("game", "partnership")
    results = {}
    for opp in ("random", "heuristic"):
        t0 = time.time()
        if game == "call_partner":  # the rotation match: the agent in one chair, the opponent in the others
            opp_spec = "call_partner_heuristic" if opp == "heuristic" else opp
            res = evaluation.play_rotation_match([f"ppo:{dest}.pt", opp_spec], deals=deals, seed=seed,
                                                 flags={**flags, "game": game}, workers=workers)
            results[opp] = {"mean": res.mean, "ci95": list(res.ci), "deals": deals, "seed": seed,
                            "seconds": round(time.time() - t0, 1),
                            "command": f"python evaluate.py --game call_partner --players {flags['players']} "
                                       f"ppo:{dest}.pt {opp_spec} --deals {deals} --seed {seed}"}
        else:
            hands, games = evaluation.hand_flags(flags)  # a game-episode agent plays real games
            res = evaluation.play_match(dest + ".pt", opp, deals=deals, seed=seed, flags=hands, duplicate=True,
                                        workers=workers, game_scores=games)
            results[opp] = {"mean": res.mean, "ci95": list(res.ci), "deals": deals, "seed": seed,
                            "pair_wins": res.pair_wins, "games": res.games, "seconds": round(time.time() - t0, 1),
                            "command": f"python evaluate.py {dest}.pt {opp} --deals {deals} --seed {seed}"
                                       + " --game-scores" * games}
        print(f"held-out: {res.summary()}")
    cfg = summary["config"]
    select_by = cfg.get("select_by", "heuristic")  # runs before select_by selected on the heuristic result
    field = ", ".join(cfg["eval_opponents"])
    config_file = os.path.join("configs", f"{summary['name']}.yaml")
    info = {
        "checkpoint": dest + ".pt",
        "size_bytes": os.path.getsize(dest + ".pt"),
        "trained_with": (f"python train.py --config {config_file}" if os.path.isfile(config_file)
                         else "python train.py with the config below"),
        "seed": summary["seed"],
        "config": cfg,
        "env_flags": flags,
        "training": {k: summary[k] for k in ("decisions", "iterations", "wall_seconds", "stop_reason", "device",
                                             "machine", "bc")},
        "selected": {"iteration": summary["best"]["iteration"], "decisions": summary["best"]["decisions"],
                     "selection_eval": summary["best"]["eval"],
                     "rule": f"best {select_by} over the field ({field}) on {cfg['eval_deals']} selection deals "
                             f"(seed {cfg['eval_seed']}), evaluated every {cfg['eval_every']} iterations"},
        "held_out_eval": results,
        "learning_curve": None,
    }
    winner = next((c for c in summary.get("playoff") or [] if c.get("winner")), None)
    if winner is not None:  # agent.pt is the playoff's winner (train.py playoff_candidates)
        info["selected"] = {
            "iteration": winner["iteration"], "decisions": winner["decisions"], "selection_eval": winner["playoff"],
            "rule": f"playoff winner ({select_by} over {field}) among the {len(summary['playoff'])} best checkpoints "
                    f"by periodic score, replayed on {cfg['playoff_deals']} deals (seed {cfg['playoff_seed']})"}
        info["playoff"] = summary["playoff"]
    curve = summary["paths"]["curve"]
    if os.path.isfile(curve):
        shutil.copyfile(curve, dest + "_curve.png")
        info["learning_curve"] = dest + "_curve.png"
    with open(dest + ".json", "w") as fh:
        json.dump(info, fh, indent=2)
    return info


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("run_dir", help="a finished run of train.py (holds agent.pt and summary.json)")
    p.add_argument("--to", default=SHIPPED, metavar="PATH_NO_EXT",
                   help=f"destination without extension (default {SHIPPED}: the agent `make_agent('ppo')` loads)")
    p.add_argument("--force", action="store_true", help="replace existing destination files")
    p.add_argument("--deals", type=int, default=2000, help="held-out deals per opponent (default 2000)")
    p.add_argument("--seed", type=int, default=HELD_OUT_SEED, help=f"seed of the held-out deals (default {HELD_OUT_SEED})")
    p.add_argument("--workers", type=int, default=1, help="evaluation processes")
    args = p.parse_args(argv)
    try:
        ship(args.run_dir, args.to, args.deals, args.seed, args.workers, force=args.force)
    except (CheckpointError, OSError, ValueError) as exc:  # FileExistsError is an OSError
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

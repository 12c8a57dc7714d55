"""Rounds of policy iteration by counterfactual labels: the network labels its own decisions, is fitted to the
labels, and the fitted network is the next round's base.

One round is the two commands of docs/training.md run in order: :func:`rook_env.training.network_labels.write_labels`
plays ``self_hands`` deals in self-play and ``heuristic_hands`` against the heuristic with the round's base network
and labels every legal action of a quarter of its decisions by playing the deal out with the network (a step of
rollout policy improvement, Bertsekas and Tsitsiklis 1996); :func:`rook_env.training.residual_fit.fit` with ``init``
fine-tunes the base network's actor on both label sets together (``margin`` points trained in: it leaves its own
action only where another is predicted to gain more); with ``replay`` > 1 the fit reads the labels of the
``replay - 1`` rounds before too (their values are under an older network's play-out: more deals per fit, so that
one noisy round does not undo the rounds before it). ``opponents`` adds label sets against a field (past networks, a
best response: ``{spec: deals}``), the network playing one team and the agent the other, fitted together with the
rest. Round ``k`` (from 1) deals its self-play shards from seed ``seed + n * 1_000_000 (k - 1)`` with ``n = 2 +
len(opponents)`` seed blocks a round, its shards against the heuristic from 1,000,000 seeds further, and those
against the ``i``-th opponent (from 0) from ``(2 + i) * 1_000_000`` further, so no two sets label the same deals.
The shipped partnership network of 0.7.0 is round 1 from ``ppo_v2.pt`` with the defaults; round 2 continues from
it (docs/results.md, the shipped PPO agent). ``network: random`` is the loop from scratch: round 1's base is a fresh
network of train.py's default shape, initialised from ``seed`` (:func:`random_network`).

A round's files lie in ``<out>/round_<k>/``: ``labels_self/``, ``labels_heuristic/`` and one ``labels_<i>_<spec>/``
per opponent (the shards),
``network.pt`` (the fitted network, the next round's base) and ``fit.json`` (the fit's summary); ``<out>/rounds.json``
lists every finished round (base, labels, the earlier rounds' labels replayed, validation error, minutes of labels and
of fit). A rerun with the same arguments (or more ``rounds``) resumes: written shards are skipped, a round listed
there is not run again; other arguments than ``rounds``, ``max_minutes``, ``processes``, ``threads``, ``workers``,
``ray_address`` and the selection's over an existing folder are refused (its labels were made with the arguments it
records).
``max_minutes`` makes the loop a time budget: a round starts only while the recorded minutes of the rounds so far
plus the last round's fit in it, so ``python train.py`` stops near the budget on any machine (``rounds`` is then the
most it runs; how many fit depends on the machine's speed, and rounds.json records which ran).
``workers`` > 0 labels on a Ray cluster (``ray_address``) instead of ``processes`` on this machine: the same shards
(docs/cluster.md).

    python -m rook_env.training.label_rounds --network rook_env/agents/checkpoints/ppo_v2.pt --rounds 2 \\
        --out runs/label_rounds --processes 2          # about an hour a round on 2 CPU cores
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import shutil
import time
from collections.abc import Sequence

from .config import RANDOM_NETWORK, SEED_STRIDE, Config, RoundsConfig, parse_opponents, parse_shares

__all__ = ["RoundsConfig", "main", "over_budget", "random_network", "round_minutes", "run_rounds", "train_rounds"]

# arguments a resume may change: they change no label and no fit
FREE = ("rounds", "max_minutes", "processes", "threads", "workers", "ray_address", "select_deals", "select_seed",
        "average")


def round_minutes(summary: dict) -> float:
    """A finished round's minutes as rounds.json records them: labels, fit and selection."""
    return summary["label_minutes"] + summary["fit_minutes"] + summary.get("selection", {}).get("minutes", 0.0)


def over_budget(cfg: RoundsConfig, summaries: list[dict]) -> bool:
    """Whether ``max_minutes`` leaves no room for another round: the rounds' minutes so far plus the last round's
    (the estimate of the next one's) exceed it. Read from the recorded minutes, so a resume stops where the run
    did."""
    if not cfg.max_minutes or not summaries:
        return False
    return sum(map(round_minutes, summaries)) + round_minutes(summaries[-1]) > cfg.max_minutes


def labels_folder(out: str, k: int, name: str) -> str:
    """Round ``k``'s label shards of the set ``name`` (:func:`label_sets`): its own fit's, and later rounds' with
    ``replay``."""
    return os.path.join(out, f"round_{k}", f"labels_{name}")


def label_sets(cfg: RoundsConfig, k: int) -> list[tuple[str, str, int, int]]:
    """Round ``k``'s label sets with deals: ``(opponent spec, folder name, deals, first seed)``; self-play, the
    heuristic, then ``opponents`` in their order, each set in its own block of seeds (the module's docstring)."""
    first = cfg.seed + (2 + len(cfg.opponents)) * SEED_STRIDE * (k - 1)
    sets = [("self", "self", cfg.self_hands, first),
            ("heuristic", "heuristic", cfg.heuristic_hands, first + SEED_STRIDE)]
    for i, (spec, hands) in enumerate(cfg.opponents.items()):
        name = f"{i}_" + re.sub(r"[^A-Za-z0-9_.-]+", "_", spec)[-48:]  # a folder name; the index keeps it unique
        sets.append((spec, name, hands, first + (2 + i) * SEED_STRIDE))
    return [s for s in sets if s[2] > 0]


def check_base(path: str) -> dict:
    """Load round 1's base (a CheckpointError names what is wrong with it); its rule flags."""
    from rook_env.agents.learned.model import load_checkpoint

    ckpt = load_checkpoint(path)
    if ckpt.get("game", "partnership") != "partnership":
        raise ValueError(f"network {path!r} is a {ckpt['game']!r} checkpoint; these rounds are the "
                         "partnership game's")
    return dict(ckpt.get("env_flags") or {})


def random_network(cfg: RoundsConfig) -> str:
    """``network: random``: round 1's base, train.py's default network initialised from ``seed``, written once to
    ``<out>/round_0/network.pt`` (a resume reads it again). Its greedy policy is the loop's starting point from
    scratch: no cloning of the heuristic, no PPO."""
    from .checkpoints import new_model, save_checkpoint, seed_everything
    from .games import game_of

    path = os.path.join(cfg.out, "round_0", "network.pt")
    if not os.path.exists(path):
        train_cfg = Config(name="random_init", seed=cfg.seed)
        seed_everything(train_cfg.seed)
        model = new_model(train_cfg, game_of(train_cfg))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        save_checkpoint(path, model, None, train_cfg, {"iteration": 0, "decisions": 0, "wall_seconds": 0.0}, None,
                        [], full=False)
    return path


def selection_score(cfg: RoundsConfig, network: str) -> dict:
    """The network's duplicate match against the heuristic on the selection deals (``select_deals`` from
    ``select_seed``; the batched engine): ``{"deals", "seed", "mean", "ci95"}``."""
    from rook_env.agents.learned.model import load_checkpoint, model_from_checkpoint

    from .selection import evaluate_policy

    t0 = time.perf_counter()
    model = model_from_checkpoint(load_checkpoint(network), network)
    r = evaluate_policy(model, "heuristic", cfg.select_deals, cfg.select_seed, Config(eval_engine="tables"))
    return {"deals": cfg.select_deals, "seed": cfg.select_seed, "mean": r["mean"], "ci95": r["ci95"],
            "minutes": (time.perf_counter() - t0) / 60}


def select_round(cfg: RoundsConfig, rounds: list[dict], log=print) -> dict:
    """The round whose network is ``agent.pt``: the last one, or with ``select_deals`` the best on the selection
    deals (the later round on a tie). Scores are kept in each round's summary (``selection``) and made again only
    for other selection deals."""
    if not cfg.select_deals:
        return rounds[-1]
    for r in rounds:
        sel = r.get("selection")
        if not sel or (sel["deals"], sel["seed"]) != (cfg.select_deals, cfg.select_seed):
            r["selection"] = selection_score(cfg, r["network"])
            lo, hi = r["selection"]["ci95"]
            log(f"round {r['round']}: {r['selection']['mean']:+.2f} [{lo:+.2f}, {hi:+.2f}] a deal against the "
                f"heuristic on the {cfg.select_deals} selection deals (seed {cfg.select_seed})")
    return max(reversed(rounds), key=lambda r: r["selection"]["mean"])


def average_network(out: str, rounds: list[dict]) -> str:
    """The mean of the weights of ``rounds``' networks, written to ``<out>/average.pt`` (the last one's checkpoint
    otherwise, with ``averaged`` naming the networks). Averaging the end of one lineage of fine-tunes smooths the
    round-to-round noise of the fits (stochastic weight averaging, Izmailov et al. 2018)."""
    import torch

    from rook_env.agents.learned.model import load_checkpoint

    ckpts = [load_checkpoint(r["network"]) for r in rounds]
    last = ckpts[-1]
    model = {k: (sum(c["model"][k] for c in ckpts) / len(ckpts) if v.is_floating_point() else v)
             for k, v in last["model"].items()}
    path = os.path.join(out, "average.pt")
    torch.save({**last, "model": model, "averaged": [r["network"] for r in rounds]}, path)
    return path


def choose(cfg: RoundsConfig, rounds: list[dict], log=print) -> dict:
    """What ``agent.pt`` is: :func:`select_round`'s round, or with ``average`` the average of the last rounds'
    networks where it scores at least as well on the selection deals (its summary has ``round: "average"``)."""
    chosen = select_round(cfg, rounds, log)
    if not cfg.average or len(rounds) < cfg.average:
        return chosen
    tail = rounds[-cfg.average:]
    network = average_network(cfg.out, tail)
    avg = {"round": "average", "rounds": [r["round"] for r in tail], "network": network,
           "selection": selection_score(cfg, network)}
    lo, hi = avg["selection"]["ci95"]
    log(f"average of rounds {tail[0]['round']} to {tail[-1]['round']}: {avg['selection']['mean']:+.2f} "
        f"[{lo:+.2f}, {hi:+.2f}] a deal against the heuristic on the selection deals")
    return avg if avg["selection"]["mean"] >= chosen["selection"]["mean"] else chosen


def run_rounds(cfg: RoundsConfig, log=print) -> list[dict]:
    """Run (or resume) the rounds; the summary of each, as written to ``<out>/rounds.json``."""
    from .network_labels import opponent_agent, write_labels
    from .residual_fit import FitConfig, fit

    cfg.check()
    if not cfg.out:
        raise ValueError("out: give the folder of the rounds")
    if cfg.network != RANDOM_NETWORK:
        check_base(cfg.network)  # a corrupt checkpoint fails here, before any folder or process is made
    os.makedirs(cfg.out, exist_ok=True)
    summary_path = os.path.join(cfg.out, "rounds.json")
    done = []
    if os.path.exists(summary_path):
        with open(summary_path) as fh:
            recorded = json.load(fh)
        mine = dataclasses.asdict(cfg)
        changed = [k for k, v in recorded["config"].items() if k not in FREE and mine.get(k) != v]
        if changed:
            raise ValueError(f"{cfg.out!r} holds rounds made with other arguments ({', '.join(changed)}: "
                             + ", ".join(f"{recorded['config'][k]!r}" for k in changed) + "); give another out")
        done = recorded["rounds"]
    network = random_network(cfg) if cfg.network == RANDOM_NETWORK else cfg.network
    flags = check_base(network)
    for spec in cfg.opponents:  # a bad spec or checkpoint fails here, not after the first sets' labels
        opponent_agent(spec, flags)
    base = network
    summaries = []
    for k in range(1, cfg.rounds + 1):
        if over_budget(cfg, summaries):
            log(f"round {k}: not started: {sum(map(round_minutes, summaries)):.1f} minutes of rounds so far and the "
                f"last one took {round_minutes(summaries[-1]):.1f}; max_minutes is {cfg.max_minutes:g}")
            break
        here = os.path.join(cfg.out, f"round_{k}")
        network = os.path.join(here, "network.pt")
        previous = next((r for r in done if r["round"] == k), None)
        if previous is not None and os.path.exists(network):
            log(f"round {k}: done ({network})")
            summaries.append(previous)
            base = network
            continue
        sets = label_sets(cfg, k)
        t0 = time.perf_counter()
        for opponent, name, hands, seed in sets:
            log(f"round {k}: labelling {hands} deals ({opponent}) from seed {seed} with {base}")
            write_labels(base, labels_folder(cfg.out, k, name), hands, seed, cfg.shard_hands, cfg.label_prob,
                         cfg.tables, opponent, cfg.processes, flags, cfg.workers, cfg.ray_address, log=log,
                         phase_label_prob=cfg.phase_label_prob)
        t1 = time.perf_counter()
        # the fit's labels: this round's sets and those of the replay - 1 rounds before it
        replayed = [labels_folder(cfg.out, j, s[1]) for j in range(max(1, k - cfg.replay + 1), k) for s in sets]
        here_sets = [labels_folder(cfg.out, k, s[1]) for s in sets]
        result = fit(FitConfig(labels=replayed + here_sets, out=network, init=base, margin=cfg.margin,
                               lr=cfg.lr, epochs=cfg.epochs, label_prob=cfg.label_prob, threads=cfg.threads), log=log)
        with open(os.path.join(here, "fit.json"), "w") as fh:
            json.dump(result, fh, indent=1)
        summaries.append({"round": k, "base": base, "network": network,
                          "labels": {s[0]: {"folder": f, "hands": s[2], "first_seed": s[3]}
                                     for s, f in zip(sets, here_sets)},
                          "replayed": replayed,
                          "best_epoch": result["best_epoch"], "val_mse": result["val_mse"],
                          "zero_mse": result["zero_mse"], "label_minutes": (t1 - t0) / 60,
                          "fit_minutes": (time.perf_counter() - t1) / 60})
        log(f"round {k}: wrote {network} (validation MSE {result['val_mse']:.2f}, no change {result['zero_mse']:.2f})")
        if cfg.select_deals:
            select_round(cfg, summaries[-1:], log)
        with open(summary_path, "w") as fh:
            json.dump({"config": dataclasses.asdict(cfg), "rounds": summaries}, fh, indent=1)
        base = network
    if cfg.select_deals:  # rounds finished before selection was asked for, or on other selection deals
        chosen = choose(cfg, summaries, log)
        record = {"config": dataclasses.asdict(cfg), "rounds": summaries, "selected": chosen["round"]}
        if chosen["round"] == "average":
            record["average"] = chosen
        with open(summary_path, "w") as fh:
            json.dump(record, fh, indent=1)
    return summaries


def train_rounds(cfg: Config, overwrite: bool = False, log=print) -> dict:
    """``python train.py`` with ``algorithm: label_rounds``: the config's rounds in ``rounds.out`` (default
    ``runs/<name>/``), resumed when the folder holds them (``overwrite`` deletes it first); the last round's network
    (with ``select_deals``: the best on the selection deals) is copied to ``agent.pt`` there, the model to evaluate,
    as a PPO run's is. Returns the summary."""
    out = cfg.rounds.out or os.path.join(cfg.run_dir, cfg.name)
    if overwrite and os.path.isdir(out):
        shutil.rmtree(out)
    t0 = time.perf_counter()
    rounds = run_rounds(dataclasses.replace(cfg.rounds, out=out), log=log)
    agent = os.path.join(out, "agent.pt")
    if cfg.rounds.select_deals:  # run_rounds' choice, as rounds.json records it
        with open(os.path.join(out, "rounds.json")) as fh:
            recorded = json.load(fh)
        chosen = recorded.get("average") or next(r for r in rounds if r["round"] == recorded["selected"])
    else:
        chosen = rounds[-1]
    shutil.copyfile(chosen["network"], agent)
    minutes = sum(map(round_minutes, rounds))
    if chosen["round"] == "average":
        minutes += chosen["selection"]["minutes"]
    what = (f"the average of rounds {chosen['rounds'][0]} to {chosen['rounds'][-1]}" if chosen["round"] == "average"
            else f"round {chosen['round']}")
    log(f"wrote {agent}: {what} of {len(rounds)}, {minutes:.1f} minutes of labels, fits and selection "
        f"({(time.perf_counter() - t0) / 60:.1f} in this call)")
    return {"agent": agent, "rounds": rounds, "selected": chosen["round"]}


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    defaults = RoundsConfig(network="", out="")
    for f in dataclasses.fields(RoundsConfig):
        value = getattr(defaults, f.name)
        if isinstance(value, dict):  # phase_label_prob: PHASE=SHARE words; opponents: SPEC=DEALS
            p.add_argument("--" + f.name.replace("_", "-"), nargs="*", default=[],
                           metavar="SPEC=DEALS" if f.name == "opponents" else "PHASE=SHARE")
            continue
        p.add_argument("--" + f.name.replace("_", "-"), type=type(value), default=value,
                       required=f.name in ("network", "out"))
    try:
        args = vars(p.parse_args(argv))
        args["phase_label_prob"] = parse_shares(args["phase_label_prob"])
        args["opponents"] = parse_opponents(args["opponents"])
        run_rounds(RoundsConfig(**args))
    except ValueError as exc:  # a CheckpointError too
        print(f"error: {exc}")
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Rounds of policy iteration by counterfactual labels: the network labels its own decisions, is fitted to the
labels, and the fitted network is the next round's base.

One round plays ``self_hands`` deals in self-play and ``heuristic_hands`` against the heuristic with the round's base
network and labels every legal action of a quarter of its decisions by playing the deal out with the network
(:func:`.counterfactual.write_labels`: a step of rollout policy improvement, Bertsekas and Tsitsiklis 1996); then
:func:`.fit.fit` with ``init`` fine-tunes the base network's actor on the label sets together (``margin`` points
trained in: it leaves its own action only where another is predicted to gain more); with ``replay`` > 1 the fit
reads the labels of the ``replay - 1`` rounds before too (their values are under an older network's play-out: more
deals per fit, so that one noisy round does not undo the rounds before it). ``opponents`` adds label sets against a
field (past networks, a best response: ``{spec: deals}``), the network playing one team and the agent the other,
fitted together with the rest. Round ``k`` (from 1) deals its self-play shards from seed ``seed + n * 1_000_000 (k -
1)`` with ``n = 2 + len(opponents)`` seed blocks a round, its shards against the heuristic from 1,000,000 seeds
further, and those against the ``i``-th opponent (from 0) from ``(2 + i) * 1_000_000`` further, so no two sets label
the same deals. ``network: random`` is the loop from scratch: round 1's base is a fresh network of train.py's default
shape, initialised from ``seed`` (:func:`random_network`).

A round's files lie in ``<out>/round_<k>/``: ``labels_self/``, ``labels_heuristic/`` and one
``labels_<i>_<spec>/`` per opponent (the shards), ``network.pt`` (the fitted network, the next round's base) and
``fit.json`` (the fit's summary); ``<out>/rounds.json`` lists every finished round (base, labels, the earlier rounds'
labels replayed, validation error, minutes of labels and of fit). A rerun with the same arguments (or more
``rounds``) resumes: written shards are skipped, a round listed there is not run again; arguments other than
:data:`FREE` over an existing folder are refused (its labels were made with the arguments it records).
``max_minutes`` makes the loop a time budget: a round starts only while the recorded minutes of the rounds so far
plus the last round's fit in it, so a run stops near the budget on any machine (``rounds`` is then the most it runs).
``workers`` > 0 labels on a Ray cluster (``ray_address``) instead of ``processes`` on this machine: the same shards
(docs/cluster.md). :func:`train_rounds` is ``train.py``'s run of them: ``agent.pt`` and a held-out match at the end.

    rook-train rounds --network rook_env/agents/checkpoints/ppo_default.pt --rounds 2 --out runs/label_rounds
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from rook_env.agents import make_agent
from rook_env.agents.learned.model import load_checkpoint, model_from_checkpoint

from ..checkpoints import new_model, save_checkpoint, seed_everything
from ..config import Config, game_of
from ..selection import evaluate_policy
from .config import RANDOM_NETWORK, SEED_STRIDE, RoundsConfig
from .counterfactual import NetworkPlayOut, opponent_agent, write_labels
from .fit import FitConfig, fit

__all__ = ["FREE", "RoundsConfig", "over_budget", "random_network", "round_minutes", "run_rounds", "train_rounds"]

# arguments a resume may change: they change no label and no fit
FREE = ("rounds", "max_minutes", "processes", "threads", "workers", "ray_address", "select_deals", "select_seed",
        "select_field", "average", "final_eval_deals", "final_eval_seed")

Log = Callable[[str], None]


class Progress:
    """What :func:`run_rounds` tells a display besides its log lines (:class:`.progress.RoundsDisplay` shows them);
    this one ignores it all."""

    def start(self, cfg: RoundsConfig, done: list[dict]) -> None:
        """The run starts; ``done``: the rounds rounds.json records."""

    def start_round(self, k: int, sets: list[tuple[str, str, int, int]], folders: list[str]) -> None:
        """Round ``k`` labels ``sets`` (:func:`label_sets`) into ``folders``."""

    def shard(self, path: str, records: int, seconds: float) -> None:
        """A shard written."""

    def start_fit(self, k: int) -> None:
        """Round ``k``'s labels are written; its fit starts."""

    def epoch(self, k: int, epoch: int) -> None:
        """An epoch of round ``k``'s fit done."""

    def end_round(self, summary: dict) -> None:
        """A round finished (its rounds.json summary)."""


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
    ckpt = load_checkpoint(path)
    if ckpt.get("game", NetworkPlayOut.game) != NetworkPlayOut.game:
        raise ValueError(f"network {path!r} is a {ckpt['game']!r} checkpoint; these rounds are the "
                         f"{NetworkPlayOut.game} game's")
    return dict(ckpt.get("env_flags") or {})


def random_network(cfg: RoundsConfig) -> str:
    """``network: random``: round 1's base, train.py's default network initialised from ``seed``, written once to
    ``<out>/round_0/network.pt`` (a resume reads it again). Its greedy policy is the loop's starting point from
    scratch: no cloning of the heuristic, no PPO."""
    path = os.path.join(cfg.out, "round_0", "network.pt")
    if not os.path.exists(path):
        train_cfg = Config(name="random_init", seed=cfg.seed)
        seed_everything(train_cfg.seed)
        model = new_model(train_cfg, game_of(train_cfg))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        save_checkpoint(path, model, None, train_cfg, {"iteration": 0, "decisions": 0, "wall_seconds": 0.0}, None,
                        [], full=False)
    return path


def match(network: str, opponent: str, deals: int, seed: int) -> dict:
    """The network's duplicate match against ``opponent`` ("heuristic" or an agent spec, e.g. a checkpoint path) on
    ``deals`` deals from ``seed`` (the batched engine): ``{"deals", "seed", "mean", "ci95", "minutes"}``, points a
    deal."""
    t0 = time.perf_counter()
    model = model_from_checkpoint(load_checkpoint(network), network)
    r = evaluate_policy(model, opponent, deals, seed, Config(eval_engine="tables"))
    return {"deals": deals, "seed": seed, "mean": r["mean"], "ci95": r["ci95"],
            "minutes": (time.perf_counter() - t0) / 60}


def field_score(network: str, members: list[str], deals: int, seed: int) -> dict:
    """The network's duplicate matches against each of ``members`` on the same ``deals`` deals from ``seed``:
    ``{"deals", "seed", "field", "members", "mean", "ci95", "minutes"}``. ``members``: each one's ``{"mean", "ci95"}``;
    ``mean``: the mean over the members; ``ci95``: around it, half as wide as the members' half-widths on average,
    which holds whatever the correlation between the members' results on the shared deals (the standard deviation
    of a mean is at most the mean of the standard deviations); one member: that member's interval."""
    per = {m: match(network, m, deals, seed) for m in members}
    mean = float(np.mean([r["mean"] for r in per.values()]))
    half = float(np.mean([(r["ci95"][1] - r["ci95"][0]) / 2 for r in per.values()]))
    return {"deals": deals, "seed": seed, "field": list(members),
            "members": {m: {"mean": r["mean"], "ci95": r["ci95"]} for m, r in per.items()},
            "mean": mean, "ci95": [mean - half, mean + half], "minutes": sum(r["minutes"] for r in per.values())}


def field_words(members: list[str]) -> str:
    """Who a score is against, in a log line: "the heuristic", or "the field (heuristic, ppo:past.pt)"."""
    return "the heuristic" if list(members) == ["heuristic"] else f"the field ({', '.join(members)})"


def selection_score(cfg: RoundsConfig, network: str) -> dict:
    """The network's score on the selection deals (``select_deals`` from ``select_seed``; the batched engine): its mean
    over ``select_field`` (:func:`field_score`)."""
    return field_score(network, cfg.select_field, cfg.select_deals, cfg.select_seed)


def select_round(cfg: RoundsConfig, rounds: list[dict], log: Log = print) -> dict:
    """The round whose network is ``agent.pt``: the last one, or with ``select_deals`` the best on the selection
    deals (the later round on a tie). Scores are kept in each round's summary (``selection``) and made again only
    for other selection deals."""
    if not cfg.select_deals:
        return rounds[-1]
    for r in rounds:
        sel = r.get("selection")
        scored_on = (sel["deals"], sel["seed"], sel.get("field", ["heuristic"])) if sel else None
        if scored_on != (cfg.select_deals, cfg.select_seed, list(cfg.select_field)):
            r["selection"] = selection_score(cfg, r["network"])
            lo, hi = r["selection"]["ci95"]
            log(f"round {r['round']}: {r['selection']['mean']:+.2f} [{lo:+.2f}, {hi:+.2f}] a deal against "
                f"{field_words(cfg.select_field)} on the {cfg.select_deals} selection deals (seed {cfg.select_seed})")
    return max(reversed(rounds), key=lambda r: r["selection"]["mean"])


def average_network(out: str, rounds: list[dict]) -> str:
    """The mean of the weights of ``rounds``' networks, written to ``<out>/average.pt`` (the last one's checkpoint
    otherwise, with ``averaged`` naming the networks). Averaging the end of one lineage of fine-tunes smooths the
    round-to-round noise of the fits (stochastic weight averaging, Izmailov et al. 2018)."""
    ckpts = [load_checkpoint(r["network"]) for r in rounds]
    last = ckpts[-1]
    model = {k: (sum(c["model"][k] for c in ckpts) / len(ckpts) if v.is_floating_point() else v)
             for k, v in last["model"].items()}
    path = os.path.join(out, "average.pt")
    torch.save({**last, "model": model, "averaged": [r["network"] for r in rounds]}, path)
    return path


def choose(cfg: RoundsConfig, rounds: list[dict], log: Log = print) -> dict:
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
        f"[{lo:+.2f}, {hi:+.2f}] a deal against {field_words(cfg.select_field)} on the selection deals")
    return avg if avg["selection"]["mean"] >= chosen["selection"]["mean"] else chosen


def open_rounds(cfg: RoundsConfig) -> tuple[list[dict], dict]:
    """Check the arguments before any work (a bad field, base network or opponent is named) and read what the folder
    holds: the rounds rounds.json records (refused when they were made with other arguments than :data:`FREE`'s)
    and the base's rule flags."""
    cfg.check()
    if not cfg.out:
        raise ValueError("out: give the folder of the rounds")
    if cfg.network != RANDOM_NETWORK:
        check_base(cfg.network)  # a corrupt checkpoint fails here, before any folder or process is made
    done = []
    summary_path = os.path.join(cfg.out, "rounds.json")
    if os.path.exists(summary_path):
        with open(summary_path) as fh:
            recorded = json.load(fh)
        mine = dataclasses.asdict(cfg)
        changed = [k for k, v in recorded["config"].items() if k not in FREE and mine.get(k) != v]
        if changed:
            raise ValueError(f"{cfg.out!r} holds rounds made with other arguments ({', '.join(changed)}: "
                             + ", ".join(f"{recorded['config'][k]!r}" for k in changed) + "); give another out")
        done = recorded["rounds"]
    os.makedirs(cfg.out, exist_ok=True)
    network = random_network(cfg) if cfg.network == RANDOM_NETWORK else cfg.network
    flags = check_base(network)
    for spec in cfg.opponents:  # a bad spec or checkpoint fails here, not after the first sets' labels
        opponent_agent(spec, flags)
    for spec in cfg.select_field:  # and a bad member of the selection's field, not at the end of round 1
        try:
            make_agent(spec, **flags)
        except Exception as exc:  # noqa: BLE001 - an unknown name, a missing or corrupt checkpoint: all name the spec
            raise ValueError(f"select_field: {spec!r}: {exc}") from None
    return done, flags


def label_round(cfg: RoundsConfig, k: int, base: str, flags: dict, log: Log, progress: Progress) -> list[str]:
    """Round ``k``'s label sets, written by ``base`` (shards written already are kept); their folders."""
    sets = label_sets(cfg, k)
    folders = [labels_folder(cfg.out, k, s[1]) for s in sets]
    progress.start_round(k, sets, folders)
    for (opponent, _, hands, seed), folder in zip(sets, folders):
        log(f"round {k}: labelling {hands} deals ({opponent}) from seed {seed} with {base}")
        write_labels(NetworkPlayOut.game, folder, hands, seed, network=base, shard_hands=cfg.shard_hands,
                     label_prob=cfg.label_prob, tables=cfg.tables, opponent=opponent, processes=cfg.processes,
                     flags=flags, workers=cfg.workers, ray_address=cfg.ray_address, log=log,
                     phase_label_prob=cfg.phase_label_prob, on_shard=progress.shard)
    return folders


def fit_round(cfg: RoundsConfig, k: int, base: str, folders: list[str], log: Log, progress: Progress) -> dict:
    """Round ``k``'s fit of ``base`` on its labels and those of the ``replay - 1`` rounds before
    (``round_<k>/network.pt``, ``fit.json``); the fit's summary with ``replayed``, the earlier rounds' folders."""
    progress.start_fit(k)
    names = [os.path.basename(f)[len("labels_"):] for f in folders]
    replayed = [labels_folder(cfg.out, j, name) for j in range(max(1, k - cfg.replay + 1), k) for name in names]
    network = os.path.join(cfg.out, f"round_{k}", "network.pt")

    def fit_log(line: str) -> None:
        log(line)
        if line.startswith("epoch "):
            progress.epoch(k, int(line.split()[1].rstrip(":")))

    result = fit(FitConfig(labels=replayed + folders, out=network, init=base, margin=cfg.margin, lr=cfg.lr,
                           epochs=cfg.epochs, label_prob=cfg.label_prob, threads=cfg.threads), log=fit_log)
    with open(os.path.join(cfg.out, f"round_{k}", "fit.json"), "w") as fh:
        json.dump(result, fh, indent=1)
    return {**result, "replayed": replayed}


def write_record(cfg: RoundsConfig, summaries: list[dict], chosen: dict | None = None) -> None:
    """``<out>/rounds.json``: the config, the finished rounds and (with selection) the round chosen."""
    record: dict[str, Any] = {"config": dataclasses.asdict(cfg), "rounds": summaries}
    if chosen is not None:
        record["selected"] = chosen["round"]
        if chosen["round"] == "average":
            record["average"] = chosen
    with open(os.path.join(cfg.out, "rounds.json"), "w") as fh:
        json.dump(record, fh, indent=1)


def run_round(cfg: RoundsConfig, k: int, base: str, flags: dict, log: Log, progress: Progress) -> dict:
    """Label and fit round ``k`` from ``base``; its rounds.json summary."""
    t0 = time.perf_counter()
    folders = label_round(cfg, k, base, flags, log, progress)
    t1 = time.perf_counter()
    result = fit_round(cfg, k, base, folders, log, progress)
    network = os.path.join(cfg.out, f"round_{k}", "network.pt")
    summary = {"round": k, "base": base, "network": network,
               "labels": {s[0]: {"folder": f, "hands": s[2], "first_seed": s[3]}
                          for s, f in zip(label_sets(cfg, k), folders)},
               "replayed": result["replayed"],
               "best_epoch": result["best_epoch"], "val_mse": result["val_mse"],
               "zero_mse": result["zero_mse"], "label_minutes": (t1 - t0) / 60,
               "fit_minutes": (time.perf_counter() - t1) / 60}
    log(f"round {k}: wrote {network} (validation MSE {result['val_mse']:.2f}, no change {result['zero_mse']:.2f})")
    return summary


def run_rounds(cfg: RoundsConfig, log: Log = print, progress: Progress | None = None) -> list[dict]:
    """Run (or resume) the rounds; the summary of each, as written to ``<out>/rounds.json``. ``log`` takes every
    line (a shard written, an epoch of a fit, ...); ``progress`` is told where the run stands."""
    progress = progress or Progress()
    done, flags = open_rounds(cfg)
    base = random_network(cfg) if cfg.network == RANDOM_NETWORK else cfg.network
    summaries: list[dict] = []
    progress.start(cfg, done)
    for k in range(1, cfg.rounds + 1):
        if over_budget(cfg, summaries):
            log(f"round {k}: not started: {sum(map(round_minutes, summaries)):.1f} minutes of rounds so far and the "
                f"last one took {round_minutes(summaries[-1]):.1f}; max_minutes is {cfg.max_minutes:g}")
            break
        network = os.path.join(cfg.out, f"round_{k}", "network.pt")
        previous = next((r for r in done if r["round"] == k), None)
        if previous is not None and os.path.exists(network):
            log(f"round {k}: done ({network})")
            summaries.append(previous)
            base = network
            continue
        summaries.append(run_round(cfg, k, base, flags, log, progress))
        if cfg.select_deals:
            select_round(cfg, summaries[-1:], log)
        write_record(cfg, summaries)
        progress.end_round(summaries[-1])
        base = network
    if cfg.select_deals:  # rounds finished before selection was asked for, or on other selection deals
        write_record(cfg, summaries, choose(cfg, summaries, log))
    return summaries


def final_eval(cfg: RoundsConfig, agent: str, base: str, log: Log) -> dict[str, dict]:
    """``agent``'s held-out duplicate matches (``final_eval_deals`` from ``final_eval_seed``) against each member of
    ``select_field`` (by spec) and against ``base``, the network round 1 started from (unless that is a random
    one)."""
    field = {m: m for m in cfg.select_field}
    if cfg.network != RANDOM_NETWORK:
        field["start"] = base
    out = {}
    for name, opponent in field.items():
        out[name] = {**match(agent, opponent, cfg.final_eval_deals, cfg.final_eval_seed), "opponent": opponent}
        lo, hi = out[name]["ci95"]
        log(f"held out: {out[name]['mean']:+.2f} [{lo:+.2f}, {hi:+.2f}] a deal against {opponent} "
            f"({cfg.final_eval_deals} deals from seed {cfg.final_eval_seed})")
    return out


def train_rounds(cfg: Any, overwrite: bool = False, log: Log = print, progress: Progress | None = None) -> dict:
    """``python train.py`` with ``algorithm: label_rounds``: the config's rounds in ``rounds.out`` (default
    ``runs/<name>/``), resumed when the folder holds them (``overwrite`` deletes it first); the last round's network
    (with ``select_deals``: the best on the selection deals) is copied to ``agent.pt`` there, the model to evaluate,
    as a PPO run's is, and plays the held-out matches of ``final_eval_deals``. Returns the summary: ``agent``,
    ``rounds``, ``selected``, ``minutes``, ``final_eval``."""
    out = rounds_folder(cfg)
    if overwrite and os.path.isdir(out):
        shutil.rmtree(out)
    t0 = time.perf_counter()
    rcfg = dataclasses.replace(cfg.rounds, out=out)
    rounds = run_rounds(rcfg, log=log, progress=progress)
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
    held_out = final_eval(rcfg, agent, rounds[0]["base"], log) if rcfg.final_eval_deals else {}
    return {"agent": agent, "out": out, "rounds": rounds, "selected": chosen["round"], "minutes": minutes,
            "final_eval": held_out}


def rounds_folder(cfg: Any) -> str:
    """Where a train.py config's rounds go: ``rounds.out``, or ``runs/<name>/``."""
    return cfg.rounds.out or os.path.join(cfg.run_dir, cfg.name)

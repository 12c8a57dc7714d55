"""The label tools as subcommands of ``rook-train`` (``python train.py``): each one's options (:func:`add_labels`,
:func:`add_fit`, :func:`add_rounds`, :func:`add_search_labels`) and what it runs, and a ``train.py`` config's label
rounds with their display (:func:`run_config_rounds`). A bad argument is one ``error:`` line and exit code 2.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import sys
from collections.abc import Callable
from typing import Any

from rook_env.agents.learned.model import load_checkpoint

from .config import RoundsConfig, parse_opponents, parse_shares
from .counterfactual import PLAY_OUTS, NetworkPlayOut, write_labels
from .fit import FitConfig, fit
from .report import RoundsDisplay, print_rounds_summary
from .rounds import rounds_folder, run_rounds, train_rounds
from .search import write_search_labels

__all__ = ["COMMANDS", "run_config_rounds"]


def _error(exc: BaseException) -> int:
    print(f"error: {exc}", file=sys.stderr)
    return 2


# ============================================================================================== labels
def add_labels(p: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    p.add_argument("--game", default="partnership", choices=list(PLAY_OUTS),
                   help="partnership: the network plays on; call_partner: the heuristic plays on")
    p.add_argument("--network", help="partnership: the checkpoint that plays (and is labelled)")
    p.add_argument("--players", type=int, default=5, help="call_partner: seats at the table (4, 5 or 6)")
    p.add_argument("--out", required=True, help="folder of the shards")
    p.add_argument("--hands", type=int, default=1024, help="deals in all")
    p.add_argument("--seed", type=int, help="the first seed (partnership 95000000: one engine seed per shard; "
                   "call_partner 90000000: one deal seed per hand)")
    p.add_argument("--shard-hands", type=int, help="deals per shard (partnership 256, call_partner 100)")
    p.add_argument("--label-prob", type=float, default=0.25, help="share of the decisions with a choice labelled")
    p.add_argument("--phase-label-prob", nargs="*", default=[], metavar="PHASE=SHARE",
                   help="another share for a phase's decisions, e.g. bid=0.15 play=0.6")
    p.add_argument("--tables", type=int, default=2048, help="partnership: branch tables run together")
    p.add_argument("--opponent", default="self", help="partnership: self (the network at every seat), or the agent "
                   "spec that plays the other team (heuristic, ppo:<checkpoint> of a past network or a best response)")
    p.add_argument("--processes", type=int, default=1, help="label processes on this machine")
    p.add_argument("--workers", type=int, default=0,
                   help="label-worker actors on a Ray cluster instead of the processes (docs/cluster.md); 0: none")
    p.add_argument("--ray-address", default="auto", help="with --workers: the cluster (auto, HOST:PORT; '': a "
                   "private local Ray)")
    return run_labels


def run_labels(a: argparse.Namespace) -> int:
    for name in ("hands", "shard_hands", "tables", "processes"):
        value = getattr(a, name)
        if value is not None and value < 1:  # shard_hands None: the game's own
            return _error(f"--{name.replace('_', '-')} must be >= 1, got {value}")
    if a.workers < 0:
        return _error(f"--workers must be >= 0, got {a.workers}")
    try:
        if a.game == NetworkPlayOut.game:
            if not a.network:
                raise ValueError(f"--network: the {a.game} game's labels are a network's: give its checkpoint")
            ckpt = load_checkpoint(a.network)  # a bad checkpoint fails here, before any process starts
            if ckpt.get("game", a.game) != a.game:
                raise ValueError(f"--network {a.network!r} is a {ckpt['game']!r} checkpoint; these labels are the "
                                 f"{a.game} game's")
            flags = dict(ckpt.get("env_flags") or {})
        else:
            flags = {"players": a.players}
        write_labels(a.game, a.out, a.hands, a.seed, network=a.network, shard_hands=a.shard_hands,
                     label_prob=a.label_prob, tables=a.tables, opponent=a.opponent, processes=a.processes,
                     flags=flags, workers=a.workers, ray_address=a.ray_address,
                     phase_label_prob=parse_shares(a.phase_label_prob))
    except ValueError as exc:
        return _error(exc)
    return 0


# ================================================================================================= fit
def add_fit(p: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    defaults = FitConfig(labels="", out="")
    for f in dataclasses.fields(FitConfig):
        name = "--" + f.name.replace("_", "-")
        value = getattr(defaults, f.name)
        if f.name == "labels":
            p.add_argument(name, required=True, nargs="+", help="one or more folders of label shards")
        elif f.name == "out":
            p.add_argument(name, required=True, help="the checkpoint to write")
        elif isinstance(value, list):
            kind = {"hidden": int, "margins": float, "phases": str}[f.name]
            p.add_argument(name, type=kind, nargs="*" if f.name == "phases" else "+", default=value)
        elif isinstance(value, bool):
            p.add_argument(name, type=lambda v: {"true": True, "false": False}[v.lower()], default=value,
                           metavar="{true,false}")
        else:
            p.add_argument(name, type=type(value), default=value)
    p.add_argument("--json", help="write the summary (validation curve, margins) here")
    return run_fit


def run_fit(a: argparse.Namespace) -> int:
    args = vars(a)
    out_json = args.pop("json")
    try:
        summary = fit(FitConfig(**args))
    except ValueError as exc:
        return _error(exc)
    if out_json:
        with open(out_json, "w") as fh:
            json.dump(summary, fh, indent=1)
    return 0


# ============================================================================================== rounds
def add_rounds(p: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    defaults = RoundsConfig(network="", out="")
    for f in dataclasses.fields(RoundsConfig):
        value = getattr(defaults, f.name)
        if isinstance(value, dict):  # phase_label_prob: PHASE=SHARE words; opponents: SPEC=DEALS
            p.add_argument("--" + f.name.replace("_", "-"), nargs="*", default=[],
                           metavar="SPEC=DEALS" if f.name == "opponents" else "PHASE=SHARE")
            continue
        if isinstance(value, list):  # select_field: agent specs
            p.add_argument("--" + f.name.replace("_", "-"), nargs="+", default=value, metavar="SPEC")
            continue
        p.add_argument("--" + f.name.replace("_", "-"), type=type(value), default=value,
                       required=f.name in ("network", "out"))
    return run_rounds_command


def run_rounds_command(a: argparse.Namespace) -> int:
    args = vars(a)
    try:
        args["phase_label_prob"] = parse_shares(args["phase_label_prob"])
        args["opponents"] = parse_opponents(args["opponents"])
        run_rounds(RoundsConfig(**args))
    except ValueError as exc:  # a CheckpointError too
        return _error(exc)
    return 0


# ======================================================================================= search labels
def add_search_labels(p: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    p.add_argument("--out", required=True, help="folder of the shards")
    p.add_argument("--hands", type=int, default=1000)
    p.add_argument("--seed", type=int, default=1, help="the first deal's seed")
    p.add_argument("--shard-hands", type=int, default=200)
    p.add_argument("--samples", type=int, default=24, help="search's worlds per decision")
    p.add_argument("--base", default="ppo", help="the agent spec that bids, discards and names trump")
    p.add_argument("--workers", type=int, default=0, help="label workers on a Ray cluster (docs/cluster.md)")
    p.add_argument("--ray-address", default="auto", help="with --workers: the cluster (\"\": a local Ray)")
    return run_search_labels


def run_search_labels(a: argparse.Namespace) -> int:
    try:
        ledger = write_search_labels(a.out, a.hands, a.seed, a.shard_hands, a.base, a.samples, a.workers,
                                     a.ray_address)
    except ValueError as exc:
        return _error(exc)
    where = f" on {len(ledger['nodes'])} node(s), {ledger['seconds']:.0f}s" if a.workers else ""
    print(f"{ledger['written']} shards written, {ledger['decisions']} decisions, {ledger['searched']} searched"
          f"{where}", file=sys.stderr, flush=True)
    return 0


# name: (what it does, its options' adder, which returns what runs it)
COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], Callable[[argparse.Namespace], int]]]] = {
    "labels": ("counterfactual labels: a share of the decisions, every legal action valued by playing the deal out",
               add_labels),
    "fit": ("fit a network to counterfactual labels (--init: fine-tune it; else a residual over the heuristic)",
            add_fit),
    "rounds": ("rounds of labels and fits outside a train.py config (each round's network the next one's base)",
               add_rounds),
    "search-labels": ("search labels for expert iteration: hands played by search, its card values recorded",
                      add_search_labels),
}


# ================================================================================== train.py's rounds
def run_config_rounds(cfg: Any, overwrite: bool, resume_command: str, progress: bool = True) -> int:
    """``python train.py`` with ``algorithm: label_rounds``: the rounds of ``cfg.rounds`` in the run folder with a
    progress line on stderr (``progress``; else its lines a minute apart), every log line in ``train.log`` there,
    the summary on stdout at the end; Ctrl-C or SIGTERM stops it, says what was kept and ``resume_command``. Exit
    code 0, 2 (a bad argument, one ``error:`` line) or 130 (interrupted)."""
    out = rounds_folder(cfg)
    if overwrite and os.path.isdir(out):
        shutil.rmtree(out)
    display = RoundsDisplay(os.path.join(out, "train.log"), every=60.0 if progress else float("inf"))
    try:
        result = train_rounds(cfg, log=display.log, progress=display)
    except ValueError as exc:  # a CheckpointError too
        display.close()
        return _error(exc)
    except KeyboardInterrupt:  # SIGTERM too (the command line makes it one)
        display.interrupted(resume_command)
        return 130
    display.close()
    print_rounds_summary(result, cfg.rounds)
    return 0

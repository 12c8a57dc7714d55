"""Checkpoints and the run's random state.

A run folder ``runs/<name>/`` holds ``last.pt`` (written every ``checkpoint_every`` iterations, at the end
and on Ctrl-C) and ``best.pt`` (the best periodic evaluation): full checkpoints with the model, the
optimizer, the config, the counters, every random state, the snapshot pool and how the rollout collected
ahead started (``overlap``), so that a resumed run equals one that was never cut. ``agent.pt`` is the model
only (:func:`save_agent`): what ships (tools/ship.py) and what to evaluate.

Training is reproducible for a seed (same config, same machine, same ``torch_threads``), resumes included;
a ``max_minutes`` stop is the only wall-clock-dependent part.
"""

from __future__ import annotations

import dataclasses
import os
import random
import shutil
from typing import Any

import numpy as np
import torch
from torch import nn

from rook_env.agents.learned import check_checkpoint_game
from rook_env.agents.learned.model import (CHECKPOINT_FORMAT, CHECKPOINT_VERSION, ActorCritic, CheckpointError,
                                           load_checkpoint, model_from_checkpoint)
from rook_env.games import Game

from .config import Config, game_of

COLLECTION_KEYS = ("ahead", "ray")  # what the collector plug-ins save in a full checkpoint (save_checkpoint)


# ======================================================================================== random state
def rng_state(rng: np.random.Generator, gens: dict[str, torch.Generator] | None = None) -> dict:
    """Every random state of a run: Python's, the run's numpy generator, torch's global one and the named
    torch generators (the collection's and the update's)."""
    return {"python": random.getstate(), "numpy": rng.bit_generator.state, "torch": torch.get_rng_state(),
            "generators": {k: g.get_state() for k, g in (gens or {}).items()}}


def set_rng_state(rng: np.random.Generator, saved: dict, gens: dict[str, torch.Generator] | None = None) -> None:
    """Restore what :func:`rng_state` saved (a resume, a Ctrl-C rollback, a rollout collected again)."""
    random.setstate(saved["python"])
    rng.bit_generator.state = saved["numpy"]
    torch.set_rng_state(saved["torch"])
    for k, g in (gens or {}).items():
        if k not in saved.get("generators", {}):
            raise CheckpointError(f"the checkpoint has no state for the {k!r} random generator (written by an "
                                  f"older train.py: it cannot be resumed exactly)")
        g.set_state(saved["generators"][k])


def seed_everything(seed: int) -> np.random.Generator:
    """Seed Python's, numpy's and torch's global generators; returns the run's own numpy generator, from which
    every deal, opponent draw and torch generator seed of the run is drawn."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    return np.random.default_rng(seed)


# ========================================================================================= checkpoints
def save_checkpoint(path: str, model: ActorCritic, optimizer: torch.optim.Optimizer | None, cfg: Config, state: dict,
                    rng: np.random.Generator | None, pool: list[nn.Module], full: bool = True,
                    gens: dict[str, torch.Generator] | None = None, collection: dict | None = None,
                    flags: dict | None = None) -> None:
    """Write a checkpoint atomically. ``full=False``: the model only (what ships with the repo).
    ``collection``: what the collector plug-in saves (rook_env.training.collectors: ``ahead``, how the rollout
    collected ahead started, so that a resume collects it again; ``ray``, the Ray collectors' ledger).
    ``flags``: the table's rule flags (the run's :class:`Game`'s; built from ``cfg`` when not given)."""
    ckpt = {
        "format": CHECKPOINT_FORMAT,
        "format_version": CHECKPOINT_VERSION,
        "model_kwargs": model.kwargs(),
        "model": {k: v.detach().cpu() for k, v in model.state_dict().items()},
        "game": cfg.game,
        "env_flags": game_of(cfg).flags if flags is None else flags,  # the table's rule flags (players included)
        "config": dataclasses.asdict(cfg),
        "iteration": state["iteration"],
        "decisions": state["decisions"],
        "wall_seconds": state["wall_seconds"],
        "best": state.get("best"),
        "history": state.get("history", []),
        "candidates": state.get("candidates", []),  # the playoff's (their files are in the run's candidates/)
    }
    if full:
        ckpt.update(
            optimizer=optimizer.state_dict(),
            rng=rng_state(rng, gens),
            pool=[{k: v.detach().cpu() for k, v in a.state_dict().items()} for a in pool],
            bc=state.get("bc"),
            **{"ahead": None, **(collection or {})},
        )
    tmp = path + ".tmp"
    torch.save(ckpt, tmp)
    os.replace(tmp, path)


def save_agent(path: str, model: ActorCritic, cfg: Config, state: dict, source: dict,
               flags: dict | None = None) -> None:
    """Write ``agent.pt``: ``model`` alone (no optimizer, random states or pool), labelled with the iteration
    and decisions of the checkpoint it comes from (``source``: the best one, or the playoff's winner)."""
    save_checkpoint(path, model, None, cfg, {**state, "iteration": source["iteration"],
                                             "decisions": source["decisions"]}, None, [], full=False, flags=flags)


# ===================================================================================== resume and load
def new_model(cfg: Config, game: Game) -> ActorCritic:
    """The config's network for the game, freshly initialised (from torch's global generator: seed it first)."""
    env = game.raw_env(**game.flags)
    obs_dim = env.observation_space("player_0")["observation"].shape[0]
    n_actions = env.action_space("player_0").n
    critic_dim = env.state_space.shape[0] if cfg.central_critic else None
    return ActorCritic(obs_dim, n_actions, cfg.hidden, critic_dim, cfg.critic_hidden,
                       heuristic_prior=cfg.heuristic_prior)


def load_model(path: str, game: Game, obs_dim: int, n_actions: int, like: ActorCritic | None = None) -> ActorCritic:
    """The network of a checkpoint of the same game (``init_checkpoint``, a ``league`` member); ``like``: it
    must also have that network's shape (a warm start loads its weights into the config's network)."""
    ckpt = load_checkpoint(path)
    check_checkpoint_game(ckpt, path, game.name, game.flags)
    model = model_from_checkpoint(ckpt, path, obs_dim, n_actions)
    if like is not None and model.kwargs() != like.kwargs():
        raise CheckpointError(f"init_checkpoint {path!r}: its network {model.kwargs()} differs from "
                              f"the config's {like.kwargs()}")
    return model


def restore(path: str, device: torch.device, game: Game, model: ActorCritic, optimizer: torch.optim.Optimizer,
            rng: np.random.Generator, gens: dict[str, torch.Generator], state: Any) -> tuple[list[dict], dict]:
    """Load a full checkpoint (``--resume``) into the run: the model's weights, the optimizer, every random
    state and the counters (attributes of ``state``, a RunState). Returns the snapshot pool's actor weights and
    what the collector plug-in saved (``ahead``, ``ray``: :func:`save_checkpoint`'s ``collection``)."""
    ckpt = load_checkpoint(path, map_location=device)
    check_checkpoint_game(ckpt, path, game.name, game.flags)
    if "optimizer" not in ckpt or "rng" not in ckpt:
        raise CheckpointError(f"{path!r} holds a model only (no optimizer/RNG state): it cannot be resumed")
    kw = model.kwargs()
    loaded = model_from_checkpoint(ckpt, path, obs_dim=kw["obs_dim"], n_actions=kw["n_actions"])
    if loaded.kwargs() != kw:
        raise CheckpointError(f"{path!r}: its network {loaded.kwargs()} differs from the config's {kw}")
    model.load_state_dict(loaded.state_dict())
    optimizer.load_state_dict(ckpt["optimizer"])
    set_rng_state(rng, ckpt["rng"], gens)  # after building ``loaded``, whose initialisation drew from torch's
    for k in ("iteration", "decisions", "wall_seconds", "best", "history", "bc", "candidates"):
        setattr(state, k, ckpt.get(k, getattr(state, k)))
    return ckpt["pool"], {k: ckpt[k] for k in COLLECTION_KEYS if ckpt.get(k) is not None}


# ========================================================================================== run folder
def prepare_run_dir(out_dir: str, resume: str | None, overwrite: bool) -> None:
    """A new run never mixes its checkpoints and event files with an earlier run's."""
    if not resume and os.path.isdir(out_dir) and os.listdir(out_dir):
        if not overwrite:
            raise FileExistsError(
                f"{out_dir} already holds a run: continue it with --resume {os.path.join(out_dir, 'last.pt')}, "
                f"replace it with --overwrite, or choose another --name"
            )
        shutil.rmtree(out_dir)
    os.makedirs(out_dir, exist_ok=True)


"""Behaviour-cloning warm start (``bc_steps > 0``): before PPO, the actor imitates the game's heuristic
agent on ``bc_hands`` heuristic-vs-heuristic hands (cross-entropy, with label smoothing over the legal
actions so that PPO starts with some entropy), and the critic regresses those hands' returns.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import torch
from torch import nn

from rook_env.agents import batched, make_agent
from rook_env.agents.learned.model import ActorCritic
from rook_env.games import Game
from rook_env.vector import sample_legal

from .collection import TRAIN_SEED_LOW
from .config import Config, game_of
from .ppo import make_optimizer


def heuristic_games(cfg: Config, rng: np.random.Generator, progress: Callable[[str, int, int], None],
                    game: Game | None = None) -> dict:
    """``bc_hands`` episodes of the heuristic in every seat, ``num_envs`` at a time on the batched engine:
    every non-forced decision (``skip_forced``) with its observation, mask, critic input, action,
    episode number (in starting order) and Monte Carlo return (gamma = 1: the seat's rewards of the
    episode, times ``reward_scale``). ``progress`` is called after every finished episode. ``game``: the run's
    (built from ``cfg`` when not given)."""
    N = min(cfg.num_envs, cfg.bc_hands)
    game = game or game_of(cfg)
    S = game.seats
    env = game.vector_env(N, max_hands=cfg.max_hands or None, **game.flags)
    teacher = batched(make_agent(game.heuristic, **game.agent_flags))
    tables = np.arange(N)
    obs, info = env.reset(seed=int(rng.integers(TRAIN_SEED_LOW, 2 * TRAIN_SEED_LOW)))
    episode, active = tables.copy(), np.ones(N, bool)
    started, finished = N, 0
    returns = np.zeros((cfg.bc_hands, S))
    dtype = np.dtype(cfg.bc_dtype)
    out = {k: [] for k in ("obs", "mask", "cin", "act", "seat", "episode")}
    while active.any():
        seat, mask = info["seat"], info["action_mask"]
        actions = sample_legal(mask, rng)  # tables whose episodes are all played: any legal move
        rows = np.flatnonzero(active)  # the teacher sees every observation, forced moves included
        actions[rows] = teacher.act_batch(obs[rows], mask[rows], keys=rows * S + seat[rows])
        keep = active & (mask.sum(axis=1) > 1) if cfg.skip_forced else active
        if keep.any():
            out["obs"].append(obs[keep].astype(dtype, copy=False))
            out["mask"].append(mask[keep].view(np.bool_))
            out["cin"].append((env.state_for(seat)[keep] if cfg.central_critic else obs[keep]).astype(dtype, copy=False))
            out["act"].append(actions[keep])
            out["seat"].append(seat[keep])
            out["episode"].append(episode[keep])
        obs, rewards, terminated, truncated, info = env.step(actions)
        returns[episode[active]] += cfg.reward_scale * rewards[active]
        done = np.flatnonzero((terminated | truncated) & active)
        if done.size:  # new episodes in table order while any are left to play
            more = min(len(done), cfg.bc_hands - started)
            episode[done[:more]] = started + np.arange(more)
            active[done[more:]] = False
            started += more
            for _ in done:
                finished += 1
                progress("heuristic hands", finished, cfg.bc_hands)
    data = {k: np.concatenate(out.pop(k)) for k in list(out)}  # pop: one list freed before the next is joined
    data["ret"] = returns[data["episode"], data["seat"]].astype(np.float32)
    return data


def behaviour_clone(model: ActorCritic, cfg: Config, device: torch.device, rng: np.random.Generator,
                    progress: Callable[[str, int, int], None], game: Game | None = None) -> dict:
    """Imitate the heuristic agent (actor: cross-entropy with legal-action label smoothing) and fit the
    critic to the heuristic games' returns (:func:`heuristic_games`). 5% of the hands are held out to
    report the imitation accuracy on unseen decisions; with ``bc_eval_every`` it is measured every that
    many steps and the model ends with the weights of the best measurement (early stopping).
    ``progress(what, done, total)`` is called after every hand and step."""
    t0 = time.time()
    game = game or game_of(cfg)
    phase = slice(0, game.phase_columns)  # the observation starts with the phase one-hot (Game.phases, over, ...)
    data = heuristic_games(cfg, rng, progress, game)
    obs, masks, cins, acts, rets, hand_ids = (data[k] for k in ("obs", "mask", "cin", "act", "ret", "episode"))
    O = torch.as_tensor(obs, device=device)
    M = torch.as_tensor(masks, device=device)
    C = torch.as_tensor(cins, device=device)
    A = torch.as_tensor(acts, device=device)
    R = torch.as_tensor(rets, device=device)
    del obs, masks, cins, data
    held_out = np.asarray(hand_ids) >= int(cfg.bc_hands * 0.95)
    train_idx = torch.as_tensor(np.flatnonzero(~held_out), device=device)
    val_idx = torch.as_tensor(np.flatnonzero(held_out), device=device)
    t_data = time.time() - t0

    @torch.no_grad()
    def accuracy(idx: torch.Tensor) -> dict:
        if len(idx) == 0:
            return {}
        hit = torch.cat([model.dist(O[c].float(), M[c]).mode() == A[c] for c in idx.split(4096)]).float()
        ph = O[idx, phase].argmax(-1)
        out = {"all": hit.mean().item()}
        for k, name in enumerate(game.phases):
            if (ph == k).any():
                out[name] = hit[ph == k].mean().item()
        return out

    opt = make_optimizer(model, cfg.bc_lr)
    n, eps = len(train_idx), cfg.bc_label_smoothing
    best: tuple[float, int, dict] | None = None  # held-out accuracy, step, weights (bc_eval_every)
    curve = []  # (step, held-out accuracy)
    for step in range(cfg.bc_steps):
        for g in opt.param_groups:  # linear decay to a tenth
            g["lr"] = cfg.bc_lr * (1 - 0.9 * step / cfg.bc_steps)
        mb = train_idx[torch.randint(0, n, (min(cfg.bc_batch, n),), device=device)]
        d = model.dist(O[mb].float(), M[mb])
        nll = -d.log_prob(A[mb])
        smooth = -(torch.where(M[mb], d.log_probs, torch.zeros_like(d.log_probs)).sum(-1) / M[mb].sum(-1))
        pi_loss = ((1 - eps) * nll + eps * smooth).mean()
        v_loss = 0.5 * ((model.value(C[mb].float()) - R[mb]) ** 2).mean()
        opt.zero_grad()
        (pi_loss + cfg.vf_coef * v_loss).backward()
        nn.utils.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)
        opt.step()
        progress("steps", step + 1, cfg.bc_steps)
        if cfg.bc_eval_every and len(val_idx) and ((step + 1) % cfg.bc_eval_every == 0 or step + 1 == cfg.bc_steps):
            acc = accuracy(val_idx)["all"]
            curve.append((step + 1, round(acc, 4)))
            if best is None or acc > best[0]:
                best = (acc, step + 1, {k: v.detach().clone() for k, v in model.state_dict().items()})
    early = {}
    if best is not None:
        model.load_state_dict(best[2])
        early = {"kept_step": best[1], "held_out_curve": curve}

    return {"decisions": len(A), "hands": cfg.bc_hands, "steps": cfg.bc_steps, **early,
            "train_accuracy": accuracy(train_idx[:20000]), "held_out_accuracy": accuracy(val_idx),
            "pi_loss": pi_loss.item(), "v_loss": v_loss.item(),
            "seconds_data": round(t_data, 1), "seconds": round(time.time() - t0, 1)}

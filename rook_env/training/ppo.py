"""The PPO algorithm, pure functions of arrays and tensors: advantages (GAE over each seat's own
decisions), the clipped loss, and the update of one rollout.

Credit assignment in the AEC game: each learning seat's trajectory is *its own decisions only*, in
order. A reward the env pays to a seat (score_diff at the end of a hand, times ``reward_scale``) is
credited to that seat's latest decision; GAE then bootstraps from one decision of the seat to the
seat's next decision, and the trajectory ends (done) at the seat's last decision of the episode. One
seat's reward is never paired with another seat's observation (:func:`episode_advantages`).

The update (CleanRL's formulation): clipped surrogate, clipped value loss, entropy bonus, advantage
normalisation per minibatch, global gradient clipping, optional early stop on the approximate KL; the loss
terms of plug-ins (rook_env.training.losses) are added to each minibatch's. It takes only the settings it
reads (:class:`PPOSettings`); the learning rate and entropy schedules are the loop's (rook_env.training.loop).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from rook_env.agents.learned.model import ActorCritic

from .config import Config


# ============================================================================================ advantages
def compute_gae(rewards: np.ndarray, values: np.ndarray, dones: np.ndarray, last_value: float,
                gamma: float, gae_lambda: float) -> tuple[np.ndarray, np.ndarray]:
    """GAE over ONE seat's decisions in order. ``dones[t] = 1``: the episode ended after decision t
    (no bootstrap from t+1). ``last_value``: value after the final decision when it is not done.
    Returns (advantages, returns = advantages + values)."""
    T = len(rewards)
    adv = np.zeros(T, np.float32)
    lastgaelam = 0.0
    for t in reversed(range(T)):
        next_value = last_value if t == T - 1 else values[t + 1]
        nonterminal = 1.0 - float(dones[t])
        delta = rewards[t] + gamma * next_value * nonterminal - values[t]
        lastgaelam = delta + gamma * gae_lambda * nonterminal * lastgaelam
        adv[t] = lastgaelam
    return adv, adv + np.asarray(values, np.float32)


def trajectory_advantages(traj: np.ndarray, rewards: np.ndarray, values: np.ndarray, gamma: float,
                          gae_lambda: float) -> tuple[np.ndarray, np.ndarray]:
    """GAE for many finished trajectories at once (vectorised :func:`compute_gae`).

    ``traj[i]`` names decision i's trajectory (one seat's decisions in one episode); a trajectory's
    decisions appear in order, and each ends done (no bootstrap after its last decision).
    Returns (advantages, returns) in the input's order."""
    n = len(traj)
    order = np.argsort(traj, kind="stable")
    t = np.asarray(traj)[order]
    r = np.asarray(rewards, np.float64)[order]
    v = np.asarray(values, np.float64)[order]
    last = np.ones(n, bool)  # the last decision of its trajectory
    last[:-1] = t[1:] != t[:-1]
    next_v = np.zeros(n)
    next_v[:-1] = v[1:]
    next_v[last] = 0.0
    delta = r + gamma * next_v - v
    # from_end[i]: decisions after i in its trajectory; a reverse scan over that distance, all trajectories at once
    seg_end = np.flatnonzero(last)
    from_end = seg_end[np.searchsorted(seg_end, np.arange(n))] - np.arange(n)
    adv = np.zeros(n)
    by_distance = np.argsort(from_end, kind="stable")
    bounds = np.searchsorted(from_end[by_distance], np.arange(from_end.max(initial=0) + 2))
    for d in range(len(bounds) - 1):
        i = by_distance[bounds[d]:bounds[d + 1]]
        adv[i] = delta[i] if d == 0 else delta[i] + gamma * gae_lambda * adv[i + 1]
    out_adv = np.empty(n, np.float32)
    out_ret = np.empty(n, np.float32)
    out_adv[order] = adv
    out_ret[order] = adv + v
    return out_adv, out_ret


def episode_advantages(seats: Sequence[int], rewards: Sequence[float], values: Sequence[float],
                       gamma: float, gae_lambda: float) -> tuple[np.ndarray, np.ndarray]:
    """Advantages and returns for a finished episode's decisions (interleaved seats, in play order).

    ``rewards[i]`` is the reward credited to decision i (the env's reward to that seat, credited to
    the seat's latest decision). Each seat's decisions form their own trajectory: bootstrapping goes
    from a seat's decision to the same seat's next decision, and ends at its last one.
    """
    return trajectory_advantages(np.asarray(seats), rewards, values, gamma, gae_lambda)



# ================================================================================================ loss
def ppo_loss(new_logp: torch.Tensor, old_logp: torch.Tensor, advantages: torch.Tensor, new_values: torch.Tensor,
             old_values: torch.Tensor, returns: torch.Tensor, entropy: torch.Tensor, clip_coef: float,
             vf_coef: float, ent_coef: float, clip_vloss: bool = True, norm_adv: bool = True) -> dict:
    """The PPO loss of one minibatch (CleanRL's formulation). Returns the total ``loss`` and its parts."""
    logratio = new_logp - old_logp
    ratio = logratio.exp()
    with torch.no_grad():
        approx_kl = ((ratio - 1) - logratio).mean()  # the k3 estimator
        clipfrac = ((ratio - 1.0).abs() > clip_coef).float().mean()
    if norm_adv and advantages.numel() > 1:
        advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    pg_loss1 = -advantages * ratio
    pg_loss2 = -advantages * torch.clamp(ratio, 1 - clip_coef, 1 + clip_coef)
    pg_loss = torch.max(pg_loss1, pg_loss2).mean()
    if clip_vloss:
        v_unclipped = (new_values - returns) ** 2
        v_clipped = old_values + torch.clamp(new_values - old_values, -clip_coef, clip_coef)
        v_loss = 0.5 * torch.max(v_unclipped, (v_clipped - returns) ** 2).mean()
    else:
        v_loss = 0.5 * ((new_values - returns) ** 2).mean()
    entropy_loss = entropy.mean()
    loss = pg_loss - ent_coef * entropy_loss + vf_coef * v_loss
    return {"loss": loss, "pg_loss": pg_loss, "v_loss": v_loss, "entropy": entropy_loss,
            "approx_kl": approx_kl, "clipfrac": clipfrac}




# ============================================================================================== update
@dataclass(frozen=True)
class PPOSettings:
    """What the update reads of the config (:meth:`of`); the field comments are the config's."""

    update_epochs: int  # passes over the rollout
    minibatch_size: int
    clip_coef: float  # ratio clipping (and value clipping) range
    vf_coef: float
    clip_vloss: bool
    norm_adv: bool  # normalise advantages per minibatch
    max_grad_norm: float  # global gradient clipping
    target_kl: float  # > 0: stop the epochs early when approx_kl exceeds it

    @classmethod
    def of(cls, cfg: Config) -> PPOSettings:
        return cls(**{f: getattr(cfg, f) for f in cls.__dataclass_fields__})


LossFn = Callable[[ActorCritic], dict]  # a loss term's minibatch loss: f(model) -> {"loss": ..., parts}


def ppo_update(model: ActorCritic, optimizer: torch.optim.Optimizer, batch: dict, s: PPOSettings,
               ent_coef: float, generator: torch.Generator | None = None,
               extra: LossFn | Sequence[LossFn] | None = None, policy: bool = True) -> dict:
    """``s.update_epochs`` passes of minibatch PPO over one rollout; returns the mean of each loss term.

    ``batch`` is the collector's (rook_env.training.collection): obs, mask, act, the behaviour policy's
    logp and val, adv, ret, cin (the centralized critic's input; None: the critic reads obs) and hint (a residual
    policy's heuristic actions; None for a plain network).
    ``ent_coef`` is the scheduled entropy coefficient. ``generator`` shuffles the minibatches (its own,
    so that an update beside a collection stays reproducible). ``extra``: loss terms (one or a sequence), each
    ``f(model)`` a loss added to every minibatch's after PPO's (its ``loss`` and parts, logged as ``exit_<part>``:
    expert iteration's distillation, rook_env.training.losses).
    ``policy=False`` trains the critic alone (the value loss; the config's ``critic_warmup``): the actor is unchanged."""
    device = next(model.parameters()).device
    terms = [] if extra is None else [extra] if callable(extra) else list(extra)
    b = {k: torch.as_tensor(v, device=device) for k, v in batch.items() if v is not None}
    critic_in = b["cin"] if "cin" in b else b["obs"]  # the collector leaves cin None without central_critic
    n = len(b["act"])
    logs = {k: [] for k in ("loss", "pg_loss", "v_loss", "entropy", "approx_kl", "clipfrac")}
    model.train()
    for epoch in range(s.update_epochs):
        perm = torch.randperm(n, device=device, generator=generator)
        for start in range(0, n, s.minibatch_size):
            mb = perm[start:start + s.minibatch_size]
            # index_select rather than b[k][mb]: the same rows by a faster copy (the update about 1.05x faster
            # on one core, the same numbers: benchmarks/bench_update.py)
            m = {k: v.index_select(0, mb) for k, v in b.items() if k != "cin"}
            dist = model.dist(m["obs"], m["mask"], m.get("hint"))
            out = ppo_loss(
                dist.log_prob(m["act"]), m["logp"], m["adv"], model.value(critic_in.index_select(0, mb)), m["val"],
                m["ret"], dist.entropy(), s.clip_coef, s.vf_coef, ent_coef, s.clip_vloss, s.norm_adv,
            )
            loss = out["loss"] if policy else s.vf_coef * out["v_loss"]
            for term in terms if policy else ():
                for k, v in term(model).items():
                    if k == "loss":
                        loss = loss + v
                    else:
                        logs.setdefault(f"exit_{k}", []).append(v.item())
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), s.max_grad_norm)
            optimizer.step()
            for k in ("loss", "pg_loss", "v_loss", "entropy", "approx_kl", "clipfrac"):
                logs[k].append(out[k].item())
        if s.target_kl and np.mean(logs["approx_kl"][-max(1, n // s.minibatch_size):]) > s.target_kl:
            break
    return {k: float(np.mean(v)) for k, v in logs.items()}


def make_optimizer(model: nn.Module, lr: float, eps: float = 1e-8) -> torch.optim.Optimizer:
    """Adam; fused (one kernel over all parameters, about 1.2x faster updates on one CPU core) where torch
    has it for the model's device."""
    device = next(model.parameters()).device
    return torch.optim.Adam(model.parameters(), lr=lr, eps=eps, fused=device.type in ("cpu", "cuda"))



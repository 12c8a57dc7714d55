"""PPO self-play for Rook, in one file (in the spirit of CleanRL's ppo.py): the four-player partnership
game, or call-your-partner Rook for 4 to 6 players (``game: call_partner``, ``players``).

    python train.py --config configs/smoke.yaml                    # about a minute on 2 CPU cores
    python train.py --config configs/default.yaml                  # the shipped agent's run
    python train.py --config configs/from_scratch.yaml             # pure self-play, no warm start
    python train.py --config configs/call_partner.yaml             # call-your-partner Rook, 5 players
    python train.py --config configs/default.yaml --lr 1e-4 --set seed=3 --opponent_mix.heuristic 0.6
    python train.py --resume runs/default/last.pt --total_decisions 12_000_000
    tensorboard --logdir runs

What happens, all of it in this file:

0. **The game** (:class:`Game`, :func:`game_of`) is the only game-specific part: the batched engine
   (:class:`rook_env.vector.RookVectorEnv`, or :class:`rook_env.call_partner.vector.CallPartnerVectorEnv`
   for call-your-partner Rook), the seat count ``n``, the learning groups, the heuristic and the fair
   match used for evaluation. Everything below is one loop for both.
1. **One network for every seat.** Observations are seat-relative, so a single masked-categorical
   actor (rook_env/agents/learned/model.py) plays all n seats; partners are the same policy. Illegal logits are
   set to -1e9, so illegal actions have probability exactly 0 and are never sampled.
2. **Opponents per game** are drawn from ``opponent_mix`` (interpolated towards ``opponent_mix_end``
   over training): ``self`` (all n seats are the current policy and all learn), ``pool`` (a past
   snapshot of the policy, or a fixed ``league`` member: checkpoints named in the config, e.g. earlier
   shipped agents, that stay in the pool for the whole run), ``heuristic`` (the game's heuristic agent) / ``random`` (uniformly random
   legal play). Outside ``self`` the learner plays one group of seats drawn at random each game and the
   opponent the others: the partnership game's groups are the two teams, call-your-partner Rook's are
   single seats (the learner in one chair, the opponent in the n - 1 others, as in the rotation
   evaluation; its secret partner may be an opponent seat). With individual rewards (``score_diff``:
   own hand score minus the mean of the others') every seat's return is its own.
3. **Credit assignment in the AEC game.** Each learning seat's trajectory is *its own decisions only*,
   in order. A reward the env pays to a seat (score_diff at the end of a hand, times ``reward_scale``)
   is credited to that seat's latest decision; GAE then bootstraps from one decision of the seat to
   the seat's next decision, and the trajectory ends (done) at the seat's last decision of the
   episode. One seat's reward is never paired with another seat's observation
   (:func:`episode_advantages`).
4. **Batched collection** on :class:`rook_env.vector.RookVectorEnv`: ``num_envs`` tables are arrays
   stepped together. Each step, the learner seats to act at all tables go into one forward pass, each
   pool snapshot's seats into one more, the heuristic decides for all its seats in one ``act_batch``
   call (its card memory keyed by ``table * n + seat``; the memoryless call-your-partner heuristic one
   row at a time) and random opponents through ``sample_legal``.
   Rewards are credited, and finished episodes booked, with array operations; the engine deals a
   finished table its next hand in the same step (auto-reset) and the table draws new opponents. A
   rollout starts new episodes until at least ``rollout_decisions`` learner decisions are taken
   (counting those of the episodes still running) and then finishes the hands in progress (no
   truncated trajectories, so no truncation bootstrapping and resumes start cleanly between hands);
   every call starts fresh tables from the run's generator. (The call-your-partner engine steps its
   tables in a Python loop: the same interface, not array speed.) Forced moves (exactly one legal action)
   are played without recording a decision (``skip_forced``): they carry no policy gradient, so
   they are part of the environment's dynamics and the seat's trajectory skips them.
5. **Centralized critic** (``central_critic: true``): the value network sees ``env.state_for(agent)``
   (the seat's observation plus every hidden hand and the nest). Training only: the actor never sees it.
6. **PPO update**: clipped surrogate, clipped value loss, entropy bonus (scheduled), advantage
   normalisation per minibatch, global gradient clipping, linear learning-rate schedule
   (:func:`ppo_loss`, :func:`ppo_update`).
6b. **Overlap** (``overlap: true``, asynchronous PPO with one update of policy lag): the update of rollout k
   runs in a second thread while this thread collects rollout k + 1 with the weights from before that
   update (torch and numpy release the GIL in their kernels, so the two share two cores). PPO's ratio is
   taken against the behaviour policy's recorded log-probabilities, so the lag is what its clipping
   bounds. Collection and update draw from their own torch generators, so a run stays reproducible;
   checkpoints record how the rollout collected ahead started (its weights and random states) and a
   resume collects it again, so cut-and-resumed runs equal straight ones. ``overlap: false`` collects,
   then updates, in turn.
7. **Behaviour-cloning warm start** (``bc_steps > 0``): the actor imitates the heuristic agent on
   ``bc_hands`` heuristic-vs-heuristic hands, and the critic regresses their returns, before PPO.
8. **Evaluation** every ``eval_every`` iterations, greedy, on seeded deals: partnership duplicate
   (each deal with both seatings; points per deal) or call-your-partner rotation (each deal in all n
   rotations, the policy in one chair and the opponent in the others; the policy's hand score minus
   the others' mean), with 95% intervals. Checkpoints record ``game`` and the table's rule flags; the
   PPO agent refuses a table of another game (or player count). ``best.pt`` has the best periodic
   score; with ``playoff_candidates`` the best few are played again at the end on more, fresh deals
   and the winner becomes ``agent.pt`` (few deals rank close checkpoints only roughly).

Outputs in ``runs/<name>/``: TensorBoard events, ``last.pt`` / ``best.pt`` (model, optimizer, config,
counters, RNG states, snapshot pool), ``agent.pt`` (the best model only, or the playoff's winner: what ships, see
tools/ship.py), ``candidates/`` (the playoff's), ``curve.png`` and ``summary.json``. A new run refuses an existing ``runs/<name>/``
unless ``--overwrite`` (or ``--resume``). Ctrl-C saves ``last.pt`` and prints how to resume.
Training is reproducible for a seed (same config, same machine, same ``torch_threads``), resumes
included; a ``max_minutes`` stop is the only wall-clock-dependent part.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import math
import os
import platform
import random
import shutil
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
import yaml
from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException
from torch import nn

from rook_env import raw_env
from rook_env.agents import make_agent
from rook_env.agents.learned import check_checkpoint_game
from rook_env.agents.registry import GAMES, game_config
from rook_env.agents.learned.model import (
    CHECKPOINT_FORMAT,
    CHECKPOINT_VERSION,
    ActorCritic,
    CheckpointError,
    MaskedCategorical,
    load_checkpoint,
    model_from_checkpoint,
)
from rook_env.evaluation.deals import hand_flags
from rook_env.vector import RookVectorEnv, sample_legal

OPPONENT_KINDS = ("self", "pool", "heuristic", "random")
EVAL_NAMES = ("random", "heuristic", "search")  # besides checkpoint paths; "heuristic" is the game's heuristic
# Deal seeds: evaluation uses small seeds (see eval_seed / final_eval_seed); training deals are drawn
# from [2**40, 2**41) so that no training deal is an evaluation deal.
TRAIN_SEED_LOW = 2**40


# =============================================================================================== config
@dataclass
class Config:
    """Every training option. A YAML file and the command line override these defaults (OmegaConf
    checks the types); :meth:`check` checks the values."""

    name: str = "default"  # run directory runs/<name>/
    run_dir: str = "runs"
    seed: int = 1
    device: str = "auto"  # auto (cuda when present), cpu, cuda, cuda:0 ...
    torch_threads: int = 1
    game: str = "partnership"  # partnership (4 seats, fixed teams) or call_partner (4-6 seats, individual scores)
    players: int = 0  # seats at the table: call_partner 4, 5 or 6; 0: the game's own (partnership 4, call_partner 5)
    env_flags: dict[str, Any] = field(default_factory=dict)
    # Game episodes (env_flags.episode=game) end after this many hands at the latest (truncated, no reward:
    # a draw for win_loss). Needed: early policies can play a game for ever, both scores sinking below zero.
    max_hands: int = 0  # the game's rule flags (RULES.md); {} = default rules
    # --- budget
    total_decisions: int = 20_000_000  # learner decisions to train on
    max_minutes: float = 0.0  # stop training after this wall time of this session, BC included (0: no limit)
    # --- collection
    num_envs: int = 64
    rollout_decisions: int = 16384  # learner decisions per PPO update (at least; hands in progress finish)
    reward_scale: float = 0.01  # score_diff 125 -> 1.25
    skip_forced: bool = True  # moves with one legal action are played without recording a decision
    # Collect the next rollout while the update runs (asynchronous PPO, one update of policy lag): the update in
    # a second thread, so the loop keeps two cores busy. False: collect, then update, in turn.
    overlap: bool = True
    # --- PPO
    lr: float = 3e-4
    lr_end: float = 3e-5  # linear schedule from lr to lr_end over total_decisions
    gamma: float = 1.0
    gae_lambda: float = 0.95
    update_epochs: int = 4
    minibatch_size: int = 2048
    clip_coef: float = 0.2
    clip_vloss: bool = True
    norm_adv: bool = True
    vf_coef: float = 0.5
    ent_coef: float = 0.01
    ent_coef_end: float = 0.002  # linear schedule
    max_grad_norm: float = 0.5
    target_kl: float = 0.0  # > 0: stop an update's epochs early when approx_kl exceeds it
    # --- network
    hidden: list[int] = field(default_factory=lambda: [256, 256, 256])
    critic_hidden: list[int] = field(default_factory=list)  # the critic's hidden layers; [] = the same as hidden
    central_critic: bool = True
    init_checkpoint: str = ""  # start from this checkpoint's weights (a fresh run otherwise: new optimizer, counters)
    # --- opponents
    opponent_mix: dict[str, float] = field(
        default_factory=lambda: {"self": 0.4, "pool": 0.2, "heuristic": 0.3, "random": 0.1})
    opponent_mix_end: dict[str, float] = field(default_factory=dict)  # {} = constant mix; else linear interpolation
    pool_size: int = 10  # past snapshots kept
    pool_every: int = 10  # iterations between snapshots
    # Fixed league members: checkpoints (same game) whose actors join the pool for the whole run, beside the
    # snapshots (pool_size counts snapshots only): past shipped agents, a frozen target (benchmarks/exploitability.py).
    league: list[str] = field(default_factory=list)
    # --- behaviour-cloning warm start from the heuristic agent
    bc_steps: int = 0
    bc_hands: int = 2000
    bc_batch: int = 512
    bc_lr: float = 1e-3
    bc_label_smoothing: float = 0.05  # spread over the legal actions: keeps some entropy for PPO
    # --- evaluation, checkpoints
    eval_every: int = 10  # iterations; 0 = only at the end
    eval_deals: int = 200  # duplicate deals per opponent (each played with both seatings)
    eval_opponents: list[str] = field(default_factory=lambda: ["random", "heuristic"])
    # Checkpoint selection over the evaluated field: "min" (the weakest result over eval_opponents), "mean", or
    # one eval opponent's name (select on that result only).
    select_by: str = "min"
    eval_seed: int = 1_000  # seed of the checkpoint-selection deals (keep held-out evaluations on other seeds)
    final_eval_deals: int = 0  # > 0: evaluate the best checkpoint at the end on held-out deals
    final_eval_seed: int = 50_000_000
    # Playoff (0: off). The periodic evaluations' few deals can rank close checkpoints only roughly, so the
    # playoff_candidates best of them by periodic score are kept and played again at the end on playoff_deals
    # deals of playoff_seed (the same deals for all); the winner by select_by becomes agent.pt.
    playoff_candidates: int = 0
    playoff_deals: int = 1000
    playoff_seed: int = 3_000_000
    checkpoint_every: int = 10  # iterations
    progress: bool = True  # tqdm bar

    def check(self) -> Config:
        """Raise ValueError naming the first field whose value is out of range."""

        def bad(name: str, why: str) -> None:
            raise ValueError(f"config field {name!r}: {why} (got {getattr(self, name)!r})")

        for f in dataclasses.fields(self):
            if f.type == "float" and not math.isfinite(getattr(self, f.name)):
                bad(f.name, "must be a finite number")
        for name in ("total_decisions", "num_envs", "rollout_decisions", "update_epochs", "minibatch_size",
                     "torch_threads", "pool_size", "pool_every", "eval_deals", "playoff_deals", "bc_hands", "bc_batch",
                     "lr", "bc_lr", "reward_scale", "clip_coef"):
            if getattr(self, name) <= 0:
                bad(name, "must be > 0")
        if self.playoff_candidates and self.playoff_seed in (self.eval_seed, self.final_eval_seed):
            bad("playoff_seed", "must differ from eval_seed and final_eval_seed (its deals would not be fresh)")
        for name in ("seed", "eval_seed", "final_eval_seed", "playoff_candidates", "playoff_seed", "bc_steps",
                     "eval_every", "final_eval_deals",
                     "checkpoint_every", "max_minutes", "target_kl", "ent_coef", "ent_coef_end", "vf_coef", "lr_end",
                     "max_grad_norm"):
            if getattr(self, name) < 0:
                bad(name, "must be >= 0")
        for name in ("gamma", "gae_lambda"):
            if not 0 <= getattr(self, name) <= 1:
                bad(name, "must be in [0, 1]")
        if not 0 <= self.bc_label_smoothing < 1:
            bad("bc_label_smoothing", "must be in [0, 1)")
        if not self.name or os.sep in self.name or self.name in (".", ".."):
            bad("name", "must be a folder name (not empty, no path separator)")
        if not self.hidden or min(self.hidden) <= 0:
            bad("hidden", "must be a non-empty list of positive integers")
        if self.critic_hidden and min(self.critic_hidden) <= 0:
            bad("critic_hidden", "must be a list of positive integers ([] = the same as hidden)")
        for name in ("opponent_mix", "opponent_mix_end"):
            mix = getattr(self, name)
            if name == "opponent_mix_end" and not mix:
                continue
            unknown = sorted(set(mix) - set(OPPONENT_KINDS))
            if unknown:
                bad(name, f"unknown opponent kind(s) {', '.join(unknown)}; known: {', '.join(OPPONENT_KINDS)}")
            if not all(math.isfinite(w) and w >= 0 for w in mix.values()):
                bad(name, "weights must be finite numbers >= 0")
            if sum(mix.values()) <= 0:
                bad(name, "weights must not all be 0")
        if not self.eval_opponents:
            bad("eval_opponents", "must name at least one opponent")
        for opp in self.eval_opponents:
            if opp not in EVAL_NAMES and not opp.endswith(".pt"):
                bad("eval_opponents", f"unknown opponent {opp!r}; use {', '.join(EVAL_NAMES)} or a checkpoint path")
        if len(set(self.eval_opponents)) != len(self.eval_opponents):
            bad("eval_opponents", "names an opponent twice")
        if self.game == "call_partner" and "search" in self.eval_opponents:
            bad("eval_opponents", "the search agent plays the partnership game only")
        if self.select_by not in ("min", "mean") and self.select_by not in self.eval_opponents:
            bad("select_by", "must be min, mean or one of eval_opponents")
        for path in self.league:
            if not str(path).endswith(".pt"):
                bad("league", f"{path!r} is not a checkpoint path (*.pt)")
        if not (self.device in ("auto", "cpu") or self.device.startswith("cuda")):
            bad("device", "must be auto, cpu or cuda[:N]")
        if self.max_hands < 0:
            bad("max_hands", "must be >= 0 (0: no limit)")
        if self.env_flags.get("episode") == "game" and self.max_hands <= 0:
            bad("max_hands", "must be > 0 with env_flags.episode=game: early policies can play a game for ever "
                "(both scores sinking below zero)")
        if self.game not in GAMES:
            bad("game", f"must be one of {', '.join(GAMES)}")
        if "game" in self.env_flags or "players" in self.env_flags:
            bad("env_flags", "'game' and 'players' are config fields of their own, not rule flags")
        if self.game == "partnership" and self.players not in (0, 4):
            bad("players", "the partnership game has 4 seats (0 or 4)")
        try:
            game_config(game_flags(self))  # unknown rule flags / bad values raise, naming them
        except (TypeError, ValueError) as exc:
            raise ValueError(f"config field 'env_flags': {exc}") from None
        return self


# ================================================================================================ games
def game_flags(cfg: Config) -> dict[str, Any]:
    """The rule flags of the config's table with its ``game`` key (rook_env.agents.registry.game_config)."""
    return {**cfg.env_flags, "game": cfg.game, **({"players": cfg.players} if cfg.players else {})}


class RowByRow:
    """``act_batch`` for an agent that decides from one observation alone and keeps no card memory
    (the call-your-partner heuristic): one ``act`` per row, so the table keys are not needed."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent

    def reset(self) -> None:
        self.agent.reset()

    def act_batch(self, obs: np.ndarray, mask: np.ndarray, keys: np.ndarray | None = None) -> np.ndarray:
        act = self.agent.act
        return np.array([act({"observation": o, "action_mask": m}) for o, m in zip(obs, mask)], np.int64)


@dataclass(frozen=True)
class Game:
    """All that collection, the warm start, evaluation and checkpoints need to know of the game:
    the training loop is one loop, parametrised by this (:func:`game_of`).

    A non-self episode's learner plays the seats ``s`` with ``s % groups == g`` for a group ``g``
    drawn per episode: one team (seats g and g + 2) in the partnership game (``groups=2``), one seat
    in call-your-partner Rook (``groups=seats``), the opponent kind filling the other seats: the
    same "candidate against the field" as the rotation evaluation."""

    name: str
    seats: int
    groups: int
    flags: dict[str, Any]  # the rule flags the game's env constructors take (no "game" key)
    vector_env: Callable[..., Any]  # (num_envs, **flags): RookVectorEnv's batched API
    raw_env: Callable[..., Any]  # (**flags): the PettingZoo AEC env (sizes of observations, actions, critic input)
    heuristic: str  # agent spec of the game's heuristic (opponent kind and eval opponent "heuristic")
    match: Callable[..., tuple[float, tuple[float, float]]]  # (factory, opponent spec, deals, seed, agent flags)
    eval_unit: str  # what match measures
    phases: tuple[str, ...]  # decision phases of the observation's leading phase one-hot (BC accuracy)
    phase_columns: int  # width of that one-hot

    @property
    def agent_flags(self) -> dict[str, Any]:
        return {**self.flags, "game": self.name}

    def heuristic_batch(self) -> Any:
        """The game's heuristic with ``act_batch(obs, mask, keys)``; keys are ``table * seats + seat``."""
        agent = make_agent(self.heuristic, **self.agent_flags)
        return agent if hasattr(agent, "act_batch") else RowByRow(agent)


def duplicate_match(factory: Callable, opponent: str, deals: int, seed: int, flags: dict,
                    game_scores: bool = False) -> tuple[float, tuple[float, float]]:
    """Partnership duplicate (rook_env.evaluation.play_match): each deal with both seatings; points per deal.
    ``game_scores``: every hand is dealt with its game's running score (a game-episode run's agent reads it)."""
    from rook_env.evaluation import play_match

    flags = {k: v for k, v in flags.items() if k != "game"}
    res = play_match(factory, opponent, deals=deals, seed=seed, flags=flags, duplicate=True, workers=1,
                     game_scores=game_scores)
    return float(res.mean), tuple(float(x) for x in res.ci)


def rotation_match(factory: Callable, opponent: str, deals: int, seed: int,
                   flags: dict) -> tuple[float, tuple[float, float]]:
    """Call-your-partner rotation (rook_env.evaluation.play_rotation_match): the policy in one chair,
    ``opponent`` in the others, each deal played in every rotation; the policy's hand score minus
    the mean of the others' (its mean score_diff)."""
    from rook_env.evaluation.call_partner import play_rotation_match

    res = play_rotation_match([factory, opponent], deals=deals, seed=seed, flags=flags, workers=1, check=False)
    return float(res.mean), tuple(float(x) for x in res.ci)


def game_of(cfg: Config) -> Game:
    """The :class:`Game` of a config."""
    if cfg.game == "call_partner":
        from rook_env.call_partner import raw_env as call_partner_env
        from rook_env.call_partner.rules import PHASE_NAMES
        from rook_env.call_partner.vector import CallPartnerVectorEnv

        flags = {k: v for k, v in game_flags(cfg).items() if k != "game"}
        flags["players"] = n = game_config(game_flags(cfg)).players
        return Game("call_partner", n, n, flags, CallPartnerVectorEnv, call_partner_env, "call_partner_heuristic",
                    rotation_match, "points per hand over the field (rotation, greedy)", PHASE_NAMES[:6],
                    len(PHASE_NAMES))
    return Game("partnership", 4, 2, dict(cfg.env_flags), RookVectorEnv, raw_env, "heuristic", duplicate_match,
                "points per deal (duplicate, greedy)", ("bid", "discard", "trump", "play"), 5)


def make_train_config(config_path: str | None = None, overrides: Sequence[str] = (), base: dict | None = None) -> Config:
    """Defaults <- ``base`` (a resumed checkpoint's config) <- YAML file <- ``field=value`` overrides.

    A dotted override (``opponent_mix.heuristic=0.5``) sets one entry of a mapping; a whole value
    (``opponent_mix={self: 1}``, or a mapping in the YAML file) replaces the field. Errors are
    ValueErrors naming the field (or the file and line of a YAML syntax error).
    """
    cfg = OmegaConf.structured(Config)

    def apply(items: dict, source: str) -> None:
        for key, value in items.items():
            try:
                OmegaConf.update(cfg, str(key), value, merge=False)
            except OmegaConfBaseException as exc:
                what = "unknown config field" if "not in 'Config'" in str(exc) else "config field"
                raise ValueError(f"{what} {exc.full_key!r} (from {source}): {str(exc).splitlines()[0]}") from None
            except ValueError:  # OmegaConf: a dotted key below a list or a number
                raise ValueError(f"config field {key!r} (from {source}): no such entry") from None

    if base:
        apply(base, "the checkpoint")
    if config_path:
        try:
            data = OmegaConf.to_container(OmegaConf.load(config_path))
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f", line {mark.line + 1}, column {mark.column + 1}" if mark else ""
            raise ValueError(f"{config_path}{where}: malformed YAML: {getattr(exc, 'problem', None) or exc}") from None
        if not isinstance(data, dict):
            raise ValueError(f"{config_path}: a config file must be a YAML mapping of field: value")
        apply(data, config_path)
    parsed = {}
    for item in overrides:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise ValueError(f"override {item!r} must look like field=value")
        try:
            parsed[key.strip()] = yaml.safe_load(value) if value.strip() else ""
        except yaml.YAMLError:
            raise ValueError(f"override {item!r}: the value is not valid YAML") from None
    apply(parsed, "the command line")
    try:
        return OmegaConf.to_object(cfg).check()
    except OmegaConfBaseException as exc:  # e.g. an unresolvable ${interpolation}
        raise ValueError(f"config field {exc.full_key!r}: {str(exc).splitlines()[0]}") from None


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description="PPO self-play training for Rook. Any config field (see Config in train.py) can be set with "
        "--set field=value or --field value; a map entry with --opponent_mix.heuristic 0.5.",
    )
    p.add_argument("--config", help="YAML config file (fields of train.Config)")
    p.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE", help="override a config field")
    p.add_argument("--resume", metavar="PATH", help="resume from a checkpoint written by this script (last.pt)")
    p.add_argument("--overwrite", action="store_true",
                   help="delete an existing runs/<name>/ and start afresh (a new run refuses it otherwise)")
    args, rest = p.parse_known_args(argv)
    i = 0
    while i < len(rest):  # --field value / --field=value become field=value overrides
        tok = rest[i]
        if not tok.startswith("--"):
            p.error(f"unexpected argument {tok!r}")
        key, eq, val = tok[2:].partition("=")
        if eq:
            i += 1
        elif i + 1 < len(rest):
            val = rest[i + 1]
            i += 2
        else:
            p.error(f"{tok} needs a value")
        args.set.append(f"{key.replace('-', '_')}={val}")
    return args


# ================================================================================ the algorithm (pure)
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


def ppo_update(model: ActorCritic, optimizer: torch.optim.Optimizer, batch: dict, cfg: Config,
               ent_coef: float, generator: torch.Generator | None = None) -> dict:
    """``update_epochs`` passes of minibatch PPO over one rollout; returns the mean of each loss term.
    ``generator`` shuffles the minibatches (its own, so that an update beside a collection stays reproducible)."""
    device = next(model.parameters()).device
    b = {k: torch.as_tensor(v, device=device) for k, v in batch.items() if v is not None}
    critic_in = b["cin"] if cfg.central_critic else b["obs"]
    n = len(b["act"])
    logs = {k: [] for k in ("loss", "pg_loss", "v_loss", "entropy", "approx_kl", "clipfrac")}
    model.train()
    for epoch in range(cfg.update_epochs):
        perm = torch.randperm(n, device=device, generator=generator)
        for start in range(0, n, cfg.minibatch_size):
            mb = perm[start:start + cfg.minibatch_size]
            dist = model.dist(b["obs"][mb], b["mask"][mb])
            out = ppo_loss(
                dist.log_prob(b["act"][mb]), b["logp"][mb], b["adv"][mb], model.value(critic_in[mb]), b["val"][mb],
                b["ret"][mb], dist.entropy(), cfg.clip_coef, cfg.vf_coef, ent_coef, cfg.clip_vloss, cfg.norm_adv,
            )
            optimizer.zero_grad()
            out["loss"].backward()
            nn.utils.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)
            optimizer.step()
            for k in logs:
                logs[k].append(out[k].item())
        if cfg.target_kl and np.mean(logs["approx_kl"][-max(1, n // cfg.minibatch_size):]) > cfg.target_kl:
            break
    return {k: float(np.mean(v)) for k, v in logs.items()}


def make_optimizer(model: nn.Module, lr: float, eps: float = 1e-8) -> torch.optim.Optimizer:
    """Adam; fused (one kernel over all parameters, about 1.2x faster updates on one CPU core) where torch
    has it for the model's device."""
    device = next(model.parameters()).device
    return torch.optim.Adam(model.parameters(), lr=lr, eps=eps, fused=device.type in ("cpu", "cuda"))


def linear(start: float, end: float, progress: float) -> float:
    return start + (end - start) * min(max(progress, 0.0), 1.0)


def mix_at(cfg: Config, progress: float) -> dict:
    """The opponent mix (normalised) at a training progress in [0, 1]."""
    end = cfg.opponent_mix_end or cfg.opponent_mix
    w = {k: linear(float(cfg.opponent_mix.get(k, 0.0)), float(end.get(k, 0.0)), progress) for k in OPPONENT_KINDS}
    tot = sum(w.values())
    return {k: v / tot for k, v in w.items()}


# ========================================================================================== collection
SELF, POOL, HEURISTIC, RANDOM = range(len(OPPONENT_KINDS))  # opponent kinds as ids, in OPPONENT_KINDS' order


# per learner decision: action, log-probability, value, credited reward, trajectory (episode * seats + seat)
ROLLOUT_SCALARS = {"act": np.int64, "logp": np.float32, "val": np.float32, "rew": np.float64, "traj": np.int64}


class Rollout:
    """Learner decisions in the order they were taken: arrays appended once per step, scalars in
    growing buffers so that a hand's reward can be added to a decision recorded earlier."""

    def __init__(self, capacity: int) -> None:
        self.n = 0
        self.obs: list[np.ndarray] = []
        self.mask: list[np.ndarray] = []
        self.cin: list[np.ndarray] = []
        self.s = {k: np.zeros(capacity, dt) for k, dt in ROLLOUT_SCALARS.items()}

    def add(self, obs: np.ndarray, mask: np.ndarray, cin: np.ndarray | None, **scalars: np.ndarray) -> np.ndarray:
        """Record ``len(obs)`` decisions; returns their indices."""
        k = len(obs)
        if self.n + k > len(self.s["act"]):
            for name, buf in self.s.items():
                self.s[name] = np.concatenate([buf, np.zeros(max(len(buf), k), buf.dtype)])
        idx = np.arange(self.n, self.n + k)
        for name, v in scalars.items():
            self.s[name][idx] = v
        self.obs.append(obs)
        self.mask.append(mask)
        if cin is not None:
            self.cin.append(cin)
        self.n += k
        return idx


class Collector:
    """Plays ``num_envs`` tables of the game's batched engine (:class:`Game`) in lock step; see the module
    docstring. Per table it keeps its current episode's opponent kind, learning group (-1: every seat
    learns), pool snapshot, episode number and each seat's latest decision; every step is a handful
    of array operations over all tables."""

    def __init__(self, cfg: Config, device: torch.device, rng: np.random.Generator) -> None:
        self.cfg, self.device, self.rng = cfg, device, rng
        self.game = game = game_of(cfg)
        self.env = game.vector_env(cfg.num_envs, max_hands=cfg.max_hands or None, **game.flags)
        self.heuristic = game.heuristic_batch()  # one instance; memories keyed by table * seats + seat
        self.pool: list[nn.Module] = []  # actors of past snapshots
        self.league: list[nn.Module] = []  # actors of the config's fixed league members
        N = cfg.num_envs
        self.kind = np.zeros(N, np.int64)
        self.team = np.zeros(N, np.int64)  # learning group (Game.groups): seats s with s % groups == team; -1 in self-play
        self.snap = np.zeros(N, np.int64)
        self.episode = np.zeros(N, np.int64)  # a number per episode, unique within a collect
        self.last = np.full((N, game.seats), -1, np.int64)  # rollout index of each seat's latest decision (-1: none)
        self.count = np.zeros(N, np.int64)  # learner decisions of the current episode
        self.ep_return = np.zeros(N, np.float64)  # raw points of the learning group's first seat
        self.active = np.zeros(N, bool)  # the current episode is collected (else played out and ignored)
        self.clock = time.perf_counter  # of the time breakdown in the stats (benchmarks/bench_train.py)
        # The collection's own torch generator (actions sampled by the networks): an update running beside it
        # in another thread draws from its own, so neither changes the other's stream.
        self.gen = torch.Generator(device=device)
        self.gen.manual_seed(int(rng.integers(2**62)))

    def _new_episodes(self, rows: np.ndarray, p: np.ndarray) -> None:
        """Draw opponents (kind, learning team, snapshot) for new episodes at tables ``rows``."""
        m, rng = len(rows), self.rng
        kind = rng.choice(len(OPPONENT_KINDS), size=m, p=p)
        members = len(self.league) + len(self.pool)
        if not members:
            kind[kind == POOL] = SELF
        self.kind[rows] = kind
        self.team[rows] = np.where(kind == SELF, -1, rng.integers(self.game.groups, size=m))
        self.snap[rows] = rng.integers(members, size=m) if members else 0
        self.episode[rows] = self._episodes + np.arange(m)
        self._episodes += m
        self.last[rows] = -1
        self.count[rows] = 0
        self.ep_return[rows] = 0.0
        self.active[rows] = True

    @torch.no_grad()
    def collect(self, model: ActorCritic, progress: float) -> tuple[dict, dict]:
        cfg, env, rng, device, clock = self.cfg, self.env, self.rng, self.device, self.clock
        N, S, G = cfg.num_envs, self.game.seats, self.game.groups
        tables = np.arange(N)
        mix = mix_at(cfg, progress)
        p = np.array([mix[k] for k in OPPONENT_KINDS])
        obs, info = env.reset(seed=int(rng.integers(TRAIN_SEED_LOW, 2 * TRAIN_SEED_LOW)))  # fresh tables
        self.heuristic.reset()
        self._episodes = 0
        self._new_episodes(tables, p)
        roll = Rollout(cfg.rollout_decisions + 64 * N)
        n_learner = 0  # decisions of finished episodes
        finished_kind, finished_return = [np.zeros(0, np.int64)], [np.zeros(0)]  # per finished episode
        t_env = t_opp = t_net = 0.0
        t_start = clock()
        while self.active.any():
            seat, mask = info["seat"], info["action_mask"]
            # ---- 1. who acts where: every row is one of learner, pool, heuristic, random, forced, idle
            learner = self.active & ((self.kind == SELF) | ((seat % G) == self.team))
            forced = (mask.sum(axis=1) == 1) if cfg.skip_forced else np.zeros(N, bool)
            opponent = self.active & ~learner
            actions = mask.argmax(axis=1)  # what forced rows play (heuristic ones decide themselves, equally)
            learn = np.flatnonzero(learner & ~forced)
            t0 = clock()
            heur = np.flatnonzero(opponent & (self.kind == HEURISTIC))
            if heur.size:  # the heuristic sees its forced moves too: its card memory follows every trick
                actions[heur] = self.heuristic.act_batch(obs[heur], mask[heur], keys=heur * S + seat[heur])
            rand = np.flatnonzero(~self.active | (opponent & (self.kind == RANDOM)))
            if rand.size:
                actions[rand] = sample_legal(mask[rand], rng)
            pool_rows = np.flatnonzero(opponent & (self.kind == POOL) & ~forced)
            for snap in np.unique(self.snap[pool_rows]):  # one forward pass per snapshot
                rows = pool_rows[self.snap[pool_rows] == snap]
                o = torch.from_numpy(obs[rows]).to(device)
                m = torch.from_numpy(mask[rows].view(np.bool_)).to(device)
                actor = (self.league + self.pool)[snap]  # league members first, then the snapshots
                actions[rows] = MaskedCategorical(actor(o), m).sample(self.gen).cpu().numpy()
            t1 = clock()
            # ---- 2. one forward pass for every learner seat to act
            if learn.size:
                cin = env.state_for(seat)[learn] if cfg.central_critic else None
                t2 = clock()
                o_np, m_np = obs[learn], mask[learn].view(np.bool_)
                o = torch.from_numpy(o_np).to(device)
                dist = model.dist(o, torch.from_numpy(m_np).to(device))
                a = dist.sample(self.gen)
                logp = dist.log_prob(a).cpu().numpy()
                val = model.value(torch.from_numpy(cin).to(device) if cfg.central_critic else o).cpu().numpy()
                a = a.cpu().numpy()
                t3 = clock()
                actions[learn] = a
                s = seat[learn]
                idx = roll.add(o_np, m_np, cin, act=a, logp=logp, val=val, traj=self.episode[learn] * S + s)
                self.last[learn, s] = idx
                self.count[learn] += 1
                t_env += t2 - t1
                t_net += t3 - t2
            # ---- 3. step every table; credit each seat's reward to its latest decision
            t4 = clock()
            obs, rewards, terminated, truncated, info = env.step(actions)
            t5 = clock()
            t_env += t5 - t4
            t_opp += t1 - t0
            paid = np.flatnonzero(rewards.any(axis=1) & self.active)
            if paid.size:
                r = rewards[paid].astype(np.float64)
                li = self.last[paid]
                ok = li >= 0  # a learning seat that has decided at least once
                roll.s["rew"][li[ok]] += cfg.reward_scale * r[ok]
                self.ep_return[paid] += r[np.arange(len(paid)), np.maximum(self.team[paid], 0)]
            ended = (terminated | truncated) & self.active
            done = np.flatnonzero(ended)
            if done.size:  # in table order: episodes finish, and new ones start until the rollout is full
                total = n_learner + np.cumsum(self.count[done])
                n_learner = int(total[-1])
                # decisions already taken in the episodes still running count towards the rollout too: all
                # of them will finish, so the rollout holds at least rollout_decisions without overshooting
                # by whole episodes on every table
                running = int(self.count[self.active & ~ended].sum())
                finished_kind.append(self.kind[done])
                finished_return.append(self.ep_return[done])
                more = total + running < cfg.rollout_decisions
                self.active[done[~more]] = False
                self.last[done[~more]] = -1
                if more.any():
                    self._new_episodes(done[more], p)
        n = roll.n
        adv, ret = trajectory_advantages(roll.s["traj"][:n], roll.s["rew"][:n], roll.s["val"][:n], cfg.gamma,
                                         cfg.gae_lambda)
        batch = {
            "obs": np.concatenate(roll.obs),
            "mask": np.concatenate(roll.mask),
            "cin": np.concatenate(roll.cin) if cfg.central_critic else None,
            "act": roll.s["act"][:n].copy(),
            "logp": roll.s["logp"][:n].copy(),
            "val": roll.s["val"][:n].copy(),
            "adv": adv,
            "ret": ret,
        }
        kinds, returns = np.concatenate(finished_kind), np.concatenate(finished_return)
        stats = {"returns": {name: returns[kinds == k].tolist() for k, name in enumerate(OPPONENT_KINDS)},
                 "hands": len(kinds)}
        total = clock() - t_start
        stats.update(t_env=t_env, t_opp=t_opp, t_net=t_net, t_book=total - t_env - t_opp - t_net)
        return batch, stats


# ==================================================================================== BC warm start
def heuristic_games(cfg: Config, rng: np.random.Generator, progress: Callable[[str, int, int], None]) -> dict:
    """``bc_hands`` episodes of the heuristic in every seat, ``num_envs`` at a time on the batched engine:
    every non-forced decision (``skip_forced``) with its observation, mask, critic input, action,
    episode number (in starting order) and Monte Carlo return (gamma = 1: the seat's rewards of the
    episode, times ``reward_scale``). ``progress`` is called after every finished episode."""
    N = min(cfg.num_envs, cfg.bc_hands)
    game = game_of(cfg)
    S = game.seats
    env = game.vector_env(N, max_hands=cfg.max_hands or None, **game.flags)
    teacher = game.heuristic_batch()
    tables = np.arange(N)
    obs, info = env.reset(seed=int(rng.integers(TRAIN_SEED_LOW, 2 * TRAIN_SEED_LOW)))
    episode, active = tables.copy(), np.ones(N, bool)
    started, finished = N, 0
    returns = np.zeros((cfg.bc_hands, S))
    out = {k: [] for k in ("obs", "mask", "cin", "act", "seat", "episode")}
    while active.any():
        seat, mask = info["seat"], info["action_mask"]
        actions = sample_legal(mask, rng)  # tables whose episodes are all played: any legal move
        rows = np.flatnonzero(active)  # the teacher sees every observation, forced moves included
        actions[rows] = teacher.act_batch(obs[rows], mask[rows], keys=rows * S + seat[rows])
        keep = active & (mask.sum(axis=1) > 1) if cfg.skip_forced else active
        if keep.any():
            out["obs"].append(obs[keep])
            out["mask"].append(mask[keep].view(np.bool_))
            out["cin"].append(env.state_for(seat)[keep] if cfg.central_critic else obs[keep])
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
    data = {k: np.concatenate(v) for k, v in out.items()}
    data["ret"] = returns[data["episode"], data["seat"]].astype(np.float32)
    return data


def behaviour_clone(model: ActorCritic, cfg: Config, device: torch.device, rng: np.random.Generator,
                    progress: Callable[[str, int, int], None]) -> dict:
    """Imitate the heuristic agent (actor: cross-entropy with legal-action label smoothing) and fit the
    critic to the heuristic games' returns (:func:`heuristic_games`). 5% of the hands are held out to
    report the imitation accuracy on unseen decisions. ``progress(what, done, total)`` is called after
    every hand and step."""
    t0 = time.time()
    game = game_of(cfg)
    phase = slice(0, game.phase_columns)  # the observation starts with the phase one-hot (Game.phases, over, ...)
    data = heuristic_games(cfg, rng, progress)
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
    opt = make_optimizer(model, cfg.bc_lr)
    n, eps = len(train_idx), cfg.bc_label_smoothing
    for step in range(cfg.bc_steps):
        for g in opt.param_groups:  # linear decay to a tenth
            g["lr"] = cfg.bc_lr * (1 - 0.9 * step / cfg.bc_steps)
        mb = train_idx[torch.randint(0, n, (min(cfg.bc_batch, n),), device=device)]
        d = model.dist(O[mb], M[mb])
        nll = -d.log_prob(A[mb])
        smooth = -(torch.where(M[mb], d.log_probs, torch.zeros_like(d.log_probs)).sum(-1) / M[mb].sum(-1))
        pi_loss = ((1 - eps) * nll + eps * smooth).mean()
        v_loss = 0.5 * ((model.value(C[mb]) - R[mb]) ** 2).mean()
        opt.zero_grad()
        (pi_loss + cfg.vf_coef * v_loss).backward()
        nn.utils.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)
        opt.step()
        progress("steps", step + 1, cfg.bc_steps)

    @torch.no_grad()
    def accuracy(idx: torch.Tensor) -> dict:
        if len(idx) == 0:
            return {}
        hit = torch.cat([model.dist(O[c], M[c]).mode() == A[c] for c in idx.split(4096)]).float()
        ph = O[idx, phase].argmax(-1)
        out = {"all": hit.mean().item()}
        for k, name in enumerate(game.phases):
            if (ph == k).any():
                out[name] = hit[ph == k].mean().item()
        return out

    return {"decisions": len(A), "hands": cfg.bc_hands, "steps": cfg.bc_steps,
            "train_accuracy": accuracy(train_idx[:20000]), "held_out_accuracy": accuracy(val_idx),
            "pi_loss": pi_loss.item(), "v_loss": v_loss.item(),
            "seconds_data": round(t_data, 1), "seconds": round(time.time() - t0, 1)}


# ========================================================================================= evaluation
def evaluate_policy(model: ActorCritic, opponent: str, deals: int, seed: int, cfg: Config) -> dict:
    """Evaluation of the greedy policy by the game's fair match (:attr:`Game.match`): partnership
    duplicate (rook_env.evaluation.play_match) or call-your-partner rotation (play_rotation_match).
    ``opponent``: random, heuristic (the game's heuristic) or a checkpoint path."""
    from rook_env.agents.learned import PPOAgent

    game = game_of(cfg)
    frozen = copy.deepcopy(model).cpu().eval()

    def factory(seed: int) -> PPOAgent:  # the matches' callable member spec: factory(seed) -> agent
        return PPOAgent(frozen, greedy=True, seed=seed)

    factory.name = "ppo(training)"
    spec = game.heuristic if opponent == "heuristic" else opponent
    # Matches play single hands and build games to target_score from the deal stream (games-to-target win
    # rates), so a game-episode run (env_flags.episode=game) is evaluated on the same deals hand by hand,
    # each hand dealt with the running score of its game (the agent was trained to read it).
    flags, game_level = hand_flags(game.agent_flags)
    extra = {"game_scores": True} if game_level and game.name == "partnership" else {}  # rotation matches: hands
    mean, (lo, hi) = game.match(factory, spec, deals, seed, flags, **extra)
    return {"opponent": opponent, "mean": mean, "ci95": [lo, hi], "half_width": (hi - lo) / 2, "deals": deals}


# ======================================================================================== checkpoints
def rng_state(rng: np.random.Generator, gens: dict[str, torch.Generator] | None = None) -> dict:
    """Every random state of a run: Python's, the run's numpy generator, torch's global one and the named
    torch generators (the collection's and the update's)."""
    return {"python": random.getstate(), "numpy": rng.bit_generator.state, "torch": torch.get_rng_state(),
            "generators": {k: g.get_state() for k, g in (gens or {}).items()}}


def set_rng_state(rng: np.random.Generator, saved: dict, gens: dict[str, torch.Generator] | None = None) -> None:
    random.setstate(saved["python"])
    rng.bit_generator.state = saved["numpy"]
    torch.set_rng_state(saved["torch"])
    for k, g in (gens or {}).items():
        if k not in saved.get("generators", {}):
            raise CheckpointError(f"the checkpoint has no state for the {k!r} random generator (written by an "
                                  f"older train.py: it cannot be resumed exactly)")
        g.set_state(saved["generators"][k])


def timed(collect: Callable[[], tuple[dict, dict]]) -> tuple[dict, dict, float]:
    """A collection's (batch, stats) and its wall seconds."""
    t0 = time.time()
    batch, stats = collect()
    return batch, stats, time.time() - t0


def run_beside(background: Callable[[], Any], foreground: Callable[[], Any]) -> tuple[Any, Any]:
    """Run ``background`` in a second thread while this thread runs ``foreground``; return both results.
    Torch and numpy release the GIL in their kernels, so the PPO update (background) and the collection
    (foreground) share two cores. Both always finish before this returns, and an exception of either
    (Ctrl-C included, which Python delivers to this thread) is raised here after both have stopped."""
    out: dict[str, Any] = {}

    def work() -> None:
        try:
            out["value"] = background()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the calling thread below
            out["error"] = exc

    worker = threading.Thread(target=work, name="ppo-update", daemon=True)
    worker.start()
    try:
        front = foreground()
    finally:
        worker.join()
    if "error" in out:
        raise out["error"]
    return out["value"], front


def save_checkpoint(path: str, model: ActorCritic, optimizer, cfg: Config, state: dict, rng: np.random.Generator,
                    pool: list[nn.Module], full: bool = True, gens: dict[str, torch.Generator] | None = None, ahead: dict | None = None) -> None:
    """Write a checkpoint atomically. ``full=False``: the model only (what ships with the repo).
    ``ahead``: how the rollout collected ahead (``overlap``) was started, so that a resume collects it again."""
    ckpt = {
        "format": CHECKPOINT_FORMAT,
        "format_version": CHECKPOINT_VERSION,
        "model_kwargs": model.kwargs(),
        "model": {k: v.detach().cpu() for k, v in model.state_dict().items()},
        "game": cfg.game,
        "env_flags": game_of(cfg).flags,  # the table's rule flags (call_partner: players included)
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
            ahead=ahead,
        )
    tmp = path + ".tmp"
    torch.save(ckpt, tmp)
    os.replace(tmp, path)


# ============================================================================================ training
def pick_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def seed_everything(seed: int) -> np.random.Generator:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    return np.random.default_rng(seed)


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


def train(cfg: Config, resume: str | None = None, quiet: bool = False, overwrite: bool = False) -> dict:
    """Train; returns the summary (also written to runs/<name>/summary.json).

    Ctrl-C (KeyboardInterrupt) saves ``last.pt`` at the last completed iteration (or, during
    behaviour cloning, the partly cloned network at iteration 0) and returns a summary whose
    ``stop_reason`` is ``"interrupted"``."""
    from torch.utils.tensorboard import SummaryWriter

    session_start = time.time()  # max_minutes counts from here: warm start, training and evaluation
    torch.set_num_threads(cfg.torch_threads)
    device = pick_device(cfg.device)
    rng = seed_everything(cfg.seed)
    out_dir = os.path.join(cfg.run_dir, cfg.name)
    prepare_run_dir(out_dir, resume, overwrite)
    last_ckpt = os.path.join(out_dir, "last.pt")
    best_ckpt = os.path.join(out_dir, "best.pt")

    game = game_of(cfg)
    env = game.raw_env(**game.flags)
    obs_dim = env.observation_space("player_0")["observation"].shape[0]
    n_actions = env.action_space("player_0").n
    critic_dim = env.state_space.shape[0] if cfg.central_critic else None
    model = ActorCritic(obs_dim, n_actions, cfg.hidden, critic_dim, cfg.critic_hidden).to(device)
    optimizer = make_optimizer(model, cfg.lr, eps=1e-5)
    collector = Collector(cfg, device, rng)
    update_gen = torch.Generator(device=device)  # the update's minibatch shuffles
    update_gen.manual_seed(int(rng.integers(2**62)))
    gens = {"collect": collector.gen, "update": update_gen}
    # overlap: the collector plays with ``behaviour``, the weights before the update that runs beside it. A rollout
    # collected ahead is ``ahead`` (batch, stats, seconds); ``ahead_from`` says how it started (its number, the
    # weights, the random states), saved in checkpoints so that a resume collects it again.
    behaviour = copy.deepcopy(model).eval() if cfg.overlap else model
    ahead: tuple | None = None
    ahead_from: dict | None = None
    state = {"iteration": 0, "decisions": 0, "wall_seconds": 0.0, "best": None, "history": [], "bc": None,
             "candidates": []}
    started = f"new run {out_dir}"

    if resume:
        ckpt = load_checkpoint(resume, map_location=device)
        check_checkpoint_game(ckpt, resume, game.name, game.flags)
        if "optimizer" not in ckpt or "rng" not in ckpt:
            raise CheckpointError(f"{resume!r} holds a model only (no optimizer/RNG state): it cannot be resumed")
        loaded = model_from_checkpoint(ckpt, resume, obs_dim=obs_dim, n_actions=n_actions)
        if loaded.kwargs() != model.kwargs():
            raise CheckpointError(f"{resume!r}: its network {loaded.kwargs()} differs from the config's {model.kwargs()}")
        model.load_state_dict(loaded.state_dict())
        optimizer.load_state_dict(ckpt["optimizer"])
        set_rng_state(rng, ckpt["rng"], gens)
        ahead_from = ckpt.get("ahead")
        for sd in ckpt["pool"]:
            snap = copy.deepcopy(model.actor)
            snap.load_state_dict(sd)
            collector.pool.append(snap.eval())
        for k in ("iteration", "decisions", "wall_seconds", "best", "history", "bc", "candidates"):
            state[k] = ckpt.get(k, state[k])
        started = f"resumed {resume}: iteration {state['iteration']}, {state['decisions']:,} decisions"
    elif cfg.init_checkpoint:
        init_ckpt = load_checkpoint(cfg.init_checkpoint)
        check_checkpoint_game(init_ckpt, cfg.init_checkpoint, game.name, game.flags)
        init = model_from_checkpoint(init_ckpt, cfg.init_checkpoint, obs_dim, n_actions)
        if init.kwargs() != model.kwargs():
            raise CheckpointError(f"init_checkpoint {cfg.init_checkpoint!r}: its network {init.kwargs()} differs from "
                                  f"the config's {model.kwargs()}")
        model.load_state_dict(init.state_dict())
        started = f"initialised from {cfg.init_checkpoint}"
    for path in cfg.league:  # fixed pool members (not saved in checkpoints: the config names them)
        member_ckpt = load_checkpoint(path)
        check_checkpoint_game(member_ckpt, path, game.name, game.flags)
        collector.league.append(model_from_checkpoint(member_ckpt, path, obs_dim, n_actions).actor.to(device).eval())
    if ahead_from is not None:  # the rollout the interrupted run had collected ahead, collected again
        if not cfg.overlap:
            raise CheckpointError(f"{resume!r} was saved with a rollout collected ahead (overlap: true): resume it "
                                  f"with overlap: true")
        behaviour.load_state_dict(ahead_from["weights"])
        saved = rng_state(rng, gens)
        set_rng_state(rng, ahead_from["rng"], gens)
        ahead = timed(lambda: collector.collect(behaviour, state["decisions"] / cfg.total_decisions))
        set_rng_state(rng, saved, gens)
    # A resumed run drops the events an interrupted session logged after its checkpoint (no duplicate steps).
    writer = SummaryWriter(out_dir, purge_step=state["decisions"] + 1 if resume else None)

    def run_eval() -> dict:
        res = {"iteration": state["iteration"], "decisions": state["decisions"]}
        for opp in cfg.eval_opponents:
            res[opp] = evaluate_policy(model, opp, cfg.eval_deals, cfg.eval_seed, cfg)
            writer.add_scalar(f"eval/{opp}", res[opp]["mean"], state["decisions"])
        return res

    def score_of(ev: dict) -> float:  # checkpoint selection over the field (select_by)
        means = [ev[opp]["mean"] for opp in cfg.eval_opponents]
        if cfg.select_by == "min":
            return min(means)
        if cfg.select_by == "mean":
            return float(np.mean(means))
        return ev[cfg.select_by]["mean"]

    def save_best(ev: dict) -> None:
        if state["best"] is None or score_of(ev) > state["best"]["score"]:
            state["best"] = {"score": score_of(ev), "iteration": state["iteration"], "decisions": state["decisions"],
                             "eval": ev}
            save_checkpoint(best_ckpt, model, optimizer, cfg, state, rng, collector.pool, gens=gens, ahead=ahead_from)
        if cfg.playoff_candidates:  # keep the playoff_candidates best by periodic score (the model only)
            cands = state["candidates"]
            entry = {"score": score_of(ev), "iteration": state["iteration"], "decisions": state["decisions"],
                     "path": os.path.join(out_dir, "candidates", f"it{state['iteration']}.pt")}
            cands.append(entry)
            cands.sort(key=lambda c: (-c["score"], -c["iteration"]))
            if entry in cands[:cfg.playoff_candidates]:
                os.makedirs(os.path.dirname(entry["path"]), exist_ok=True)
                save_checkpoint(entry["path"], model, None, cfg, state, rng, [], full=False)
            for dropped in cands[cfg.playoff_candidates:]:
                if os.path.exists(dropped["path"]):
                    os.remove(dropped["path"])
            del cands[cfg.playoff_candidates:]

    start_time = session_start - state["wall_seconds"]  # wall time of the run, across resumes
    bar = None

    def log(line: str) -> None:
        if bar is not None:
            bar.write(line, file=sys.stderr)
        elif not quiet:
            print(line, file=sys.stderr, flush=True)

    if cfg.progress and not quiet:
        from tqdm import tqdm

        # Created before behaviour cloning so that its clock covers the whole session.
        bar = tqdm(total=cfg.total_decisions, initial=min(state["decisions"], cfg.total_decisions), unit="dec",
                   unit_scale=True, dynamic_ncols=True, smoothing=0.1)

    log(f"{started} on {device}: obs {obs_dim}, actions {n_actions}, critic input {critic_dim or obs_dim}, "
        f"{sum(p.numel() for p in model.parameters()):,} parameters")

    def start_rollout(net: ActorCritic, number: int) -> dict:
        """What starts rollout ``number`` (1, 2, ...), played by ``net``: every ``pool_every`` rollouts the
        network that plays it joins the snapshot pool first. Returns how it started, for :func:`save_checkpoint`."""
        if number > 1 and (number - 1) % cfg.pool_every == 0:
            collector.pool.append(copy.deepcopy(net.actor).eval())
            collector.pool = collector.pool[-cfg.pool_size:]
        return {"number": number, "rng": rng_state(rng, gens),
                "weights": {k: v.detach().cpu().clone() for k, v in net.state_dict().items()}}

    def bc_progress(what: str, done: int, total: int) -> None:
        if bar is not None:
            if done == total or done % max(1, total // 100) == 0:
                bar.set_description_str(f"behaviour cloning: {what} {done}/{total}")
        elif done == total or done % max(1, total // 10) == 0:
            log(f"behaviour cloning: {what} {done}/{total} ({time.time() - session_start:.0f}s)")

    stop_reason = "total_decisions"
    phase = "ppo"  # what a Ctrl-C interrupts
    rollback = None  # an interrupted iteration's starting point
    try:
        if not resume:
            writer.add_text("config", "```\n" + yaml.safe_dump(dataclasses.asdict(cfg), sort_keys=False) + "\n```")
            if cfg.bc_steps > 0 and not cfg.init_checkpoint:
                phase, state["bc"] = "behaviour cloning", {"interrupted": True}  # what last.pt says on Ctrl-C
                state["bc"] = behaviour_clone(model, cfg, device, rng, bc_progress)
                phase = "ppo"
                acc = state["bc"]["held_out_accuracy"]
                log(f"behaviour cloning: {state['bc']['decisions']} heuristic decisions, {cfg.bc_steps} steps, "
                    f"held-out accuracy " + " ".join(f"{k} {v:.3f}" for k, v in acc.items())
                    + f", {state['bc']['seconds']:.0f}s")
                if bar is not None:
                    bar.set_description_str("")

        while state["decisions"] < cfg.total_decisions:
            if cfg.max_minutes and time.time() - session_start > cfg.max_minutes * 60:
                stop_reason = "max_minutes"
                break
            # Ctrl-C before this iteration is booked rolls back to here, so that last.pt resumes exactly.
            rollback = {"model": copy.deepcopy(model.state_dict()), "optimizer": copy.deepcopy(optimizer.state_dict()),
                        "rng": rng_state(rng, gens), "pool": list(collector.pool), "ahead": ahead,
                        "ahead_from": ahead_from}
            progress = state["decisions"] / cfg.total_decisions
            lr = linear(cfg.lr, cfg.lr_end, progress)
            ent_coef = linear(cfg.ent_coef, cfg.ent_coef_end, progress)
            for g in optimizer.param_groups:
                g["lr"] = lr

            # ---------------------------------------------------------------- collect (unless collected ahead)
            if ahead is None:
                model.eval()
                start_rollout(model, state["iteration"] + 1)
                ahead = timed(lambda: collector.collect(model, progress))
            batch, cstats, t_collect = ahead
            ahead = ahead_from = None
            n = len(batch["act"])

            # ---------------------------------------------------------------- update
            t1 = time.time()
            if cfg.overlap:
                # The next rollout, played by the weights before this update, is collected while it runs (on the
                # last iteration too: a run extended with --resume then goes on exactly as one that ran longer).
                behaviour.load_state_dict(model.state_dict())
                next_progress = (state["decisions"] + n) / cfg.total_decisions
                ahead_from = start_rollout(behaviour, state["iteration"] + 2)
                losses, ahead = run_beside(
                    lambda: ppo_update(model, optimizer, batch, cfg, ent_coef, update_gen),
                    lambda: timed(lambda: collector.collect(behaviour, next_progress)))
                t_collect_ahead = ahead[2]
            else:
                losses = ppo_update(model, optimizer, batch, cfg, ent_coef, update_gen)
                t_collect_ahead = 0.0
            t_update = time.time() - t1
            # an iteration's wall time: its collection (none when collected ahead) and the update (beside the
            # next collection when ahead)
            t_iter = t_update + (0.0 if rollback["ahead"] is not None else t_collect)

            # ---------------------------------------------------------------- bookkeeping
            state["iteration"] += 1
            state["decisions"] += n
            state["wall_seconds"] = time.time() - start_time
            it, dec = state["iteration"], state["decisions"]
            rollback = None  # the iteration is booked

            var_y = np.var(batch["ret"])
            explained_var = float("nan") if var_y == 0 else float(1 - np.var(batch["ret"] - batch["val"]) / var_y)
            scalars = {f"losses/{k}": v for k, v in losses.items()}
            scalars.update({
                "losses/explained_variance": explained_var, "charts/lr": lr, "charts/ent_coef": ent_coef,
                "perf/collect_decisions_per_s": n / t_collect,
                "perf/update_decisions_per_s": n * cfg.update_epochs / t_update,
                "perf/decisions_per_s": n / t_iter, "perf/collect_ahead_seconds": t_collect_ahead,
                "charts/hands": cstats["hands"],
                "charts/pool_size": len(collector.pool),
            })
            for mode, rets in cstats["returns"].items():
                if rets:
                    scalars[f"train/points_{mode}"] = float(np.mean(rets))
            for k, v in mix_at(cfg, progress).items():
                scalars[f"mix/{k}"] = v
            for k, v in scalars.items():
                writer.add_scalar(k, v, dec)
            rec = {"iteration": it, "decisions": dec, "wall_seconds": state["wall_seconds"],
                   **{k.split("/")[1]: v for k, v in scalars.items() if k.startswith(("losses", "train", "perf"))}}
            state["history"].append(rec)
            if cfg.eval_every and it % cfg.eval_every == 0:
                rec["eval"] = run_eval()
                save_best(rec["eval"])
                if bar is None:
                    log(f"it {it} dec {dec:,}: " + ", ".join(f"vs {o} {rec['eval'][o]['mean']:+.1f}"
                                                             for o in cfg.eval_opponents))
            if it % cfg.checkpoint_every == 0:
                save_checkpoint(last_ckpt, model, optimizer, cfg, state, rng, collector.pool, gens=gens,
                                ahead=ahead_from)
            if bar is not None:
                post = {"dps": f"{n / t_iter:.0f}", "pg": f"{losses['pg_loss']:.3f}",
                        "vf": f"{losses['v_loss']:.3f}", "ent": f"{losses['entropy']:.2f}"}
                last_eval = next((h["eval"] for h in reversed(state["history"]) if "eval" in h), None)
                for opp in ("random", "heuristic"):
                    if last_eval and opp in last_eval:
                        post[f"vs_{opp[:4]}"] = f"{last_eval[opp]['mean']:+.0f}"
                bar.set_postfix(post, refresh=False)
                bar.update(min(n, cfg.total_decisions - bar.n))

        if not state["history"] or "eval" not in state["history"][-1]:  # evaluate the final policy too
            ev = run_eval()
            if state["history"]:
                state["history"][-1]["eval"] = ev
            save_best(ev)
    except KeyboardInterrupt:
        stop_reason = "interrupted"
        if rollback is not None:  # the iteration in progress is dropped
            model.load_state_dict(rollback["model"])
            optimizer.load_state_dict(rollback["optimizer"])
            set_rng_state(rng, rollback["rng"], gens)
            collector.pool, ahead_from = rollback["pool"], rollback["ahead_from"]
    if bar is not None:
        bar.close()
    state["wall_seconds"] = time.time() - start_time

    if stop_reason == "interrupted":
        save_checkpoint(last_ckpt, model, optimizer, cfg, state, rng, collector.pool, gens=gens, ahead=ahead_from)
        writer.close()
        during_bc = phase == "behaviour cloning"
        summary = {"name": cfg.name, "seed": cfg.seed, "stop_reason": stop_reason, "iterations": state["iteration"],
                   "decisions": state["decisions"], "wall_seconds": round(state["wall_seconds"], 1),
                   "interrupted_during": phase, "paths": {"last": last_ckpt}}
        if not quiet:
            saved = ("the partly cloned network (iteration 0; --resume goes on with PPO without repeating "
                     "behaviour cloning; start afresh with --overwrite)" if during_bc else
                     f"iteration {state['iteration']}, {state['decisions']:,} decisions")
            print(f"\ninterrupted: saved {last_ckpt}: {saved}\nresume with: python train.py --resume {last_ckpt}",
                  file=sys.stderr)
        return summary

    # -------------------------------------------------------------------- the end
    save_checkpoint(last_ckpt, model, optimizer, cfg, state, rng, collector.pool, gens=gens, ahead=ahead_from)
    # The shipped form: the best model only (the playoff's winner where there is a playoff).
    best = load_checkpoint(best_ckpt)
    best_model = model_from_checkpoint(best)
    playoff, models = [], []
    for cand in state["candidates"] if cfg.playoff_candidates else []:
        cand_ckpt = load_checkpoint(cand["path"])
        models.append((cand_ckpt, model_from_checkpoint(cand_ckpt, cand["path"])))
        res = {opp: evaluate_policy(models[-1][1], opp, cfg.playoff_deals, cfg.playoff_seed, cfg)
               for opp in cfg.eval_opponents}
        playoff.append({**cand, "playoff_score": score_of(res), "playoff": res})
        log(f"playoff: iteration {cand['iteration']} (periodic {cand['score']:+.1f}): "
            + ", ".join(f"vs {o} {res[o]['mean']:+.1f}" for o in cfg.eval_opponents))
    if playoff:  # the best playoff score; a tie goes to the better periodic score (the candidates' order)
        win = max(range(len(playoff)), key=lambda i: (playoff[i]["playoff_score"], -i))
        playoff[win]["winner"] = True
        best, best_model = models[win]
    agent_path = os.path.join(out_dir, "agent.pt")
    save_checkpoint(agent_path, best_model, None, cfg, {**state, "iteration": best["iteration"],
                                                        "decisions": best["decisions"]}, rng, [], full=False)
    final = {}
    if cfg.final_eval_deals > 0:
        for opp in cfg.eval_opponents:
            final[opp] = evaluate_policy(best_model, opp, cfg.final_eval_deals, cfg.final_eval_seed, cfg)
    writer.close()
    curve = os.path.join(out_dir, "curve.png")
    plot_curve(state["history"], curve, title=f"{cfg.name} (seed {cfg.seed})", ylabel=game.eval_unit)
    summary = {
        "name": cfg.name, "seed": cfg.seed, "stop_reason": stop_reason, "iterations": state["iteration"],
        "decisions": state["decisions"], "wall_seconds": round(state["wall_seconds"], 1),
        "device": str(device), "machine": machine_info(), "bc": state["bc"], "best": state["best"],
        "final_eval": final, "playoff": playoff,
        "paths": {"last": last_ckpt, "best": best_ckpt, "agent": agent_path, "curve": curve},
        "config": dataclasses.asdict(cfg),
    }
    with open(os.path.join(out_dir, "summary.json"), "w") as fh:
        json.dump(summary, fh, indent=2)
    if not quiet:
        print_summary(summary)
    return summary


def machine_info() -> dict:
    return {"platform": platform.platform(), "processor": platform.processor() or platform.machine(),
            "cpus": os.cpu_count(), "python": platform.python_version(), "torch": torch.__version__}


def format_eval(label: str, r: dict) -> str:
    return f"  {label:26s} {r['mean']:+7.1f} points/deal  95% [{r['ci95'][0]:+.1f}, {r['ci95'][1]:+.1f}]  ({r['deals']} deals)"


def print_summary(s: dict) -> None:
    print(f"\n== {s['name']} (seed {s['seed']}): {s['decisions']:,} decisions, {s['iterations']} iterations, "
          f"{s['wall_seconds'] / 60:.1f} min, stopped by {s['stop_reason']}")
    if s["best"]:
        print(f"best checkpoint: iteration {s['best']['iteration']} ({s['best']['decisions']:,} decisions)")
        for opp, r in s["best"]["eval"].items():
            if isinstance(r, dict):
                print(format_eval(f"vs {opp} (selection)", r))
    for opp, r in s["final_eval"].items():
        print(format_eval(f"vs {opp} (held out)", r))
    print("outputs:")
    for what, path in s["paths"].items():
        print(f"  {what:6s} {path}")


def plot_curve(history: list, path: str, title: str = "", ylabel: str = "points per deal (duplicate, greedy)") -> None:
    """Learning curve: evaluation points per deal (95% bars) and training points by opponent kind."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.5))
    evals = [h for h in history if "eval" in h]
    opponents = list(dict.fromkeys(k for h in evals for k, v in h["eval"].items() if isinstance(v, dict)))
    colours = {"random": "tab:blue", "heuristic": "tab:red", "search": "tab:green"}
    for i, opp in enumerate(opponents):  # every evaluated opponent; checkpoints by file name
        pts = [(h["decisions"], h["eval"][opp]) for h in evals if opp in h["eval"]]
        x = [p[0] for p in pts]
        y = [p[1]["mean"] for p in pts]
        err = [p[1]["half_width"] for p in pts]
        ax1.errorbar(x, y, yerr=err, label=f"vs {os.path.basename(opp)}", color=colours.get(opp, f"C{3 + i}"), marker="o", ms=3,
                     capsize=2)
    ax1.axhline(0, color="grey", lw=0.8)
    ax1.set_xlabel("learner decisions")
    ax1.set_ylabel(ylabel)
    ax1.set_title("evaluation")
    if ax1.get_legend_handles_labels()[0]:
        ax1.legend()
    for mode in OPPONENT_KINDS:
        pts = [(h["decisions"], h[f"points_{mode}"]) for h in history if f"points_{mode}" in h]
        if len(pts) > 1 and mode != "self":
            x, y = zip(*pts)
            k = max(1, len(y) // 30)
            ys = np.convolve(y, np.ones(k) / k, mode="valid")
            ax2.plot(x[k - 1:], ys, label=f"vs {mode}")
    ax2.axhline(0, color="grey", lw=0.8)
    ax2.set_xlabel("learner decisions")
    ax2.set_ylabel("training points per hand (sampled policy)")
    ax2.set_title("training games")
    if ax2.get_legend_handles_labels()[0]:
        ax2.legend()
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        base = load_checkpoint(args.resume)["config"] if args.resume else None
        cfg = make_train_config(args.config, args.set, base=base)
    except (ValueError, OSError) as exc:  # bad config, unreadable file or checkpoint (CheckpointError)
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        summary = train(cfg, resume=args.resume, overwrite=args.overwrite)
    except (CheckpointError, FileExistsError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 130 if summary["stop_reason"] == "interrupted" else 0


if __name__ == "__main__":
    sys.exit(main())

"""Rollout collection on the batched engine: ``num_envs`` tables of the game's
:class:`~rook_env.games.Game` engine are arrays stepped together.

**One network for every seat.** Observations are seat-relative, so a single masked-categorical actor
(rook_env/agents/learned/model.py) plays all seats; partners are the same policy. Illegal logits are set
to -1e9, so illegal actions have probability exactly 0 and are never sampled.

**Opponents per game** are drawn from ``opponent_mix`` (interpolated towards ``opponent_mix_end`` over
training, :func:`~rook_env.training.config.mix_at`): ``self`` (all seats are the current policy and all
learn), ``pool`` (a past snapshot of the policy, or a fixed ``league`` member: checkpoints named in the
config, e.g. earlier shipped agents, that stay in the pool for the whole run), ``heuristic`` (the game's
heuristic agent) / ``random`` (uniformly random legal play). Outside ``self`` the learner plays one group
of seats drawn at random each game and the opponent the others: the partnership game's groups are the
two teams, call-your-partner Rook's are single seats (the learner in one chair, the opponent in the n - 1
others, as in the rotation evaluation; its secret partner may be an opponent seat). With individual
rewards (``score_diff``: own hand score minus the mean of the others') every seat's return is its own.

**Each step**, the learner seats to act at all tables go into one forward pass, each pool snapshot's
seats into one more, the heuristic decides for all its seats in one ``act_batch`` call (its card memory
keyed by ``table * n + seat``; the memoryless call-your-partner heuristic one row at a time) and random
opponents through ``sample_legal``. Rewards are credited to each seat's latest decision, and finished
episodes booked, with array operations; the engine deals a finished table its next hand in the same step
(auto-reset) and the table draws new opponents. The credited rewards become advantages by
:func:`~rook_env.training.ppo.trajectory_advantages`.

**A rollout** starts new episodes until at least ``rollout_decisions`` learner decisions are taken
(counting those of the episodes still running) and then finishes the hands in progress (no truncated
trajectories, so no truncation bootstrapping and resumes start cleanly between hands); every call starts
fresh tables from the run's generator. (The call-your-partner engine steps its tables in a Python loop:
the same interface, not array speed.) Forced moves (exactly one legal action) are played without
recording a decision (``skip_forced``): they carry no policy gradient, so they are part of the
environment's dynamics and the seat's trajectory skips them.

**A residual policy over the heuristic** (``heuristic_prior`` > 0; rook_env/agents/learned/model.py): the
game's heuristic decides for every learner and pool seat too (a second instance, keyed like the opponents';
forced moves included, so that its card memory follows every trick), and its action, the *hint*, gets
``heuristic_prior`` logits more in the networks' distributions; the hints are recorded with the decisions for
the update.

**Card play by search** (``play_by``, the partnership game): the search agent plays every card-play decision of
the learner's seats (one ``act_batch`` call a step, its card memory keyed by table and seat) and those
decisions are not recorded: a hand's reward is credited to the seat's last auction decision, and PPO trains the
auction for the card play search will make.

**Centralized critic** (``central_critic: true``): the value network sees ``env.state_for(seat)`` (the
seat's observation plus every hidden hand and the nest). Training only: the actor never sees it.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch
from torch import nn

from rook_env.agents import batched, make_agent
from rook_env.agents.learned.model import ActorCritic, MaskedCategorical, prior_logits
from rook_env.games import Game
from rook_env.vector import sample_legal

from .config import OPPONENT_KINDS, Config, game_of, mix_at, play_by_agent
from .ppo import trajectory_advantages

# Deal seeds: evaluation uses small seeds (Config.eval_seed / final_eval_seed / playoff_seed); training deals are
# drawn from [2**40, 2**41) so that no training deal is an evaluation deal.
TRAIN_SEED_LOW = 2**40

SELF, POOL, HEURISTIC, RANDOM = range(len(OPPONENT_KINDS))  # opponent kinds as ids, in OPPONENT_KINDS' order


# per learner decision: action, log-probability, value, credited reward, trajectory (episode * seats + seat), the
# heuristic's action (the hint of a residual policy; recorded only with one)
ROLLOUT_SCALARS = {"act": np.int64, "logp": np.float32, "val": np.float32, "rew": np.float64, "traj": np.int64,
                   "hint": np.int64}


class DecisionBuffer:
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

    def __init__(self, cfg: Config, device: torch.device, rng: np.random.Generator, game: Game | None = None) -> None:
        self.cfg, self.device, self.rng = cfg, device, rng
        self.game = game = game or game_of(cfg)  # the run's (built from cfg when not given)
        self.env = game.vector_env(cfg.num_envs, max_hands=cfg.max_hands or None, **game.flags)
        # one instance of the heuristic; memories keyed by table * seats + seat
        self.heuristic = batched(make_agent(game.heuristic, **game.agent_flags))
        # a residual policy's prior: the heuristic again, deciding for the networks' seats (hints)
        self.prior = batched(make_agent(game.heuristic, **game.agent_flags)) if cfg.heuristic_prior else None
        # card play by search (play_by): it plays the learner's cards, which are not recorded
        self.player = play_by_agent(cfg.play_by, game.flags, seed=int(rng.integers(2**62))) if cfg.play_by else None
        self.play_column = game.phases.index("play")  # of the observation's leading phase one-hot
        self.pool: list[nn.Module] = []  # actors of past snapshots
        self.league: list[nn.Module] = []  # actors of the config's fixed league members
        N = cfg.num_envs
        self.kind = np.zeros(N, np.int64)
        # learning group (Game.groups): the seats s with s % groups == team; -1 in self-play
        self.team = np.zeros(N, np.int64)
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
        """One rollout played by ``model`` (sampling) at training ``progress`` (the opponent mix's), on fresh
        tables. Returns the batch (obs, mask, cin, act, logp, val, adv, ret: one row per learner decision, in
        the order taken) and stats (training points per opponent kind, hands, the time breakdown)."""
        cfg, env, clock = self.cfg, self.env, self.clock
        mix = mix_at(cfg, progress)
        p = np.array([mix[k] for k in OPPONENT_KINDS])
        obs, info = self._fresh_tables(p)
        roll = DecisionBuffer(cfg.rollout_decisions + 64 * cfg.num_envs)
        self._finished: dict[str, Any] = {"decisions": 0, "kind": [np.zeros(0, np.int64)], "return": [np.zeros(0)]}
        self._t = {"env": 0.0, "opp": 0.0, "net": 0.0}
        t_start = clock()
        while self.active.any():
            seat, mask = info["seat"], info["action_mask"]
            learner = self.active & ((self.kind == SELF) | ((seat % self.game.groups) == self.team))
            t0 = clock()
            actions, learn, hint = self._others_act(obs, seat, mask, learner)
            t1 = clock()
            self._t["opp"] += t1 - t0
            if learn.size:
                actions[learn] = self._learners_act(model, obs, mask, seat, learn, hint, roll)
            t4 = clock()
            obs, rewards, terminated, truncated, info = env.step(actions)
            self._t["env"] += clock() - t4
            self._credit(rewards, roll)
            self._finish((terminated | truncated) & self.active, p)
        batch = self._batch(roll)
        kinds, returns = np.concatenate(self._finished["kind"]), np.concatenate(self._finished["return"])
        stats = {"returns": {name: returns[kinds == k].tolist() for k, name in enumerate(OPPONENT_KINDS)},
                 "hands": len(kinds)}
        t = self._t
        stats.update(t_env=t["env"], t_opp=t["opp"], t_net=t["net"],
                     t_book=clock() - t_start - t["env"] - t["opp"] - t["net"])
        return batch, stats

    def _fresh_tables(self, p: np.ndarray) -> tuple[np.ndarray, dict]:
        """Every table dealt afresh from the run's generator, every heuristic's memory cleared, new episodes."""
        obs, info = self.env.reset(seed=int(self.rng.integers(TRAIN_SEED_LOW, 2 * TRAIN_SEED_LOW)))
        for agent in (self.heuristic, self.prior, self.player):
            if agent is not None:
                agent.reset()
        self._episodes = 0
        self._new_episodes(np.arange(self.cfg.num_envs), p)
        return obs, info

    def _others_act(self, obs: np.ndarray, seat: np.ndarray, mask: np.ndarray,
                    learner: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """Step 1 of a step: who acts where (every row is one of learner, pool, heuristic, random, forced, idle) and
        what every row but the learner's network decisions plays: forced moves, the heuristic, random play, search's
        cards (``play_by``), the pool's networks. Returns the actions, the rows the learner's network decides and a
        residual policy's hints (the heuristic's action at each table; None without one)."""
        cfg, rng, N, S = self.cfg, self.rng, self.cfg.num_envs, self.game.seats
        forced = (mask.sum(axis=1) == 1) if cfg.skip_forced else np.zeros(N, bool)
        opponent = self.active & ~learner
        actions = mask.argmax(axis=1)  # what forced rows play (heuristic ones decide themselves, equally)
        learn = np.flatnonzero(learner & ~forced)
        heur = np.flatnonzero(opponent & (self.kind == HEURISTIC))
        if heur.size:  # the heuristic sees its forced moves too: its card memory follows every trick
            actions[heur] = self.heuristic.act_batch(obs[heur], mask[heur], keys=heur * S + seat[heur])
        rand = np.flatnonzero(~self.active | (opponent & (self.kind == RANDOM)))
        if rand.size:
            actions[rand] = sample_legal(mask[rand], rng)
        hint = None
        if self.prior is not None:  # the networks' seats, forced moves too (the heuristic's memory)
            hint = np.full(N, -1, np.int64)
            nets = np.flatnonzero(learner | (opponent & (self.kind == POOL)))
            if nets.size:
                hint[nets] = self.prior.act_batch(obs[nets], mask[nets], keys=nets * S + seat[nets])
        if self.player is not None:  # search plays the learner's cards (forced ones too: its card memory)
            cards = np.flatnonzero(learner & (obs[:, self.play_column] > 0))
            if cards.size:
                actions[cards] = self.player.act_batch(obs[cards], mask[cards], keys=cards * S + seat[cards])
                learn = learn[obs[learn, self.play_column] == 0]
        pool_rows = np.flatnonzero(opponent & (self.kind == POOL) & ~forced)
        for snap in np.unique(self.snap[pool_rows]):  # one forward pass per snapshot
            rows = pool_rows[self.snap[pool_rows] == snap]
            o = torch.from_numpy(obs[rows]).to(self.device)
            m = torch.from_numpy(mask[rows].view(np.bool_)).to(self.device)
            actor = (self.league + self.pool)[snap]  # league members first, then the snapshots
            logits = prior_logits(actor(o), _rows(hint, rows, self.device), cfg.heuristic_prior)
            actions[rows] = MaskedCategorical(logits, m).sample(self.gen).cpu().numpy()
        return actions, learn, hint

    def _learners_act(self, model: ActorCritic, obs: np.ndarray, mask: np.ndarray, seat: np.ndarray,
                      learn: np.ndarray, hint: np.ndarray | None, roll: DecisionBuffer) -> np.ndarray:
        """Step 2: one forward pass for every learner seat to act; its decisions recorded. Returns the actions."""
        cfg, device, clock = self.cfg, self.device, self.clock
        t1 = clock()
        cin = self.env.state_for(seat)[learn] if cfg.central_critic else None
        t2 = clock()
        o_np, m_np = obs[learn], mask[learn].view(np.bool_)
        o = torch.from_numpy(o_np).to(device)
        dist = model.dist(o, torch.from_numpy(m_np).to(device), _rows(hint, learn, device))
        a = dist.sample(self.gen)
        logp = dist.log_prob(a).cpu().numpy()
        val = model.value(torch.from_numpy(cin).to(device) if cfg.central_critic else o).cpu().numpy()
        a = a.cpu().numpy()
        t3 = clock()
        s = seat[learn]
        idx = roll.add(o_np, m_np, cin, act=a, logp=logp, val=val, traj=self.episode[learn] * self.game.seats + s,
                       **({} if hint is None else {"hint": hint[learn]}))
        self.last[learn, s] = idx
        self.count[learn] += 1
        self._t["env"] += t2 - t1
        self._t["net"] += t3 - t2
        return a

    def _credit(self, rewards: np.ndarray, roll: DecisionBuffer) -> None:
        """Step 3: each seat's reward credited to its latest decision; the learning group's points booked."""
        paid = np.flatnonzero(rewards.any(axis=1) & self.active)
        if paid.size:
            r = rewards[paid].astype(np.float64)
            li = self.last[paid]
            ok = li >= 0  # a learning seat that has decided at least once
            roll.s["rew"][li[ok]] += self.cfg.reward_scale * r[ok]
            self.ep_return[paid] += r[np.arange(len(paid)), np.maximum(self.team[paid], 0)]

    def _finish(self, ended: np.ndarray, p: np.ndarray) -> None:
        """Episodes that ended, in table order: booked; new ones start until the rollout is full."""
        done = np.flatnonzero(ended)
        if not done.size:
            return
        f = self._finished
        total = f["decisions"] + np.cumsum(self.count[done])
        f["decisions"] = int(total[-1])
        # decisions already taken in the episodes still running count towards the rollout too: all of them will
        # finish, so the rollout holds at least rollout_decisions without overshooting by whole episodes on every
        # table
        running = int(self.count[self.active & ~ended].sum())
        f["kind"].append(self.kind[done])
        f["return"].append(self.ep_return[done])
        more = total + running < self.cfg.rollout_decisions
        self.active[done[~more]] = False
        self.last[done[~more]] = -1
        if more.any():
            self._new_episodes(done[more], p)

    def _batch(self, roll: DecisionBuffer) -> dict:
        """The rollout's decisions as the update's batch, with their advantages and returns (GAE per seat)."""
        cfg, n = self.cfg, roll.n
        adv, ret = trajectory_advantages(roll.s["traj"][:n], roll.s["rew"][:n], roll.s["val"][:n], cfg.gamma,
                                         cfg.gae_lambda)
        return {
            "obs": np.concatenate(roll.obs),
            "mask": np.concatenate(roll.mask),
            "cin": np.concatenate(roll.cin) if cfg.central_critic else None,
            "act": roll.s["act"][:n].copy(),
            "logp": roll.s["logp"][:n].copy(),
            "val": roll.s["val"][:n].copy(),
            "adv": adv,
            "ret": ret,
            "hint": roll.s["hint"][:n].copy() if self.prior is not None else None,
        }


def _rows(hint: np.ndarray | None, rows: np.ndarray, device: torch.device) -> torch.Tensor | None:
    """The hints of ``rows`` as a tensor (None without a residual policy)."""
    return None if hint is None else torch.from_numpy(hint[rows]).to(device)

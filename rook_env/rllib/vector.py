"""RLlib at engine speed: an env runner that steps many tables of the batched engine at once.

RLlib's multi-agent path (:class:`rook_env.rllib.RookMultiAgentEnv`) steps one seat of one table per
``env.step`` and runs RLlib's connectors, episode bookkeeping and a forward pass for every such step: about
a hundred env steps per second per runner. :class:`RookVectorEnvRunner` replaces that loop (RLlib's
``config.env_runners(env_runner_cls=...)``) and keeps the rest of RLlib as it is (PPO's learner, its
connectors and GAE, weight sync, checkpoints, metrics):

- ``tables`` tables of :class:`rook_env.vector.RookVectorEnv` (``game=``, ``players=``, rule flags) are
  stepped together; on every step the learner seats to act at all tables go into **one** forward pass of the
  RLModule (:class:`~rook_env.rllib.RookMaskedPPOModule`, sampling from the masked distribution, so only
  legal actions), the heuristic opponents into one ``act_batch`` call and random opponents into one
  :func:`~rook_env.vector.sample_legal`.
- **Partners share one policy** (the single-agent module ``default_policy``): in self-play every seat is the
  learner; with an opponent (``opponents={"heuristic": 0.5, "random": 0.1}``: the fraction of hands) the
  learner plays one group of seats drawn per hand (a team in the partnership game, one seat in
  call-your-partner Rook), as ``train.py`` does.
- Each learner seat's decisions in one hand become one RLlib ``SingleAgentEpisode`` (observation dict,
  action, log-probability and logits from the forward pass; the hand's reward for that seat, scaled by
  ``reward_scale``, on its last decision; terminated). PPO then learns from them as from any single-agent
  env. Complete hands only: a ``sample()`` starts hands until the decisions asked for are reached and
  finishes the hands in progress (so no truncated episode and no bootstrapping).

:func:`rook_vector_ppo_config` builds the ``PPOConfig``. Checkpoints load as project agents like the
multi-agent path's (``RLlibAgent.load`` finds the module ``default_policy``).
"""

from __future__ import annotations

import time
from typing import Any, Mapping

import gymnasium as gym
import numpy as np
import torch
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.env.single_agent_env_runner import SingleAgentEnvRunner
from ray.rllib.env.single_agent_episode import SingleAgentEpisode
from ray.tune.registry import register_env

from rook_env.agents import make_agent
from rook_env.agents.learned.rllib import MASK_KEY, OBS_KEY
from rook_env.games import get_game
from rook_env.games.partnership.env import raw_env
from rook_env.vector import RookVectorEnv, sample_legal

from .module import RookMaskedPPOModule

VECTOR_ENV_NAME = "rook_env_vector"          # the spaces-only env the runner's RLlib parts are built from
OPPONENT_KINDS = ("heuristic", "random")     # the opponents the runner plays in arrays
ENV_CONFIG_KEYS = ("game", "flags", "tables", "opponents", "reward_scale")
TRAIN_SEED_LOW = 2**40                       # training deals come from [2**40, 2**41), away from evaluation seeds


def check_env_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """The runner's ``env_config`` with defaults filled in; a clear error for a wrong key or value."""
    config = dict(config or {})
    unknown = sorted(set(config) - set(ENV_CONFIG_KEYS))
    if unknown:
        raise ValueError(f"unknown env_config key(s) {unknown} for the vector env runner; "
                         f"known: {list(ENV_CONFIG_KEYS)}")
    out = {"game": config.get("game") or "partnership", "flags": dict(config.get("flags") or {}),
           "tables": config.get("tables", 128), "opponents": dict(config.get("opponents") or {}),
           "reward_scale": float(config.get("reward_scale", 0.01))}
    if not isinstance(out["tables"], int) or isinstance(out["tables"], bool) or out["tables"] < 1:
        raise ValueError(f"tables must be a positive integer (tables stepped together per env runner), "
                         f"got {out['tables']!r}")
    bad = sorted(set(out["opponents"]) - set(OPPONENT_KINDS))
    if bad:
        raise ValueError(f"opponents {bad} are not played by the vector env runner; it plays {list(OPPONENT_KINDS)} "
                         f"(for other opponents use rook_ppo_config, the multi-agent path)")
    probs = [float(p) for p in out["opponents"].values()]
    if any(not 0 <= p <= 1 for p in probs) or sum(probs) > 1 + 1e-9:
        raise ValueError(f"opponent probabilities must be in [0, 1] and sum to at most 1, got {out['opponents']}")
    return out


class SpacesEnv(gym.Env):
    """The observation and action spaces of one seat (rook's ``Dict(observation, action_mask)``), for RLlib's
    parts that are built from an env (the module, the connectors). It is never stepped: the runner plays the
    batched engine."""

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        cfg = check_env_config(config or {})
        aec = raw_env(game=cfg["game"], **cfg["flags"])
        name = aec.possible_agents[0]
        self.observation_space = aec.observation_spaces[name]
        self.action_space = aec.action_spaces[name]

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        raise RuntimeError("SpacesEnv only holds spaces; RookVectorEnvRunner steps the batched engine")

    def step(self, action):
        raise RuntimeError("SpacesEnv only holds spaces; RookVectorEnvRunner steps the batched engine")


def register_vector(name: str = VECTOR_ENV_NAME) -> str:
    """Register :class:`SpacesEnv` in Ray's registry under ``name`` (idempotent); returns it."""
    register_env(name, lambda cfg: SpacesEnv(cfg))
    return name


class Tables:
    """The batched engine with its opponents: plays hands at ``tables`` tables, asks ``policy`` for the
    learner seats' actions in one call per step, and returns each learner seat's hand as arrays.

    RLlib-free (numpy and the engine), so the tests compare it with the engine directly."""

    def __init__(self, game: str, flags: Mapping[str, Any], tables: int, opponents: Mapping[str, float],
                 seed: int) -> None:
        spec = get_game(game)
        self.env = RookVectorEnv(tables, game=spec.name, illegal_action="raise", **flags)
        self.seats = S = self.env.n_seats
        self.groups = spec.groups or S  # the learner's seats: a team in the partnership game, else one seat
        self.rng = np.random.default_rng(seed)
        self.p = np.array([1.0 - sum(opponents.values())] + [float(opponents.get(k, 0.0)) for k in OPPONENT_KINDS])
        self.p = np.clip(self.p, 0.0, 1.0) / np.clip(self.p, 0.0, 1.0).sum()
        self.heuristic = None
        if self.p[1] > 0:
            self.heuristic = make_agent(spec.heuristic, **{**flags, "game": spec.name})
        N = tables
        self.kind = np.zeros(N, np.int64)    # 0 self-play, 1 heuristic, 2 random (OPPONENT_KINDS + 1)
        self.team = np.zeros(N, np.int64)    # learning group (seat % groups == team); -1 in self-play
        self.hand = np.zeros(N, np.int64)    # a number per hand within one play() call
        self.active = np.zeros(N, bool)      # the table's current hand is collected
        self.count = np.zeros(N, np.int64)   # learner decisions in the current hand
        self.steps = 0                       # engine steps (one decision at one table) of the last play()

    def _new_hands(self, rows: np.ndarray) -> None:
        m = len(rows)
        kind = self.rng.choice(len(self.p), size=m, p=self.p)
        self.kind[rows] = kind
        self.team[rows] = np.where(kind == 0, -1, self.rng.integers(self.groups, size=m))
        self.hand[rows] = self._hands + np.arange(m)
        self._hands += m
        self.count[rows] = 0
        self.active[rows] = True

    def _heuristic_acts(self, obs: np.ndarray, mask: np.ndarray, keys: np.ndarray) -> np.ndarray:
        """The heuristic's actions: in arrays (``act_batch``, its card memory keyed by table and seat) where it
        has them; the call-your-partner heuristic decides from the observation alone, one row at a time."""
        agent = self.heuristic
        if hasattr(agent, "act_batch"):
            return agent.act_batch(obs, mask, keys=keys)
        return np.array([agent.act({OBS_KEY: o, MASK_KEY: m}) for o, m in zip(obs, mask)], np.int64)

    def play(self, policy, decisions: int, hands: int | None = None) -> dict[str, np.ndarray]:
        """Hands until at least ``decisions`` learner decisions (or ``hands`` learner episodes) are taken,
        the hands in progress finished. ``policy(obs, mask) -> (actions, extras)`` acts for the learner
        rows (extras: per-row arrays kept with each decision). Returns the decisions grouped by episode (one
        per learner seat and hand, in order): ``obs``, ``mask``, ``act``, the extras, ``start`` (each
        episode's first row, plus the end), ``traj`` (hand * seats + seat), ``seat``, ``reward`` (per episode,
        the engine's raw reward for that seat)."""
        env, S, G, N = self.env, self.seats, self.groups, self.env.num_envs
        obs, info = env.reset(seed=int(self.rng.integers(TRAIN_SEED_LOW, 2 * TRAIN_SEED_LOW)))
        if self.heuristic is not None:
            self.heuristic.reset()
        self._hands = 0
        self._new_hands(np.arange(N))
        rows_obs, rows_mask, rows_act, rows_traj, rows_extra = [], [], [], [], []
        rewards_of: dict[int, float] = {}     # trajectory id -> raw reward
        taken, episodes, steps = 0, 0, 0
        while self.active.any():
            seat, mask = info["seat"], info["action_mask"]
            learner = self.active & ((self.kind == 0) | ((seat % G) == self.team))
            actions = np.empty(N, np.int64)
            by_heuristic = self.active & ~learner & (self.kind == 1)
            heur = np.flatnonzero(by_heuristic)
            if heur.size:
                actions[heur] = self._heuristic_acts(obs[heur], mask[heur], keys=heur * S + seat[heur])
            rand = np.flatnonzero(~learner & ~by_heuristic)  # random opponents, and the idle tables' moves
            if rand.size:
                actions[rand] = sample_legal(mask[rand], self.rng)
            learn = np.flatnonzero(learner)
            if learn.size:
                o, m = obs[learn], mask[learn]
                a, extra = policy(o, m)
                actions[learn] = a
                rows_obs.append(o)
                rows_mask.append(m)
                rows_act.append(a)
                rows_extra.append(extra)
                rows_traj.append(self.hand[learn] * S + seat[learn])
                self.count[learn] += 1
            steps += int(self.active.sum())  # decisions of collected hands (idle tables play on unrecorded)
            obs, reward, terminated, truncated, info = env.step(actions)
            done = np.flatnonzero((terminated | truncated) & self.active)
            if done.size:
                for t in done:  # the hand's reward for each learner seat of the table
                    for s in range(S):
                        if self.kind[t] == 0 or s % G == self.team[t]:
                            rewards_of[int(self.hand[t] * S + s)] = float(reward[t, s])
                taken += int(self.count[done].sum())
                episodes += int(((self.kind[done] == 0) * S + (self.kind[done] != 0) * (S // G)).sum())
                running = int(self.count[self.active].sum()) - int(self.count[done].sum())
                enough = taken + running >= decisions or (hands is not None and episodes >= hands)
                if enough:
                    self.active[done] = False
                else:
                    self._new_hands(done)
        self.steps = steps
        return _group(rows_obs, rows_mask, rows_act, rows_traj, rows_extra, rewards_of, S)


def _group(rows_obs, rows_mask, rows_act, rows_traj, rows_extra, rewards_of, S) -> dict[str, np.ndarray]:
    """The recorded decisions, grouped by trajectory (stable: in the order taken within each)."""
    if not rows_obs:
        raise RuntimeError("no learner decision was recorded")
    traj = np.concatenate(rows_traj)
    order = np.argsort(traj, kind="stable")
    traj = traj[order]
    ids, start = np.unique(traj, return_index=True)
    out = {"obs": np.concatenate(rows_obs)[order], "mask": np.concatenate(rows_mask)[order],
           "act": np.concatenate(rows_act)[order], "start": np.append(start, len(traj)), "traj": ids,
           "seat": ids % S, "reward": np.array([rewards_of[int(i)] for i in ids], np.float64)}
    for key in rows_extra[0]:
        out[key] = np.concatenate([e[key] for e in rows_extra])[order]
    return out


class RookVectorEnvRunner(SingleAgentEnvRunner):
    """An RLlib env runner on the batched engine (module docstring). Built by RLlib from
    :func:`rook_vector_ppo_config`; its ``env`` is :class:`SpacesEnv` (spaces only), its tables are
    ``env_config["tables"]`` tables of :class:`rook_env.vector.RookVectorEnv`."""

    def __init__(self, *, config, **kwargs) -> None:
        super().__init__(config=config, **kwargs)
        self._engine_steps = 0
        self.tables: Tables | None = None
        if self.env is None:  # the local runner of a group with remote runners: it never samples
            return
        cfg = check_env_config(self.config.env_config)
        seed = self.config.seed
        seed = np.random.SeedSequence([0 if seed is None else int(seed), int(self.worker_index or 0)])
        self.tables = Tables(cfg["game"], cfg["flags"], cfg["tables"], cfg["opponents"],
                             seed=int(seed.generate_state(1)[0]))
        self.reward_scale = cfg["reward_scale"]
        self.generator = torch.Generator().manual_seed(int(seed.generate_state(2)[1]))
        self._spaces = (self.env.single_observation_space, self.env.single_action_space)

    @torch.no_grad()
    def _policy(self, obs: np.ndarray, mask: np.ndarray, explore: bool) -> tuple[np.ndarray, dict]:
        """One forward pass for every learner row: masked logits, a sampled (or greedy) action, its log-prob."""
        batch = {Columns.OBS: {OBS_KEY: torch.from_numpy(obs),
                               MASK_KEY: torch.from_numpy(mask.astype(np.float32))}}
        fwd = self.module.forward_exploration if explore else self.module.forward_inference
        logits = fwd(batch)[Columns.ACTION_DIST_INPUTS]
        if explore:
            act = torch.multinomial(torch.softmax(logits, -1), 1, generator=self.generator)[:, 0]
        else:
            act = torch.argmax(logits, -1)
        logp = torch.log_softmax(logits, -1).gather(1, act[:, None])[:, 0]
        return act.numpy(), {Columns.ACTION_LOGP: logp.numpy(), Columns.ACTION_DIST_INPUTS: logits.numpy()}

    def sample(self, *, num_timesteps: int | None = None, num_episodes: int | None = None, explore: bool | None = None,
               random_actions: bool = False, force_reset: bool = False, **kwargs: Any) -> list[SingleAgentEpisode]:
        """Complete hands at every table until ``num_timesteps`` learner decisions (default: this runner's
        share of the train batch) or ``num_episodes`` learner episodes; one episode per learner seat and hand."""
        if self.tables is None:
            raise ValueError(f"{self} has no tables (the local runner of a group with remote runners)")
        if random_actions:
            raise NotImplementedError("RookVectorEnvRunner samples from its module (random_actions=False)")
        explore = self.config.explore if explore is None else explore
        if num_timesteps is None and num_episodes is None:
            # this runner's share of the train batch (num_envs_per_env_runner is 1: the tables are the runner's)
            num_timesteps = self.config.get_rollout_fragment_length(self.worker_index)
        t0 = time.perf_counter()
        data = self.tables.play(lambda o, m: self._policy(o, m, explore), decisions=num_timesteps or 0,
                                hands=num_episodes)
        episodes = self._episodes_of(data)
        seconds = time.perf_counter() - t0
        self._record(episodes, seconds)
        return episodes

    def _episodes_of(self, data: dict[str, np.ndarray]) -> list[SingleAgentEpisode]:
        obs_space, act_space = self._spaces
        start, obs, mask = data["start"], data["obs"], data["mask"].astype(np.float32)
        extras = (Columns.ACTION_LOGP, Columns.ACTION_DIST_INPUTS)
        episodes = []
        for e in range(len(start) - 1):
            a, b = start[e], start[e + 1]
            n = b - a
            # the terminal observation is never acted on (terminated: its value is not used); the last
            # decision's observation stands in for it
            o = {OBS_KEY: np.concatenate([obs[a:b], obs[b - 1:b]]),
                 MASK_KEY: np.concatenate([mask[a:b], mask[b - 1:b]])}
            rewards = np.zeros(n, np.float32)
            rewards[-1] = data["reward"][e] * self.reward_scale
            ep = SingleAgentEpisode(
                observations=_rows(o), actions=list(data["act"][a:b]), rewards=list(rewards),
                extra_model_outputs={k: list(data[k][a:b]) for k in extras},
                terminated=True, observation_space=obs_space, action_space=act_space, len_lookback_buffer=0,
            )
            episodes.append(ep.to_numpy())
        return episodes

    def _record(self, episodes: list[SingleAgentEpisode], seconds: float) -> None:
        """RLlib's sampling metrics, as SingleAgentEnvRunner logs them (steps here are learner decisions)."""
        steps = sum(len(e) for e in episodes)
        self.num_env_steps_sampled_lifetime += steps
        self._increase_sampled_metrics(steps, len(episodes))
        for e in episodes:
            self._log_episode_metrics(len(e), float(e.get_return()), seconds / max(len(episodes), 1))
        self._engine_steps += self.tables.steps

    def engine_steps(self) -> int:
        """Engine steps (one decision at one table, learner or opponent) played since this runner started."""
        return self._engine_steps


def _rows(o: dict[str, np.ndarray]) -> list[dict[str, np.ndarray]]:
    return [{OBS_KEY: o[OBS_KEY][i], MASK_KEY: o[MASK_KEY][i]} for i in range(len(o[OBS_KEY]))]


def rook_vector_ppo_config(
    *,
    game: str = "partnership",
    flags: Mapping[str, Any] | None = None,
    tables: int = 128,
    opponents: Mapping[str, float] | None = None,
    reward_scale: float = 0.01,
    hidden: list[int] | tuple[int, ...] = (256, 256),
    num_env_runners: int = 2,
    seed: int | None = None,
) -> PPOConfig:
    """A ``PPOConfig`` whose env runners are :class:`RookVectorEnvRunner`: ``tables`` tables of the batched
    engine each, one shared module for every learner seat, opponents ``{"heuristic": p, "random": q}``
    (fractions of hands; the rest self-play). Tune further with ``.training(...)`` etc."""
    env_config = check_env_config({"game": game, "flags": dict(flags or {}), "tables": tables,
                                   "opponents": dict(opponents or {}), "reward_scale": reward_scale})
    register_vector()
    config = (
        PPOConfig()
        .environment(VECTOR_ENV_NAME, env_config=env_config, disable_env_checking=True)
        .env_runners(num_env_runners=num_env_runners, num_envs_per_env_runner=1, env_runner_cls=RookVectorEnvRunner)
        .rl_module(rl_module_spec=RLModuleSpec(module_class=RookMaskedPPOModule,
                                               model_config={"fcnet_hiddens": list(hidden)}))
        .training(gamma=1.0, lambda_=0.95)
    )
    if seed is not None:
        config.debugging(seed=seed)
    return config

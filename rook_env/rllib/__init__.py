"""Rook on Ray RLlib (new API stack): environment, action-masking RLModule, shared-policy self-play, agents.

Needs ``ray[rllib]`` (``pip install -e ".[rllib]"``; ray 2.60 pins gymnasium 1.2.2, so give it its own
virtual environment); ``import rook_env`` never imports this module.

- :class:`RookMultiAgentEnv`: ``rook_env.env()`` as an RLlib ``MultiAgentEnv`` (RLlib's ``PettingZooEnv``),
  registered as ``"rook_env"`` by :func:`register`; ``env_config``: ``{"flags": {...rule flags},
  "reward_scale": 0.01, "illegal_action": "terminate" | "raise"}``. The hand's reward reaches all four
  seats (PettingZoo's terminal pass), scaled by ``reward_scale``.
- :class:`RookMaskedPPOModule`: PPO's default torch RLModule fed with rook's observation dict as it is,
  ``{"observation", "action_mask"}``: the networks see ``observation``; illegal logits are pushed to
  ``FLOAT_MIN`` so illegal actions are never sampled (the mask is applied in every forward pass, training
  included).
- :class:`AgentRLModule`: a project agent (``"heuristic"``, ``"random"``, ``"ppo"``, a train.py ``.pt``) as a
  frozen RLModule, to serve as an opponent.
- :func:`rook_ppo_config`: a ``PPOConfig`` in which all four seats map to one shared module ``"shared"``
  (partners and opponents are the same network, like train.py). Opponents are added with
  ``opponents={module_id: (spec, probability)}``: in that fraction of episodes one team (chosen per
  episode) is played by that module, which is not trained. A spec is a project agent spec (above) or
  ``"rllib:<checkpoint>"``, a frozen snapshot of an RLlib-trained module.
- :class:`RLlibAgent`: an RLlib checkpoint as a project agent (``act(observation, info)``, ``reset()``).

The fast path, :mod:`rook_env.rllib.vector` (:class:`~rook_env.rllib.vector.RookVectorEnvRunner`,
:func:`~rook_env.rllib.vector.rook_vector_ppo_config`): env runners that step many tables of the batched
engine at once, one forward pass per step, opponents in arrays; re-exported here.
"""

from __future__ import annotations

import os
import zlib
from pathlib import Path
from typing import Any, Mapping

import gymnasium as gym
import numpy as np
import torch
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
from ray.rllib.core import COMPONENT_LEARNER, COMPONENT_LEARNER_GROUP, COMPONENT_RL_MODULE, DEFAULT_MODULE_ID
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModule, RLModuleSpec
from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
from ray.rllib.utils.torch_utils import FLOAT_MIN
from ray.tune.registry import register_env

from ..env import AGENTS, env as make_checked_env, raw_env

ENV_NAME = "rook_env"          # the name register() gives the environment in Ray's registry
SHARED = "shared"              # the module id of the shared learning policy
OBS_KEY, MASK_KEY = "observation", "action_mask"


# --------------------------------------------------------------------------------------- environment
class RookMultiAgentEnv(PettingZooEnv):
    """``rook_env.env(**flags)`` for RLlib, with the hand's reward scaled by ``reward_scale``.

    ``illegal_action="terminate"`` (default) keeps env()'s rule: an illegal action ends the episode with
    ``illegal_reward`` for its author (and a warning); ``"raise"`` uses ``raw_env`` and raises instead,
    which is what the tests use to prove that no illegal action is ever sent.
    """

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        config = dict(config or {})
        unknown = sorted(set(config) - {"flags", "reward_scale", "illegal_action", "illegal_reward"})
        if unknown:
            raise ValueError(f"unknown env_config key(s) {unknown}; known: flags, reward_scale, illegal_action, "
                             f"illegal_reward")
        mode = config.get("illegal_action", "terminate")
        flags = dict(config.get("flags") or {})
        if mode == "terminate":
            aec = make_checked_env(illegal_reward=float(config.get("illegal_reward", -1.0)), **flags)
        elif mode == "raise":
            aec = raw_env(**flags)
        else:
            raise ValueError(f"illegal_action={mode!r}; allowed: terminate, raise")
        self.reward_scale = float(config.get("reward_scale", 1.0))
        super().__init__(aec)

    def step(self, action):
        obs, rew, term, trunc, info = super().step(action)
        if self.reward_scale != 1.0:
            rew = {a: r * self.reward_scale for a, r in rew.items()}
        return obs, rew, term, trunc, info


def register(name: str = ENV_NAME) -> str:
    """Register :class:`RookMultiAgentEnv` in Ray's registry under ``name`` (idempotent); returns it."""
    register_env(name, lambda cfg: RookMultiAgentEnv(cfg))
    return name


# --------------------------------------------------------------------------------------- RLModules
class RookMaskedPPOModule(DefaultPPOTorchRLModule):
    """PPO's default torch module on rook's ``Dict(observation=Box, action_mask=Box)`` observation.

    The encoder and heads are built for the ``observation`` Box only (``model_config`` as for PPO, e.g.
    ``{"fcnet_hiddens": [256, 256]}``); the mask turns illegal logits into ``FLOAT_MIN``.
    """

    def __init__(self, *, observation_space: gym.Space | None = None, **kwargs: Any) -> None:
        if not isinstance(observation_space, gym.spaces.Dict) or set(observation_space.spaces) != {OBS_KEY, MASK_KEY}:
            raise ValueError(f"RookMaskedPPOModule needs rook's Dict({OBS_KEY}=Box, {MASK_KEY}=Box) observation "
                             f"space, got {observation_space}")
        self.space_with_mask = observation_space
        super().__init__(observation_space=observation_space[OBS_KEY], **kwargs)

    def setup(self) -> None:
        super().setup()  # builds the networks for the observation Box
        self.observation_space = self.space_with_mask  # what the env runners' connectors see

    @staticmethod
    def _split(batch: dict) -> tuple[torch.Tensor, dict]:
        obs = batch[Columns.OBS]
        if not isinstance(obs, Mapping) or MASK_KEY not in obs:
            raise ValueError(f"RookMaskedPPOModule expects batch['obs'] to be rook's observation dict with "
                             f"keys {OBS_KEY!r} and {MASK_KEY!r}, got {type(obs).__name__}")
        return obs[MASK_KEY], {**batch, Columns.OBS: obs[OBS_KEY]}  # a shallow copy: the caller's batch stays

    @staticmethod
    def _masked(out: dict, mask: torch.Tensor) -> dict:
        logits = out[Columns.ACTION_DIST_INPUTS]
        out[Columns.ACTION_DIST_INPUTS] = torch.where(mask.bool(), logits, torch.full_like(logits, FLOAT_MIN))
        return out

    def _forward(self, batch: dict, **kwargs: Any) -> dict:  # inference and exploration
        mask, batch = self._split(batch)
        return self._masked(super()._forward(batch, **kwargs), mask)

    def _forward_train(self, batch: dict, **kwargs: Any) -> dict:
        mask, batch = self._split(batch)
        return self._masked(super()._forward_train(batch, **kwargs), mask)

    def compute_values(self, batch: dict, embeddings: Any = None) -> torch.Tensor:
        if embeddings is None:  # from GAE, with the raw batch (from the loss, embeddings are given)
            _, batch = self._split(batch)
        return super().compute_values(batch, embeddings)


class AgentRLModule(RLModule):
    """A project agent (``model_config={"spec": "heuristic", "flags": {...}, "seed": 0}``) as a frozen
    RLModule: it acts from each row's observation dict; it is never trained (leave it out of
    ``policies_to_train``)."""

    def setup(self) -> None:
        from ..agents import make_agent

        cfg = dict(self.model_config or {})
        self.spec = cfg.get("spec", "heuristic")
        self.agent = make_agent(self.spec, seed=cfg.get("seed"), **dict(cfg.get("flags") or {}))

    def _forward(self, batch: dict, **kwargs: Any) -> dict:
        obs = batch[Columns.OBS]
        vecs = np.asarray(obs[OBS_KEY])
        masks = np.asarray(obs[MASK_KEY])
        actions = np.fromiter(
            (self.agent.act({OBS_KEY: v, MASK_KEY: m}) for v, m in zip(vecs, masks)), np.int64, len(vecs)
        )
        return {Columns.ACTIONS: actions}

    def _forward_train(self, *args: Any, **kwargs: Any) -> dict:
        raise NotImplementedError(f"AgentRLModule({self.spec!r}) is frozen: leave it out of policies_to_train")

    def compile(self, *args: Any, **kwargs: Any) -> None:  # nothing to compile
        pass


def _module_spec(spec: str, hidden: list[int], flags: Mapping[str, Any]) -> RLModuleSpec:
    if spec.startswith("rllib:"):  # a frozen snapshot of an RLlib-trained module
        return RLModuleSpec(module_class=RookMaskedPPOModule, model_config={"fcnet_hiddens": list(hidden)},
                            load_state_path=str(module_path(spec[len("rllib:"):])))
    return RLModuleSpec(module_class=AgentRLModule, model_config={"spec": spec, "flags": dict(flags)})


def rook_ppo_config(
    *,
    flags: Mapping[str, Any] | None = None,
    reward_scale: float = 0.01,
    hidden: list[int] | tuple[int, ...] = (256, 256),
    opponents: Mapping[str, tuple[str, float]] | None = None,
    num_env_runners: int = 2,
    num_envs_per_env_runner: int = 1,
    illegal_action: str = "terminate",
    seed: int | None = None,
) -> PPOConfig:
    """A ``PPOConfig`` for Rook self-play; tune it further with the usual ``.training(...)`` etc.

    Every seat maps to the module ``"shared"`` except, in a fraction of episodes, the seats of one team
    (the team chosen per episode), which map to an opponent: ``opponents={"heuristic": ("heuristic",
    0.5), "old": ("rllib:runs/rllib/checkpoint", 0.2)}`` (probabilities sum to at most 1; the rest is
    pure self-play). Opponent modules are never trained. An ``rllib:`` snapshot is rebuilt with ``hidden``:
    it must come from a run with the same hidden sizes.
    """
    register()
    flags = dict(flags or {})
    opponents = dict(opponents or {})
    if SHARED in opponents:
        raise ValueError(f"{SHARED!r} is the learning module's id; name opponents otherwise")
    total = sum(p for _, p in opponents.values())
    if any(not 0 <= p <= 1 for _, p in opponents.values()) or total > 1 + 1e-9:
        raise ValueError(f"opponent probabilities must be in [0, 1] and sum to at most 1, got {opponents}")
    # Cumulative thresholds over [0, 1): an episode's hash picks self-play or one opponent.
    table, acc = [], 0.0
    for mid, (_, p) in opponents.items():
        acc += p
        table.append((acc, mid))

    def mapping(agent_id: str, episode: Any, **kwargs: Any) -> str:
        h = zlib.crc32(str(episode.id_).encode())
        u = (h & 0xFFFF) / 0x10000  # the opponent draw
        opponent_team = (h >> 16) & 1  # the team it plays
        for threshold, mid in table:
            if u < threshold:
                return mid if AGENTS.index(agent_id) & 1 == opponent_team else SHARED
        return SHARED

    specs = {SHARED: RLModuleSpec(module_class=RookMaskedPPOModule, model_config={"fcnet_hiddens": list(hidden)})}
    specs.update({mid: _module_spec(spec, list(hidden), flags) for mid, (spec, _) in opponents.items()})
    config = (
        PPOConfig()
        .environment(
            ENV_NAME,
            env_config={"flags": flags, "reward_scale": reward_scale, "illegal_action": illegal_action},
            # RLlib's pre-check steps one unmasked random action: an illegal action in Rook. The
            # environment is checked by rook_env's own tests (tests/integrations/test_rllib.py) instead.
            disable_env_checking=True,
        )
        .env_runners(num_env_runners=num_env_runners, num_envs_per_env_runner=num_envs_per_env_runner)
        .multi_agent(policies={SHARED, *opponents}, policy_mapping_fn=mapping, policies_to_train=[SHARED])
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs))
        .training(gamma=1.0, lambda_=0.95)
    )
    if seed is not None:
        config.debugging(seed=seed)
    return config


# --------------------------------------------------------------------------------------- agent
def module_path(checkpoint: str | os.PathLike, module_id: str | None = None) -> Path:
    """The module folder inside an Algorithm checkpoint (or ``checkpoint`` itself if it is one).
    ``module_id=None``: the learning module of either path, ``"shared"`` (multi-agent) or
    ``"default_policy"`` (:mod:`rook_env.rllib.vector`)."""
    path = Path(checkpoint)
    modules = path / COMPONENT_LEARNER_GROUP / COMPONENT_LEARNER / COMPONENT_RL_MODULE
    for mid in [module_id] if module_id else [SHARED, DEFAULT_MODULE_ID]:
        if (modules / mid).is_dir():
            return modules / mid
    inner = modules / (module_id or SHARED)
    if (path / "module_state.pt").is_file() or (path / "class_and_ctor_args.pkl").is_file():
        return path
    raise FileNotFoundError(f"{str(path)!r} is neither an RLlib Algorithm checkpoint holding module "
                            f"{module_id!r} ({inner}) nor an RLModule checkpoint folder")


class RLlibAgent:
    """An RLlib-trained :class:`RookMaskedPPOModule` as a project agent: greedy (the most probable legal
    action) unless ``greedy=False`` (sampled, seeded)."""

    def __init__(self, module: RLModule, greedy: bool = True, seed: int | None = None) -> None:
        self.module = module
        self.greedy = bool(greedy)
        self.generator = torch.Generator().manual_seed(0 if seed is None else int(seed))

    @classmethod
    def load(cls, path: str | os.PathLike, seed: int | None = None, greedy: bool = True,
             module_id: str | None = None, game: str | None = None, **flags: Any) -> "RLlibAgent":
        """Load module ``module_id`` (default: ``"shared"`` or ``"default_policy"``, whichever the checkpoint
        holds) from an Algorithm checkpoint (``algo.save()`` / train_rllib.py) or an RLModule folder.
        ``game``, ``flags``: the table's game and rule flags; the sizes must match the checkpoint's."""
        from ..games import resolve_game

        module = RLModule.from_checkpoint(str(module_path(path, module_id)))
        spec, config = resolve_game(game, **flags)
        want = (spec.load("obs_layout")(config).size, spec.load("layout")(config).n_actions)
        space = getattr(module, "space_with_mask", None)
        got = None if space is None else (space[OBS_KEY].shape[0], module.action_space.n)
        if got != want:
            raise ValueError(f"RLlib checkpoint {str(path)!r} was trained for (observation, actions) sizes {got}, "
                             f"but the rule flags {dict(flags)} give {want}")
        module.eval()
        return cls(module, greedy=greedy, seed=seed)

    def reset(self) -> None:
        pass

    @torch.no_grad()
    def act(self, observation: Mapping[str, np.ndarray], info: Mapping[str, Any] | None = None) -> int:
        from ..agents import legal_from

        legal = legal_from(observation)
        if legal.size == 1:
            return int(legal[0])
        batch = {Columns.OBS: {
            OBS_KEY: torch.as_tensor(np.asarray(observation[OBS_KEY], np.float32)).unsqueeze(0),
            MASK_KEY: torch.as_tensor(np.asarray(observation[MASK_KEY], np.float32)).unsqueeze(0),
        }}
        logits = self.module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS][0]
        if self.greedy:
            return int(torch.argmax(logits))
        return int(torch.multinomial(torch.softmax(logits, -1), 1, generator=self.generator))


from .vector import RookVectorEnvRunner, rook_vector_ppo_config  # noqa: E402, F401  (re-exported)

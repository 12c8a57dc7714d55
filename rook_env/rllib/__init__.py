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
- :class:`RLlibAgent`: an RLlib checkpoint as a project agent (``act(observation, info)``, ``reset()``; spec
  ``"rllib:<checkpoint dir>"``), defined with the other learned players in :mod:`rook_env.agents.learned.rllib`.

The modules are :mod:`.module` (the two RLModules), :mod:`.vector` (below) and this one (the environment and the
multi-agent config).

The fast path, :mod:`rook_env.rllib.vector` (:class:`~rook_env.rllib.vector.RookVectorEnvRunner`,
:func:`~rook_env.rllib.vector.rook_vector_ppo_config`): env runners that step many tables of the batched
engine at once, one forward pass per step, opponents in arrays; re-exported here.
"""

from __future__ import annotations

import zlib
from typing import Any, Mapping

from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
from ray.tune.registry import register_env

from rook_env.agents.learned.rllib import MASK_KEY, OBS_KEY, SHARED, RLlibAgent, module_path
from rook_env.games.partnership.env import AGENTS, env as make_checked_env, raw_env

from .module import AgentRLModule, RookMaskedPPOModule
from .vector import RookVectorEnvRunner, rook_vector_ppo_config

__all__ = [
    "AGENTS", "ENV_NAME", "MASK_KEY", "OBS_KEY", "SHARED", "AgentRLModule", "RLlibAgent", "RookMaskedPPOModule",
    "RookMultiAgentEnv", "RookVectorEnvRunner", "module_path", "register", "rook_ppo_config", "rook_vector_ppo_config",
]

ENV_NAME = "rook_env"          # the name register() gives the environment in Ray's registry


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

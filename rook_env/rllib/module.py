"""The RLModules of the RLlib recipes: :class:`RookMaskedPPOModule` (PPO's default torch module with the action mask
applied in every forward pass) and :class:`AgentRLModule` (a project agent as a frozen opponent module). Needs
``ray[rllib]`` (the ``[rllib]`` extra)."""

from __future__ import annotations

from typing import Any, Mapping

import gymnasium as gym
import numpy as np
import torch
from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.rl_module import RLModule
from ray.rllib.utils.torch_utils import FLOAT_MIN

from rook_env.agents import make_agent
from rook_env.agents.learned.rllib import MASK_KEY, OBS_KEY

__all__ = ["AgentRLModule", "RookMaskedPPOModule"]


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

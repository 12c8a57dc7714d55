"""A network trained with RLlib as an agent: :class:`RLlibAgent` (spec ``"rllib:<checkpoint dir>"``).

Needs torch and ``ray[rllib]`` (the ``[rllib]`` extra); :mod:`rook_env.agents.learned` loads this module when such
an agent is first built. The checkpoints are those of :mod:`rook_env.rllib`'s recipes (``algo.save()``,
train_rllib.py): an Algorithm checkpoint holding the learning module (``"shared"``, multi-agent, or
``"default_policy"``, the vector env runner's), or an RLModule folder.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import torch
from ray.rllib.core import COMPONENT_LEARNER, COMPONENT_LEARNER_GROUP, COMPONENT_RL_MODULE, DEFAULT_MODULE_ID
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.rl_module import RLModule

from rook_env.games import resolve_game

from ..base import legal_from

__all__ = ["MASK_KEY", "OBS_KEY", "RLlibAgent", "SHARED", "module_path"]

SHARED = "shared"              # the module id of the shared learning policy (rook_env.rllib.rook_ppo_config)
OBS_KEY, MASK_KEY = "observation", "action_mask"


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
    """An RLlib-trained :class:`rook_env.rllib.RookMaskedPPOModule` as a project agent: greedy (the most probable
    legal action) unless ``greedy=False`` (sampled, seeded)."""

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

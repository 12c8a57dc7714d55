"""The loss-term plug-ins of PPO's update. PPO's own term is the clipped surrogate, value and entropy loss of
:func:`~rook_env.training.ppo.ppo_loss`, computed on each minibatch of the rollout; a plug-in term adds a loss
of its own to every minibatch's (:func:`~rook_env.training.ppo.ppo_update`'s ``extra``), drawn from data of its
own. The one there is: expert iteration's distillation towards search's card values (the config's ``exit``
section; :class:`~rook_env.training.expert.ExpertIteration`, docs/training.md).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import torch

from rook_env.agents.learned.model import ActorCritic
from rook_env.games import Game

from .config import PPOConfig
from .expert import ExpertIteration
from .run import RandomStreams


class LossTerm(Protocol):
    """A term of the update's minibatch loss beside PPO's."""

    def refresh(self, model: ActorCritic) -> dict[str, float]:
        """Before each update (its data brought up to date: labels received); returns figures for TensorBoard."""

    def loss(self) -> Callable[[ActorCritic], dict[str, torch.Tensor]] | None:
        """The term for this update: ``f(model)`` gives its ``loss`` and parts (logged as ``exit_<part>``) for
        one minibatch; None while it has nothing to add."""

    def close(self) -> None: ...


def loss_terms(cfg: PPOConfig, model: ActorCritic, game: Game, device: torch.device,
               streams: RandomStreams) -> list[LossTerm]:
    """The config's terms beside PPO's: expert iteration's distillation when ``exit.source`` is set (its labelled
    minibatches draw from a generator of their own, ``exit``)."""
    if not cfg.exit.source:
        return []
    return [ExpertIteration(cfg, model, game.flags, streams.generator("exit"), device)]

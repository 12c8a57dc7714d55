"""The PPO network and its masked categorical distribution (shared by train.py and PPOAgent).

One network plays every seat: observations are seat-relative (see rook_env.observation), so
the two partners are literally the same policy. The actor sees only the seat's observation;
the critic sees either the same observation or, with ``critic_dim`` set, the full-information
``env.state_for(agent)`` vector (a centralized critic, used during training only).

Illegal actions get the logit ``MASK_LOGIT`` (-1e9): after the softmax their probability is
exactly 0.0 in float32, so ``sample()`` can never return them and ``entropy()`` stays finite.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import nn

MASK_LOGIT = -1e9


class MaskedCategorical:
    """A categorical distribution over actions restricted to ``mask`` (bool, same shape as ``logits``)."""

    def __init__(self, logits: torch.Tensor, mask: torch.Tensor) -> None:
        mask = mask.bool()
        if not bool(mask.any(-1).all()):
            raise ValueError("an action mask has no legal action (not this seat's turn, or the hand is over)")
        self.mask = mask
        self.logits = torch.where(mask, logits, torch.full_like(logits, MASK_LOGIT))
        self.log_probs = torch.log_softmax(self.logits, dim=-1)

    @property
    def probs(self) -> torch.Tensor:
        return self.log_probs.exp()

    def sample(self, generator: torch.Generator | None = None) -> torch.Tensor:
        # Illegal actions have probability exactly 0 and multinomial never draws them.
        return torch.multinomial(self.probs, 1, generator=generator).squeeze(-1)

    def mode(self) -> torch.Tensor:
        return self.logits.argmax(-1)

    def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        return self.log_probs.gather(-1, actions.long().unsqueeze(-1)).squeeze(-1)

    def entropy(self) -> torch.Tensor:
        p_logp = self.probs * self.log_probs
        return -torch.where(self.mask, p_logp, torch.zeros_like(p_logp)).sum(-1)


def layer_init(layer: nn.Linear, std: float = float(np.sqrt(2)), bias: float = 0.0) -> nn.Linear:
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, bias)
    return layer


def mlp(n_in: int, hidden: Sequence[int], n_out: int, out_std: float) -> nn.Sequential:
    layers: list[nn.Module] = []
    last = n_in
    for h in hidden:
        layers += [layer_init(nn.Linear(last, h)), nn.ReLU()]
        last = h
    layers.append(layer_init(nn.Linear(last, n_out), std=out_std))
    return nn.Sequential(*layers)


class ActorCritic(nn.Module):
    """Separate actor and critic MLPs.

    ``obs_dim``: the observation size (583 for the default rules); ``n_actions``: 58 by default;
    ``hidden``: the actor's hidden layers; ``critic_dim``: input size of the critic (None: the observation;
    else the ``state_for`` size); ``critic_hidden``: the critic's hidden layers (None: the same as ``hidden``).
    Only the actor plays; the critic exists for training, so it can be narrower: its share of the update's
    matrix products is what a smaller one saves (the default config's critic is 128 wide).
    """

    def __init__(
        self, obs_dim: int, n_actions: int, hidden: Sequence[int] = (256, 256, 256), critic_dim: int | None = None,
        critic_hidden: Sequence[int] | None = None,
    ) -> None:
        super().__init__()
        self.obs_dim, self.n_actions = int(obs_dim), int(n_actions)
        self.hidden = [int(h) for h in hidden]
        # Checkpoints written before critic_hidden existed have none: their critic is as wide as the actor.
        self.critic_hidden = self.hidden if not critic_hidden else [int(h) for h in critic_hidden]
        self.critic_dim = None if critic_dim is None else int(critic_dim)
        self.actor = mlp(self.obs_dim, self.hidden, self.n_actions, out_std=0.01)
        self.critic = mlp(self.critic_dim or self.obs_dim, self.critic_hidden, 1, out_std=1.0)

    def kwargs(self) -> dict:
        """Constructor arguments, stored in checkpoints."""
        return {"obs_dim": self.obs_dim, "n_actions": self.n_actions, "hidden": self.hidden,
                "critic_dim": self.critic_dim, "critic_hidden": self.critic_hidden}

    def dist(self, obs: torch.Tensor, mask: torch.Tensor) -> MaskedCategorical:
        return MaskedCategorical(self.actor(obs), mask)

    def value(self, critic_in: torch.Tensor) -> torch.Tensor:
        return self.critic(critic_in).squeeze(-1)


# ---------------------------------------------------------------------------- checkpoints
CHECKPOINT_FORMAT = "rook_env.ppo"
CHECKPOINT_VERSION = 1
REQUIRED_KEYS = ("format", "format_version", "model_kwargs", "model", "env_flags")


class CheckpointError(ValueError):
    """A file that is not a usable rook_env PPO checkpoint (corrupt, incompatible, incomplete)."""


def load_checkpoint(path: str, map_location: str | torch.device = "cpu") -> dict:
    """Load and validate a checkpoint written by train.py; raises :class:`CheckpointError` with the reason."""
    import os

    if not os.path.isfile(path):
        raise CheckpointError(f"checkpoint {path!r} does not exist (or is not a file)")
    try:
        ckpt = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as exc:  # noqa: BLE001 - any unpickling failure means "not a checkpoint"
        raise CheckpointError(
            f"{path!r} is not a readable rook_env PPO checkpoint (corrupt or not written by train.py): "
            f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        ) from exc
    if not isinstance(ckpt, dict):
        raise CheckpointError(f"{path!r} is not a rook_env PPO checkpoint: it holds a {type(ckpt).__name__}, not a dict")
    if ckpt.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointError(
            f"{path!r} is not a rook_env PPO checkpoint: format is {ckpt.get('format')!r}, expected {CHECKPOINT_FORMAT!r}"
        )
    missing = [k for k in REQUIRED_KEYS if k not in ckpt]
    if missing:
        raise CheckpointError(f"checkpoint {path!r} is missing key(s): {', '.join(missing)}")
    if ckpt["format_version"] != CHECKPOINT_VERSION:
        raise CheckpointError(
            f"checkpoint {path!r} has format_version {ckpt['format_version']!r}; this code reads {CHECKPOINT_VERSION}"
        )
    return ckpt


def model_from_checkpoint(ckpt: dict, path: str = "<checkpoint>", obs_dim: int | None = None,
                          n_actions: int | None = None) -> ActorCritic:
    """Build the network of a loaded checkpoint, checking it fits the expected sizes."""
    kw = dict(ckpt["model_kwargs"])
    if obs_dim is not None and kw.get("obs_dim") != obs_dim:
        raise CheckpointError(
            f"checkpoint {path!r} was trained on observations of size {kw.get('obs_dim')}, but these rules give "
            f"{obs_dim} (different rule flags? the checkpoint's env_flags are {ckpt.get('env_flags')})"
        )
    if n_actions is not None and kw.get("n_actions") != n_actions:
        raise CheckpointError(
            f"checkpoint {path!r} has {kw.get('n_actions')} actions, but these rules give {n_actions}"
        )
    try:
        model = ActorCritic(**kw)
        model.load_state_dict(ckpt["model"])
    except Exception as exc:  # noqa: BLE001
        raise CheckpointError(f"checkpoint {path!r} has incompatible model weights: {exc}") from exc
    return model

"""The PPO network and its masked categorical distribution (shared by train.py and PPOAgent).

One network plays every seat: observations are seat-relative (see rook_env.games.partnership.observation), so
the two partners are literally the same policy. The actor sees only the seat's observation;
the critic sees either the same observation or, with ``critic_dim`` set, the full-information
``env.state_for(agent)`` vector (a centralized critic, used during training only).

Illegal actions get the logit ``MASK_LOGIT`` (-1e9): after the softmax their probability is
exactly 0.0 in float32, so ``sample()`` can never return them and ``entropy()`` stays finite.

**A residual policy over the heuristic** (``heuristic_prior`` > 0, the config's field of that name): the actor's
logits plus ``heuristic_prior`` on the action the game's heuristic chooses from the same observation (its *hint*,
computed outside the network and passed to :meth:`ActorCritic.dist`). The actor's last layer starts near 0, so a
fresh network plays the heuristic's action greedily and samples it with probability e^w / (e^w + k - 1) among k
legal actions; training learns where to play otherwise (residual policy learning: Silver et al. 2018, "Residual
Policy Learning"; Johannink et al. 2019). The hint is a function of the seat's own observation only.

The first layer of both networks is a :class:`SparseInputLinear`: the observation is about 6% non-zeros
(34 of 583) and the critic's state 8% (62 of 788), so on the CPU (where numba is installed) it computes
the same function as ``nn.Linear`` from the non-zero inputs only, in the forward pass and in the weight
gradient. Its parameters and ``state_dict`` are ``nn.Linear``'s: checkpoints are unchanged. The other layers
are :class:`DenseLinear`: in training (``grad_precision``, :meth:`ActorCritic.set_grad_precision`) their gradient
products can run in bfloat16 on a CPU that has it in hardware, the forward pass staying float32.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from types import SimpleNamespace

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from rook_env.core import kernels

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


# ---------------------------------------------------------------------------- the sparse first layer
def sparse_forward(x: np.ndarray, wt: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """``out = x @ wt + b`` from the non-zeros of ``x`` (rows: samples): each row is the bias plus the weight
    rows of its non-zero inputs, scaled. ``wt``: the weight transposed, (inputs, outputs), contiguous."""
    n_out = wt.shape[1]
    for r in range(x.shape[0]):
        for h in range(n_out):
            out[r, h] = b[h]
        for c in range(x.shape[1]):
            v = x[r, c]
            if v != 0.0:
                for h in range(n_out):  # explicit loops: numba vectorises them and allocates nothing
                    out[r, h] += v * wt[c, h]


def sparse_weight_grad(x: np.ndarray, g: np.ndarray, out: np.ndarray) -> None:
    """``out = x.T @ g`` (the weight gradient, transposed: (inputs, outputs)) from the non-zeros of ``x``."""
    n_out = g.shape[1]
    out[:] = 0.0
    for r in range(x.shape[0]):
        for c in range(x.shape[1]):
            v = x[r, c]
            if v != 0.0:
                for h in range(n_out):
                    out[c, h] += v * g[r, h]


_kernels: SimpleNamespace | None = None
NUMBA = kernels.AVAILABLE


def sparse_kernels() -> SimpleNamespace:
    """:func:`sparse_forward` and :func:`sparse_weight_grad` compiled by numba (on first use; cached on disk;
    nogil, so that the update and the collection of the training loop's two threads run side by side)."""
    global _kernels
    if _kernels is None:
        _kernels = SimpleNamespace(forward=kernels.jit(sparse_forward), weight_grad=kernels.jit(sparse_weight_grad))
    return _kernels


class _SparseLinearFunction(torch.autograd.Function):
    """``x @ weight.T + bias`` for a float32 CPU ``x`` that is mostly zeros, by the compiled kernels; ``wt`` is
    ``weight.T``, contiguous (the kernels read it by input)."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, wt: torch.Tensor) -> torch.Tensor:
        x = x.detach().contiguous()
        out = torch.empty(x.shape[0], weight.shape[0], dtype=x.dtype)
        sparse_kernels().forward(x.numpy(), wt.numpy(), bias.detach().numpy(), out.numpy())
        ctx.save_for_backward(x, weight)
        return out

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        x, weight = ctx.saved_tensors
        grad = grad.contiguous()
        grad_x = grad_w = grad_b = None
        if ctx.needs_input_grad[0]:  # dense: a gradient reaches the zero inputs too
            grad_x = grad @ weight
        if ctx.needs_input_grad[1]:
            wt = torch.empty(weight.shape[1], weight.shape[0], dtype=grad.dtype)
            sparse_kernels().weight_grad(x.numpy(), grad.numpy(), wt.numpy())
            grad_w = wt.t()  # the weight's own layout (input-major)
        if ctx.needs_input_grad[2]:
            grad_b = grad.sum(0)
        return grad_x, grad_w, grad_b, None


class SparseInputLinear(nn.Linear):
    """``nn.Linear`` (the same parameters, initialisation and ``state_dict``) for inputs that are mostly zeros.

    On the CPU with numba installed, a float32 batch (2-d) is computed from its non-zeros only: the forward
    pass adds up the weight columns of each row's non-zero inputs (times their values), and the weight
    gradient adds each non-zero input times the row's output gradient into that input's weight column. Same
    function, same gradients as ``nn.Linear`` up to float rounding (the sums run in another order;
    tests/test_model.py), for a fraction of the dense product's work (the observation's non-zeros are about
    6%). Elsewhere (CUDA, no numba, other shapes or dtypes) it is ``nn.Linear``."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True) -> None:
        super().__init__(in_features, out_features, bias)  # nn.Linear's initialisation: the same random draws
        # The weight is stored input-major (weight.T is contiguous): the kernels read and write it by input, and
        # it stays (out_features, in_features) to everything else (state_dict, optimizers, F.linear).
        self.weight = nn.Parameter(self.weight.detach().t().contiguous().t())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = self.weight
        if not (NUMBA and x.dim() == 2 and x.dtype == torch.float32 and x.device.type == "cpu"
                and w.dtype == torch.float32 and self.bias is not None):
            return F.linear(x, w, self.bias)
        return _SparseLinearFunction.apply(x, w, self.bias, w.detach().t().contiguous())  # a view: no copy


# ---------------------------------------------------------------------------- bfloat16 gradients
GRAD_PRECISIONS = ("auto", "float32", "bfloat16")


def bf16_matmul_fast() -> bool:
    """Whether this CPU multiplies bfloat16 matrices in hardware (AVX-512 BF16 or AMX, through oneDNN): there a
    bfloat16 product is about 3x a float32 one; elsewhere it is emulated and slower than float32."""
    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):
        return False


def grad_dtype(precision: str, device: torch.device | str = "cpu") -> torch.dtype:
    """The dtype of the dense layers' gradient products for a config's ``grad_precision``: ``auto`` is bfloat16
    on a CPU that multiplies it in hardware, float32 elsewhere (a GPU's update is not the loop's bound)."""
    if precision not in GRAD_PRECISIONS:
        raise ValueError(f"grad_precision must be one of {', '.join(GRAD_PRECISIONS)}, got {precision!r}")
    if precision == "auto":
        return torch.bfloat16 if torch.device(device).type == "cpu" and bf16_matmul_fast() else torch.float32
    return getattr(torch, precision)


class _Bf16GradLinearFunction(torch.autograd.Function):
    """``x @ weight.T + bias`` computed exactly (float32), with the two gradient products (the input's and the
    weight's: two thirds of a layer's training FLOPs) multiplied in bfloat16 (oneDNN accumulates in float32).

    Why only the backward pass: the forward pass in float32 keeps the network the optimizer sees exact (PPO's
    ratio and clipping read it), and the weights stay float32 masters that every step changes visibly. With
    the forward pass in bfloat16 too (``torch.autocast``), steps smaller than a weight's bfloat16 spacing do
    not change the forward pass: an update cannot see how far it has moved and moves further than float32's
    (measured: 1.9x the KL from the start of an update, clipping fraction a fifth). Rounding only the gradients
    adds noise of about 0.4% per product, far below the minibatch's sampling noise: one update of the default
    config ends at a KL of about 1e-6 from float32's, against 7e-4 between two float32 updates that differ only
    in their minibatch shuffle (tests/test_model.py)."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(x, weight)
        return F.linear(x, weight, bias)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        x, weight = ctx.saved_tensors
        g = grad.to(torch.bfloat16)
        grad_x = (g @ weight.to(torch.bfloat16)).float() if ctx.needs_input_grad[0] else None
        grad_w = (g.t() @ x.to(torch.bfloat16)).float() if ctx.needs_input_grad[1] else None
        grad_b = grad.sum(0) if ctx.needs_input_grad[2] else None
        return grad_x, grad_w, grad_b


class DenseLinear(nn.Linear):
    """``nn.Linear`` (the same parameters and ``state_dict``) whose gradient products can run in bfloat16
    (:class:`_Bf16GradLinearFunction`) when ``grad_dtype`` is ``torch.bfloat16`` (set by
    :meth:`ActorCritic.set_grad_precision`). The forward pass is ``F.linear`` always; without gradients
    (acting, collection, evaluation) nothing changes at all."""

    grad_dtype: torch.dtype = torch.float32

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if (self.grad_dtype is torch.bfloat16 and torch.is_grad_enabled() and x.dim() == 2
                and x.dtype == torch.float32 and x.device.type == "cpu" and self.bias is not None):
            return _Bf16GradLinearFunction.apply(x, self.weight, self.bias)
        return F.linear(x, self.weight, self.bias)


def mlp(n_in: int, hidden: Sequence[int], n_out: int, out_std: float) -> nn.Sequential:
    """ReLU MLP; the first layer reads the (sparse) input: :class:`SparseInputLinear`; the others are
    :class:`DenseLinear`."""
    layers: list[nn.Module] = []
    last = n_in
    for i, h in enumerate(hidden):
        layers += [layer_init((SparseInputLinear if i == 0 else DenseLinear)(last, h)), nn.ReLU()]
        last = h
    layers.append(layer_init(DenseLinear(last, n_out), std=out_std))
    return nn.Sequential(*layers)


def prior_logits(logits: torch.Tensor, hint: torch.Tensor | None, weight: float) -> torch.Tensor:
    """``logits`` plus ``weight`` on each row's ``hint`` action (the heuristic's); unchanged when ``weight`` is 0."""
    if not weight:
        return logits
    if hint is None:
        raise ValueError(f"this network is a residual policy over the heuristic (heuristic_prior={weight:g}): "
                         "its distribution needs the heuristic's action of each row (hint)")
    return logits + weight * F.one_hot(hint.long(), logits.shape[-1]).to(logits.dtype)


class ActorCritic(nn.Module):
    """Separate actor and critic MLPs.

    ``obs_dim``: the observation size (583 for the default rules); ``n_actions``: 58 by default;
    ``hidden``: the actor's hidden layers; ``critic_dim``: input size of the critic (None: the observation;
    else the ``state_for`` size); ``critic_hidden``: the critic's hidden layers (None: the same as ``hidden``).
    Only the actor plays; the critic exists for training, so it can be narrower: its share of the update's
    matrix products is what a smaller one saves (the default config's critic is 128 wide).
    ``heuristic_prior``: > 0 makes the actor a residual policy over the game's heuristic (the module docstring).
    """

    def __init__(
        self, obs_dim: int, n_actions: int, hidden: Sequence[int] = (256, 256, 256), critic_dim: int | None = None,
        critic_hidden: Sequence[int] | None = None, heuristic_prior: float = 0.0, hint_input: bool = False,
    ) -> None:
        super().__init__()
        self.obs_dim, self.n_actions = int(obs_dim), int(n_actions)
        self.hidden = [int(h) for h in hidden]
        # Checkpoints written before critic_hidden existed have none: their critic is as wide as the actor.
        self.critic_hidden = self.hidden if not critic_hidden else [int(h) for h in critic_hidden]
        self.critic_dim = None if critic_dim is None else int(critic_dim)
        self.heuristic_prior = float(heuristic_prior)
        if not (np.isfinite(self.heuristic_prior) and self.heuristic_prior >= 0):
            raise ValueError(f"heuristic_prior must be a finite number >= 0, got {heuristic_prior!r}")
        self.hint_input = bool(hint_input)
        if self.hint_input and not self.heuristic_prior:
            raise ValueError("hint_input (the actor reads the heuristic's action) needs heuristic_prior > 0")
        # hint_input: the actor reads the observation and the heuristic's action one-hot (n_actions more inputs)
        self.actor = mlp(self.obs_dim + (self.n_actions if self.hint_input else 0), self.hidden, self.n_actions,
                         out_std=0.01)
        self.critic = mlp(self.critic_dim or self.obs_dim, self.critic_hidden, 1, out_std=1.0)

    def kwargs(self) -> dict:
        """Constructor arguments, stored in checkpoints."""
        kw = {"obs_dim": self.obs_dim, "n_actions": self.n_actions, "hidden": self.hidden,
              "critic_dim": self.critic_dim, "critic_hidden": self.critic_hidden}
        if self.heuristic_prior:  # absent from plain networks' checkpoints, as in those written before it existed
            kw["heuristic_prior"] = self.heuristic_prior
        if self.hint_input:
            kw["hint_input"] = True
        return kw

    def actor_logits(self, obs: torch.Tensor, hint: torch.Tensor | None = None) -> torch.Tensor:
        """The actor's logits before the prior; with ``hint_input`` it reads each row's hint beside the observation."""
        if self.hint_input:
            if hint is None:
                raise ValueError("this actor reads the heuristic's action (hint_input): pass hint=")
            obs = torch.cat([obs, F.one_hot(hint.long(), self.n_actions).to(obs.dtype)], 1)
        return self.actor(obs)

    def set_grad_precision(self, precision: str) -> torch.dtype:
        """The dense layers' gradient products in float32 or bfloat16 (``auto``: :func:`grad_dtype`); returns
        the dtype chosen. The forward pass and the parameters stay float32 either way."""
        dtype = grad_dtype(precision, next(self.parameters()).device)
        for layer in self.modules():
            if isinstance(layer, DenseLinear):
                layer.grad_dtype = dtype
        return dtype

    def dist(self, obs: torch.Tensor, mask: torch.Tensor, hint: torch.Tensor | None = None) -> MaskedCategorical:
        """The masked policy; ``hint``: the heuristic's action per row, needed when ``heuristic_prior`` > 0."""
        return MaskedCategorical(prior_logits(self.actor_logits(obs, hint), hint, self.heuristic_prior), mask)

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

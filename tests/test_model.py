"""The network's sparse first layer (rook_env/agents/learned/model.py: SparseInputLinear) computes the same
function as nn.Linear, with the same gradients, on real observations and critic states; the shipped agent loads
and chooses the same actions with it as with dense layers."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from rook_env.agents.learned import model as M
from rook_env.agents.learned.agent import DEFAULT_CHECKPOINT, PPOAgent
from rook_env.training.ppo import ppo_loss
from rook_env.vector import RookVectorEnv, sample_legal

needs_numba = pytest.mark.skipif(not M.NUMBA, reason="the compiled sparse path needs numba")


@pytest.fixture(scope="module")
def real_batch() -> dict:
    """Observations, masks and critic states (state_for) of every seat to act at 64 tables over 60 steps of
    random legal play: bidding, the nest, trump and card play."""
    env = RookVectorEnv(64)
    obs, info = env.reset(seed=7)
    rng = np.random.default_rng(7)
    rows = {"obs": [], "mask": [], "cin": []}
    for _ in range(60):
        rows["obs"].append(obs.copy())
        rows["mask"].append(info["action_mask"].astype(bool))
        rows["cin"].append(env.state_for(info["seat"]).copy())
        obs, _, _, _, info = env.step(sample_legal(info["action_mask"], rng))
    return {k: np.concatenate(v) for k, v in rows.items()}


@pytest.fixture
def dense(monkeypatch):
    """Within the test, SparseInputLinear runs as nn.Linear (F.linear): the reference."""
    def switch(on: bool) -> None:
        monkeypatch.setattr(M, "NUMBA", M.NUMBA if on else False)
    return switch


def close(a: torch.Tensor, b: torch.Tensor) -> None:
    # float32 sums in another order: relative to the tensor's scale
    torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5 * float(b.detach().abs().max()) + 1e-6)


def test_the_observations_are_mostly_zeros(real_batch):
    for key, most in (("obs", 0.12), ("cin", 0.12)):
        assert (real_batch[key] != 0).mean() < most


@needs_numba
@pytest.mark.parametrize("key,n_out", [("obs", 256), ("cin", 128)])
def test_same_outputs_and_gradients_as_nn_linear(real_batch, key, n_out):
    torch.manual_seed(0)
    x = torch.from_numpy(real_batch[key])
    sparse = M.layer_init(M.SparseInputLinear(x.shape[1], n_out))
    ref = nn.Linear(x.shape[1], n_out)
    ref.load_state_dict(sparse.state_dict())
    grad = torch.randn(len(x), n_out)
    y, y_ref = sparse(x), ref(x)
    assert type(y.grad_fn).__name__ == "_SparseLinearFunctionBackward"  # the compiled path ran
    close(y, y_ref)
    y.backward(grad)
    y_ref.backward(grad)
    close(sparse.weight.grad, ref.weight.grad)
    close(sparse.bias.grad, ref.bias.grad)
    # a gradient with respect to the input reaches its zeros too (dense)
    xg, xg_ref = x[:50].clone().requires_grad_(), x[:50].clone().requires_grad_()
    sparse(xg).backward(grad[:50])
    ref(xg_ref).backward(grad[:50])
    close(xg.grad, xg_ref.grad)


def test_the_kernels_match_the_dense_product(real_batch):
    """The plain Python kernels (what numba compiles) against numpy's products, on a few real rows."""
    rng = np.random.default_rng(1)
    x = real_batch["obs"][::97][:12]
    wt = rng.standard_normal((x.shape[1], 16)).astype(np.float32)
    b = rng.standard_normal(16).astype(np.float32)
    g = rng.standard_normal((len(x), 16)).astype(np.float32)
    out = np.full((len(x), 16), np.nan, np.float32)
    M.sparse_forward(x, wt, b, out)
    np.testing.assert_allclose(out, x @ wt + b, rtol=1e-5, atol=1e-5)
    grad_wt = np.full_like(wt, np.nan)
    M.sparse_weight_grad(x, g, grad_wt)
    np.testing.assert_allclose(grad_wt, x.T @ g, rtol=1e-5, atol=1e-5)


def test_the_layer_is_an_nn_linear_to_everything_else():
    """Same random draws at initialisation, same state_dict keys and shapes; optimizer steps, deepcopy and
    load_state_dict keep its input-major layout, and the kernels always read the current weights."""
    torch.manual_seed(3)
    plain = nn.Linear(583, 32)
    torch.manual_seed(3)
    sparse = M.SparseInputLinear(583, 32)
    assert torch.equal(plain.weight, sparse.weight) and torch.equal(plain.bias, sparse.bias)
    assert {k: v.shape for k, v in plain.state_dict().items()} == {k: v.shape for k, v in sparse.state_dict().items()}
    x = (torch.rand(64, 583) < 0.06).float()
    opt = torch.optim.Adam(sparse.parameters(), lr=0.1, fused=True)
    for _ in range(2):  # fused Adam writes the weights in place
        opt.zero_grad()
        sparse(x).square().sum().backward()
        opt.step()
    assert sparse.weight.t().is_contiguous() and copy.deepcopy(sparse).weight.t().is_contiguous()
    close(sparse(x), F.linear(x, sparse.weight, sparse.bias))
    sparse.load_state_dict(plain.state_dict())
    assert sparse.weight.t().is_contiguous()
    close(sparse(x), plain(x))


@needs_numba
def test_a_ppo_loss_has_the_same_gradients_as_with_dense_layers(real_batch, dense):
    """The whole network (actor and centralized critic) under the PPO loss: parameter gradients as dense."""
    torch.manual_seed(0)
    model = M.ActorCritic(583, 58, [64, 64], 788, [32])
    n = 512
    obs, cin = torch.from_numpy(real_batch["obs"][:n]), torch.from_numpy(real_batch["cin"][:n])
    mask = torch.from_numpy(real_batch["mask"][:n])
    gen = torch.Generator().manual_seed(0)
    act = M.MaskedCategorical(model.actor(obs), mask).sample(gen)
    adv, ret = torch.randn(n, generator=gen), torch.randn(n, generator=gen)
    logp_old = torch.randn(n, generator=gen) * 0.1 - 2
    val_old = torch.randn(n, generator=gen)

    def grads(sparse: bool) -> dict:
        dense(sparse)
        model.zero_grad()
        dist = model.dist(obs, mask)
        out = ppo_loss(dist.log_prob(act), logp_old, adv, model.value(cin), val_old, ret, dist.entropy(),
                       0.2, 0.5, 0.01)
        out["loss"].backward()
        return {k: p.grad.clone() for k, p in model.named_parameters()}

    with_sparse, with_dense = grads(True), grads(False)
    for k in with_dense:
        close(with_sparse[k], with_dense[k])


def test_the_shipped_agent_loads_and_chooses_the_same_actions(real_batch, dense):
    ckpt = M.load_checkpoint(DEFAULT_CHECKPOINT)
    model = M.model_from_checkpoint(ckpt, DEFAULT_CHECKPOINT, obs_dim=583, n_actions=58)
    assert model.state_dict().keys() == ckpt["model"].keys()
    for k, v in model.state_dict().items():
        assert torch.equal(v, ckpt["model"][k])
    obs, mask = torch.from_numpy(real_batch["obs"]), torch.from_numpy(real_batch["mask"])
    with torch.no_grad():
        logits = model.actor(obs)
        dense(False)
        logits_dense = model.actor(obs)
        dense(True)
    close(logits, logits_dense)
    modes = M.MaskedCategorical(logits, mask).mode()
    assert torch.equal(modes, M.MaskedCategorical(logits_dense, mask).mode())
    # the agent's own decisions, one observation at a time, as the dense network's
    agent = PPOAgent.load()
    for i in range(0, len(obs), 37):
        observation = {"observation": real_batch["obs"][i], "action_mask": real_batch["mask"][i].astype(np.int8)}
        if real_batch["mask"][i].sum() > 1:
            assert agent.act(observation) == int(modes[i])

"""The network's sparse first layer (rook_env/agents/learned/model.py: SparseInputLinear) computes the same
function as nn.Linear, with the same gradients, on real observations and critic states; the shipped agent loads
and chooses the same actions with it as with dense layers. The dense layers' bfloat16 gradient products
(DenseLinear, grad_precision) leave the forward pass exact and an update where float32's ends."""

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


# ---------------------------------------------------------------------------- bfloat16 gradient products
def test_bf16_gradients_keep_the_forward_pass_exact_and_the_gradients_close(real_batch):
    torch.manual_seed(0)
    x = torch.from_numpy(real_batch["obs"][:2048, :256]).clone() + 0.1 * torch.randn(2048, 256)
    layer = M.DenseLinear(256, 128)
    ref = nn.Linear(256, 128)
    ref.load_state_dict(layer.state_dict())
    grad = torch.randn(2048, 128)
    with torch.no_grad():  # no gradients: the plain F.linear whatever the setting
        layer.grad_dtype = torch.bfloat16
        assert torch.equal(layer(x), ref(x))
    xg, xg_ref = x.clone().requires_grad_(), x.clone().requires_grad_()
    y, y_ref = layer(xg), ref(xg_ref)
    assert type(y.grad_fn).__name__ == "_Bf16GradLinearFunctionBackward"
    assert torch.equal(y, y_ref)  # the forward pass is float32's, bit for bit
    y.backward(grad)
    y_ref.backward(grad)
    for got, want in ((layer.weight.grad, ref.weight.grad), (xg.grad, xg_ref.grad)):
        rel = float((got - want).norm() / want.norm())
        assert 0 < rel < 1e-2  # rounded (not float32's exactly), by bfloat16's 8 bits, not more
    torch.testing.assert_close(layer.bias.grad, ref.bias.grad)  # a plain sum
    layer.grad_dtype = torch.float32
    assert type(layer(xg).grad_fn).__name__ != "_Bf16GradLinearFunctionBackward"


def test_grad_precision_settings():
    model = M.ActorCritic(583, 58, [32, 32], 788, [16])
    dense_layers = [m for m in model.modules() if isinstance(m, M.DenseLinear)]
    assert len(dense_layers) == 2 + 1  # every layer but the first (sparse) one: the actor 32-32, 32-58; the critic 16-1
    assert model.set_grad_precision("bfloat16") is torch.bfloat16
    assert all(m.grad_dtype is torch.bfloat16 for m in dense_layers)
    assert model.set_grad_precision("float32") is torch.float32
    assert all(m.grad_dtype is torch.float32 for m in dense_layers)
    assert model.set_grad_precision("auto") is (torch.bfloat16 if M.bf16_matmul_fast() else torch.float32)
    with pytest.raises(ValueError, match="grad_precision must be one of auto, float32, bfloat16, got 'half'"):
        model.set_grad_precision("half")


def test_a_bf16_gradient_update_ends_where_float32s_does(real_batch):
    """Two epochs of PPO minibatches on real observations: the policy after the bfloat16-gradient update is far
    closer to float32's (same shuffle) than two float32 updates that differ only in their shuffle are to each other."""
    from rook_env.training.ppo import PPOSettings, make_optimizer, ppo_update

    torch.manual_seed(0)
    base = M.ActorCritic(583, 58, [128, 128], 788, [64])
    obs, mask, cin = (torch.from_numpy(real_batch[k]) for k in ("obs", "mask", "cin"))
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        dist = base.dist(obs, mask)
        act = dist.sample(gen)
        batch = {"obs": obs, "mask": mask, "cin": cin, "act": act, "logp": dist.log_prob(act),
                 "val": base.value(cin), "adv": torch.randn(len(obs), generator=gen),
                 "ret": torch.randn(len(obs), generator=gen)}
    s = PPOSettings(update_epochs=2, minibatch_size=512, clip_coef=0.2, vf_coef=0.5, clip_vloss=True,
                    norm_adv=True, max_grad_norm=0.5, target_kl=0.0)

    def updated(precision: str, shuffle: int) -> M.ActorCritic:
        model = copy.deepcopy(base)
        model.set_grad_precision(precision)
        ppo_update(model, make_optimizer(model, 3e-4, eps=1e-5), batch, s, 0.01,
                   torch.Generator().manual_seed(shuffle))
        return model

    def kl(a: M.ActorCritic, b: M.ActorCritic) -> float:
        with torch.no_grad():
            la, lb = a.dist(obs, mask).log_probs, b.dist(obs, mask).log_probs
            return float(torch.where(mask, la.exp() * (la - lb), torch.zeros_like(la)).sum(-1).mean())

    f32, f32_other, bf16 = updated("float32", 1), updated("float32", 2), updated("bfloat16", 1)
    assert kl(base, f32) > 0 and kl(f32, f32_other) > 0
    assert kl(f32, bf16) < 0.05 * kl(f32, f32_other)
    assert 0.8 < kl(base, bf16) / kl(base, f32) < 1.25  # it moves as far as float32's

"""The PPO update of rook_env.training.ppo takes only the settings it reads (PPOSettings), and each of them
reaches it: epochs and minibatches (the optimizer's step count), the early stop on target_kl, and the
critic's input (the batch's cin, or the observation without a centralized critic)."""

from __future__ import annotations

import dataclasses
import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from rook_env.agents.learned.model import ActorCritic  # noqa: E402
from rook_env.training.config import make_train_config  # noqa: E402
from rook_env.training.ppo import PPOSettings, make_optimizer, ppo_update  # noqa: E402

SMOKE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "configs", "smoke.yaml")
N, OBS, ACTIONS, CRITIC = 32, 10, 4, 14


def _batch(central: bool) -> dict:
    rng = np.random.default_rng(0)
    mask = rng.random((N, ACTIONS)) < 0.6
    mask[:, 0] = True
    act = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
    return {"obs": rng.normal(size=(N, OBS)).astype(np.float32), "mask": mask,
            "cin": rng.normal(size=(N, CRITIC)).astype(np.float32) if central else None,
            "act": act, "logp": np.full(N, -1.0, np.float32), "val": np.zeros(N, np.float32),
            "adv": rng.normal(size=N).astype(np.float32), "ret": rng.normal(size=N).astype(np.float32)}


def _steps(optimizer: torch.optim.Optimizer) -> int:
    return int(next(iter(optimizer.state.values()))["step"])


def test_the_update_reads_eight_fields_of_the_config():
    cfg = make_train_config(SMOKE, ["target_kl=0.5", "clip_vloss=false"])
    s = PPOSettings.of(cfg)
    assert [f.name for f in dataclasses.fields(s)] == ["update_epochs", "minibatch_size", "clip_coef", "vf_coef",
                                                       "clip_vloss", "norm_adv", "max_grad_norm", "target_kl"]
    assert (s.update_epochs, s.minibatch_size, s.target_kl, s.clip_vloss) == (4, 512, 0.5, False)


@pytest.mark.parametrize("central", [True, False])
def test_epochs_minibatches_and_the_critics_input(central):
    torch.manual_seed(0)
    model = ActorCritic(OBS, ACTIONS, [8], CRITIC if central else None)
    opt = make_optimizer(model, 1e-2)
    s = PPOSettings(update_epochs=3, minibatch_size=8, clip_coef=0.2, vf_coef=0.5, clip_vloss=True, norm_adv=True,
                    max_grad_norm=0.5, target_kl=0.0)
    before = [p.detach().clone() for p in model.critic.parameters()]
    logs = ppo_update(model, opt, _batch(central), s, ent_coef=0.01, generator=torch.Generator().manual_seed(0))
    assert _steps(opt) == 3 * (N // 8)  # every epoch, every minibatch
    assert set(logs) == {"loss", "pg_loss", "v_loss", "entropy", "approx_kl", "clipfrac"}
    assert all(np.isfinite(v) for v in logs.values())
    assert not all(torch.equal(a, b) for a, b in zip(before, model.critic.parameters()))  # the critic trained


def test_target_kl_stops_the_epochs_early():
    torch.manual_seed(0)
    model = ActorCritic(OBS, ACTIONS, [8], CRITIC)
    opt = make_optimizer(model, 1e-2)
    s = PPOSettings(update_epochs=3, minibatch_size=8, clip_coef=0.2, vf_coef=0.5, clip_vloss=True, norm_adv=True,
                    max_grad_norm=0.5, target_kl=1e-12)
    ppo_update(model, opt, _batch(True), s, ent_coef=0.0, generator=torch.Generator().manual_seed(0))
    assert _steps(opt) == N // 8  # the first epoch's steps moved the policy past the (tiny) target: one epoch

"""TorchRL PettingZooWrapper with action masks and a few PPO updates (one network for all seats)."""

import pytest

pytest.importorskip("torchrl")

import torch  # noqa: E402
from snippets import run_recipe  # noqa: E402


def test_readme_recipe_runs_masked_ppo_without_illegal_actions():
    ns = run_recipe("torchrl")  # raw_env: an illegal action would raise out of the collector
    P = ns["P"]
    batch = ns["batch"]  # the last batch of 256 env steps
    assert ns["collector"]._frames >= 768
    acting = batch.get((P, "mask"))
    assert acting.sum(-1).eq(1).all()  # exactly one seat acts per step
    actions = batch.get((P, "action"))
    masks = batch.get((P, "action_mask"))
    chosen = masks.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
    assert chosen[acting].all()  # the played action was legal for the seat to act
    for key in ("loss_objective", "loss_critic", "loss_entropy"):
        assert torch.isfinite(ns["losses"][key]).all()
    # every seat is paid at the end of a hand (its own reward in the group tensor)
    rew = batch.get(("next", P, "reward")).squeeze(-1)
    ends = batch.get(("next", "done")).squeeze(-1)
    if ends.any():
        paid = rew[ends]
        assert torch.all((paid != 0).sum(-1) % 4 == 0)
        assert torch.allclose(paid[:, 0], paid[:, 2]) and torch.allclose(paid[:, 0], -paid[:, 1])

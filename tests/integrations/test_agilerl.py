"""AgileRL's masked DQN in self-play on rook_env's AEC environment."""

import math

import pytest

pytest.importorskip("agilerl")

from snippets import run_recipe  # noqa: E402


def test_readme_recipe_trains_masked_dqn_and_pays_every_seat():
    ns = run_recipe("agilerl")  # raw_env: an illegal action would raise out of the loop
    memory, losses = ns["memory"], ns["losses"]
    assert losses and all(math.isfinite(x) for x in losses)
    data = memory.sample(len(memory))  # every stored transition (shuffled)
    done = data["done"].squeeze(-1).bool()
    assert int(done.sum()) == 4 * 12  # every seat's last decision of every hand closes its trajectory
    paid = data["reward"].squeeze(-1)[done]
    assert paid.abs().sum() > 0 and paid.sum().abs() < 1e-3  # zero-sum: both teams are paid
    assert int((data["reward"].squeeze(-1)[~done] != 0).sum()) == 0  # rewards only at the end of a hand

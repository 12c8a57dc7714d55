"""The partnership labels' branches leave out the opponent's work on the replayed prefix (and its answers that are
known: a network's forced move, the heuristic's last card), starting the heuristic from the trunk's card memory at
the decision; the values must be those of the straightforward replay, which asks the opponent at every turn of
every branch as the trunk does (rook_env.agents.learned.playout, ``prefix_turns``). Also the premise of
``at_least``: a network computes a row bitwise the same in every batch of ``MIN_ROWS`` rows or more."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rook_env.agents.learned import playout
from rook_env.agents.learned.model import load_checkpoint, model_from_checkpoint
from rook_env.training.labels import counterfactual
from rook_env.vector import RookVectorEnv

NETWORK = "rook_env/agents/checkpoints/ppo_default.pt"


@pytest.fixture(scope="module")
def model():
    torch.set_num_threads(1)  # as the label processes run
    return model_from_checkpoint(load_checkpoint(NETWORK), NETWORK).eval()


def labels(model, opponent: str, deals: int, seed: int, tables: int) -> dict[str, np.ndarray]:
    return counterfactual.label_deals("partnership", deals, seed, 0.3, network=model, tables=tables,
                                      opponent=counterfactual.opponent_agent(opponent, {}))


@pytest.mark.parametrize("opponent", ["heuristic", "ppo:networks/ppo_v5.pt"])
@pytest.mark.parametrize("deals,seed,tables", [(6, 11, 2048), (5, 12, 37)])
def test_branches_give_the_values_of_the_straightforward_replay(model, monkeypatch, opponent, deals, seed, tables):
    assert playout.prefix_turns(counterfactual.opponent_agent(opponent, {})) != "all"
    fast = labels(model, opponent, deals, seed, tables)
    monkeypatch.setattr(playout, "prefix_turns", lambda agent: "all")  # asked at every turn
    plain = labels(model, opponent, deals, seed, tables)
    assert len(fast["q"]) > 20 and np.isfinite(fast["q"]).sum() > 3 * len(fast["q"])
    assert fast.keys() == plain.keys()
    for key in fast:
        np.testing.assert_array_equal(fast[key], plain[key], err_msg=key)


def test_other_opponents_are_asked_at_every_turn():
    assert playout.prefix_turns(counterfactual.opponent_agent("random", {})) == "all"
    sampled = counterfactual.opponent_agent("ppo:networks/ppo_v5.pt", {})
    sampled.greedy = False
    assert playout.prefix_turns(sampled) == "all"


def test_at_least_keeps_a_pass_above_the_small_batch_sizes():
    every = np.arange(0, 100, 2)
    assert playout.at_least(np.array([], np.int64), every).size == 0  # nothing to ask: no pass
    got = playout.at_least(np.array([10, 40]), every, n=5)
    assert got.tolist() == [0, 2, 4, 10, 40]  # the rows asked, and others of the replay's pass
    assert playout.at_least(np.array([4]), np.array([2, 4, 6]), n=5).tolist() == [2, 4, 6]  # its pass
    rows = np.arange(0, 80, 2)
    assert playout.at_least(rows, every, n=5) is rows


def test_a_row_is_computed_alike_in_every_batch_of_min_rows_or_more(model):
    env = RookVectorEnv(512, backend="numba")
    env.reset(seed=3)
    rng = np.random.default_rng(0)
    obs = []
    for _ in range(40):
        obs.append(env.observation)
        mask = env.action_mask
        env.step(np.array([rng.choice(np.flatnonzero(m)) for m in mask]))
    x = torch.from_numpy(np.concatenate(obs)[::7].copy())
    with torch.inference_mode():
        whole = model.actor_logits(x)
        for size in (playout.MIN_ROWS, playout.MIN_ROWS + 5, 300):
            parts = torch.cat([model.actor_logits(x[lo:lo + size]) for lo in range(0, len(x), size)
                               if len(x) - lo >= playout.MIN_ROWS])
            assert torch.equal(parts, whole[:len(parts)]), size

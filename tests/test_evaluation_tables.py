"""The duplicate match on the batched engine (``play_match(..., engine="tables")``, ``evaluate.py --engine
tables``): every hand without a redeal is played exactly as the default engine plays it (same records), hands
with one are counted, identical teams cancel, PPOAgent.act_batch is act row by row, and bad input is named."""

from __future__ import annotations

import numpy as np
import pytest

from rook_env.agents.learned import PPOAgent
from rook_env.evaluation import play_match
from rook_env.evaluation.results import FIELD
from rook_env.vector import RookVectorEnv

# the shipped network against the heuristic: two deterministic agents, one of them with card memory
A, B = "ppo", "heuristic"


def test_hands_without_a_redeal_are_the_default_engines_hands():
    tables = play_match(A, B, deals=40, seed=77, engine="tables", block_size=25)
    env = play_match(A, B, deals=40, seed=77)
    assert tables.records.shape == env.records.shape
    np.testing.assert_array_equal(tables.records[:, :2], env.records[:, :2])  # deal by deal, seating 0 first
    redealt = tables.records[:, FIELD["redeals"]] > 0
    # the same hands are redealt (up to its first redeal a hand is the same in both engines)
    np.testing.assert_array_equal(redealt, env.records[:, FIELD["redeals"]] > 0)
    assert 0 < redealt.sum() and (~redealt).sum() > 60
    np.testing.assert_array_equal(tables.records[~redealt], env.records[~redealt])


def test_identical_teams_cancel_and_swapping_negates():
    same = play_match(B, B, deals=30, seed=5, engine="tables")
    np.testing.assert_array_equal(same.pair_values, np.zeros(30))
    ab = play_match(A, B, deals=30, seed=5, engine="tables")
    ba = play_match(B, A, deals=30, seed=5, engine="tables")
    np.testing.assert_allclose(ab.pair_values[ab.records[::2, FIELD["redeals"]] == 0],
                               -ba.pair_values[ab.records[::2, FIELD["redeals"]] == 0])


def test_ppo_act_batch_is_act_row_by_row():
    agent = PPOAgent.load()
    env = RookVectorEnv(64, backend="numba")
    env.reset(seed=3)
    for _ in range(30):
        obs, mask = env.observation, env.action_mask
        batch = agent.act_batch(obs, mask)
        rows = [agent.act({"observation": o, "action_mask": m}) for o, m in zip(obs, mask)]
        np.testing.assert_array_equal(batch, rows)
        env.step(batch)
    with pytest.raises(ValueError, match="empty action mask"):
        agent.act_batch(obs[:2], np.zeros_like(mask[:2]))


class ActOnly:
    """An agent without act_batch: the lowest legal action."""

    def act(self, observation, info=None) -> int:
        return int(np.flatnonzero(observation["action_mask"])[0])


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="engine must be 'env' or 'tables'"):
        play_match(A, B, deals=2, engine="batched")
    with pytest.raises(ValueError, match="game_scores needs engine='env'"):
        play_match(A, B, deals=2, engine="tables", game_scores=True)
    with pytest.raises(ValueError, match="needs agents that decide in batches"):
        play_match(lambda seed: ActOnly(), B, deals=2, engine="tables")


def test_cli_runs_the_tables_engine_and_refuses_what_it_cannot_do(tmp_path, capsys):
    from rook_env.cli.evaluate import main

    out = tmp_path / "m.json"
    assert main(["ppo", "heuristic", "--deals", "20", "--seed", "1", "--engine", "tables", "--no-progress",
                 "--json", str(out)]) == 0
    assert out.exists()
    with pytest.raises(SystemExit):
        main(["ppo", "heuristic", "--deals", "2", "--engine", "tables", "--game-scores"])
    assert "--game-scores is not available with --engine tables" in capsys.readouterr().err


def test_training_selection_on_the_tables_engine_is_the_tables_match():
    from rook_env.training import config, selection

    agent = PPOAgent.load()
    cfg = config.make_train_config("configs/smoke.yaml", ["eval_engine=tables"])
    got = selection.evaluate_policy(agent.model, "heuristic", 30, 11, cfg)
    want = play_match(lambda seed: PPOAgent(agent.model), "heuristic", deals=30, seed=11, engine="tables",
                      block_size=1000)
    assert got["deals"] == 30 and got["mean"] == pytest.approx(want.mean)


def test_random_act_batch_is_act_in_row_order():
    from rook_env.agents.random_agent import RandomAgent

    env = RookVectorEnv(16, backend="numba")
    env.reset(seed=2)
    a, b = RandomAgent(seed=4), RandomAgent(seed=4)
    batch = a.act_batch(env.observation, env.action_mask)
    rows = [b.act({"observation": o, "action_mask": m}) for o, m in zip(env.observation, env.action_mask)]
    np.testing.assert_array_equal(batch, rows)
    assert play_match("random", "heuristic", deals=5, seed=1, engine="tables").illegal_total == 0

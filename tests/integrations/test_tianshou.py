"""Tianshou 2.x multi-agent DQN on rook_env's AEC environment (one network for all seats)."""

import numpy as np
import pytest

pytest.importorskip("tianshou")

from snippets import run_recipe  # noqa: E402


@pytest.fixture(scope="module")
def trained():
    return run_recipe("tianshou")  # raw_env: an illegal action would raise out of collect()


def test_readme_recipe_collects_and_updates_without_illegal_actions(trained):
    buf = trained["collector"].buffer
    idx = buf.sample_indices(0)  # every stored transition, each sub-buffer in order
    n = idx.size
    assert n >= 1000  # 5 x 200 steps, every one a legal action (raw_env raises otherwise)
    data = buf[idx]
    masks = np.asarray(data.obs.mask, bool)
    assert masks[np.arange(n), data.act.astype(int)].all()  # each action was in its own mask
    assert set(trained["stats"].get_loss_stats_dict()) or trained["stats"].train_time > 0
    assert all(trained["algorithm"].get_algorithm(a) is trained["dqn"] for a in trained["env"].agents)


def test_tianshou_credits_the_hand_reward_only_to_the_last_seat(trained):
    """The library limitation README documents: per seat, the reward column at the seat's own steps."""
    buf = trained["collector"].buffer
    data = buf[buf.sample_indices(0)]
    agents = trained["env"].agents
    ends = np.flatnonzero(data.terminated)
    assert ends.size >= 4
    for i in ends:
        actor = agents.index(data.obs.agent_id[i])
        assert data.rew[i][actor] != 0 or data.rew[i].sum() == 0  # the last actor sees its reward
        assert np.count_nonzero(data.rew[i]) in (0, 4)  # the step's vector holds every seat's reward...
    own = np.array([data.rew[i][agents.index(data.obs.agent_id[i])] for i in range(len(data))])
    # ...but each seat is credited with its own column only at its own steps: exactly one nonzero per hand
    assert np.count_nonzero(own[~data.terminated]) == 0

"""sb3-contrib MaskablePPO on rook_env/RookSingleAgent-v0, with SB3's and Gymnasium's env checkers."""

import warnings

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import gymnasium  # noqa: E402
from snippets import run_recipe  # noqa: E402

import rook_env  # noqa: E402,F401
from rook_env.single_agent import SINGLE_AGENT_ID, SingleAgentRookEnv  # noqa: E402


def test_readme_recipe_trains_maskable_ppo_without_illegal_actions():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r".*\[rook_env\] illegal action")  # check_env's sampled actions
        ns = run_recipe("sb3")
    model = ns["model"]
    # illegal_action="raise": one illegal action would have raised out of learn()
    assert ns["env"].unwrapped.illegal_action == "raise"
    assert model.num_timesteps >= 512
    assert model._n_updates > 0  # PPO updates ran


def test_sb3_and_gymnasium_checkers_pass_on_variants():
    from gymnasium.utils.env_checker import check_env as gym_check
    from stable_baselines3.common.env_checker import check_env as sb3_check

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r".*\[rook_env\] illegal action")
        for env in (SingleAgentRookEnv("random", learner_seats=(1,), deck="full"),
                    gymnasium.make(SINGLE_AGENT_ID, opponents="random", episode="game", max_hands=3).unwrapped):
            sb3_check(env)
            gym_check(env)


def test_trained_policy_acts_legally_in_terminate_mode():
    from sb3_contrib import MaskablePPO

    env = gymnasium.make(SINGLE_AGENT_ID, opponents="random")
    model = MaskablePPO("MlpPolicy", env, n_steps=128, batch_size=64, policy_kwargs={"net_arch": [32]}, seed=1)
    model.learn(total_timesteps=128)
    for seed in range(5):
        obs, info = env.reset(seed=seed)
        done = False
        while not done:
            action, _ = model.predict(obs, action_masks=env.unwrapped.action_masks(), deterministic=True)
            assert info["action_mask"][int(action)] == 1
            obs, reward, term, trunc, info = env.step(int(action))
            assert "illegal_action" not in info
            done = term or trunc
        assert not np.any(info["action_mask"])

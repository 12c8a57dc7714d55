"""Card play by search in training (``play_by``): search plays the learner's cards, which are not recorded, so
PPO trains the auction for search's card play; evaluation plays search with the network as its base."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch

from rook_env import raw_env
from rook_env.agents.learned import PPOAgent
from rook_env.agents.learned.model import ActorCritic
from rook_env.agents.search import SearchAgent
from rook_env.training import collection, config, selection

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMOKE = os.path.join(ROOT, "configs", "smoke.yaml")
CP_SMOKE = os.path.join(ROOT, "configs", "call_partner_smoke.yaml")
PLAY_BY = "play_by=search[samples=4]"
PLAY = 3  # the partnership observation's phase one-hot: bid, discard, trump, play, over


def test_config_checks_the_spec_and_the_game():
    cfg = config.make_train_config(SMOKE, [PLAY_BY])
    assert cfg.play_by == "search[samples=4]"
    for path, override, words in [
        (SMOKE, "play_by=search:ppo", "without a base"),
        (SMOKE, "play_by=heuristic", "without a base"),
        (SMOKE, "play_by=search[samples=0]", "samples must be an integer"),
        (SMOKE, "play_by=search-bids[samples=4]", "without a base"),
        (CP_SMOKE, PLAY_BY, "search agent does not play game='call_partner'"),
    ]:
        with pytest.raises(ValueError, match=f"'play_by'.*{words}"):
            config.make_train_config(path, [override])


def test_search_plays_the_learners_cards_and_they_are_not_recorded(monkeypatch):
    cfg = config.make_train_config(SMOKE, [PLAY_BY, "num_envs=4", "rollout_decisions=60",
                                           "opponent_mix={self: 0.5, heuristic: 0.5}"])
    env = raw_env()
    sizes = env.observation_space("player_0")["observation"].shape[0], env.action_space("player_0").n
    col = collection.Collector(cfg, torch.device("cpu"), np.random.default_rng(0))
    assert isinstance(col.player, SearchAgent) and col.player.samples == 4
    rows = []
    real = col.player.act_batch

    def spy(obs, masks, keys=None):
        rows.append(obs[:, PLAY].copy())
        return real(obs, masks, keys=keys)

    monkeypatch.setattr(col.player, "act_batch", spy)
    model = ActorCritic(*sizes, cfg.hidden, env.state_space.shape[0])
    batch, stats = col.collect(model, 0.0)
    assert len(batch["act"]) >= 60
    assert not batch["obs"][:, PLAY].any()  # auction decisions only
    assert rows and all(r.all() for r in rows)  # search was asked for card play only
    assert sum(len(r) for r in rows) > len(batch["act"])  # 13 cards a seat against a few auction decisions
    assert np.abs(batch["ret"]).sum() > 0  # the hands' rewards reach the auction decisions


def test_evaluation_plays_search_on_top_of_the_network(monkeypatch):
    cfg = config.make_train_config(SMOKE, [PLAY_BY])
    net = PPOAgent(ActorCritic(10, 5, [4]))
    agent = config.play_by_agent(cfg.play_by, {}, seed=3, base=net)
    assert isinstance(agent, SearchAgent) and agent.base is net and agent.samples == 4
    env = raw_env()
    model = ActorCritic(env.observation_space("player_0")["observation"].shape[0], env.action_space("player_0").n,
                        [16], env.state_space.shape[0])
    made = []

    def spy(spec, flags, seed, base=None):
        made.append(config.play_by_agent(spec, flags, seed, base=base))
        return made[-1]

    monkeypatch.setattr(selection, "play_by_agent", spy)
    res = selection.evaluate_policy(model, "heuristic", 2, 5, cfg)
    assert res["deals"] == 2 and np.isfinite(res["mean"])
    assert made and all(isinstance(a.base, PPOAgent) and a.base.model is not model for a in made)  # a frozen copy
    assert sum(a._batched is not None or a.engine == "python" for a in made) >= 1

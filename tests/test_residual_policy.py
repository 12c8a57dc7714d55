"""A residual policy over the heuristic (``heuristic_prior`` > 0): the network's logits plus a bonus on the game's
heuristic's action. A fresh one plays exactly the heuristic; the hint reaches the collection, the update and the
agent; critic warm-up leaves the actor alone; the config refuses what records no hints; checkpoints keep the
prior and refuse a plain agent without one."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch

from rook_env.agents import make_agent
from rook_env.agents.learned import PPOAgent
from rook_env.agents.learned.agent import heuristic_prior_agent
from rook_env.agents.learned.model import ActorCritic, load_checkpoint, model_from_checkpoint, prior_logits
from rook_env.games.call_partner import raw_env as call_partner_raw_env
from rook_env.training import collection, config, loop

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMOKE = os.path.join(ROOT, "configs", "call_partner_smoke.yaml")
PARTNERSHIP_SMOKE = os.path.join(ROOT, "configs", "smoke.yaml")


def _sizes(players: int = 5) -> tuple[int, int, int]:
    env = call_partner_raw_env(players=players)
    return (env.observation_space("player_0")["observation"].shape[0], env.action_space("player_0").n,
            env.state_space.shape[0])


def test_prior_logits_adds_the_bonus_on_the_hint_only():
    logits = torch.randn(3, 6)
    hint = torch.tensor([0, 5, 2])
    assert torch.equal(prior_logits(logits, None, 0.0), logits)  # a plain network: nothing added, no hint needed
    out = prior_logits(logits, hint, 4.0)
    diff = out - logits
    assert torch.allclose(diff[torch.arange(3), hint], torch.full((3,), 4.0))
    diff[torch.arange(3), hint] = 0
    assert not diff.any()
    with pytest.raises(ValueError, match="heuristic_prior=4.*hint"):
        prior_logits(logits, None, 4.0)


def test_model_validates_and_records_the_prior():
    obs_dim, n_actions, _ = _sizes()
    plain = ActorCritic(obs_dim, n_actions, [16])
    assert "heuristic_prior" not in plain.kwargs()  # plain checkpoints are unchanged
    residual = ActorCritic(obs_dim, n_actions, [16], heuristic_prior=5.0)
    assert residual.kwargs()["heuristic_prior"] == 5.0
    for bad in (-1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="heuristic_prior must be a finite number >= 0"):
            ActorCritic(obs_dim, n_actions, [16], heuristic_prior=bad)
    with pytest.raises(ValueError, match="pass the game's heuristic as prior="):
        PPOAgent(residual)


def _play_hand(players: int, agent_for_seat, seed: int) -> list[int]:
    env = call_partner_raw_env(players=players)
    env.reset(seed=seed)
    actions = []
    for name in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        a = agent_for_seat(name).act(obs)
        actions.append(a)
        env.step(a)
    return actions


def test_a_fresh_residual_policy_plays_exactly_the_heuristic():
    torch.manual_seed(0)
    obs_dim, n_actions, _ = _sizes()
    model = ActorCritic(obs_dim, n_actions, [64, 64], heuristic_prior=5.0)
    agent = PPOAgent(model, prior=heuristic_prior_agent("call_partner", seed=3, players=5))
    heuristic = make_agent("call_partner_heuristic", seed=3, game="call_partner", players=5)
    for seed in range(3):  # every decision of whole hands: bids, discards, trump, Rook, call, play
        ours = _play_hand(5, lambda name: agent, seed)
        theirs = _play_hand(5, lambda name: heuristic, seed)
        assert ours == theirs and len(ours) > 50
    # the same network without the bonus is not the heuristic
    plain = PPOAgent(ActorCritic(obs_dim, n_actions, [64, 64]))
    assert _play_hand(5, lambda name: plain, 0) != _play_hand(5, lambda name: heuristic, 0)


def test_the_learned_logits_can_overrule_the_hint():
    obs_dim, n_actions, _ = _sizes()
    model = ActorCritic(obs_dim, n_actions, [8], heuristic_prior=2.0)
    env = call_partner_raw_env(players=5)
    env.reset(seed=1)
    obs = env.observe(env.agent_selection)
    legal = np.flatnonzero(obs["action_mask"])
    prior = heuristic_prior_agent("call_partner", seed=0, players=5)
    hint = prior.act(obs)
    other = int(next(a for a in legal if a != hint))
    with torch.no_grad():  # the last layer prefers ``other`` by 3 logits: more than the prior's 2
        last = model.actor[-1]
        last.weight.zero_()
        last.bias.zero_()
        last.bias[other] = 3.0
    agent = PPOAgent(model, prior=prior)
    assert agent.act(obs) == other
    probs = agent.action_probs(obs)
    assert probs[other] > probs[hint] > 0 and np.isclose(probs.sum(), 1.0, atol=1e-5)


def test_config_refuses_what_records_no_hints():
    cfg = config.make_train_config(SMOKE, ["heuristic_prior=3.0", "bc_steps=0"])
    assert cfg.heuristic_prior == 3.0
    for path, override, field in [(SMOKE, "bc_steps=5", "bc_steps"), (SMOKE, "league=[x.pt]", "league"),
                                  (PARTNERSHIP_SMOKE, "exit.source=online", "exit.source")]:
        overrides = ["heuristic_prior=3.0", "bc_steps=0", override]
        with pytest.raises(ValueError, match=f"'{field}'.*heuristic_prior > 0"):
            config.make_train_config(path, overrides)
    for bad in ("heuristic_prior=-1", "critic_warmup=-2"):
        with pytest.raises(ValueError, match="must be >= 0"):
            config.make_train_config(SMOKE, [bad])


@pytest.mark.parametrize("path,players", [(SMOKE, 5), (PARTNERSHIP_SMOKE, 4)])
def test_collection_records_the_heuristics_actions_as_hints(path, players):
    overrides = ["num_envs=4", "rollout_decisions=200", "heuristic_prior=50.0", "bc_steps=0",
                 "opponent_mix={self: 0.5, heuristic: 0.5}"]
    cfg = config.make_train_config(path, overrides)
    col = collection.Collector(cfg, torch.device("cpu"), np.random.default_rng(0))
    game_env = col.game.raw_env(**col.game.flags)
    obs_dim = game_env.observation_space("player_0")["observation"].shape[0]
    n_actions = game_env.action_space("player_0").n
    critic = game_env.state_space.shape[0] if cfg.central_critic else None
    model = ActorCritic(obs_dim, n_actions, cfg.hidden, critic, heuristic_prior=50.0)
    batch, _ = col.collect(model, 0.0)
    assert batch["hint"] is not None and len(batch["hint"]) == len(batch["act"]) >= 200
    legal = batch["mask"][np.arange(len(batch["hint"])), batch["hint"]]
    assert legal.all()  # every hint is a legal action of its decision
    # with a 50-logit bonus the sampled action is the hint (the policy is the heuristic)
    assert (batch["act"] == batch["hint"]).all()
    assert np.allclose(batch["logp"], 0.0, atol=1e-4)


def test_critic_warmup_trains_the_critic_alone(tmp_path):
    overrides = [f"run_dir={tmp_path}", "name=res", "bc_steps=0", "heuristic_prior=4.0", "critic_warmup=2",
                 "total_decisions=2500", "rollout_decisions=1200", "num_envs=8", "eval_every=0", "eval_deals=4",
                 "progress=false", "opponent_mix={self: 0.5, heuristic: 0.5}", "checkpoint_every=1"]
    cfg = config.make_train_config(SMOKE, overrides)
    torch.manual_seed(cfg.seed)
    summary = loop.train(cfg, quiet=True)
    assert summary["iterations"] == 2  # both inside the warm-up
    ckpt = load_checkpoint(summary["paths"]["last"])
    trained = model_from_checkpoint(ckpt)
    assert trained.heuristic_prior == 4.0
    # a fresh model of the same seed: the same actor (untouched), a different critic (trained)
    obs_dim, n_actions, critic = _sizes()
    from rook_env.training.checkpoints import seed_everything

    seed_everything(cfg.seed)
    fresh = ActorCritic(obs_dim, n_actions, cfg.hidden, critic, cfg.critic_hidden, heuristic_prior=4.0)
    for a, b in zip(trained.actor.state_dict().values(), fresh.actor.state_dict().values()):
        assert torch.equal(a, b)
    assert any(not torch.equal(a, b) for a, b in zip(trained.critic.state_dict().values(),
                                                    fresh.critic.state_dict().values()))
    # the agent written at the end loads with its prior and plays exactly the heuristic
    agent = make_agent(f"ppo:{summary['paths']['agent']}", seed=2, game="call_partner", players=5)
    heuristic = make_agent("call_partner_heuristic", seed=2, game="call_partner", players=5)
    assert agent.prior is not None
    assert _play_hand(5, lambda name: agent, 7) == _play_hand(5, lambda name: heuristic, 7)


def test_a_residual_checkpoint_is_refused_as_a_league_member(tmp_path):
    base = [f"run_dir={tmp_path}", "bc_steps=0", "total_decisions=600", "rollout_decisions=300", "num_envs=4",
            "eval_every=0", "eval_deals=2", "progress=false", "playoff_candidates=0"]
    cfg = config.make_train_config(SMOKE, [*base, "name=res", "heuristic_prior=2.0"])
    summary = loop.train(cfg, quiet=True)
    league = config.make_train_config(SMOKE, [*base, "name=plain", f"league=[{summary['paths']['agent']}]"])
    with pytest.raises(Exception, match="league member .* is a residual policy"):
        loop.train(league, quiet=True)

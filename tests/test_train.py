"""train.py: masked sampling, GAE / credit assignment and the PPO loss on hand-checked cases,
configs and their errors, checkpoints (corrupt ones too), and the smoke config end to end."""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest
import torch

import train
from rook_env.agents.ppo_agent import PPOAgent
from rook_env.agents.ppo_model import ActorCritic, CheckpointError, MaskedCategorical, load_checkpoint

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMOKE = os.path.join(ROOT, "configs", "smoke.yaml")


# ------------------------------------------------------------------------------ masked policy
def test_masked_sampling_never_picks_an_illegal_action():
    g = torch.Generator().manual_seed(0)
    B, A = 512, 58
    mask = torch.rand(B, A, generator=g) < 0.1
    mask[torch.arange(B), torch.randint(0, A, (B,), generator=g)] = True  # at least one legal action
    logits = torch.randn(B, A, generator=g) * 5
    logits[~mask] = 50.0  # illegal actions would dominate without the mask
    d = MaskedCategorical(logits, mask)
    for _ in range(40):
        a = d.sample(g)
        assert mask[torch.arange(B), a].all()
    assert (d.probs[~mask] == 0).all()
    assert torch.allclose(d.probs.sum(-1), torch.ones(B))
    assert torch.isfinite(d.entropy()).all() and torch.isfinite(d.log_prob(d.mode())).all()
    assert mask[torch.arange(B), d.mode()].all()


def test_masked_entropy_and_logprob_of_a_small_case():
    logits = torch.tensor([[0.0, 0.0, 123.0, 0.0]])
    mask = torch.tensor([[True, True, False, False]])
    d = MaskedCategorical(logits, mask)
    assert torch.allclose(d.probs, torch.tensor([[0.5, 0.5, 0.0, 0.0]]))
    assert math.isclose(d.entropy().item(), math.log(2), rel_tol=1e-6)
    assert math.isclose(d.log_prob(torch.tensor([1])).item(), math.log(0.5), rel_tol=1e-6)


def test_empty_mask_raises():
    with pytest.raises(ValueError, match="no legal action"):
        MaskedCategorical(torch.zeros(2, 3), torch.tensor([[True, False, False], [False, False, False]]))


def test_collected_actions_are_legal_and_forced_moves_skipped():
    cfg = train.make_train_config(SMOKE, ["num_envs=4", "rollout_decisions=200", "opponent_mix={self: 1}"])
    torch.manual_seed(0)
    model = ActorCritic(583, 58, cfg.hidden, 788)
    batch, stats = train.Collector(cfg, torch.device("cpu"), np.random.default_rng(0)).collect(model, 0.0)
    n = len(batch["act"])
    assert n >= 200 and stats["hands"] >= 4
    assert batch["mask"][np.arange(n), batch["act"]].all()
    assert (batch["mask"].sum(1) > 1).all()  # forced moves are not decisions
    assert batch["cin"].shape == (n, 788)


# ------------------------------------------------------------------------------ GAE, credit assignment
def test_compute_gae_hand_checked():
    adv, ret = train.compute_gae(np.array([0, 0, 1.0]), np.array([0.5, 0.6, 0.7]), np.array([0, 0, 1]),
                                 last_value=9.0, gamma=1.0, gae_lambda=0.5)
    # t=2: 1 - 0.7 = 0.3;  t=1: (0.7 - 0.6) + 0.5 * 0.3 = 0.25;  t=0: (0.6 - 0.5) + 0.5 * 0.25 = 0.225
    np.testing.assert_allclose(adv, [0.225, 0.25, 0.3], atol=1e-6)
    np.testing.assert_allclose(ret, [0.725, 0.85, 1.0], atol=1e-6)
    # gamma < 1, an episode boundary inside, and a bootstrap from last_value at the end
    adv, _ = train.compute_gae(np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.5, 0.2]), np.array([1, 0, 0]),
                               last_value=1.0, gamma=0.9, gae_lambda=1.0)
    # t=2: 0 + 0.9 * 1.0 - 0.2 = 0.7;  t=1: 0 + 0.9 * 0.2 - 0.5 + 0.9 * 0.7 = 0.31;  t=0: done: 1 - 0 = 1
    np.testing.assert_allclose(adv, [1.0, 0.31, 0.7], atol=1e-6)


def test_episode_advantages_keep_each_seat_to_its_own_decisions():
    # Two tricks' worth of decisions, seats interleaved; each seat's hand reward sits on its last decision.
    seats = [0, 1, 2, 3, 0, 1, 2, 3, 0]
    rewards = [0, 0, 0, 0, 0, -1.25, 1.25, -1.25, 1.25]
    values = [0.1, -0.2, 0.3, -0.4, 0.5, -0.6, 0.7, -0.8, 0.9]
    adv, ret = train.episode_advantages(seats, rewards, values, gamma=1.0, gae_lambda=1.0)
    # lambda = gamma = 1: every decision's return is its own seat's final reward
    np.testing.assert_allclose(ret, [1.25, -1.25, 1.25, -1.25, 1.25, -1.25, 1.25, -1.25, 1.25], atol=1e-6)
    np.testing.assert_allclose(adv, np.array(ret) - np.array(values), atol=1e-6)
    # lambda = 0: one-step TD between a seat's consecutive decisions only
    adv0, _ = train.episode_advantages(seats, rewards, values, gamma=1.0, gae_lambda=0.0)
    np.testing.assert_allclose(adv0[0], values[4] - values[0], atol=1e-6)  # seat 0 -> seat 0's next decision
    np.testing.assert_allclose(adv0[1], values[5] - values[1], atol=1e-6)
    np.testing.assert_allclose(adv0[8], 1.25 - values[8], atol=1e-6)
    # the other seats' values and rewards never reach seat 0
    values2 = list(values)
    rewards2 = list(rewards)
    for i, s in enumerate(seats):
        if s != 0:
            values2[i] += 10.0
            rewards2[i] -= 3.0
    adv2, _ = train.episode_advantages(seats, rewards2, values2, gamma=1.0, gae_lambda=0.7)
    adv1, _ = train.episode_advantages(seats, rewards, values, gamma=1.0, gae_lambda=0.7)
    idx0 = [i for i, s in enumerate(seats) if s == 0]
    np.testing.assert_allclose(adv2[idx0], adv1[idx0], atol=1e-6)


# ------------------------------------------------------------------------------ PPO loss
def test_ppo_loss_hand_checked():
    t = torch.tensor
    new_logp = t([math.log(1.5), math.log(0.5), math.log(0.5)])
    old_logp = t([0.0, 0.0, 0.0])
    adv = t([1.0, 1.0, -1.0])
    out = train.ppo_loss(new_logp, old_logp, adv, new_values=t([1.0, 0.0, 0.0]), old_values=t([0.0, 0.0, 0.0]),
                         returns=t([2.0, 0.0, 1.0]), entropy=t([0.3, 0.6, 0.9]), clip_coef=0.2, vf_coef=0.5,
                         ent_coef=0.1, clip_vloss=True, norm_adv=False)
    # ratios 1.5, 0.5, 0.5: max(-1.5, -1.2) = -1.2; max(-0.5, -0.8) = -0.5; max(0.5, 0.8) = 0.8
    assert math.isclose(out["pg_loss"].item(), (-1.2 - 0.5 + 0.8) / 3, rel_tol=1e-5)
    # value: unclipped (1, 0, 1); clipped prediction (0.2, 0, 0) -> (3.24, 0, 1); max -> mean 4.24 / 3, times 0.5
    assert math.isclose(out["v_loss"].item(), 0.5 * 4.24 / 3, rel_tol=1e-5)
    assert math.isclose(out["entropy"].item(), 0.6, rel_tol=1e-5)
    assert math.isclose(out["loss"].item(), (-0.9 / 3) - 0.1 * 0.6 + 0.5 * (0.5 * 4.24 / 3), rel_tol=1e-5)
    assert math.isclose(out["clipfrac"].item(), 1.0)
    kl = np.mean([(r - 1) - math.log(r) for r in (1.5, 0.5, 0.5)])
    assert math.isclose(out["approx_kl"].item(), kl, rel_tol=1e-5)
    # unclipped value loss; normalised advantages with ratio 1 give a zero policy loss
    out = train.ppo_loss(old_logp, old_logp, adv, t([1.0, 0.0, 0.0]), t([0.0, 0.0, 0.0]), t([2.0, 0.0, 1.0]),
                         t([0.0, 0.0, 0.0]), 0.2, 0.5, 0.0, clip_vloss=False, norm_adv=True)
    assert abs(out["pg_loss"].item()) < 1e-6
    assert math.isclose(out["v_loss"].item(), 0.5 * 2 / 3, rel_tol=1e-5)


# ------------------------------------------------------------------------------ configs
def test_config_files_load():
    for name in ("default", "smoke"):
        cfg = train.make_train_config(os.path.join(ROOT, "configs", f"{name}.yaml"))
        assert cfg.name == name


def test_overrides_from_the_command_line():
    args = train.parse_args(["--config", SMOKE, "--lr", "1e-4", "--set", "seed=3", "--opponent_mix.heuristic", "0.5",
                             "--hidden=[32, 32]", "--total-decisions", "1e5"])
    cfg = train.make_train_config(args.config, args.set)
    assert cfg.lr == 1e-4 and cfg.seed == 3 and cfg.opponent_mix["heuristic"] == 0.5
    assert cfg.hidden == [32, 32] and cfg.total_decisions == 100_000 and cfg.name == "smoke"


@pytest.mark.parametrize(
    "override, field",
    [("lrr=0.1", "lrr"), ("lr=fast", "lr"), ("lr=-1", "lr"), ("num_envs=0", "num_envs"),
     ("opponent_mix.experts=1", "opponent_mix"), ("env_flags.decks=full", "env_flags"),
     ("hidden=[]", "hidden"), ("central_critic=maybe", "central_critic")],
)
def test_bad_config_values_name_the_field(override, field):
    with pytest.raises(ValueError, match=field):
        train.make_train_config(SMOKE, [override])


def test_unknown_field_in_a_yaml_file(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text("name: x\nlearning_rate: 0.1\n")
    with pytest.raises(ValueError, match="unknown config field 'learning_rate'"):
        train.make_train_config(str(p))


def test_unknown_cli_field_exits_with_a_clear_message(capsys):
    with pytest.raises(SystemExit):
        train.parse_args(["--config", SMOKE, "--learning-rate", "0.1"])
    assert "unknown config field 'learning_rate'" in capsys.readouterr().err
    assert train.main(["--config", SMOKE, "--set", "epochs=3"]) == 2
    assert "unknown config field 'epochs'" in capsys.readouterr().err


# ------------------------------------------------------------------------------ checkpoints
def test_corrupt_or_incompatible_checkpoints_give_clear_errors(tmp_path, capsys):
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"this is not a checkpoint" * 10)
    with pytest.raises(CheckpointError, match="not a readable rook_env PPO checkpoint"):
        load_checkpoint(str(junk))
    with pytest.raises(CheckpointError, match="not a readable"):
        PPOAgent.load(str(junk))
    with pytest.raises(CheckpointError, match="does not exist"):
        PPOAgent.load(str(tmp_path / "missing.pt"))
    other = tmp_path / "other.pt"
    torch.save({"weights": torch.zeros(3)}, other)
    with pytest.raises(CheckpointError, match="not a rook_env PPO checkpoint"):
        load_checkpoint(str(other))
    partial = tmp_path / "partial.pt"
    torch.save({"format": "rook_env.ppo", "format_version": 1, "model": {}}, partial)
    with pytest.raises(CheckpointError, match="missing key.*model_kwargs"):
        load_checkpoint(str(partial))
    # a checkpoint for another observation size
    m = ActorCritic(100, 58, [8])
    wrong = tmp_path / "wrong.pt"
    torch.save({"format": "rook_env.ppo", "format_version": 1, "model_kwargs": m.kwargs(), "model": m.state_dict(),
                "env_flags": {}}, wrong)
    with pytest.raises(CheckpointError, match="observations of size 100.*583"):
        PPOAgent.load(str(wrong))
    # train.py --resume with a corrupt file: exit code 2 and the reason
    assert train.main(["--config", SMOKE, "--resume", str(junk)]) == 2
    assert "not a readable rook_env PPO checkpoint" in capsys.readouterr().err


# ------------------------------------------------------------------------------ end to end
def _tiny(tmp_path, name, *extra):
    return train.make_train_config(SMOKE, [f"run_dir={tmp_path}", f"name={name}", "progress=false", "bc_steps=10",
                                           "bc_hands=4", "eval_deals=4", "eval_every=0", "rollout_decisions=1024",
                                           "checkpoint_every=1", *extra])


def test_resume_continues_exactly(tmp_path):
    straight = train.train(_tiny(tmp_path, "straight", "total_decisions=3000"), quiet=True)
    assert straight["iterations"] >= 3
    cut = train.train(_tiny(tmp_path, "cut", "total_decisions=1000"), quiet=True)
    assert cut["iterations"] == 1
    cfg = _tiny(tmp_path, "cut", "total_decisions=3000")
    resumed = train.train(cfg, resume=os.path.join(tmp_path, "cut", "last.pt"), quiet=True)
    assert resumed["iterations"] == straight["iterations"]
    assert resumed["decisions"] == straight["decisions"]
    a = torch.load(os.path.join(tmp_path, "straight", "last.pt"), weights_only=True)
    b = torch.load(os.path.join(tmp_path, "cut", "last.pt"), weights_only=True)
    for k in a["model"]:
        assert torch.equal(a["model"][k], b["model"][k]), k


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs")
    cfg = train.make_train_config(SMOKE, [f"run_dir={out}", "progress=false"])
    return train.train(cfg, quiet=True)


def test_smoke_config_trains_end_to_end(smoke_run):
    s = smoke_run
    for k in ("last", "best", "agent", "curve"):
        assert os.path.isfile(s["paths"][k]), k
    run_dir = os.path.dirname(s["paths"]["last"])
    assert any(f.startswith("events.out.tfevents") for f in os.listdir(run_dir))
    with open(os.path.join(run_dir, "summary.json")) as fh:
        assert json.load(fh)["decisions"] == s["decisions"] >= 20000
    last = load_checkpoint(s["paths"]["last"])
    for k in ("model", "optimizer", "config", "rng", "iteration", "decisions", "pool"):
        assert k in last, k
    agent = load_checkpoint(s["paths"]["agent"])
    assert "optimizer" not in agent
    ppo = PPOAgent.load(s["paths"]["agent"])
    from rook_env import raw_env

    env = raw_env()
    env.reset(seed=3)
    while not all(env.terminations.values()):
        ob = env.observe(env.agent_selection)
        a = ppo.act(ob)
        assert ob["action_mask"][a]
        env.step(a)


def test_smoke_training_improves_over_the_untrained_policy(smoke_run):
    trained = PPOAgent.load(smoke_run["paths"]["agent"]).model
    cfg = train.make_train_config(SMOKE)
    torch.manual_seed(cfg.seed)
    untrained = ActorCritic(583, 58, cfg.hidden, 788)
    deals, seed = 100, 777_000
    r_trained = train.evaluate_policy(trained, "random", deals, seed, cfg)
    r_untrained = train.evaluate_policy(untrained, "random", deals, seed, cfg)
    # Measured: trained about +160, untrained policies between -50 and +60 points per deal.
    assert r_trained["mean"] > 120
    assert r_trained["mean"] > r_untrained["mean"] + 50
    assert r_trained["ci95"][0] > r_untrained["ci95"][1]


def test_ship_copies_the_model_and_writes_a_held_out_evaluation(smoke_run, tmp_path):
    run_dir = os.path.dirname(smoke_run["paths"]["agent"])
    dest = str(tmp_path / "shipped")
    info = train.ship(run_dir, dest, deals=6, seed=99)
    assert os.path.isfile(dest + ".pt") and info["size_bytes"] < 5_000_000
    with open(dest + ".json") as fh:
        data = json.load(fh)
    assert set(data["held_out_eval"]) == {"random", "heuristic"}
    assert data["seed"] == 1 and "machine" in data["training"]
    from rook_env.agents import make_agent

    assert make_agent(dest + ".pt").greedy


def test_heuristic_falls_back_to_random_with_a_warning_while_missing(monkeypatch):
    from rook_env.agents.random_agent import RandomAgent

    monkeypatch.setattr(train, "heuristic_available", lambda: False)
    monkeypatch.setattr(train, "_warned_heuristic", False)
    with pytest.warns(UserWarning, match="fall back to random"):
        agent = train.make_scripted("heuristic", 0, {})
    assert isinstance(agent, RandomAgent)

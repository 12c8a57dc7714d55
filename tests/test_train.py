"""rook_env.training (train.py): masked sampling, GAE / credit assignment and the PPO loss on hand-checked cases,
configs and their errors, checkpoints (corrupt ones too), run folders, Ctrl-C, resumes (bit-exact,
TensorBoard steps not duplicated), the smoke config end to end, and tools/ship.py."""

from __future__ import annotations

import importlib.util
import json
import math
import os

import numpy as np
import pytest
import torch

from rook_env.training import behaviour_cloning, cli, collection, config, loop, ppo, reporting, selection
from rook_env.agents.learned import DEFAULT_CHECKPOINT, PPOAgent
from rook_env.agents.learned.model import (ActorCritic, CheckpointError, MaskedCategorical, load_checkpoint,
                                       model_from_checkpoint)
from torch import nn

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
    cfg = config.make_train_config(SMOKE, ["num_envs=4", "rollout_decisions=200", "opponent_mix={self: 1}"])
    torch.manual_seed(0)
    model = ActorCritic(583, 58, cfg.hidden, 788)
    batch, stats = collection.Collector(cfg, torch.device("cpu"), np.random.default_rng(0)).collect(model, 0.0)
    n = len(batch["act"])
    assert n >= 200 and stats["hands"] >= 4
    assert batch["mask"][np.arange(n), batch["act"]].all()
    assert (batch["mask"].sum(1) > 1).all()  # forced moves are not decisions
    assert batch["cin"].shape == (n, 788)


def _collector(*overrides, pool=True, seed=0):
    cfg = config.make_train_config(SMOKE, ["num_envs=8", "rollout_decisions=300", *overrides])
    torch.manual_seed(seed)
    model = ActorCritic(583, 58, cfg.hidden, 788)
    col = collection.Collector(cfg, torch.device("cpu"), np.random.default_rng(seed))
    if pool:
        col.pool.append(ActorCritic(583, 58, cfg.hidden, 788).actor.eval())
    return cfg, model, col


def test_collected_batch_has_the_old_layout_for_every_opponent_kind():
    cfg, model, col = _collector("opponent_mix={self: 1, pool: 1, heuristic: 1, random: 1}")
    batch, stats = col.collect(model, 0.0)
    n = len(batch["act"])
    assert n >= 300 and stats["hands"] >= 8
    expected = {"obs": ((n, 583), np.float32), "mask": ((n, 58), np.bool_), "cin": ((n, 788), np.float32),
                "act": ((n,), np.int64), "logp": ((n,), np.float32), "val": ((n,), np.float32),
                "adv": ((n,), np.float32), "ret": ((n,), np.float32)}
    for k, (shape, dtype) in expected.items():
        assert batch[k].shape == shape and batch[k].dtype == dtype, k
    assert batch["mask"][np.arange(n), batch["act"]].all()  # every stored action was legal
    assert (batch["mask"].sum(1) > 1).all()  # forced moves are not decisions
    np.testing.assert_array_equal(batch["cin"][:, :583], batch["obs"])  # state_for starts with the observation
    assert (batch["logp"] <= 0).all() and np.isfinite(batch["adv"]).all()
    assert all(stats["returns"][k] for k in config.OPPONENT_KINDS), {k: len(v) for k, v in stats["returns"].items()}
    assert sum(len(v) for v in stats["returns"].values()) == stats["hands"]
    assert min(stats[k] for k in ("t_env", "t_opp", "t_net")) > 0
    cfg, _, col = _collector("central_critic=false")
    batch, _ = col.collect(ActorCritic(583, 58, cfg.hidden), 0.0)
    assert batch["cin"] is None and batch["obs"].shape[0] >= 300


def test_opponent_kinds_learning_teams_and_snapshots_are_drawn_in_proportion():
    cfg, model, col = _collector("opponent_mix={self: 0.4, pool: 0.2, heuristic: 0.3, random: 0.1}")
    col.pool.append(col.pool[0])
    rows = np.arange(cfg.num_envs)
    kinds, teams, snaps = [], [], []
    col._episodes = 0
    p = np.array([config.mix_at(cfg, 0.0)[k] for k in config.OPPONENT_KINDS])
    for _ in range(2500):  # 20,000 episodes
        col._new_episodes(rows, p)
        kinds.append(col.kind.copy()), teams.append(col.team.copy()), snaps.append(col.snap.copy())
    kinds, teams, snaps = np.concatenate(kinds), np.concatenate(teams), np.concatenate(snaps)
    freq = np.bincount(kinds, minlength=4) / len(kinds)
    np.testing.assert_allclose(freq, [0.4, 0.2, 0.3, 0.1], atol=0.015)  # 4.5 standard errors
    assert (teams[kinds == collection.SELF] == -1).all()
    assert abs(np.mean(teams[kinds != collection.SELF]) - 0.5) < 0.015
    assert abs(np.mean(snaps[kinds == collection.POOL]) - 0.5) < 0.03
    assert len(np.unique(col.episode)) == cfg.num_envs and col._episodes == 20000
    # without snapshots, pool games are self-play; the mix moves with the training progress
    cfg, model, col = _collector("opponent_mix={pool: 1}", "opponent_mix_end={random: 1}", pool=False)
    col._episodes = 0
    col._new_episodes(rows, np.array([config.mix_at(cfg, 0.0)[k] for k in config.OPPONENT_KINDS]))
    assert (col.kind == collection.SELF).all()
    _, stats = col.collect(model, 1.0)
    assert stats["hands"] == len(stats["returns"]["random"]) > 0


class CountingActor(torch.nn.Module):
    """A league member that always plays its first legal action and counts the rows it decided."""

    def __init__(self) -> None:
        super().__init__()
        self.rows = 0

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        self.rows += len(obs)
        return torch.zeros(len(obs), 58)


def test_league_members_play_pool_games_beside_the_snapshots():
    # only league members: pool games stay pool games (not self-play) and the league actor decides
    cfg, model, col = _collector("opponent_mix={pool: 1}", pool=False)
    member = CountingActor()
    col.league.append(member)
    rows = np.arange(cfg.num_envs)
    col._episodes = 0
    col._new_episodes(rows, np.array([0.0, 1.0, 0.0, 0.0]))
    assert (col.kind == collection.POOL).all() and (col.snap == 0).all()
    batch, stats = col.collect(model, 0.0)
    assert member.rows > 0 and len(stats["returns"]["pool"]) > 0
    # league + one snapshot: both are drawn, league members first
    cfg, model, col = _collector("opponent_mix={pool: 1}")
    col.league.append(CountingActor())
    col._episodes = 0
    snaps = []
    for _ in range(200):
        col._new_episodes(rows, np.array([0.0, 1.0, 0.0, 0.0]))
        snaps.append(col.snap.copy())
    assert abs(np.mean(np.concatenate(snaps)) - 0.5) < 0.05


def test_collect_is_deterministic_for_a_seed_and_draws_fresh_tables_every_call():
    first = [_collector(seed=3)[2 - i] for i in (1, 0)]  # (model, collector)
    second = [_collector(seed=3)[2 - i] for i in (1, 0)]
    torch.manual_seed(5)
    a, sa = first[1].collect(first[0], 0.3)
    torch.manual_seed(5)
    b, sb = second[1].collect(second[0], 0.3)
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)
    assert sa["returns"] == sb["returns"]
    # the next call starts new tables from the advanced generators; restoring them (as the Ctrl-C
    # rollback does) repeats that call exactly, whatever the collector played before
    state, torch_state = first[1].rng.bit_generator.state, first[1].gen.get_state()
    c, _ = first[1].collect(first[0], 0.3)
    assert len(c["act"]) != len(a["act"]) or not np.array_equal(c["obs"], a["obs"])
    first[1].rng.bit_generator.state = state
    first[1].gen.set_state(torch_state)
    d, _ = first[1].collect(first[0], 0.3)
    for k in c:
        np.testing.assert_array_equal(c[k], d[k], err_msg=k)


def test_rewards_are_credited_to_the_seats_that_earned_them():
    """Replay every table's episodes, from the deals and all actions the collector played, in raw_env:
    the learner decisions, their masks and actions, and (gamma = lambda = 1) each decision's return =
    its own seat's hand reward, match the batch row for row (rows found by their observation)."""
    from rook_env import raw_env
    from rook_env.games.partnership.env import AGENT_SEAT

    cfg, model, col = _collector("opponent_mix={self: 1, pool: 1, heuristic: 1, random: 1}", "gamma=1.0",
                                 "gae_lambda=1.0", "reward_scale=0.01")
    env, n_cards = col.env, 57
    log = {"deals": [[] for _ in range(cfg.num_envs)], "steps": []}

    def deals_now(rows):
        for t in rows:
            hands = [[c for c in range(n_cards) if int(env.hands[t, s]) >> c & 1] for s in range(4)]
            nest = [c for c in range(n_cards) if int(env.nest[t]) >> c & 1]
            log["deals"][t].append({"hands": hands, "nest": nest, "dealer": int(env.dealer[t])})

    real_reset, real_step = env.reset, env.step

    def reset(*args, **kwargs):
        out = real_reset(*args, **kwargs)
        deals_now(range(cfg.num_envs))
        return out

    def step(actions):
        learner = col.active & ((col.kind == collection.SELF) | ((env.current_player & 1) == col.team))
        log["steps"].append((np.array(actions), env.current_player, learner, col.active.copy()))
        out = real_step(actions)
        deals_now(np.flatnonzero(out[2] | out[3]))
        return out

    env.reset, env.step = reset, step
    batch, stats = col.collect(model, 0.0)
    rows = {batch["obs"][i].tobytes(): i for i in range(len(batch["act"]))}
    assert len(rows) == len(batch["act"])  # observations identify decisions
    matched, episodes, raw = 0, 0, raw_env()
    for t in range(cfg.num_envs):
        k = 0  # this table's step index
        for deal in log["deals"][t]:
            if k == len(log["steps"]) or not log["steps"][k][3][t]:
                break  # played out after the rollout was full: not collected
            raw.reset(options=deal)
            learned = []
            got = np.zeros(4)
            while not all(raw.terminations.values()):
                actions, seats, learner, _ = log["steps"][k]
                agent = raw.agent_selection
                assert AGENT_SEAT[agent] == seats[t]
                ob = raw.observe(agent)
                if learner[t] and ob["action_mask"].sum() > 1:
                    learned.append((ob, int(actions[t]), seats[t]))
                raw.step(int(actions[t]))
                for ag, r in raw.rewards.items():
                    got[AGENT_SEAT[ag]] += r
                k += 1
            episodes += 1
            for ob, a, s in learned:
                i = rows[ob["observation"].astype(np.float32).tobytes()]
                np.testing.assert_array_equal(batch["mask"][i], ob["action_mask"].astype(bool))
                assert batch["act"][i] == a
                assert batch["ret"][i] == pytest.approx(0.01 * got[s], abs=1e-5)
                matched += 1
            assert got.any()  # score_diff: a hand pays every seat (never all zero with the default rules)
    assert episodes == stats["hands"] and matched == len(batch["act"])


def test_trajectory_advantages_equal_compute_gae_per_trajectory():
    rng = np.random.default_rng(0)
    traj = rng.integers(0, 40, 600)  # interleaved trajectories, each in order
    rewards, values = rng.normal(size=600), rng.normal(size=600)
    adv, ret = ppo.trajectory_advantages(traj, rewards, values, gamma=0.97, gae_lambda=0.9)
    for t in np.unique(traj):
        i = np.flatnonzero(traj == t)
        dones = np.zeros(len(i))
        dones[-1] = 1
        a, r = ppo.compute_gae(rewards[i], values[i], dones, 0.0, 0.97, 0.9)
        np.testing.assert_allclose(adv[i], a, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(ret[i], r, rtol=1e-4, atol=1e-5)
    assert ppo.trajectory_advantages(np.zeros(0, np.int64), [], [], 1.0, 0.95)[0].shape == (0,)


def test_heuristic_games_for_behaviour_cloning():
    cfg = config.make_train_config(SMOKE, ["num_envs=8", "bc_hands=20"])
    seen = []
    data = behaviour_cloning.heuristic_games(cfg, np.random.default_rng(0), lambda what, done, total: seen.append((done, total)))
    assert seen == [(k, 20) for k in range(1, 21)]
    n = len(data["act"])
    assert sorted(np.unique(data["episode"])) == list(range(20)) and n > 20 * 30
    assert data["mask"][np.arange(n), data["act"]].all() and (data["mask"].sum(1) > 1).all()
    np.testing.assert_array_equal(data["cin"][:, :583], data["obs"])
    for e in range(20):  # score_diff: partners share a return, the other team's is its negative
        ret = {int(s): r for s, r in zip(data["seat"][data["episode"] == e], data["ret"][data["episode"] == e])}
        assert len(ret) == 4 and ret[0] == ret[2] == -ret[1] == -ret[3] != 0
    again = behaviour_cloning.heuristic_games(cfg, np.random.default_rng(0), lambda *a: None)
    for k in data:
        np.testing.assert_array_equal(data[k], again[k], err_msg=k)


def test_heuristic_games_in_float16_are_the_float32_games_rounded():
    cfg = config.make_train_config(SMOKE, ["num_envs=8", "bc_hands=6"])
    full = behaviour_cloning.heuristic_games(cfg, np.random.default_rng(3), lambda *a: None)
    cfg.bc_dtype = "float16"
    half = behaviour_cloning.heuristic_games(cfg, np.random.default_rng(3), lambda *a: None)
    assert half["obs"].dtype == half["cin"].dtype == np.float16
    for k in ("act", "mask", "seat", "episode", "ret"):
        np.testing.assert_array_equal(half[k], full[k], err_msg=k)
    for k in ("obs", "cin"):  # the same inputs to within float16's rounding of multiples of 1/40
        np.testing.assert_allclose(half[k].astype(np.float32), full[k], atol=2.5e-4, err_msg=k)
        assert ((half[k] != 0) == (full[k] != 0)).all()


def test_behaviour_clone_keeps_the_weights_of_the_best_held_out_accuracy():
    cfg = config.make_train_config(SMOKE, ["num_envs=8", "bc_hands=20", "bc_steps=12", "bc_eval_every=3",
                                           "bc_batch=64", "bc_lr=0.01", "hidden=[32]", "bc_dtype=float16"])
    torch.manual_seed(2)
    model = ActorCritic(583, 58, cfg.hidden, 788)
    res = behaviour_cloning.behaviour_clone(model, cfg, torch.device("cpu"), np.random.default_rng(2), lambda *a: None)
    steps, accs = zip(*res["held_out_curve"])
    assert steps == (3, 6, 9, 12)
    best = int(np.argmax(accs))
    assert accs[-1] < accs[best]  # this seed's last step is worse: the kept weights are an earlier step's
    assert res["kept_step"] == steps[best]
    # measured on the model as it ends: it holds the kept step's weights
    assert res["held_out_accuracy"]["all"] == pytest.approx(accs[best], abs=1e-4)


# ------------------------------------------------------------------------------ GAE, credit assignment
def test_compute_gae_hand_checked():
    adv, ret = ppo.compute_gae(np.array([0, 0, 1.0]), np.array([0.5, 0.6, 0.7]), np.array([0, 0, 1]),
                                 last_value=9.0, gamma=1.0, gae_lambda=0.5)
    # t=2: 1 - 0.7 = 0.3;  t=1: (0.7 - 0.6) + 0.5 * 0.3 = 0.25;  t=0: (0.6 - 0.5) + 0.5 * 0.25 = 0.225
    np.testing.assert_allclose(adv, [0.225, 0.25, 0.3], atol=1e-6)
    np.testing.assert_allclose(ret, [0.725, 0.85, 1.0], atol=1e-6)
    # gamma < 1, an episode boundary inside, and a bootstrap from last_value at the end
    adv, _ = ppo.compute_gae(np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.5, 0.2]), np.array([1, 0, 0]),
                               last_value=1.0, gamma=0.9, gae_lambda=1.0)
    # t=2: 0 + 0.9 * 1.0 - 0.2 = 0.7;  t=1: 0 + 0.9 * 0.2 - 0.5 + 0.9 * 0.7 = 0.31;  t=0: done: 1 - 0 = 1
    np.testing.assert_allclose(adv, [1.0, 0.31, 0.7], atol=1e-6)


def test_episode_advantages_keep_each_seat_to_its_own_decisions():
    # Two tricks' worth of decisions, seats interleaved; each seat's hand reward sits on its last decision.
    seats = [0, 1, 2, 3, 0, 1, 2, 3, 0]
    rewards = [0, 0, 0, 0, 0, -1.25, 1.25, -1.25, 1.25]
    values = [0.1, -0.2, 0.3, -0.4, 0.5, -0.6, 0.7, -0.8, 0.9]
    adv, ret = ppo.episode_advantages(seats, rewards, values, gamma=1.0, gae_lambda=1.0)
    # lambda = gamma = 1: every decision's return is its own seat's final reward
    np.testing.assert_allclose(ret, [1.25, -1.25, 1.25, -1.25, 1.25, -1.25, 1.25, -1.25, 1.25], atol=1e-6)
    np.testing.assert_allclose(adv, np.array(ret) - np.array(values), atol=1e-6)
    # lambda = 0: one-step TD between a seat's consecutive decisions only
    adv0, _ = ppo.episode_advantages(seats, rewards, values, gamma=1.0, gae_lambda=0.0)
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
    adv2, _ = ppo.episode_advantages(seats, rewards2, values2, gamma=1.0, gae_lambda=0.7)
    adv1, _ = ppo.episode_advantages(seats, rewards, values, gamma=1.0, gae_lambda=0.7)
    idx0 = [i for i, s in enumerate(seats) if s == 0]
    np.testing.assert_allclose(adv2[idx0], adv1[idx0], atol=1e-6)


# ------------------------------------------------------------------------------ PPO loss
def test_ppo_loss_hand_checked():
    t = torch.tensor
    new_logp = t([math.log(1.5), math.log(0.5), math.log(0.5)])
    old_logp = t([0.0, 0.0, 0.0])
    adv = t([1.0, 1.0, -1.0])
    out = ppo.ppo_loss(new_logp, old_logp, adv, new_values=t([1.0, 0.0, 0.0]), old_values=t([0.0, 0.0, 0.0]),
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
    out = ppo.ppo_loss(old_logp, old_logp, adv, t([1.0, 0.0, 0.0]), t([0.0, 0.0, 0.0]), t([2.0, 0.0, 1.0]),
                         t([0.0, 0.0, 0.0]), 0.2, 0.5, 0.0, clip_vloss=False, norm_adv=True)
    assert abs(out["pg_loss"].item()) < 1e-6
    assert math.isclose(out["v_loss"].item(), 0.5 * 2 / 3, rel_tol=1e-5)


# ------------------------------------------------------------------------------ configs
def test_config_files_load():
    for name in ("default", "ppo", "smoke"):
        cfg = config.make_train_config(os.path.join(ROOT, "configs", f"{name}.yaml"))
        assert cfg.name == name
        # the default run improves the shipped network by rounds of labels; ppo and smoke are PPO runs
        assert cfg.algorithm == ("label_rounds" if name == "default" else "ppo")


def test_overrides_from_the_command_line():
    args = cli.parse_args(["--config", SMOKE, "--lr", "1e-4", "--set", "seed=3", "--opponent_mix.heuristic", "0.5",
                             "--hidden=[32, 32]", "--total-decisions", "100_000"])
    cfg = config.make_train_config(args.config, args.set)
    assert cfg.lr == 1e-4 and cfg.seed == 3 and cfg.opponent_mix["heuristic"] == 0.5
    assert cfg.hidden == [32, 32] and cfg.total_decisions == 100_000 and cfg.name == "smoke"
    assert cfg.opponent_mix == {"self": 0.4, "pool": 0.1, "heuristic": 0.5, "random": 0.3}  # one entry changed


def test_a_whole_mapping_replaces_the_field(tmp_path):
    cfg = config.make_train_config(SMOKE, ["opponent_mix={self: 1}"])
    assert cfg.opponent_mix == {"self": 1.0}
    p = tmp_path / "mix.yaml"
    p.write_text("opponent_mix: {heuristic: 1}\nenv_flags: {deck: full}\n")
    cfg = config.make_train_config(str(p))
    assert cfg.opponent_mix == {"heuristic": 1.0} and cfg.env_flags == {"deck": "full"}


@pytest.mark.parametrize(
    "override, field",
    [("lrr=0.1", "lrr"), ("lr=fast", "lr"), ("lr=-1", "lr"), ("num_envs=0", "num_envs"),
     ("opponent_mix.experts=1", "opponent_mix"), ("env_flags.decks=full", "env_flags"),
     ("hidden=[]", "hidden"), ("central_critic=maybe", "central_critic"), ("lr=.inf", "lr"), ("lr=.nan", "lr"),
     ("gamma=1.5", "gamma"), ("bc_batch=-1", "bc_batch"), ("hidden=[64, -1]", "hidden"), ("hidden=[a]", "hidden"),
     ("critic_hidden=[0]", "critic_hidden"),
     ("grad_precision=half", "grad_precision"),
     ("hidden.x=1", "hidden"), ("opponent_mix.self=.inf", "opponent_mix"), ("opponent_mix.self=-1", "opponent_mix"),
     ("total_decisions=2.5", "total_decisions"), ("name=", "name"), ("name=a/b", "name"), ("seed=-1", "seed"),
     ("max_minutes=.inf", "max_minutes"), ("reward_scale=0", "reward_scale"), ("eval_opponents=[]", "eval_opponents"),
     ("device=tpu", "device"), ("select_by=best", "select_by"), ("select_by=search", "select_by"),
     ("eval_opponents=[heuristic, heuristic]", "eval_opponents"), ("eval_opponents=[expert]", "eval_opponents"),
     ("league=[runs/x/agent]", "league"), ("game=call_partner eval_opponents=[search]", "eval_opponents"),
     ("playoff_deals=0", "playoff_deals"), ("playoff_candidates=-1", "playoff_candidates"),
     ("playoff_candidates=2 playoff_seed=1000", "playoff_seed"), ("bc_dtype=int8", "bc_dtype"),
     ("bc_eval_every=-1", "bc_eval_every"), ("eval_engine=batched", "eval_engine"),
     ("game=call_partner eval_engine=tables", "eval_engine"), ("env_flags.episode=game eval_engine=tables", "eval_engine")],
)
def test_bad_config_values_name_the_field(override, field):
    with pytest.raises(ValueError, match=field):
        config.make_train_config(SMOKE, override.split(" "))


def test_unknown_field_in_a_yaml_file(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text("name: x\nlearning_rate: 0.1\n")
    with pytest.raises(ValueError, match="unknown config field 'learning_rate'"):
        config.make_train_config(str(p))


def test_unknown_cli_field_exits_with_a_clear_message(capsys):
    assert cli.main(["--config", SMOKE, "--learning-rate", "0.1"]) == 2
    assert "unknown config field 'learning_rate'" in capsys.readouterr().err
    assert cli.main(["--config", SMOKE, "--set", "epochs=3"]) == 2
    assert "unknown config field 'epochs'" in capsys.readouterr().err


def test_bad_values_in_a_yaml_file_name_the_field_and_the_file(tmp_path):
    p = tmp_path / "inf.yaml"
    p.write_text("name: x\nlr: .inf\n")
    with pytest.raises(ValueError, match="config field 'lr': must be a finite number"):
        config.make_train_config(str(p))
    p.write_text("name: x\nnum_envs: many\n")
    with pytest.raises(ValueError, match=r"config field 'num_envs' \(from .*inf.yaml\)"):
        config.make_train_config(str(p))


def test_malformed_yaml_is_a_one_line_error_with_file_and_line(tmp_path, capsys):
    p = tmp_path / "broken.yaml"
    p.write_text("name: x\nhidden: [64, 64\nlr: 0.1\n")
    assert cli.main(["--config", str(p)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err
    assert "broken.yaml, line 3" in err and "malformed YAML" in err
    p.write_text("- just\n- a list\n")
    with pytest.raises(ValueError, match="must be a YAML mapping"):
        config.make_train_config(str(p))
    p.write_text("name: x\nlr: ${nowhere}\n")
    with pytest.raises(ValueError, match="config field 'lr'"):
        config.make_train_config(str(p))
    assert cli.main(["--config", str(tmp_path / "missing.yaml")]) == 2
    assert "missing.yaml" in capsys.readouterr().err


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
    assert cli.main(["--config", SMOKE, "--resume", str(junk)]) == 2
    assert "not a readable rook_env PPO checkpoint" in capsys.readouterr().err


def test_critic_hidden_sizes_the_critic_alone_and_older_checkpoints_still_load(tmp_path):
    m = ActorCritic(583, 58, [32, 32], 788, [16])
    widths = lambda seq: [layer.out_features for layer in seq if isinstance(layer, nn.Linear)]  # noqa: E731
    assert widths(m.actor) == [32, 32, 58] and widths(m.critic) == [16, 1] and m.critic[0].in_features == 788
    path = tmp_path / "narrow.pt"
    torch.save({"format": "rook_env.ppo", "format_version": 1, "model_kwargs": m.kwargs(), "model": m.state_dict(),
                "env_flags": {}}, path)
    back = model_from_checkpoint(load_checkpoint(str(path)), str(path))
    assert widths(back.critic) == [16, 1] and all(torch.equal(a, b) for a, b in zip(back.parameters(), m.parameters()))
    # a checkpoint from before critic_hidden existed: its critic is as wide as the actor
    old = dict(m.kwargs(), critic_hidden=[32, 32])
    del old["critic_hidden"]
    assert ActorCritic(**old).critic_hidden == [32, 32]
    # the config's critic_hidden reaches the trained network
    s = loop.train(_tiny(tmp_path, "narrow", "critic_hidden=[24]", "total_decisions=500"), quiet=True)
    ckpt = load_checkpoint(str(tmp_path / "narrow" / "best.pt"))
    assert ckpt["model_kwargs"]["critic_hidden"] == [24] and ckpt["model"]["critic.0.weight"].shape[0] == 24


# ------------------------------------------------------------------------------ end to end
def _tiny(tmp_path, name, *extra):
    return config.make_train_config(SMOKE, [f"run_dir={tmp_path}", f"name={name}", "progress=false", "bc_steps=10",
                                           "bc_hands=4", "eval_deals=4", "eval_every=0", "rollout_decisions=1024",
                                           "checkpoint_every=1", *extra])


def _same_weights(path_a, path_b) -> bool:
    a = torch.load(path_a, weights_only=True)["model"]
    b = torch.load(path_b, weights_only=True)["model"]
    return all(torch.equal(a[k], b[k]) for k in a)


@pytest.fixture(scope="module")
def straight_run(tmp_path_factory):
    """Three iterations in one go: what every cut-and-resumed run must reproduce exactly."""
    out = tmp_path_factory.mktemp("straight")
    return loop.train(_tiny(out, "straight", "total_decisions=3000"), quiet=True)


def test_league_checkpoints_join_the_pool_and_selection_takes_the_weakest_result(straight_run, tmp_path):
    member = straight_run["paths"]["agent"]
    s = loop.train(_tiny(tmp_path, "league", f"league=[{member}]", "opponent_mix={pool: 1}", "pool_every=1000",
                          "total_decisions=1000", "eval_opponents=[random, heuristic]", "select_by=min"), quiet=True)
    best = s["best"]
    assert best["score"] == min(best["eval"][o]["mean"] for o in ("random", "heuristic"))
    assert load_checkpoint(s["paths"]["last"])["pool"] == []  # league members are the config's, not snapshots
    bad = config.make_train_config(SMOKE, [f"run_dir={tmp_path}", "name=bad", "league=[no/such.pt]", "progress=false"])
    with pytest.raises(CheckpointError, match="no/such.pt"):
        loop.train(bad, quiet=True)


def test_game_episodes_train_and_are_evaluated_hand_by_hand(tmp_path):
    # episode=game: win_loss pays +-1 at the game's end only; evaluation still plays duplicate hands
    with pytest.raises(ValueError, match="max_hands"):
        _collector("env_flags={episode: game, reward: win_loss, target_score: 300}")
    cfg, model, col = _collector("env_flags={episode: game, reward: win_loss, target_score: 300}", "max_hands=12",
                                 pool=False)
    batch, stats = col.collect(model, 0.0)
    returns = np.concatenate([r for r in stats["returns"].values() if r])
    assert len(returns) > 0 and set(returns.tolist()) <= {-1.0, 0.0, 1.0}  # whole games: one +-1 each (0: cut)
    cfg_h, model_h, col_h = _collector("env_flags={reward: win_loss}", pool=False)
    batch_h, stats_h = col_h.collect(model_h, 0.0)
    per_hand = len(batch_h["act"]) / stats_h["hands"]  # learner decisions per one-hand episode
    assert len(batch["act"]) / len(returns) > 2 * per_hand  # a game episode spans several hands
    s = loop.train(_tiny(tmp_path, "game", "env_flags={episode: game, reward: win_loss, target_score: 300}",
                          "max_hands=12", "total_decisions=1000"), quiet=True)
    assert {"random", "heuristic"} <= set(s["best"]["eval"])
    # shipping a game-level agent evaluates it in real games (hands dealt with the running score)
    info = _ship_tool().ship(str(tmp_path / "game"), str(tmp_path / "shipped_game"), deals=3)
    assert all(r["command"].endswith("--game-scores") for r in info["held_out_eval"].values())


def test_game_episode_runs_are_evaluated_with_the_running_game_score(monkeypatch):
    import rook_env.games.partnership.match as evaluation  # the partnership game's match (its train_match calls it)

    seen, real = [], evaluation.play_match

    def spy(*args, **kwargs):
        seen.append(kwargs.get("game_scores"))
        return real(*args, **kwargs)

    monkeypatch.setattr(evaluation, "play_match", spy)
    model = ActorCritic(583, 58, [16], 788)
    for flags in ("env_flags={episode: game, reward: win_loss, target_score: 300}", "env_flags={}"):
        cfg = config.make_train_config(SMOKE, [flags, "max_hands=12"])
        assert selection.evaluate_policy(model, "random", 2, 0, cfg)["deals"] == 2
    assert seen == [True, False]


def test_resume_continues_exactly(straight_run, tmp_path):
    assert straight_run["iterations"] >= 3
    cut = loop.train(_tiny(tmp_path, "cut", "total_decisions=1000"), quiet=True)
    assert cut["iterations"] == 1
    cfg = _tiny(tmp_path, "cut", "total_decisions=3000")
    resumed = loop.train(cfg, resume=os.path.join(tmp_path, "cut", "last.pt"), quiet=True)
    assert resumed["iterations"] == straight_run["iterations"]
    assert resumed["decisions"] == straight_run["decisions"]
    assert _same_weights(straight_run["paths"]["last"], os.path.join(tmp_path, "cut", "last.pt"))


def test_sync_loop_resumes_exactly_and_an_overlap_checkpoint_needs_overlap(tmp_path):
    straight = loop.train(_tiny(tmp_path, "sync", "total_decisions=3000", "overlap=false"), quiet=True)
    cut = loop.train(_tiny(tmp_path, "sync_cut", "total_decisions=1000", "overlap=false"), quiet=True)
    assert cut["iterations"] == 1 and load_checkpoint(cut["paths"]["last"])["ahead"] is None
    resumed = loop.train(_tiny(tmp_path, "sync_cut", "total_decisions=3000", "overlap=false"),
                          resume=cut["paths"]["last"], quiet=True)
    assert resumed["decisions"] == straight["decisions"]
    assert _same_weights(straight["paths"]["last"], resumed["paths"]["last"])
    overlapped = loop.train(_tiny(tmp_path, "ov_cut", "total_decisions=1000"), quiet=True)
    assert load_checkpoint(overlapped["paths"]["last"])["ahead"] is not None
    with pytest.raises(CheckpointError, match="overlap: true"):
        loop.train(_tiny(tmp_path, "ov_cut", "total_decisions=3000", "overlap=false"),
                    resume=overlapped["paths"]["last"], quiet=True)


def test_overlap_collects_the_next_rollout_with_the_weights_before_the_update(tmp_path):
    one = loop.train(_tiny(tmp_path, "one", "total_decisions=1000"), quiet=True)  # one iteration: theta_1
    two = loop.train(_tiny(tmp_path, "two", "total_decisions=2000"), quiet=True)  # two: theta_2
    assert two["iterations"] == 2
    theta_1 = load_checkpoint(one["paths"]["last"])["model"]
    last = load_checkpoint(two["paths"]["last"])
    ahead = last["ahead"]  # rollout 3, collected during update 2, played by theta_1
    assert ahead["number"] == 3
    assert all(torch.equal(ahead["weights"][k], theta_1[k]) for k in theta_1)
    assert not all(torch.equal(last["model"][k], theta_1[k]) for k in theta_1)


def test_run_beside_returns_both_results_and_raises_only_after_both_stopped():
    import threading
    import time

    assert loop.run_beside(lambda: 1, lambda: 2) == (1, 2)
    done = threading.Event()

    def slow():
        time.sleep(0.2)
        done.set()
        return "update"

    def failing():
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        loop.run_beside(slow, failing)
    assert done.is_set()  # the update was waited for: nothing runs on after the exception
    with pytest.raises(ValueError, match="in the update"):
        loop.run_beside(lambda: (_ for _ in ()).throw(ValueError("in the update")), lambda: "collected")


def test_ctrl_c_in_an_update_saves_last_pt_and_resumes_exactly(straight_run, tmp_path, monkeypatch, capsys):
    """KeyboardInterrupt in the middle of iteration 2's update (the network already half-updated):
    last.pt holds iteration 1, and resuming from it reproduces the uninterrupted run bit for bit."""
    seen = {"updates": 0, "losses": 0}
    real_update, real_loss = loop.ppo_update, ppo.ppo_loss

    def counting_update(*args, **kwargs):
        seen["updates"] += 1
        return real_update(*args, **kwargs)

    def interrupting_loss(*args, **kwargs):
        if seen["updates"] == 2:
            seen["losses"] += 1
            if seen["losses"] == 3:  # two optimizer steps of iteration 2 are done
                raise KeyboardInterrupt
        return real_loss(*args, **kwargs)

    monkeypatch.setattr(loop, "ppo_update", counting_update)  # the name the loop calls
    monkeypatch.setattr(ppo, "ppo_loss", interrupting_loss)  # the name ppo_update calls
    cfg = _tiny(tmp_path, "ctrl_c", "total_decisions=3000", "checkpoint_every=5")
    out = loop.train(cfg)
    assert out["stop_reason"] == "interrupted" and out["interrupted_during"] == "ppo"
    assert out["iterations"] == 1
    last = os.path.join(tmp_path, "ctrl_c", "last.pt")
    assert load_checkpoint(last)["iteration"] == 1  # saved although checkpoint_every is 5
    err = capsys.readouterr().err
    assert f"resume with: python train.py --resume {last}" in err and "Traceback" not in err
    assert "nothing to evaluate yet" in err and "eval_every: 0 the only one comes at the end" in err  # no best.pt
    assert seen["losses"] == 3
    monkeypatch.setattr(ppo, "ppo_loss", real_loss)
    resumed = loop.train(cfg, resume=last, quiet=True)
    assert resumed["decisions"] == straight_run["decisions"]
    assert _same_weights(straight_run["paths"]["last"], last)


def test_ctrl_c_during_behaviour_cloning_saves_the_cloned_network(tmp_path, monkeypatch, capsys):
    real_bc = loop.behaviour_clone

    def interrupted_bc(model, cfg, device, rng, progress, *game):
        def progress_then_interrupt(what, done, total):
            progress(what, done, total)
            if what == "steps" and done == 5:
                raise KeyboardInterrupt

        return real_bc(model, cfg, device, rng, progress_then_interrupt, *game)

    monkeypatch.setattr(loop, "behaviour_clone", interrupted_bc)
    cfg = _tiny(tmp_path, "bc", "total_decisions=1000")
    out = loop.train(cfg)
    assert out["stop_reason"] == "interrupted" and out["interrupted_during"] == "behaviour cloning"
    err = capsys.readouterr().err
    # progress lines while cloning, then what was saved and how to go on
    assert "behaviour cloning: heuristic hands 4/4" in err and "behaviour cloning: steps 5/10" in err
    assert "partly cloned network" in err and "resume with: python train.py --resume" in err
    last = load_checkpoint(os.path.join(tmp_path, "bc", "last.pt"))
    assert last["iteration"] == 0 and last["bc"] == {"interrupted": True}
    untrained = ActorCritic(583, 58, cfg.hidden, 788)
    assert not torch.equal(last["model"]["actor.0.weight"], untrained.state_dict()["actor.0.weight"])
    monkeypatch.setattr(loop, "behaviour_clone", real_bc)
    resumed = loop.train(cfg, resume=os.path.join(tmp_path, "bc", "last.pt"), quiet=True)
    assert resumed["stop_reason"] == "total_decisions" and resumed["iterations"] == 1


def test_a_new_run_refuses_an_existing_run_folder(tmp_path, capsys):
    cfg = _tiny(tmp_path, "taken", "total_decisions=500", "bc_steps=0")
    loop.train(cfg, quiet=True)
    with pytest.raises(FileExistsError, match="--resume .*last.pt.*--overwrite"):
        loop.train(cfg, quiet=True)
    assert cli.main(["--config", SMOKE, "--set", f"run_dir={tmp_path}", "--set", "name=taken"]) == 2
    assert "already holds a run" in capsys.readouterr().err
    loop.train(cfg, quiet=True, overwrite=True)
    events = [f for f in os.listdir(tmp_path / "taken") if f.startswith("events.out.tfevents")]
    assert len(events) == 1  # the old run's event file went with it


def _scalar_steps(run_dir: str, tag: str) -> list[int]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(run_dir)
    acc.Reload()
    return [e.step for e in acc.Scalars(tag)]


def test_resumed_runs_do_not_duplicate_tensorboard_steps(tmp_path):
    """Cut after iteration 1, go on to iteration 2 (logged), then resume again from iteration 1 as after a
    crash: the purged iteration 2 is logged once, not twice."""
    import shutil

    loop.train(_tiny(tmp_path, "tb", "total_decisions=1000", "bc_steps=0"), quiet=True)
    run_dir = os.path.join(tmp_path, "tb")
    shutil.copyfile(os.path.join(run_dir, "last.pt"), os.path.join(tmp_path, "it1.pt"))
    cfg = _tiny(tmp_path, "tb", "total_decisions=2000", "bc_steps=0")
    loop.train(cfg, resume=os.path.join(run_dir, "last.pt"), quiet=True)
    loop.train(cfg, resume=os.path.join(tmp_path, "it1.pt"), quiet=True)
    steps = _scalar_steps(run_dir, "losses/loss")
    assert len(steps) == 2 and len(set(steps)) == 2, steps


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs")
    cfg = config.make_train_config(SMOKE, [f"run_dir={out}", "progress=false"])
    return loop.train(cfg, quiet=True)


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


def test_playoff_replays_the_best_candidates_and_ships_the_winner(tmp_path):
    """playoff_candidates: the K best checkpoints by periodic score are kept on disk (the others deleted), played
    again at the end on playoff_deals fresh deals, and the winner's weights become agent.pt."""
    cfg = config.make_train_config(SMOKE, [f"run_dir={tmp_path}", "progress=false", "total_decisions=12000",
                                          "eval_every=1", "eval_deals=10", "bc_steps=0", "playoff_candidates=2",
                                          "playoff_deals=12", "playoff_seed=777"])
    s = loop.train(cfg, quiet=True)
    periodic = sorted(((h["eval"], h["iteration"]) for h in s_history(s) if "eval" in h),
                      key=lambda e: -min(e[0][o]["mean"] for o in cfg.eval_opponents))
    assert len(periodic) >= 3  # more evaluated checkpoints than candidates
    po = s["playoff"]
    assert len(po) == 2 and sum(bool(p.get("winner")) for p in po) == 1
    top2 = sorted(min(e[o]["mean"] for o in cfg.eval_opponents) for e, _ in periodic)[-2:]
    assert sorted(p["score"] for p in po) == top2
    for p in po:
        assert os.path.isfile(p["path"]) and all(p["playoff"][o]["deals"] == 12 for o in cfg.eval_opponents)
        assert p["playoff_score"] == min(p["playoff"][o]["mean"] for o in cfg.eval_opponents)
    assert len(os.listdir(os.path.dirname(po[0]["path"]))) == 2  # dropped candidates were deleted
    win = next(p for p in po if p.get("winner"))
    assert win["playoff_score"] == max(p["playoff_score"] for p in po)
    shipped, cand = load_checkpoint(s["paths"]["agent"]), load_checkpoint(win["path"])
    assert shipped["iteration"] == win["iteration"]
    assert all(torch.equal(shipped["model"][k], cand["model"][k]) for k in cand["model"])
    # tools/ship.py records the playoff's winner as the selected checkpoint
    dest = str(tmp_path / "shipped")
    assert _ship_tool().main([os.path.dirname(s["paths"]["agent"]), "--to", dest, "--deals", "4"]) == 0
    with open(dest + ".json") as fh:
        data = json.load(fh)
    assert data["selected"]["iteration"] == win["iteration"] and "playoff winner" in data["selected"]["rule"]
    assert len(data["playoff"]) == 2


def s_history(summary: dict) -> list:
    return load_checkpoint(summary["paths"]["last"])["history"]


def test_the_summary_prints_as_lines_not_a_dict(smoke_run, capsys):
    reporting.print_summary(smoke_run)
    out = capsys.readouterr().out
    assert "{" not in out and "[" in out  # intervals, but no Python mappings
    assert f"{smoke_run['decisions']:,} decisions" in out and "stopped by total_decisions" in out
    for path in smoke_run["paths"].values():
        assert f" {path}\n" in out


def test_smoke_training_improves_over_the_untrained_policy(smoke_run):
    trained = PPOAgent.load(smoke_run["paths"]["agent"]).model
    cfg = config.make_train_config(SMOKE)
    torch.manual_seed(cfg.seed)
    untrained = ActorCritic(583, 58, cfg.hidden, 788)
    deals, seed = 100, 777_000
    r_trained = selection.evaluate_policy(trained, "random", deals, seed, cfg)
    r_untrained = selection.evaluate_policy(untrained, "random", deals, seed, cfg)
    # Measured: trained about +160, untrained policies between -50 and +60 points per deal.
    assert r_trained["mean"] > 120
    assert r_trained["mean"] > r_untrained["mean"] + 50
    assert r_trained["ci95"][0] > r_untrained["ci95"][1]


def _ship_tool():
    spec = importlib.util.spec_from_file_location("ship_tool", os.path.join(ROOT, "tools", "ship.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_ship_copies_the_model_and_writes_a_held_out_evaluation(smoke_run, tmp_path, capsys):
    ship = _ship_tool()
    run_dir = os.path.dirname(smoke_run["paths"]["agent"])
    dest = str(tmp_path / "shipped")
    assert ship.main([run_dir, "--to", dest, "--deals", "6", "--seed", "99"]) == 0
    assert os.path.isfile(dest + ".pt") and os.path.getsize(dest + ".pt") < 5_000_000
    with open(dest + ".json") as fh:
        data = json.load(fh)
    assert set(data["held_out_eval"]) == {"random", "heuristic"}
    assert data["seed"] == 1 and "machine" in data["training"] and data["held_out_eval"]["random"]["seed"] == 99
    assert data["learning_curve"] == dest + "_curve.png" and os.path.isfile(dest + "_curve.png")
    from rook_env.agents import make_agent

    assert make_agent(dest + ".pt").greedy
    # an existing destination is never replaced without --force
    before = os.path.getmtime(dest + ".pt")
    assert ship.main([run_dir, "--to", dest, "--deals", "6"]) == 2
    assert "--force" in capsys.readouterr().err and os.path.getmtime(dest + ".pt") == before
    assert ship.main([run_dir, "--to", dest, "--deals", "6", "--force"]) == 0


def test_ship_defaults_to_the_shipped_checkpoint_and_refuses_to_replace_it(smoke_run, capsys):
    ship = _ship_tool()
    assert ship.SHIPPED + ".pt" == os.path.relpath(DEFAULT_CHECKPOINT, ROOT)  # the checkpoint make_agent("ppo") loads
    shipped = os.path.join(ROOT, ship.SHIPPED + ".pt")
    before = os.path.getmtime(shipped)
    cwd = os.getcwd()
    try:
        os.chdir(ROOT)
        assert ship.main([os.path.dirname(smoke_run["paths"]["agent"]), "--deals", "6"]) == 2
    finally:
        os.chdir(cwd)
    assert "--force" in capsys.readouterr().err and os.path.getmtime(shipped) == before


def test_exploitability_probe_copies_the_targets_network_shape(tmp_path):
    spec = importlib.util.spec_from_file_location("exploit_tool", os.path.join(ROOT, "benchmarks", "exploitability.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    m = ActorCritic(583, 58, [32, 32], 788, [16])
    target = tmp_path / "target.pt"
    torch.save({"format": "rook_env.ppo", "format_version": 1, "model_kwargs": m.kwargs(), "model": m.state_dict(),
                "env_flags": {}}, target)
    cfg = module.probe_config(str(target), "target", 1.0, 1000, 10, "probe", [f"run_dir={tmp_path}"])
    assert (cfg.hidden, cfg.critic_hidden, cfg.init_checkpoint) == ([32, 32], [16], str(target))
    assert cfg.league == [str(target)] and cfg.opponent_mix == {"pool": 1.0} and cfg.bc_steps == 0
    scratch = module.probe_config("heuristic", "scratch", 1.0, 1000, 10, "probe", [])
    assert scratch.opponent_mix == {"heuristic": 1.0} and not scratch.init_checkpoint


def test_earlier_networks_play_by_path_not_by_name():
    """The repository's other networks (``networks/``: earlier ones, a best response) load by path, each with its
    record beside it, all different from ``ppo`` and from each other, and a bare path plays the partnership game
    only; their old names are no specs."""
    from rook_env.agents import make_agent

    folder = os.path.join(ROOT, "networks")
    files = sorted(f for f in os.listdir(folder) if f.endswith(".pt"))
    assert files == ["best_response_v5.pt", "ppo_v1.pt", "ppo_v4.pt", "ppo_v5.pt"]
    states = {"ppo": make_agent("ppo").model.state_dict()}
    for file in files:
        path = os.path.join(folder, file)
        assert os.path.isfile(path[:-3] + ".json")
        states[file] = make_agent(path).model.state_dict()
        weights = load_checkpoint(path)["model"]
        assert all(torch.equal(v, weights[k]) for k, v in states[file].items())
        with pytest.raises(ValueError, match="partnership"):
            make_agent(path, game="call_partner", players=5)
    for name in ("ppo_v2", "ppo_v3", "ppo_v4", "ppo_v5"):
        with pytest.raises(ValueError, match="unknown agent spec"):
            make_agent(name)
    names = list(states)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            assert not all(torch.equal(v, states[b][k]) for k, v in states[a].items()), (a, b)


def test_a_run_builds_its_game_once_and_passes_it_down(tmp_path, monkeypatch):
    """The run's Game is built once (loop.set_up) and handed to the collector, behaviour cloning, every evaluation,
    the playoff and every checkpoint: no module builds its own during a run."""
    from rook_env.training import behaviour_cloning as bc_mod
    from rook_env.training import checkpoints, collection, selection

    calls = []
    real = config.game_of

    def counted(cfg):
        calls.append(1)
        return real(cfg)

    for module in (loop, collection, bc_mod, selection, checkpoints):
        monkeypatch.setattr(module, "game_of", counted)
    s = loop.train(_tiny(tmp_path, "once", "total_decisions=2000", "eval_every=1", "playoff_candidates=2",
                         "playoff_deals=2", "final_eval_deals=2", "overlap=false"), quiet=True)
    assert s["iterations"] == 2 and len(s["playoff"]) == 2 and s["final_eval"]
    assert len(calls) == 1

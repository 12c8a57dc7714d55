"""rook_env.training (train.py) on call-your-partner Rook: the config fields, the n-seat collector (learning seats,
credit assignment replayed in raw_env), the smoke config end to end, and checkpoints that refuse
a table of another game or size."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch

from rook_env.training import collection, config, loop
from rook_env.agents import make_agent
from rook_env.agents.learned import DEFAULT_CHECKPOINT, PPOAgent
from rook_env.agents.learned.model import ActorCritic, CheckpointError, load_checkpoint
from rook_env.games.call_partner import env as call_partner_env
from rook_env.games.call_partner import raw_env as call_partner_raw_env

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMOKE = os.path.join(ROOT, "configs", "call_partner_smoke.yaml")


def _collector(*overrides, players=5, seed=0):
    cfg = config.make_train_config(SMOKE, ["num_envs=6", "rollout_decisions=400", f"players={players}", *overrides])
    env = call_partner_raw_env(players=players)
    obs_dim, n_actions = env.observation_space("player_0")["observation"].shape[0], env.action_space("player_0").n
    torch.manual_seed(seed)
    model = ActorCritic(obs_dim, n_actions, cfg.hidden, env.state_space.shape[0])
    col = collection.Collector(cfg, torch.device("cpu"), np.random.default_rng(seed))
    col.pool.append(ActorCritic(obs_dim, n_actions, cfg.hidden).actor.eval())
    return cfg, model, col, (obs_dim, n_actions, env.state_space.shape[0])


def test_config_fields_and_their_errors():
    cfg = config.make_train_config(SMOKE)
    assert cfg.game == "call_partner" and cfg.players == 5
    game = config.game_of(cfg)
    assert (game.seats, game.groups, game.flags, game.heuristic) == (5, 5, {"players": 5}, "call_partner_heuristic")
    default = config.game_of(config.make_train_config(SMOKE, ["players=0"]))
    assert default.seats == 5 and default.flags == {"players": 5}  # the game's own default
    six = config.game_of(config.make_train_config(SMOKE, ["players=6", "env_flags={deck: no_twos_to_fours}"]))
    assert six.flags == {"deck": "no_twos_to_fours", "players": 6}
    partnership = config.game_of(config.make_train_config(None))
    assert (partnership.name, partnership.seats, partnership.groups) == ("partnership", 4, 2)
    for override, words in [
        ("game=doppelkopf", "'game'"),
        ("players=3", "env_flags.*players=3"),
        ("env_flags={players: 4}", "'env_flags'.*config fields of their own"),
        ("env_flags={rook_rank: low}", "env_flags.*rook_rank"),
        ("env_flags={dek: full}", "env_flags.*unknown"),
    ]:
        with pytest.raises(ValueError, match=words):
            config.make_train_config(SMOKE, [override])
    with pytest.raises(ValueError, match="'players'.*four-player partnership Rook has 4 seats"):
        config.make_train_config(None, ["players=5"])


@pytest.mark.parametrize("players", [4, 6])
def test_collected_batch_for_every_opponent_kind(players):
    cfg, model, col, (D, A, C) = _collector("opponent_mix={self: 1, pool: 1, heuristic: 1, random: 1}",
                                            players=players)
    batch, stats = col.collect(model, 0.0)
    n = len(batch["act"])
    assert n >= 400 and batch["obs"].shape == (n, D) and batch["mask"].shape == (n, A)
    assert batch["cin"].shape == (n, C)
    np.testing.assert_array_equal(batch["cin"][:, :D], batch["obs"])  # state_for starts with the observation
    assert batch["mask"][np.arange(n), batch["act"]].all()  # every action was legal
    assert (batch["mask"].sum(1) > 1).all()  # forced moves are not decisions
    assert all(stats["returns"][k] for k in config.OPPONENT_KINDS)
    assert np.isfinite(batch["adv"]).all()


def test_learning_seats_are_drawn_uniformly_one_per_non_self_episode():
    cfg, model, col, _ = _collector("opponent_mix={self: 0.25, heuristic: 0.5, random: 0.25}")
    rows = np.arange(cfg.num_envs)
    p = np.array([config.mix_at(cfg, 0.0)[k] for k in config.OPPONENT_KINDS])
    col._episodes = 0
    kinds, teams = [], []
    for _ in range(2000):
        col._new_episodes(rows, p)
        kinds.append(col.kind.copy()), teams.append(col.team.copy())
    kinds, teams = np.concatenate(kinds), np.concatenate(teams)
    assert (teams[kinds == collection.SELF] == -1).all()
    freq = np.bincount(teams[kinds != collection.SELF], minlength=5) / (kinds != collection.SELF).sum()
    np.testing.assert_allclose(freq, 0.2, atol=0.015)


def test_rewards_are_credited_to_the_seats_that_earned_them():
    """Replay every table's episodes in raw_env from the table's own deal stream and the actions the
    collector played: the learner decisions, masks, actions and (gamma = lambda = 1) each decision's
    return = its own seat's score_diff, match the batch row for row; outside self-play exactly one
    seat learns per episode."""
    cfg, model, col, _ = _collector("opponent_mix={self: 1, pool: 1, heuristic: 1, random: 1}", "gamma=1.0",
                                    "gae_lambda=1.0", "reward_scale=0.01")
    env = col.env
    steps = []
    real_step = env.step

    def step(actions):
        learner = col.active & ((col.kind == collection.SELF) | ((env.current_player % 5) == col.team))
        steps.append((np.array(actions), env.current_player, learner, col.active.copy(), col.kind.copy()))
        return real_step(actions)

    env.step = step
    batch, stats = col.collect(model, 0.0)
    rows = {batch["obs"][i].tobytes(): i for i in range(len(batch["act"]))}
    assert len(rows) == len(batch["act"])  # observations identify decisions
    matched = episodes = 0
    for t in range(cfg.num_envs):
        raw = call_partner_raw_env(players=5)
        raw.reset(seed=env.table_seeds[t])  # the table's stream: the same deals, redeals included
        k = 0
        while k < len(steps) and steps[k][3][t]:
            learned, got, kind = [], np.zeros(5), steps[k][4][t]
            while not all(raw.terminations.values()):
                actions, seats, learner, _, _ = steps[k]
                agent = raw.agent_selection
                assert raw.agent_seat[agent] == seats[t]
                ob = raw.observe(agent)
                if learner[t] and ob["action_mask"].sum() > 1:
                    learned.append((ob, int(actions[t]), seats[t]))
                raw.step(int(actions[t]))
                for ag, r in raw.rewards.items():
                    got[raw.agent_seat[ag]] += r
                k += 1
            raw.reset()
            episodes += 1
            if kind != collection.SELF:
                assert len({s for _, _, s in learned}) <= 1
            for ob, a, s in learned:
                i = rows[ob["observation"].tobytes()]
                np.testing.assert_array_equal(batch["mask"][i], ob["action_mask"].astype(bool))
                assert batch["act"][i] == a
                assert batch["ret"][i] == pytest.approx(0.01 * got[s], abs=1e-5)
                matched += 1
            assert abs(got.sum()) < 1e-6 and got.any()  # score_diff sums to zero over the seats
    assert episodes == stats["hands"] and matched == len(batch["act"])


# ------------------------------------------------------------------------------ end to end
@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs")
    cfg = config.make_train_config(SMOKE, [f"run_dir={out}", "progress=false"])
    return loop.train(cfg, quiet=True)


def test_smoke_config_trains_end_to_end_and_the_agent_plays_legally(smoke_run):
    s = smoke_run
    for k in ("last", "best", "agent", "curve"):
        assert os.path.isfile(s["paths"][k]), k
    assert s["decisions"] >= 6000 and s["stop_reason"] == "total_decisions"
    evals = [h["eval"] for h in load_checkpoint(s["paths"]["last"])["history"] if "eval" in h]
    assert evals and all({"random", "heuristic"} <= set(e) for e in evals)
    agent_ckpt = load_checkpoint(s["paths"]["agent"])
    assert agent_ckpt["game"] == "call_partner" and agent_ckpt["env_flags"] == {"players": 5}
    ppo = make_agent(f"ppo:{s['paths']['agent']}", seed=0, game="call_partner", players=5)
    env = call_partner_env(players=5)  # the checked env: an illegal action would end the hand with a warning
    for seed in range(3):
        env.reset(seed=seed)
        while not all(env.terminations.values()):
            ob = env.observe(env.agent_selection)
            a = ppo.act(ob)
            assert ob["action_mask"][a]
            env.step(a)
        assert "hand" in env.infos["player_0"]
    from rook_env.games.call_partner.match import play_rotation_match

    res = play_rotation_match([f"ppo:{s['paths']['agent']}", "call_partner_heuristic"], deals=2, seed=5,
                              flags={"players": 5}, strict=True)  # strict: an illegal action raises
    assert res.illegal_total == 0 and res.hands == 10


def test_a_checkpoint_refuses_a_table_of_another_game_or_size(smoke_run):
    path = smoke_run["paths"]["agent"]
    with pytest.raises(CheckpointError, match="trained for call-your-partner Rook.*cannot play the partnership"):
        make_agent(f"ppo:{path}")
    with pytest.raises(CheckpointError, match="trained for call-your-partner Rook"):
        PPOAgent.load(path)
    with pytest.raises(CheckpointError, match="5-player call-your-partner table, not a 4-player"):
        make_agent(f"ppo:{path}", game="call_partner", players=4)
    with pytest.raises(ValueError, match="plays the partnership game.*'ppo:"):
        make_agent(path, game="call_partner")  # a bare .pt path is the partnership form
    if os.path.isfile(DEFAULT_CHECKPOINT):
        with pytest.raises(CheckpointError, match="trained for the partnership game.*cannot play call-your-partner"):
            make_agent(f"ppo:{DEFAULT_CHECKPOINT}", game="call_partner", players=5)
    # train.py refuses it as a warm start for the partnership game
    cfg = config.make_train_config(None, [f"init_checkpoint={path}", f"run_dir={os.path.dirname(path)}",
                                         "name=wrong_game", "progress=false"])
    with pytest.raises(CheckpointError, match="trained for call-your-partner Rook"):
        loop.train(cfg, quiet=True)


def test_ship_evaluates_a_call_partner_agent_by_rotation(smoke_run, tmp_path):
    import importlib.util
    import json

    spec = importlib.util.spec_from_file_location("ship_tool", os.path.join(ROOT, "tools", "ship.py"))
    ship = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ship)
    dest = str(tmp_path / "cp_agent")
    assert ship.main([os.path.dirname(smoke_run["paths"]["agent"]), "--to", dest, "--deals", "3", "--seed", "5"]) == 0
    with open(dest + ".json") as fh:
        data = json.load(fh)
    assert set(data["held_out_eval"]) == {"random", "heuristic"}
    assert "--game call_partner" in data["held_out_eval"]["heuristic"]["command"]
    assert "call_partner_heuristic" in data["held_out_eval"]["heuristic"]["command"]
    assert "over the field" in data["selected"]["rule"]
    assert make_agent(f"ppo:{dest}.pt", game="call_partner", players=5).greedy

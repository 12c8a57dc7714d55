"""Ray RLlib (new API stack): the masked module, the environment, README's recipe, train_rllib.py."""

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ray.rllib")

import torch  # noqa: E402
from snippets import run_recipe  # noqa: E402

import rook_env  # noqa: E402
from rook_env.rllib import (  # noqa: E402
    RLlibAgent, RookMaskedPPOModule, RookMultiAgentEnv, module_path, rook_ppo_config,
)

ROOT = Path(__file__).resolve().parents[2]


def play_hand(agent, seed):
    """A hand with ``agent`` at every seat on raw_env (which raises on an illegal action)."""
    env = rook_env.raw_env()
    env.reset(seed=seed)
    for name in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else agent.act(obs))
    return env.game.hand_result


def test_masked_module_never_samples_an_illegal_action():
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    space = rook_env.env().observation_space("player_0")
    module = RLModuleSpec(module_class=RookMaskedPPOModule, observation_space=space,
                          action_space=rook_env.env().action_space("player_0"),
                          model_config={"fcnet_hiddens": [32]}).build()
    rng = np.random.default_rng(0)
    n = 64
    masks = (rng.random((n, 58)) < 0.1).astype(np.float32)
    masks[np.arange(n), rng.integers(0, 58, n)] = 1
    batch = {Columns.OBS: {"observation": torch.as_tensor(rng.random((n, space["observation"].shape[0]),
                                                                     dtype=np.float32)),
                           "action_mask": torch.as_tensor(masks)}}
    for fwd in (module.forward_exploration, module.forward_inference, module.forward_train):
        logits = fwd(dict(batch))[Columns.ACTION_DIST_INPUTS]
        probs = torch.softmax(logits.detach(), -1).numpy()
        assert np.all(probs[masks == 0] == 0)
        assert np.allclose(probs.sum(-1), 1)
    assert module.compute_values(dict(batch)).shape == (n,)
    with pytest.raises(ValueError, match="observation dict"):
        module.forward_inference({Columns.OBS: batch[Columns.OBS]["observation"]})


def test_env_passes_rllibs_multi_agent_check_and_pays_every_seat():
    from ray.rllib.utils.pre_checks.env import check_multiagent_environments

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r".*\[rook_env\] illegal action")  # the check's random action
        check_multiagent_environments(RookMultiAgentEnv({}))
    env = RookMultiAgentEnv({"reward_scale": 0.01, "illegal_action": "raise"})
    obs, _ = env.reset(seed=5)
    returns = dict.fromkeys(rook_env.AGENTS, 0.0)
    rng = np.random.default_rng(5)
    done = False
    while not done:
        (agent, o), = obs.items()
        obs, rew, term, trunc, _ = env.step({agent: int(rng.choice(np.flatnonzero(o["action_mask"])))})
        for a, r in rew.items():
            returns[a] += r
        done = term["__all__"] or trunc["__all__"]
    res = env.env.game.hand_result["hand_scores"]
    for seat, a in enumerate(rook_env.AGENTS):
        assert returns[a] == pytest.approx(0.01 * (res[seat & 1] - res[1 - (seat & 1)]))
    with pytest.raises(ValueError, match="unknown env_config"):
        RookMultiAgentEnv({"flag": {}})
    with pytest.raises(ValueError, match="opponent probabilities"):
        rook_ppo_config(opponents={"h": ("heuristic", 0.7), "r": ("random", 0.6)})


def test_readme_recipe_trains_and_loads_as_an_agent(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ns = run_recipe("rllib")  # illegal_action="raise": an illegal action would raise out of algo.train()
    results = ns["results"]
    assert len(results) == 2 and results[-1]["env_runners"]["num_env_steps_sampled_lifetime"] >= 800
    assert results[-1]["learners"]["shared"]["num_module_steps_trained"] > 0
    agent = ns["agent"]
    assert isinstance(agent, RLlibAgent)
    for seed in range(3):
        play_hand(agent, seed)  # raw_env raises on an illegal action
    # greedy is deterministic; the module path accepts the module folder too
    again = RLlibAgent.load(module_path(ns["checkpoint_dir"]))
    env = rook_env.env()
    env.reset(seed=1)
    obs = env.last()[0]
    assert again.act(obs) == agent.act(obs)
    with pytest.raises(ValueError, match="sizes"):
        RLlibAgent.load(ns["checkpoint_dir"], deck="full")
    with pytest.raises(FileNotFoundError, match="neither"):
        RLlibAgent.load(tmp_path)


def test_train_rllib_smoke_with_a_remote_env_runner_and_heuristic_opponent(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    sys.path.insert(0, str(ROOT))
    import train_rllib

    ckpt = tmp_path / "ckpt"
    summary = train_rllib.main(["--config", "configs/rllib_smoke.yaml", "--set", f"checkpoint_dir={ckpt}",
                                "--set", "illegal_action=raise"])
    assert summary["env_steps"] >= 800
    assert summary["vs_heuristic"]["illegal"] == {"A": 0, "B": 0}
    assert (tmp_path / "summary.json").is_file()
    with pytest.raises(SystemExit, match="unknown config field"):
        train_rllib.RLlibRunConfig.load(None, ["num_runners=2"])


# ------------------------------------------------------------------------------- the vector env runner
def _logged_tables(game, flags, opponents, tables=12, seed=3):
    """rook_env.rllib.vector.Tables whose engine steps are logged (obs, seat, mask, actions, rewards, done)."""
    from rook_env.rllib.vector import Tables

    tab = Tables(game, flags, tables, opponents, seed=seed)
    log = []
    step, reset = tab.env.step, tab.env.reset

    def logged_reset(**kw):
        obs, info = reset(**kw)
        log.append(["reset", obs.copy(), info["seat"].copy(), info["action_mask"].copy()])
        return obs, info

    def logged_step(actions):
        log[-1].append(np.array(actions).copy())
        obs, rew, term, trunc, info = step(actions)
        log[-1].extend([rew.copy(), term | trunc])
        log.append(["step", obs.copy(), info["seat"].copy(), info["action_mask"].copy()])
        return obs, rew, term, trunc, info

    tab.env.reset, tab.env.step = logged_reset, logged_step
    return tab, log


@pytest.mark.parametrize("game,flags,opponents", [
    ("partnership", {}, {"heuristic": 0.4, "random": 0.2}),
    ("call_partner", {"players": 5}, {"heuristic": 0.5}),
])
def test_vector_tables_play_legal_actions_and_their_episodes_are_the_engines(game, flags, opponents):
    tab, log = _logged_tables(game, flags, opponents)
    rng = np.random.default_rng(0)

    def policy(obs, mask):  # a random legal policy that also hands back an extra per row
        from rook_env.vector import sample_legal

        a = sample_legal(mask, rng)
        return a, {"echo": a * 10}

    data = tab.play(policy, decisions=300)
    S, N = tab.seats, tab.env.num_envs
    # every recorded action is legal for its observation (the engine raises on an illegal one, too)
    assert np.all(data["mask"][np.arange(len(data["act"])), data["act"]] == 1)
    assert np.array_equal(data["echo"], data["act"] * 10)
    # Rebuild each learner seat's hand from the engine's own log, independently of Tables: a table's hand
    # number advances when its hand ends (the collected ones are numbered as Tables numbers them: the
    # first N hands 0..N-1, then new ones in order of finishing).
    hand_of = np.arange(N)
    next_hand = N
    collected = np.ones(N, bool)
    expected: dict[int, list] = {}
    rewards: dict[int, float] = {}
    learner_rows = 0
    collected_hands = set(data["traj"].tolist())
    for _, obs, seat, mask, actions, rew, done in log[:-1]:
        for t in range(N):
            if not collected[t]:
                continue
            traj = int(hand_of[t] * S + seat[t])
            expected.setdefault(traj, []).append((obs[t], actions[t]))
        for t in np.flatnonzero(done & collected):
            for s in range(S):
                rewards[int(hand_of[t] * S + s)] = float(rew[t, s])
        # whether the tables that ended go on is Tables' decision (all of them or none): read it from the
        # hands it returned; new hands are numbered in table order
        for t in np.flatnonzero(done & collected):
            if any(next_hand * S + s in collected_hands for s in range(S)):
                hand_of[t] = next_hand
                next_hand += 1
            else:
                collected[t] = False
    traj_ids = data["traj"].tolist()
    assert traj_ids == sorted(traj_ids) and len(traj_ids) == len(set(traj_ids))
    for e, traj in enumerate(traj_ids):
        a, b = data["start"][e], data["start"][e + 1]
        rows = expected[traj]
        # the learner's rows of that seat and hand are a subset of the seat's decisions (opponent seats are
        # left out): when a seat is the learner's, all its decisions are there, in order
        assert b - a == len(rows), (traj, b - a, len(rows))
        for k, (o, act) in enumerate(rows):
            assert np.array_equal(data["obs"][a + k], o) and data["act"][a + k] == act
        assert data["reward"][e] == rewards[traj]
        learner_rows += b - a
    assert learner_rows == len(data["act"]) >= 300
    # opponents' seats are not learner episodes: a hand against an opponent has fewer learner seats
    per_hand = np.bincount(data["traj"] // S)
    assert per_hand.max() == S and (per_hand < S).any()


def test_vector_env_runner_episodes_feed_ppo_and_a_training_iteration_runs():
    import ray
    from ray.rllib.core.columns import Columns

    from rook_env.rllib import rook_vector_ppo_config

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        config = rook_vector_ppo_config(num_env_runners=0, tables=16, hidden=[32], seed=0,
                                        opponents={"heuristic": 0.5})
        config.training(train_batch_size_per_learner=600, minibatch_size=200, num_epochs=1)
        algo = config.build_algo()
        runner = algo.env_runner
        episodes = runner.sample(num_timesteps=300)
        assert sum(len(e) for e in episodes) >= 300
        for e in episodes:
            obs, act = e.get_observations(), e.get_actions()
            mask = obs["action_mask"][:-1]
            assert e.is_terminated and np.all(mask[np.arange(len(act)), act] == 1)  # legal actions only
            logits = e.get_extra_model_outputs(Columns.ACTION_DIST_INPUTS)
            logp = torch.log_softmax(torch.as_tensor(logits), -1)[np.arange(len(act)), act].numpy()
            assert np.allclose(e.get_extra_model_outputs(Columns.ACTION_LOGP), logp, atol=1e-5)
            rewards = e.get_rewards()
            assert np.all(rewards[:-1] == 0)  # the hand's reward on the seat's last decision only
        before = {k: v.clone() for k, v in runner.module.state_dict().items()}
        result = algo.train()
        assert result["learners"]["default_policy"]["num_module_steps_trained"] > 0
        assert result["env_runners"]["num_env_steps_sampled_lifetime"] >= 600
        after = runner.module.state_dict()  # the new weights reached the runner
        assert any(not torch.equal(before[k], after[k]) for k in before)
        algo.stop()
    finally:
        ray.shutdown()


def test_vector_recipe_trains_and_loads_as_an_agent(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ns = run_recipe("rllib-vector")
    results = ns["results"]
    assert len(results) == 2 and results[-1]["env_runners"]["num_env_steps_sampled_lifetime"] >= 1600
    assert results[-1]["learners"]["default_policy"]["num_module_steps_trained"] > 0
    for seed in range(2):
        play_hand(ns["agent"], seed)  # raw_env raises on an illegal action


def test_vector_config_errors_name_what_is_wrong():
    from rook_env.rllib.vector import check_env_config

    with pytest.raises(ValueError, match="unknown env_config"):
        check_env_config({"tabels": 4})
    with pytest.raises(ValueError, match="tables must be a positive integer"):
        check_env_config({"tables": 0})
    with pytest.raises(ValueError, match=r"opponents \['ppo'\]"):
        check_env_config({"opponents": {"ppo": 0.5}})
    with pytest.raises(ValueError, match="opponent probabilities"):
        check_env_config({"opponents": {"heuristic": 0.7, "random": 0.6}})


def test_train_rllib_vector_runner_smoke_loads_as_an_agent(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    sys.path.insert(0, str(ROOT))
    import train_rllib

    ckpt = tmp_path / "ckpt"
    summary = train_rllib.main(["--config", "configs/rllib_vector_smoke.yaml", "--set", f"checkpoint_dir={ckpt}"])
    assert summary["env_steps"] >= 1600
    assert summary["vs_heuristic"]["illegal"] == {"A": 0, "B": 0}
    agent = RLlibAgent.load(ckpt)  # the vector runner's module is "default_policy"
    for seed in range(2):
        play_hand(agent, seed)
    with pytest.raises(SystemExit, match="vector runner plays heuristic and random"):
        train_rllib.RLlibRunConfig.load(None, ["opponents={old: [ppo, 0.5]}"])
    with pytest.raises(SystemExit, match="runner="):
        train_rllib.RLlibRunConfig.load(None, ["runner=fast"])


def test_an_env_runner_killed_mid_training_is_restarted_and_the_run_goes_on(monkeypatch):
    """The recipe's fault tolerance (train_rllib.py's ``fault_tolerance``, as configs/rllib_cluster.yaml states it):
    an env runner process killed (SIGKILL) during an iteration is restarted by Ray as the same runner index and the
    training goes on: every iteration completes, the runner count is back to full, RLlib counts the restart."""
    import itertools
    import os
    import signal
    import threading
    import time

    import ray

    monkeypatch.chdir(ROOT)
    sys.path.insert(0, str(ROOT))
    import train_rllib

    cfg = train_rllib.RLlibRunConfig.load("configs/rllib_vector_smoke.yaml", ["num_env_runners=2"])
    cluster = train_rllib.RLlibRunConfig.load("configs/rllib_cluster.yaml", [])
    assert cfg.fault_tolerance == cluster.fault_tolerance == train_rllib.default_fault_tolerance()
    assert cfg.fault_tolerance["restart_failed_env_runners"]
    with pytest.raises(SystemExit, match="unknown fault_tolerance setting"):
        train_rllib.RLlibRunConfig.load(None, ["fault_tolerance={restart_failed_runners: true}"])

    ray.init(num_cpus=3, include_dashboard=False, log_to_driver=False)
    try:
        algo = train_rllib.build_algo(cfg)
        group = algo.env_runner_group

        def pids() -> list[int]:
            return sorted(group.foreach_env_runner(lambda r: os.getpid(), local_env_runner=False))

        first = algo.train()
        before = pids()
        assert len(before) == 2 and first["fault_tolerance"]["num_remote_worker_restarts"] == 0
        victim = before[0]
        # kill one runner's process once the next iteration has started sampling
        killer = threading.Timer(0.5, os.kill, (victim, signal.SIGKILL))
        killer.start()
        steps = [first["env_runners"]["num_env_steps_sampled_lifetime"]]
        results = []
        deadline = time.time() + 240
        while time.time() < deadline:
            res = algo.train()
            results.append(res)
            steps.append(res["env_runners"]["num_env_steps_sampled_lifetime"])
            if res["fault_tolerance"]["num_remote_worker_restarts"] >= 1 and len(results) >= 2 \
                    and group.num_healthy_remote_workers() == 2:
                break
        killer.join()
        after = pids()
        assert victim not in after and len(after) == 2, (before, after)  # a new process in the dead one's place
        assert results[-1]["fault_tolerance"]["num_remote_worker_restarts"] >= 1
        assert group.num_healthy_remote_workers() == 2
        assert all(b - a >= cfg.train_batch_size for a, b in itertools.pairwise(steps)), steps  # no iteration lost
        # the restarted runner plays with the learner's current weights
        learner = algo.learner_group.get_weights()["default_policy"]
        for weights in group.foreach_env_runner(lambda r: r.module.state_dict(), local_env_runner=False):
            assert weights and all(torch.allclose(torch.as_tensor(v), torch.as_tensor(learner[k]))
                                   for k, v in weights.items())
        algo.stop()
    finally:
        ray.shutdown()

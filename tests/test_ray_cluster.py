"""The training loop on a real two-node Ray cluster (rook_env.training.ray_collection, docs/cluster.md).

The cluster: ``ROOK_RAY_ADDRESS`` when set (a cluster started outside, e.g. by .ci/run), else two nodes started
here on this machine (:class:`rook_env.training.ray_cluster.LocalCluster`: ``ray start --head`` and a second
``ray start --address=...``, one CPU and a custom resource ``node_<i>`` each, a token of its own), stopped at
the end. Checked: a head, a worker and drivers join in one authentication mode after a local Ray left a token in
``~/.ray`` (a cluster of their own, in a temporary home), and ``ray list actors`` finds the collectors and their
processes; rollouts come from collectors on both nodes and every decision the learner books is counted once (none
lost, none twice); a rollout over the lag bound is dropped; a collector killed mid-run is replaced, the log says
so and the replacement's first rollout is booked; a driver killed mid-run and resumed from its checkpoint goes on
with nothing lost or counted twice; the label workers; a whole node killed (a cluster of its own): the log says
while a collector waits for a node, and the replacement's first rollout on a new node is booked. The in-process
default never imports ray (run without Ray too). About 9 minutes on 2 shared cores."""

from __future__ import annotations

import collections
import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

pytest.importorskip("torch")
from rook_env.agents.learned.model import load_checkpoint  # noqa: E402
from rook_env.training import make_train_config, train  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# a tiny run: ~1,000 decisions per rollout, no behaviour cloning, evaluation only at the end (4 deals)
TINY = ["progress=false", "rollout_decisions=1024", "bc_steps=0", "eval_every=0", "eval_deals=4",
        "eval_opponents=[random]", "checkpoint_every=1"]


def tiny_config(run_dir, name: str, *overrides: str):
    return make_train_config(os.path.join(ROOT, "configs", "smoke.yaml"),
                             [f"run_dir={run_dir}", f"name={name}", *TINY, *overrides])


def test_the_default_config_never_imports_ray(tmp_path):
    """The in-process loop (no ray section) trains without importing ray, installed or not."""
    code = ("import sys\n"
            "from rook_env.training import make_train_config, train\n"
            f"cfg = make_train_config({os.path.join(ROOT, 'configs', 'smoke.yaml')!r}, "
            f"[{'run_dir=' + str(tmp_path)!r}, 'name=plain', 'total_decisions=600', 'rollout_decisions=256', "
            f"*{TINY!r}])\n"
            "assert cfg.ray.collectors == 0\n"
            "s = train(cfg, quiet=True)\n"
            "assert s['decisions'] >= 600 and 'ray' not in s, s\n"
            "assert 'ray' not in sys.modules, 'the in-process loop imported ray'\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=300)


def test_the_ray_section_is_checked_and_set_field_by_field(tmp_path):
    cfg = make_train_config(None, ["ray={collectors: 3, resources: {node_1: 1}}", "ray.max_lag=5"])
    assert (cfg.ray.collectors, cfg.ray.resources, cfg.ray.max_lag, cfg.ray.num_cpus) == (3, {"node_1": 1.0}, 5, 1.0)
    for override, named in (("ray.max_lag=0", "ray.max_lag"), ("ray.collectors=-1", "ray.collectors"),
                            ("ray.resources={a: 0}", "ray.resources"), ("ray.colectors=2", "ray.colectors"),
                            ("ray.num_cpus=nan", "ray.num_cpus")):
        with pytest.raises(ValueError, match=named.replace(".", r"\.")):
            make_train_config(None, [override])


def test_a_batch_travels_without_the_observation_prefix_of_the_critic_input():
    import numpy as np

    from rook_env.training.ray_collection import pack, unpack

    rng = np.random.default_rng(0)
    obs = rng.random((50, 7), dtype=np.float32)
    batch = {"obs": obs, "cin": np.concatenate([obs, rng.random((50, 3), dtype=np.float32)], axis=1),
             "act": np.arange(50), "mask": None}
    packed = pack(batch)
    assert packed["cin"] is None and unpack(packed)["cin"].shape == (50, 10)
    back = unpack(packed)
    assert sorted(back) == sorted(batch) and np.array_equal(back["cin"], batch["cin"])
    assert back["obs"].flags.writeable and back["obs"] is not obs
    other = {**batch, "cin": rng.random((50, 10), dtype=np.float32)}  # not prefixed by obs: travels whole
    assert pack(other)["cin"] is other["cin"] and np.array_equal(unpack(pack(other))["cin"], other["cin"])


def test_a_real_rollout_travels_exactly_and_far_smaller():
    import pickle

    import numpy as np
    import torch

    from rook_env import raw_env
    from rook_env.agents.learned.model import ActorCritic
    from rook_env.training import make_train_config
    from rook_env.training.collection import Collector
    from rook_env.training.ray_collection import Bits, Sparse, encode, pack, unpack

    cfg = make_train_config(None, ["num_envs=16", "rollout_decisions=600"])
    env = raw_env()
    model = ActorCritic(env.observation_space("player_0")["observation"].shape[0], env.action_space("player_0").n,
                        cfg.hidden, env.state_space.shape[0], cfg.critic_hidden).eval()
    batch = Collector(cfg, torch.device("cpu"), np.random.default_rng(0)).collect(model, 0.0)[0]
    packed = pack(batch)
    assert isinstance(packed["obs"], Sparse) and isinstance(packed["mask"], Bits)
    assert isinstance(packed["cin_rest"], Bits) and packed["cin"] is None  # the hidden cards: zeros and ones
    back = unpack(pickle.loads(pickle.dumps(packed, protocol=5)))
    assert sorted(back) == sorted(batch)
    for k, v in batch.items():  # value for value, dtype for dtype, writable
        assert v is None and back[k] is None or (back[k].dtype == v.dtype and np.array_equal(back[k], v)
                                                 and back[k].flags.writeable), k
    raw = sum(v.nbytes for v in batch.values() if v is not None)
    assert len(pickle.dumps(packed, protocol=5)) * 6 < raw
    # what does not fit a form travels as it is: dense floats, and an array with a value other than 0 and 1
    dense = np.random.default_rng(1).random((20, 30), dtype=np.float32)
    assert encode(dense) is dense or np.array_equal(encode(dense), dense)
    assert isinstance(encode(np.eye(20, dtype=np.float32) * 2), Sparse)
    assert isinstance(encode(np.eye(5, dtype=np.float32)), Bits)
    assert np.array_equal(encode(np.eye(20, dtype=np.float32) * 2).decode(), np.eye(20) * 2)


# ============================================================================== authentication (docs/cluster.md)
def test_head_worker_and_driver_join_in_one_mode_after_a_local_ray_left_a_token(tmp_path, monkeypatch):
    """docs/cluster.md's commands after a private local Ray (train.py --config configs/ray_smoke.yaml) has written
    ~/.ray/auth_token (HOME is a temporary folder here; the real ~/.ray is not touched). The head, started with
    RAY_AUTH_MODE unset, turns token authentication on because it finds the token; the worker's `ray start
    --address` with the page's RAY_AUTH_MODE=token joins it; the page's driver command (train.py --ray.address)
    collects on both nodes; and rook_env's driver joins with RAY_AUTH_MODE unset too (match_auth_mode: the
    head's rule), where Ray alone would refuse it."""
    pytest.importorskip("ray")
    from rook_env.training.ray_cluster import AUTH_VARS, LocalCluster, match_auth_mode

    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("RAY_USAGE_STATS_ENABLED", "0")
    for k in AUTH_VARS:
        monkeypatch.setenv(k, "")  # restored afterwards, whatever match_auth_mode sets here
        monkeypatch.delenv(k)
    ray_bin = os.path.join(os.path.dirname(sys.executable), "ray")
    subprocess.run([ray_bin, "get-auth-token", "--generate"], check=True, capture_output=True, timeout=120)
    token_file = home / ".ray" / "auth_token"
    token = token_file.read_text()
    assert len(token.strip()) >= 32

    def env(**extra: str) -> dict:
        return {**os.environ, **extra}

    # the head as the page starts it: the dashboard on (what `ray list` asks), in this environment as it is
    with LocalCluster(nodes=1, cpus=1, own_token=False, dashboard=True) as cluster:
        assert os.environ.get("RAY_AUTH_MODE") is None, "a cluster in the caller's environment changed it"
        with open(cluster.logs[0]) as fh:
            head_log = fh.read()
        assert "Token authentication is enabled" in head_log, head_log[-2000:]
        cluster.add_node({"RAY_AUTH_MODE": "token"})  # the worker: `RAY_AUTH_MODE=token ray start --address=...`
        # the page's driver command, in the page's environment; while it runs, the page's `ray list actors` finds
        # its collectors, one on each node, and each one's PID is its process (ray::CollectorWorker)
        out = tmp_path / "driver.log"
        with open(out, "w") as fh:
            driver = subprocess.Popen(
                [sys.executable, "train.py", "--config", "configs/ray_smoke.yaml", *[f"--set={o}" for o in TINY],
                 f"--set=run_dir={tmp_path}", "--set=name=token", "--set=total_decisions=1000000",
                 f"--ray.address={cluster.address}"],
                cwd=ROOT, env=env(RAY_AUTH_MODE="token"), stdout=fh, stderr=subprocess.STDOUT)
        try:
            deadline = time.time() + 300
            while "collectors started" not in out.read_text():
                assert driver.poll() is None and time.time() < deadline, out.read_text()[-3000:]
                time.sleep(0.5)
            assert "ray: 2 collectors started on 2 node(s)" in out.read_text(), out.read_text()[-3000:]
            listed = subprocess.run(
                [ray_bin, "list", "actors", f"--address={cluster.address}", "--filter", "class_name=CollectorWorker",
                 "--format", "json"], check=False, env=env(RAY_AUTH_MODE="token"), capture_output=True, text=True,
                timeout=120)
            assert listed.returncode == 0, listed.stdout[-2000:] + listed.stderr[-3000:]
            actors = json.loads(listed.stdout)
            assert sorted(a["name"].split("-collector-")[1] for a in actors) == ["0-0", "1-0"], actors
            assert all(a["name"].startswith("token-") and a["state"] == "ALIVE" for a in actors), actors
            assert len({a["node_id"] for a in actors}) == 2, actors
            for a in actors:
                ps = subprocess.run(["ps", "-o", "args=", "-p", str(a["pid"])], check=False, capture_output=True,
                                    text=True)
                assert ps.stdout.startswith("ray::CollectorWorker"), (a, ps.stdout)
        finally:
            driver.send_signal(signal.SIGINT)  # Ctrl-C: the run saves last.pt and says how to resume
            rc = driver.wait(timeout=300)
        assert rc == 130 and "resume with: python train.py --resume" in out.read_text(), out.read_text()[-3000:]
        # rook_env's driver with RAY_AUTH_MODE unset: it takes the head's rule
        code = ("import os, ray\n"
                "from rook_env.training.ray_collection import connect\n"
                f"connect({cluster.address!r})\n"
                "assert os.environ['RAY_AUTH_MODE'] == 'token'\n"
                "print('alive', sum(n['Alive'] for n in ray.nodes()))\n")
        joined = subprocess.run([sys.executable, "-c", code], check=False, cwd=ROOT, env=env(), capture_output=True,
                                text=True, timeout=180)
        assert joined.returncode == 0 and "alive 2" in joined.stdout, joined.stdout + joined.stderr[-3000:]
    assert token_file.read_text() == token, "the token was replaced"
    # the rule itself: a token turns the mode on only when it is unset
    assert match_auth_mode() == "token" and os.environ["RAY_AUTH_MODE"] == "token"
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    assert match_auth_mode() == "disabled"
    monkeypatch.delenv("RAY_AUTH_MODE")
    token_file.unlink()
    assert match_auth_mode() is None and "RAY_AUTH_MODE" not in os.environ


# ============================================================================================ the cluster
@pytest.fixture(scope="module")
def cluster():
    """The cluster's address, with this process connected to it as a driver. A cluster started here has a token of
    its own, which LocalCluster hands to this process and its train.py subprocesses (RAY_AUTH_TOKEN_PATH); .ci/run
    exports the same variables for the cluster it starts."""
    ray = pytest.importorskip("ray")
    from rook_env.training.ray_cluster import LocalCluster, match_auth_mode
    from rook_env.training.ray_collection import NAMESPACE

    given = os.environ.get("ROOK_RAY_ADDRESS")
    local = None if given else LocalCluster(nodes=2, cpus=1).start()
    address = given or local.address
    try:
        match_auth_mode()  # as rook_env's drivers join (ray_collection.connect)
        ray.init(address=address, namespace=NAMESPACE, log_to_driver=False, _node_ip_address="127.0.0.1")
        deadline = time.time() + 60
        while len(alive_nodes()) < 2:
            assert time.time() < deadline, f"the cluster at {address} has fewer than two live nodes"
            time.sleep(1)
        yield address
    finally:
        ray.shutdown()
        if local is not None:
            local.stop()


def alive_nodes() -> set[str]:
    import ray

    return {n["NodeID"] for n in ray.nodes() if n["Alive"]}


def rollout_id(meta: dict) -> tuple:
    return meta["session"], meta["collector"], meta["incarnation"], meta["seq"]


def check_books(summary: dict, max_lag: int) -> list[dict]:
    """The learner's numbers add up: every iteration booked one rollout, counted once, none missing; the
    checkpoint holds the same. Returns the history."""
    last = load_checkpoint(summary["paths"]["last"])
    history = last["history"]
    assert [r["iteration"] for r in history] == list(range(1, len(history) + 1))
    assert last["decisions"] == summary["decisions"] == sum(r["rollout"]["decisions"] for r in history)
    total = 0
    for r in history:  # the history's running count is the sum of the rollouts booked
        total += r["rollout"]["decisions"]
        assert r["decisions"] == total
        assert 0 <= r["rollout"]["lag"] <= max_lag
    ids = [rollout_id(r["rollout"]) for r in history]
    assert len(set(ids)) == len(ids), "a rollout was booked twice"
    return history


def check_none_skipped(history: list[dict], report: dict, session: str) -> None:
    """Each collector's rollouts of this session were booked or dropped in the order it made them, none skipped
    (only the ones in flight when a collector died or the run ended were never received); the ledger counts the
    whole run's rollouts (a resumed run's, those of the sessions before it too)."""
    seqs = collections.defaultdict(set)
    for r in history:
        if r["rollout"]["session"] == session:
            seqs[r["rollout"]["collector"], r["rollout"]["incarnation"]].add(r["rollout"]["seq"])
    for d in (d for d in report["dropped"] if d["session"] == session):
        key = d["collector"], d["incarnation"]
        assert d["seq"] not in seqs[key], "a rollout was both dropped and booked"
        seqs[key].add(d["seq"])
    for key, s in seqs.items():
        assert s == set(range(len(s))), f"collector {key}: rollouts received {sorted(s)}: some skipped"
    assert report["booked_rollouts"] == len(history)


def test_trains_across_two_nodes_and_counts_each_decision_once(cluster, tmp_path):
    cfg = tiny_config(tmp_path, "two_nodes", "total_decisions=6000", "ray.collectors=2", f"ray.address={cluster}")
    summary = train(cfg, quiet=True)
    history = check_books(summary, cfg.ray.max_lag)
    nodes = {r["rollout"]["node"] for r in history}
    assert nodes == alive_nodes() and len(nodes) == 2, "rollouts did not come from collectors on both nodes"
    assert {r["rollout"]["collector"] for r in history} == {0, 1}
    report = summary["ray"]
    assert report["booked_decisions"] == summary["decisions"] and report["collectors_replaced"] == 0
    check_none_skipped(history, report, history[0]["rollout"]["session"])


def test_a_rollout_over_the_lag_bound_is_dropped_not_booked(cluster, tmp_path):
    # two collectors deliver in turn: after the first round each rollout is 2 updates old, over max_lag=1
    cfg = tiny_config(tmp_path, "lag", "total_decisions=10000", "ray.collectors=2", "ray.max_lag=1",
                      f"ray.address={cluster}")
    summary = train(cfg, quiet=True)
    history = check_books(summary, max_lag=1)
    report = summary["ray"]
    assert report["dropped_rollouts"] >= 1 and all(d["lag"] > 1 for d in report["dropped"])
    assert report["booked_decisions"] == summary["decisions"]
    check_none_skipped(history, report, history[0]["rollout"]["session"])


def test_a_killed_collector_is_replaced_and_the_run_goes_on(cluster, tmp_path, capfd):
    import ray
    from rook_env.training.ray_collection import NAMESPACE

    cfg = tiny_config(tmp_path, "kill", "total_decisions=200000", "ray.collectors=2", f"ray.address={cluster}")
    last = os.path.join(str(tmp_path), "kill", "last.pt")
    seen = {}

    def history() -> list[dict]:
        return load_checkpoint(last)["history"] if os.path.exists(last) else []

    def kill_collector_0_then_stop() -> None:
        """Kill collector 0 once two iterations are booked (mid-run); once its replacement has delivered a
        rollout, end the run at the end of its iteration (a replacement takes seconds to start: the run must
        not end before)."""
        deadline = time.time() + 150
        while time.time() < deadline and len(history()) < 2:
            time.sleep(0.2)
        names = [a["name"] for a in ray.util.list_named_actors(all_namespaces=True)
                 if a["namespace"] == NAMESPACE and a["name"].startswith("kill-")
                 and a["name"].endswith("-collector-0-0")]
        ray.kill(ray.get_actor(names[0], namespace=NAMESPACE))
        seen["killed_at"] = len(history())
        while time.time() < deadline:
            if any(r["rollout"]["collector"] == 0 and r["rollout"]["incarnation"] == 1 for r in history()):
                seen["replacement_delivered"] = True
                break
            time.sleep(0.2)
        cfg.total_decisions = 1  # the loop stops after the iteration in progress (a test's way to end it early)

    watcher = threading.Thread(target=kill_collector_0_then_stop, daemon=True)
    watcher.start()
    summary = train(cfg)
    watcher.join()
    err = capfd.readouterr().err
    assert seen.get("replacement_delivered"), err
    assert summary["stop_reason"] == "total_decisions" and summary["iterations"] > seen["killed_at"]
    report = summary["ray"]
    assert report["collectors_replaced"] == 1
    assert "collector 0 (incarnation 0) died" in err and "replaced by a new collector" in err
    history = check_books(summary, cfg.ray.max_lag)
    check_none_skipped(history, report, history[0]["rollout"]["session"])
    # the replacement started on the learner's weights of then: its first rollout was booked, not dropped for lag
    first = next(r["rollout"] for r in history if (r["rollout"]["collector"], r["rollout"]["incarnation"]) == (0, 1))
    assert first["seq"] == 0 and "collector 0 (incarnation 1) started on node" in err


def test_a_killed_driver_resumes_from_its_checkpoint_with_nothing_lost_or_counted_twice(cluster, tmp_path):
    run = os.path.join(str(tmp_path), "driver")
    last = os.path.join(run, "last.pt")
    args = [sys.executable, "train.py", "--config", "configs/smoke.yaml", *[f"--set={o}" for o in TINY],
            f"--set=run_dir={tmp_path}", "--set=name=driver", "--set=total_decisions=50000",
            "--set=ray.collectors=2", f"--set=ray.address={cluster}"]
    driver = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 150
        while not (os.path.exists(last) and load_checkpoint(last)["iteration"] >= 3):
            assert driver.poll() is None and time.time() < deadline, "the driver did not reach iteration 3"
            time.sleep(0.2)
    finally:
        driver.send_signal(signal.SIGKILL)  # no Ctrl-C handling: the process is gone
        driver.wait()
    saved = load_checkpoint(last)
    # Resume for a few more iterations (its collectors wait for the dead driver's to be ended by Ray).
    target = saved["decisions"] + 3000
    base = saved["config"]
    cfg = make_train_config(None, [f"total_decisions={target}"], base=base)
    summary = train(cfg, resume=last, quiet=True)
    history = check_books(summary, cfg.ray.max_lag)
    assert history[:saved["iteration"]] == saved["history"], "the resumed run changed what was booked before"
    assert summary["decisions"] >= target and summary["iterations"] > saved["iteration"]
    sessions = [r["rollout"]["session"] for r in history]
    first, second = sessions[0], sessions[-1]
    assert first != second and set(sessions) == {first, second}
    resumed = history[saved["iteration"]:]
    assert all(r["rollout"]["session"] == second for r in resumed)
    assert summary["ray"]["booked_decisions"] == summary["decisions"]  # the ledger covers the run before the resume
    assert summary["ray"]["sessions"] == 2
    check_none_skipped(history, summary["ray"], second)


# ==================================================================================== search labels on Ray
# rook_env.training.labels.ray_workers: label workers as Ray actors, the shards written by the driver. The heuristic
# base with 2 worlds per decision keeps a hand well under a second.
LABELS = {"base": "heuristic", "samples": 2}


def test_the_label_shards_partition_the_hands():
    from rook_env.training.labels.ray_workers import label_on_ray, shard_plan
    from rook_env.training.labels.search import label_hands

    plan = shard_plan("out", hands=23, seed=5, shard_hands=10)
    assert [(os.path.basename(p), s, n) for p, s, n in plan] == [
        ("shard_5_00000.npz", 5, 10), ("shard_5_00001.npz", 15, 10), ("shard_5_00002.npz", 25, 3)]
    with pytest.raises(ValueError, match="shard_hands"):
        shard_plan("out", hands=10, seed=1, shard_hands=0)
    with pytest.raises(ValueError, match="workers"):
        label_on_ray(label_hands, "out", hands=10, workers=0)


def read_shards(out) -> dict[str, dict]:
    import numpy as np

    return {name: dict(np.load(os.path.join(out, name))) for name in sorted(os.listdir(out))}


def check_each_hand_once(shards: dict[str, dict], first: int, hands: int) -> None:
    """Every hand of the run is in exactly one shard (all its decisions there), none missing, none twice."""
    import numpy as np

    owner: dict[int, str] = {}
    for name, rec in shards.items():
        for h in np.unique(rec["hand"]).tolist():
            assert h not in owner, f"hand {h} labelled in {owner[h]} and in {name}"
            owner[h] = name
    assert sorted(owner) == list(range(first, first + hands))


def test_search_labels_come_from_workers_on_both_nodes_as_the_single_process_cli_writes_them(cluster, tmp_path):
    import numpy as np

    from rook_env.training import cli
    from rook_env.training.labels import search as search_labels
    from rook_env.training.labels.ray_workers import label_on_ray

    ledger = label_on_ray(search_labels.label_hands, str(tmp_path / "ray"), hands=40, seed=11, shard_hands=5,
                          workers=2, address=cluster, log=lambda line: None, **LABELS)
    assert set(ledger["nodes"]) == alive_nodes() and len(ledger["nodes"]) == 2, ledger["nodes"]
    shards = read_shards(tmp_path / "ray")
    assert len(shards) == ledger["written"] == ledger["shards"] == 8 and ledger["skipped"] == 0
    check_each_hand_once(shards, 11, 40)
    decisions = sum(len(r["obs"]) for r in shards.values())
    assert ledger["hands"] == sum(n["hands"] for n in ledger["nodes"].values()) == 40
    assert ledger["decisions"] == sum(n["decisions"] for n in ledger["nodes"].values()) == decisions
    assert ledger["searched"] == sum(int(np.isfinite(r["q"]).any(axis=1).sum()) for r in shards.values()) > 0
    # the same shards, byte for byte in their arrays, as the single-process CLI writes (its first two here)
    cli.main(["search-labels", "--out", str(tmp_path / "one"), "--hands", "10", "--seed", "11", "--shard-hands", "5",
              "--base", LABELS["base"], "--samples", str(LABELS["samples"])])
    alone = read_shards(tmp_path / "one")
    assert sorted(alone) == ["shard_11_00000.npz", "shard_11_00001.npz"]
    for name, rec in alone.items():
        assert sorted(rec) == sorted(shards[name])
        for k in rec:
            assert np.array_equal(rec[k], shards[name][k], equal_nan=True), (name, k)
    # a rerun finds every shard written and labels nothing
    again = label_on_ray(search_labels.label_hands, str(tmp_path / "ray"), hands=40, seed=11, shard_hands=5,
                         workers=2, address=cluster, **LABELS)
    assert (again["skipped"], again["written"]) == (8, 0)


def test_a_killed_label_worker_is_replaced_and_its_shard_redone(cluster, tmp_path):
    import ray

    from rook_env.training.labels.ray_workers import label_on_ray
    from rook_env.training.labels.search import label_hands
    from rook_env.training.ray_collection import NAMESPACE

    out = tmp_path / "labels"
    lines: list[str] = []
    seen = {}

    def kill_worker_0() -> None:
        """Kill worker 0 once the first shard is written (mid-run: both workers have a shard in flight)."""
        deadline = time.time() + 120
        while time.time() < deadline and not (out.is_dir() and any(p.suffix == ".npz" and ".tmp" not in p.name
                                                                   for p in out.iterdir())):
            time.sleep(0.05)
        names = [a["name"] for a in ray.util.list_named_actors(all_namespaces=True)
                 if a["namespace"] == NAMESPACE and a["name"].startswith("labels-")
                 and a["name"].endswith("-worker-0-0")]
        seen["written_before"] = sum(".tmp" not in p.name for p in out.iterdir())
        ray.kill(ray.get_actor(names[0], namespace=NAMESPACE))

    watcher = threading.Thread(target=kill_worker_0, daemon=True)
    watcher.start()
    ledger = label_on_ray(label_hands, str(out), hands=120, seed=3, shard_hands=10, workers=2, address=cluster,
                          log=lines.append, **{**LABELS, "samples": 8})
    watcher.join()
    assert seen["written_before"] < 12, "the worker was killed after the run ended"
    assert ledger["workers_replaced"] == 1 and len(ledger["redone"]) == 1, ledger
    died = next(i for i, line in enumerate(lines) if "label worker 0 (incarnation 0) died" in line)
    assert ledger["redone"][0] in lines[died] and "replaced by a new worker" in lines[died]
    assert any("(worker 0 on node" in line for line in lines[died + 1:]), "the replacement labelled nothing"
    written = [line for line in lines if "decisions" in line]
    assert sum(ledger["redone"][0] in line for line in written) == 1, "the redone shard was not written once"
    shards = read_shards(out)
    assert len(shards) == ledger["written"] == 12
    check_each_hand_once(shards, 3, 120)
    assert ledger["decisions"] == sum(len(r["obs"]) for r in shards.values())


def test_network_labels_come_from_workers_on_both_nodes_as_the_processes_write_them(cluster, tmp_path):
    """The label rounds' labels (rook_env.training.labels.counterfactual) on the cluster: the same shards as the
    processes on this machine write, from workers on both nodes, the network travelling as bytes; a round runs there
    too."""
    import numpy as np

    from rook_env.training.labels.counterfactual import write_labels as write_game_labels
    from rook_env.training.labels.rounds import RoundsConfig, run_rounds

    def write_labels(network, out, **kwargs):
        return write_game_labels("partnership", out, network=network, **kwargs)

    network = os.path.join(ROOT, "rook_env", "agents", "checkpoints", "ppo_default.pt")
    small = dict(hands=8, seed=7, shard_hands=2, label_prob=0.5, tables=64)
    lines: list[str] = []
    for opponent in ("self", "heuristic"):
        on_ray, alone = tmp_path / f"ray_{opponent}", tmp_path / f"one_{opponent}"
        n = write_labels(network, str(on_ray), opponent=opponent, workers=2, ray_address=cluster, log=lines.append,
                         **small)
        write_labels(network, str(alone), opponent=opponent, processes=1, **small)
        shards, expected = read_shards(on_ray), read_shards(alone)
        assert sorted(shards) == sorted(expected) == sorted(f"shard_{7 + k}_{k:05d}.npz" for k in range(4))
        for name, rec in expected.items():
            assert sorted(rec) == sorted(shards[name])
            for k in rec:
                assert np.array_equal(rec[k], shards[name][k], equal_nan=True), (opponent, name, k)
        assert n == sum(len(r["obs"]) for r in shards.values()) > 0
        assert write_labels(network, str(on_ray), opponent=opponent, workers=2, ray_address=cluster, **small) == 0
    nodes = {line.split(" on node ")[1].rstrip(")") for line in lines if " on node " in line}
    assert len(nodes) == 2 and {n[:8] for n in alive_nodes()} == nodes, lines

    lines.clear()
    cfg = RoundsConfig(network=network, out=str(tmp_path / "rounds"), rounds=1, self_hands=4, heuristic_hands=4,
                       shard_hands=2, label_prob=0.5, tables=64, epochs=1, threads=1, seed=500, workers=2,
                       ray_address=cluster)
    (summary,) = run_rounds(cfg, log=lines.append)
    assert os.path.exists(summary["network"]) and sum(" on node " in line for line in lines) == 4


# ========================================================================= a whole node dies (a cluster of its own)
def test_a_dead_node_leaves_the_run_short_the_log_says_so_and_a_new_nodes_collector_is_booked(tmp_path, capfd,
                                                                                               monkeypatch):
    """A two-node cluster of its own (its nodes killed here): node 1's process group is killed with SIGKILL mid-run.
    The run goes on with the collector on node 0 while the lost one's replacement waits for a node, and the log says so
    periodically (every WAIT_LOG_SECONDS, shortened here); a node joins, the replacement starts there on the
    learner's weights of then, and its first rollout is booked (not dropped for its lag, however many updates the
    outage lasted)."""
    ray = pytest.importorskip("ray")
    from rook_env.training import ray_collection
    from rook_env.training.ray_cluster import LocalCluster

    if ray.is_initialized():  # the module's cluster: its tests reconnect through train (ray_collection.connect)
        ray.shutdown()
    monkeypatch.setattr(ray_collection, "WAIT_LOG_SECONDS", 3.0)
    last = os.path.join(str(tmp_path), "outage", "last.pt")
    seen = {}

    def history() -> list[dict]:
        return load_checkpoint(last)["history"] if os.path.exists(last) else []

    with LocalCluster(nodes=2, cpus=1) as own:
        cfg = tiny_config(tmp_path, "outage", "total_decisions=10000000", "ray.collectors=2", "ray.max_lag=4",
                          f"ray.address={own.address}")

        def outage() -> None:
            deadline = time.time() + 400
            while time.time() < deadline and not {0, 1} <= {r["rollout"]["collector"] for r in history()}:
                time.sleep(0.2)  # both collectors have delivered
            node_1 = next(n["NodeID"] for n in ray.nodes() if n["Alive"] and "node_1" in n["Resources"])
            seen["lost"] = next(r["rollout"]["collector"] for r in history() if r["rollout"]["node"] == node_1)
            seen["killed_at"] = len(history())
            os.killpg(own.procs[1].pid, signal.SIGKILL)  # node 1: its ray start, raylet and agents
            while time.time() < deadline and len(history()) < seen["killed_at"] + 12:
                time.sleep(0.2)  # the run goes on with one collector meanwhile
            seen["node_added_at"] = len(history())
            own.add_node()
            while time.time() < deadline and not any(r["rollout"]["collector"] == seen["lost"] and r["iteration"] >
                                                     seen["node_added_at"] for r in history()):
                time.sleep(0.2)
            cfg.total_decisions = 1  # the loop stops after the iteration in progress

        watcher = threading.Thread(target=outage, daemon=True)
        watcher.start()
        try:
            summary = train(cfg)
        finally:
            watcher.join()
            ray.shutdown()
    err = capfd.readouterr().err
    history = check_books(summary, cfg.ray.max_lag)
    report = summary["ray"]
    assert report["dropped_rollouts"] == 0 and report["collectors_replaced"] >= 1, (report, err[-3000:])
    lost = seen["lost"]
    after = history[seen["killed_at"]:seen["node_added_at"]]
    assert after and all(r["rollout"]["collector"] != lost for r in after[2:]), "a collector played on a dead node"
    died = err.index(f"collector {lost} (incarnation 0) died")
    assert "1 of 2 collectors waiting for a node with 1 CPU free" in err[died:], err[-3000:]
    # the replacement on the new node: its first rollout played the weights of when it started and was booked
    new = [r["rollout"] for r in history[seen["node_added_at"]:] if r["rollout"]["collector"] == lost]
    assert new and new[0]["seq"] == 0 and new[0]["incarnation"] >= 1 and new[0]["lag"] <= cfg.ray.max_lag
    assert new[0]["version"] >= seen["node_added_at"] - 1, "the replacement played the weights of the outage's start"
    assert f"collector {lost} (incarnation {new[0]['incarnation']}) started on node" in err

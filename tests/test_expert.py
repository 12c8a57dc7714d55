"""Expert iteration (rook_env.training.expert): the distillation loss, the config's exit section and its
errors, the label shards, and train.py with exit on (offline shards written here), resumed exactly."""

from __future__ import annotations

import math
import os
import time

import numpy as np
import pytest
import torch

from rook_env.agents.learned.model import ActorCritic, MaskedCategorical, load_checkpoint
from rook_env.training import cli, config, expert
from rook_env.training.labels.search import label_hands

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMOKE = os.path.join(ROOT, "configs", "smoke.yaml")
NAN = float("nan")


class FixedNet:
    """A stand-in network: fixed logits and values, so the loss can be worked out by hand."""

    def __init__(self, logits: list[list[float]], values: list[float]) -> None:
        self.logits, self.values = torch.tensor(logits), torch.tensor(values)

    def dist(self, obs, mask):
        return MaskedCategorical(self.logits, mask)

    def value(self, cin):
        return self.values


def test_search_target_is_a_softmax_over_the_tried_cards_only():
    t = expert.search_target(torch.tensor([[10.0, 0.0, NAN, -10.0]]), temperature=10.0)
    e = math.e
    assert torch.allclose(t, torch.tensor([[e, 1.0, 0.0, 1 / e]]) / (e + 1 + 1 / e))


def test_distill_loss_hand_computed():
    # row 0: legal cards 0, 1, 2; search tried 0 (q 10) and 1 (q 0); the policy is (1/2, 1/4, 1/4), its mode card 0
    # (search's best). Row 1: the same policy, but search rated card 1 best: the mode is wrong.
    ln2 = math.log(2)
    net = FixedNet([[ln2, 0.0, 0.0, 5.0], [ln2, 0.0, 0.0, 5.0]], [0.3, -0.2])
    b = {"obs": torch.zeros(2, 3), "mask": torch.tensor([[True, True, True, False]] * 2),
         "q": torch.tensor([[10.0, 0.0, NAN, NAN], [0.0, 10.0, NAN, NAN]]),
         "outcome": torch.tensor([80.0, -40.0]), "cin": torch.zeros(2, 3)}
    out = expert.distill_loss(net, b, temperature=10.0, reward_scale=0.01, vf_coef=0.5)
    hi, lo = math.e / (math.e + 1), 1 / (math.e + 1)  # softmax(q / 10) over the tried pair
    ce0 = hi * ln2 + lo * 2 * ln2  # -(t0 log 1/2 + t1 log 1/4)
    ce1 = lo * ln2 + hi * 2 * ln2
    v = 0.5 * ((0.3 - 0.8) ** 2 + (-0.2 + 0.4) ** 2) / 2
    assert out["pi_loss"].item() == pytest.approx((ce0 + ce1) / 2, rel=1e-6)
    assert out["v_loss"].item() == pytest.approx(v, rel=1e-6)
    assert out["loss"].item() == pytest.approx((ce0 + ce1) / 2 + 0.5 * v, rel=1e-6)
    assert out["accuracy"].item() == 0.5
    del b["cin"]  # records without a critic input: no value loss
    assert expert.distill_loss(net, b, 10.0, 0.01, 0.5)["v_loss"].item() == 0.0


@pytest.mark.parametrize("override, message", [
    ("exit.source=bogus", "exit.source"),
    ("exit.source=offline", "exit.labels"),
    ("exit.labels=/no/such/folder", "exit.labels"),
    ("exit.coef=0", "exit.coef"),
    ("exit.temperature=-1", "exit.temperature"),
    ("exit.batch=0", "exit.batch"),
    ("exit.seed=-1", "exit.seed"),
    ("exit.tables=0", "exit.tables"),
    ("exit.min_gap=-1", "exit.min_gap"),
    ("exit.min_gap=nan", "exit.min_gap"),
    ("exit.kl_coef=-0.5", "exit.kl_coef"),
    ("exit.kl_coef=1", "exit.kl_coef"),  # without min_gap: nothing to hold
    ("exit.worlds=gaussian", "exit.worlds"),
    ("exit.worlds=/no/such/holders.npz", "exit.worlds"),
])
def test_exit_config_errors_name_the_field(override, message):
    with pytest.raises(ValueError, match=message):
        config.make_train_config(SMOKE, ["exit.source=online", override])


# expert iteration on clear choices only: the others held at the initial network by a KL
CLEAR_CHOICES = ["exit.source=online", "exit.min_gap=40", "exit.kl_coef=1", "exit.temperature=1",
                 f"init_checkpoint={os.path.join(ROOT, 'rook_env', 'agents', 'checkpoints', 'ppo_default.pt')}"]


def test_exit_kl_needs_the_initial_network():
    with pytest.raises(ValueError, match="exit.kl_coef.*init_checkpoint"):
        config.make_train_config(SMOKE, ["exit.source=online", "exit.min_gap=40", "exit.kl_coef=1"])
    cfg = config.make_train_config(SMOKE, CLEAR_CHOICES)
    assert cfg.exit.min_gap == 40 and cfg.exit.kl_coef == 1 and cfg.init_checkpoint


def test_exit_config_errors_for_the_game_and_the_buffer():
    with pytest.raises(ValueError, match="exit.batch"):
        config.make_train_config(SMOKE, ["exit.source=online", "exit.batch=100", "exit.buffer=10"])
    with pytest.raises(ValueError, match="exit.source.*search agent, which does not play game='call_partner'"):
        config.make_train_config(os.path.join(ROOT, "configs", "call_partner_smoke.yaml"), ["exit.source=online"])
    assert config.make_train_config(SMOKE).exit.source == ""  # off by default


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    """Two hands played by search on every seat, as one shard."""
    folder = tmp_path_factory.mktemp("labels")
    rec = label_hands(2, 7_300_000, samples=4)
    np.savez_compressed(folder / "shard_7300000_00000.npz", **rec)
    return str(folder), rec


def test_label_records_and_the_labelled_subset(shards):
    rec = shards[1]
    n = len(rec["obs"])
    assert rec["cin"].shape == (n, 788) and set(np.unique(rec["hand"])) == {7_300_000, 7_300_001}
    tried = np.isfinite(rec["q"])
    assert (tried <= rec["mask"]).all()  # search values legal cards only
    assert (rec["action"][tried.any(1)] >= 0).all()
    sub = expert.labelled(rec, critic_dim=788)
    assert len(sub["q"]) == int(tried.any(1).sum()) > 0 and "cin" in sub
    assert "cin" not in expert.labelled(rec, critic_dim=100)  # a critic input that does not fit is dropped


def test_bad_shards_are_named(tmp_path):
    with pytest.raises(ValueError, match="no label shards"):
        expert.shard_paths(str(tmp_path))
    (tmp_path / "shard_1_00000.npz").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="shard_1_00000.npz"):
        expert.read_shards(expert.shard_paths(str(tmp_path)))


def test_train_py_with_exit_on_and_an_exact_resume(shards, tmp_path):
    folder, rec = shards
    common = ["--set", f"run_dir={tmp_path}", "--set", "progress=false", "--set", "bc_steps=10", "--set", "bc_hands=4",
              "--set", "eval_deals=4", "--set", "eval_every=0", "--set", "rollout_decisions=1024",
              "--set", "checkpoint_every=1", "--set", "exit.source=offline", "--set", f"exit.labels={folder}",
              "--set", "exit.batch=32"]
    assert cli.main(["--config", SMOKE, "--set", "name=straight", "--set", "total_decisions=3000", *common]) == 0
    straight = load_checkpoint(os.path.join(tmp_path, "straight", "last.pt"))
    hist = straight["history"]
    assert len(hist) >= 3
    n_labelled = int(np.isfinite(rec["q"]).any(1).sum())
    assert all(h["label_buffer"] == n_labelled for h in hist)
    assert all(math.isfinite(h["exit_pi_loss"]) and h["exit_v_loss"] > 0 for h in hist)
    # cut after one iteration, resumed to the same total: the same history and weights
    assert cli.main(["--config", SMOKE, "--set", "name=cut", "--set", "total_decisions=1000", *common]) == 0
    assert cli.main(["--resume", os.path.join(tmp_path, "cut", "last.pt"), "--set", "total_decisions=3000",
                     "--set", "progress=false"]) == 0
    resumed = load_checkpoint(os.path.join(tmp_path, "cut", "last.pt"))
    keys = ("decisions", "pg_loss", "exit_pi_loss", "exit_v_loss")
    assert [[h[k] for k in keys] for h in resumed["history"]] == [[h[k] for k in keys] for h in hist]
    assert all(torch.equal(straight["model"][k], resumed["model"][k]) for k in straight["model"])


def test_online_labels_flow_from_the_worker_process():
    cfg = config.make_train_config(SMOKE, ["exit.source=online", "exit.samples=4", "exit.seed=7400000"])
    model = ActorCritic(583, 58, [16], 788)
    source = expert.make_label_source(cfg, model, {})
    try:
        got = source.labels(model.actor.state_dict(), 10_000)  # the worker waits for its first weights
        for _ in range(600):
            if got is not None:
                break
            time.sleep(0.5)
            got = source.labels(None, 10_000)
        assert got is not None and len(got["q"]) > 0 and np.isfinite(got["q"]).any(1).all()
        assert got["cin"].shape[1] == 788
    finally:
        source.close()
    assert not source.proc.is_alive()


def test_exit_configs_load():
    for name, source in (("exit_smoke", "online"),):
        cfg = config.make_train_config(os.path.join(ROOT, "configs", f"{name}.yaml"))
        assert cfg.name == name and cfg.exit.source == source


def test_clear_choices_keeps_only_decisions_with_a_clear_best_card():
    from rook_env.training.expert import clear_choices

    nan = np.nan
    q = np.array([[10.0, 5.0, nan],    # best by 5
                  [30.0, nan, 2.0],    # best by 28
                  [nan, 7.0, nan],     # one tried card: nothing to choose
                  [nan, nan, nan]],    # not searched
                 np.float32)
    assert clear_choices(q, 0).tolist() == [True, True, True, False]
    assert clear_choices(q, 5).tolist() == [True, True, False, False]
    assert clear_choices(q, 20).tolist() == [False, True, False, False]


def test_hold_unclear_clears_the_unclear_choices_and_the_loop_holds_them():
    """The one clear-choice filter of the offline CLI and the loop: unclear searched decisions lose their values
    (not distilled) and, in the loop, go to the held buffer (the KL to the initial network) with obs and mask."""
    q = np.array([[10.0, 5.0, NAN], [50.0, NAN, 2.0], [NAN, 7.0, NAN], [NAN, NAN, NAN]], np.float32)
    rec = {"obs": np.arange(4, dtype=np.float32)[:, None], "mask": np.ones((4, 3), bool), "q": q,
           "outcome": np.zeros(4, np.float32)}
    same, none = expert.hold_unclear(rec, 0)
    assert same is rec and not none.any()
    out, unclear = expert.hold_unclear(rec, 40)
    assert unclear.tolist() == [True, False, True, False]
    assert np.isnan(out["q"][unclear]).all() and np.array_equal(out["q"][1], q[1], equal_nan=True)
    assert np.array_equal(rec["q"], q, equal_nan=True)  # the caller's records untouched
    ex = expert.ExpertIteration.__new__(expert.ExpertIteration)  # the loop's buffers without a label source
    ex.cfg = config.make_train_config(SMOKE, CLEAR_CHOICES)
    ex.buffer, ex.held, ex.ref = expert.LabelBuffer(10), expert.LabelBuffer(10), object()
    ex.add({k: v[:3] for k, v in rec.items()})  # searched decisions, as the sources hand them over
    assert ex.buffer.data["obs"][:, 0].tolist() == [1.0] and ex.held.data["obs"][:, 0].tolist() == [0.0, 2.0]
    assert set(ex.held.data) == {"obs", "mask"}

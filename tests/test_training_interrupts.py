"""Runs that do not reach their end still leave an agent to evaluate (agent.pt from best.pt on Ctrl-C and on
a crash, or a message saying there is none yet), and max_minutes is the run's budget across resumes."""

from __future__ import annotations

import os

import pytest

torch = pytest.importorskip("torch")
from rook_env.agents.learned import PPOAgent  # noqa: E402
from rook_env.agents.learned.model import load_checkpoint  # noqa: E402
from rook_env.training import loop  # noqa: E402
from rook_env.training.config import make_train_config  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMOKE = os.path.join(ROOT, "configs", "smoke.yaml")


def _tiny(tmp_path, name, *extra):
    return make_train_config(SMOKE, [f"run_dir={tmp_path}", f"name={name}", "progress=false", "bc_steps=0",
                                     "eval_deals=2", "eval_every=1", "rollout_decisions=1024", "checkpoint_every=1",
                                     "total_decisions=3000", *extra])


def _fail_in_update(monkeypatch, number: int, exc: BaseException) -> None:
    """Make the ``number``-th PPO update raise ``exc`` (Ctrl-C or a crash in the middle of an iteration)."""
    real, calls = loop.ppo_update, []

    def update(*args, **kwargs):
        calls.append(1)
        if len(calls) == number:
            raise exc
        return real(*args, **kwargs)

    monkeypatch.setattr(loop, "ppo_update", update)


def _same_model(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_ctrl_c_after_an_evaluation_writes_agent_pt_from_the_best_checkpoint(tmp_path, monkeypatch, capsys):
    _fail_in_update(monkeypatch, 3, KeyboardInterrupt())
    out = loop.train(_tiny(tmp_path, "cut", "overlap=false"))
    assert out["stop_reason"] == "interrupted" and out["iterations"] == 2
    agent_path = os.path.join(tmp_path, "cut", "agent.pt")
    assert out["paths"]["agent"] == agent_path and out["best"]["iteration"] in (1, 2)
    agent, best = load_checkpoint(agent_path), load_checkpoint(out["paths"]["best"])
    assert "optimizer" not in agent and "rng" not in agent  # the model only, as a finished run's
    assert _same_model(agent["model"], best["model"]) and agent["iteration"] == best["iteration"]
    assert PPOAgent.load(agent_path).greedy
    err = capsys.readouterr().err
    assert f"evaluate {agent_path}: the best checkpoint's model (iteration {best['iteration']}" in err


def test_ctrl_c_before_any_evaluation_says_there_is_nothing_to_evaluate(tmp_path, monkeypatch, capsys):
    _fail_in_update(monkeypatch, 2, KeyboardInterrupt())
    out = loop.train(_tiny(tmp_path, "early", "overlap=false", "eval_every=5"))
    assert out["stop_reason"] == "interrupted" and out["iterations"] == 1 and out["best"] is None
    assert "agent" not in out["paths"] and not os.path.exists(os.path.join(tmp_path, "early", "agent.pt"))
    assert "nothing to evaluate yet: no evaluation has taken place (the first comes at iteration 5)" in \
        capsys.readouterr().err


def test_a_crash_after_an_evaluation_leaves_agent_pt_and_raises(tmp_path, monkeypatch, capsys):
    _fail_in_update(monkeypatch, 2, RuntimeError("out of memory"))
    with pytest.raises(RuntimeError, match="out of memory"):
        loop.train(_tiny(tmp_path, "crash"))  # overlap: the update runs in a second thread
    run = os.path.join(tmp_path, "crash")
    agent, best = load_checkpoint(os.path.join(run, "agent.pt")), load_checkpoint(os.path.join(run, "best.pt"))
    assert _same_model(agent["model"], best["model"]) and best["iteration"] == 1
    assert "training failed: " + os.path.join(run, "agent.pt") in capsys.readouterr().err


def test_max_minutes_is_the_budget_of_the_whole_run_across_resumes(tmp_path):
    first = loop.train(_tiny(tmp_path, "capped", "total_decisions=1000"), quiet=True)
    assert first["iterations"] == 1 and first["stop_reason"] == "total_decisions"
    last = first["paths"]["last"]
    ckpt = torch.load(last, weights_only=True)
    ckpt["wall_seconds"] = 600.0  # as if the first session had taken 10 minutes
    torch.save(ckpt, last)
    spent = os.path.join(tmp_path, "spent.pt")
    torch.save(ckpt, spent)
    # 10 of 5 minutes spent: the resumed run stops at once (and finishes: last.pt, agent.pt, summary)
    out = loop.train(_tiny(tmp_path, "capped", "max_minutes=5"), resume=last, quiet=True)
    assert out["stop_reason"] == "max_minutes" and out["iterations"] == 1 and out["wall_seconds"] >= 600
    assert os.path.isfile(out["paths"]["agent"])
    # a larger budget goes on; the run's wall time keeps counting from the checkpoint's
    out = loop.train(_tiny(tmp_path, "capped", "max_minutes=20"), resume=spent, quiet=True)
    assert out["stop_reason"] == "total_decisions" and out["iterations"] == 3
    assert 600 < out["wall_seconds"] < 20 * 60
    assert load_checkpoint(out["paths"]["last"])["wall_seconds"] == pytest.approx(out["wall_seconds"], abs=0.1)

"""Optional dependencies load through rook_env.core.optional, and a missing one is an error naming its extra.

A dependency is made missing the way Python itself reports one: ``sys.modules[name] = None`` makes importing it
raise ``ModuleNotFoundError``."""

from __future__ import annotations

import sys

import pytest

from rook_env.agents import check_team, make_agent, parse_team
from rook_env.core import optional
from rook_env.core.optional import MissingDependency


def missing(monkeypatch, *names: str) -> None:
    for name in names:
        monkeypatch.setitem(sys.modules, name, None)


def test_require_returns_the_module_and_names_the_extra_when_it_is_missing(monkeypatch):
    pytest.importorskip("tqdm")
    assert optional.require("tqdm.auto").__name__ == "tqdm.auto" and optional.available("tqdm")
    missing(monkeypatch, "tqdm", "tqdm.auto")
    with pytest.raises(MissingDependency, match=r'tqdm is not installed \(needed for progress bars\).*rook_env\[tools\]'):
        optional.require("tqdm.auto")
    with pytest.raises(ModuleNotFoundError, match=r"\[tools\]"):  # a MissingDependency is a ModuleNotFoundError
        optional.require("tqdm", "the bar")


def test_only_the_listed_optional_dependencies_are_asked_for():
    assert set(optional.EXTRAS) == {"torch", "ray", "ray.rllib", "numba", "starlette", "uvicorn", "PIL", "rich", "tqdm",
                                    "matplotlib"}
    assert all(dist and extra and what for dist, extra, what in optional.EXTRAS.values())
    with pytest.raises(ValueError, match="not an optional dependency"):
        optional.available("numpy")
    with pytest.raises(ValueError, match="not an optional dependency"):
        optional.require("pettingzoo")
    assert optional.EXTRAS["ray.rllib"][1] == "rllib" and optional.EXTRAS["ray"][1] == "ray"


def test_a_part_that_needs_torch_names_the_train_extra_without_it(monkeypatch):
    missing(monkeypatch, "torch")
    with pytest.raises(MissingDependency, match=r"torch is not installed \(needed for the PPO agent.*rook_env\[train\]"):
        make_agent("ppo")
    with pytest.raises(MissingDependency, match=r"rook_env\[train\]"):
        make_agent("search:ppo")
    with pytest.raises(ValueError, match=r"agent 'ppo' is not available: torch is not installed.*\[train\]"):
        check_team(parse_team("ppo"), {})
    make_agent("heuristic")  # the agents that need no torch still build
    make_agent("search[samples=4]", seed=0)


def test_the_rllib_agent_names_the_rllib_extra_without_ray(monkeypatch):
    missing(monkeypatch, "ray", "ray.rllib")
    with pytest.raises(MissingDependency, match=r"ray\[rllib\] is not installed \(needed for the RLlib agent.*rook_env\[rllib\]"):
        make_agent("rllib:runs/nothing")


def test_load_takes_package_references_only():
    with pytest.raises(ValueError, match="a module of this package and an attribute"):
        optional.load("numpy:array", ())
    assert optional.load("rook_env.core.optional:load", ()) is optional.load


def test_evaluation_tools_without_their_extras(monkeypatch, capsys):
    from rook_env.evaluation import blocks, report

    missing(monkeypatch, "tqdm", "tqdm.auto", "matplotlib", "matplotlib.pyplot")
    monkeypatch.setattr(optional, "available", lambda name: False)
    monkeypatch.setattr(blocks, "available", lambda name: False)
    assert blocks.progress_bar(10, "deals") is None
    assert "no progress bar: tqdm is not installed" in capsys.readouterr().err
    with pytest.raises(MissingDependency, match=r"matplotlib is not installed \(needed for plots\).*\[tools\]"):
        report._pyplot()

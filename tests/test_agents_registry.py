"""make_agent's table of agent families: each family registers its specs, the registry names none of them, the
shipped names are ``ppo`` and ``best``, and other networks are files played by path."""

from __future__ import annotations

import ast
import os

import pytest

from rook_env.agents import make_agent, registry
from rook_env.agents.checkpoints import BEST_AUCTION, CHECKPOINT_DIR
from rook_env.agents.heuristic import CallPartnerHeuristic, HeuristicAgent
from rook_env.agents.random_agent import RandomAgent
from rook_env.agents.registry import AgentFamily, family_of, register_family

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_every_family_registers_its_own_specs():
    names = {f.name: f for f in registry._FAMILIES.values()}
    assert set(names) == {"best", "random", "heuristic", "call_partner_heuristic", "search", "ppo",
                          "checkpoint path", "rllib", "ppo checkpoint", "pimc", "call_partner_search"}
    assert family_of("random").name == "random" and family_of("heuristic").name == "heuristic"
    assert family_of("search[samples=8]:ppo").name == "search" and family_of("search-bids").name == "search"
    assert family_of("ppo:runs/x/agent.pt").name == "ppo checkpoint"  # a prefix before a suffix
    assert family_of("runs/x/agent.pt").name == "checkpoint path"
    assert family_of("rllib:runs/rllib").name == "rllib"
    assert family_of("ppo_v2") is None and family_of("nothing") is None
    # each from its own module, not from the registry
    modules = {f.name: f.build.__module__ for f in names.values()}
    assert modules["search"] == "rook_env.agents.search.spec" and modules["ppo"] == "rook_env.agents.learned"
    assert modules["heuristic"] == "rook_env.agents.heuristic" and modules["random"] == "rook_env.agents.random_agent"


def test_the_registry_imports_no_family():
    with open(os.path.join(ROOT, "rook_env", "agents", "registry.py"), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    imported = {(n.module or "") for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert not any(m.startswith(("heuristic", "search", "learned", "random_agent", "rook_env.rllib"))
                   or "rllib" in m for m in imported), imported
    assert imported <= {"__future__", "dataclasses", "typing", "rook_env.games", "base", "checkpoints"}


def test_the_specs_of_each_game_are_what_the_agents_are():
    assert registry.GAME_SPECS["partnership"] == ("random", "heuristic", "search", "search-auction", "search-bids",
                                                  "ppo", "pimc", "best")
    assert registry.GAME_SPECS["call_partner"] == ("random", "call_partner_heuristic", "ppo", "call_partner_search",
                                                   "best")
    for name in ("ppo_v2", "ppo_v3", "ppo_v4", "ppo_v5"):
        with pytest.raises(ValueError, match=f"unknown agent spec '{name}'.*'ppo'.*'best'"):
            make_agent(name)
    assert isinstance(make_agent("random", seed=1), RandomAgent)
    assert isinstance(make_agent("heuristic"), HeuristicAgent)
    assert isinstance(make_agent("call_partner_heuristic", players=5), CallPartnerHeuristic)  # implies its game


def test_best_searches_on_the_file_of_its_auction_network():
    assert registry.BEST["partnership"] == (f"search[samples=96,worlds=learned,boldness=4]:{BEST_AUCTION}",)
    assert os.path.dirname(BEST_AUCTION) == CHECKPOINT_DIR and os.path.isfile(BEST_AUCTION)
    assert registry.BEST["call_partner"] == ("call_partner_search:ppo", "call_partner_search")


def test_a_family_cannot_take_another_familys_spec():
    def build(spec, seed, game, rules):
        return RandomAgent(seed)

    with pytest.raises(ValueError, match="'heuristic' belong.*family 'heuristic'"):
        register_family(AgentFamily("mine", build, names=("heuristic",)))
    with pytest.raises(ValueError, match="'ppo:' belong"):
        register_family(AgentFamily("mine", build, prefixes=("ppo:",)))
    with pytest.raises(TypeError):
        register_family({"name": "mine"})
    assert "mine" not in registry._FAMILIES


def test_a_new_family_is_made_by_make_agent_and_listed(monkeypatch):
    monkeypatch.setattr(registry, "_FAMILIES", dict(registry._FAMILIES))
    monkeypatch.setattr(registry, "GAME_SPECS", dict(registry.GAME_SPECS))
    monkeypatch.setattr(registry, "AGENT_SPECS", registry.AGENT_SPECS)

    def build(spec, seed, game, rules):
        agent = RandomAgent(seed)
        agent.spec = spec
        return agent

    register_family(AgentFamily("echo", build, names=("echo",), prefixes=("echo:",), games=("partnership",),
                                forms="'echo:<word>'"))
    assert make_agent("echo:hello").spec == "echo:hello"
    assert "echo" in registry.GAME_SPECS["partnership"] and "echo" not in registry.GAME_SPECS["call_partner"]
    with pytest.raises(ValueError, match="plays the partnership game"):
        make_agent("echo", game="call_partner")
    with pytest.raises(ValueError, match="'echo:<word>'"):
        make_agent("nothing")

"""Learned players: networks trained by this package (:class:`PPOAgent` over the network of :mod:`.model`) or with
RLlib (:class:`RLlibAgent`, :mod:`.rllib`).

Their modules need torch (the ``[train]`` extra; RLlib's also ``ray[rllib]``, the ``[rllib]`` extra). Importing
this package imports neither: it registers their agent specs with :func:`rook_env.agents.make_agent` (``"ppo"``,
``"ppo:<path>"``, a path ending in ``.pt``, ``"rllib:<checkpoint dir>"``), and a module is loaded when an agent is
first built or one of its names is first read (``from rook_env.agents.learned import PPOAgent``), through
:func:`rook_env.core.optional.load`, which names the extra to install when a dependency is missing.

- :mod:`.agent`: the agent that plays a checkpoint (``PPOAgent.load``);
- :mod:`.model`: the actor-critic network, its masked distribution and checkpoint loading;
- :mod:`.rllib`: an RLlib checkpoint as an agent.
"""

from __future__ import annotations

from typing import Any

from rook_env.core.optional import load
from rook_env.games import get_game

from ..registry import AgentFamily, game_config, register_family, shipped_network

__all__ = ["DEFAULT_CHECKPOINT", "PPOAgent", "RLlibAgent", "check_checkpoint_game"]

# the names this package offers from its modules: (module, the optional dependencies it imports)
_AGENT = ("rook_env.agents.learned.agent", ("torch",))
_RLLIB = ("rook_env.agents.learned.rllib", ("torch", "ray.rllib"))
_NAMES = {"DEFAULT_CHECKPOINT": _AGENT, "PPOAgent": _AGENT, "check_checkpoint_game": _AGENT, "RLlibAgent": _RLLIB}


def __getattr__(name: str) -> Any:
    """A name of :mod:`.agent` or :mod:`.rllib`, their module loaded on first use."""
    if name not in _NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, needs = _NAMES[name]
    value = load(f"{module}:{name}", needs, what=f"rook_env.agents.learned.{name}")
    globals()[name] = value
    return value


def _ppo_agent() -> Any:
    return load("rook_env.agents.learned.agent:PPOAgent", _AGENT[1], what="the PPO agent (a trained network)")


def _build_shipped(spec: str, seed: int | None, game: str, rules: dict[str, Any]) -> Any:
    game_config({**rules, "game": game})  # the table's flags first: a bad flag or table size is named as such
    return _ppo_agent().load(shipped_network(game, rules), seed=seed, game=game, **rules)


def _build_file(spec: str, seed: int | None, game: str, rules: dict[str, Any]) -> Any:
    return _ppo_agent().load(spec, seed=seed, game=game, **rules)


def _build_ppo_file(spec: str, seed: int | None, game: str, rules: dict[str, Any]) -> Any:
    # "ppo:<path>": the checkpoint's recorded game must be this table's (a CheckpointError says so otherwise)
    return _ppo_agent().load(spec[len("ppo:"):], seed=seed, game=game, **rules)


def _build_rllib(spec: str, seed: int | None, game: str, rules: dict[str, Any]) -> Any:
    agent = load("rook_env.agents.learned.rllib:RLlibAgent", _RLLIB[1], what="the RLlib agent ('rllib:<dir>')")
    return agent.load(spec[len("rllib:"):], seed=seed, game=game, **rules)


# "ppo" where the game ships a network; a checkpoint file by path
register_family(AgentFamily("ppo", _build_shipped, names=("ppo",), listed=lambda game: bool(get_game(game).networks)))
register_family(AgentFamily("checkpoint path", _build_file, suffixes=(".pt",), games=("partnership",),
                            forms="a checkpoint path ending in .pt"))
register_family(AgentFamily("rllib", _build_rllib, prefixes=("rllib:",), games=("partnership",),
                            forms="'rllib:<checkpoint dir>'"))
register_family(AgentFamily("ppo checkpoint", _build_ppo_file, prefixes=("ppo:",),
                            forms="'ppo:<path>' (a checkpoint trained with game: {game})"))

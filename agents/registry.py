"""Building agents from specs: ``make_agent`` and the team specs of matches.

An *agent spec* is ``"random"``, ``"heuristic"``, ``"search"``, ``"ppo"`` (the shipped checkpoint) or a path to a
checkpoint ending in ``.pt``. A *member spec* is an agent spec or a callable ``factory(seed) -> agent``
(how a trainer or any RL library hands over its own policy). A *team spec* is a member spec (both
partners), two agent specs joined by ``+`` (``"heuristic+random"``: the first plays the lower seat
of the pair, its partner the second), or a 2-tuple of member specs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from rook_env.config import make_config

from .base import Agent
from .heuristic import HeuristicAgent
from .random_agent import RandomAgent

__all__ = ["AGENT_SPECS", "TeamSpec", "build_agent", "check_team", "make_agent", "parse_team", "spec_label"]

AGENT_SPECS = ("random", "heuristic", "search", "ppo")  # besides a checkpoint path ending in .pt
_SPEC_HELP = "use 'random', 'heuristic', 'search', 'ppo' or a checkpoint path ending in .pt"


def make_agent(spec: str, seed: int | None = None, **flags: Any) -> Agent:
    """Build an agent from a spec string; ``flags`` are the environment's rule flags (validated
    for every agent, so a misspelt flag is an error, not ignored)."""
    if not isinstance(spec, str):
        raise TypeError(f"agent spec must be a string ({_SPEC_HELP}), got {spec!r} ({type(spec).__name__})")
    if spec == "random":
        make_config(**flags)  # a random agent ignores the rules, but a bad flag is still the caller's error
        return RandomAgent(seed=seed)
    if spec == "heuristic":
        return HeuristicAgent(seed=seed, **flags)
    if spec == "search":
        from .search import SearchAgent

        return SearchAgent(seed=seed, **flags)
    if spec == "ppo" or spec.endswith(".pt"):
        from .ppo_agent import PPOAgent  # needs torch (the [train] extra): imported only when asked for

        return PPOAgent.load(None if spec == "ppo" else spec, seed=seed, **flags)
    raise ValueError(f"unknown agent spec {spec!r}; {_SPEC_HELP}")


def spec_label(member: Any) -> str:
    """A display name for a member spec: the string itself, a callable's ``name`` attribute or
    ``__name__`` (``"callable"`` for a lambda)."""
    if isinstance(member, str):
        return member
    name = getattr(member, "name", None)
    if isinstance(name, str) and name:
        return name
    label = getattr(member, "__name__", None) or type(member).__name__
    return "callable" if label == "<lambda>" else label


@dataclass(frozen=True)
class TeamSpec:
    """Two member specs: the first plays the lower seat of the pair (seat 0 or 1), the second
    its partner (seat 2 or 3)."""

    members: tuple[Any, Any]
    name: str

    def __str__(self) -> str:
        return self.name


def parse_team(spec: Any, name: str | None = None) -> TeamSpec:
    """A team spec: ``"random"``, ``"heuristic+random"``, a callable ``factory(seed)``, a 2-tuple
    of member specs, or a :class:`TeamSpec` (returned as is, renamed if ``name`` is given)."""
    if isinstance(spec, TeamSpec):
        return spec if name is None else TeamSpec(spec.members, name)
    if isinstance(spec, str):
        parts = [p.strip() for p in spec.split("+")]
        if len(parts) > 2 or not all(parts):
            raise ValueError(
                f"bad team spec {spec!r}: use one agent spec (e.g. 'random') or two joined by '+' "
                f"(e.g. 'heuristic+random')"
            )
        members = (parts[0], parts[-1])
    elif isinstance(spec, (tuple, list)):
        if len(spec) != 2:
            raise ValueError(f"a team given as a sequence needs exactly 2 member specs, got {len(spec)}")
        members = (spec[0], spec[1])
    elif callable(spec):
        members = (spec, spec)
    else:
        raise ValueError(f"bad team spec {spec!r}: expected a string, a callable factory(seed) or a 2-tuple")
    for m in members:
        if not (isinstance(m, str) or callable(m)):
            raise ValueError(f"bad member spec {m!r}: expected a string or a callable factory(seed)")
    if name is None:
        a, b = (spec_label(m) for m in members)
        name = a if (a == b and members[0] == members[1]) else f"{a}+{b}"
    return TeamSpec(members, name)


def build_agent(member: str | Callable[[int | None], Agent], seed: int | None, flags: Mapping[str, Any]) -> Agent:
    """Build one agent from a member spec (a spec string via :func:`make_agent`, or a callable
    ``factory(seed)``); the result must have an ``act(observation, info)`` method."""
    agent = make_agent(member, seed=seed, **dict(flags)) if isinstance(member, str) else member(seed)
    if not callable(getattr(agent, "act", None)):
        raise TypeError(f"spec {spec_label(member)!r} built {agent!r}, which has no act(observation, info) method")
    return agent


def check_team(team: TeamSpec, flags: Mapping[str, Any]) -> None:
    """Build each member once so that a bad spec fails early, as a ValueError naming the spec."""
    members = team.members if team.members[0] != team.members[1] else team.members[:1]
    for m in members:
        try:
            build_agent(m, 0, flags)
        except ModuleNotFoundError as exc:
            raise ValueError(f"agent {spec_label(m)!r} is not available ({exc}); the PPO agent needs torch: "
                             f"pip install -e \".[train]\"") from exc
        except (FileNotFoundError, ValueError, TypeError) as exc:
            raise ValueError(f"agent {spec_label(m)!r}: {exc}") from exc
        except Exception as exc:  # e.g. a checkpoint that does not load
            raise ValueError(f"agent {spec_label(m)!r} could not be built: {type(exc).__name__}: {exc}") from exc

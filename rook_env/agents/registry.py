"""Building agents from specs: ``make_agent`` and the team specs of matches.

An *agent spec* is ``"random"``, ``"heuristic"``, ``"search"``, ``"ppo"`` (the shipped checkpoint), a path to a
checkpoint ending in ``.pt``, or ``"search:<spec>"`` (search plays the cards on top of that agent, which
bids, discards and names trump: ``"search:ppo"``) for the partnership game; ``"random"``, ``"call_partner_heuristic"`` or a
train.py checkpoint given as ``"ppo:<path>"`` for call-your-partner Rook (``"ppo:<path>"`` works in
both games). ``"best"`` is the strongest player the project ships for the table's game (:data:`BEST`):
search on top of the shipped network in the partnership game (``"search:ppo"``, its card play searched on the
batched engine where numba is installed); search does not play call-your-partner Rook, whose ``"best"`` is
its heuristic (its trained agents do not beat it yet). A checkpoint plays only the game (and call-your-partner table size) it was trained
for: loading it elsewhere raises ``CheckpointError`` saying which game it was trained for. The rule flags handed to :func:`make_agent` pick the game with their
``game`` key (:data:`GAMES`; default ``"partnership"``, the four-player game of :mod:`rook_env`;
``"call_partner"``: :mod:`rook_env.call_partner`) and are validated against that game's rules
(:func:`game_config`), so ``make_agent("random", game="call_partner", players=5)`` accepts
``players`` and ``make_agent("random", players=5)`` refuses it.

A *member spec* is an agent spec or a callable ``factory(seed) -> agent`` (how a trainer or any
RL library hands over its own policy). A *team spec* is a member spec (both
partners), two agent specs joined by ``+`` (``"heuristic+random"``: the first plays the lower seat
of the pair, its partner the second), or a 2-tuple of member specs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from rook_env.call_partner.config import make_config as make_call_partner_config
from rook_env.config import make_config

from .base import Agent
from .heuristic.call_partner import CallPartnerHeuristic
from .heuristic import HeuristicAgent
from .random_agent import RandomAgent

__all__ = [
    "AGENT_SPECS", "BEST", "DEFAULT_GAME", "GAMES", "GAME_SPECS", "TeamSpec", "build_agent", "check_team", "game_config",
    "make_agent", "parse_team", "spec_label", "split_game",
]

GAMES = ("partnership", "call_partner")  # values of the ``game`` key of rule flags
DEFAULT_GAME = "partnership"
# Agent specs per game (the partnership game also takes a checkpoint path ending in .pt).
GAME_SPECS = {"partnership": ("random", "heuristic", "search", "ppo", "best"),
              "call_partner": ("random", "call_partner_heuristic", "best")}
AGENT_SPECS = ("random", "heuristic", "search", "ppo", "best", "call_partner_heuristic")  # besides a checkpoint path ending in .pt
# "best" per game: the strongest player shipped (docs/agents.md gives its strength and time per decision)
BEST = {"partnership": "search:ppo", "call_partner": "call_partner_heuristic"}
_SPEC_HELP = {
    "partnership": "use 'random', 'heuristic', 'search', 'ppo', 'best', a checkpoint path ending in .pt, 'search:<spec>' "
                   "(e.g. 'search:ppo') or 'rllib:<checkpoint dir>'",
    "call_partner": "call-your-partner Rook takes 'random', 'call_partner_heuristic', 'best' or 'ppo:<path>' "
                    "(a checkpoint trained with game: call_partner)",
}


def split_game(flags: Mapping[str, Any] | None) -> tuple[str, dict[str, Any]]:
    """(game, the rule flags without ``game``); raises ValueError naming an unknown game."""
    rules = dict(flags or {})
    game = rules.pop("game", DEFAULT_GAME)
    if game not in GAMES:
        raise ValueError(f"game={game!r} is not allowed; allowed values: {', '.join(GAMES)}")
    return game, rules


def game_config(flags: Mapping[str, Any] | None) -> Any:
    """The rules config of ``flags`` (``game`` picks :func:`rook_env.config.make_config` or
    :func:`rook_env.call_partner.config.make_config`); raises ValueError naming a bad flag."""
    game, rules = split_game(flags)
    return make_call_partner_config(**rules) if game == "call_partner" else make_config(**rules)


def make_agent(spec: str, seed: int | None = None, **flags: Any) -> Agent:
    """Build an agent from a spec string; ``flags`` are the environment's rule flags, ``game``
    included (validated for every agent against that game's rules, so a misspelt flag is an
    error, not ignored). ``"call_partner_heuristic"`` implies ``game="call_partner"``."""
    if spec == "call_partner_heuristic" and "game" not in flags:
        flags = {**flags, "game": "call_partner"}
    game, rules = split_game(flags)
    if not isinstance(spec, str):
        raise TypeError(f"agent spec must be a string ({_SPEC_HELP[game]}), got {spec!r} ({type(spec).__name__})")
    if spec == "best":
        spec = BEST[game]
    if spec == "random":
        game_config(flags)  # a random agent ignores the rules, but a bad flag is still the caller's error
        return RandomAgent(seed=seed)
    if spec.startswith("ppo:"):
        from .learned import PPOAgent  # needs torch (the [train] extra): imported only when asked for

        # the checkpoint's recorded game must be this table's (a CheckpointError says so otherwise)
        return PPOAgent.load(spec[len("ppo:"):], seed=seed, game=game, **rules)
    if game == "call_partner":
        if spec == "call_partner_heuristic":
            return CallPartnerHeuristic(seed=seed, **rules)
        if spec in GAME_SPECS["partnership"] or spec.endswith(".pt"):
            bare = f" (a bare checkpoint path; for a call-your-partner checkpoint write 'ppo:{spec}')" \
                if spec.endswith(".pt") else ""
            raise ValueError(f"agent spec {spec!r} plays the partnership game{bare}, not call-your-partner Rook; "
                             f"{_SPEC_HELP[game]}")
        raise ValueError(f"unknown agent spec {spec!r}; {_SPEC_HELP[game]}")
    if spec == "call_partner_heuristic":
        raise ValueError(f"agent spec {spec!r} plays call-your-partner Rook (game='call_partner'), "
                         f"not the partnership game; {_SPEC_HELP[game]}")
    if spec == "heuristic":
        return HeuristicAgent(seed=seed, **rules)
    if spec == "search" or spec.startswith("search:"):
        from .search import SearchAgent

        # "search:<spec>": search plays the cards, the agent <spec> bids, discards and names trump
        base = make_agent(spec[len("search:"):], seed=seed, **flags) if spec != "search" else None
        return SearchAgent(seed=seed, base=base, **rules)
    if spec == "ppo" or spec.endswith(".pt"):
        from .learned import PPOAgent  # needs torch (the [train] extra): imported only when asked for

        return PPOAgent.load(None if spec == "ppo" else spec, seed=seed, **rules)
    if spec.startswith("rllib:"):
        from rook_env.rllib import RLlibAgent  # needs ray[rllib] (the [rllib] extra): imported only when asked for

        return RLlibAgent.load(spec[len("rllib:"):], seed=seed, **rules)
    raise ValueError(f"unknown agent spec {spec!r}; {_SPEC_HELP[game]}")


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

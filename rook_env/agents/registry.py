"""Building agents from specs: :func:`make_agent`, the table of agent families it reads, and the team specs of
matches.

An *agent spec* names an agent by what it is:

- ``"random"``: the uniform random player (every game);
- a game's heuristic, the spec its registry entry names (:attr:`rook_env.games.GameSpec.heuristic`:
  ``"heuristic"``, ``"call_partner_heuristic"``); the spec implies its game;
- ``"ppo"``: the game's shipped network for the table's size (:attr:`rook_env.games.GameSpec.networks`, files in
  :mod:`rook_env.agents.checkpoints`); a table size without one is refused, naming the sizes that have one;
- ``"best"``: the strongest player the project ships for the table (:data:`BEST`): in the partnership game search
  that plays the cards over worlds drawn from the learned model of the hidden cards (on the batched engine where
  numba is installed), on top of the network :data:`~rook_env.agents.checkpoints.BEST_AUCTION`, which bids,
  discards and names trump, its auction made bolder; in call-your-partner Rook its search
  (``call_partner_search``) on the shipped network's bids where the table has the network, on the heuristic's
  bids elsewhere; the game's heuristic wherever a table can play none of the game's choices;
- a network file: ``"ppo:<path>"`` (a checkpoint written by train.py, of any game) or a path ending in ``.pt``
  (a checkpoint of the partnership game);
- search (the partnership game): ``"search"``, ``"search-auction"``, ``"search-bids"`` and ``"search-values"``, each with
  ``SearchAgent`` arguments in brackets and the agent it searches on top of after a colon
  (``"search[samples=96,worlds=learned]:ppo"``; :mod:`rook_env.agents.search.spec`);
- ``"rllib:<checkpoint dir>"``: a network trained with RLlib (the partnership game; the ``[rllib]`` extra).

Each kind of spec is an :class:`AgentFamily` that its own package registers (:func:`register_family`):
:mod:`.random_agent`, :mod:`.heuristic`, :mod:`.search` and :mod:`.learned`, whose agents load torch (and ray,
for RLlib's) only when one is built. This module imports none of them: ``import rook_env.agents`` registers them
all. A checkpoint plays only the game (and call-your-partner table size) it was trained for: loading it elsewhere
raises ``CheckpointError`` saying which game it was trained for. The rule flags handed to :func:`make_agent` pick
the game with their ``game`` key (the game registry's games, :mod:`rook_env.games`; default ``"partnership"``)
and are validated against that game's rules (:func:`game_config`), so ``make_agent("random", game="call_partner",
players=5)`` accepts ``players`` and ``make_agent("random", players=5)`` refuses it.

A *member spec* is an agent spec or a callable ``factory(seed) -> agent`` (how a trainer or any
RL library hands over its own policy). A *team spec* is a member spec (both
partners), two agent specs joined by ``+`` (``"heuristic+random"``: the first plays the lower seat
of the pair, its partner the second), or a 2-tuple of member specs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from rook_env.games import DEFAULT_GAME, game_names, get_game, resolve_game

from .base import Agent
from .checkpoints import BEST_AUCTION, checkpoint

__all__ = [
    "AGENT_SPECS", "AgentFamily", "BEST", "DEFAULT_GAME", "GAMES", "GAME_SPECS", "TeamSpec", "build_agent",
    "check_team", "family_of", "game_config", "game_specs", "make_agent", "parse_team", "register_family",
    "shipped_network", "spec_game", "spec_label", "split_game", "unknown_spec",
]

GAMES = game_names()  # values of the ``game`` key of rule flags: the game registry's (rook_env.games)
# "best" per game: the strongest players shipped, in order of preference (docs/agents.md gives their times per
# decision and their matches); a table gets the first it can play (a spec on the shipped network needs one for the
# table's size: call-your-partner has one at 5 players), a game not listed or a table that can play none of them its
# heuristic. The partnership game's: search with 96 worlds drawn from the learned model of the hidden cards, on the
# auction of the network BEST_AUCTION made bolder (boldness 4); call-your-partner's: its search on the shipped
# network's bids, else on the heuristic's.
BEST: dict[str, tuple[str, ...]] = {
    "partnership": (f"search[samples=96,worlds=learned,boldness=4]:{BEST_AUCTION}",),
    "call_partner": ("call_partner_search:ppo", "call_partner_search"),
}


@dataclass(frozen=True)
class AgentFamily:
    """One kind of agent spec: which specs it takes and how it builds an agent of one (:func:`register_family`).

    ``names``: whole specs (``"random"``, ``"ppo"``); ``prefixes``: beginnings of specs (``"ppo:"``,
    ``"search["``); ``suffixes``: endings (``".pt"``). ``build(spec, seed, game, rules)`` returns the agent
    (``rules``: the table's rule flags without ``game``). ``games``: the games it plays (None: every game; a spec
    of a family of one game implies that game). ``listed(game)``: whether the game's list of specs
    (:data:`GAME_SPECS`) shows ``names`` (``"ppo"``: where the game ships a network). ``forms``: how its
    prefixed specs are written, for the errors that list a game's specs (``{game}``: the game's name)."""

    name: str
    build: Callable[[str, int | None, str, dict[str, Any]], Agent]
    names: tuple[str, ...] = ()
    prefixes: tuple[str, ...] = ()
    suffixes: tuple[str, ...] = ()
    games: tuple[str, ...] | None = None
    listed: Callable[[str], bool] | None = None
    forms: str = ""

    def plays(self, game: str) -> bool:
        return self.games is None or game in self.games


_FAMILIES: dict[str, AgentFamily] = {}
# Agent specs per game (besides the families' prefixed forms), filled in as the families register.
GAME_SPECS: dict[str, tuple[str, ...]] = {}
AGENT_SPECS: tuple[str, ...] = ()


def register_family(family: AgentFamily) -> AgentFamily:
    """Add an agent family to :func:`make_agent`'s table; a spec, prefix or suffix another family holds is an
    error (the same family again changes nothing)."""
    global AGENT_SPECS
    if not isinstance(family, AgentFamily):
        raise TypeError(f"register_family takes an AgentFamily, got {type(family).__name__}")
    old = _FAMILIES.get(family.name)
    if old is not None and old != family:
        raise ValueError(f"an agent family named {family.name!r} is already registered")
    for other in _FAMILIES.values():
        taken = {*other.names, *other.prefixes, *other.suffixes} & {*family.names, *family.prefixes, *family.suffixes}
        if other.name != family.name and taken:
            raise ValueError(f"agent family {family.name!r}: {', '.join(map(repr, sorted(taken)))} belong(s) to "
                             f"family {other.name!r}")
    _FAMILIES[family.name] = family
    GAME_SPECS.update({g: _registry_specs(g) for g in game_names()})
    AGENT_SPECS = tuple(dict.fromkeys(s for specs in GAME_SPECS.values() for s in specs))
    return family


def family_of(spec: str) -> AgentFamily | None:
    """The family that builds ``spec``: one that names it whole, else the one with the longest prefix of it, else
    one with a suffix of it; None for an unknown spec."""
    for family in _FAMILIES.values():
        if spec in family.names:
            return family
    found = [(len(p), f) for f in _FAMILIES.values() for p in f.prefixes if spec.startswith(p)]
    if found:
        return max(found, key=lambda x: x[0])[1]
    return next((f for f in _FAMILIES.values() if spec.endswith(f.suffixes) and f.suffixes), None)


def _registry_specs(game: str) -> tuple[str, ...]:
    # in the families' order of registration, "best" (which names another spec) last
    families = sorted((f for f in _FAMILIES.values() if f.plays(game) and (f.listed is None or f.listed(game))),
                      key=lambda f: f.name == "best")
    return tuple(s for f in families for s in f.names)


def game_specs(game: str) -> tuple[str, ...]:
    """The agent specs of ``game`` (:data:`GAME_SPECS`; a game registered later: from the registry)."""
    return GAME_SPECS.get(game) or _registry_specs(game)


def _spec_help(game: str) -> str:
    """What agent specs ``game`` takes, for error messages."""
    forms = [f.forms.format(game=game) for f in _FAMILIES.values() if f.forms and f.plays(game)]
    items = [repr(s) for s in game_specs(game)] + forms
    return f"the {game} game takes " + (", ".join(items[:-1]) + " or " + items[-1] if len(items) > 1 else items[0])


def unknown_spec(spec: str, game: str) -> ValueError:
    """The error for a spec no family builds, listing what ``game`` takes."""
    return ValueError(f"unknown agent spec {spec!r}; {_spec_help(game)}")


def spec_game(spec: str) -> str | None:
    """The game an agent spec plays, or None for a spec that plays every game (``random``, ``ppo:<path>``)."""
    family = family_of(spec)
    return family.games[0] if family is not None and family.games is not None and len(family.games) == 1 else None


def _players(game: str, rules: Mapping[str, Any]) -> int:
    """The table's seat count (the game's default when ``players`` is not among the rule flags)."""
    return rules.get("players", get_game(game).default_players)


def shipped_network(game: str, rules: Mapping[str, Any]) -> str:
    """The path of ``game``'s shipped network for the table of ``rules`` (``make_agent("ppo")``); raises ValueError
    naming the table sizes that have one when this one has none."""
    spec = get_game(game)
    networks = spec.networks
    players = _players(game, rules)
    if players not in networks:
        has = (" and ".join(f"{p} players" for p in sorted(networks)) if networks else "no table size")
        raise ValueError(f"'ppo': {spec.title} ships a trained network for {has}, not for {players} players; "
                         f"train one (train.py with game: {game}, players: {players}) and play it as 'ppo:<path>', "
                         f"or use {spec.heuristic!r}")
    return checkpoint(networks[players])


def _best(game: str, rules: Mapping[str, Any]) -> str | None:
    """The spec of ``"best"`` at this table (:data:`BEST`): the game's first choice the table can play (one on the
    shipped network only where the table's size has one), else the game's heuristic."""
    has_network = _players(game, rules) in get_game(game).networks
    for best in BEST.get(game, ()):
        uses_network = best == "ppo" or best.endswith((":ppo", ".pt"))  # "ppo", "search:ppo"
        if has_network or not uses_network:
            return best
    return get_game(game).heuristic


def split_game(flags: Mapping[str, Any] | None) -> tuple[str, dict[str, Any]]:
    """(game, the rule flags without ``game``); raises ValueError naming an unknown game."""
    rules = dict(flags or {})
    game = rules.pop("game", DEFAULT_GAME)
    get_game(game)  # raises ValueError naming the registry's games
    return game, rules


def game_config(flags: Mapping[str, Any] | None) -> Any:
    """The rules config of ``flags`` (``game`` picks the game in the registry,
    :func:`rook_env.games.resolve_game`); raises ValueError naming a bad flag."""
    game, rules = split_game(flags)
    return resolve_game(game, **rules)[1]


def make_agent(spec: str, seed: int | None = None, **flags: Any) -> Agent:
    """Build an agent from a spec string; ``flags`` are the environment's rule flags, ``game``
    included (validated for every agent against that game's rules, so a misspelt flag is an
    error, not ignored). A spec that plays one game only (``"call_partner_heuristic"``) implies its game."""
    if not isinstance(spec, str):
        game, _ = split_game(flags)
        raise TypeError(f"agent spec must be a string ({_spec_help(game)}), got {spec!r} ({type(spec).__name__})")
    family = family_of(spec)
    plays = spec_game(spec)
    if plays is not None and "game" not in flags:
        flags = {**flags, "game": plays}
    game, rules = split_game(flags)
    if family is None:
        raise unknown_spec(spec, game)
    if not family.plays(game):
        games = family.games or ()
        played, titles = " or ".join(games), "; ".join(get_game(g).title for g in games)
        bare = f" (a bare checkpoint path; for a checkpoint of the {game} game write 'ppo:{spec}')" \
            if spec.endswith(".pt") else ""
        raise ValueError(f"agent spec {spec!r} plays the {played} game ({titles}){bare}, not the {game} game; "
                         f"{_spec_help(game)}")
    return family.build(spec, seed, game, rules)


def _build_best(spec: str, seed: int | None, game: str, rules: dict[str, Any]) -> Agent:
    best = _best(game, rules)
    if not best:
        raise ValueError(f"the {game} game has no 'best' player (no search and no heuristic); {_spec_help(game)}")
    return make_agent(best, seed=seed, game=game, **rules)


register_family(AgentFamily("best", _build_best, names=("best",),
                            listed=lambda game: game in BEST or bool(get_game(game).heuristic)))


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
        except ModuleNotFoundError as exc:  # an optional dependency: the message names the extra
            raise ValueError(f"agent {spec_label(m)!r} is not available: {exc}") from exc
        except (FileNotFoundError, ValueError, TypeError) as exc:
            raise ValueError(f"agent {spec_label(m)!r}: {exc}") from exc
        except Exception as exc:  # e.g. a checkpoint that does not load
            raise ValueError(f"agent {spec_label(m)!r} could not be built: {type(exc).__name__}: {exc}") from exc

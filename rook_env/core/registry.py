"""The game registry: every trick-taking game of the package, one :class:`GameSpec` each.

``rook_env.env``, ``raw_env``, :class:`rook_env.SingleAgentRookEnv`, the batched engine, agents,
evaluation, human play, replays and the trainer all find a game here by name::

    from rook_env.games import get_game, game_names, resolve_game

    game_names()                                   # ('partnership', 'call_partner')
    spec, config = resolve_game(game="call_partner", players=5, deck="full")
    spec.load("raw_env")(players=5)                # the game's PettingZoo AEC class

Each game registers its own spec from its own package (``rook_env/games/<name>/__init__.py``), with its
parts as objects, or as ``"module:attribute"`` strings of its own modules for the parts that pull in layers
above the rules (its terminal session, its match scheme), imported only when asked for
(:meth:`GameSpec.load`). This module imports nothing of the package and names no game, so any module
may import it without an import circle. Parts a game does not have are ``None``.

:class:`Game` is a spec bound to one table's rule flags: what a training run or an evaluation plays
(``get_game("call_partner").bind(players=5)``).

Adding a game is one package plus one :func:`register_game` call (see ``docs/adding_a_game.md``).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Game", "GameSpec", "game_names", "get_game", "register_game", "resolve_game", "load_ref"]



def load_ref(ref: str) -> Any:
    """The object a ``"package.module:attribute"`` string names (imported on first use)."""
    module, _, attr = ref.partition(":")
    if not module or not attr:
        raise ValueError(f"a part reference must look like 'package.module:attribute', got {ref!r}")
    obj: Any = importlib.import_module(module)
    for name in attr.split("."):
        obj = getattr(obj, name)
    return obj


@dataclass(frozen=True)
class GameSpec:
    """One trick-taking game: its name, ids, table sizes, how it is trained and where its parts live.

    ``players``: the allowed player counts (the first is the default). ``takes_players``: whether
    ``players`` is one of the game's rule flags (a game with one table size leaves it out of its
    config). A part is the object itself, or a ``"module:attribute"`` string (see :func:`load_ref`)
    for a part that must load lazily:

    - ``config``: ``make_config(**flags) -> config`` (raises ``ValueError`` naming a bad flag);
      its module holds ``FLAG_NAMES``, the flags it takes;
    - ``state``: the pure rules state class (``phase``, ``legal_mask``, ``apply``, ``clone``);
    - ``raw_env`` / ``checked_env``: the PettingZoo AEC classes (raising / classic checks);
    - ``layout`` / ``obs_layout``: ``layout_for(config)`` (cards and action ids) and
      ``obs_layout(config)`` (the observation's sections);
    - ``vector``: the batched engine class; ``heuristic``: the heuristic agent's spec string
      for :func:`rook_env.agents.make_agent`; ``render_scene``: the game's table views, a
      :class:`rook_env.core.render.TableParts` (text, drawn scenes, replay snapshots);
    - ``networks``: the shipped trained network per player count, a checkpoint file name in
      ``rook_env/agents/checkpoints/`` (what ``make_agent("ppo")`` loads for a table of that size;
      a count not listed has none);
    - ``extra["play"]``: the game's terminal session class (:mod:`rook_env.cli.session`);
      ``extra["match"]``: its evaluation scheme (``play_match``: two fixed teams in duplicate;
      ``play_rotation_match``: a field rotated through every seat); ``extra["train_match"]``:
      ``(policy factory, opponent spec, deals, seed, flags, **options) -> (mean, (low, high))``, the
      match a training run evaluates and selects with.

    Training facts: ``groups``, the learning groups (seats ``s`` with ``s % groups == g`` play for one
    learner: 2 for two fixed teams; 0 for one group per seat); ``phases``, the decision phases of the
    observation's leading phase one-hot (per-phase accuracies), ``phase_columns`` that one-hot's width;
    ``eval_unit``, what the training match measures; ``match_options``, the keywords the training match takes
    besides its five arguments (``"game_scores"``: hands dealt at their game's running score; ``"engine"``: the
    batched engine plays the match).
    """

    name: str
    title: str
    env_id: str
    players: tuple[int, ...]
    takes_players: bool
    config: Any
    state: Any
    raw_env: Any
    checked_env: Any
    layout: Any
    obs_layout: Any
    vector: Any = None
    heuristic: str | None = None
    render_scene: Any = None
    rules_section: str = ""  # where RULES.md describes the game
    networks: dict[int, str] = field(default_factory=dict)  # players -> shipped checkpoint file (make_agent("ppo"))
    groups: int = 0
    phases: tuple[str, ...] = ()
    phase_columns: int = 0
    eval_unit: str = ""
    match_options: tuple[str, ...] = ()  # keyword options of extra["train_match"] beyond its five arguments
    extra: dict[str, Any] = field(default_factory=dict)  # further named parts of a game

    PARTS = ("config", "state", "raw_env", "checked_env", "layout", "obs_layout", "vector", "render_scene")

    @property
    def default_players(self) -> int:
        return self.players[0]

    @property
    def flag_names(self) -> tuple[str, ...]:
        """The rule flags the game takes (``players`` included where it is one)."""
        return tuple(self.config_module().FLAG_NAMES)

    def config_module(self) -> Any:
        """The module of the game's ``make_config`` (``FLAG_NAMES``, and ``NOT_HERE`` where it has one)."""
        return importlib.import_module(self.load("config").__module__)

    def load(self, part: str) -> Any:
        """The object of one of the spec's parts (``"raw_env"``, ``"state"``, ...), imported if a reference."""
        ref = self.extra[part] if part in self.extra else (getattr(self, part) if part in self.PARTS else None)
        if ref is None:
            parts = [f for f in self.PARTS if getattr(self, f) is not None]
            raise ValueError(f"game {self.name!r} has no part {part!r}; its parts: {', '.join(parts + list(self.extra))}")
        return load_ref(ref) if isinstance(ref, str) else ref

    def make_config(self, **flags: Any) -> Any:
        """The game's checked rules config of ``flags`` (see :func:`resolve_game` for the errors)."""
        return resolve_game(game=self.name, **flags)[1]

    def bind(self, **flags: Any) -> Game:
        """This game at a table of ``flags`` (checked; ``players`` resolved to the game's default)."""
        config = self.make_config(**flags)
        seats = config.players if self.takes_players else self.default_players
        flags = {k: v for k, v in flags.items() if k != "players"}
        if self.takes_players:
            flags["players"] = seats
        return Game(self, flags, seats)


@dataclass(frozen=True)
class Game:
    """A game bound to one table's rule flags (:meth:`GameSpec.bind`): what a training run plays.

    A run's learner plays the seats ``s`` with ``s % groups == g`` for a group ``g``: one team (seats g
    and g + 2) in the partnership game, one seat in call-your-partner Rook, the other seats filled by
    its opponents (the same "candidate against the field" as the game's match)."""

    spec: GameSpec
    flags: dict[str, Any]  # the rule flags the game's env constructors take (no "game" key)
    seats: int

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def groups(self) -> int:
        return self.spec.groups or self.seats

    @property
    def agent_flags(self) -> dict[str, Any]:
        """The flags with ``game``, as :func:`rook_env.agents.make_agent` takes them."""
        return {**self.flags, "game": self.name}

    @property
    def vector_env(self) -> Any:
        return self.spec.load("vector")

    @property
    def raw_env(self) -> Any:
        return self.spec.load("raw_env")

    @property
    def heuristic(self) -> str:
        return self.spec.heuristic

    @property
    def match(self) -> Any:
        return self.spec.load("train_match")

    @property
    def eval_unit(self) -> str:
        return self.spec.eval_unit

    @property
    def phases(self) -> tuple[str, ...]:
        return self.spec.phases

    @property
    def phase_columns(self) -> int:
        return self.spec.phase_columns


_GAMES: dict[str, GameSpec] = {}


def register_game(spec: GameSpec) -> GameSpec:
    """Add ``spec`` to the registry; a second game of the same name is an error."""
    if not isinstance(spec, GameSpec):
        raise TypeError(f"register_game takes a GameSpec, got {type(spec).__name__}")
    if spec.name in _GAMES and _GAMES[spec.name] != spec:
        raise ValueError(f"a game named {spec.name!r} is already registered")
    if not spec.players:
        raise ValueError(f"game {spec.name!r} must allow at least one player count")
    _GAMES[spec.name] = spec
    return spec


def game_names() -> tuple[str, ...]:
    """The registered games, in registration order."""
    return tuple(_GAMES)


def get_game(name: Any = None) -> GameSpec:
    """The spec of game ``name`` (None: the default game, the first registered); ValueError listing the games
    otherwise."""
    if name is None:
        if not _GAMES:
            raise ValueError("no game is registered: a game registers itself when its package is imported")
        name = next(iter(_GAMES))  # the first registered game is the default
    if isinstance(name, GameSpec):
        return name
    try:
        return _GAMES[name]
    except (KeyError, TypeError):
        raise ValueError(f"game={name!r} is not allowed; allowed values: {', '.join(_GAMES)}") from None


def _describe(spec: GameSpec) -> str:
    return f"game={spec.name!r} ({spec.title})"


def resolve_game(game: Any = None, **flags: Any) -> tuple[GameSpec, Any]:
    """(spec, checked config) of ``game`` and its rule flags (``players`` among them).

    Errors name the game: ``players`` outside the game's table sizes says which game takes that
    count; a flag the game does not take says which other game has it (``rook_env.env(players=5)``:
    "players=5 ... call_partner"). The game's own ``make_config`` checks values and combinations.
    """
    spec = get_game(game)
    flags = dict(flags)
    if "players" in flags and not spec.takes_players:
        players = flags.pop("players")
        if players not in spec.players:
            others = [f"game={g.name!r} ({', '.join(map(str, g.players))})" for g in _GAMES.values()
                      if g is not spec and players in g.players]
            hint = f"; {players} players play " + " or ".join(others) if others else ""
            raise ValueError(f"players={players!r} is not allowed for {_describe(spec)}, which is played by "
                             f"{', '.join(map(str, spec.players))} players{hint}")
    known = set(spec.flag_names)
    unknown = sorted(set(flags) - known)
    if unknown:
        owners = []
        for name in unknown:
            has = [g.name for g in _GAMES.values() if g is not spec and name in g.flag_names]
            if has:
                owners.append(f"{name!r} is a flag of " + " and ".join(f"game={g!r}" for g in has))
        # A game may refuse a known flag of another game with its reason (make_config says it).
        refusals = getattr(spec.config_module(), "NOT_HERE", {})
        if not set(unknown) <= set(refusals):
            hint = f" ({'; '.join(owners)})" if owners else ""
            raise ValueError(f"unknown rule flag(s) {', '.join(unknown)} for {_describe(spec)}{hint}; "
                             f"known flags: {', '.join(sorted(known))}")
    return spec, spec.load("config")(**flags)

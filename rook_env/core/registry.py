"""The game registry: every trick-taking game of the package, one :class:`GameSpec` each.

``rook_env.env``, ``raw_env``, :class:`rook_env.SingleAgentRookEnv`, the batched engine, agents,
evaluation, human play, replays and the trainer all find a game here by name::

    from rook_env.games import get_game, game_names, resolve_game

    game_names()                                   # ('partnership', 'call_partner')
    spec, config = resolve_game(game="call_partner", players=5, deck="full")
    spec.load("raw_env")(players=5)                # the game's PettingZoo AEC class

A spec names the game's parts as dotted ``"module:attribute"`` strings, imported only when asked
for (:meth:`GameSpec.load`): this module imports nothing of the package, so any module may import
it without an import circle, and a game's heavy parts (the batched engine, the image renderer,
the heuristic agent) cost nothing until used. Parts a game does not have are ``None``.

Adding a game is one module plus one :func:`register_game` call (see ``docs/adding_a_game.md``).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any

__all__ = ["DEFAULT_GAME", "GameSpec", "game_names", "get_game", "register_game", "resolve_game", "load_ref"]

DEFAULT_GAME = "partnership"


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
    """One trick-taking game: its name, ids, table sizes and where its parts live.

    ``players``: the allowed player counts (the first is the default). ``takes_players``: whether
    ``players`` is one of the game's rule flags (a game with one table size leaves it out of its
    config). The part references are ``"module:attribute"`` strings (see :func:`load_ref`):

    - ``config``: ``make_config(**flags) -> config`` (raises ``ValueError`` naming a bad flag);
      its module holds ``FLAG_NAMES``, the flags it takes;
    - ``state``: the pure rules state class (``phase``, ``legal_mask``, ``apply``, ``clone``);
    - ``raw_env`` / ``checked_env``: the PettingZoo AEC classes (raising / classic checks);
    - ``layout`` / ``obs_layout``: ``layout_for(config)`` (cards and action ids) and
      ``obs_layout(config)`` (the observation's sections);
    - ``vector``: the batched engine class; ``heuristic``: the heuristic agent's spec string
      for :func:`rook_env.agents.make_agent`; ``render_scene``: the game's table views, a
      :class:`rook_env.render.TableParts` (text, drawn scenes, replay snapshots);
    - ``networks``: the shipped trained network per player count, a checkpoint file name in
      ``rook_env/agents/checkpoints/`` (what ``make_agent("ppo")`` loads for a table of that size;
      a count not listed has none);
    - ``extra["play"]``: the game's terminal session class (:mod:`rook_env.cli.session`);
      ``extra["match"]``: its evaluation scheme (``play_match``: two fixed teams in duplicate;
      ``play_rotation_match``: a field rotated through every seat).
    """

    name: str
    title: str
    env_id: str
    players: tuple[int, ...]
    takes_players: bool
    config: str
    state: str
    raw_env: str
    checked_env: str
    layout: str
    obs_layout: str
    vector: str | None = None
    heuristic: str | None = None
    render_scene: str | None = None
    rules_section: str = ""  # where RULES.md describes the game
    networks: dict[int, str] = field(default_factory=dict)  # players -> shipped checkpoint file (make_agent("ppo"))
    extra: dict[str, str] = field(default_factory=dict)  # further named parts of a game

    @property
    def default_players(self) -> int:
        return self.players[0]

    @property
    def flag_names(self) -> tuple[str, ...]:
        """The rule flags the game takes (``players`` included where it is one)."""
        module = load_ref(self.config).__module__
        return tuple(importlib.import_module(module).FLAG_NAMES)

    def load(self, part: str) -> Any:
        """The object of one of the spec's part references (``"raw_env"``, ``"state"``, ...)."""
        ref = self.extra.get(part) if part in self.extra else getattr(self, part, None)
        if not isinstance(ref, str):
            parts = [f for f in ("config", "state", "raw_env", "checked_env", "layout", "obs_layout", "vector",
                                 "heuristic", "render_scene") if isinstance(getattr(self, f), str)]
            raise ValueError(f"game {self.name!r} has no part {part!r}; its parts: {', '.join(parts + list(self.extra))}")
        return load_ref(ref)

    def make_config(self, **flags: Any) -> Any:
        """The game's checked rules config of ``flags`` (see :func:`resolve_game` for the errors)."""
        return resolve_game(game=self.name, **flags)[1]


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
    """The spec of game ``name`` (None: the default game); ValueError listing the games otherwise."""
    if name is None:
        name = DEFAULT_GAME
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
        refusals = getattr(importlib.import_module(load_ref(spec.config).__module__), "NOT_HERE", {})
        if not set(unknown) <= set(refusals):
            hint = f" ({'; '.join(owners)})" if owners else ""
            raise ValueError(f"unknown rule flag(s) {', '.join(unknown)} for {_describe(spec)}{hint}; "
                             f"known flags: {', '.join(sorted(known))}")
    return spec, load_ref(spec.config)(**flags)


register_game(GameSpec(
    name="partnership",
    title="four-player partnership Rook",
    env_id="rook_env/Rook-v1",
    players=(4,),
    takes_players=False,
    config="rook_env.config:make_config",
    state="rook_env.rules:RookState",
    raw_env="rook_env.env:raw_env",
    checked_env="rook_env.env:CheckedRookEnv",
    layout="rook_env.cards:layout_for",
    obs_layout="rook_env.observation:obs_layout",
    vector="rook_env.vector.partnership:PartnershipVectorEnv",
    heuristic="heuristic",
    render_scene="rook_env.render:PARTNERSHIP",
    extra={"play": "rook_env.cli.play_partnership:PartnershipSession",
           "match": "rook_env.evaluation.match:play_match"},
    rules_section="RULES.md R1-R10, F1-F21",
    networks={4: "ppo_default.pt"},
))
register_game(GameSpec(
    name="call_partner",
    title="call-your-partner Rook, 4 to 6 players",
    env_id="rook_env/RookCallPartner-v0",
    players=(5, 4, 6),
    takes_players=True,
    config="rook_env.call_partner.config:make_config",
    state="rook_env.call_partner.rules:CallPartnerState",
    raw_env="rook_env.call_partner.env:raw_env",
    checked_env="rook_env.call_partner.env:CheckedCallPartnerEnv",
    layout="rook_env.call_partner.layout:layout_for",
    obs_layout="rook_env.call_partner.observation:obs_layout",
    vector="rook_env.vector.call_partner:CallPartnerVectorEnv",
    heuristic="call_partner_heuristic",
    render_scene="rook_env.call_partner.render:CALL_PARTNER",
    extra={"play": "rook_env.cli.play_call_partner:CallPartnerSession",
           "match": "rook_env.evaluation.call_partner:play_rotation_match"},
    rules_section="RULES.md section C",
    networks={5: "ppo_call_partner.pt"},
))

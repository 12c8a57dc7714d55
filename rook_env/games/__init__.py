"""The games of the package, one package each, and the registry they register in.

Importing this package registers the built-in games (:mod:`.partnership`, :mod:`.call_partner`); the
registry itself (:class:`GameSpec`, :func:`get_game`, ...) lives in :mod:`rook_env.core.registry` and is
re-exported here::

    from rook_env.games import get_game, game_names, resolve_game

    game_names()                                   # ('partnership', 'call_partner')
    spec, config = resolve_game(game="call_partner", players=5, deck="full")
    spec.load("raw_env")(players=5)                # the game's PettingZoo AEC class
    spec.bind(players=5)                           # the game at one table's flags (what training plays)

A further game is one package that calls :func:`register_game` when imported (``docs/adding_a_game.md``).
"""

from __future__ import annotations

from rook_env.core.registry import Game, GameSpec, game_names, get_game, load_ref, register_game, resolve_game

# each game registers itself on import; the registration order is game_names()'s (the default game first)
from . import partnership  # noqa: F401,I001
from . import call_partner  # noqa: F401,I001

__all__ = ["DEFAULT_GAME", "Game", "GameSpec", "game_names", "get_game", "load_ref", "register_game", "resolve_game"]

DEFAULT_GAME = get_game(None).name  # the first registered: "partnership"

"""The test folder's set-up: one pytest marker per registered game.

The tests parametrized over the games (``helpers.GAMES``, ``helpers.over_games``) mark each case with its
game, and a test of one game's own rules carries that game's marker, so ``pytest -m call_partner`` runs
everything of call-your-partner Rook and ``-m partnership`` everything of the partnership game.
"""

from __future__ import annotations

from helpers import GAME_NAMES

from rook_env.games import get_game


def pytest_configure(config):
    for name in GAME_NAMES:
        config.addinivalue_line("markers", f"{name}: a test of {get_game(name).title}")

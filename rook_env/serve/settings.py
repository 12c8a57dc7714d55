"""What the operator of the showdown server configures: :class:`Settings` (``rook-serve``'s options).

Kept apart from :mod:`.app` so that ``rook-serve --help`` and a missing ``[serve]`` extra are answered
without importing Starlette."""

from __future__ import annotations

import os
from dataclasses import dataclass

__all__ = ["Settings"]


@dataclass
class Settings:
    """What the operator configures (the command line of ``rook-serve``)."""

    data: str = os.path.join("runs", "serve")  # the SQLite file and the replays written for Compare
    checkpoints: str | None = None  # the only folder checkpoints are loaded from
    results: str | None = os.path.join("runs", "eval")  # rook-eval JSON results for Compare
    max_games: int = 100  # open games (not over) at once
    expire_hours: float = 168.0  # a game untouched this long is deleted
    max_body: int = 16 * 1024  # bytes of a request body
    db: str | None = None  # the SQLite file; default <data>/showdown.sqlite (":memory:" for tests)
    # Host headers answered (a DNS-rebinding page cannot reach a loopback server); ("*",) for any
    allowed_hosts: tuple[str, ...] = ("127.0.0.1", "localhost", "::1")

"""What the showdown app's handlers share: the settings, the store, the live tables, the replay jobs.

One :class:`Showdown` per app (``app.state.showdown``); the handlers of :mod:`.routes` reach it through
their request. :class:`HTTPError` is the one way a handler refuses a request: the app answers it as
``{"error": message}`` with its status (an HTML page for the pages' own addresses).
"""

from __future__ import annotations

import os
import re
import threading
from collections import OrderedDict
from typing import Any

from .compare import ReplayJobs
from .settings import Settings
from .store import GameGoneError, GameStore, MoveConflictError
from .tables import Table

__all__ = ["GAME_ID", "LIVE_TABLES", "HTTPError", "Showdown", "list_checkpoints"]

GAME_ID = re.compile(r"[A-Za-z0-9_-]{8,32}")  # what secrets.token_urlsafe(12) makes; matched whole
LIVE_TABLES = 64  # tables kept in memory; others are rebuilt from the store on their next request


class HTTPError(Exception):
    """A refused request: ``status`` (4xx; 500 only for an agent that failed) and a message saying what is wrong."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def list_checkpoints(folder: str | None) -> dict[str, str]:
    """``{name: path}`` of the ``*.pt`` files in ``folder`` and its subfolders (two levels; names
    relative to it, with ``/``). Only these can be played."""
    out: dict[str, str] = {}
    if not folder or not os.path.isdir(folder):
        return out
    root = os.path.abspath(folder)
    for dirpath, dirnames, files in os.walk(root):
        depth = os.path.relpath(dirpath, root).count(os.sep) + (dirpath != root)
        if depth >= 2:
            dirnames[:] = []
        for f in files:
            if f.endswith(".pt"):
                path = os.path.join(dirpath, f)
                out[os.path.relpath(path, root).replace(os.sep, "/")] = path
    return dict(sorted(out.items()))


class Showdown:
    """The app's state: ``settings``, the game ``store``, up to :data:`LIVE_TABLES` live tables (the rest
    rebuilt from the store when asked for) and the Compare page's replay ``jobs``."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        db = settings.db or os.path.join(settings.data, "showdown.sqlite")
        if db != ":memory:":
            os.makedirs(os.path.dirname(os.path.abspath(db)), exist_ok=True)
        self.store = GameStore(db, expire_hours=settings.expire_hours, max_open=settings.max_games)
        self.replay_dir = os.path.join(settings.data, "replays")
        self.live: OrderedDict[str, Table] = OrderedDict()
        self.live_lock = threading.Lock()
        self.jobs = ReplayJobs(self.replay_dir, self.checkpoints)

    def checkpoints(self) -> dict[str, str]:
        """The checkpoints a client may name (the configured folder's, listed now)."""
        return list_checkpoints(self.settings.checkpoints)

    def remember(self, table: Table) -> Table:
        """Keep ``table`` live (the most recently used last); returns the live table of its game."""
        with self.live_lock:
            self.live[table.id] = self.live.get(table.id, table)
            self.live.move_to_end(table.id)
            while len(self.live) > LIVE_TABLES:
                self.live.popitem(last=False)
            return self.live[table.id]

    def forget(self, game_id: str) -> None:
        with self.live_lock:
            self.live.pop(game_id, None)

    def table(self, game_id: str) -> Table:
        """The live table of ``game_id``, rebuilt from the store if need be; 404 for an unknown game."""
        if not GAME_ID.fullmatch(game_id):
            raise HTTPError(404, f"no game {game_id[:40]!r}: a game id is 8 to 32 letters, digits, '-' or '_'")
        with self.live_lock:
            t = self.live.get(game_id)
        if t is not None:
            if not self.store.touch(game_id):  # deleted or expired meanwhile
                self.forget(game_id)
                raise HTTPError(404, f"no game {game_id!r} (it was deleted or has expired)")
            return self.remember(t)
        rec = self.store.load(game_id)
        if rec is None:
            raise HTTPError(404, f"no game {game_id!r} (it may have expired: games untouched for "
                                 f"{self.settings.expire_hours:g} hours are deleted)")
        try:
            t = Table(game_id, rec.spec, rec.actions, rec.explains, self.checkpoints())
        except ValueError as exc:  # e.g. a checkpoint that has left the folder since
            raise HTTPError(409, f"game {game_id!r} cannot be rebuilt here: {exc}") from None
        return self.remember(t)

    def commit(self, t: Table, action: int, why: dict[str, Any] | None) -> None:
        """Store the move, then make it: a move that cannot be stored leaves the table as it was."""
        try:
            self.store.add_move(t.id, t.moves, action, why)
        except GameGoneError:  # deleted while the move was being decided
            self.forget(t.id)
            raise HTTPError(404, f"no game {t.id!r}: it was deleted while this move was being made") from None
        except MoveConflictError:
            self.forget(t.id)  # rebuilt from the store on the next request
            raise HTTPError(409, "the game has moved on (another tab or window moved it): showing it as it is now") \
                from None
        t.apply(action, why)
        if t.over:
            self.store.mark_over(t.id)

"""The showdown server's game store: SQLite through the standard library's :mod:`sqlite3`.

A game is stored as what it was started with (the game, its rule flags, the seed, the seats' agent
specs, the mode) plus its action history, one row per decision, with the acting agent's explanation
(action probabilities, value, search values) in watch mode. The table itself is never pickled: it is
rebuilt by resetting the environment with the seed and replaying the actions (a few milliseconds
for a whole game), which keeps the store readable, small, independent of Python and library
versions, and unable to run code when loaded.

Expiry (the documented rule): a game not touched (created, moved or viewed) for ``expire_hours``
(default 168, a week) is deleted, with its moves, whenever a game is created and when the server
starts. ``max_open`` (default 100) bounds the games that are not over: creating one more is refused
until one ends, is deleted or expires.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from dataclasses import dataclass
from typing import Any

__all__ = ["GameGoneError", "GameRecord", "GameStore", "MoveConflictError", "StoreFullError"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    id TEXT PRIMARY KEY,
    spec TEXT NOT NULL,          -- JSON: mode, game, flags, seed, agents, seat
    created REAL NOT NULL,
    touched REAL NOT NULL,
    over INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS moves (
    game_id TEXT NOT NULL REFERENCES games(id) ON DELETE CASCADE,
    n INTEGER NOT NULL,          -- 0, 1, 2, ...: the order of the decisions
    action INTEGER NOT NULL,
    explain TEXT,                -- JSON or NULL
    PRIMARY KEY (game_id, n)
);
"""


class StoreFullError(RuntimeError):
    """Too many open games: the limit ``max_open`` is reached."""


class GameGoneError(LookupError):
    """The game is not in the store (deleted or expired while a move was being decided)."""


class MoveConflictError(RuntimeError):
    """A decision of that number is stored already: another writer moved the game first."""


@dataclass
class GameRecord:
    """One stored game: its start (``spec``) and its decisions in order."""

    id: str
    spec: dict[str, Any]
    actions: list[int]
    explains: list[dict[str, Any] | None]
    created: float
    touched: float
    over: bool


class GameStore:
    """Games in one SQLite file (``":memory:"`` for a store that lives as long as the object).

    Thread-safe: one connection guarded by a lock (the server's handlers run in a thread pool)."""

    def __init__(self, path: str, expire_hours: float = 168.0, max_open: int = 100) -> None:
        if not expire_hours > 0:
            raise ValueError(f"expire_hours must be positive, got {expire_hours!r}")
        if isinstance(max_open, bool) or not isinstance(max_open, int) or max_open < 1:
            raise ValueError(f"max_open must be a positive integer, got {max_open!r}")
        self.path = path
        self.expire_s = float(expire_hours) * 3600.0
        self.max_open = max_open
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA foreign_keys = ON")
        if path != ":memory:":
            self._db.execute("PRAGMA journal_mode = WAL")
        self._db.executescript(SCHEMA)
        self.expire()

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # ------------------------------------------------------------------ games
    def create(self, game_id: str, spec: dict[str, Any], now: float | None = None) -> None:
        """Store a new game (expired games are deleted first); raises :class:`StoreFullError` when
        ``max_open`` games are not over."""
        now = time.time() if now is None else now
        self.expire(now)
        with self._lock:
            (open_games,) = self._db.execute("SELECT COUNT(*) FROM games WHERE over = 0").fetchone()
            if open_games >= self.max_open:
                raise StoreFullError(f"too many open games ({open_games}, the limit is {self.max_open}): finish or "
                                     f"delete one, or wait until one expires")
            self._db.execute("INSERT INTO games (id, spec, created, touched) VALUES (?, ?, ?, ?)",
                             (game_id, json.dumps(spec), now, now))

    def load(self, game_id: str, touch: bool = True) -> GameRecord | None:
        """The game with its moves, or None when there is no such game."""
        with self._lock:
            row = self._db.execute("SELECT spec, created, touched, over FROM games WHERE id = ?",
                                   (game_id,)).fetchone()
            if row is None:
                return None
            moves = self._db.execute("SELECT action, explain FROM moves WHERE game_id = ? ORDER BY n",
                                     (game_id,)).fetchall()
            if touch:
                self._db.execute("UPDATE games SET touched = ? WHERE id = ?", (time.time(), game_id))
        return GameRecord(game_id, json.loads(row[0]), [a for a, _ in moves],
                          [None if x is None else json.loads(x) for _, x in moves], row[1], row[2], bool(row[3]))

    def add_move(self, game_id: str, n: int, action: int, explain: dict[str, Any] | None = None) -> None:
        """Append decision number ``n`` (the count of stored moves). Raises :class:`GameGoneError` when
        the game is no longer stored and :class:`MoveConflictError` when decision ``n`` is stored
        already (a second writer fails on the primary key instead of forking the history)."""
        with self._lock:
            self._db.execute("BEGIN")
            try:
                if self._db.execute("SELECT 1 FROM games WHERE id = ?", (game_id,)).fetchone() is None:
                    raise GameGoneError(game_id)
                try:
                    self._db.execute("INSERT INTO moves (game_id, n, action, explain) VALUES (?, ?, ?, ?)",
                                     (game_id, n, int(action), None if explain is None else json.dumps(explain)))
                except sqlite3.IntegrityError as exc:
                    raise MoveConflictError(f"decision {n} of game {game_id!r} is stored already") from exc
                self._db.execute("UPDATE games SET touched = ? WHERE id = ?", (time.time(), game_id))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def touch(self, game_id: str) -> bool:
        """Mark the game as used now (expiry counts from here); False when there is no such game."""
        with self._lock:
            return self._db.execute("UPDATE games SET touched = ? WHERE id = ?", (time.time(), game_id)).rowcount > 0

    def mark_over(self, game_id: str) -> None:
        """The game has ended: it no longer counts towards ``max_open``."""
        with self._lock:
            self._db.execute("UPDATE games SET over = 1 WHERE id = ?", (game_id,))

    def delete(self, game_id: str) -> bool:
        with self._lock:
            cur = self._db.execute("DELETE FROM games WHERE id = ?", (game_id,))
            return cur.rowcount > 0

    def list(self, limit: int = 50) -> list[dict[str, Any]]:
        """The most recently touched games: id, spec, moves, over, created, touched."""
        with self._lock:
            rows = self._db.execute(
                "SELECT g.id, g.spec, g.created, g.touched, g.over, "
                "(SELECT COUNT(*) FROM moves m WHERE m.game_id = g.id) FROM games g ORDER BY g.touched DESC LIMIT ?",
                (limit,)).fetchall()
        return [{"id": r[0], "spec": json.loads(r[1]), "created": r[2], "touched": r[3], "over": bool(r[4]),
                 "moves": r[5]} for r in rows]

    def expire(self, now: float | None = None) -> int:
        """Delete the games not touched for ``expire_hours``; returns how many."""
        now = time.time() if now is None else now
        with self._lock:
            cur = self._db.execute("DELETE FROM games WHERE touched < ?", (now - self.expire_s,))
            return cur.rowcount

"""Showdown: Rook in the browser. Play against agents, watch them play each other, compare them.

Start it with ``rook-serve`` (the ``[serve]`` extra: Starlette and uvicorn) and open
http://127.0.0.1:8000/. Pages:

- **Play** (``/play/<id>``): your seat at a partnership table (any rule flags or preset) or at a
  call-your-partner table of 4 to 6; any agent in every other seat. Only your legal moves are
  clickable; the table is drawn as ``render_mode="rgb_array"`` draws it, from your seat's
  observation alone.
- **Watch** (``/watch/<id>``): agents play each other, step by step or at speed, from one seat or as a
  spectator, with each decision's action probabilities, value and search values.
- **Compare** (``/compare``): a leaderboard of ``rook-eval`` results, each match linking to the
  replays of its largest swings in the existing replay viewer.

Modules: :mod:`.app` (``create_app``: the routes wired to the settings and the store, the host check,
the error answers), :mod:`.routes` (one handler per route), :mod:`.context` (what the handlers share:
store, live tables, replay jobs), :mod:`.tables` (a live game and what a viewer may see),
:mod:`.store` (the SQLite store and the expiry rule), :mod:`.compare` (leaderboard and replays),
:mod:`.labels` (the rule flags in words), :mod:`.cli` (``rook-serve``). The pages (HTML, CSS, JavaScript; no build step, nothing fetched from
the internet) are package data in ``rook_env/serve/pages``.
"""

from __future__ import annotations

from rook_env.core.optional import load

from .settings import Settings

__all__ = ["Settings", "create_app"]


def __getattr__(name: str) -> object:  # the app needs Starlette (the [serve] extra): imported when asked for
    if name == "create_app":
        return load("rook_env.serve.app:create_app", needs=("starlette",))
    raise AttributeError(f"module 'rook_env.serve' has no attribute {name!r}")

"""The showdown web app (Starlette): pages, the JSON API, validation and limits.

``create_app(settings)`` returns an ASGI app; :mod:`rook_env.serve.cli` runs it with uvicorn.

API (JSON in and out; every error is ``{"error": message}`` with a 4xx status and changes nothing):

=========================================  ===============================================================
``GET  /api/options``                      games, their rule flags and presets, the agents to choose from
``GET  /api/games``                        the stored games, most recently used first
``POST /api/games``                        start a game: ``{"mode": "play"|"watch", "game", "flags",
                                           "seed", "agents": [spec per seat, null for yours], "seat"}``
``GET  /api/games/{id}?view=``             what the viewer may see (play: always your seat; watch:
                                           ``view=spectator`` or a seat number)
``POST /api/games/{id}/action``            play: your move ``{"action": id, "moves": n}``
``POST /api/games/{id}/advance``           the next agent decision ``{"moves": n}`` (play and watch)
``GET  /api/games/{id}/table.png?view=``   the table as ``render_mode="rgb_array"`` draws it
``DELETE /api/games/{id}``                 forget a game
``GET  /api/leaderboard``                  the results folder summarised (:mod:`.compare`)
=========================================  ===============================================================

``moves`` (optional) is the number of decisions the client has seen: a request made on an older
view is refused (409) instead of playing twice. Status codes: 400 a malformed request or an illegal
move (the message names the legal ones), 403 a view play mode does not allow, 404 an unknown game,
409 not your turn / the game is over / a stale view, 413 a request body over the limit, 415 a body
that is not sent as JSON, 429 too many open games; a request naming another host than the server's
(DNS rebinding) gets 400.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import threading
from collections import OrderedDict
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from .compare import ReplayJobs, leaderboard, match_of
from .settings import Settings
from .store import GameStore, StoreFullError
from .tables import AgentError, MoveError, Table, agent_choices, check_spec

__all__ = ["Settings", "create_app", "list_checkpoints"]

GAME_ID = re.compile(r"^[A-Za-z0-9_-]{8,32}$")
STATIC = {"style.css": "text/css", "showdown.js": "text/javascript", "favicon.svg": "image/svg+xml"}
PAGES = {"/": "index.html", "/compare": "compare.html"}
LIVE_TABLES = 64  # tables kept in memory; others are rebuilt from the store on their next request


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


class HTTPError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _page(name: str) -> str:
    return resources.files("rook_env.serve").joinpath("pages", name).read_text(encoding="utf-8")


def create_app(settings: Settings | None = None) -> Starlette:
    """The showdown app for ``settings`` (see :class:`Settings`)."""
    cfg = settings or Settings()
    db = cfg.db or os.path.join(cfg.data, "showdown.sqlite")
    if db != ":memory:":
        os.makedirs(os.path.dirname(os.path.abspath(db)), exist_ok=True)
    store = GameStore(db, expire_hours=cfg.expire_hours, max_open=cfg.max_games)
    replay_dir = os.path.join(cfg.data, "replays")
    live: OrderedDict[str, Table] = OrderedDict()
    live_lock = threading.Lock()

    def checkpoints() -> dict[str, str]:
        return list_checkpoints(cfg.checkpoints)

    jobs = ReplayJobs(replay_dir, checkpoints)

    # ------------------------------------------------------------------ helpers
    async def body_json(request: Request) -> dict[str, Any]:
        length = request.headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > cfg.max_body):
            raise HTTPError(413, f"the request body is over the limit of {cfg.max_body} bytes")
        raw = b""
        async for chunk in request.stream():
            raw += chunk
            if len(raw) > cfg.max_body:
                raise HTTPError(413, f"the request body is over the limit of {cfg.max_body} bytes")
        if not raw.strip():
            return {}
        if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
            # a cross-site form or text/plain post (no CORS preflight) cannot move a game
            raise HTTPError(415, "send the request body as JSON with 'Content-Type: application/json'")
        try:
            data = json.loads(raw, parse_constant=_no_constant)
        except (ValueError, UnicodeDecodeError) as exc:
            raise HTTPError(400, f"the request body is not valid JSON: {exc}") from None
        if not isinstance(data, dict):
            raise HTTPError(400, f"the request body must be a JSON object, got {type(data).__name__}")
        return data

    def table_of(game_id: str) -> Table:
        if not GAME_ID.match(game_id):
            raise HTTPError(404, f"no game {game_id!r}: a game id is 8 to 32 letters, digits, '-' or '_'")
        with live_lock:
            t = live.get(game_id)
            if t is not None:
                live.move_to_end(game_id)
        if t is not None:
            if not store.touch(game_id):  # deleted or expired meanwhile
                with live_lock:
                    live.pop(game_id, None)
                raise HTTPError(404, f"no game {game_id!r} (it was deleted or has expired)")
            return t
        rec = store.load(game_id)
        if rec is None:
            raise HTTPError(404, f"no game {game_id!r} (it may have expired: games untouched for "
                                 f"{cfg.expire_hours:g} hours are deleted)")
        try:
            t = Table(game_id, rec.spec, rec.actions, rec.explains, checkpoints())
        except ValueError as exc:  # e.g. a checkpoint that has left the folder since
            raise HTTPError(409, f"game {game_id!r} cannot be rebuilt here: {exc}") from None
        with live_lock:
            live[game_id] = live.get(game_id, t)
            live.move_to_end(game_id)
            while len(live) > LIVE_TABLES:
                live.popitem(last=False)
            return live[game_id]

    def viewer_of(t: Table, request: Request) -> int | None:
        v = request.query_params.get("view")
        if t.seat is not None:  # play mode: only the person's seat, ever
            if v not in (None, "", str(t.seat)):
                raise HTTPError(403, f"this game is played from seat {t.seat}: it shows only that seat's view")
            return t.seat
        if v in (None, "", "spectator"):
            return None
        if not v.isdigit() or not 0 <= int(v) < t.n:
            raise HTTPError(400, f"view must be 'spectator' or a seat 0..{t.n - 1}, got {v!r}")
        return int(v)

    def check_moves(t: Table, data: dict[str, Any]) -> None:
        if "moves" not in data:
            return
        n = data["moves"]
        if isinstance(n, bool) or not isinstance(n, int):
            raise HTTPError(400, f"moves must be an integer (the decisions your view has seen), got {n!r}")
        if n != t.moves:
            raise HTTPError(409, f"the game has moved on: {t.moves} decisions, your view has {n}; reload it")

    def commit(t: Table, action: int, why: dict[str, Any] | None) -> None:
        """Store the move, then make it: a failure to store leaves the table as it was."""
        store.add_move(t.id, t.moves, action, why)
        t.apply(action, why)
        if t.over:
            store.mark_over(t.id)

    # ------------------------------------------------------------------ API
    async def options(request: Request) -> JSONResponse:
        import importlib

        from rook_env.games import game_names, get_game

        names = sorted(checkpoints())
        hidden = ("episode", "reward", "players")  # the server plays whole games; rewards do not matter here
        games = {}
        for game in game_names():  # every registered game, its flag choices and presets from its config module
            spec = get_game(game)
            flags = importlib.import_module(spec.config.partition(":")[0])
            games[game] = {"players": sorted(spec.players), "agents": agent_choices(game, names),
                           "choices": {k: v for k, v in getattr(flags, "CHOICES", {}).items() if k not in hidden},
                           "presets": sorted(getattr(flags, "PRESETS", {}))}
        return JSONResponse({
            "games": games,
            "checkpoints": names,
            "limits": {"max_games": cfg.max_games, "expire_hours": cfg.expire_hours, "max_body": cfg.max_body},
        })

    async def games_list(request: Request) -> JSONResponse:
        games = store.list()
        for g in games:  # a played game's seed would tell every hand of it: never sent back
            if g["spec"].get("mode") == "play":
                g["spec"]["seed"] = None
        return JSONResponse({"games": games})

    async def games_create(request: Request) -> JSONResponse:
        data = await body_json(request)
        try:
            spec = check_spec(data, checkpoints())
        except ValueError as exc:
            raise HTTPError(400, str(exc)) from None
        game_id = secrets.token_urlsafe(12)
        try:  # builds the agents (a checkpoint loads): a bad one fails here
            t = await run_in_threadpool(Table, game_id, spec, [], [], checkpoints())
        except ValueError as exc:
            raise HTTPError(400, str(exc)) from None
        try:
            store.create(game_id, spec)
        except StoreFullError as exc:
            raise HTTPError(429, str(exc)) from None
        with live_lock:
            live[game_id] = t
        page = "play" if spec["mode"] == "play" else "watch"
        return JSONResponse({"id": game_id, "url": f"/{page}/{game_id}"}, status_code=201)

    async def game_view(request: Request) -> JSONResponse:
        def work() -> dict[str, Any]:
            t = table_of(request.path_params["game_id"])
            viewer = viewer_of(t, request)
            with t.lock:
                return t.view(viewer)

        return JSONResponse(await run_in_threadpool(work))

    async def game_action(request: Request) -> JSONResponse:
        t = await run_in_threadpool(table_of, request.path_params["game_id"])
        data = await body_json(request)
        unknown = sorted(set(data) - {"action", "moves"})
        if unknown:
            raise HTTPError(400, f"unknown field(s) {', '.join(unknown)}; allowed: action, moves")
        if "action" not in data:
            raise HTTPError(400, "missing field 'action' (an integer action id from the view's 'legal' list)")

        def work() -> dict[str, Any]:
            with t.lock:
                check_moves(t, data)
                try:
                    action = t.check_person_move(data["action"])
                except MoveError as exc:
                    raise HTTPError(exc.status, str(exc)) from None
                commit(t, action, None)
                return t.view(t.seat)

        return JSONResponse(await run_in_threadpool(work))

    async def game_advance(request: Request) -> JSONResponse:
        t = await run_in_threadpool(table_of, request.path_params["game_id"])
        data = await body_json(request)
        unknown = sorted(set(data) - {"moves"})
        if unknown:
            raise HTTPError(400, f"unknown field(s) {', '.join(unknown)}; allowed: moves")
        viewer = viewer_of(t, request)

        def work() -> dict[str, Any]:  # an agent thinks (search, a network): off the event loop
            with t.lock:
                check_moves(t, data)
                try:
                    action, why = t.agent_move(explained=t.seat is None)
                except MoveError as exc:
                    raise HTTPError(exc.status, str(exc)) from None
                except AgentError as exc:
                    raise HTTPError(500, str(exc)) from None
                commit(t, action, why)
                return t.view(viewer)

        return JSONResponse(await run_in_threadpool(work))

    async def game_png(request: Request) -> Response:
        def work() -> tuple[bytes, bool]:
            t = table_of(request.path_params["game_id"])
            viewer = viewer_of(t, request)
            with t.lock:  # ?m=<decisions> names one state of the game: that picture never changes
                return t.png(viewer), request.query_params.get("m") == str(t.moves)

        try:
            png, fixed = await run_in_threadpool(work)
        except ImportError as exc:
            raise HTTPError(404, f"the drawn table needs Pillow (pip install \"rook_env[render]\"): {exc}") from None
        cache = "private, max-age=3600" if fixed else "no-store"
        return Response(png, media_type="image/png", headers={"Cache-Control": cache})

    async def game_delete(request: Request) -> JSONResponse:
        game_id = request.path_params["game_id"]
        await run_in_threadpool(table_of, game_id)  # 404 for an unknown id
        with live_lock:
            live.pop(game_id, None)
        store.delete(game_id)
        return JSONResponse({"deleted": game_id})

    async def api_leaderboard(request: Request) -> JSONResponse:
        board = leaderboard(cfg.results)
        for row in board["matches"]:
            row["replays"] = f"/compare/replays/{row['file']}/{row['index']}"
        return JSONResponse(board)

    # ------------------------------------------------------------------ pages
    async def page(request: Request) -> HTMLResponse:
        return HTMLResponse(_page(PAGES[request.url.path]))

    async def game_page(request: Request) -> HTMLResponse:
        await run_in_threadpool(table_of, request.path_params["game_id"])  # 404 for an unknown game
        return HTMLResponse(_page("game.html"))

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in STATIC:
            raise HTTPError(404, f"no file {name!r}")
        return Response(_page(name), media_type=STATIC[name])

    async def replay_file(request: Request) -> Response:
        """A replay viewer page: an HTML file of the results folder or one written for Compare."""
        name = request.path_params["name"]
        if name in _html_files(cfg.results):
            return FileResponse(os.path.join(cfg.results, name), media_type="text/html")
        if name in _html_files(replay_dir):
            return FileResponse(os.path.join(replay_dir, name), media_type="text/html")
        raise HTTPError(404, f"no replay file {name!r}")

    async def replays_of_match(request: Request) -> Response:
        name, index = request.path_params["file"], request.path_params["index"]
        try:
            match = match_of(cfg.results, name, int(index))
        except (KeyError, ValueError) as exc:
            raise HTTPError(404, str(exc.args[0] if exc.args else exc)) from None
        state, what = jobs.status(match)
        if state == "ready":
            return RedirectResponse(f"/replays/{what}", status_code=303)
        if state == "failed":
            return HTMLResponse(_wait_page(f"The replays could not be written: {what}", refresh=False), status_code=500)
        if state == "absent":
            try:
                jobs.start(match)
            except ValueError as exc:
                raise HTTPError(400, str(exc)) from None
        return HTMLResponse(_wait_page(f"Playing {match['team_a']} vs {match['team_b']} again ({match['deals']} deals) "
                                       f"to record its largest swings; this page reloads until they are ready."))

    async def replays_index(request: Request) -> JSONResponse:
        return JSONResponse({"files": _html_files(cfg.results) if cfg.results else [],
                             "written": _html_files(replay_dir)})

    # ------------------------------------------------------------------ errors
    async def on_http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPError)
        return JSONResponse({"error": exc.message}, status_code=exc.status)

    async def on_starlette_http(request: Request, exc: Exception) -> Response:
        status = getattr(exc, "status_code", 500)
        detail = getattr(exc, "detail", "error")
        return JSONResponse({"error": f"{detail}: {request.method} {request.url.path}"}, status_code=status)

    async def on_bug(request: Request, exc: Exception) -> Response:  # a bug of the server: say so, as JSON
        return JSONResponse({"error": f"internal error ({type(exc).__name__}: {exc})"}, status_code=500)

    gid = "{game_id:str}"
    routes = [
        Route("/", page), Route("/compare", page),
        Route(f"/play/{gid}", game_page), Route(f"/watch/{gid}", game_page),
        Route("/static/{name:str}", static),
        Route("/replays/{name:str}", replay_file),
        Route("/compare/replays/{file:str}/{index:str}", replays_of_match),
        Route("/api/options", options),
        Route("/api/games", games_list, methods=["GET"]),
        Route("/api/games", games_create, methods=["POST"]),
        Route(f"/api/games/{gid}", game_view, methods=["GET"]),
        Route(f"/api/games/{gid}", game_delete, methods=["DELETE"]),
        Route(f"/api/games/{gid}/action", game_action, methods=["POST"]),
        Route(f"/api/games/{gid}/advance", game_advance, methods=["POST"]),
        Route(f"/api/games/{gid}/table.png", game_png, methods=["GET"]),
        Route("/api/leaderboard", api_leaderboard),
        Route("/api/replays", replays_index),
    ]
    app = Starlette(routes=routes, exception_handlers={HTTPError: on_http_error, HTTPException: on_starlette_http,
                                                     Exception: on_bug},
                    middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=list(cfg.allowed_hosts))])
    app.state.store = store
    app.state.settings = cfg
    app.state.live = live
    return app


def _no_constant(name: str) -> Any:
    """NaN and Infinity are not JSON (Python's parser takes them): refused like any other bad JSON."""
    raise ValueError(f"{name} is not a JSON value")


def _html_files(folder: str | None) -> list[str]:
    if not folder or not os.path.isdir(folder):
        return []
    return sorted(f for f in os.listdir(folder) if f.endswith(".html") and os.path.isfile(os.path.join(folder, f)))


def _wait_page(message: str, refresh: bool = True) -> str:
    import html

    meta = '<meta http-equiv="refresh" content="3">' if refresh else ""
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">{meta}<title>Replays</title>'
            f'<link rel="stylesheet" href="/static/style.css"></head><body><main class="narrow"><h1>Replays</h1>'
            f'<p>{html.escape(message)}</p><p><a href="/compare">Back to Compare</a></p></main></body></html>')

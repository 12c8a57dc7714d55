"""The showdown app's routes: one module-level handler per route, and what they share to read a request.

Every handler finds the app's state (:class:`~rook_env.serve.context.Showdown`) as
``request.app.state.showdown`` and refuses a request by raising
:class:`~rook_env.serve.context.HTTPError`; :data:`ROUTES` lists them for :func:`rook_env.serve.app.create_app`.
Work that takes time (rebuilding a table, an agent thinking, drawing the table) runs off the event loop.
"""

from __future__ import annotations

import html
import json
import os
import secrets
from importlib import resources
from typing import Any
from urllib.parse import urlsplit

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from rook_env.games import game_names, get_game

from .compare import leaderboard, match_of
from .context import HTTPError, Showdown
from .labels import PRESET_LABELS, flag_labels
from .store import StoreFullError
from .tables import AgentError, MoveError, Table, agent_choices, check_spec, shown

__all__ = ["MAX_DEPTH", "ROUTES", "body_json", "check_origin", "page_text", "viewer_of"]

STATIC = {"style.css": "text/css", "showdown.js": "text/javascript", "favicon.svg": "image/svg+xml"}
PAGES = {"/": "index.html", "/compare": "compare.html"}
MAX_DEPTH = 16  # nesting of a request body's arrays and objects (a game's start needs 3)
HIDDEN_FLAGS = ("episode", "reward", "players")  # the server plays whole games; rewards do not matter here


# ------------------------------------------------------------------------------ reading a request
def showdown(request: Request) -> Showdown:
    return request.app.state.showdown


def page_text(name: str) -> str:
    """A file of the pages (package data ``rook_env/serve/pages``)."""
    return resources.files("rook_env.serve").joinpath("pages", name).read_text(encoding="utf-8")


def json_depth(raw: bytes) -> int:
    """How deeply the arrays and objects of a JSON text nest (brackets inside strings do not count)."""
    depth = deepest = 0
    in_string = escaped = False
    for b in raw:
        if in_string:
            if escaped:
                escaped = False
            elif b == 0x5C:  # backslash
                escaped = True
            elif b == 0x22:  # quote
                in_string = False
        elif b == 0x22:
            in_string = True
        elif b in (0x5B, 0x7B):  # [ {
            depth += 1
            deepest = max(deepest, depth)
        elif b in (0x5D, 0x7D):
            depth -= 1
    return deepest


async def body_json(request: Request) -> dict[str, Any]:
    """The request's body: a JSON object sent with ``Content-Type: application/json`` (an empty body
    is ``{}``). 415 for anything else, so that another site's form or text/plain post (sent without
    asking first) cannot move a game; 413 over the size limit; 400 for JSON that is broken, not an
    object or nested deeper than :data:`MAX_DEPTH`."""
    limit = showdown(request).settings.max_body
    if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
        raise HTTPError(415, "send the request body as JSON with 'Content-Type: application/json' ({} for "
                             "none): a form or a text/plain post, which another site can send, moves nothing")
    check_origin(request)
    length = request.headers.get("content-length")
    if length is not None and (not (length.isascii() and length.isdigit()) or int(length) > limit):
        raise HTTPError(413, f"the request body is over the limit of {limit} bytes")
    raw = b""
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > limit:
            raise HTTPError(413, f"the request body is over the limit of {limit} bytes")
    if not raw.strip():
        return {}
    if json_depth(raw) > MAX_DEPTH:
        raise HTTPError(400, f"the request body nests arrays and objects more than {MAX_DEPTH} deep")
    try:
        data = json.loads(raw, parse_constant=_no_constant)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise HTTPError(400, f"the request body is not valid JSON: {str(exc)[:200]}") from None
    if not isinstance(data, dict):
        raise HTTPError(400, f"the request body must be a JSON object, got {type(data).__name__}")
    return data


def check_origin(request: Request) -> None:
    """A request that changes something must come from this server's own pages: 403 when the browser says it
    comes from another site (an ``Origin`` other than the address it was sent to, or ``Sec-Fetch-Site``
    ``cross-site`` / ``same-site``). A client that sends neither header (curl, a script) is not a browser
    page: it is answered."""
    origin = request.headers.get("origin")
    site = request.headers.get("sec-fetch-site", "").strip().lower()
    if origin is not None:
        try:
            parts = urlsplit(origin.strip().lower())
        except ValueError:  # "http://[::1": not an address
            parts = None
        host = request.headers.get("host", "").strip().lower()
        if parts is None or parts.scheme not in ("http", "https") or parts.netloc != host or parts.path not in ("", "/"):
            raise HTTPError(403, f"a request from another site ({shown(origin)}) moves nothing here: only this "
                                 f"server's own pages may change a game")
    if site in ("cross-site", "same-site"):
        raise HTTPError(403, f"a request from another site (Sec-Fetch-Site: {shown(site)}) moves nothing here: only "
                             f"this server's own pages may change a game")


def _no_constant(name: str) -> Any:
    """NaN and Infinity are not JSON (Python's parser takes them): refused like any other bad JSON."""
    raise ValueError(f"{name} is not a JSON value")


def check_fields(data: dict[str, Any], allowed: tuple[str, ...]) -> None:
    unknown = sorted(set(data) - set(allowed))
    if unknown:
        raise HTTPError(400, f"unknown field(s) {shown(', '.join(unknown))}; allowed: {', '.join(allowed)}")


def viewer_of(t: Table, request: Request) -> int | None:
    """The seat whose view ``?view=`` asks for (None: the spectator). Play mode: the person's seat only."""
    v = request.query_params.get("view")
    if t.seat is not None:
        if v not in (None, "", str(t.seat)):
            raise HTTPError(403, f"this game is played from seat {t.seat}: it shows only that seat's view")
        return t.seat
    if v in (None, "", "spectator"):
        return None
    if not (v.isascii() and v.isdigit() and len(v) < 4 and int(v) < t.n):  # "²" is a digit, not an int()
        raise HTTPError(400, f"view must be 'spectator' or a seat 0..{t.n - 1}, got {shown(v)}")
    return int(v)


def check_moves(t: Table, data: dict[str, Any]) -> None:
    """``moves``, when given, must be the game's count of decisions: a request made on an older view is refused."""
    if "moves" not in data:
        return
    n = data["moves"]
    if isinstance(n, bool) or not isinstance(n, int):
        raise HTTPError(400, f"moves must be an integer (the decisions your view has seen), got {shown(n)}")
    if n != t.moves:
        raise HTTPError(409, "the game has moved on (another tab or window moved it): showing it as it is now")


async def table_of(request: Request) -> Table:
    return await run_in_threadpool(showdown(request).table, request.path_params["game_id"])


# ------------------------------------------------------------------------------ the API
async def options(request: Request) -> JSONResponse:
    """The games, their rule flags (with words for the form) and presets, the agents to choose from."""
    sd = showdown(request)
    names = sorted(sd.checkpoints())
    games = {}
    for game in game_names():  # every registered game, its flag choices and presets from its config module
        spec = get_game(game)
        flags = spec.config_module()
        choices = {k: v for k, v in getattr(flags, "CHOICES", {}).items() if k not in HIDDEN_FLAGS}
        presets = sorted(getattr(flags, "PRESETS", {}))
        games[game] = {"title": spec.title, "players": sorted(spec.players), "default_players": spec.players[0],
                       "teams": spec.groups == 2, "default_agent": spec.heuristic or "random",
                       "agents": agent_choices(game, names), "choices": choices, "labels": flag_labels(choices),
                       "presets": presets, "preset_labels": {p: PRESET_LABELS.get(p, p) for p in presets}}
    cfg = sd.settings
    return JSONResponse({"games": games, "checkpoints": names,
                         "limits": {"max_games": cfg.max_games, "expire_hours": cfg.expire_hours,
                                    "max_body": cfg.max_body}})


async def games_list(request: Request) -> JSONResponse:
    """The stored games; a played game's seed would tell every hand of it: never sent back."""
    games = showdown(request).store.list()
    for g in games:
        seed = g["spec"].get("seed")
        g["spec"]["seed"] = None if g["spec"].get("mode") == "play" or seed is None else str(seed)
    return JSONResponse({"games": games})


async def games_create(request: Request) -> JSONResponse:
    sd = showdown(request)
    data = await body_json(request)
    try:
        spec = check_spec(data, sd.checkpoints())
    except (ValueError, TypeError, OverflowError) as exc:
        raise HTTPError(400, str(exc)) from None
    game_id = secrets.token_urlsafe(12)
    try:  # builds the agents (a checkpoint loads): a bad one fails here
        t = await run_in_threadpool(Table, game_id, spec, [], [], sd.checkpoints())
    except (ValueError, OverflowError) as exc:
        raise HTTPError(400, str(exc)) from None
    try:
        sd.store.create(game_id, spec)
    except StoreFullError as exc:
        raise HTTPError(429, str(exc)) from None
    sd.remember(t)
    page = "play" if spec["mode"] == "play" else "watch"
    return JSONResponse({"id": game_id, "url": f"/{page}/{game_id}"}, status_code=201)


async def game_view(request: Request) -> JSONResponse:
    t = await table_of(request)
    viewer = viewer_of(t, request)

    def work() -> dict[str, Any]:
        with t.lock:
            return t.view(viewer)

    return JSONResponse(await run_in_threadpool(work))


async def game_action(request: Request) -> JSONResponse:
    """Play mode: the person's move ``{"action": id, "moves": n}``."""
    t = await table_of(request)
    data = await body_json(request)
    check_fields(data, ("action", "moves"))
    if "action" not in data:
        raise HTTPError(400, "missing field 'action' (an integer action id from the view's 'legal' list)")

    def work() -> dict[str, Any]:
        with t.lock:
            check_moves(t, data)
            try:
                action = t.check_person_move(data["action"])
            except MoveError as exc:
                raise HTTPError(exc.status, str(exc)) from None
            showdown(request).commit(t, action, None)
            return t.view(t.seat)

    return JSONResponse(await run_in_threadpool(work))


async def game_advance(request: Request) -> JSONResponse:
    """The next agent decision ``{"moves": n}`` (play and watch; ``?view=`` as for the view)."""
    t = await table_of(request)
    data = await body_json(request)
    check_fields(data, ("moves",))
    viewer = viewer_of(t, request)

    def work() -> dict[str, Any]:  # an agent thinks (search, a network): off the event loop
        with t.lock:
            check_moves(t, data)
            try:
                action, why = t.agent_move(explained=t.seat is None)
            except MoveError as exc:
                raise HTTPError(exc.status, str(exc)) from None
            except AgentError as exc:  # the agent's bug, not the request's: a 500 naming the agent
                raise HTTPError(500, str(exc)) from None
            showdown(request).commit(t, action, why)
            return t.view(viewer)

    return JSONResponse(await run_in_threadpool(work))


async def game_png(request: Request) -> Response:
    """The table as ``render_mode="rgb_array"`` draws it; ``?m=<decisions>`` names one state: cached."""
    t = await table_of(request)
    viewer = viewer_of(t, request)

    def work() -> tuple[bytes, bool]:
        with t.lock:
            return t.png(viewer), request.query_params.get("m") == str(t.moves)

    try:
        png, fixed = await run_in_threadpool(work)
    except ImportError as exc:
        raise HTTPError(404, f"the drawn table needs Pillow (pip install \"rook_env[render]\"): {exc}") from None
    cache = "private, max-age=3600" if fixed else "no-store"
    return Response(png, media_type="image/png", headers={"Cache-Control": cache})


async def game_delete(request: Request) -> JSONResponse:
    game_id = request.path_params["game_id"]
    check_origin(request)
    await table_of(request)  # 404 for an unknown id
    sd = showdown(request)
    sd.forget(game_id)
    sd.store.delete(game_id)
    return JSONResponse({"deleted": game_id})


async def api_leaderboard(request: Request) -> JSONResponse:
    board = leaderboard(showdown(request).settings.results)
    for row in board["matches"]:
        row["replays"] = f"/compare/replays/{row['file']}/{row['index']}"
    return JSONResponse(board)


async def replays_index(request: Request) -> JSONResponse:
    sd = showdown(request)
    return JSONResponse({"files": html_files(sd.settings.results), "written": html_files(sd.replay_dir)})


# ------------------------------------------------------------------------------ pages
async def page(request: Request) -> HTMLResponse:
    return HTMLResponse(page_text(PAGES[request.url.path]))


async def game_page(request: Request) -> HTMLResponse:
    await table_of(request)  # an unknown game: the error page
    return HTMLResponse(page_text("game.html"))


async def static(request: Request) -> Response:
    name = request.path_params["name"]
    if name not in STATIC:
        raise HTTPError(404, f"no file {shown(name)}")
    return Response(page_text(name), media_type=STATIC[name])


async def replay_file(request: Request) -> Response:
    """A replay viewer page: an HTML file of the results folder or one written for Compare."""
    sd, name = showdown(request), request.path_params["name"]
    for folder in (sd.settings.results, sd.replay_dir):
        if folder and name in html_files(folder):
            return FileResponse(os.path.join(folder, name), media_type="text/html")
    raise HTTPError(404, f"no replay file {shown(name)}")


async def replays_of_match(request: Request) -> Response:
    """Compare: the replays of a match's largest swings, played again once in the background."""
    sd = showdown(request)
    name, index = request.path_params["file"], request.path_params["index"]
    try:
        if not (index.isascii() and index.isdigit() and len(index) < 7):
            raise KeyError(f"no match {shown(index)}: a match is named by its number in the file")
        match = match_of(sd.settings.results, name, int(index))
    except (KeyError, ValueError) as exc:
        raise HTTPError(404, str(exc.args[0] if exc.args else exc)) from None
    state, what = sd.jobs.status(match)
    if state == "ready":
        return RedirectResponse(f"/replays/{what}", status_code=303)
    if state == "failed":
        return HTMLResponse(message_page("Replays", f"The replays could not be written: {what}", refresh=False),
                            status_code=500)
    if state == "absent":
        try:
            sd.jobs.start(match)
        except ValueError as exc:
            raise HTTPError(400, str(exc)) from None
    return HTMLResponse(message_page("Replays", f"Playing {match['team_a']} vs {match['team_b']} again "
                                     f"({match['deals']} deals) to record its largest swings; this page reloads "
                                     f"until they are ready."))


def html_files(folder: str | None) -> list[str]:
    if not folder or not os.path.isdir(folder):
        return []
    return sorted(f for f in os.listdir(folder) if f.endswith(".html") and os.path.isfile(os.path.join(folder, f)))


def message_page(title: str, message: str, refresh: bool = True) -> str:
    """A small page with one message (replays being written, an unknown game, ...)."""
    meta = '<meta http-equiv="refresh" content="3">' if refresh else ""
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">{meta}'
            f'<meta name="viewport" content="width=device-width, initial-scale=1"><title>{html.escape(title)}</title>'
            f'<link rel="icon" href="/static/favicon.svg"><link rel="stylesheet" href="/static/style.css"></head>'
            f'<body data-page="message"><header><a class="brand" href="/">Rook showdown</a><nav><a href="/">New game'
            f'</a><a href="/compare">Compare</a></nav></header><main class="narrow"><h1>{html.escape(title)}</h1>'
            f'<p id="message-text">{html.escape(message)}</p><p><a href="/">Start a new game</a> · '
            f'<a href="/compare">Compare</a></p></main></body></html>')


GID = "{game_id:str}"
ROUTES = [
    Route("/", page), Route("/compare", page),
    Route(f"/play/{GID}", game_page), Route(f"/watch/{GID}", game_page),
    Route("/static/{name:str}", static),
    Route("/replays/{name:str}", replay_file),
    Route("/compare/replays/{file:str}/{index:str}", replays_of_match),
    Route("/api/options", options),
    Route("/api/games", games_list, methods=["GET"]),
    Route("/api/games", games_create, methods=["POST"]),
    Route(f"/api/games/{GID}", game_view, methods=["GET"]),
    Route(f"/api/games/{GID}", game_delete, methods=["DELETE"]),
    Route(f"/api/games/{GID}/action", game_action, methods=["POST"]),
    Route(f"/api/games/{GID}/advance", game_advance, methods=["POST"]),
    Route(f"/api/games/{GID}/table.png", game_png, methods=["GET"]),
    Route("/api/leaderboard", api_leaderboard),
    Route("/api/replays", replays_index),
]

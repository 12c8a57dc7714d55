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

A request that takes a body must send it as ``Content-Type: application/json`` (``{}`` when it has
nothing to say). ``moves`` (optional) is the number of decisions the client has seen: a request made
on an older view is refused (409) instead of playing twice. Status codes: 400 a malformed request
(broken JSON, nested over 16 deep, a bad field or ``view``) or an illegal move (the message says why
in the table's words and what you may do), 403 a view play mode does not allow, 404 an unknown game
(an HTML page at a page's address), 409 not your turn / the game is over / a stale view, 413 a
request body over the limit, 415 a body that is not sent as JSON (another site's form or text/plain
post), 403 a request that changes something sent by another site's page (its ``Origin`` or
``Sec-Fetch-Site``), 429 too many open games; a request naming another host than the server's (DNS
rebinding) gets 400. The only 500 is an agent that fails (its bug, named). A game's seed travels as a string (64
bits: more than a JavaScript number holds) and only in watch mode.
"""

from __future__ import annotations

import re

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from .context import HTTPError, Showdown, list_checkpoints
from .routes import ROUTES, message_page
from .settings import Settings

__all__ = ["HostCheck", "Settings", "create_app", "list_checkpoints"]


def create_app(settings: Settings | None = None) -> Starlette:
    """The showdown app for ``settings`` (see :class:`Settings`): the routes of :mod:`.routes`, the
    host check, the error answers, and its state (``app.state.showdown``: store, live tables)."""
    cfg = settings or Settings()
    sd = Showdown(cfg)
    app = Starlette(routes=ROUTES,
                    exception_handlers={HTTPError: on_http_error, HTTPException: on_starlette_http, Exception: on_bug},
                    middleware=[Middleware(HostCheck, allowed_hosts=cfg.allowed_hosts)])
    app.state.showdown = sd
    app.state.settings = cfg
    app.state.store = sd.store
    app.state.live = sd.live
    return app


# ------------------------------------------------------------------------------ the host check
HOST_HEADER = re.compile(r"(?:\[(?P<ipv6>[0-9a-f:.]+)\]|(?P<name>[^:\[\]]+))(?::[0-9]{1,5})?")


def host_name(header: str) -> str:
    """The host of a ``Host`` header without its port: ``127.0.0.1:8000`` -> ``127.0.0.1``,
    ``[::1]:8000`` -> ``::1`` (an IPv6 address is written in brackets); ``""`` for a header that is not
    a host with an optional port of digits (``[::1]x``, ``localhost:80:1``, ``127.0.0.1:abc``)."""
    m = HOST_HEADER.fullmatch(header.strip().lower())
    if m is None:
        return ""
    return m.group("ipv6") or m.group("name")


class HostCheck:
    """Answers only requests addressed to one of ``allowed_hosts`` (``"*"``: any), so that a web page
    that rebinds its own name to this machine cannot reach it; others get a 400 JSON error."""

    def __init__(self, app: ASGIApp, allowed_hosts: tuple[str, ...]) -> None:
        self.app = app
        self.allowed = {h.lower().strip("[]") for h in allowed_hosts}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket") and "*" not in self.allowed:
            raw = dict(scope.get("headers") or []).get(b"host", b"")
            host = host_name(raw.decode("latin-1"))
            if host not in self.allowed:
                names = ", ".join(sorted(self.allowed))
                response = JSONResponse({"error": f"this server answers requests addressed to {names}, not "
                                                  f"{raw.decode('latin-1')[:80]!r}"}, status_code=400)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


# ------------------------------------------------------------------------------ errors
def error_response(request: Request, status: int, message: str) -> Response:
    """``{"error": message}`` for the API; a page saying it for the pages' own addresses. A character that
    UTF-8 cannot carry (a lone surrogate a client sent as ``\\ud800`` in JSON) is written as its escape."""
    message = message.encode("utf-8", "backslashreplace").decode("utf-8")
    if request.url.path == "/api" or request.url.path.startswith("/api/"):
        return JSONResponse({"error": message}, status_code=status)
    title = "No such game" if status == 404 and request.url.path.startswith(("/play/", "/watch/")) else \
        f"Error {status}"
    return HTMLResponse(message_page(title, message[:1].upper() + message[1:], refresh=False), status_code=status)


async def on_http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPError)
    return error_response(request, exc.status, exc.message)


async def on_starlette_http(request: Request, exc: Exception) -> Response:
    status = getattr(exc, "status_code", 500)
    detail = getattr(exc, "detail", "error")
    return error_response(request, status, f"{detail}: {request.method} {request.url.path[:200]}")


async def on_bug(request: Request, exc: Exception) -> Response:  # a bug of the server: say so
    return error_response(request, 500, f"internal error ({type(exc).__name__}: {str(exc)[:300]})")

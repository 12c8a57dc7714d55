"""``rook-serve``: start the showdown server (play, watch and compare agents in the browser).

    rook-serve                                        # http://127.0.0.1:8000
    rook-serve --checkpoints runs --results runs/eval --port 8080

It binds 127.0.0.1 unless ``--host`` says otherwise (the server has no accounts: anyone who can
reach it can play and delete its games). Games are kept in ``<data>/showdown.sqlite`` and survive a
restart; see :mod:`rook_env.serve.store` for the expiry rule.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from rook_env.core.optional import MissingDependency, load, require

from .settings import Settings

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def build_parser() -> argparse.ArgumentParser:
    d = Settings()
    p = argparse.ArgumentParser(prog="rook-serve", description=__doc__.split("\n\n")[0].strip("`: "),
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--host", default="127.0.0.1", help="address to bind (loopback by default)")
    p.add_argument("--port", type=int, default=8000, help="port to listen on")
    p.add_argument("--data", default=d.data, help="folder of the game store and of the replays written for Compare")
    p.add_argument("--checkpoints", default=d.checkpoints,
                   help="folder whose *.pt checkpoints (two levels deep) may be chosen as agents; "
                        "no other file is loaded")
    p.add_argument("--results", default=d.results,
                   help="folder of rook-eval JSON results (and HTML replays) for Compare")
    p.add_argument("--max-games", type=int, default=d.max_games, help="open games (not over) at once")
    p.add_argument("--expire-hours", type=float, default=d.expire_hours,
                   help="a game nobody touched for this long is deleted")
    p.add_argument("--max-request-bytes", type=int, default=d.max_body, help="largest request body accepted")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    p = build_parser()
    args = p.parse_args(argv)
    if not 0 < args.port < 65536:
        p.error(f"--port must be 1..65535, got {args.port}")
    if args.max_games < 1 or args.max_request_bytes < 64 or not args.expire_hours > 0:
        p.error("--max-games must be >= 1, --max-request-bytes >= 64 and --expire-hours > 0")
    try:
        uvicorn = require("uvicorn")
        create_app = load("rook_env.serve.app:create_app", needs=("starlette",))
    except MissingDependency as exc:
        p.error(f'rook-serve needs the [serve] extra (pip install -e ".[serve]"): {exc}')
    host = args.host.strip("[]")  # "::1" and "[::1]" alike
    if host not in LOOPBACK:
        print(f"warning: binding {host}: anyone who can reach this address can play and delete games",
              file=sys.stderr)
    app = create_app(Settings(data=args.data, checkpoints=args.checkpoints, results=args.results,
                              max_games=args.max_games, expire_hours=args.expire_hours,
                              max_body=args.max_request_bytes,
                              allowed_hosts=Settings.allowed_hosts if host in LOOPBACK else ("*",)))
    print(f"rook-serve: {url_of(host, args.port)}  (Ctrl-C stops it)", flush=True)
    uvicorn.run(app, host=host, port=args.port, log_level="warning")
    return 0


def url_of(host: str, port: int) -> str:
    """The address to open: an IPv6 address in brackets, any address (0.0.0.0, ::) as this machine's loopback."""
    shown = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)
    return f"http://[{shown}]:{port}/" if ":" in shown else f"http://{shown}:{port}/"


if __name__ == "__main__":
    sys.exit(main())

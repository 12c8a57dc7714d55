"""``python -m rook_env.cli.render_image``: a PNG of a table after some decisions by heuristic players.

    python -m rook_env.cli.render_image --seed 3 --decisions 27 --out table.png [--seat 1]
    python -m rook_env.cli.render_image --game call_partner --players 5 --seed 3 --decisions 28 --out cp.png

The spectator view (:func:`rook_env.core.render.draw_table`), or one seat's (``--seat``,
:func:`rook_env.core.render.draw_seat_view`); every game of the registry (:mod:`rook_env.games`), each
seat played by the game's heuristic agent (random agents for a game without one).
"""

from __future__ import annotations

import argparse
from typing import Sequence

from rook_env.agents import make_agent
from rook_env.core.render import draw_seat_view, draw_table
from rook_env.core.drawing import require_pillow

from .common import add_game_options, game_flags, game_part


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m rook_env.cli.render_image --seed 3 --decisions 27 --out table.png [--seat 1]``: a PNG of
    the table after that many decisions by heuristic players (the spectator view, or one seat's);
    ``--game call_partner --players 5`` for a call-your-partner table."""
    p = argparse.ArgumentParser(prog="python -m rook_env.cli.render_image", description=main.__doc__)
    add_game_options(p)
    p.add_argument("--seed", type=int, default=3)
    p.add_argument("--decisions", type=int, default=27, help="decisions played before the picture")
    p.add_argument("--seat", type=int, default=None, help="draw this seat's view")
    p.add_argument("--out", default="table.png")
    args = p.parse_args(argv)
    Image, _, _ = require_pillow()
    spec, flags = game_flags(p, args)
    game_part(p, spec, "render_scene", "drawn")
    env = spec.load("raw_env")(**flags)
    n = len(env.possible_agents)
    if args.seat is not None and not 0 <= args.seat < n:
        p.error(f"--seat must be a seat 0..{n - 1}, got {args.seat}")
    env.reset(seed=args.seed)
    player = spec.heuristic or "random"  # the game's heuristic where it has one
    agents = [make_agent(player, seed=args.seed + s, game=spec.name, **flags) for s in range(n)]
    for _ in range(args.decisions):
        if env.game.is_over:
            break
        env.step(agents[env.game.current].act(env.observe(env.agent_selection)))
    img = draw_table(env.game) if args.seat is None else draw_seat_view(env, f"player_{args.seat}")
    # An adaptive palette keeps the PNG small (flat colours and text).
    Image.fromarray(img).quantize(colors=64, dither=0).save(args.out, optimize=True)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

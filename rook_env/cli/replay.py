"""``python -m rook_env.cli.replay``: record hands of any game and write them as one HTML replay.

    python -m rook_env.cli.replay --agents heuristic random heuristic random --seed 3 --hands 20 --keep 5
    python -m rook_env.cli.replay --game call_partner --players 5 --hands 10 --out runs/replays/cp.html

Hand ``i`` is dealt with env seed ``SEED + i``; the hands kept (``--keep``, chosen ``--select``) are
written with :func:`rook_env.evaluation.replay.write_html`. Every game of the registry (:mod:`rook_env.games`)
plays; by default the game's heuristic agent plays against random ones (one team of a fixed
partnership, or one seat of a table without fixed teams).
"""

from __future__ import annotations

import argparse
from typing import Sequence

from rook_env.agents import make_agent
from rook_env.evaluation.replay import SELECT_BY, record_hand, select_hands, write_html

from .common import add_game_options, game_flags, game_part


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m rook_env.cli.replay",
                                description="Record hands and write an HTML replay.")
    add_game_options(p, game_help="partnership (four seats, two teams; default) or call_partner (--players seats)")
    p.add_argument("--agents", nargs="+", default=None, metavar="SPEC",
                   help="one agent per seat: random, heuristic, ppo or a checkpoint .pt (default heuristic random "
                        "heuristic random); call_partner: random or call_partner_heuristic (default: "
                        "call_partner_heuristic, then random players)")
    p.add_argument("--seed", type=int, default=0,
                   help="hand i is dealt with env seed SEED + i; agent seeds derive from it")
    p.add_argument("--hands", type=int, default=10, help="hands to play")
    p.add_argument("--keep", type=int, default=None, help="hands to keep in the file (default: all)")
    p.add_argument("--select", choices=SELECT_BY, default="swing", help="which hands to keep")
    p.add_argument("--flag", action="append", default=[], metavar="NAME=VALUE", help="a rule flag (repeatable)")
    p.add_argument("--out", default="runs/replays/replay.html", help="the HTML file to write")
    args = p.parse_args(argv)
    if args.hands <= 0:
        p.error(f"--hands must be positive, got {args.hands}")
    game, flags = game_flags(p, args)
    try:
        env = game.load("raw_env")(**flags)
    except ValueError as exc:
        p.error(str(exc))
    n = len(env.possible_agents)
    parts = game_part(p, game, "render_scene", "recorded (a replay shows its table views)")
    # By default the game's heuristic plays one team (fixed partnerships) or one seat against random agents.
    best = game.heuristic or "random"
    default = [best if (s % 2 == 0 if parts.fixed_teams else s == 0) else "random" for s in range(n)]
    specs = args.agents or default
    if len(specs) != n:
        p.error(f"--agents needs one spec per seat ({n}), got {len(specs)}")
    try:
        agents = [make_agent(spec, seed=args.seed * n + s, game=game.name, **flags) for s, spec in enumerate(specs)]
    except (ValueError, TypeError) as exc:
        p.error(str(exc))
    records = [record_hand(env, agents, seed=args.seed + i, labels=specs) for i in range(args.hands)]
    keep = len(records) if args.keep is None else args.keep
    chosen = select_hands(records, keep, by=args.select)
    write_html(chosen, args.out, title=f"{parts.table_title(n)} replays: {' / '.join(specs)}")
    for r in chosen:
        print(f"seed {r.seed}: {r.summary()}")
    print(f"wrote {len(chosen)} of {len(records)} hands to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

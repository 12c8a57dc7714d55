"""Command line for evaluating Rook agents (a thin front end of ``rook_env.evaluation``).

    python evaluate.py heuristic random --deals 2000 --seed 0 --json out.json --plot out.png
    python evaluate.py heuristic+random random --flag deck=full --workers 2
    python evaluate.py --round-robin random heuristic ppo --deals 1000
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Sequence

from rook_env.evaluation import (
    DEFAULT_BLOCK_SIZE,
    IllegalActionError,
    _check_flags,
    check_team,
    parse_flags,
    match_tables,
    parse_team,
    play_match,
    plot_match,
    plot_round_robin,
    round_robin,
    round_robin_table,
)


# Command line
# =============================================================================================
def _build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="evaluate.py",
        description="Duplicate matches between Rook teams (agent specs: random, heuristic, ppo, path.pt; "
                    "'x+y' for a mixed partnership), or a round robin with ratings.",
        epilog="examples:\n  python evaluate.py heuristic random --deals 2000 --seed 0 --json out.json --plot out.png\n"
               "  python evaluate.py --round-robin random heuristic ppo --deals 500 --workers 2",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("team_a", nargs="?", help="team A spec")
    p.add_argument("team_b", nargs="?", help="team B spec")
    p.add_argument("--round-robin", nargs="+", metavar="SPEC", help="play every pair of these team specs and rate them")
    p.add_argument("--deals", type=int, default=2000, help="deals per match (each played twice when duplicate; default 2000)")
    p.add_argument("--seed", type=int, default=0, help="seed of the deals and agents (default 0)")
    p.add_argument("--workers", type=int, default=1, help="processes (0: all CPUs); results do not depend on it")
    p.add_argument("--no-duplicate", action="store_true", help="play each deal once (seatings alternate) instead of twice")
    p.add_argument("--flag", action="append", default=[], metavar="NAME=VALUE", help="environment rule flag (repeatable)")
    p.add_argument("--json", metavar="PATH", help="write the results as JSON")
    p.add_argument("--plot", metavar="PATH", help="write a PNG plot (running mean with its interval; ratings in round robin)")
    p.add_argument("--confidence", type=float, default=0.95, help="interval level (default 0.95)")
    p.add_argument("--bootstrap", type=int, default=2000, metavar="B", help="bootstrap resamples (default 2000)")
    p.add_argument("--block-size", type=int, default=DEFAULT_BLOCK_SIZE, help=argparse.SUPPRESS)
    p.add_argument("--prior", type=float, default=1.0, help="round robin: virtual games per pair in the rating fit")
    p.add_argument("--independent-seeds", action="store_true",
                   help="seed the agents of the two seatings independently (default: common random numbers, "
                        "so identical teams cancel exactly)")
    p.add_argument("--strict", action="store_true", help="stop at the first illegal action")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def _check_out_path(p: argparse.ArgumentParser, opt: str, path: str | None) -> None:
    if path:
        d = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(d):
            p.error(f"{opt} {path}: directory {d} does not exist")
        if os.path.isdir(path):
            p.error(f"{opt} {path}: is a directory")


def main(argv: Sequence[str] | None = None) -> int:
    p = _build_parser()
    args = p.parse_args(argv)
    if args.round_robin and (args.team_a or args.team_b):
        p.error("give either two team specs or --round-robin SPEC SPEC ..., not both")
    if not args.round_robin and not (args.team_a and args.team_b):
        p.error("give two team specs (e.g. `heuristic random`) or --round-robin SPEC SPEC ...")
    if args.round_robin and len(args.round_robin) < 2:
        p.error("--round-robin needs at least two team specs")
    if args.deals < 1:
        p.error(f"--deals must be >= 1, got {args.deals}")
    if args.workers < 0:
        p.error(f"--workers must be >= 0, got {args.workers}")
    if not 0 < args.confidence < 1:
        p.error(f"--confidence must be in (0, 1), got {args.confidence}")
    if args.bootstrap < 1:
        p.error(f"--bootstrap must be >= 1, got {args.bootstrap}")
    if args.block_size < 1:
        p.error(f"--block-size must be >= 1, got {args.block_size}")
    if args.prior < 0:
        p.error(f"--prior must be >= 0, got {args.prior}")
    _check_out_path(p, "--json", args.json)
    _check_out_path(p, "--plot", args.plot)
    workers = args.workers or os.cpu_count() or 1
    try:
        flags = _check_flags(parse_flags(args.flag))
        specs = args.round_robin or [args.team_a, args.team_b]
        teams = [parse_team(s) for s in specs]
        for t in {t.name: t for t in teams}.values():
            check_team(t, flags)
    except ValueError as exc:
        p.error(str(exc))

    from rich.console import Console

    console = Console()
    common = dict(deals=args.deals, seed=args.seed, flags=flags, duplicate=not args.no_duplicate, workers=workers,
                  progress=not args.no_progress, confidence=args.confidence, n_boot=args.bootstrap,
                  strict=args.strict, block_size=args.block_size, check=False,
                  common_seeds=not args.independent_seeds)
    try:
        if args.round_robin:
            rr = round_robin(teams, prior=args.prior, **common)
            for t in round_robin_table(rr):
                console.print(t)
            illegal = sum(m.illegal_total for m in rr.matches.values())
            out = rr.to_dict()
            if args.plot:
                plot_round_robin(rr, args.plot)
        else:
            res = play_match(teams[0], teams[1], **common)
            for t in match_tables(res):
                console.print(t)
            illegal = res.illegal_total
            out = res.to_dict()
            if args.plot:
                plot_match(res, args.plot)
    except IllegalActionError as exc:
        console.print(f"[red]illegal action:[/red] {exc}")
        return 1
    except KeyboardInterrupt:
        console.print("[yellow]interrupted[/yellow]")
        return 130
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
        console.print(f"wrote {args.json}")
    if args.plot:
        console.print(f"wrote {args.plot}")
    if illegal:
        console.print(f"[red bold]{illegal} illegal action(s): agents must only choose legal actions[/red bold]")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

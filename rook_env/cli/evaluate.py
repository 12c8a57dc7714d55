"""``rook-eval`` / ``python evaluate.py``: duplicate matches, round robins, one agent against a field of
opponents, and call-your-partner rotation matches from the command line.

    rook-eval heuristic random --deals 2000 --seed 0 --json runs/eval/hr.json --plot runs/eval/hr.png
    rook-eval heuristic+random random --flag deck=full --workers 2
    rook-eval --round-robin random heuristic ppo --deals 1000
    rook-eval --field path/to/agent.pt --deals 2000 --json runs/eval/field.json --plot runs/eval/field.png
    rook-eval --game call_partner --players 5 call_partner_heuristic random --deals 500
    rook-eval heuristic random --deals 500 --replays 5 --replays-out runs/eval/swings.html

Tables use rich and plots matplotlib (the ``[tools]`` extra); without rich the tables are plain text.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Sequence

from typing import Any, Callable

from rook_env.agents.registry import TeamSpec, check_team, parse_team
from rook_env.evaluation import DEFAULT_BLOCK_SIZE, IllegalActionError, check_flags, play_match, round_robin
from rook_env.games.call_partner.match import RotationResult, field_specs, play_rotation_match
from rook_env.evaluation.field import (
    DEFAULT_FIELD, ShipDecision, default_field, field_teams, play_field, ship_rule, skipped_members,
)
from rook_env.evaluation.replays import match_replays, rotation_replays
from rook_env.games import get_game
from rook_env.evaluation.results import MatchResult
from rook_env.evaluation.report import (
    TOOLS_HINT,
    Table,
    field_tables,
    have_plots,
    match_tables,
    plot_field,
    plot_match,
    plot_round_robin,
    print_tables,
    rotation_tables,
    round_robin_tables,
)
from rook_env.evaluation.round_robin import DEFAULT_RATING_BOOT
from rook_env.evaluation.tables import TABLES_BLOCK_SIZE
from rook_env.evaluation.replay import SELECT_BY, write_html

from .common import add_game_options, game_flags, game_part, prepare_out_path

DEFAULT_REPLAYS = os.path.join("runs", "eval", "replays.html")

EXAMPLES = """examples:
  %(prog)s heuristic random --deals 2000 --seed 0 --json runs/eval/hr.json --plot runs/eval/hr.png
  %(prog)s heuristic+random random --flag deck=full --workers 2
  %(prog)s --round-robin random heuristic ppo --deals 500 --workers 2
  %(prog)s --field my_agent.pt --deals 2000 --workers 2 --json runs/eval/field.json --plot runs/eval/field.png
  %(prog)s --field ppo --opponents random heuristic --deals 1000 --seed 1000
  %(prog)s --field runs/x/agent.pt --ship-against ppo --deals 2000 --seed 71000000 --workers 2
  %(prog)s --game call_partner --players 5 call_partner_heuristic random --deals 500
  %(prog)s heuristic random --deals 500 --replays 5 --replays-by set
  %(prog)s --game call_partner --players 5 call_partner_heuristic random --deals 200 --replays 3

--replays N saves N of the match's hands (the largest score swings, or --replays-by set|order) as one
self-contained HTML page to step through (every seat's cards, each decision and its alternatives); the
hands are replayed from the match's own deals and agent seeds, so they are the hands the statistics counted.
In a rotation match (--game call_partner) a hand is one deal in one rotation; its swing is the best hand
score minus the worst.

--field CANDIDATE plays one agent against each of a field of opponents on the same duplicate deals
(--opponents; default: the heuristic, search over uniform and over learned worlds, best, ppo, the past
network networks/ppo_v5.pt, its best response networks/best_response_v5.pt and pimc, a search player built
apart from the heuristic; members that cannot be played here and the candidate itself are left out): mean
points per deal and games won per member, with intervals, the field's mean (every member alike) and the
minimum over the field. --ship-against CURRENT plays CURRENT against the same field on the same deals and
applies the shipping rule (rook_env.evaluation.field.ship_rule): the candidate may replace CURRENT when it
is at least level with it against every member and ahead on the field's mean (use held-out deals: a seed
used neither for training nor for selection).

Call-your-partner Rook (--game call_partner) is evaluated by rotation: a field of n agents (n = --players),
given as a candidate and the baseline filling the other chairs, or as n specs; every deal is played n
times with the seats rotated so that every agent plays every seat's cards. Reported: each agent's mean
individual score per hand and its score minus the field's, with bootstrap intervals over deals.

Tables need rich and --plot needs matplotlib: pip install -e ".[tools]" (without rich the tables print
as plain text); the ppo agent needs torch: pip install -e ".[train]"."""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        description="Duplicate matches between Rook teams (agent specs: random, heuristic, search, ppo, best, pimc, "
                    "path.pt, search:<spec>, search-auction[:<spec>], search-bids[:<spec>], search-values:<network>; "
                    "'x+y' for a mixed partnership), a round robin with ratings, one agent against a field of "
                    "opponents (--field), or a call-your-partner "
                    "rotation match (--game call_partner; specs: random, call_partner_heuristic, ppo (5 players), "
                    "ppo:<path>, call_partner_search[:<spec>], best).",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("specs", nargs="*", metavar="SPEC",
                   help="two team specs (A, B); with --game call_partner: a candidate and the baseline filling "
                        "the other chairs, or one agent spec per chair")
    add_game_options(p, game_help="partnership (four players in two fixed teams; default) or call_partner")
    p.add_argument("--round-robin", nargs="+", metavar="SPEC", help="play every pair of these team specs and rate them")
    p.add_argument("--field", metavar="CANDIDATE",
                   help="play this team spec against each opponent of a field (--opponents) on the same deals")
    p.add_argument("--opponents", nargs="+", metavar="SPEC",
                   help=f"--field: the opponents' team specs (default: the field {' '.join(DEFAULT_FIELD)}, each "
                        f"where it can be played, not the candidate itself)")
    p.add_argument("--ship-against", metavar="CURRENT",
                   help="--field: also play CURRENT against the same field on the same deals and say whether the "
                        "candidate may replace it (at least level against every member, ahead on the field's mean)")
    p.add_argument("--ship-margin", type=float, default=0.0, metavar="POINTS",
                   help="--ship-against: the loss against one member tolerated, points per deal (default 0: every "
                        "member's interval of the paired difference at or above 0)")
    p.add_argument("--deals", type=int, default=2000, help="deals per match (each played twice when duplicate; default 2000)")
    p.add_argument("--seed", type=int, default=0, help="seed of the deals and agents (default 0)")
    p.add_argument("--workers", type=int, default=1, help="processes (0: all CPUs); results do not depend on it")
    p.add_argument("--no-duplicate", action="store_true", help="play each deal once (seatings alternate) instead of twice")
    p.add_argument("--flag", action="append", default=[], metavar="NAME=VALUE", help="environment rule flag (repeatable)")
    p.add_argument("--json", metavar="PATH", help="write the results as JSON (folders are created)")
    p.add_argument("--plot", metavar="PATH",
                   help="write a PNG plot (running mean with its interval; ratings in round robin; "
                        "per-opponent means and games won with --field); needs matplotlib")
    p.add_argument("--confidence", type=float, default=0.95, help="interval level (default 0.95)")
    p.add_argument("--bootstrap", type=int, default=2000, metavar="B", help="bootstrap resamples of a match's mean (default 2000)")
    p.add_argument("--rating-bootstrap", type=int, default=DEFAULT_RATING_BOOT, metavar="B",
                   help=f"round robin: bootstrap resamples for the rating intervals (default {DEFAULT_RATING_BOOT})")
    p.add_argument("--engine", choices=("env", "tables"), default="env",
                   help="env: every hand through raw_env (default); tables: a block's hands as tables of the batched "
                        "engine, agents deciding in batches (networks, heuristic, search; far faster; hands with a "
                        "redeal are dealt other new cards: docs/evaluation.md)")
    p.add_argument("--block-size", type=int, default=None, help=argparse.SUPPRESS)
    p.add_argument("--prior", type=float, default=1.0, help="round robin: virtual games per pair in the rating fit")
    p.add_argument("--independent-seeds", action="store_true",
                   help="seed the agents of the two seatings independently (default: common random numbers, "
                        "so identical teams cancel exactly)")
    p.add_argument("--game-scores", action="store_true",
                   help="play real games to target_score: every hand is dealt with its game's running score, which "
                        "agents see (default: every hand at 0-0, games built from the deal stream afterwards)")
    p.add_argument("--replays", type=int, default=0, metavar="N",
                   help="save N hands of the match as an HTML replay (two-team and rotation matches)")
    p.add_argument("--replays-by", choices=SELECT_BY, default="swing",
                   help="which hands: the largest score swing (default), the sets (largest swing first), "
                        "or the first N")
    p.add_argument("--replays-out", metavar="PATH", default=DEFAULT_REPLAYS,
                   help=f"the HTML file of --replays (default {DEFAULT_REPLAYS})")
    p.add_argument("--strict", action="store_true", help="stop at the first illegal action")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    p = build_parser()
    args = p.parse_args(argv)
    # A game is evaluated by its registered match scheme: two fixed teams (duplicate matches, round
    # robins, fields) or a rotation of a field of agents through every seat.
    if game_part(p, get_game(args.game), "match", "evaluated") is play_rotation_match:
        return _rotation_main(p, args)
    if args.engine == "tables":
        _refuse(p, (("--game-scores", args.game_scores), ("--replays", args.replays)), "--engine tables")
    if args.opponents and args.field is None:
        p.error("--opponents gives the field of --field CANDIDATE")
    if (args.ship_against is not None or args.ship_margin) and args.field is None:
        p.error("--ship-against and --ship-margin compare --field CANDIDATE with the current agent")
    if args.field is not None:
        return _field_main(p, args)
    if args.round_robin and args.specs:
        p.error("give either two team specs or --round-robin SPEC SPEC ..., not both")
    if not args.round_robin and len(args.specs) != 2:
        p.error(f"give two team specs (e.g. `heuristic random`) or --round-robin SPEC SPEC ..., got {len(args.specs)}")
    if args.round_robin and len(args.round_robin) < 2:
        p.error("--round-robin needs at least two team specs")
    if args.round_robin and args.replays:
        p.error("--replays saves hands of a two-team match, not of a round robin")
    if args.game_scores and args.replays:
        p.error("--replays records hands at 0-0; it cannot replay the running game scores of --game-scores")
    workers, flags = _setup(p, args)
    try:
        specs = args.round_robin or args.specs
        teams = [parse_team(s) for s in specs]
        for t in {t.name: t for t in teams}.values():
            check_team(t, flags)
    except ValueError as exc:
        p.error(str(exc))
    common = _match_kwargs(args, flags, workers)
    if args.round_robin:
        return _report(args, lambda: round_robin(teams, prior=args.prior, rating_boot=args.rating_bootstrap, **common),
                       round_robin_tables, plot_round_robin,
                       illegal=lambda rr: sum(m.illegal_total for m in rr.matches.values()))
    return _report(args, lambda: play_match(teams[0], teams[1], **common), match_tables, plot_match,
                   after=lambda res: _save_replays(res, teams, args) if args.replays else None)


def _report(args: argparse.Namespace, match: Callable[[], Any], tables: Callable[[Any], Any],
            plot: Callable[[Any, str], None] | None = None, after: Callable[[Any], None] | None = None,
            illegal: Callable[[Any], int] = lambda res: res.illegal_total,
            out: Callable[[Any], dict] = lambda res: res.to_dict()) -> int:
    """Play ``match()``, print its ``tables``, draw its ``plot`` (``--plot``), do ``after`` (replays),
    write the JSON (``out``); the exit code (1 when an agent acted illegally, 130 when interrupted)."""
    try:
        res = match()
    except IllegalActionError as exc:
        print(f"illegal action: {exc}")
        return 1
    except KeyboardInterrupt:
        print("interrupted")
        return 130
    print_tables(tables(res))
    if plot is not None and args.plot:
        plot(res, args.plot)
    if after is not None:
        after(res)
    return _finish(args, out(res), illegal(res))


def _refuse(p: argparse.ArgumentParser, options: Sequence[tuple[str, Any]], where: str) -> None:
    """End the command line naming the first option given that ``where`` does not take."""
    for option, used in options:
        if used:
            p.error(f"{option} is not available with {where}")


def _setup(p: argparse.ArgumentParser, args: argparse.Namespace, keep_game: bool = False) -> tuple[int, dict]:
    """Check the numbers, the game's rule flags (``game`` kept in them with ``keep_game``) and the
    output paths (their folders are created); returns (worker processes, the checked flags)."""
    workers = _check_numbers(p, args)
    spec, flags = game_flags(p, args)
    try:
        prepare_out_path("--json", args.json)
        prepare_out_path("--plot", args.plot)
        if args.replays:
            prepare_out_path("--replays-out", args.replays_out)
        flags = check_flags({"game": spec.name, **flags} if keep_game else flags)
    except ValueError as exc:
        p.error(str(exc))
    return workers, flags


def _match_kwargs(args: argparse.Namespace, flags: dict, workers: int) -> dict:
    """The keyword arguments of :func:`play_match` (and of the round robin and field built on it) from the
    command line; the specs are already checked."""
    return dict(deals=args.deals, seed=args.seed, flags=flags, duplicate=not args.no_duplicate, workers=workers,
                progress=not args.no_progress, confidence=args.confidence, n_boot=args.bootstrap,
                strict=args.strict, block_size=_block_size(args), check=False,
                common_seeds=not args.independent_seeds, game_scores=args.game_scores, engine=args.engine)


def _block_size(args: argparse.Namespace) -> int:
    """Deals per block: as given, else the engine's default (the tables engine batches a block's hands)."""
    if args.block_size is not None:
        return args.block_size
    return TABLES_BLOCK_SIZE if getattr(args, "engine", "env") == "tables" else DEFAULT_BLOCK_SIZE


def _field_main(p: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """``--field CANDIDATE``: one agent against each opponent of a field on the same deals
    (:func:`rook_env.evaluation.field.play_field`); with ``--ship-against CURRENT`` the current agent too, and the
    shipping rule (:func:`rook_env.evaluation.field.ship_rule`)."""
    if args.specs or args.round_robin:
        p.error("give one of: two team specs, --round-robin SPEC SPEC ..., or --field CANDIDATE [--opponents ...]")
    _refuse(p, (("--players", args.players is not None), ("--replays", args.replays)), "--field")
    if args.ship_margin < 0:
        p.error(f"--ship-margin must be >= 0, got {args.ship_margin}")
    workers, flags = _setup(p, args)
    if args.ship_against is not None:
        return _ship_main(p, args, flags, workers)
    try:
        candidate, opponents = field_teams(args.field, args.opponents, flags)  # every spec built once: fail early
    except ValueError as exc:
        p.error(str(exc))
    # the default field's members that were left out are reported (play_field is handed the teams themselves)
    skipped = [] if args.opponents else skipped_members(args.field)

    def run() -> Any:
        res = play_field(candidate, opponents, **_match_kwargs(args, flags, workers))
        res.skipped = skipped
        return res

    return _report(args, run, field_tables, plot_field, out=lambda res: res.to_dict(per_deal=True))


def _ship_main(p: argparse.ArgumentParser, args: argparse.Namespace, flags: dict, workers: int) -> int:
    """``--field CANDIDATE --ship-against CURRENT``: both against one field (default: every member of the default
    field that can be played here, the two agents included where they are members), then the shipping rule."""
    try:
        opponents = args.opponents if args.opponents else list(default_field())
        candidate, teams = field_teams(args.field, opponents, flags)
        current, _ = field_teams(args.ship_against, teams, flags, check=False)
        check_team(current, flags)
    except ValueError as exc:
        p.error(str(exc))
    if candidate.name == current.name:
        p.error(f"--ship-against names the candidate itself ({current.name!r})")
    kwargs = _match_kwargs(args, flags, workers)
    try:
        fields = [play_field(team, teams, **kwargs) for team in (candidate, current)]
    except IllegalActionError as exc:
        print(f"illegal action: {exc}")
        return 1
    except KeyboardInterrupt:
        print("interrupted")
        return 130
    decision = ship_rule(fields[0], fields[1], margin=args.ship_margin, confidence=args.confidence,
                         n_boot=args.bootstrap, seed=args.seed % 2**32)
    print_tables(field_tables(fields[0]) + field_tables(fields[1]) + ship_tables(decision))
    if args.plot:
        plot_field(fields[0], args.plot)
    out = {"decision": decision.to_dict(), "candidate": fields[0].to_dict(per_deal=True),
           "current": fields[1].to_dict(per_deal=True)}
    return _finish(args, out, sum(f.illegal_total for f in fields))


def ship_tables(decision: ShipDecision) -> list[Table]:
    """One row per member (the paired difference, candidate minus current agent, with its interval, and whether
    the candidate is level there), the field mean's row, and the verdict below."""
    pct = f"{decision.confidence:.0%}"
    t = Table(f"ship {decision.candidate} in place of {decision.current}? {decision.deals} deals",
              [("member", "left"), (f"paired difference [{pct} CI]", "right"), ("verdict", "left")])
    for row in decision.members:
        lo, hi = row["ci"]
        t.add_row(row["member"], f"{row['mean_diff']:+.1f} [{lo:+.1f}, {hi:+.1f}]",
                  "level" if row["level"] else "behind", style=None if row["level"] else "red")
    lo, hi = decision.field["ci"]
    t.add_row("field mean", f"{decision.field['mean_diff']:+.1f} [{lo:+.1f}, {hi:+.1f}]",
              "ahead" if decision.field["ahead"] else "not ahead", style="bold")
    margin = f"{-decision.margin:+.1f}" if decision.margin else "0"
    t.notes.append(f"rule: level against a member when its interval's low end is >= {margin}; ahead when the field "
                   f"mean's interval lies above 0 (points per deal, {decision.candidate} minus {decision.current})")
    t.notes.append(f"verdict: {decision.candidate} " + ("may replace " + decision.current if decision.ships
                                                          else "does not ship: " + "; ".join(decision.reasons)))
    return [t]


REPLAY_ORDER = {"swing": "largest score swings", "set": "sets, largest swing first", "order": "first hands"}


def _write_replays(records: list, notes: list[str], args: argparse.Namespace, title: str) -> None:
    """Write the recorded hands as one HTML page titled ``title``."""
    if not records:
        print(f"--replays: no hand to save (--replays-by {args.replays_by} selected none)")
        return
    write_html(records, args.replays_out, title=title)
    for note in notes:
        print(f"warning: {note}")
    print(f"wrote {len(records)} hand(s) to {args.replays_out}")


def _save_replays(res: MatchResult, teams: list[TeamSpec], args: argparse.Namespace) -> None:
    """Record the chosen hands of the match again and write them as one HTML page."""
    records, notes = match_replays(res, teams[0], teams[1], args.replays, by=args.replays_by)
    _write_replays(records, notes, args, f"Rook replays: A = {res.team_a} vs B = {res.team_b}, {len(records)} hands "
                                         f"({REPLAY_ORDER[args.replays_by]}) of {res.deals} deals, seed {res.seed}")


def _check_numbers(p: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """Check the numeric options (and that --plot can be drawn); returns the number of worker processes."""
    for opt, value, low in (("--deals", args.deals, 1), ("--replays", args.replays, 0),
                            ("--workers", args.workers, 0), ("--bootstrap", args.bootstrap, 1),
                            ("--rating-bootstrap", args.rating_bootstrap, 1), ("--block-size", _block_size(args), 1)):
        if value < low:
            p.error(f"{opt} must be >= {low}, got {value}")
    if not 0 < args.confidence < 1:
        p.error(f"--confidence must be in (0, 1), got {args.confidence}")
    if args.prior < 0:
        p.error(f"--prior must be >= 0, got {args.prior}")
    if args.plot and not have_plots():
        p.error(f"--plot needs matplotlib, which is not installed: {TOOLS_HINT}")
    return args.workers or os.cpu_count() or 1


def _finish(args: argparse.Namespace, out: dict, illegal: int) -> int:
    """Write the JSON, say what was written, and return the exit code (1 when an agent acted illegally)."""
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
        print(f"wrote {args.json}")
    if args.plot:
        print(f"wrote {args.plot}")
    if illegal:
        print(f"{illegal} illegal action(s): agents must only choose legal actions")
        return 1
    return 0


def _rotation_main(p: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """``--game call_partner``: a rotation match (:func:`rook_env.games.call_partner.match.play_rotation_match`)."""
    _refuse(p, (("--round-robin", args.round_robin), ("--field", args.field), ("--opponents", args.opponents),
                ("--no-duplicate", args.no_duplicate), ("--independent-seeds", args.independent_seeds),
                ("--plot", args.plot), ("--game-scores", args.game_scores), ("--engine tables", args.engine == "tables")),
            f"--game {args.game} (a rotation match)")
    workers, flags = _setup(p, args, keep_game=True)
    try:
        members = field_specs(args.specs, flags["players"])
        for member in dict.fromkeys(members):
            check_team(parse_team((member, member)), flags)
    except ValueError as exc:
        p.error(str(exc))
    return _report(args, lambda: play_rotation_match(
        members, deals=args.deals, seed=args.seed, flags=flags, workers=workers, progress=not args.no_progress,
        confidence=args.confidence, n_boot=args.bootstrap, strict=args.strict, block_size=_block_size(args),
        check=False), rotation_tables,
        after=lambda res: _save_rotation_replays(res, members, args) if args.replays else None)


def _save_rotation_replays(res: RotationResult, members: list, args: argparse.Namespace) -> None:
    """Record the chosen hands (deal, rotation) of a rotation match again and write them as one HTML page."""
    records, notes = rotation_replays(res, members, args.replays, by=args.replays_by)
    _write_replays(records, notes, args,
                   f"Call-your-partner Rook replays ({res.players} players): {', '.join(res.names)}; {len(records)} "
                   f"hands ({REPLAY_ORDER[args.replays_by]}) of {res.deals} deals x {res.players} rotations, seed {res.seed}")


if __name__ == "__main__":
    sys.exit(main())

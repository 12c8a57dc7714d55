"""``rook-play`` / ``python play.py``: play Rook in the terminal; agents play your partner and the opponents.

    rook-play                                        # a game to 300, seat 0, heuristic agents
    rook-play --seat 2 --partner heuristic --opponents random --hands 3 --seed 7
    rook-play --opponents heuristic+random           # left opponent heuristic, right opponent random
    rook-play --game call_partner --players 5 --seat 0 --opponents call_partner_heuristic

At your turn the screen shows only what your seat may know (your hand sorted by colour, the
auction, the contract, trump, the current trick and who led it, counters and scores; the nest
only if you won the auction) and numbers your legal choices. Answer with a number or a name
(``R14``, ``Rook``, ``bid 85``, ``85``, ``pass``, ``trump green``, ``green``, ``redeal``);
``help`` lists the choices again, ``show`` redraws the table, ``quit`` (or end of input) leaves.
While you discard, the numbers stay fixed (a card keeps its number until all five are down); in
bidding and card play each list is numbered afresh, as the others have moved in between.
``--auto-forced`` plays a move for you when it is your only legal one, and says so.
Input is read line by line from stdin, so the program can be driven by a script.
``--game call_partner`` seats you at a call-your-partner table. Every game of the registry
(:mod:`rook_env.games`) plays here: the session (:mod:`rook_env.cli.session`) is common, and a
game's ``play`` part names its small subclass (:mod:`rook_env.games.partnership.play`,
:mod:`rook_env.games.call_partner.play`). The seats play through :func:`rook_env.core.loop.play_turns`, the
loop evaluation uses; the person is one more agent whose ``act`` asks at the terminal.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Sequence, TextIO

from rook_env.core.loop import IllegalActionError

from .common import add_game_options, game_flags, game_part
from .session import TerminalSession

IN_GAME_HELP = """in-game commands (at your turn):
  a number            the listed choice with that number
  a name              R14, Rook, bid 85 (or 85), pass, trump green (or green), redeal
  help, h, ?          list the choices again
  show, s, table      redraw the table
  quit, q, exit       leave (so does end of input)"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        description="Play Rook in the terminal against agents (specs: random, heuristic, search, ppo, best, pimc, "
                    "path.pt, search:<spec>, search-auction[:<spec>], search-bids[:<spec>], search-values:<network>; "
                    "call-your-partner: random, call_partner_heuristic, ppo (5 players), call_partner_search[:<spec>], "
                    "best).",
        epilog=IN_GAME_HELP + "\n\nWhile you discard, each card keeps its number until all five are down.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_game_options(p, game_help="partnership (four players, partners opposite; default) or call_partner (4 to 6 "
                                  "players, the bidder calls a secret partner each hand)")
    p.add_argument("--seat", type=int, default=0,
                   help="your seat, 0..3 (default 0; partners sit opposite: 0+2, 1+3); 0..players-1 in call_partner")
    p.add_argument("--partner", default=None, help="agent spec for your partner (default heuristic)")
    p.add_argument("--opponents", default=None,
                   help="agent spec for the opponents; 'x+y' gives your left opponent x and your right y "
                        "(default heuristic); call_partner: one spec for every other seat or one per seat joined "
                        "by '+', clockwise from your left (default call_partner_heuristic)")
    p.add_argument("--hands", type=int, metavar="N", help="play N hands instead of a whole game to target_score")
    p.add_argument("--seed", type=int, default=None, help="seed of the deals and agents")
    p.add_argument("--flag", action="append", default=[], metavar="NAME=VALUE", help="rule flag (repeatable)")
    p.add_argument("--auto-forced", action="store_true",
                   help="play your move for you when it is your only legal one (a line says so)")
    return p


def main(argv: Sequence[str] | None = None, stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    inp = stdin if stdin is not None else sys.stdin
    out = stdout if stdout is not None else sys.stdout
    p = build_parser()
    args = p.parse_args(argv)
    if args.hands is not None and args.hands < 1:
        p.error(f"--hands must be >= 1, got {args.hands}")
    spec, flags = game_flags(p, args)
    if flags.get("episode", "hand") != "hand":
        p.error("play deals hand by hand itself; do not set the episode flag")
    session_class: type[TerminalSession] = game_part(p, spec, "play", "played at the terminal")
    return _run_session(session_class.from_args(p, args, flags, inp, out), args.hands, stdout)


def _run_session(session: TerminalSession, hands: int | None, stdout: TextIO | None) -> int:
    try:
        return session.run(hands)
    except KeyboardInterrupt:
        session.say("\nInterrupted. Bye.")
        return 130
    except IllegalActionError as exc:  # an agent broke the rules: say which, stop
        session.say(f"error: {exc}")
        return 1
    except BrokenPipeError:  # the screen went away (e.g. piped into `head`)
        if stdout is None:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())

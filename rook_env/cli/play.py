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
``--game call_partner`` seats you at a call-your-partner table (:mod:`rook_env.cli.play_call_partner`).
The seats play through :func:`rook_env.loop.play_turns`, the loop evaluation uses; the person is one
more agent whose ``act`` asks at the terminal.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Mapping, Sequence, TextIO

from rook_env.agents.registry import GAMES, build_agent, check_team, parse_team
from rook_env.cards import COLOUR_NAMES
from rook_env.env import raw_env
from rook_env.loop import IllegalActionError, Step, play_turns, reset_agents
from rook_env.render import hand_text, render_text, sorted_hand
from rook_env.rules import BID, CIRCUS, DISCARD, PLAY, TRUMP

from .common import parse_flags

IN_GAME_HELP = """in-game commands (at your turn):
  a number            the listed choice with that number
  a name              R14, Rook, bid 85 (or 85), pass, trump green (or green), redeal
  help, h, ?          list the choices again
  show, s, table      redraw the table
  quit, q, exit       leave (so does end of input)"""

QUIT_WORDS = {"q", "quit", "exit", "bye"}
HELP_WORDS = {"h", "help", "?"}
SHOW_WORDS = {"s", "show", "table"}


class _Quit(Exception):
    pass


class _Person:
    """The person at the table, as an agent: ``act`` asks at the terminal (the screen shows what the
    seat may know, rendered from the game for that seat only)."""

    name = "you"

    def __init__(self, session: "Session") -> None:
        self.session = session

    def act(self, observation: Mapping[str, Any], info: Mapping[str, Any] | None = None) -> int:
        return self.session.human_turn()


class TerminalSession:
    """What a person's session at any table shares: the terminal (``say``, ``read``), the legal
    choices numbered (fixed while discarding) and the turn loop. A table's session adds
    ``screen()`` (what the seat may know), ``phase_hint()``, ``parse_choice()`` and narration."""

    NAMES_HINT = "R14, Rook, bid 85, pass, trump green, redeal"
    DISCARD_PHASE = DISCARD  # the phase id of discarding into the nest in this table's rules
    NEST_SIZE = 5  # cards laid down into the nest

    def __init__(self, env: Any, seat: int, agents: dict[int, Any], labels: dict[int, str], seed: int | None,
                 inp: TextIO, out: TextIO, auto_forced: bool = False) -> None:
        self.env = env
        self.L = env.layout
        self.NEST_SIZE = getattr(self.L, "nest_size", self.NEST_SIZE)
        self.seat = seat
        self.agents = agents
        self.labels = labels
        self.seed = seed
        self.inp = inp
        self.out = out
        self.hand_no = 0
        self.auto_forced = auto_forced
        self._fixed_key: tuple[int, ...] | None = None  # the discard whose numbers are fixed
        self._fixed: dict[int, int] = {}  # action -> its number while discarding
        self._before: tuple[int, int, int] = (0, 0, 0)  # (phase, deals, tricks) before the current step
        isatty = getattr(inp, "isatty", None)
        self.echo = not (isatty() if callable(isatty) else False)

    # ------------------------------------------------------------------ text
    def say(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def cards(self, cards: Sequence[int]) -> str:
        return " ".join(self.L.card_name(c) for c in cards)

    # ----------------------------------------------------------------- input
    def read(self, prompt: str) -> str:
        self.out.write(prompt)
        self.out.flush()
        line = self.inp.readline()
        if not line:
            self.say()
            raise _Quit("end of input")
        if self.echo:  # input from a script or a pipe: echo it so the transcript reads like a session
            self.out.write(line if line.endswith("\n") else line + "\n")
            self.out.flush()
        return line.strip()

    def ordered_choices(self, legal: list[int]) -> list[int]:
        """Cards sorted as the hand is shown, then the other actions in id order."""
        cards = [a for a in legal if a < self.L.n_cards]
        if cards:
            order = sorted_hand(self.L, sum(1 << c for c in cards))
            return order + [a for a in legal if a >= self.L.n_cards]
        return legal

    def number_choices(self, legal: list[int]) -> dict[int, int]:
        """``{number: action}`` of the legal choices: numbered 1, 2, ... in display order, except
        while discarding, where every card keeps the number it got at the first discard (so a
        number typed from the previous list never names another card)."""
        ordered = self.ordered_choices(legal)
        game = self.env.game
        if game.phase != self.DISCARD_PHASE:
            return dict(enumerate(ordered, 1))
        key = (self.hand_no, game.deals)
        if key != self._fixed_key:
            self._fixed_key, self._fixed = key, {}
        for a in ordered:
            self._fixed.setdefault(a, len(self._fixed) + 1)
        return {self._fixed[a]: a for a in sorted(ordered, key=self._fixed.__getitem__)}

    def choices_text(self, choices: Mapping[int, int]) -> str:
        items = [f"{i}) {self.L.action_name(a)}" for i, a in choices.items()]
        width = max(len(x) for x in items) + 2
        per_line = max(1, 72 // width)
        rows = [items[i:i + per_line] for i in range(0, len(items), per_line)]
        return "\n".join("  " + "".join(x.ljust(width) for x in row).rstrip() for row in rows)

    def fixed_number(self, k: int) -> str | None:
        """Why discard number ``k`` is no longer a choice (None if it never named a card)."""
        L, game = self.L, self.env.game
        gone = [a for a, n in self._fixed.items() if n == k] if game.phase == self.DISCARD_PHASE else []
        if gone and game.discards >> gone[0] & 1:
            return f"choice {k} ({L.action_name(gone[0])}) is already laid down; pick one of the listed choices"
        if gone:
            return f"choice {k} ({L.action_name(gone[0])}) is not available: {self.why_illegal(gone[0])}"
        return None

    # ------------------------------------------------------------ per table
    def screen(self) -> str:
        """The table as the person's seat may know it."""
        raise NotImplementedError

    def phase_hint(self) -> str:
        raise NotImplementedError

    def parse_choice(self, text: str, choices: Mapping[int, int]) -> tuple[int | None, str]:
        """(action, "") for a valid answer, else (None, message)."""
        raise NotImplementedError

    def why_illegal(self, a: int) -> str:
        raise NotImplementedError

    # ----------------------------------------------------------------- turns
    def human_turn(self) -> int:
        game = self.env.game
        choices = self.number_choices(game.legal_actions())
        if self.auto_forced and len(choices) == 1:
            only = next(iter(choices.values()))
            self.say(f"Your only legal move is {self.L.action_name(only)}: played for you (--auto-forced).")
            return only
        self.say()
        self.say(self.screen())
        self.say(f"Your choices ({self.phase_hint()}):")
        self.say(self.choices_text(choices))
        while True:
            text = self.read(f"P{self.seat}> ")
            low = text.lower()
            if not low:
                example = self.L.action_name(next(iter(choices.values())))
                self.say(f"Type one of the listed numbers, a name such as {example}, 'help' or 'quit'.")
                continue
            if low in QUIT_WORDS:
                raise _Quit("quit")
            if low in HELP_WORDS:
                self.say(f"Answer with a choice number or its name ({self.NAMES_HINT});"
                         " 'show' redraws the table, 'quit' leaves.")
                if game.phase == self.DISCARD_PHASE:
                    self.say(f"While you discard, each card keeps its number until all {self.NEST_SIZE} are down.")
                self.say(self.choices_text(choices))
                continue
            if low in SHOW_WORDS:
                self.say(self.screen())
                self.say(self.choices_text(choices))
                continue
            action, msg = self.parse_choice(text, choices)
            if action is not None:
                return action
            self.say(msg)


class Session(TerminalSession):
    """One person at a partnership table (``seat``) with agents in the other seats."""

    def __init__(self, seat: int, agents: dict[int, Any], labels: dict[int, str], flags: dict[str, Any],
                 seed: int | None, inp: TextIO, out: TextIO, auto_forced: bool = False) -> None:
        super().__init__(raw_env(**flags), seat, agents, labels, seed, inp, out, auto_forced)
        self.scores = [0, 0]

    # ------------------------------------------------------------------ text
    def who(self, s: int) -> str:
        if s == self.seat:
            return f"You (P{s})"
        role = {1: "left opponent", 2: "partner", 3: "right opponent"}[(s - self.seat) % 4]
        return f"P{s} ({role}, {self.labels[s]})"

    def verb(self, s: int, verb: str) -> str:
        """``who(s)`` with a verb agreeing with it: "You (P0) lead", "P1 (...) leads"."""
        return f"{self.who(s)} {verb if s == self.seat else verb + 's'}"

    def team_name(self, team: int) -> str:
        mine = self.seat & 1
        seats = "P0+P2" if team == 0 else "P1+P3"
        return f"your team ({seats})" if team == mine else f"opponents ({seats})"

    def score_line(self, values: Sequence[int]) -> str:
        mine = self.seat & 1
        return f"your team {values[mine]}, opponents {values[1 - mine]}"

    def screen(self) -> str:
        return render_text(self.env.game, seat=self.seat)

    def parse_choice(self, text: str, choices: Mapping[int, int]) -> tuple[int | None, str]:
        """(action, "") for a valid answer, else (None, message)."""
        L, game = self.L, self.env.game
        t = " ".join(text.lower().split())
        legal = set(choices.values())
        if t.isdigit():
            k = int(t)
            if k in choices:
                return choices[k], ""
            gone = self.fixed_number(k)
            if gone:
                return None, gone
            if game.phase == BID and k in L.bids:
                a = L.bid_action(k)
                if a in legal:
                    return a, ""
                return None, f"bid {k} is not allowed now; choose one of the listed bids"
            return None, f"there is no choice {k}: type one of the listed numbers or a name"
        # contract names ("green", "green low", "no trump high") and "circus" parse as they are
        query = text.strip()
        try:
            a = L.parse_action(query)
        except ValueError as exc:
            if game.phase == TRUMP:
                if L.n_contracts == len(COLOUR_NAMES):
                    return None, f"{exc}; name a colour: {', '.join(L.colour_names)} (or one of the listed numbers)"
                return None, (f"{exc}; name a contract: {', '.join(L.contract_names)}"
                              + (" or circus" if L.CIRCUS >= 0 else "") + " (or one of the listed numbers)")
            return None, f"I don't understand {text!r} ({exc}); type one of the listed numbers or a name"
        if a not in legal:
            return None, self.why_illegal(a)
        return a, ""

    def why_illegal(self, a: int) -> str:
        """A short reason why action ``a`` is not legal now."""
        L, game = self.L, self.env.game
        name, kind = L.action_name(a), L.action_kind(a)
        phase_kind = {BID: "bid", DISCARD: "card", TRUMP: "trump", PLAY: "card", CIRCUS: "card"}.get(game.phase)
        doing = {BID: "bidding", DISCARD: "discarding", TRUMP: "naming trump", PLAY: "playing cards",
                 CIRCUS: "passing a card"}.get(game.phase, "")
        if kind == "card" and phase_kind == "card" and not (game.hands[self.seat] >> a) & 1:
            return f"you do not hold {name}; pick one of the listed choices"
        if kind == "card" and game.phase == PLAY and game.trick:
            led = game._ct.eff[game.call][game.trick[0]]  # the led card's effective suit under this call
            what = "trump" if led == game.trump else L.colour_names[led]
            rook = f" (or play the {L.rook_name})" if game._ct.any_time[game.call] else ""
            return f"{name} is not allowed: {what} was led and you must follow with {what}{rook}"
        if kind == "bid" and game.phase == BID:
            high = L.bids[game.high_bid] if game.high_bid >= 0 else None
            if high is not None and L.bids[a - L.BID0] <= high:
                return f"{name} is too low: the high bid is {high}"
            return f"{name} is not allowed now; choose one of the listed bids"
        if kind == "redeal" and game.phase == BID:
            return "a redeal may only be called by a player holding no counters"
        if (kind in ("bid", "pass", "redeal") or kind == "card") and phase_kind not in (kind, None) or (
            kind == "trump" and game.phase != TRUMP
        ):
            return f"{name} is not possible now: it is time for {doing}"
        return f"{name} is not a legal choice now; pick one of the listed choices"

    def phase_hint(self) -> str:
        game = self.env.game
        if game.phase == BID:
            return "bid, pass" + (" or call a redeal" if self.L.REDEAL in game.legal_actions() else "")
        if game.phase == DISCARD:
            return f"lay a card down into the nest, {self.L.nest_size - game.discards.bit_count()} to go"
        if game.phase == TRUMP:
            return "name trump" + (" or call circus" if self.L.CIRCUS in game.legal_actions() else "")
        if game.phase == CIRCUS:
            return f"choose a card to pass to {self.who((self.seat + 1) % 4)} (circus)"
        if game.phase == PLAY:
            return "lead a card" if not game.trick else "play a card"
        return ""

    # ------------------------------------------------------------------ hand
    def announce_deal(self) -> None:
        game = self.env.game
        self.say(f"Dealer: {self.who(game.dealer)}. Bidding starts with {self.who((game.dealer + 1) % 4)}.")
        self.say(f"Your hand: {hand_text(self.L, game.hands[self.seat])}")

    def _snapshot(self) -> tuple[int, int, int]:
        game = self.env.game
        return game.phase, game.deals, len(game.tricks)

    def play_hand(self) -> dict[str, Any]:
        """Play the hand just dealt through the common loop: the person is the agent of their seat;
        an agent's illegal action is a bug in that agent, never replaced by another move: the error
        names the agent and stops play."""
        self.announce_deal()
        self._before = self._snapshot()
        seats = {**self.agents, self.seat: _Person(self)}
        try:
            play_turns(self.env, seats, on_step=self.narrate)
        except IllegalActionError as exc:
            raise IllegalActionError(f"{self.who(exc.seat)} chose an illegal action: {exc.__cause__}",
                                     exc.seat, exc.action) from exc
        return self.env.infos[f"player_{self.seat}"]["hand"]

    def narrate(self, step: Step) -> None:
        """Say what the step did (called by the loop after every step)."""
        L, game = self.L, self.env.game
        seat, action = step.seat, int(step.action)
        phase, deals, n_tricks = self._before
        self._before = self._snapshot()
        name = L.action_name(action)
        if phase == BID:
            if action == L.REDEAL:
                self.say(f"{self.who(seat)}: redeal (no counters in hand). The same dealer deals again.")
            else:
                self.say(f"{self.who(seat)}: {name}")
            if game.deals != deals and action != L.REDEAL:
                self.say("Everyone passed: the same dealer deals again.")
            if game.deals != deals:
                self.announce_deal()
            elif game.phase != BID:
                self.say(f"{self.who(game.bidder)} won the auction at {L.bids[game.high_bid]}; "
                         f"the nest goes to the bidder.")
        elif phase == DISCARD:
            if seat == self.seat:
                self.say(f"You lay down {name}.")
            if game.phase != DISCARD:
                if seat != self.seat:
                    self.say(f"{self.verb(seat, 'lay')} {L.nest_size} cards down as the new nest.")
                if game.nest_has_counters:
                    self.say("Announced: the nest holds counters.")
        elif phase == TRUMP:
            if action == L.CIRCUS:
                self.say(f"{self.verb(seat, 'call')} circus: {self.who((seat + 1) % 4)} names trump and leads.")
            else:
                self.say(f"{self.verb(seat, 'name')} trump: {L.contract_name(action - L.TRUMP0)}.")
        elif phase == CIRCUS:
            if seat == self.seat:
                self.say(f"You pass {name} to {self.who((seat + 1) % 4)}.")
            else:
                self.say(f"{self.verb(seat, 'pass')} a card to {self.who((seat + 1) % 4)}.")
            if game.phase != CIRCUS:  # delivered: a seat sees only the card it receives
                giver = (self.seat - 1) % 4
                self.say(f"You receive {L.card_name(game.passing[giver])} from {self.who(giver)}.")
        elif phase == PLAY:
            led = n_tricks == len(game.tricks) and len(game.trick) == 1
            self.say(f"{self.verb(seat, 'lead' if led else 'play')} {name}")
            if len(game.tricks) != n_tricks:
                self.trick_done(len(game.tricks))

    def trick_done(self, k: int) -> None:
        game, L = self.env.game, self.L
        leader, cards = game.tricks[k - 1]
        winner = (leader + game.trick_winner_index(cards)) % 4
        pts = sum(L.card_points[c] for c in cards)
        played = ", ".join(f"P{(leader + i) % 4} {L.card_name(c)}" for i, c in enumerate(cards))
        self.say(f"Trick {k}: {played} -> won by {self.who(winner)}, {pts} counter points.")
        if k < L.n_tricks:
            counts = game.points
            self.say(f"  Counters so far: {self.score_line(counts)}.")

    def hand_done(self, res: dict[str, Any]) -> None:
        game, L = self.env.game, self.L
        bt = res["bidder"] & 1
        trick_pts = [0, 0]
        for leader, cards in game.tricks:
            w = (leader + game.trick_winner_index(cards)) % 4
            trick_pts[w & 1] += sum(L.card_points[c] for c in cards)
        nest_pts = sum(res["counters"]) - sum(trick_pts)
        last = res["last_trick_team"]
        counters = res["counters"]
        self.say()
        self.say(f"=== Hand {self.hand_no} over ===")
        if L.nest_size:
            self.say(f"The nest held {nest_pts} counter points, taken with the last trick by {self.team_name(last)}.")
        self.say(f"Counters: {self.score_line(counters)}"
                 + (f"; bonuses: {self.score_line(res['bonus'])}" if any(res["bonus"]) else "") + ".")
        verdict = "MADE it" if res["made"] else "were SET"
        self.say(f"{self.who(res['bidder'])} bid {res['bid']} in {L.contract_name(game.call)}"
                 + (" (circus)" if game.circus else "") + ": "
                 f"{self.team_name(bt)} took {counters[bt] + res['bonus'][bt]} and {verdict}.")
        hs = res["hand_scores"]
        mine = self.seat & 1
        self.say(f"This hand: your team {hs[mine]:+d}, opponents {hs[1 - mine]:+d}. "
                 f"Score: {self.score_line(res['scores'])}.")

    # ------------------------------------------------------------------ game
    def run(self, hands: int | None) -> int:
        """Play ``hands`` hands, or a game to target_score when ``hands`` is None."""
        target = self.env.config.target_score
        dealer: int | None = None
        try:
            while True:
                self.hand_no += 1
                options: dict[str, Any] = {"scores": list(self.scores)}
                if dealer is not None:
                    options["dealer"] = dealer
                self.env.reset(seed=self.seed if self.hand_no == 1 else None, options=options)
                reset_agents(self.agents)
                title = f"Hand {self.hand_no}" + (f" (game to {target})" if hands is None else f" of {hands}")
                self.say()
                self.say(f"=== {title} ===")
                res = self.play_hand()
                self.hand_done(res)
                self.scores = list(res["scores"])
                dealer = (self.env.game.dealer + 1) % 4
                if hands is None and res["game_winner"] >= 0:
                    won = res["game_winner"] == (self.seat & 1)
                    self.say()
                    self.say(f"*** Game over: {self.team_name(res['game_winner'])} win "
                             f"{max(self.scores)} to {min(self.scores)}. {'You win!' if won else 'You lose.'} ***")
                    return 0
                if hands is not None and self.hand_no >= hands:
                    self.say()
                    self.say(f"Played {hands} hand(s). Final score: {self.score_line(self.scores)}.")
                    return 0
        except _Quit as q:
            why = "End of input" if str(q) == "end of input" else "You quit"
            self.say(f"{why} during hand {self.hand_no}. Score before this hand: {self.score_line(self.scores)}. Bye.")
            return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        description="Play Rook in the terminal against agents (specs: random, heuristic, search, ppo, path.pt, search:<spec>; "
                    "call-your-partner: random, call_partner_heuristic).",
        epilog=IN_GAME_HELP + "\n\nWhile you discard, each card keeps its number until all five are down.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--game", choices=GAMES, default="partnership",
                   help="partnership (four players, partners opposite; default) or call_partner (4 to 6 players, "
                        "the bidder calls a secret partner each hand)")
    p.add_argument("--players", type=int, default=None, help="--game call_partner: 4, 5 or 6 players (default 5)")
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
    if args.game == "call_partner":
        return _play_call_partner(p, args, inp, out, stdout)
    if args.players is not None:
        p.error("--players is for --game call_partner (the partnership game has four players)")
    if not 0 <= args.seat < 4:
        p.error(f"--seat must be 0, 1, 2 or 3, got {args.seat}")
    try:
        flags = parse_flags(args.flag)
        if flags.get("episode", "hand") != "hand":
            raise ValueError("play deals hand by hand itself; do not set the episode flag")
        partner = parse_team(args.partner or "heuristic")
        opponents = parse_team(args.opponents or "heuristic")
        if partner.members[0] != partner.members[1]:
            raise ValueError(f"--partner {args.partner!r}: your partner is one seat, give one agent spec")
        check_team(partner, flags)
        check_team(opponents, flags)
    except ValueError as exc:
        p.error(str(exc))
    seat = args.seat
    seed = args.seed
    agents, labels = {}, {}
    for rel, spec in ((2, partner.members[0]), (1, opponents.members[0]), (3, opponents.members[1])):
        s = (seat + rel) % 4
        agents[s] = build_agent(spec, None if seed is None else seed * 4 + s, flags)
        labels[s] = str(spec)
    session = Session(seat, agents, labels, flags, seed, inp, out, auto_forced=args.auto_forced)
    session.say(f"Rook: you are P{seat}, partner {session.who((seat + 2) % 4)}; opponents "
                f"{session.who((seat + 1) % 4)} and {session.who((seat + 3) % 4)}.")
    session.say("Answer with a choice number or a name (R14, Rook, bid 85, pass, trump green); 'help', 'quit'.")
    return _run_session(session, args.hands, stdout)


def _play_call_partner(p: argparse.ArgumentParser, args: argparse.Namespace, inp: TextIO, out: TextIO,
                       stdout: TextIO | None) -> int:
    from .play_call_partner import run_from_args  # imported here: that module builds on this one

    try:
        flags = parse_flags(args.flag, game="call_partner")
        if flags.get("episode", "hand") != "hand":
            raise ValueError("play deals hand by hand itself; do not set the episode flag")
        if args.players is not None:
            if flags.get("players", args.players) != args.players:
                raise ValueError(f"--players {args.players} contradicts --flag players={flags['players']}")
            flags["players"] = args.players
        flags.setdefault("players", 5)
    except ValueError as exc:
        p.error(str(exc))
    return _run_session(run_from_args(p, args, inp, out, flags), args.hands, stdout)


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

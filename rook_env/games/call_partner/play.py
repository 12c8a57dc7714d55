"""The call-your-partner table of ``rook-play`` (:mod:`rook_env.cli.play`): what it says differently.

A seat of a call-your-partner table (4 to 6 players) in the terminal:

    python play.py --game call_partner --players 5 --seat 0 --opponents call_partner_heuristic
    python play.py --game call_partner --players 4 --opponents random+call_partner_heuristic+random --hands 2

The conventions of every table (:mod:`rook_env.cli.session`): the screen shows only what your
seat may know (the game's text view for your seat: your hand, the auction,
the contract, the nest only if you won the auction, trump, the Rook's rank, the called card and the
partners as far as you know them, the last and the current trick, points and scores); the legal
choices are numbered, and a name is typed as the action layout writes it (``R14``, ``Rook``, ``bid
120`` or ``120``, ``pass``, ``redeal``, ``trump green`` or ``green``, ``rook high`` or ``high``, and
while calling ``call Y14`` or ``Y14``); ``help``, ``show``, ``quit``. While you discard, each card keeps
its number until the whole nest is down. Narration tells only what the table sees: who holds a called
card is said to that player alone, and to everyone once the card is played.
"""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from rook_env.agents.registry import build_agent, check_team, parse_team
from .observation import known_partners
from rook_env.games.partnership.cards import COLOUR_NAMES
from rook_env.core.registry import get_game

from rook_env.cli.session import TerminalSession

__all__ = ["CallPartnerSession"]

DEFAULT_AGENT = "call_partner_heuristic"


class CallPartnerSession(TerminalSession):
    """One person at a call-your-partner table (``seat``) with agents in the other seats."""

    NAMES_HINT = "R14, Rook, bid 120, pass, trump green, rook high, call Y14, redeal"
    SCORES = "scores"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.scores = [0] * self.n

    @classmethod
    def from_args(cls, p: argparse.ArgumentParser, args: argparse.Namespace, flags: dict[str, Any], inp: TextIO,
                  out: TextIO) -> "CallPartnerSession":
        """Check the command line of ``--game call_partner`` (errors through ``p.error``) and build the
        session. ``flags``: the call-your-partner rule flags (``players`` included)."""
        n = flags["players"]
        if args.partner is not None:
            p.error("--partner is for the partnership game: at call-your-partner the bidder calls a partner each hand")
        if not 0 <= args.seat < n:
            p.error(f"--seat must be a seat 0..{n - 1} at a {n}-player table, got {args.seat}")
        specs = [s.strip() for s in (args.opponents or DEFAULT_AGENT).split("+")]
        if len(specs) == 1:
            specs = specs * (n - 1)
        if len(specs) != n - 1 or not all(specs):
            p.error(f"--opponents {args.opponents!r}: give one agent spec for every other seat, or {n - 1} joined by "
                    f"'+' (clockwise from your left)")
        agent_flags = {**flags, "game": "call_partner"}
        try:
            for spec in dict.fromkeys(specs):
                check_team(parse_team((spec, spec)), agent_flags)
        except ValueError as exc:
            p.error(str(exc))
        agents, labels = {}, {}
        for k, spec in enumerate(specs, 1):
            s = (args.seat + k) % n
            agents[s] = build_agent(spec, None if args.seed is None else args.seed * n + s, agent_flags)
            labels[s] = spec
        session = cls(get_game("call_partner"), flags, args.seat, agents, labels, args.seed, inp, out,
                      auto_forced=args.auto_forced)
        others = ", ".join(session.who((args.seat + k) % n) for k in range(1, n))
        session.say(f"Call-your-partner Rook, {n} players: you are P{args.seat}; clockwise from your left: {others}.")
        session.say(f"Answer with a choice number or a name ({session.NAMES_HINT}); 'help', 'quit'.")
        return session

    # ------------------------------------------------------------------ text
    def who(self, s: int) -> str:
        return f"You (P{s})" if s == self.seat else f"P{s} ({self.labels[s]})"

    def score_line(self, values: list[Any]) -> str:
        return ", ".join(f"{'you' if s == self.seat else f'P{s}'} {v}" for s, v in enumerate(values))

    def contract_hint(self, phase: str) -> str:
        config = self.env.config
        if phase == "trump":
            return "name trump"
        if phase == "rook":
            return "the Rook Bird ranks above the trump 1 (high) or below the lowest trump (low)"
        if phase == "call":
            left = config.n_called - len(self.env.game.called)
            return (f"call a card you do not hold, {left} to go; whoever holds it is your secret partner"
                    if config.n_called > 1 else
                    "call a card you do not hold; whoever holds it is your secret partner")
        return ""

    # ----------------------------------------------------------------- input
    def parse_name(self, text: str, t: str) -> tuple[int | None, str]:
        phase = self.phase()
        if phase == "trump" and t in COLOUR_NAMES:
            t = "trump " + t
        elif phase == "rook" and t in ("high", "low"):
            t = "rook " + t
        elif phase == "call" and t.startswith("call "):
            t = t[5:]
        try:
            return self.L.parse_action(t), ""
        except ValueError as exc:
            if phase == "trump":
                return None, f"name a colour: {', '.join(COLOUR_NAMES)} (or one of the listed numbers)"
            if phase == "rook":
                return None, "answer 'rook high' or 'rook low' (or one of the listed numbers)"
            return None, f"I don't understand {text!r} ({exc}); type one of the listed numbers or a name"

    def rule_reason(self, a: int) -> str | None:
        L, game, phase = self.L, self.env.game, self.phase()
        name = L.action_name(a)
        if L.action_kind(a) != "card":
            return None
        if phase == "call":
            return (f"you hold {name}: call a card you do not hold" if game.hands[self.seat] >> a & 1
                    else f"{name} is already called; call another card")
        if phase == "play" and game.trick:
            led = L.card_colour[game.trick[0]]
            led = game.trump if led < 0 else led
            what = "trump" if led == game.trump else COLOUR_NAMES[led]
            return f"{name} is not allowed: {what} was led and you must follow with {what} (or play the Rook)"
        return None

    def wrong_phase(self, a: int) -> str:
        L, phase = self.L, self.phase()
        name = L.action_name(a)
        if L.action_kind(a) == "pass" and phase == "bid":
            return "you may not pass now (the dealer must bid when everyone else passed)"
        doing = {"bid": "bidding", "discard": "discarding", "trump": "naming trump", "rook": "choosing the Rook's rank",
                 "call": "calling a card", "play": "playing cards"}.get(phase, "")
        return f"{name} is not possible now: it is time for {doing}"

    # ------------------------------------------------------------------ hand
    def narrate_bid(self, seat: int, action: int, name: str, redealt: bool) -> None:
        L, game = self.L, self.env.game
        self.say(f"{self.who(seat)}: {'redeal (no counters in hand)' if action == L.REDEAL else name}")
        if redealt:
            self.say("A new deal by the same dealer.")
            self.announce_deal()
        elif self.phase() != "bid":
            self.say(f"{self.who(game.bidder)} won the auction at {L.bids[game.high_bid]}; "
                     f"the nest ({L.nest_size} cards) goes to the bidder.")

    def narrate_discard(self, seat: int, action: int, name: str) -> None:
        L, game = self.L, self.env.game
        if seat == self.seat:
            self.say(f"You lay down {name}.")
        if game.discards.bit_count() == L.nest_size:
            if seat != self.seat:
                self.say(f"{self.verb(seat, 'lay')} {L.nest_size} cards down as the new nest.")
            self.say(f"Announced: the nest {'holds' if game.nest_has_counters else 'holds no'} counters.")

    def narrate_trump(self, seat: int, action: int, name: str) -> None:
        self.say(f"{self.verb(seat, 'name')} trump: {name.split()[1]}.")

    def narrate_rook(self, seat: int, action: int, name: str) -> None:
        self.say(f"{self.verb(seat, 'play')} the Rook Bird {name.split()[1]}.")

    def narrate_call(self, seat: int, action: int, name: str) -> None:
        self.say(f"{self.verb(seat, 'call')} {name}: its holder is the bidder's secret partner.")
        if self.phase() != "call":
            self.partner_news()

    def play_note(self, seat: int, action: int) -> str:
        game = self.env.game
        return " (a called card: the bidder's partner)" if action in game.called and seat != game.bidder else ""

    def partner_news(self) -> None:
        """After the call: what the person's seat knows about the partnership (RULES.md C6.4)."""
        game = self.env.game
        me = self.seat
        if me != game.bidder and me in known_partners(game, me):
            self.say(f"You hold a called card: you are the secret partner of {self.who(game.bidder)}. "
                     f"No one else knows until you play it.")
        elif me == game.bidder and any(game.discards >> c & 1 for c in game.called):
            self.say("You laid a called card down in the nest: you play alone.")

    def trick_note(self, k: int) -> str:
        return " It is the last trick: it also takes the nest and 20 points." if k == self.L.n_tricks else ""

    def hand_done(self, res: dict[str, Any]) -> None:
        L = self.L
        self.say()
        self.say(f"=== Hand {self.hand_no} over ===")
        called = " ".join(L.card_name(c) for c in res["called"])
        partners = ", ".join(self.who(s) for s in res["partners"]) or "no one (the called card was in the nest)"
        self.say(f"{self.who(res['bidder'])} bid {res['bid']} in {COLOUR_NAMES[res['trump']]}, Rook {res['rook']}, "
                 f"called {called}; partner: {partners}.")
        verdict = "made it" if res["made"] else "were set"
        self.say(f"The bidding side took {res['side_points']} of {L.total_points} points and {verdict}.")
        self.say("Points taken: " + self.score_line(res["points"]) + ".")
        self.say("This hand: " + self.score_line([f"{v:+d}" for v in res["hand_scores"]]) + ".")
        self.say("Scores: " + self.score_line(res["scores"]) + ".")

    def game_over(self, res: dict[str, Any]) -> str:
        w = res["game_winner"]
        return (f"*** Game over: {self.who(w)} {'win' if w == self.seat else 'wins'} with "
                f"{self.scores[w]}. {'You win!' if w == self.seat else 'You lose.'} ***")

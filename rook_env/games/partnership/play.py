"""The partnership table of ``rook-play`` (:mod:`rook_env.cli.play`): what it says differently.

Four seats, partners opposite; agents play your partner (``--partner``) and the opponents
(``--opponents``, ``x+y``: your left opponent x and your right y). Names are typed as the action
layout writes them (``R14``, ``Rook``, ``bid 85`` or ``85``, ``pass``, ``trump green`` or ``green``,
the named calls of ``trump_calls="extended"``, ``circus``, ``redeal``).
"""

from __future__ import annotations

import argparse
from typing import Any, Sequence, TextIO

from rook_env.agents.registry import build_agent, check_team, parse_team
from .cards import COLOUR_NAMES
from rook_env.core.registry import get_game
from .rules import contract_tables

from rook_env.cli.session import TerminalSession

__all__ = ["PartnershipSession"]


class PartnershipSession(TerminalSession):
    """One person at a partnership table (``seat``) with agents in the other seats."""

    CARD_PHASES = ("discard", "play", "circus")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.scores = [0, 0]

    @classmethod
    def from_args(cls, p: argparse.ArgumentParser, args: argparse.Namespace, flags: dict[str, Any], inp: TextIO,
                  out: TextIO) -> "PartnershipSession":
        if not 0 <= args.seat < 4:
            p.error(f"--seat must be 0, 1, 2 or 3, got {args.seat}")
        agent_flags = {**flags, "game": "partnership"}
        try:
            partner = parse_team(args.partner or "heuristic")
            opponents = parse_team(args.opponents or "heuristic")
            if partner.members[0] != partner.members[1]:
                raise ValueError(f"--partner {args.partner!r}: your partner is one seat, give one agent spec")
            check_team(partner, agent_flags)
            check_team(opponents, agent_flags)
        except ValueError as exc:
            p.error(str(exc))
        seat, seed = args.seat, args.seed
        agents, labels = {}, {}
        for rel, spec in ((2, partner.members[0]), (1, opponents.members[0]), (3, opponents.members[1])):
            s = (seat + rel) % 4
            agents[s] = build_agent(spec, None if seed is None else seed * 4 + s, agent_flags)
            labels[s] = str(spec)
        session = cls(get_game("partnership"), flags, seat, agents, labels, seed, inp, out,
                      auto_forced=args.auto_forced)
        session.say(f"Rook: you are P{seat}, partner {session.who((seat + 2) % 4)}; opponents "
                    f"{session.who((seat + 1) % 4)} and {session.who((seat + 3) % 4)}.")
        session.say("Answer with a choice number or a name (R14, Rook, bid 85, pass, trump green); 'help', 'quit'.")
        return session

    # ------------------------------------------------------------------ text
    def who(self, s: int) -> str:
        if s == self.seat:
            return f"You (P{s})"
        role = {1: "left opponent", 2: "partner", 3: "right opponent"}[(s - self.seat) % 4]
        return f"P{s} ({role}, {self.labels[s]})"

    def team_name(self, team: int) -> str:
        mine = self.seat & 1
        seats = "P0+P2" if team == 0 else "P1+P3"
        return f"your team ({seats})" if team == mine else f"opponents ({seats})"

    def score_line(self, values: Sequence[Any]) -> str:
        mine = self.seat & 1
        return f"your team {values[mine]}, opponents {values[1 - mine]}"

    # ----------------------------------------------------------------- input
    def parse_name(self, text: str, t: str) -> tuple[int | None, str]:
        # contract names ("green", "green low", "no trump high") and "circus" parse as they are
        L = self.L
        try:
            return L.parse_action(text.strip()), ""
        except ValueError as exc:
            if self.phase() == "trump":
                if L.n_contracts == len(COLOUR_NAMES):
                    return None, f"{exc}; name a colour: {', '.join(L.colour_names)} (or one of the listed numbers)"
                return None, (f"{exc}; name a contract: {', '.join(L.contract_names)}"
                              + (" or circus" if L.CIRCUS >= 0 else "") + " (or one of the listed numbers)")
            return None, f"I don't understand {text!r} ({exc}); type one of the listed numbers or a name"

    def rule_reason(self, a: int) -> str | None:
        L, game = self.L, self.env.game
        if L.action_kind(a) == "card" and self.phase() == "play" and game.trick:
            ct = contract_tables(game.config)
            led = ct.eff[game.call][game.trick[0]]  # the led card's effective suit under this call
            what = "trump" if led == game.trump else L.colour_names[led]
            rook = f" (or play the {L.rook_name})" if ct.any_time[game.call] else ""
            return f"{L.action_name(a)} is not allowed: {what} was led and you must follow with {what}{rook}"
        return None

    def wrong_phase(self, a: int) -> str:
        L, phase = self.L, self.phase()
        name, kind = L.action_name(a), L.action_kind(a)
        phase_kind = {"bid": "bid", "discard": "card", "trump": "trump", "play": "card", "circus": "card"}.get(phase)
        doing = {"bid": "bidding", "discard": "discarding", "trump": "naming trump", "play": "playing cards",
                 "circus": "passing a card"}.get(phase, "")
        if (kind in ("bid", "pass", "redeal") or kind == "card") and phase_kind not in (kind, None) or (
            kind == "trump" and phase != "trump"
        ):
            return f"{name} is not possible now: it is time for {doing}"
        return f"{name} is not a legal choice now; pick one of the listed choices"

    def contract_hint(self, phase: str) -> str:
        if phase == "trump":
            return "name trump" + (" or call circus" if self.L.CIRCUS in self.env.game.legal_actions() else "")
        if phase == "circus":
            return f"choose a card to pass to {self.who((self.seat + 1) % 4)} (circus)"
        return ""

    # ------------------------------------------------------------------ hand
    def narrate_bid(self, seat: int, action: int, name: str, redealt: bool) -> None:
        L, game = self.L, self.env.game
        if action == L.REDEAL:
            self.say(f"{self.who(seat)}: redeal (no counters in hand). The same dealer deals again.")
        else:
            self.say(f"{self.who(seat)}: {name}")
        if redealt and action != L.REDEAL:
            self.say("Everyone passed: the same dealer deals again.")
        if redealt:
            self.announce_deal()
        elif self.phase() != "bid":
            self.say(f"{self.who(game.bidder)} won the auction at {L.bids[game.high_bid]}; "
                     f"the nest goes to the bidder.")

    def narrate_discard(self, seat: int, action: int, name: str) -> None:
        if seat == self.seat:
            self.say(f"You lay down {name}.")
        if self.phase() != "discard":
            if seat != self.seat:
                self.say(f"{self.verb(seat, 'lay')} {self.L.nest_size} cards down as the new nest.")
            if self.env.game.nest_has_counters:
                self.say("Announced: the nest holds counters.")

    def narrate_trump(self, seat: int, action: int, name: str) -> None:
        L = self.L
        if action == L.CIRCUS:
            self.say(f"{self.verb(seat, 'call')} circus: {self.who((seat + 1) % 4)} names trump and leads.")
        else:
            self.say(f"{self.verb(seat, 'name')} trump: {L.contract_name(action - L.TRUMP0)}.")

    def narrate_circus(self, seat: int, action: int, name: str) -> None:
        if seat == self.seat:
            self.say(f"You pass {name} to {self.who((seat + 1) % 4)}.")
        else:
            self.say(f"{self.verb(seat, 'pass')} a card to {self.who((seat + 1) % 4)}.")
        if self.phase() != "circus":  # delivered: a seat sees only the card it receives
            giver = (self.seat - 1) % 4
            self.say(f"You receive {self.L.card_name(self.env.game.passing[giver])} from {self.who(giver)}.")

    def after_trick(self, k: int) -> None:
        if k < self.L.n_tricks:
            self.say(f"  Counters so far: {self.score_line(self.env.game.points)}.")

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

    def game_over(self, res: dict[str, Any]) -> str:
        won = res["game_winner"] == (self.seat & 1)
        return (f"*** Game over: {self.team_name(res['game_winner'])} win "
                f"{max(self.scores)} to {min(self.scores)}. {'You win!' if won else 'You lose.'} ***")

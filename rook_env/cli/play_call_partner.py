"""``play.py --game call_partner``: play a seat of a call-your-partner table (4 to 6 players) in the terminal.

    python play.py --game call_partner --players 5 --seat 0 --opponents call_partner_heuristic
    python play.py --game call_partner --players 4 --opponents random+call_partner_heuristic+random --hands 2

The conventions of the partnership table (:mod:`rook_env.cli.play`): the screen shows only what your
seat may know (:func:`rook_env.call_partner.render.render_text` for your seat: your hand, the auction,
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
from typing import Any, Mapping, TextIO

from rook_env.agents.registry import build_agent, check_team, parse_team
from rook_env.call_partner import raw_env
from rook_env.call_partner.observation import known_partners
from rook_env.call_partner.render import render_text
from rook_env.call_partner.rules import BID, CALL, DISCARD, PLAY, ROOK, TRUMP
from rook_env.cards import COLOUR_NAMES
from rook_env.loop import IllegalActionError, play_turns, reset_agents
from rook_env.render import hand_text

from .play import TerminalSession, _Person, _Quit

__all__ = ["CallPartnerSession", "run_from_args"]

DEFAULT_AGENT = "call_partner_heuristic"


class CallPartnerSession(TerminalSession):
    """One person at a call-your-partner table (``seat``) with agents in the other seats."""

    NAMES_HINT = "R14, Rook, bid 120, pass, trump green, rook high, call Y14, redeal"
    DISCARD_PHASE = DISCARD

    def __init__(self, seat: int, agents: dict[int, Any], labels: dict[int, str], flags: dict[str, Any],
                 seed: int | None, inp: TextIO, out: TextIO, auto_forced: bool = False) -> None:
        super().__init__(raw_env(**flags), seat, agents, labels, seed, inp, out, auto_forced)
        self.n = self.env.n
        self.NEST_SIZE = self.L.nest_size
        self.scores = [0] * self.n

    # ------------------------------------------------------------------ text
    def who(self, s: int) -> str:
        return f"You (P{s})" if s == self.seat else f"P{s} ({self.labels[s]})"

    def verb(self, s: int, verb: str) -> str:
        return f"{self.who(s)} {verb if s == self.seat else verb + 's'}"

    def score_line(self, values: list[int]) -> str:
        return ", ".join(f"{'you' if s == self.seat else f'P{s}'} {v}" for s, v in enumerate(values))

    def screen(self) -> str:
        return render_text(self.env.game, seat=self.seat)

    def phase_hint(self) -> str:
        game, L = self.env.game, self.L
        if game.phase == BID:
            return "bid, pass" + (" or call a redeal" if L.REDEAL in game.legal_actions() else "")
        if game.phase == DISCARD:
            return f"lay a card down into the nest, {L.nest_size - game.discards.bit_count()} to go"
        if game.phase == TRUMP:
            return "name trump"
        if game.phase == ROOK:
            return "the Rook Bird ranks above the trump 1 (high) or below the lowest trump (low)"
        if game.phase == CALL:
            left = self.env.config.n_called - len(game.called)
            return (f"call a card you do not hold, {left} to go; whoever holds it is your secret partner"
                    if self.env.config.n_called > 1 else
                    "call a card you do not hold; whoever holds it is your secret partner")
        if game.phase == PLAY:
            return "lead a card" if not game.trick else "play a card"
        return ""

    # ----------------------------------------------------------------- input
    def parse_choice(self, text: str, choices: Mapping[int, int]) -> tuple[int | None, str]:
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
                return (a, "") if a in legal else (None, f"bid {k} is not allowed now; choose one of the listed bids")
            return None, f"there is no choice {k}: type one of the listed numbers or a name"
        if game.phase == TRUMP and t in COLOUR_NAMES:
            t = "trump " + t
        elif game.phase == ROOK and t in ("high", "low"):
            t = "rook " + t
        elif game.phase == CALL and t.startswith("call "):
            t = t[5:]
        try:
            a = L.parse_action(t)
        except ValueError as exc:
            if game.phase == TRUMP:
                return None, f"name a colour: {', '.join(COLOUR_NAMES)} (or one of the listed numbers)"
            if game.phase == ROOK:
                return None, "answer 'rook high' or 'rook low' (or one of the listed numbers)"
            return None, f"I don't understand {text!r} ({exc}); type one of the listed numbers or a name"
        if a not in legal:
            return None, self.why_illegal(a)
        return a, ""

    def why_illegal(self, a: int) -> str:
        """A short reason why action ``a`` is not legal now."""
        L, game = self.L, self.env.game
        name, kind = L.action_name(a), L.action_kind(a)
        held = bool(game.hands[self.seat] >> a & 1) if kind == "card" else False
        doing = {BID: "bidding", DISCARD: "discarding", TRUMP: "naming trump", ROOK: "choosing the Rook's rank",
                 CALL: "calling a card", PLAY: "playing cards"}.get(game.phase, "")
        if kind == "card" and game.phase in (DISCARD, PLAY) and not held:
            return f"you do not hold {name}; pick one of the listed choices"
        if kind == "card" and game.phase == CALL:
            return (f"you hold {name}: call a card you do not hold" if held
                    else f"{name} is already called; call another card")
        if kind == "card" and game.phase == PLAY and game.trick:
            led = L.card_colour[game.trick[0]]
            led = game.trump if led < 0 else led
            what = "trump" if led == game.trump else COLOUR_NAMES[led]
            return f"{name} is not allowed: {what} was led and you must follow with {what} (or play the Rook)"
        if kind == "bid" and game.phase == BID:
            high = L.bids[game.high_bid] if game.high_bid >= 0 else None
            if high is not None and L.bids[a - L.BID0] <= high:
                return f"{name} is too low: the high bid is {high}"
            return f"{name} is not allowed now; choose one of the listed bids"
        if kind == "redeal" and game.phase == BID:
            return "a redeal may only be called by a player holding no counters"
        if kind == "pass" and game.phase == BID:
            return "you may not pass now (the dealer must bid when everyone else passed)"
        return f"{name} is not possible now: it is time for {doing}"

    # ------------------------------------------------------------------ hand
    def announce_deal(self) -> None:
        game = self.env.game
        self.say(f"Dealer: {self.who(game.dealer)}. Bidding starts with {self.who((game.dealer + 1) % self.n)}.")
        self.say(f"Your hand: {hand_text(self.L, game.hands[self.seat])}")

    def _snapshot(self) -> tuple[int, int, int]:
        game = self.env.game
        return game.phase, game.deals, len(game.tricks)

    def play_hand(self) -> dict[str, Any]:
        """Play the hand just dealt through the common loop (an agent's illegal action stops play)."""
        self.announce_deal()
        self._before = self._snapshot()
        seats = {**self.agents, self.seat: _Person(self)}
        try:
            play_turns(self.env, seats, on_step=self.narrate)
        except IllegalActionError as exc:
            raise IllegalActionError(f"{self.who(exc.seat)} chose an illegal action: {exc.__cause__}",
                                     exc.seat, exc.action) from exc
        return self.env.infos[f"player_{self.seat}"]["hand"]

    def narrate(self, step: Any) -> None:
        """Say what the step did, as the table sees it (called by the loop after every step)."""
        L, game = self.L, self.env.game
        seat, action = step.seat, int(step.action)
        phase, deals, n_tricks = self._before
        self._before = self._snapshot()
        name = L.action_name(action)
        if phase == BID:
            self.say(f"{self.who(seat)}: {'redeal (no counters in hand)' if action == L.REDEAL else name}")
            if game.deals != deals:
                self.say("A new deal by the same dealer.")
                self.announce_deal()
            elif game.phase != BID:
                self.say(f"{self.who(game.bidder)} won the auction at {L.bids[game.high_bid]}; "
                         f"the nest ({L.nest_size} cards) goes to the bidder.")
        elif phase == DISCARD:
            if seat == self.seat:
                self.say(f"You lay down {name}.")
            if game.discards.bit_count() == L.nest_size:
                if seat != self.seat:
                    self.say(f"{self.verb(seat, 'lay')} {L.nest_size} cards down as the new nest.")
                self.say(f"Announced: the nest {'holds' if game.nest_has_counters else 'holds no'} counters.")
        elif phase == TRUMP:
            self.say(f"{self.verb(seat, 'name')} trump: {name.split()[1]}.")
        elif phase == ROOK:
            self.say(f"{self.verb(seat, 'play')} the Rook Bird {name.split()[1]}.")
        elif phase == CALL:
            self.say(f"{self.verb(seat, 'call')} {name}: its holder is the bidder's secret partner.")
            if game.phase != CALL:
                self.partner_news()
        elif phase == PLAY:
            led = n_tricks == len(game.tricks) and len(game.trick) == 1
            called = " (a called card: the bidder's partner)" if action in game.called and seat != game.bidder else ""
            self.say(f"{self.verb(seat, 'lead' if led else 'play')} {name}{called}")
            if len(game.tricks) != n_tricks:
                self.trick_done(len(game.tricks))

    def partner_news(self) -> None:
        """After the call: what the person's seat knows about the partnership (RULES.md C6.4)."""
        game = self.env.game
        me = self.seat
        if me != game.bidder and me in known_partners(game, me):
            self.say(f"You hold a called card: you are the secret partner of {self.who(game.bidder)}. "
                     f"No one else knows until you play it.")
        elif me == game.bidder and any(game.discards >> c & 1 for c in game.called):
            self.say("You laid a called card down in the nest: you play alone.")

    def trick_done(self, k: int) -> None:
        game, L, n = self.env.game, self.L, self.n
        leader, cards = game.tricks[k - 1]
        winner = (leader + game.trick_winner_index(cards)) % n
        pts = sum(L.card_points[c] for c in cards)
        played = ", ".join(f"P{(leader + i) % n} {L.card_name(c)}" for i, c in enumerate(cards))
        last = " It is the last trick: it also takes the nest and 20 points." if k == L.n_tricks else ""
        self.say(f"Trick {k}: {played} -> won by {self.who(winner)}, {pts} counter points.{last}")

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
                dealer = (self.env.game.dealer + 1) % self.n
                if hands is None and res["game_winner"] >= 0:
                    w = res["game_winner"]
                    self.say()
                    self.say(f"*** Game over: {self.who(w)} {'win' if w == self.seat else 'wins'} with "
                             f"{self.scores[w]}. {'You win!' if w == self.seat else 'You lose.'} ***")
                    return 0
                if hands is not None and self.hand_no >= hands:
                    self.say()
                    self.say(f"Played {hands} hand(s). Final scores: {self.score_line(self.scores)}.")
                    return 0
        except _Quit as q:
            why = "End of input" if str(q) == "end of input" else "You quit"
            self.say(f"{why} during hand {self.hand_no}. Scores before this hand: {self.score_line(self.scores)}. "
                     f"Bye.")
            return 0


def run_from_args(p: argparse.ArgumentParser, args: argparse.Namespace, inp: TextIO, out: TextIO,
                  flags: dict[str, Any]) -> CallPartnerSession:
    """Check the command line of ``--game call_partner`` (errors through ``p.error``) and build the session.
    ``flags``: the call-your-partner rule flags (``players`` included)."""
    n = flags.get("players", 5)
    if args.partner is not None:
        p.error("--partner is for the partnership game: at call-your-partner the bidder calls a partner each hand")
    if not 0 <= args.seat < n:
        p.error(f"--seat must be a seat 0..{n - 1} at a {n}-player table, got {args.seat}")
    specs = [s.strip() for s in (args.opponents or DEFAULT_AGENT).split("+")]
    if len(specs) == 1:
        specs = specs * (n - 1)
    if len(specs) != n - 1 or not all(specs):
        p.error(f"--opponents {args.opponents!r}: give one agent spec for every other seat, or {n - 1} joined by '+' "
                f"(clockwise from your left)")
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
    session = CallPartnerSession(args.seat, agents, labels, flags, args.seed, inp, out, auto_forced=args.auto_forced)
    others = ", ".join(session.who((args.seat + k) % n) for k in range(1, n))
    session.say(f"Call-your-partner Rook, {n} players: you are P{args.seat}; clockwise from your left: {others}.")
    session.say(f"Answer with a choice number or a name ({session.NAMES_HINT}); 'help', 'quit'.")
    return session

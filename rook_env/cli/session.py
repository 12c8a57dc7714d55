"""A person's seat at a table in the terminal, for every game: :class:`TerminalSession`.

The session is one more agent of the common loop (:func:`rook_env.core.loop.play_turns`): the person's
seat acts through :class:`Person`, whose ``act`` asks at the terminal. What the session does is
the same at every table: the screen (the game's text view for the person's seat only, from the
game's ``render_scene`` parts, :class:`rook_env.core.render.TableParts`), the legal choices numbered
(fixed while discarding), the
answers read (a number, a name, ``help``, ``show``, ``quit``), the narration of every step and a
game or a number of hands played. A game adds only what it says differently, in a subclass
named by the game registry's ``play`` part (:mod:`rook_env.games.partnership.play`,
:mod:`rook_env.games.call_partner.play`): how a seat is named, its phase hints, parsing of names,
why an action is illegal, the narration of its contract phases, the end of a hand and a game.
"""

from __future__ import annotations

import argparse
from typing import Any, Mapping, Sequence, TextIO

from rook_env.games import GameSpec
from rook_env.core.loop import IllegalActionError, Step, play_turns, reset_agents
from rook_env.core.render import hand_text, sorted_cards

__all__ = ["HELP_WORDS", "Person", "QUIT_WORDS", "SHOW_WORDS", "Quit", "TerminalSession"]

QUIT_WORDS = {"q", "quit", "exit", "bye"}
HELP_WORDS = {"h", "help", "?"}
SHOW_WORDS = {"s", "show", "table"}


class Quit(Exception):
    """The person left (``quit``, or the end of input)."""


class Person:
    """The person at the table, as an agent: ``act`` asks at the terminal (the screen shows what the
    seat may know, rendered from the game for that seat only)."""

    name = "you"

    def __init__(self, session: "TerminalSession") -> None:
        self.session = session

    def act(self, observation: Mapping[str, Any], info: Mapping[str, Any] | None = None) -> int:
        return self.session.human_turn()


class TerminalSession:
    """One person at a table (``seat``) with agents in the other seats; a game's subclass says
    what differs (the methods marked "per game" below)."""

    NAMES_HINT = "R14, Rook, bid 85, pass, trump green, redeal"
    SCORES = "score"  # "Final score:" / "Final scores:"

    def __init__(self, game: GameSpec, flags: Mapping[str, Any], seat: int, agents: dict[int, Any],
                 labels: dict[int, str], seed: int | None, inp: TextIO, out: TextIO, auto_forced: bool = False) -> None:
        self.env = game.load("raw_env")(**flags)
        self.parts = game.load("render_scene")  # the game's text view
        self.L = self.env.layout
        self.n = len(self.env.possible_agents)
        self.NEST_SIZE = self.L.nest_size  # cards laid down into the nest
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

    @classmethod
    def from_args(cls, p: argparse.ArgumentParser, args: argparse.Namespace, flags: dict[str, Any], inp: TextIO,
                  out: TextIO) -> "TerminalSession":
        """Per game: check the command line (errors through ``p.error``), seat the agents, greet."""
        raise NotImplementedError

    # ------------------------------------------------------------------ text
    def phase(self) -> str:
        """The name of the game's current phase (``"bid"``, ``"discard"``, ``"play"``, ...)."""
        return self.parts.phase_names[self.env.game.phase]

    def say(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def who(self, s: int) -> str:
        """Per game: a seat as the narration names it ("You (P0)", "P1 (left opponent, random)")."""
        raise NotImplementedError

    def verb(self, s: int, verb: str) -> str:
        """``who(s)`` with a verb agreeing with it: "You (P0) lead", "P1 (...) leads"."""
        return f"{self.who(s)} {verb if s == self.seat else verb + 's'}"

    def score_line(self, values: Sequence[Any]) -> str:
        """Per game: scores (or counters) as the person reads them."""
        raise NotImplementedError

    def screen(self) -> str:
        """The table as the person's seat may know it."""
        return self.parts.text(self.env.game, seat=self.seat)

    # ----------------------------------------------------------------- input
    def read(self, prompt: str) -> str:
        self.out.write(prompt)
        self.out.flush()
        line = self.inp.readline()
        if not line:
            self.say()
            raise Quit("end of input")
        if self.echo:  # input from a script or a pipe: echo it so the transcript reads like a session
            self.out.write(line if line.endswith("\n") else line + "\n")
            self.out.flush()
        return line.strip()

    def ordered_choices(self, legal: list[int]) -> list[int]:
        """Cards sorted as the hand is shown, then the other actions in id order."""
        cards = [a for a in legal if a < self.L.n_cards]
        if cards:
            return sorted_cards(self.L, cards) + [a for a in legal if a >= self.L.n_cards]
        return legal

    def number_choices(self, legal: list[int]) -> dict[int, int]:
        """``{number: action}`` of the legal choices: numbered 1, 2, ... in display order, except
        while discarding, where every card keeps the number it got at the first discard (so a
        number typed from the previous list never names another card)."""
        ordered = self.ordered_choices(legal)
        game = self.env.game
        if self.phase() != "discard":
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
        gone = [a for a, n in self._fixed.items() if n == k] if self.phase() == "discard" else []
        if gone and game.discards >> gone[0] & 1:
            return f"choice {k} ({L.action_name(gone[0])}) is already laid down; pick one of the listed choices"
        if gone:
            return f"choice {k} ({L.action_name(gone[0])}) is not available: {self.why_illegal(gone[0])}"
        return None

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
            if self.phase() == "bid" and k in L.bids:
                a = L.bid_action(k)
                return (a, "") if a in legal else (None, f"bid {k} is not allowed now; choose one of the listed bids")
            return None, f"there is no choice {k}: type one of the listed numbers or a name"
        a, msg = self.parse_name(text, t)
        if a is None:
            return None, msg
        if a not in legal:
            return None, self.why_illegal(a)
        return a, ""

    def parse_name(self, text: str, t: str) -> tuple[int | None, str]:
        """Per game: the action a typed name (``text``; ``t`` lower-cased, spaces squeezed) names,
        or (None, why not)."""
        raise NotImplementedError

    def why_illegal(self, a: int) -> str:
        """A short reason why action ``a`` is not legal now."""
        L, game = self.L, self.env.game
        name, kind, phase = L.action_name(a), L.action_kind(a), self.phase()
        if kind == "card" and phase in self.CARD_PHASES and not game.hands[self.seat] >> a & 1:
            return f"you do not hold {name}; pick one of the listed choices"
        reason = self.rule_reason(a)
        if reason:
            return reason
        if kind == "bid" and phase == "bid":
            high = L.bids[game.high_bid] if game.high_bid >= 0 else None
            if high is not None and L.bids[a - L.BID0] <= high:
                return f"{name} is too low: the high bid is {high}"
            return f"{name} is not allowed now; choose one of the listed bids"
        if kind == "redeal" and phase == "bid":
            return "a redeal may only be called by a player holding no counters"
        return self.wrong_phase(a)

    CARD_PHASES: tuple[str, ...] = ("discard", "play")  # phases in which a card is played from the hand

    def rule_reason(self, a: int) -> str | None:
        """Per game: why ``a`` breaks a rule of the game's own (follow suit, call a card not held), or None."""
        return None

    def wrong_phase(self, a: int) -> str:
        """Per game: the reason when ``a`` is not an action of this phase."""
        raise NotImplementedError

    def phase_hint(self) -> str:
        game, L, phase = self.env.game, self.L, self.phase()
        if phase == "bid":
            return "bid, pass" + (" or call a redeal" if L.REDEAL in game.legal_actions() else "")
        if phase == "discard":
            return f"lay a card down into the nest, {L.nest_size - game.discards.bit_count()} to go"
        if phase == "play":
            return "lead a card" if not game.trick else "play a card"
        return self.contract_hint(phase)

    def contract_hint(self, phase: str) -> str:
        """Per game: what to do in the game's other phases (naming trump, calling, ...)."""
        return ""

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
                raise Quit("quit")
            if low in HELP_WORDS:
                self.say(f"Answer with a choice number or its name ({self.NAMES_HINT});"
                         " 'show' redraws the table, 'quit' leaves.")
                if self.phase() == "discard":
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

    # ------------------------------------------------------------------ hand
    def announce_deal(self) -> None:
        game = self.env.game
        self.say(f"Dealer: {self.who(game.dealer)}. Bidding starts with {self.who((game.dealer + 1) % self.n)}.")
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
        seats = {**self.agents, self.seat: Person(self)}
        try:
            play_turns(self.env, seats, on_step=self.narrate)
        except IllegalActionError as exc:
            raise IllegalActionError(f"{self.who(exc.seat)} chose an illegal action: {exc.__cause__}",
                                     exc.seat, exc.action) from exc
        return self.env.infos[f"player_{self.seat}"]["hand"]

    def narrate(self, step: Step) -> None:
        """Say what the step did, as the table sees it (called by the loop after every step): the
        auction and card play here, the game's other phases by ``narrate_<phase>``."""
        L, game = self.L, self.env.game
        seat, action = step.seat, int(step.action)
        phase, deals, n_tricks = self._before
        self._before = self._snapshot()
        name = L.action_name(action)
        phase_name = self.parts.phase_names[phase]
        if phase_name == "bid":
            self.narrate_bid(seat, action, name, game.deals != deals)
        elif phase_name == "play":
            led = n_tricks == len(game.tricks) and len(game.trick) == 1
            self.say(f"{self.verb(seat, 'lead' if led else 'play')} {name}{self.play_note(seat, action)}")
            if len(game.tricks) != n_tricks:
                self.trick_done(len(game.tricks))
        else:
            getattr(self, f"narrate_{phase_name}")(seat, action, name)

    def narrate_bid(self, seat: int, action: int, name: str, redealt: bool) -> None:
        """Per game: a call of the auction (``redealt``: it ended in a new deal)."""
        raise NotImplementedError

    def play_note(self, seat: int, action: int) -> str:
        """Per game: what the table learns from a card played (appended to its line)."""
        return ""

    def trick_done(self, k: int) -> None:
        game, L, n = self.env.game, self.L, self.n
        leader, cards = game.tricks[k - 1]
        winner = (leader + game.trick_winner_index(cards)) % n
        pts = sum(L.card_points[c] for c in cards)
        played = ", ".join(f"P{(leader + i) % n} {L.card_name(c)}" for i, c in enumerate(cards))
        self.say(f"Trick {k}: {played} -> won by {self.who(winner)}, {pts} counter points.{self.trick_note(k)}")
        self.after_trick(k)

    def trick_note(self, k: int) -> str:
        """Per game: appended to the line of trick ``k``."""
        return ""

    def after_trick(self, k: int) -> None:
        """Per game: lines after trick ``k`` (counters so far)."""

    def hand_done(self, res: dict[str, Any]) -> None:
        """Per game: the end of a hand (``res``: the environment's hand result)."""
        raise NotImplementedError

    def game_over(self, res: dict[str, Any]) -> str:
        """Per game: the line that ends a game (a winner reached the target)."""
        raise NotImplementedError

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
                    self.say()
                    self.say(self.game_over(res))
                    return 0
                if hands is not None and self.hand_no >= hands:
                    self.say()
                    self.say(f"Played {hands} hand(s). Final {self.SCORES}: {self.score_line(self.scores)}.")
                    return 0
        except Quit as q:
            why = "End of input" if str(q) == "end of input" else "You quit"
            self.say(f"{why} during hand {self.hand_no}. {self.SCORES.capitalize()} before this hand: "
                     f"{self.score_line(self.scores)}. Bye.")
            return 0

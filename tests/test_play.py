"""rook-play / play.py driven through its stdin, every game: full hands by number and by name, bad input,
quitting, a game to the target, the command line, discard numbers that stay fixed, auto-played forced
moves, and the rule that the screen shows only what the person's seat may know (its own hand, the nest
only as bidder, in call-your-partner Rook the partner only once known)."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys

import pytest
from helpers import over_games, per_game, usage_error

from rook_env.cli import play
from rook_env.games.call_partner import layout_for, make_config
from rook_env.games.call_partner.play import CallPartnerSession
from rook_env.games.partnership.cards import DEFAULT_LAYOUT as L
from rook_env.games.partnership.play import PartnershipSession

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHOICE = re.compile(r"(\d+)\) (bid \d+|trump \w+|rook \w+|\S+)")
CP = ["--game", "call_partner"]


def run(argv, lines):
    """main() with the given input lines; returns (exit code, screen text)."""
    out = io.StringIO()
    rc = play.main(argv, stdin=io.StringIO("".join(line + "\n" for line in lines)), stdout=out)
    return rc, out.getvalue()


class Driver(io.StringIO):
    """An interactive stdin: reads the last list of choices off the screen and answers with a
    name picked by ``pick(choices)`` (a list of (number, name)); ``script`` lines come first."""

    def __init__(self, screen: io.StringIO, pick, script=(), limit=400):
        super().__init__()
        self.screen, self.pick, self.script, self.limit = screen, pick, list(script), limit
        self.answers: list[str] = []

    def readline(self, *args):
        if len(self.answers) >= self.limit:
            return ""
        if self.script:
            ans = self.script.pop(0)
        else:
            text = self.screen.getvalue()
            block = text[text.rindex("Your choices"):].split("\n")[1:]
            choices = []
            for line in block:
                if not line.startswith("  "):
                    break
                choices += CHOICE.findall(line)
            ans = self.pick(choices)
        self.answers.append(ans)
        return ans + "\n"


def drive(argv, pick, script=(), limit=400):
    screen = io.StringIO()
    stdin = Driver(screen, pick, script, limit)
    rc = play.main(argv, stdin=stdin, stdout=screen)
    return rc, screen.getvalue(), stdin.answers


# A whole hand answered "1" at every turn: the command line, what the screen must show (text, patterns, and a
# line that comes at least so many times).
FULL_HAND = per_game({
    "partnership": [(["--hands", "1", "--seed", "3", "--partner", "random", "--opponents", "random"],
                     ["=== Hand 1 over ===", "Played 1 hand(s)", "Trick 9:"],
                     [r"This hand: your team [+-]\d+, opponents [+-]\d+"], ("Trick ", 9))],
    "call_partner": [(CP + ["--players", "5", "--seat", "0", "--opponents", "call_partner_heuristic", "--hands", "1",
                            "--seed", "3"],
                      ["Call-your-partner Rook, 5 players: you are P0", "=== Hand 1 over ===",
                       "Played 1 hand(s). Final scores: you"],
                      [r"calls (\S+): its holder is the bidder's secret partner"],
                      ("Your choices", 10))],  # at least the bid and the ten cards
})


@pytest.mark.parametrize("game, argv, shown, patterns, count", over_games(FULL_HAND))
def test_full_hand_by_numbers(game, argv, shown, patterns, count):
    rc, text = run(argv, ["1"] * 300)
    assert rc == 0
    for words in shown:
        assert words in text
    for pattern in patterns:
        assert re.search(pattern, text)
    assert text.count(count[0]) >= count[1]
    assert "Traceback" not in text


@pytest.mark.partnership
def test_full_hand_by_names_winning_the_auction():
    # Always take the last listed choice by name: bid 120 in the auction (so we discard and name
    # trump), the last card otherwise, "trump black".
    def last(choices):
        names = [n for _, n in choices if n != "redeal"]
        return names[-1]

    rc, text, answers = drive(["--hands", "1", "--seed", "11", "--seat", "2", "--partner", "random",
                               "--opponents", "random"], last)
    assert rc == 0, text
    assert "=== Hand 1 over ===" in text
    assert not any(a.isdigit() for a in answers)
    assert "bid 120" in answers and "trump black" in answers
    assert "You (P2) name trump: black." in text
    assert text.count("You lay down") == 5
    assert "made it" in text.lower() or "were set" in text.lower()


@pytest.mark.partnership
def test_colour_alone_and_card_names_case_insensitive():
    def pick(choices):
        names = [n for _, n in choices if n != "redeal"]
        if names[-1].startswith("trump"):
            return "Green"
        if names[-1].startswith("bid"):
            return "BID 120" if "bid 120" in names else "PASS"
        return names[0].lower()

    rc, text, answers = drive(["--hands", "1", "--seed", "11", "--partner", "random", "--opponents", "random"], pick)
    assert rc == 0 and "=== Hand 1 over ===" in text


@pytest.mark.partnership
def test_bad_input_is_reprompted():
    bad = ["foo", "0", "99", "bid 65", "", "R99", "trump purple", "help", "show"]
    rc, text = run(["--hands", "1", "--seed", "3", "--partner", "random", "--opponents", "random"],
                   bad + ["1"] * 300)
    assert rc == 0 and "=== Hand 1 over ===" in text
    assert "I don't understand 'foo'" in text
    assert "there is no choice 0" in text and "there is no choice 99" in text
    assert "bid 65" in text and "not one of" in text
    assert "Type one of the listed numbers" in text
    assert "I don't understand 'R99'" in text and "unknown trump colour 'purple'" in text
    assert "Answer with a choice number or its name" in text
    assert "Traceback" not in text


@pytest.mark.partnership
def test_illegal_choices_get_reasons():
    # Seed 5, seat 1: the auction reaches us at 95; then we win it at 120 and discard.
    rc, text = run(["--hands", "1", "--seed", "5", "--seat", "1", "--partner", "random", "--opponents", "random"],
                   ["bid 90", "bid 120", "1", "R14", "Y5", "trump green", "quit"])
    assert rc == 0
    assert "bid 90 is too low: the high bid is 95" in text
    assert "you do not hold R14" in text and "you do not hold Y5" in text
    assert "trump green is not possible now: it is time for discarding" in text


# Quitting mid-hand (the answers before "quit"), and the input ending during the first hand.
QUIT = per_game({
    "partnership": [(["--hands", "2", "--seed", "3", "--partner", "random", "--opponents", "random"], ["1", "1"],
                     ["--seed", "3", "--partner", "random", "--opponents", "random"], ["1", "1"])],
    "call_partner": [(CP + ["--seed", "3", "--opponents", "random"], [], CP + ["--seed", "3", "--opponents", "random"],
                      ["1"])],
})


@pytest.mark.parametrize("game, argv, before_quit, argv_eof, lines", over_games(QUIT))
def test_quit_mid_hand_and_end_of_input_exit_cleanly(game, argv, before_quit, argv_eof, lines):
    rc, text = run(argv, [*before_quit, "quit"])
    assert rc == 0 and "You quit during hand 1" in text and "Bye." in text
    rc, text = run(argv_eof, lines)
    assert rc == 0 and "End of input during hand 1" in text


# play.py in a subprocess, its input through a pipe: the command line, the input, what the screen shows.
PIPE = per_game({
    "partnership": [(["--hands", "1", "--seed", "2", "--partner", "random", "--opponents", "random+random",
                      "--seat", "3"], "1\n1\nquit\n", "You quit")],
    "call_partner": [(CP + ["--players", "5", "--seat", "0", "--opponents", "call_partner_heuristic", "--hands", "1",
                            "--seed", "2"], "1\n" * 40, "=== Hand 1 over ===")],
})


@pytest.mark.parametrize("game, argv, answers, shown", over_games(PIPE))
def test_command_line_through_a_pipe(game, argv, answers, shown):
    proc = subprocess.run([sys.executable, "play.py", *argv], input=answers, capture_output=True, text=True,
                          cwd=ROOT, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert shown in proc.stdout and proc.stderr == ""


BAD_COMMAND_LINES = per_game({
    "partnership": [
        (["--seat", "4"], "--seat"),
        (["--hands", "0"], "--hands"),
        (["--partner", "bogus"], "unknown agent spec"),
        (["--partner", "heuristic+random"], "one agent spec"),
        (["--flag", "deck=huge"], "deck"),
        (["--game", "--hands", "2"], "--game: expected one argument"),  # --game names the game now
        (["--players", "5"], "--players is for --game call_partner"),
        # another game's agent is refused up front (it used to crash at its first turn)
        (["--opponents", "call_partner_heuristic"], "plays the call_partner game"),
        (["--flag", "players=5"], "players=5 is not allowed for game='partnership'"),
    ],
    "call_partner": [
        (CP + ["--partner", "random"], "--partner is for the partnership game"),
        (CP + ["--seat", "5"], "--seat must be a seat 0..4"),
        (CP + ["--players", "4", "--seat", "4"], "--seat must be a seat 0..3"),
        (CP + ["--opponents", "random+random"], "give one agent spec for every other seat, or 4 joined"),
        (CP + ["--opponents", "heuristic"], "plays the partnership game"),
        (CP + ["--players", "7"], "players=7"),
        (CP + ["--flag", "rook_rank=high"], "does not apply"),
        (CP + ["--flag", "episode=game"], "episode"),
        (CP + ["--players", "4", "--flag", "players=5"], "contradicts"),
    ],
})


@pytest.mark.parametrize("game, argv, message", over_games(BAD_COMMAND_LINES, ids=lambda c: " ".join(c[0])))
def test_bad_command_line(game, argv, message, capsys):
    assert message in usage_error(play.main, argv, capsys, stdin=io.StringIO(""), stdout=io.StringIO())


HAND_LINE = re.compile(r"(?<!This )hand: (.*)$", re.IGNORECASE)


def cards_of(hand_text: str, L=L) -> set[int]:
    """Card ids (of layout ``L``) in a hand_text line: 'R: 14 10 | Y: 12 | Rook'."""
    out = set()
    for group in hand_text.split("|"):
        group = group.strip()
        if group == "Rook":
            out.add(L.rook)
        elif group and group != "-":
            colour, ranks = group.split(":")
            out |= {L.card_id("RYGB".index(colour.strip()), int(r)) for r in ranks.split()}
    return out


@pytest.mark.partnership
@pytest.mark.parametrize("seat, seed", [(0, 3), (1, 5), (2, 11), (3, 21)])
def test_screen_never_shows_another_seats_cards(monkeypatch, seat, seed):
    """Record the true hands every time play.py writes a line; no 'hand:' line may hold a card of
    another seat, and the nest is shown only to the bidder."""
    seen = []
    real_say = PartnershipSession.say

    def say(self, text=""):
        game = getattr(self.env, "game", None)
        if game is not None:
            seen.append((text, list(game.hands), game.bidder, game.phase))
        real_say(self, text)

    monkeypatch.setattr(PartnershipSession, "say", say)

    def pick(choices):  # mix bids and passes so that we are sometimes the bidder
        names = [n for _, n in choices if n != "redeal"]
        return names[len(names) // 2]

    rc, text, _ = drive(["--hands", "3", "--seed", str(seed), "--seat", str(seat), "--partner", "random",
                         "--opponents", "random"], pick)
    assert rc == 0 and "Played 3 hand(s)" in text
    checked = 0
    for chunk, hands, bidder, phase in seen:
        for line in chunk.split("\n"):
            m = HAND_LINE.search(line)
            if m:
                assert line.startswith(f"P{seat} ") or line.startswith("Your hand:"), line
                shown = cards_of(m.group(1))
                assert shown == {c for c in range(L.n_cards) if hands[seat] >> c & 1}, line
                for other in range(4):
                    if other != seat:
                        assert not shown & {c for c in range(L.n_cards) if hands[other] >> c & 1}, line
                checked += 1
            if line.startswith("nest (as dealt)"):
                assert bidder == seat, line
    assert checked >= 10
    if "You lay down" in text:  # we won an auction: the nest was shown to us, and only then
        assert "nest (as dealt)" in text


@pytest.mark.partnership
def test_redeal_by_name_shows_the_new_hand():
    # Seed 7: seat 3 is dealt no counters and bids first, so it may call a redeal.
    rc, text = run(["--hands", "1", "--seed", "7", "--seat", "3", "--partner", "random", "--opponents", "random"],
                   ["redeal", "quit"])
    assert rc == 0
    assert "13) redeal" in text and "You (P3): redeal" in text
    assert text.count("Your hand:") == 2 and "The same dealer deals again." in text


# Whole games: the command line, the answers, the target, what the screen shows besides (six players call two
# cards).
GAMES_TO_TARGET = per_game({
    "partnership": [(["--game", "partnership", "--seed", "1", "--partner", "random", "--opponents", "random",
                      "--flag", "target_score=50"], 2000, 50, None)],
    "call_partner": [
        (CP + ["--players", str(players), "--seed", "2", "--opponents", "random", "--flag", "target_score=150",
               "--auto-forced"], 3000, 150, r"called \S+ \S+; partner" if players == 6 else None)
        for players in (4, 6)
    ],
})


@pytest.mark.parametrize("game, argv, answers, target, pattern", over_games(GAMES_TO_TARGET))
def test_game_mode_plays_to_the_target(game, argv, answers, target, pattern):
    rc, text = run(argv, ["1"] * answers)
    assert rc == 0
    assert f"(game to {target})" in text and "*** Game over:" in text
    if pattern:
        assert re.search(pattern, text)


@pytest.mark.partnership
def test_agent_illegal_action_stops_play_with_a_clear_error(monkeypatch):
    """An agent's illegal move is never replaced by another: play stops and names the agent."""

    class Cheater:
        def reset(self):
            pass

        def act(self, observation, info=None):
            import numpy as np

            return int(np.flatnonzero(observation["action_mask"] == 0)[0])

    from rook_env.games.partnership import play as play_partnership

    monkeypatch.setattr(play_partnership, "build_agent", lambda spec, seed, flags: Cheater())
    out = io.StringIO()
    code = play.main(["--seat", "0", "--hands", "1", "--seed", "3"], stdin=io.StringIO("pass\n" * 5), stdout=out)
    assert code == 1
    assert re.search(r"error: P\d \((left opponent|partner|right opponent), heuristic\) chose an illegal action",
                     out.getvalue())


@pytest.mark.partnership
def test_discard_numbers_stay_fixed():
    # Seed 11, seat 2: our "bid 120" wins the auction; the 14 cards are numbered once for the discard.
    rc, text = run(["--hands", "1", "--seed", "11", "--seat", "2", "--partner", "random", "--opponents", "random"],
                   ["bid 120", "3", "3", "1", "2", "4", "5", "trump black", "quit"])
    assert rc == 0
    lists = [block.split("\nP2> ")[0] for block in text.split("Your choices (lay a card down")[1:]]
    assert len(lists) == 5
    first = {int(n): name for n, name in CHOICE.findall(lists[0])}
    assert sorted(first) == list(range(1, 15))
    for later in lists[1:]:  # the cards left keep their first numbers
        assert all(first[int(n)] == name for n, name in CHOICE.findall(later))
    laid = re.findall(r"You lay down (\S+)\.", text)
    assert laid == [first[3], first[1], first[2], first[4], first[5]]
    assert f"choice 3 ({first[3]}) is already laid down" in text


@pytest.mark.partnership
def test_auto_forced_plays_single_moves_and_says_so():
    argv = ["--hands", "1", "--seed", "3", "--partner", "random", "--opponents", "random"]
    rc, text = run(argv + ["--auto-forced"], ["1"] * 300)
    assert rc == 0 and "=== Hand 1 over ===" in text
    forced = re.findall(r"Your only legal move is (\S+): played for you \(--auto-forced\)\.", text)
    assert forced  # at least the last trick's card
    rc, text = run(argv, ["1"] * 300)
    assert rc == 0 and "played for you" not in text


def test_help_lists_the_in_game_commands(capsys):
    with pytest.raises(SystemExit) as exc:
        play.main(["--help"], stdin=io.StringIO(""), stdout=io.StringIO())
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "in-game commands" in out and "--auto-forced" in out
    for word in ("help", "show", "quit"):
        assert re.search(rf"^  {word}\b", out, re.MULTILINE), word


@pytest.mark.parametrize("game", list(__import__("rook_env.games", fromlist=["game_names"]).game_names()))
def test_every_registered_game_plays_a_hand(game):
    """The play CLI offers the registry's games: each names its session class (the 'play' part)."""
    from rook_env.cli.session import TerminalSession
    from rook_env.games import get_game

    assert issubclass(get_game(game).load("play"), TerminalSession)
    rc, text = run(["--game", game, "--hands", "1", "--seed", "2", "--auto-forced"], ["1"] * 300)
    assert rc == 0 and "=== Hand 1 over ===" in text and "Played 1 hand(s)." in text


# ============================================================================== call-your-partner Rook
def drive_cp(argv, pick, script=()):
    """:func:`drive` for call-your-partner Rook (600 answers at the most)."""
    return drive(CP + argv, pick, script, limit=600)


@pytest.mark.call_partner
def test_winning_the_auction_discarding_and_calling_by_name():
    """Bid 200 at once (nobody can overbid), lay down seven cards by their fixed numbers, name trump,
    the Rook's rank and the called card by name, then play the hand out."""
    L = layout_for(make_config(players=5))

    def pick(choices):
        names = [n for _, n in choices]
        return names[0]

    script = ["bid 200"] + ["1", "1", "2", "3", "4", "5", "6", "7"]
    rc, text, _ = drive_cp(["--players", "5", "--seat", "2", "--opponents", "random", "--hands", "1", "--seed", "4"],
                     pick, script + ["green", "high"])
    assert rc == 0, text
    assert "You (P2): bid 200" in text and "You (P2) won the auction at 200" in text
    assert "nest (as dealt)" in text  # the bidder sees the nest
    lists = [block.split("\nP2> ")[0] for block in text.split("Your choices (lay a card down")[1:]]
    assert len(lists) == L.nest_size
    first = {int(n): name for n, name in CHOICE.findall(lists[0])}
    assert sorted(first) == list(range(1, L.hand_size + L.nest_size + 1))  # 17 cards numbered once
    laid = re.findall(r"You lay down (\S+)\.", text)
    assert laid == [first[k] for k in (1, 2, 3, 4, 5, 6, 7)]
    assert "choice 1 (" in text and "is already laid down" in text  # the second "1" was refused
    assert "You (P2) name trump: green." in text and "You (P2) play the Rook Bird high." in text
    called = re.search(r"You \(P2\) call (\S+): its holder", text).group(1)
    assert called not in laid or "you play alone" in text
    assert "=== Hand 1 over ===" in text and "P2) bid 200 in green, Rook high, called " + called in text


@pytest.mark.call_partner
def test_typed_names_and_bad_input_get_reasons():
    def pick(choices):
        return choices[0][1]

    # Bid 200, then try nonsense, a card we do not hold, a call of our own card, and names for each phase.
    rc, text, _ = drive_cp(["--players", "4", "--seat", "0", "--opponents", "random", "--hands", "1", "--seed", "5"], pick,
                     ["bid 50", "bid 200"])
    assert rc == 0
    assert "I don't understand 'bid 50' (bid 50 is not one of" in text
    assert "You (P0): bid 200" in text
    # Drive again and, at the call, type a card we hold first.
    screen = io.StringIO()

    def pick_call(choices):
        text = screen.getvalue()
        tail = text[text.rindex("Your choices"):]
        if tail.startswith("Your choices (call a card") and "you hold" not in text:
            hand = re.findall(r"^P0 hand: (.*)$", text, re.MULTILINE)[-1]
            colour, ranks = hand.split("|")[0].split(":")
            return f"call {colour.strip()}{ranks.split()[0]}"
        if tail.startswith("Your choices (name trump)"):
            return "purple" if "name a colour" not in text else "yellow"
        if tail.startswith("Your choices (the Rook Bird"):
            return "low"
        return choices[0][1]

    rc = play.main(CP + ["--players", "4", "--opponents", "random", "--hands", "1", "--seed", "5"],
                   stdin=Driver(screen, pick_call, ["bid 200", "hello"], limit=600), stdout=screen)
    text = screen.getvalue()
    assert rc == 0
    assert "I don't understand 'hello'" in text
    assert "name a colour: red, yellow, green, black" in text and "You (P0) name trump: yellow." in text
    assert "You (P0) play the Rook Bird low." in text
    assert re.search(r"you hold \S+: call a card you do not hold", text)


@pytest.mark.call_partner
def test_opponents_sit_clockwise_from_the_left():
    rc, text = run(CP + ["--players", "5", "--seat", "3", "--opponents",
                    "random+call_partner_heuristic+random+call_partner_heuristic", "--seed", "1"], ["quit"])
    assert rc == 0
    assert ("clockwise from your left: P4 (random), P0 (call_partner_heuristic), P1 (random), "
            "P2 (call_partner_heuristic).") in text


CP_HAND_LINE = re.compile(r"^(?:P(\d) hand|Your hand): (.*)$")


@pytest.mark.call_partner
@pytest.mark.parametrize("players, seat, seed, bids", [
    (5, 0, 3, True), (4, 1, 5, True), (6, 4, 2, True),  # we win auctions: the nest is shown
    (5, 1, 2, False), (4, 2, 1, False), (6, 0, 1, False),  # we pass: we hold a called card in one hand
])
def test_screen_shows_only_what_the_seat_may_know(monkeypatch, players, seat, seed, bids):
    """Record the true state every time the session writes; no line may show another seat's cards,
    the nest appears only to the bidder, and a partner is named only to the holder of the called card
    or once the card is played."""
    seen = []
    real_say = CallPartnerSession.say

    def say(self, text=""):
        g = getattr(self.env, "game", None)  # None before the first reset
        if g is not None:
            holders = [s for s in range(g.n) for c in g.called if g.hands[s] >> c & 1 or g.played_by[c] == s]
            seen.append((text, list(g.hands), g.bidder, list(g.called), holders, g.played, g.phase))
        real_say(self, text)

    monkeypatch.setattr(CallPartnerSession, "say", say)

    def pick(choices):  # a middle choice (we often win the auction), or pass whenever we may
        names = [n for _, n in choices if n != "redeal"]
        return "pass" if not bids and "pass" in names else names[len(names) // 2]

    rc, text, _ = drive_cp(["--players", str(players), "--seat", str(seat), "--opponents", "call_partner_heuristic",
                      "--hands", "4", "--seed", str(seed)], pick)
    assert rc == 0 and "Played 4 hand(s)" in text
    L = layout_for(make_config(players=players))
    checked = named = 0
    for chunk, hands, bidder, called, holders, played, phase in seen:
        for line in chunk.split("\n"):
            m = CP_HAND_LINE.search(line)
            if m:
                assert m.group(1) in (None, str(seat)), line
                assert cards_of(m.group(2), L) == {c for c in range(L.n_cards) if hands[seat] >> c & 1}, line
                checked += 1
            if line.startswith("nest (as dealt)"):
                assert bidder == seat, line
            p = re.search(r"partners: (.*)$", line)
            if p and p.group(1) != "unknown":
                for s in map(int, re.findall(r"P(\d)", p.group(1))):
                    card_of_s = [c for c in called if hands[s] >> c & 1 or played >> c & 1]
                    # s is named only if it is me holding a called card, or its called card was played
                    assert s == seat or any(played >> c & 1 for c in card_of_s), line
                    named += 1
            if "secret partner of" in line:
                assert seat in holders and seat != bidder, line
    assert checked >= 8 and named > 0
    assert ("nest (as dealt)" in text) == bids  # the scenario each case is for happened
    if not bids:
        assert "You hold a called card: you are the secret partner of" in text


# ============================================================================== the registry
BARE_GAME = r"""
import contextlib, dataclasses, io
from rook_env.games import get_game, register_game
register_game(dataclasses.replace(get_game("partnership"), name="bare", heuristic=None, render_scene=None, extra={}))
from rook_env.agents import make_agent
from rook_env.cli import evaluate, play
for main, argv, message in ((play.main, ["--game", "bare"], "--game bare cannot be played at the terminal"),
                            (evaluate.main, ["--game", "bare", "random", "random"], "--game bare cannot be evaluated")):
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            main(argv)
        except SystemExit as exc:
            assert exc.code == 2
    assert message in err.getvalue() and "has no part" in err.getvalue(), err.getvalue()
try:
    make_agent("nonsense", game="bare")
except ValueError as exc:
    assert "the bare game takes 'random'" in str(exc), exc
print("ok")
"""


def test_a_game_without_a_terminal_table_is_refused_by_name():
    """A registered game that names no 'play' or 'match' part: the command lines say so, no traceback."""
    res = subprocess.run([sys.executable, "-c", BARE_GAME], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and res.stdout.strip() == "ok", res.stderr

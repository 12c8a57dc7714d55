"""rook-play / play.py driven through its stdin: full hands by number and by name, bad input,
quitting, discard numbers that stay fixed, auto-played forced moves, and the rule that the screen
never shows another seat's cards."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys

import pytest

from rook_env.games.partnership.cards import DEFAULT_LAYOUT as L
from rook_env.cli import play
from rook_env.games.partnership.play import PartnershipSession

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHOICE = re.compile(r"(\d+)\) (bid \d+|trump \w+|\S+)")


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


def drive(argv, pick, script=()):
    screen = io.StringIO()
    stdin = Driver(screen, pick, script)
    rc = play.main(argv, stdin=stdin, stdout=screen)
    return rc, screen.getvalue(), stdin.answers


def test_full_hand_by_numbers():
    rc, text = run(["--hands", "1", "--seed", "3", "--partner", "random", "--opponents", "random"], ["1"] * 300)
    assert rc == 0
    assert "=== Hand 1 over ===" in text and "Played 1 hand(s)" in text
    assert text.count("Trick ") >= 9 and "Trick 9:" in text
    assert re.search(r"This hand: your team [+-]\d+, opponents [+-]\d+", text)
    assert "Traceback" not in text


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


def test_illegal_choices_get_reasons():
    # Seed 5, seat 1: the auction reaches us at 95; then we win it at 120 and discard.
    rc, text = run(["--hands", "1", "--seed", "5", "--seat", "1", "--partner", "random", "--opponents", "random"],
                   ["bid 90", "bid 120", "1", "R14", "Y5", "trump green", "quit"])
    assert rc == 0
    assert "bid 90 is too low: the high bid is 95" in text
    assert "you do not hold R14" in text and "you do not hold Y5" in text
    assert "trump green is not possible now: it is time for discarding" in text


def test_quit_mid_hand_and_end_of_input_exit_cleanly():
    rc, text = run(["--hands", "2", "--seed", "3", "--partner", "random", "--opponents", "random"],
                   ["1", "1", "quit"])
    assert rc == 0 and "You quit during hand 1" in text and "Bye." in text
    rc, text = run(["--seed", "3", "--partner", "random", "--opponents", "random"], ["1", "1"])
    assert rc == 0 and "End of input during hand 1" in text


def test_command_line_through_a_pipe():
    proc = subprocess.run(
        [sys.executable, "play.py", "--hands", "1", "--seed", "2", "--partner", "random", "--opponents",
         "random+random", "--seat", "3"],
        input="1\n1\nquit\n", capture_output=True, text=True, cwd=ROOT, timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "You quit" in proc.stdout and proc.stderr == ""


@pytest.mark.parametrize(
    "argv, message",
    [
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
)
def test_bad_command_line(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        play.main(argv, stdin=io.StringIO(""), stdout=io.StringIO())
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


HAND_LINE = re.compile(r"(?<!This )hand: (.*)$", re.IGNORECASE)


def cards_of(hand_text: str) -> set[int]:
    """Card ids in a hand_text line: 'R: 14 10 | Y: 12 | Rook'."""
    out = set()
    for group in hand_text.split("|"):
        group = group.strip()
        if group == "Rook":
            out.add(L.rook)
        elif group and group != "-":
            colour, ranks = group.split(":")
            out |= {L.card_id("RYGB".index(colour.strip()), int(r)) for r in ranks.split()}
    return out


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


def test_redeal_by_name_shows_the_new_hand():
    # Seed 7: seat 3 is dealt no counters and bids first, so it may call a redeal.
    rc, text = run(["--hands", "1", "--seed", "7", "--seat", "3", "--partner", "random", "--opponents", "random"],
                   ["redeal", "quit"])
    assert rc == 0
    assert "13) redeal" in text and "You (P3): redeal" in text
    assert text.count("Your hand:") == 2 and "The same dealer deals again." in text


def test_game_mode_plays_to_the_target():
    rc, text = run(["--game", "partnership", "--seed", "1", "--partner", "random", "--opponents", "random",
                    "--flag", "target_score=50"], ["1"] * 2000)
    assert rc == 0
    assert "(game to 50)" in text and "*** Game over:" in text


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

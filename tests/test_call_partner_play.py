"""play.py --game call_partner driven through its stdin: whole hands by number, winning the auction and
taking the bidder's turns by name, bad input, quitting, a game to the target, the command line, and the
rule that the screen shows only what the person's seat may know (own hand, the nest only as bidder, the
partner only once known)."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys

import pytest

from rook_env.games.call_partner import layout_for, make_config
from rook_env.cli import play
from rook_env.games.call_partner.play import CallPartnerSession

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CP = ["--game", "call_partner"]
CHOICE = re.compile(r"(\d+)\) (bid \d+|trump \w+|rook \w+|\S+)")


def run(argv, lines):
    """main() with the given input lines; returns (exit code, screen text)."""
    out = io.StringIO()
    rc = play.main(CP + argv, stdin=io.StringIO("".join(line + "\n" for line in lines)), stdout=out)
    return rc, out.getvalue()


class Driver(io.StringIO):
    """An interactive stdin: answers ``pick(choices)`` for the last list of choices on the screen
    (a list of (number, name)); ``script`` lines come first."""

    def __init__(self, screen, pick, script=(), limit=600):
        super().__init__()
        self.screen, self.pick, self.script, self.limit = screen, pick, list(script), limit

    def readline(self, *args):
        if self.limit <= 0:
            return ""
        self.limit -= 1
        if self.script:
            return self.script.pop(0) + "\n"
        text = self.screen.getvalue()
        choices = []
        for line in text[text.rindex("Your choices"):].split("\n")[1:]:
            if not line.startswith("  "):
                break
            choices += CHOICE.findall(line)
        return self.pick(choices) + "\n"


def drive(argv, pick, script=()):
    screen = io.StringIO()
    rc = play.main(CP + argv, stdin=Driver(screen, pick, script), stdout=screen)
    return rc, screen.getvalue()


def test_full_hand_by_numbers():
    rc, text = run(["--players", "5", "--seat", "0", "--opponents", "call_partner_heuristic", "--hands", "1",
                    "--seed", "3"], ["1"] * 300)
    assert rc == 0
    assert "Call-your-partner Rook, 5 players: you are P0" in text
    assert "=== Hand 1 over ===" in text and "Played 1 hand(s). Final scores: you" in text
    assert text.count("Your choices") >= 10  # at least the bid and the ten cards
    assert re.search(r"calls (\S+): its holder is the bidder's secret partner", text)


def test_winning_the_auction_discarding_and_calling_by_name():
    """Bid 200 at once (nobody can overbid), lay down seven cards by their fixed numbers, name trump,
    the Rook's rank and the called card by name, then play the hand out."""
    L = layout_for(make_config(players=5))

    def pick(choices):
        names = [n for _, n in choices]
        return names[0]

    script = ["bid 200"] + ["1", "1", "2", "3", "4", "5", "6", "7"]
    rc, text = drive(["--players", "5", "--seat", "2", "--opponents", "random", "--hands", "1", "--seed", "4"],
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


def test_typed_names_and_bad_input_get_reasons():
    def pick(choices):
        return choices[0][1]

    # Bid 200, then try nonsense, a card we do not hold, a call of our own card, and names for each phase.
    rc, text = drive(["--players", "4", "--seat", "0", "--opponents", "random", "--hands", "1", "--seed", "5"], pick,
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
                   stdin=Driver(screen, pick_call, ["bid 200", "hello"]), stdout=screen)
    text = screen.getvalue()
    assert rc == 0
    assert "I don't understand 'hello'" in text
    assert "name a colour: red, yellow, green, black" in text and "You (P0) name trump: yellow." in text
    assert "You (P0) play the Rook Bird low." in text
    assert re.search(r"you hold \S+: call a card you do not hold", text)


def test_quit_and_end_of_input_exit_cleanly():
    rc, text = run(["--seed", "3", "--opponents", "random"], ["quit"])
    assert rc == 0 and "You quit during hand 1" in text and "Bye." in text
    rc, text = run(["--seed", "3", "--opponents", "random"], ["1"])
    assert rc == 0 and "End of input during hand 1" in text


@pytest.mark.parametrize("players", [4, 6])
def test_a_game_to_the_target(players):
    rc, text = run(["--players", str(players), "--seed", "2", "--opponents", "random", "--flag", "target_score=150",
                    "--auto-forced"], ["1"] * 3000)
    assert rc == 0
    assert "(game to 150)" in text and "*** Game over:" in text
    if players == 6:  # two called cards
        assert re.search(r"called \S+ \S+; partner", text)


def test_opponents_sit_clockwise_from_the_left():
    rc, text = run(["--players", "5", "--seat", "3", "--opponents",
                    "random+call_partner_heuristic+random+call_partner_heuristic", "--seed", "1"], ["quit"])
    assert rc == 0
    assert ("clockwise from your left: P4 (random), P0 (call_partner_heuristic), P1 (random), "
            "P2 (call_partner_heuristic).") in text


@pytest.mark.parametrize("argv, message", [
    (["--partner", "random"], "--partner is for the partnership game"),
    (["--seat", "5"], "--seat must be a seat 0..4"),
    (["--players", "4", "--seat", "4"], "--seat must be a seat 0..3"),
    (["--opponents", "random+random"], "give one agent spec for every other seat, or 4 joined"),
    (["--opponents", "heuristic"], "plays the partnership game"),
    (["--players", "7"], "players=7"),
    (["--flag", "rook_rank=high"], "does not apply"),
    (["--flag", "episode=game"], "episode"),
    (["--players", "4", "--flag", "players=5"], "contradicts"),
])
def test_bad_command_line(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        play.main(CP + argv, stdin=io.StringIO(""), stdout=io.StringIO())
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_command_line_through_a_pipe():
    proc = subprocess.run(
        [sys.executable, "play.py", "--game", "call_partner", "--players", "5", "--seat", "0", "--opponents",
         "call_partner_heuristic", "--hands", "1", "--seed", "2"],
        input="1\n" * 40, capture_output=True, text=True, cwd=ROOT, timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "=== Hand 1 over ===" in proc.stdout and proc.stderr == ""


# ------------------------------------------------------------------------------ hidden information
HAND_LINE = re.compile(r"^(?:P(\d) hand|Your hand): (.*)$")


def cards_of(L, hand_text):
    out = set()
    for group in hand_text.split("|"):
        group = group.strip()
        if group == "Rook":
            out.add(L.rook)
        elif group and group != "-":
            colour, ranks = group.split(":")
            out |= {L.card_id("RYGB".index(colour.strip()), int(r)) for r in ranks.split()}
    return out


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

    rc, text = drive(["--players", str(players), "--seat", str(seat), "--opponents", "call_partner_heuristic",
                      "--hands", "4", "--seed", str(seed)], pick)
    assert rc == 0 and "Played 4 hand(s)" in text
    L = layout_for(make_config(players=players))
    checked = named = 0
    for chunk, hands, bidder, called, holders, played, phase in seen:
        for line in chunk.split("\n"):
            m = HAND_LINE.search(line)
            if m:
                assert m.group(1) in (None, str(seat)), line
                assert cards_of(L, m.group(2)) == {c for c in range(L.n_cards) if hands[seat] >> c & 1}, line
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

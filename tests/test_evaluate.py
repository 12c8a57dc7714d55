"""rook_env.evaluation and its command line (rook-eval / evaluate.py): statistics against hand-computed
values, duplicate matches, determinism, workers, illegal-action and fallback accounting, outputs
(JSON, PNG, tables with and without rich) and the round robin with its rating intervals."""

from __future__ import annotations

import io
import json
import math
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from rook_env import evaluation
from rook_env.agents.random_agent import RandomAgent
from rook_env.agents.registry import parse_team
from rook_env.games.partnership.cards import DEFAULT_LAYOUT as L
from rook_env.games.partnership.cards import rank_power
from rook_env.cli import evaluate
from rook_env.evaluation.replays import match_replays, select_rows
from rook_env.evaluation.report import match_tables, print_tables, round_robin_tables
from rook_env.evaluation.results import FIELD
from rook_env.games.partnership.observation import DEFAULT_OBS_LAYOUT as OL
from rook_env.games.partnership.observation import decode


# ------------------------------------------------------------------------------ stand-in agents
class Greedy:
    """A clearly-better-than-random stand-in: passes whenever it may (minimum bid when forced),
    discards low non-counters, names its longest colour, plays its highest legal card."""

    name = "greedy"

    def __init__(self, seed=None):
        pass

    def reset(self):
        pass

    def act(self, obs, info=None):
        legal = [int(a) for a in np.flatnonzero(obs["action_mask"])]
        if L.PASS in legal:
            return L.PASS
        bids = [a for a in legal if L.BID0 <= a < L.TRUMP0]
        if bids:
            return min(bids)
        hand = np.flatnonzero(obs["observation"][OL.HAND:OL.HAND + L.n_cards])
        if any(L.TRUMP0 <= a < L.REDEAL for a in legal):
            counts = [sum(1 for c in hand if L.card_colour[c] == col) for col in range(4)]
            return L.TRUMP0 + int(np.argmax(counts))
        cards = [a for a in legal if a < L.n_cards]

        def power(c):
            return 1000 if c == L.rook else rank_power(L.card_rank[c])

        if obs["observation"][OL.PHASE + 1] > 0.5:  # discarding
            return min(cards, key=lambda c: (L.card_points[c] > 0, power(c)))
        return max(cards, key=power)


class Illegal:
    """Always answers with an action outside its mask."""

    name = "illegal"

    def __init__(self, seed=None):
        self.calls = 0

    def reset(self):
        pass

    def act(self, obs, info=None):
        self.calls += 1
        return int(np.flatnonzero(obs["action_mask"] == 0)[0])


def other_random(seed):
    """RandomAgent on a different seed stream than the 'random' spec."""
    return RandomAgent(seed + 12345)


def _strip(d):
    return {k: v for k, v in d.items() if k not in ("elapsed_s", "deals_per_s", "hands_per_s", "workers")}


# ------------------------------------------------------------------------------ statistics
def test_wilson_hand_computed():
    # 5/10: centre 0.5, half = 1.96/1.38415 * sqrt(0.025 + 0.009604) = 0.26341
    lo, hi = evaluation.wilson_interval(5, 10)
    assert lo == pytest.approx(0.23659, abs=1e-5) and hi == pytest.approx(0.76341, abs=1e-5)
    # 0/10: upper = (0.19207 + 0.19207) / 1.38415 = 0.27753
    lo, hi = evaluation.wilson_interval(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.27753, abs=1e-5)
    lo, hi = evaluation.wilson_interval(10, 10)
    assert lo == pytest.approx(0.72247, abs=1e-5) and hi == 1.0
    assert all(math.isnan(x) for x in evaluation.wilson_interval(0, 0))
    with pytest.raises(ValueError):
        evaluation.wilson_interval(3, 2)


def test_bootstrap_hand_computed_and_normal_limit():
    assert evaluation.bootstrap_mean_ci([7.0, 7.0, 7.0]) == (7.0, 7.0)
    assert evaluation.bootstrap_mean_ci([3.0]) == (3.0, 3.0)
    assert all(math.isnan(x) for x in evaluation.bootstrap_mean_ci([]))
    # Two values 0 and 1: resampled means are 0, 0.5, 1 with probabilities 1/4, 1/2, 1/4,
    # so the 2.5% and 97.5% quantiles are 0 and 1.
    assert evaluation.bootstrap_mean_ci([0.0, 1.0], n_boot=4000) == (0.0, 1.0)
    # Large samples: the percentile interval approaches mean +- 1.96 sd / sqrt(n).
    x = np.random.default_rng(1).normal(10.0, 4.0, 2000)
    lo, hi = evaluation.bootstrap_mean_ci(x, n_boot=3000, seed=3)
    half = 1.959964 * x.std(ddof=1) / math.sqrt(x.size)
    assert lo == pytest.approx(x.mean() - half, abs=0.1 * half)
    assert hi == pytest.approx(x.mean() + half, abs=0.1 * half)
    assert evaluation.bootstrap_mean_ci(x, seed=5) == evaluation.bootstrap_mean_ci(x, seed=5)


def test_bradley_terry_and_elo_hand_computed():
    # Two players, 3 wins to 1: p = 3/4, Elo difference 400 log10(3) = 190.85.
    elo = evaluation.elo_ratings([[0, 3], [1, 0]], prior=0)
    assert elo[0] - elo[1] == pytest.approx(400 * math.log10(3), abs=1e-6)
    assert elo.mean() == pytest.approx(1500)
    # Three players whose results match strengths 4 : 2 : 1 exactly (A-B 2 of 3, B-C 2 of 3,
    # A-C 4 of 5) are fitted exactly: differences 400 log10 2 = 120.41 and 240.82.
    wins = [[0, 2, 4], [1, 0, 2], [1, 1, 0]]
    p = evaluation.bradley_terry(wins)
    assert p / p[2] == pytest.approx([4, 2, 1], rel=1e-8)
    elo = evaluation.elo_ratings(wins, prior=0, anchor=2, base=1000)
    assert elo == pytest.approx([1000 + 800 * math.log10(2), 1000 + 400 * math.log10(2), 1000], abs=1e-6)
    # A player who never won needs a prior; with it, the ratings stay finite and ordered.
    with pytest.raises(ValueError):
        evaluation.bradley_terry([[0, 5], [0, 0]])
    elo = evaluation.elo_ratings([[0, 5], [0, 0]], prior=1.0)  # 5.5 : 0.5 -> 400 log10(11)
    assert elo[0] - elo[1] == pytest.approx(400 * math.log10(11), abs=1e-6)


def test_games_from_stream_follows_the_end_rule():
    # 100/20, 250/-65, 310/-5: A wins after the third hand; the fourth hand starts a new game.
    winners, pending = evaluation.games_from_stream([(100, 20), (150, -85), (60, 60), (10, 0)])
    assert winners == [0] and pending == 1
    # Equal totals at or over the target: play another hand.
    assert evaluation.games_from_stream([(300, 300)]) == ([], 1)
    assert evaluation.games_from_stream([(300, 300), (0, 5)]) == ([1], 0)
    # Both over the target: the higher total wins (345 vs 305).
    assert evaluation.games_from_stream([(200, 200), (145, 105)]) == ([0], 0)
    # Negative totals and a custom target.
    assert evaluation.games_from_stream([(-120, 40), (-100, 30), (0, 30)], target=100) == ([1], 0)


def test_team_specs():
    t = parse_team("heuristic+random")
    assert t.members == ("heuristic", "random") and t.name == "heuristic+random"
    assert parse_team("random").members == ("random", "random")
    assert parse_team(Greedy).name == "greedy"
    assert parse_team((Greedy, "random")).name == "greedy+random"
    for bad in ["a+b+c", "+random", "", 5]:
        with pytest.raises(ValueError):
            parse_team(bad)


def test_make_deal_is_a_rules_deal_and_deterministic():
    opts, env_seed = evaluation.make_deal(3, 7)
    assert [len(h) for h in opts["hands"]] == [9, 9, 9, 9] and len(opts["nest"]) == 5
    assert sorted(sum(opts["hands"], []) + opts["nest"]) == list(range(41))
    assert opts["dealer"] == 7 % 4
    assert evaluation.make_deal(3, 7) == (opts, env_seed)
    assert evaluation.make_deal(3, 8)[0]["hands"] != opts["hands"]
    full, _ = evaluation.make_deal(3, 7, {"deck": "full"})
    assert [len(h) for h in full["hands"]] == [13] * 4


# ------------------------------------------------------------------------------ matches
def test_identical_teams_cancel_exactly_per_deal():
    # Same spec on both sides + per-seat seeds shared by both seatings (common random numbers):
    # each seating replays the other with the teams exchanged, so every deal pair sums to 0.
    res = evaluation.play_match("random", "random", deals=40, seed=1)
    assert np.all(res.pair_values == 0) and res.mean == 0 and res.ci == (0.0, 0.0)
    assert res.pair_wins == {"A": 0, "B": 0, "tied": 40}
    assert res.teams["A"].to_dict() == res.teams["B"].to_dict()
    assert res.illegal == {"A": 0, "B": 0} and res.hands == 80


def test_independent_random_teams_are_near_zero():
    res = evaluation.play_match("random", other_random, deals=150, seed=2)
    lo, hi = res.ci
    assert lo < 0 < hi
    assert abs(res.mean) < 15
    assert np.any(res.pair_values != 0)  # not trivially cancelled


def test_independent_seeds_do_not_cancel():
    res = evaluation.play_match("random", "random", deals=100, seed=1, common_seeds=False)
    assert np.any(res.pair_values != 0)
    lo, hi = res.ci
    assert lo < 0 < hi and res.to_dict()["common_seeds"] is False


def test_swapping_teams_negates_every_deal_pair():
    ab = evaluation.play_match(Greedy, "random", deals=30, seed=4)
    ba = evaluation.play_match("random", Greedy, deals=30, seed=4)
    assert np.array_equal(ab.pair_values, -ba.pair_values)
    assert ab.games["won_a"] == ba.games["won_b"]
    assert ab.mean > 50  # and the stand-in is clearly stronger


def test_match_statistics_are_consistent():
    res = evaluation.play_match(Greedy, "random", deals=30, seed=5)
    a, b = res.teams["A"], res.teams["B"]
    assert a.contracts + b.contracts == res.hands == 60
    assert a.made + a.sets == a.contracts and b.made + b.sets == b.contracts
    rec = res.records
    F = FIELD
    # Scoring identity (RULES.md): the defenders score their counters; the bidders their
    # counters if made, else minus the bid.
    for r in rec:
        bid_a = r[F["a_bid"]] == 1
        bidders, defenders = ("a", "b") if bid_a else ("b", "a")
        assert r[F[f"score_{defenders}"]] == r[F[f"counters_{defenders}"]]
        expect = r[F[f"counters_{bidders}"]] if r[F["made"]] else -r[F["bid"]]
        assert r[F[f"score_{bidders}"]] == expect
        assert r[F["counters_a"]] + r[F["counters_b"]] == 120
    diff = rec[:, F["score_a"]] - rec[:, F["score_b"]]
    assert res.mean == pytest.approx(diff.mean())
    assert res.games["played"] == res.games["won_a"] + res.games["won_b"] > 0


def test_deterministic_and_workers_do_not_change_results():
    kw = dict(deals=40, seed=9, block_size=10)
    one = evaluation.play_match((Greedy, "random"), other_random, **kw)
    again = evaluation.play_match((Greedy, "random"), other_random, **kw)
    two = evaluation.play_match((Greedy, "random"), other_random, workers=2, **kw)
    assert _strip(one.to_dict()) == _strip(again.to_dict()) == _strip(two.to_dict())
    assert np.array_equal(one.records, two.records)
    assert two.workers == 2
    # A prefix of the deal stream does not depend on how many deals follow.
    short = evaluation.play_match((Greedy, "random"), other_random, deals=20, seed=9, block_size=10)
    assert np.array_equal(short.pair_values, one.pair_values[:20])


def test_not_duplicate_plays_each_deal_once():
    res = evaluation.play_match(Greedy, "random", deals=20, seed=1, duplicate=False)
    assert res.hands == 20 and set(res.records[:, FIELD["seating"]]) == {0, 1}


def test_illegal_actions_are_counted_and_replaced():
    res = evaluation.play_match(Illegal, "random", deals=5, seed=0)
    assert res.illegal["A"] > 0 and res.illegal["B"] == 0
    assert res.hands == 10  # every hand still finished (lowest legal action substituted)
    with pytest.raises(evaluation.IllegalActionError, match="illegal action"):
        evaluation.play_match(Illegal, "random", deals=2, seed=0, strict=True)


def test_flags_pass_through_and_are_checked():
    res = evaluation.play_match("random", other_random, deals=5, seed=0, flags={"deck": "full"})
    assert res.teams["A"].mean_counters + res.teams["B"].mean_counters == pytest.approx(180)
    with pytest.raises(ValueError, match="deck"):
        evaluation.play_match("random", "random", deals=2, flags={"deck": "huge"})
    with pytest.raises(ValueError, match="episode"):
        evaluation.play_match("random", "random", deals=2, flags={"episode": "game"})
    with pytest.raises(ValueError, match="unknown agent spec"):
        evaluation.play_match("nonsense", "random", deals=2)
    with pytest.raises(ValueError):
        evaluation.play_match("random", "random", deals=0)


def test_heuristic_agent_plays_legally():
    res = evaluation.play_match("heuristic", "random", deals=10, seed=0)
    assert res.illegal_total == 0


# ------------------------------------------------------------------------------ round robin
def test_round_robin_ranks_the_stronger_stand_in_first():
    rr = evaluation.round_robin(["random", (Greedy, "random"), Greedy], deals=30, seed=0)
    assert rr.names == ["random", "greedy+random", "greedy"]
    ranked = [rr.names[i] for i in rr.ranking()]
    assert ranked == ["greedy", "greedy+random", "random"]
    assert rr.elo[2] > rr.elo[0] + 100
    assert rr.points[2, 0] == -rr.points[0, 2] > 0
    assert rr.wins[0, 2] + rr.wins[2, 0] == 30
    d = rr.to_dict()
    assert [r["name"] for r in d["ratings"]] == ranked and len(d["matches"]) == 3
    json.dumps(d)


# ------------------------------------------------------------------------------ command line
def test_cli_writes_json_and_png(tmp_path, capsys):
    js, png = tmp_path / "out.json", tmp_path / "out.png"
    rc = evaluate.main(["random", "random+random", "--deals", "20", "--seed", "3", "--json", str(js),
                        "--plot", str(png), "--no-progress"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "mean points per deal" in out and "illegal actions" in out
    data = json.loads(js.read_text())
    assert data["deals"] == 20 and data["mean_points_per_deal"] == 0 and len(data["per_deal"]) == 20
    assert data["illegal_actions"] == {"A": 0, "B": 0}
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_round_robin(tmp_path, capsys):
    js, png = tmp_path / "rr.json", tmp_path / "rr.png"
    rc = evaluate.main(["--round-robin", "random", "random+random", "--deals", "5", "--json", str(js),
                        "--plot", str(png), "--no-progress", "--flag", "target_score=200"])
    assert rc == 0
    assert "Round robin" in capsys.readouterr().out
    assert len(json.loads(js.read_text())["ratings"]) == 2
    assert png.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["random"], "two team specs"),
        (["random", "random", "--round-robin", "a", "b"], "not both"),
        (["--round-robin", "random"], "at least two"),
        (["random", "bogus"], "unknown agent spec"),
        (["random", "random", "--flag", "deck"], "NAME=VALUE"),
        (["random", "random", "--flag", "deck=huge"], "deck"),
        (["random", "random", "--flag", "colour=red"], "unknown rule flag"),
        (["random", "random", "--flag", "episode=game"], "episode"),
        (["random", "random", "--deals", "0"], "--deals"),
        (["random", "random", "--json", os.devnull + "/x.json"], "cannot create the folder"),
        (["random", "random", "--json", os.path.dirname(os.path.abspath(__file__))], "is a directory"),
        (["random", "a+b+c"], "bad team spec"),
    ],
)
def test_cli_bad_input_gives_clear_errors(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        evaluate.main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


# ------------------------------------------------------------------------------ fallbacks, ratings, output
class CountingFallbacks:
    """Random play that reports a 'fallback' on every first decision of a hand (an agent's own
    counter, as the heuristic keeps one); ``reset`` does not clear it."""

    name = "counting"

    def __init__(self, seed=None):
        self.inner = RandomAgent(seed)
        self.fallbacks = 0
        self.fresh = True

    def reset(self):
        self.fresh = True

    def act(self, obs, info=None):
        if self.fresh:
            self.fallbacks += 1
            self.fresh = False
        return self.inner.act(obs, info)


def test_fallbacks_are_summed_per_team_beside_illegal_actions():
    res = evaluation.play_match(CountingFallbacks, "random", deals=6, seed=0)
    # 2 seats of team A, each resets once per hand and counts one fallback: 2 per hand, 12 hands
    assert res.fallbacks == {"A": 24, "B": 0}
    d = res.to_dict()
    assert d["fallbacks"] == {"A": 24, "B": 0} and d["illegal_actions"] == {"A": 0, "B": 0}
    head = match_tables(res)[0]
    assert ["fallbacks: no rule found a move (A / B)", "24 / 0"] in head.rows


def test_rating_intervals_are_reproducible_and_cover_the_ratings():
    rr = evaluation.round_robin(["random", Greedy, other_random], deals=30, seed=0, rating_boot=200)
    again = evaluation.round_robin(["random", Greedy, other_random], deals=30, seed=0, rating_boot=200)
    assert np.array_equal(rr.elo_ci, again.elo_ci)
    other = evaluation.rating_intervals(rr.matches, 3, n_boot=200, seed=123)
    assert not np.array_equal(rr.elo_ci, other)
    assert np.all(rr.elo_ci[:, 0] <= rr.elo + 1e-6) and np.all(rr.elo <= rr.elo_ci[:, 1] + 1e-6)
    assert np.all(rr.elo_ci[:, 0] <= rr.elo_ci[:, 1])
    greedy = rr.names.index("greedy")
    assert rr.elo_ci[greedy, 0] > max(rr.elo_ci[i, 1] for i in range(3) if i != greedy)  # clearly separated
    row = next(r for r in rr.to_dict()["ratings"] if r["name"] == "greedy")
    assert row["elo_ci"] == pytest.approx(list(rr.elo_ci[greedy]))


def _fake_round_robin(values_ab: np.ndarray) -> evaluation.RoundRobinResult:
    """A two-team round robin whose single match has the given per-deal values (A - B)."""
    m = evaluation.play_match("random", other_random, deals=len(values_ab), seed=0)
    m.pair_values = np.asarray(values_ab, dtype=np.float64)
    m.mean = float(m.pair_values.mean())
    wins = np.array([[0, (values_ab > 0).sum()], [(values_ab < 0).sum(), 0]], dtype=float)
    points = np.array([[0, m.mean], [-m.mean, 0]])
    elo = evaluation.elo_ratings(wins)
    ci = evaluation.rating_intervals({(0, 1): m}, 2, n_boot=50)
    return evaluation.RoundRobinResult(["steady", "swingy"], {(0, 1): m}, wins, points, elo, 1.0, ci)


def test_order_note_explains_when_elo_and_mean_points_disagree():
    # 'steady' wins 6 of 10 deals by 10; 'swingy' wins 4 by 100: Elo ranks steady first, points swingy
    rr = _fake_round_robin(np.array([10] * 6 + [-100] * 4))
    assert rr.names[rr.ranking()[0]] == "steady" and rr.points[1, 0] > 0
    note = rr.order_note()
    assert note and "Elo ranks steady above swingy" in note and "margins" in note
    assert rr.to_dict()["order_note"] == note
    assert any(n.startswith("Note: Elo ranks") for n in round_robin_tables(rr)[0].notes)
    agree = _fake_round_robin(np.array([10] * 6 + [-5] * 4))
    assert agree.order_note() is None and agree.to_dict()["order_note"] is None


def test_table_titles_fit_on_one_line_at_80_columns():
    pytest.importorskip("rich")  # the [tools] extra; the plain-text tables are tested below
    res = evaluation.play_match("heuristic+random", "random", deals=4, seed=0)
    rr = evaluation.round_robin(["random", "heuristic+random", Greedy], deals=4, seed=0, rating_boot=20)
    for tables in (match_tables(res), round_robin_tables(rr)):
        buf = io.StringIO()
        print_tables(tables, file=buf, width=80)
        lines = buf.getvalue().splitlines()
        assert max(len(line) for line in lines) <= 80
        for t in tables:
            assert any(line.strip() == t.title for line in lines), (t.title, lines[:3])


def test_plain_text_tables_without_rich(tmp_path):
    """With rich, tqdm and matplotlib unavailable, the command line prints plain tables; --plot
    says which extra to install."""
    block = "import sys; [sys.modules.__setitem__(m, None) for m in ('rich', 'tqdm', 'matplotlib')]; "
    run = "from rook_env.cli.evaluate import main; sys.exit(main(sys.argv[1:]))"
    js = tmp_path / "runs" / "eval" / "x.json"
    proc = subprocess.run([sys.executable, "-c", block + run, "random", "random", "--deals", "3", "--json", str(js)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "duplicate match: A = random vs B = random" in proc.stdout
    assert "illegal actions (A / B)" in proc.stdout and "pip install -e \".[tools]\"" in proc.stderr  # no progress bar
    assert json.loads(js.read_text())["deals"] == 3  # the folder was created
    proc = subprocess.run([sys.executable, "-c", block + run, "random", "random", "--plot", str(tmp_path / "x.png")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "--plot needs matplotlib" in proc.stderr and ".[tools]" in proc.stderr


# ------------------------------------------------------------------------------ replays of evaluated hands
def _html_hands(path):
    """The hands embedded in a replay page (its JSON data element)."""
    text = path.read_text(encoding="utf-8")
    data = re.search(r'<script id="data" type="application/json">(.*?)</script>', text, re.S).group(1)
    return text, json.loads(data.replace("<\\/", "</"))


@pytest.mark.parametrize("duplicate", [True, False])
def test_replays_are_the_hands_the_match_counted(duplicate):
    """Random agents carry their generator from hand to hand: the replay must rebuild the block's
    agents and replay the earlier deals to reproduce the very hands of the match."""
    res = evaluation.play_match("heuristic", "random", deals=9, seed=4, block_size=4, duplicate=duplicate)
    rec = res.records
    swing = np.abs(rec[:, FIELD["score_a"]] - rec[:, FIELD["score_b"]])
    rows = select_rows(rec, 4, "swing")
    assert [int(swing[i]) for i in rows] == sorted(swing.tolist(), reverse=True)[:4]
    hands, notes = match_replays(res, "heuristic", "random", 4, by="swing")
    assert notes == [] and len(hands) == 4
    for i, hand in zip(rows, hands):
        deal, seating = int(rec[i, FIELD["deal"]]), int(rec[i, FIELD["seating"]])
        options, env_seed = evaluation.make_deal(4, deal)
        assert hand.seed == env_seed and hand.options["hands"] == options["hands"]
        hs = hand.result["hand_scores"]
        assert (hs[seating], hs[1 - seating]) == (rec[i, FIELD["score_a"]], rec[i, FIELD["score_b"]])
        assert hand.agents[0].startswith("A: " if seating == 0 else "B: ")
    sets = select_rows(rec, 100, "set")
    assert sets and all(rec[i, FIELD["made"]] == 0 for i in sets)
    first = select_rows(rec, 3, "order")
    assert [(int(rec[i, FIELD["deal"]]), int(rec[i, FIELD["seating"]])) for i in first] == (
        [(0, 0), (0, 1), (1, 0)] if duplicate else [(0, 0), (1, 1), (2, 0)])


def test_replays_notice_an_agent_that_is_not_reproducible():
    class Unseeded:  # ignores its seed: the replay of a hand cannot match
        name = "unseeded"
        rng = np.random.default_rng(0)

        def __init__(self, seed=None):
            pass

        def act(self, obs, info=None):
            legal = np.flatnonzero(obs["action_mask"])
            return int(legal[Unseeded.rng.integers(legal.size)])

    res = evaluation.play_match(Unseeded, "random", deals=3, seed=0)
    _, notes = match_replays(res, Unseeded, "random", 3)
    assert notes and "not reproducible" in notes[0]


def test_cli_replays_write_a_self_contained_page(tmp_path, capsys):
    out = tmp_path / "sub" / "swings.html"
    rc = evaluate.main(["heuristic", "random", "--deals", "6", "--seed", "2", "--no-progress", "--replays", "3",
                        "--replays-out", str(out)])
    assert rc == 0
    assert f"wrote 3 hand(s) to {out}" in capsys.readouterr().out
    text, hands = _html_hands(out)
    assert len(hands) == 3 and all(h["result"] is not None and h["steps"] for h in hands)
    assert [h["swing"] for h in hands] == sorted((h["swing"] for h in hands), reverse=True)
    assert not re.search(r"(https?:)?//[a-z0-9.-]+\.[a-z]{2,}/", text, re.I)  # no network address
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=", text, re.I)  # nothing loaded from outside
    assert "A = heuristic vs B = random" in text
    # --replays-by set keeps only hands whose bidders were set.
    rc = evaluate.main(["heuristic", "random", "--deals", "6", "--seed", "2", "--no-progress", "--replays", "2",
                        "--replays-by", "set", "--replays-out", str(out)])
    assert rc == 0
    _, hands = _html_hands(out)
    assert hands and all(not h["result"]["made"] for h in hands)


@pytest.mark.parametrize("argv, message", [
    (["--round-robin", "random", "heuristic", "--replays", "2"], "not of a round robin"),
    (["random", "random", "--replays", "-1"], "--replays must be >= 0"),
    (["random", "random", "--replays", "1", "--replays-by", "best"], "invalid choice"),
])
def test_cli_replays_bad_input(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        evaluate.main(argv)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


class _ScoreSpy(RandomAgent):
    """Random play that writes down the game score its observation shows at the start of every hand."""

    seen: list[tuple[int, int]] = []

    def reset(self) -> None:
        self.first = True

    def act(self, observation, info=None):
        if self.first:
            self.first = False
            _ScoreSpy.seen.append(decode(observation["observation"]).scores)  # (my team, their team)
        return super().act(observation, info)


def test_game_scores_deal_every_hand_with_its_games_running_score():
    _ScoreSpy.seen = []
    res = evaluation.play_match(_ScoreSpy, "random", deals=40, seed=3, block_size=20, game_scores=True)
    rec = res.records
    assert res.game_scores and res.to_dict()["game_scores"] is True
    # expected: each (block, seating) stream starts at 0-0 and restarts after a won game (RULES.md game end)
    expected, finished = [], 0
    running: dict[tuple[int, int], list[int]] = {}
    for row in rec:
        key = (int(row[FIELD["deal"]]) // 20, int(row[FIELD["seating"]]))
        a, b = running.setdefault(key, [0, 0])
        expected += [(a, b), (a, b)]  # both members of A saw it
        a, b = a + int(row[FIELD["score_a"]]), b + int(row[FIELD["score_b"]])
        if max(a, b) >= 300 and a != b:
            a, b, finished = 0, 0, finished + 1
        running[key] = [a, b]
    assert _ScoreSpy.seen == expected
    assert any(s != (0, 0) for s in expected) and finished == res.games["played"] > 0
    # the default shows 0-0 to every hand, on the same cards and with the same results here (random play)
    _ScoreSpy.seen = []
    plain = evaluation.play_match(_ScoreSpy, "random", deals=40, seed=3, block_size=20)
    assert set(_ScoreSpy.seen) == {(0, 0)} and not plain.game_scores
    assert np.array_equal(plain.records, rec)


def test_game_scores_results_do_not_depend_on_workers():
    one = evaluation.play_match("heuristic", "random", deals=24, seed=5, block_size=6, game_scores=True)
    two = evaluation.play_match("heuristic", "random", deals=24, seed=5, block_size=6, game_scores=True, workers=2)
    assert _strip(one.to_dict()) == _strip(two.to_dict())


def test_game_scores_cannot_be_replayed(capsys):
    with pytest.raises(SystemExit):
        evaluate.main(["random", "random", "--deals", "2", "--game-scores", "--replays", "1"])
    assert "--game-scores" in capsys.readouterr().err

"""Call-your-partner hand replays: the recorder is faithful at 4, 5 and 6 seats, the partners stay
marked secret until a called card is played, rotation matches replay the very hands they counted
(``evaluate.py --game call_partner --replays N``), and the HTML page shows n seats (in a headless
browser when chromium is installed; its embedded data otherwise)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import numpy as np
import pytest

from rook_env.games import call_partner
from rook_env.agents import make_agent
from rook_env.cli import evaluate
from rook_env.evaluation import make_deal, play_rotation_match
from rook_env.games.call_partner.match import RF
from rook_env.evaluation.replays import rotation_replays, select_rotation_hands
from rook_env.cli.replay import main as replay_main
from rook_env.evaluation.replay import record_hand, write_html

FIELD = ["call_partner_heuristic", "random"]


def _agents(n: int, seed: int = 0):
    return [make_agent("call_partner_heuristic" if s == 0 else "random", seed=seed + s, game="call_partner", players=n)
            for s in range(n)]


@pytest.mark.parametrize("players", [4, 5, 6])
def test_record_hand_is_faithful(players):
    env = call_partner.raw_env(players=players)
    rec = record_hand(env, _agents(players), seed=7)
    L = env.layout
    assert rec.game == "call_partner" and rec.result is not None and rec.final["phase"] == "over"
    first = rec.steps[0]["state"]
    assert len(first["hands"]) == players and all(len(h) == L.hand_size for h in first["hands"])
    assert len(first["nest"]) == L.nest_size
    for step in rec.steps:
        assert step["name"] in [name for _, name in step["legal"]] and step["seat"] == step["state"]["current"]
        assert step["probs"] is None and step["value"] is None  # no network agent plays this game
    assert rec.result["called_names"] == [L.card_name(c) for c in rec.result["called"]]
    assert rec.swing == max(rec.result["hand_scores"]) - min(rec.result["hand_scores"])
    # Replaying the recorded decisions on a fresh table reaches the same result.
    e = call_partner.raw_env(players=players)
    e.reset(seed=7)
    for step in rec.steps:
        e.step(step["action"])
    assert e.game.is_over
    assert {k: v for k, v in rec.result.items() if k != "called_names"} == json.loads(json.dumps(e.game.hand_result))
    json.dumps(rec.to_dict())  # plain data
    assert f"called {' '.join(rec.result['called_names'])}" in rec.summary()


def test_partners_are_secret_until_a_called_card_is_played():
    env = call_partner.raw_env(players=5)
    for seed in range(20):  # a hand whose partner plays the called card
        rec = record_hand(env, _agents(5), seed=seed)
        if rec.result["partners"]:
            break
    partner = rec.result["partners"][0]
    called = rec.result["called_names"][0]
    reveal = next(i for i, s in enumerate(rec.steps) if s["phase"] == "play" and s["name"] == called)
    for i, step in enumerate(rec.steps):
        st = step["state"]
        if st["phase"] == "play" and i <= reveal:  # the state before the decision: not yet played
            assert st["secret_partners"] == [partner] and st["partners"] == [] and "secret" in st["partners_text"]
        elif i > reveal:
            assert st["partners"] == [partner] and st["secret_partners"] == []
    assert rec.final["partners"] == [partner]


class _Explaining:
    """Plays the lowest legal action and reports uniform probabilities over the legal ones."""

    def act(self, observation, info=None) -> int:
        return int(np.flatnonzero(observation["action_mask"])[0])

    def explain(self, observation):
        legal = np.flatnonzero(observation["action_mask"])
        return {"probs": np.where(observation["action_mask"] > 0, 1.0 / legal.size, 0.0), "value": -2.0}


def test_explaining_agents_are_recorded_at_any_seat_count():
    rec = record_hand(call_partner.raw_env(players=6), [*_agents(6)[:5], _Explaining()], seed=2)
    mine = [s for s in rec.steps if s["seat"] == 5]
    assert mine and all(len(s["probs"]) == len(s["legal"]) and s["value"] == -2.0 for s in mine)
    assert all(abs(sum(s["probs"]) - 1) < 1e-3 for s in mine)


def test_record_hand_rejects_wrong_agent_count():
    with pytest.raises(ValueError, match="5 agents"):
        record_hand(call_partner.raw_env(players=5), _agents(4), seed=0)
    with pytest.raises(ValueError, match="4 labels"):
        record_hand(call_partner.raw_env(players=4), _agents(4), seed=0, labels=["a"])


# ------------------------------------------------------------------------------ rotation matches
def test_rotation_replays_are_the_hands_the_match_counted():
    """Random agents carry their generator from hand to hand: the replay rebuilds the block's agents
    of that rotation and replays the earlier deals to reproduce the very hands of the match."""
    res = play_rotation_match(FIELD, players=4, deals=7, seed=5, block_size=3)
    rec = res.records
    chosen = select_rotation_hands(rec, 5, "swing")
    swings = []
    for deal, r in chosen:
        scores = rec[(rec[:, RF["deal"]] == deal) & (rec[:, RF["rotation"]] == r), RF["score"]]
        swings.append(int(scores.max() - scores.min()))
    assert swings == sorted(swings, reverse=True)
    hands, notes = rotation_replays(res, FIELD, 5, by="swing")
    assert notes == [] and len(hands) == 5
    for (deal, r), hand in zip(chosen, hands):
        options, env_seed = make_deal(5, deal, {"game": "call_partner", "players": 4})
        assert hand.seed == env_seed and hand.options["hands"] == options["hands"]
        assert hand.swing == swings[chosen.index((deal, r))]
        assert hand.agents[(0 - r) % 4] == "call_partner_heuristic"  # agent 0 sits at seat -r
    for deal, r in select_rotation_hands(rec, 100, "set"):
        assert rec[(rec[:, RF["deal"]] == deal) & (rec[:, RF["rotation"]] == r), RF["made"]].max() == 0
    assert select_rotation_hands(rec, 5, "order") == [(0, 0), (0, 1), (0, 2), (0, 3), (1, 0)]
    with pytest.raises(ValueError, match="by='best'"):
        select_rotation_hands(rec, 1, "best")


def test_rotation_replays_notice_an_agent_that_is_not_reproducible():
    class Unseeded:  # ignores its seed: the replay of a hand cannot match
        name = "unseeded"
        rng = np.random.default_rng(0)

        def __init__(self, seed=None):
            pass

        def act(self, obs, info=None):
            legal = np.flatnonzero(obs["action_mask"])
            return int(legal[Unseeded.rng.integers(legal.size)])

    res = play_rotation_match([Unseeded, "random"], players=4, deals=3, seed=0)
    _, notes = rotation_replays(res, [Unseeded, "random"], 4)
    assert notes and "not reproducible" in notes[0]


def _html_hands(path):
    text = path.read_text(encoding="utf-8")
    data = re.search(r'<script id="data" type="application/json">(.*?)</script>', text, re.S).group(1)
    return text, json.loads(data.replace("<\\/", "</"))


def test_cli_evaluate_rotation_replays(tmp_path, capsys):
    out = tmp_path / "sub" / "cp.html"
    rc = evaluate.main(["--game", "call_partner", "--players", "5", *FIELD, "--deals", "4", "--seed", "1",
                        "--no-progress", "--replays", "3", "--replays-out", str(out)])
    assert rc == 0 and f"wrote 3 hand(s) to {out}" in capsys.readouterr().out
    text, hands = _html_hands(out)
    assert len(hands) == 3 and all(h["game"] == "call_partner" and len(h["steps"][0]["state"]["hands"]) == 5
                                   for h in hands)
    assert [h["swing"] for h in hands] == sorted((h["swing"] for h in hands), reverse=True)
    assert "Call-your-partner Rook replays (5 players)" in text
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=", text, re.I)  # nothing loaded from outside
    rc = evaluate.main(["--game", "call_partner", "--players", "4", *FIELD, "--deals", "4", "--seed", "1",
                        "--no-progress", "--replays", "2", "--replays-by", "set", "--replays-out", str(out)])
    assert rc == 0
    _, hands = _html_hands(out)
    assert hands and all(not h["result"]["made"] for h in hands)


@pytest.mark.parametrize("argv, message", [
    (["--game", "call_partner", "--players", "5", "--agents", "random", "random", "--hands", "1"], "one spec per seat (5)"),
    (["--players", "5", "--hands", "1"], "--players is for --game call_partner"),
    (["--game", "call_partner", "--flag", "players=7", "--hands", "1"], "players"),
])
def test_replay_cli_bad_input(argv, message, capsys, tmp_path):
    with pytest.raises(SystemExit) as exc:
        replay_main([*argv, "--out", str(tmp_path / "x.html")])
    assert exc.value.code == 2 and message in capsys.readouterr().err


# ------------------------------------------------------------------------------ the page
def _page(tmp_path, players=6):
    env = call_partner.raw_env(players=players)
    recs = [record_hand(env, _agents(players, seed), seed=seed) for seed in range(2)]
    return recs, write_html(recs, str(tmp_path / "cp.html"), title="cp test")


def test_html_holds_every_seat(tmp_path, capsys):
    recs, path = _page(tmp_path)
    text = open(path, encoding="utf-8").read()
    data = json.loads(re.search(r'<script id="data" type="application/json">(.*?)</script>', text, re.S).group(1))
    for rec, d in zip(recs, data):
        assert d["game"] == "call_partner" and [s["name"] for s in d["steps"]] == [s["name"] for s in rec.steps]
        assert all(len(s["state"]["hands"]) == 6 for s in d["steps"]) and d["summary"] == rec.summary()
    assert 'rec.game === "call_partner"' in text and 'id="facts"' in text  # the n-seat layout is in the page
    assert replay_main(["--game", "call_partner", "--players", "4", "--hands", "2", "--seed", "1",
                        "--out", str(tmp_path / "cli.html")]) == 0
    assert "wrote 2 of 2 hands" in capsys.readouterr().out


@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium is not installed (see README's manual check)")
def test_html_renders_in_a_browser(tmp_path):
    recs, path = _page(tmp_path)
    rec = recs[0]
    # A decision in the play phase before the called card is played: the partner shows as secret.
    k = next(i for i, s in enumerate(rec.steps) if s["phase"] == "play")
    args = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run"]
    url = f"file://{path}#hand=1&step={k + 1}"
    dom = subprocess.run(args + ["--dump-dom", url], capture_output=True, text=True, timeout=120).stdout
    s = rec.steps[k]
    for seat in range(6):  # the script ran: six seats with their agents
        assert f"P{seat} · {rec.agents[seat]}" in dom
    assert f"<u>{s['name']}</u>" in dom and f"decision {k + 1} of {len(rec.steps)}" in dom
    for _, alt in s["legal"]:
        assert f"<td>{alt}" in dom
    assert "The table" in dom and "called:" in dom
    if s["state"]["secret_partners"]:
        assert "secret partner" in dom
    shot = tmp_path / "shot.png"
    subprocess.run(args + [f"--screenshot={shot}", "--window-size=1400,820", url], capture_output=True, timeout=120)
    assert shot.stat().st_size > 20_000  # a drawn page, not a blank one

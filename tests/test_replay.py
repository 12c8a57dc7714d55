"""Hand replays of every game: the recorder is faithful (its decisions replay to the same hand, at 4, 5 and 6
seats in call-your-partner Rook), explanations line up with the legal alternatives, hand selection, a
self-contained HTML file that a browser renders (n seats, partners secret until a called card is played);
rotation matches replay the very hands they counted (``evaluate.py --game call_partner --replays N``)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import numpy as np
import pytest
from helpers import over_games, per_game, unseeded_agent, usage_error

import rook_env
from rook_env.agents import make_agent
from rook_env.cli import evaluate
from rook_env.cli.replay import main
from rook_env.evaluation import make_deal, play_rotation_match
from rook_env.evaluation.replay import HandRecord, record_hand, select_hands, write_html
from rook_env.evaluation.replays import rotation_replays, select_rotation_hands
from rook_env.games import call_partner
from rook_env.games.call_partner.match import RF
from rook_env.games.partnership.rules import OVER

FIELD = ["call_partner_heuristic", "random"]


def _agents(seed: int = 0):
    return [make_agent("heuristic" if s % 2 == 0 else "random", seed=seed + s) for s in range(4)]


def _cp_agents(n: int, seed: int = 0):
    return [make_agent("call_partner_heuristic" if s == 0 else "random", seed=seed + s, game="call_partner", players=n)
            for s in range(n)]


# Each game's tables, the agents at them, the seed and labels of a recorded hand.
RECORDED = per_game({
    "partnership": [({}, _agents, 11, ["h", "r", "h", "r"])],
    "call_partner": [({"players": n}, lambda n=n: _cp_agents(n), 7, None) for n in (4, 5, 6)],
})


def _partnership_result(rec, e):
    assert e.game.phase == OVER and e.game.hand_result == rec.result


def _call_partner_result(rec, e):
    L = e.layout
    assert rec.result["called_names"] == [L.card_name(c) for c in rec.result["called"]]
    assert {k: v for k, v in rec.result.items() if k != "called_names"} == json.loads(json.dumps(e.game.hand_result))
    assert f"called {' '.join(rec.result['called_names'])}" in rec.summary()


RESULT_CHECKS = per_game({"partnership": _partnership_result, "call_partner": _call_partner_result})


@pytest.mark.parametrize("game, flags, agents, seed, labels", over_games(RECORDED, ids=lambda c: str(c[0])))
def test_record_hand_is_faithful(game, flags, agents, seed, labels):
    env = rook_env.raw_env(game=game, **flags)
    rec = record_hand(env, agents(), seed=seed, labels=labels)
    L = env.layout
    assert rec.game == game and rec.result is not None and rec.final["phase"] == "over" and rec.ended == "hand over"
    first = rec.steps[0]["state"]
    assert [len(h) for h in first["hands"]] == [L.hand_size] * len(env.possible_agents)
    assert len(first["nest"]) == L.nest_size
    for step in rec.steps:
        assert step["name"] in [name for _, name in step["legal"]]
        assert step["seat"] == step["state"]["current"]
        # rule-based and random agents do not explain themselves
        assert step["probs"] is None and step["value"] is None
    # Replaying the recorded decisions on a fresh table reaches the same result.
    e = rook_env.raw_env(game=game, **flags)
    e.reset(seed=seed)
    for step in rec.steps:
        e.step(step["action"])
    assert e.game.is_over
    RESULT_CHECKS[game](rec, e)
    assert rec.swing == max(rec.result["hand_scores"]) - min(rec.result["hand_scores"])
    json.dumps(rec.to_dict())  # plain data


@pytest.mark.partnership
def test_record_hand_fixed_deal_and_game_episode():
    from rook_env.evaluation import make_deal

    options, env_seed = make_deal(5, 0)
    env = rook_env.raw_env(episode="game")
    rec = record_hand(env, _agents(), seed=env_seed, options=options)
    hands = rec.steps[0]["state"]["hands"]
    L = env.layout
    assert [sorted(L.parse_card(c) for c in h) for h in hands] == [sorted(h) for h in options["hands"]]
    assert rec.result is not None and rec.final["phase"] == "over"  # the first hand of the game
    assert env.game.hands_played == 1


class _ExplainingArray:
    """Plays the lowest legal action and reports uniform probabilities over the legal ones, an array over every
    action (an agent without a reset method)."""

    value = -2.0

    def act(self, observation, info=None) -> int:
        return int(np.flatnonzero(observation["action_mask"])[0])

    def explain(self, observation):
        legal = np.flatnonzero(observation["action_mask"])
        return {"probs": np.where(observation["action_mask"] > 0, 1.0 / legal.size, 0.0), "value": self.value}


class _Explaining(_ExplainingArray):
    """The same, its probabilities by action id."""

    value = 1.5

    def reset(self) -> None:
        pass

    def explain(self, observation):
        legal = np.flatnonzero(observation["action_mask"])
        return {"probs": {int(a): 1.0 / legal.size for a in legal}, "value": self.value}


# A table of each game, the seat the explaining agent takes, its other players and the seed.
EXPLAINED = per_game({
    "partnership": [({}, 0, _agents, 3)],
    "call_partner": [({"players": 6}, 5, lambda: _cp_agents(6), 2)],
})


@pytest.mark.parametrize("explaining", [_Explaining, _ExplainingArray])
@pytest.mark.parametrize("game, flags, seat, others, seed", over_games(EXPLAINED, ids=lambda c: str(c[0])))
def test_explain_protocol_lines_up_with_legal_actions(game, flags, seat, others, seed, explaining):
    agents = others()
    agents[seat] = explaining()
    rec = record_hand(rook_env.raw_env(game=game, **flags), agents, seed=seed)
    mine = [s for s in rec.steps if s["seat"] == seat]
    assert mine
    for s in mine:
        assert len(s["probs"]) == len(s["legal"]) and abs(sum(s["probs"]) - 1) < 1e-3
        assert s["value"] == explaining.value
    assert all(s["probs"] is None for s in rec.steps if s["seat"] != seat)


@pytest.mark.partnership
def test_ppo_agent_probabilities_and_value():
    pytest.importorskip("torch")
    ppo = make_agent("ppo", seed=0)
    rec = record_hand(rook_env.raw_env(), [ppo, *_agents()[1:]], seed=4)
    mine = [s for s in rec.steps if s["seat"] == 0]
    for s in mine:
        assert abs(sum(s["probs"]) - 1) < 1e-3
        assert s["value"] is not None and "score points" in s["value_note"]
        # The greedy agent plays its most probable alternative.
        best = s["legal"][int(np.argmax(s["probs"]))][0]
        assert s["action"] == best or max(s["probs"]) == sorted(s["probs"])[-2]


@pytest.mark.partnership
def test_checked_env_illegal_action_ends_the_record():
    class Bad:
        def act(self, observation, info=None):
            return int(np.flatnonzero(observation["action_mask"] == 0)[0])  # an illegal action

    with pytest.warns(UserWarning, match="illegal action"):
        rec = record_hand(rook_env.env(), [Bad(), *_agents()[1:]], seed=0)
    assert rec.result is None and "early" in rec.ended and len(rec.steps) == 1


SEATED = per_game({"partnership": [({}, _agents)],
                   "call_partner": [({"players": n}, lambda n=n: _cp_agents(n)) for n in (4, 5)]})


@pytest.mark.parametrize("game, flags, agents", over_games(SEATED, ids=lambda c: str(c[0])))
def test_record_hand_rejects_wrong_agent_count(game, flags, agents):
    n = len(agents())
    with pytest.raises(ValueError, match=f"{n} agents"):
        record_hand(rook_env.raw_env(game=game, **flags), agents()[:-1], seed=0)
    with pytest.raises(ValueError, match=f"{n} labels"):
        record_hand(rook_env.raw_env(game=game, **flags), agents(), seed=0, labels=["a"])


def _fake(swing: int, made: bool, seed: int) -> HandRecord:
    r = HandRecord(agents=["a"] * 4, flags={}, seed=seed, options=None)
    r.result = {"hand_scores": [swing, 0], "made": made}
    return r


@pytest.mark.partnership
def test_select_hands():
    recs = [_fake(10, True, 0), _fake(90, False, 1), _fake(50, True, 2), _fake(90, True, 3), _fake(20, False, 4)]
    assert [r.seed for r in select_hands(recs, 3)] == [1, 3, 2]  # ties keep the recorded order
    assert [r.seed for r in select_hands(recs, 5, by="set")] == [1, 4]
    assert [r.seed for r in select_hands(recs, 2, by="order")] == [0, 1]
    with pytest.raises(ValueError, match="by='best'"):
        select_hands(recs, 1, by="best")
    with pytest.raises(ValueError, match="non-negative"):
        select_hands(recs, -1)


def _write(tmp_path, n=2):
    env = rook_env.raw_env()
    recs = [record_hand(env, _agents(), seed=s, labels=["heur</script>", "random", "heuristic", "random"])
            for s in range(n)]
    path = write_html(recs, str(tmp_path / "sub" / "replay.html"))
    return recs, path


@pytest.mark.partnership
def test_html_is_self_contained(tmp_path):
    recs, path = _write(tmp_path)
    text = open(path, encoding="utf-8").read()
    assert not re.search(r"https?://", text) and "<link" not in text and " src=" not in text
    assert text.count("</script>") == 2  # a label holding "</script>" cannot end the data early
    data = json.loads(re.search(r'<script id="data" type="application/json">(.*?)</script>', text, re.S).group(1))
    assert len(data) == 2
    for rec, d in zip(recs, data):
        assert [s["name"] for s in d["steps"]] == [s["name"] for s in rec.steps]
        assert d["summary"] == rec.summary()
    with pytest.raises(ValueError, match="at least one"):
        write_html([], str(tmp_path / "x.html"))


@pytest.mark.partnership
@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium is not installed (see README's manual check)")
def test_html_renders_in_a_browser(tmp_path):
    recs, path = _write(tmp_path, n=1)
    step = 20
    args = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run"]
    url = f"file://{path}#hand=1&step={step}"
    dom = subprocess.run(args + ["--dump-dom", url], capture_output=True, text=True, timeout=120).stdout
    # The script ran: the seats, the decision of that step and its alternatives are in the page.
    s = recs[0].steps[step - 1]
    assert f"P{s['seat']} (" in dom and f"<u>{s['name']}</u>" in dom
    assert f"decision {step} of {len(recs[0].steps)}" in dom
    for _, alt in s["legal"]:
        assert f"<td>{alt}" in dom
    shot = tmp_path / "shot.png"
    subprocess.run(args + [f"--screenshot={shot}", "--window-size=1300,760", url], capture_output=True, timeout=120)
    assert shot.stat().st_size > 20_000  # a drawn page, not a blank one


@pytest.mark.partnership
def test_cli(tmp_path, capsys):
    out = tmp_path / "r.html"
    assert main(["--agents", "heuristic", "random", "heuristic", "random", "--seed", "3", "--hands", "3",
                 "--keep", "2", "--out", str(out)]) == 0
    assert out.exists() and "wrote 2 of 3 hands" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["--hands", "0", "--out", str(out)])


@pytest.mark.partnership
def test_the_viewer_writes_a_seed_exactly(tmp_path):
    # JavaScript's numbers round integers above 2 ** 53 (7824990879007939751 shows as 7824990879007940000):
    # the page carries each seed as text.
    big = 7824990879007939751
    rec = record_hand(rook_env.raw_env(), _agents(), seed=big % 2**32).to_dict()
    rec["seed"] = big
    page = open(write_html([rec], str(tmp_path / "r.html"))).read()
    assert f'"seed":"{big}"' in page and f'"seed":{big}' not in page


# ============================================================================== call-your-partner Rook
@pytest.mark.call_partner
def test_partners_are_secret_until_a_called_card_is_played():
    env = call_partner.raw_env(players=5)
    for seed in range(20):  # a hand whose partner plays the called card
        rec = record_hand(env, _cp_agents(5), seed=seed)
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


# ------------------------------------------------------------------------------ rotation matches
@pytest.mark.call_partner
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


@pytest.mark.call_partner
def test_rotation_replays_notice_an_agent_that_is_not_reproducible():
    Unseeded = unseeded_agent()  # ignores its seed: the replay of a hand cannot match
    res = play_rotation_match([Unseeded, "random"], players=4, deals=3, seed=0)
    _, notes = rotation_replays(res, [Unseeded, "random"], 4)
    assert notes and "not reproducible" in notes[0]


def _html_hands(path):
    text = path.read_text(encoding="utf-8")
    data = re.search(r'<script id="data" type="application/json">(.*?)</script>', text, re.S).group(1)
    return text, json.loads(data.replace("<\\/", "</"))


@pytest.mark.call_partner
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


@pytest.mark.call_partner
@pytest.mark.parametrize("argv, message", [
    (["--game", "call_partner", "--players", "5", "--agents", "random", "random", "--hands", "1"], "one spec per seat (5)"),
    (["--players", "5", "--hands", "1"], "--players is for --game call_partner"),
    (["--game", "call_partner", "--flag", "players=7", "--hands", "1"], "players"),
])
def test_replay_cli_bad_input(argv, message, capsys, tmp_path):
    assert message in usage_error(main, [*argv, "--out", str(tmp_path / "x.html")], capsys)


# ------------------------------------------------------------------------------ the page
def _page(tmp_path, players=6):
    env = call_partner.raw_env(players=players)
    recs = [record_hand(env, _cp_agents(players, seed), seed=seed) for seed in range(2)]
    return recs, write_html(recs, str(tmp_path / "cp.html"), title="cp test")


@pytest.mark.call_partner
def test_html_holds_every_seat(tmp_path, capsys):
    recs, path = _page(tmp_path)
    text = open(path, encoding="utf-8").read()
    data = json.loads(re.search(r'<script id="data" type="application/json">(.*?)</script>', text, re.S).group(1))
    for rec, d in zip(recs, data):
        assert d["game"] == "call_partner" and [s["name"] for s in d["steps"]] == [s["name"] for s in rec.steps]
        assert all(len(s["state"]["hands"]) == 6 for s in d["steps"]) and d["summary"] == rec.summary()
    assert 'rec.game === "call_partner"' in text and 'id="facts"' in text  # the n-seat layout is in the page
    assert main(["--game", "call_partner", "--players", "4", "--hands", "2", "--seed", "1",
                        "--out", str(tmp_path / "cli.html")]) == 0
    assert "wrote 2 of 2 hands" in capsys.readouterr().out


@pytest.mark.call_partner
@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium is not installed (see README's manual check)")
def test_html_renders_every_seat_in_a_browser(tmp_path):
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

"""Hand replays: the recorder is faithful (its decisions replay to the same hand), explanations line up
with the legal alternatives, hand selection, a self-contained HTML file that a browser renders."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import numpy as np
import pytest

import rook_env
from rook_env.agents import make_agent
from rook_env.cli.replay import main
from rook_env.evaluation.replay import HandRecord, record_hand, select_hands, write_html
from rook_env.games.partnership.rules import OVER


def _agents(seed: int = 0):
    return [make_agent("heuristic" if s % 2 == 0 else "random", seed=seed + s) for s in range(4)]


def test_record_hand_is_faithful():
    env = rook_env.raw_env()
    rec = record_hand(env, _agents(), seed=11, labels=["h", "r", "h", "r"])
    assert rec.result is not None and rec.final["phase"] == "over" and rec.ended == "hand over"
    first = rec.steps[0]["state"]
    assert [len(h) for h in first["hands"]] == [9, 9, 9, 9] and len(first["nest"]) == 5
    for step in rec.steps:
        assert step["name"] in [name for _, name in step["legal"]]
        assert step["seat"] == step["state"]["current"]
        assert step["probs"] is None  # rule-based and random agents do not explain themselves
    # Replaying the recorded decisions on a fresh table reaches the same result.
    e = rook_env.raw_env()
    e.reset(seed=11)
    for step in rec.steps:
        e.step(step["action"])
    assert e.game.phase == OVER and e.game.hand_result == rec.result
    assert rec.swing == abs(rec.result["hand_scores"][0] - rec.result["hand_scores"][1])
    json.dumps(rec.to_dict())  # plain data


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


class _Explaining:
    """Plays the lowest legal action and reports uniform probabilities over the legal ones."""

    def reset(self) -> None:
        pass

    def act(self, observation, info=None) -> int:
        return int(np.flatnonzero(observation["action_mask"])[0])

    def explain(self, observation):
        legal = np.flatnonzero(observation["action_mask"])
        return {"probs": {int(a): 1.0 / legal.size for a in legal}, "value": 1.5}


def test_explain_protocol_lines_up_with_legal_actions():
    rec = record_hand(rook_env.raw_env(), [_Explaining(), *_agents()[1:]], seed=3)
    mine = [s for s in rec.steps if s["seat"] == 0]
    assert mine
    for s in mine:
        assert len(s["probs"]) == len(s["legal"]) and abs(sum(s["probs"]) - 1) < 1e-3 and s["value"] == 1.5
    assert all(s["probs"] is None for s in rec.steps if s["seat"] != 0)


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


def test_checked_env_illegal_action_ends_the_record():
    class Bad:
        def act(self, observation, info=None):
            return int(np.flatnonzero(observation["action_mask"] == 0)[0])  # an illegal action

    with pytest.warns(UserWarning, match="illegal action"):
        rec = record_hand(rook_env.env(), [Bad(), *_agents()[1:]], seed=0)
    assert rec.result is None and "early" in rec.ended and len(rec.steps) == 1


def test_record_hand_rejects_wrong_agent_count():
    with pytest.raises(ValueError, match="4 agents"):
        record_hand(rook_env.raw_env(), _agents()[:3], seed=0)
    with pytest.raises(ValueError, match="4 labels"):
        record_hand(rook_env.raw_env(), _agents(), seed=0, labels=["a"])


def _fake(swing: int, made: bool, seed: int) -> HandRecord:
    r = HandRecord(agents=["a"] * 4, flags={}, seed=seed, options=None)
    r.result = {"hand_scores": [swing, 0], "made": made}
    return r


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


def test_cli(tmp_path, capsys):
    out = tmp_path / "r.html"
    assert main(["--agents", "heuristic", "random", "heuristic", "random", "--seed", "3", "--hands", "3",
                 "--keep", "2", "--out", str(out)]) == 0
    assert out.exists() and "wrote 2 of 3 hands" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["--hands", "0", "--out", str(out)])


def test_the_viewer_writes_a_seed_exactly(tmp_path):
    # JavaScript's numbers round integers above 2 ** 53 (7824990879007939751 shows as 7824990879007940000):
    # the page carries each seed as text.
    big = 7824990879007939751
    rec = record_hand(rook_env.raw_env(), _agents(), seed=big % 2**32).to_dict()
    rec["seed"] = big
    page = open(write_html([rec], str(tmp_path / "r.html"))).read()
    assert f'"seed":"{big}"' in page and f'"seed":{big}' not in page

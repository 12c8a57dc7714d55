"""Field evaluation (``rook_env.evaluation.field``): one agent against a list of opponents, each a
duplicate match on the same deals; its numbers are play_match's, its minimum the worst opponent's."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rook_env.agents import registry
from rook_env.agents.random_agent import RandomAgent
from rook_env.cli import evaluate
from rook_env.evaluation import DEFAULT_FIELD, FieldResult, default_field, play_field, play_match
from rook_env.evaluation.report import Table, field_tables, plot_field, short_spec

DEALS = 6  # small matches: the tests check bookkeeping, not strength


def other_random(seed):
    """RandomAgent on another seed stream than the 'random' spec (a different opponent)."""
    return RandomAgent(seed + 12345)


other_random.name = "other_random"


@pytest.fixture(scope="module")
def field() -> FieldResult:
    return play_field("heuristic", ["random", "heuristic+random", other_random], deals=DEALS, seed=5)


def test_field_aggregates_play_match_exactly(field):
    assert field.candidate == "heuristic"
    assert field.opponents == ["random", "heuristic+random", "other_random"]
    for opponent, m in zip(["random", "heuristic+random", other_random], field.matches):
        direct = play_match("heuristic", opponent, deals=DEALS, seed=5)
        assert m.mean == direct.mean and m.ci == direct.ci and m.games == direct.games
        np.testing.assert_array_equal(m.pair_values, direct.pair_values)
        np.testing.assert_array_equal(m.records, direct.records)
    rows = field.rows()
    assert [r["mean_points_per_deal"] for r in rows] == [m.mean for m in field.matches]
    assert [r["games"] for r in rows] == [m.games for m in field.matches]
    assert field.deals == DEALS and field.seed == 5


def test_every_opponent_plays_the_same_deals(field):
    # the deals are the same for every opponent: each hand's dealer, and every match's deal order
    dealt = [m.records[:, :2].tolist() for m in field.matches]  # (deal, seating) per hand
    assert dealt[0] == dealt[1] == dealt[2]
    assert all(m.seed == field.seed for m in field.matches)


def test_minimum_is_the_minimum(field):
    means = [m.mean for m in field.matches]
    assert field.minimum == min(means)
    assert field.worst == means.index(min(means))
    assert field.minimum_ci == field.matches[field.worst].ci
    d = field.to_dict()
    assert d["minimum"]["opponent"] == field.opponents[field.worst]
    assert d["minimum"]["mean_points_per_deal"] == min(means)
    assert d["minimum"]["ci"] == list(field.minimum_ci)


def test_deterministic_for_a_seed(field):
    same = play_field("heuristic", ["random", "heuristic+random", other_random], deals=DEALS, seed=5)
    other = play_field("heuristic", ["random", "heuristic+random", other_random], deals=DEALS, seed=6)
    assert field.to_dict(per_deal=True, timing=False) == same.to_dict(per_deal=True, timing=False)
    assert [m.mean for m in other.matches] != [m.mean for m in field.matches]


def test_workers_do_not_change_the_result():
    one = play_field("random", ["heuristic", other_random], deals=DEALS, seed=1, block_size=2)
    two = play_field("random", ["heuristic", other_random], deals=DEALS, seed=1, block_size=2, workers=2)
    assert one.to_dict(per_deal=True, timing=False) == two.to_dict(per_deal=True, timing=False)


def test_identical_agents_score_zero_against_themselves():
    res = play_field("random", ["random", other_random], deals=DEALS, seed=2)
    assert res.matches[0].mean == 0.0 and res.matches[0].ci == (0.0, 0.0)
    assert not np.any(res.matches[0].pair_values)
    assert res.matches[1].mean != 0.0  # a different random stream is a different opponent


def test_default_field_follows_the_registry(monkeypatch):
    assert DEFAULT_FIELD == ("random", "heuristic", "search", "ppo")
    without = tuple(s for s in registry.GAME_SPECS["partnership"] if s != "search")
    monkeypatch.setitem(registry.GAME_SPECS, "partnership", without)
    assert default_field() == ("random", "heuristic", "ppo")
    monkeypatch.setitem(registry.GAME_SPECS, "partnership", (*without, "search"))
    assert default_field() == ("random", "heuristic", "search", "ppo")
    assert default_field("heuristic") == ("random", "search", "ppo")  # never the candidate itself
    assert default_field(other_random) == DEFAULT_FIELD  # a factory is not a default member


def test_default_field_is_played_when_no_opponents_are_given(monkeypatch):
    monkeypatch.setitem(registry.GAME_SPECS, "partnership", ("random", "heuristic"))
    monkeypatch.setattr("rook_env.evaluation.field.DEFAULT_FIELD", ("random", "heuristic", "search"))
    res = play_field("heuristic", deals=2, seed=0)
    assert res.opponents == ["random"]


@pytest.mark.parametrize(
    "opponents, kwargs, error, message",
    [
        ([], {}, ValueError, "at least one opponent"),
        (["random", "bogus"], {}, ValueError, "unknown agent spec 'bogus'"),
        (["random", "random+random"], {}, ValueError, "listed twice"),
        (["random"], {"names": ["a", "b"]}, ValueError, "names must match"),
        (["random"], {"deals": 0}, ValueError, "deals must be a positive integer"),
        (["random"], {"confidence": 1.5}, ValueError, "confidence"),
        (["random"], {"flags": {"game": "call_partner"}}, ValueError, "partnership game"),
        (["random"], {"flags": {"colour": "red"}}, ValueError, "colour"),
    ],
)
def test_bad_input_gives_clear_errors(opponents, kwargs, error, message):
    with pytest.raises(error, match=message):
        play_field("random", opponents, **{"deals": 2, **kwargs})


def test_a_bad_spec_fails_before_any_deal_is_played():
    played = []

    def counting(seed):
        played.append(seed)
        return RandomAgent(seed)

    with pytest.raises(ValueError, match="unknown agent spec 'bogus'"):
        play_field(counting, ["random", "bogus"], deals=50)
    assert len(played) == 1  # built once by the up-front check, never played


def test_json_table_and_plot(field, tmp_path):
    d = json.loads(json.dumps(field.to_dict(per_deal=True)))
    assert d["same_deals"] is True and d["opponents"] == field.opponents
    assert [r["opponent"] for r in d["field"]] == field.opponents
    assert len(d["matches"]) == 3 and len(d["matches"][0]["per_deal"]) == DEALS
    (t,) = field_tables(field)
    assert isinstance(t, Table) and [r[0] for r in t.rows] == field.opponents
    text = t.to_text()
    assert "minimum over the field" in text and field.opponents[field.worst] in text.splitlines()[-3]
    assert len(t.title) <= 80
    png = tmp_path / "field.png"
    plot_field(field, str(png))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_field_writes_json_and_png(tmp_path, capsys):
    js, png = tmp_path / "eval" / "field.json", tmp_path / "eval" / "field.png"
    rc = evaluate.main(["--field", "heuristic", "--opponents", "random", "heuristic+random", "--deals", "4",
                        "--seed", "3", "--json", str(js), "--plot", str(png), "--no-progress"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "minimum over the field" in out and "heuristic+random" in out
    data = json.loads(js.read_text())
    direct = play_match("heuristic", "random", deals=4, seed=3)
    assert data["field"][0]["mean_points_per_deal"] == direct.mean
    assert data["field"][0]["games"] == json.loads(json.dumps(direct.games))
    assert data["matches"][0]["per_deal"] == [float(v) for v in direct.pair_values]  # the JSON keeps every deal
    assert data["minimum"]["opponent"] in ("random", "heuristic+random")
    assert png.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--opponents", "random"], "--opponents gives the field"),
        (["--field", "random", "random", "heuristic"], "give one of"),
        (["--field", "random", "--round-robin", "random", "heuristic"], "give one of"),
        (["--field", "random", "--opponents", "bogus"], "unknown agent spec 'bogus'"),
        (["--field", "random", "--opponents", "random", "random"], "listed twice"),
        (["--field", "random", "--opponents", "random", "--replays", "2"], "--replays is not available"),
        (["--field", "random", "--opponents", "random", "--deals", "0"], "--deals"),
        (["--game", "call_partner", "--field", "random"], "--field is not available"),
    ],
)
def test_cli_field_bad_input(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        evaluate.main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_plot_labels_name_checkpoints_by_their_file_stem():
    assert short_spec("networks/ppo_v1.pt") == "ppo_v1"
    assert short_spec("runs/x/agent.pt+heuristic") == "agent+heuristic"
    assert short_spec("search") == "search"

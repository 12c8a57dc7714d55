"""Field evaluation (``rook_env.evaluation.field``): one agent against a list of opponents, each a
duplicate match on the same deals; its numbers are play_match's, its minimum the worst opponent's, its mean the
members' average; the default field and what it leaves out; the shipping rule on synthetic numbers; the
command line's --field and --ship-against."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from rook_env.agents import registry
from rook_env.agents.random_agent import RandomAgent
from rook_env.cli import evaluate
from rook_env.evaluation import (
    DEFAULT_FIELD,
    FieldResult,
    bootstrap_mean_ci,
    default_field,
    play_field,
    play_match,
    ship_check,
    ship_rule,
)
from rook_env.evaluation import field as field_module
from rook_env.evaluation.field import FIELD_MEMBERS, NETWORKS_DIR, FieldMember, skipped_members
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


def test_default_field_members_and_what_they_stand_for():
    """The heuristic is one member of several: the project's search players, best, the shipped network, a past
    network and its best response by path, and the independent search player; random is not a member."""
    assert DEFAULT_FIELD == ("heuristic", "search", "search-learned", "best", "ppo", "ppo_v5", "best_response_v5",
                             "pimc")
    specs = {m.name: m.spec for m in FIELD_MEMBERS}
    assert specs["search-learned"] == "search[worlds=learned]" and specs["pimc"] == "pimc"
    teams = default_field()
    assert [t.name for t in teams] == list(DEFAULT_FIELD)  # a checkout has networks/
    by_name = {t.name: t for t in teams}
    assert by_name["ppo_v5"].members[0] == os.path.join(NETWORKS_DIR, "ppo_v5.pt")
    assert by_name["best_response_v5"].members[0] == os.path.join(NETWORKS_DIR, "best_response_v5.pt")
    assert skipped_members() == []


@pytest.mark.parametrize("candidate, left_out", [
    ("heuristic", "heuristic"),
    ("ppo", "ppo"),
    ("pimc", "pimc"),
    ("search[worlds=learned]", "search-learned"),
    (os.path.join("networks", "ppo_v5.pt"), "ppo_v5"),
    ("ppo:" + os.path.join(NETWORKS_DIR, "best_response_v5.pt"), "best_response_v5"),
])
def test_default_field_leaves_out_the_candidate_itself(candidate, left_out, monkeypatch):
    monkeypatch.chdir(os.path.dirname(NETWORKS_DIR))  # a relative path names the checkout's file
    names = [t.name for t in default_field(candidate)]
    assert left_out not in names and len(names) == len(DEFAULT_FIELD) - 1
    assert skipped_members(candidate) == [(left_out, "it is the candidate")]
    assert [t.name for t in default_field(other_random)] == list(DEFAULT_FIELD)  # a factory is not a member


def test_default_field_leaves_out_members_that_cannot_be_played_here(monkeypatch, tmp_path):
    monkeypatch.setattr(field_module, "NETWORKS_DIR", str(tmp_path))  # an installed wheel: no networks/
    names = [t.name for t in default_field()]
    assert "ppo_v5" not in names and "best_response_v5" not in names and "heuristic" in names
    skipped = dict(skipped_members())
    assert set(skipped) == {"ppo_v5", "best_response_v5"} and "not found" in skipped["ppo_v5"]
    real = registry.family_of
    monkeypatch.setattr(registry, "family_of", lambda spec: None if spec.startswith("search") else real(spec))
    assert "search" not in [t.name for t in default_field()]
    assert "the agent registry offers no 'search'" in dict(skipped_members())["search"]


def test_default_field_is_played_when_no_opponents_are_given(monkeypatch, tmp_path):
    monkeypatch.setattr(field_module, "FIELD_MEMBERS", (
        FieldMember("random", "random", "a stand-in"), FieldMember("gone", "gone.pt", "a network not here")))
    monkeypatch.setattr(field_module, "NETWORKS_DIR", str(tmp_path))
    res = play_field("heuristic", deals=2, seed=0)
    assert res.opponents == ["random"]
    assert [n for n, _ in res.skipped] == ["gone"]
    assert res.to_dict()["skipped"][0]["member"] == "gone"


def test_field_mean_weighs_every_member_alike(field):
    values = np.mean([m.pair_values for m in field.matches], axis=0)
    np.testing.assert_allclose(field.field_values, values)
    assert field.field_mean == pytest.approx(np.mean([m.mean for m in field.matches]))
    assert field.field_ci == bootstrap_mean_ci(values, confidence=0.95, n_boot=2000, seed=field.seed)
    lo, hi = field.field_ci
    assert lo <= field.field_mean <= hi
    d = field.to_dict()
    assert d["field_mean"]["mean_points_per_deal"] == field.field_mean and d["field_mean"]["ci"] == [lo, hi]
    (t,) = field_tables(field)
    assert any(n.startswith("field mean") and f"{field.field_mean:+.1f}" in n for n in t.notes)
    assert "field mean" in field.summary()


# ============================================================================ the shipping rule
def _values(rng, means, n=400, sd=30.0):
    return {name: rng.normal(mu, sd, n) for name, mu in means.items()}


def test_ship_rule_ships_a_candidate_ahead_everywhere():
    rng = np.random.default_rng(0)
    current = _values(rng, {"heuristic": 10, "pimc": 5, "best": -2})
    candidate = {k: v + rng.normal(6, 5, v.size) for k, v in current.items()}  # paired: +6 a deal everywhere
    d = ship_rule(candidate, current)
    assert d.ships and not d.reasons
    assert [r["member"] for r in d.members] == ["heuristic", "pimc", "best"] and all(r["level"] for r in d.members)
    assert d.field["ahead"] and d.field["ci"][0] > 0 and d.field["mean_diff"] == pytest.approx(6, abs=1)
    assert d.deals == 400 and "ships in place of" in d.summary()
    assert json.loads(json.dumps(d.to_dict()))["ships"] is True


def test_ship_rule_refuses_a_candidate_behind_against_one_member():
    """Far ahead on the field's mean, but measurably behind against one member: it does not ship."""
    rng = np.random.default_rng(1)
    current = _values(rng, {"heuristic": 10, "pimc": 5, "best": -2})
    shift = {"heuristic": 20, "pimc": 20, "best": -4}
    candidate = {k: v + rng.normal(shift[k], 5, v.size) for k, v in current.items()}
    d = ship_rule(candidate, current)
    assert not d.ships and d.field["ahead"]
    assert [r["member"] for r in d.members if not r["level"]] == ["best"]
    assert len(d.reasons) == 1 and d.reasons[0].startswith("not level against best")


def test_ship_rule_refuses_a_candidate_level_everywhere_but_not_ahead():
    rng = np.random.default_rng(2)
    current = _values(rng, {"heuristic": 10, "pimc": 5})
    d = ship_rule({k: v.copy() for k, v in current.items()}, current)  # the same agent: every difference 0
    assert all(r["level"] for r in d.members) and d.members[0]["ci"] == [0.0, 0.0]
    assert not d.field["ahead"] and not d.ships
    assert d.reasons == ["not ahead on the field's mean: +0.00 [+0.00, +0.00] (the low end must be > 0)"]


def test_ship_rule_margin_tolerates_a_small_loss_against_one_member():
    rng = np.random.default_rng(3)
    current = _values(rng, {"heuristic": 10, "pimc": 5})
    shift = {"heuristic": 8.0, "pimc": -0.5}
    candidate = {k: v + shift[k] + rng.normal(0, 8, v.size) for k, v in current.items()}
    strict = ship_rule(candidate, current)
    lo = strict.members[1]["ci"][0]
    assert -2.0 < lo < 0 and not strict.ships
    assert ship_rule(candidate, current, margin=2.0).ships
    assert not ship_rule(candidate, current, margin=-lo / 2).ships


def test_ship_rule_reads_field_results_as_their_per_deal_values(field):
    other = play_field("heuristic+random", ["random", "heuristic+random", other_random], deals=DEALS, seed=5)
    d = ship_rule(field, other)
    values = ship_rule({n: m.pair_values for n, m in zip(field.opponents, field.matches)},
                       {n: m.pair_values for n, m in zip(other.opponents, other.matches)})
    assert d.members == values.members and d.field == values.field and d.ships == values.ships
    assert d.candidate == "heuristic" and d.current == "heuristic+random"
    for row, a, b in zip(d.members, field.matches, other.matches):
        assert row["mean_diff"] == pytest.approx(a.mean - b.mean)


@pytest.mark.parametrize("current, kwargs, message", [
    ({"a": np.zeros(5)}, {}, "different members"),
    ({"a": np.zeros(4), "b": np.zeros(5)}, {}, "one value per deal"),
    ({"a": np.zeros(5), "b": np.zeros(5)}, {"margin": -1}, "margin must be"),
    ({"a": np.zeros(5), "b": np.zeros(5)}, {"confidence": 1.0}, "confidence"),
])
def test_ship_rule_bad_input_gives_clear_errors(current, kwargs, message):
    with pytest.raises(ValueError, match=message):
        ship_rule({"a": np.ones(5), "b": np.ones(5)}, current, **kwargs)
    with pytest.raises(TypeError, match="FieldResult or a mapping"):
        ship_rule([1, 2], current)


def test_ship_rule_refuses_fields_played_on_other_deals(field):
    other = play_field("heuristic+random", ["random", "heuristic+random", other_random], deals=DEALS, seed=6)
    with pytest.raises(ValueError, match="not played on the same deals"):
        ship_rule(field, other)


def test_ship_check_plays_both_agents_against_one_field():
    decision, a, b = ship_check("heuristic", "random", ["random", "heuristic+random"], deals=4, seed=3)
    assert a.opponents == b.opponents == ["random", "heuristic+random"]
    assert b.matches[0].mean == 0.0  # random against itself
    assert decision.members[0]["mean_diff"] == pytest.approx(a.matches[0].mean)  # the head to head
    assert decision == ship_rule(a, b, seed=3)


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


def test_cli_ship_against_plays_both_and_gives_the_verdict(tmp_path, capsys):
    js = tmp_path / "ship.json"
    rc = evaluate.main(["--field", "heuristic", "--ship-against", "random", "--opponents", "random", "heuristic+random",
                        "--deals", "4", "--seed", "3", "--json", str(js), "--no-progress"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "ship heuristic in place of random?" in out and "verdict: heuristic" in out and "field mean" in out
    data = json.loads(js.read_text())
    decision, a, _ = ship_check("heuristic", "random", ["random", "heuristic+random"], deals=4, seed=3)
    assert data["decision"]["ships"] == decision.ships
    assert [r["mean_diff"] for r in data["decision"]["members"]] == [r["mean_diff"] for r in decision.members]
    assert data["candidate"]["field_mean"]["mean_points_per_deal"] == a.field_mean
    assert data["current"]["candidate"] == "random"


def test_cli_field_table_says_which_default_members_were_not_played(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(field_module, "FIELD_MEMBERS", (
        FieldMember("random", "random", "a stand-in"), FieldMember("gone", "gone.pt", "a network not here")))
    monkeypatch.setattr(field_module, "NETWORKS_DIR", str(tmp_path))
    assert evaluate.main(["--field", "heuristic", "--deals", "2", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "not played: gone" in out and "field mean" in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--ship-against", "random"], "compare --field CANDIDATE"),
        (["--field", "random", "--ship-against", "random", "--opponents", "heuristic"], "names the candidate itself"),
        (["--field", "random", "--ship-against", "bogus", "--opponents", "heuristic"], "unknown agent spec 'bogus'"),
        (["--field", "random", "--ship-margin", "-1", "--opponents", "heuristic"], "--ship-margin must be >= 0"),
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

"""Call-your-partner Rook in the agent registry and the rotation evaluation (rook_env.games.call_partner.match):
flags validated against the right game, the rotation scheme (every agent in every seat on the same deal),
exact symmetry for identical agents, determinism for a seed and over workers, a strong agent beating random,
and the command line (``evaluate.py --game call_partner``)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers import usage_error

from rook_env.agents import make_agent
from rook_env.agents.heuristic.call_partner import CallPartnerHeuristic
from rook_env.agents.random_agent import RandomAgent
from rook_env.agents.registry import game_config, split_game

from rook_env.games.call_partner import CallPartnerConfig, CallPartnerState, make_config, obs_layout
from rook_env.cli import evaluate
from rook_env.games.partnership.config import RookConfig
from rook_env.evaluation import make_deal, play_match, play_rotation_match
from rook_env.games.call_partner.match import RF, field_specs
from rook_env.core.loop import IllegalActionError


# ------------------------------------------------------------------------------ registry
@pytest.mark.call_partner
def test_make_agent_builds_the_call_partner_heuristic_for_its_table():
    agent = make_agent("call_partner_heuristic", 3, players=6, deck="no_twos_to_fours")
    assert isinstance(agent, CallPartnerHeuristic)
    assert agent.n == 6 and agent.config.deck == "no_twos_to_fours"
    # game="call_partner" may be given explicitly too; the default table has five players.
    assert make_agent("call_partner_heuristic", game="call_partner").n == 5


@pytest.mark.call_partner
def test_random_agent_validates_flags_against_the_game_named_by_flags():
    assert isinstance(make_agent("random", 0, game="call_partner", players=5), RandomAgent)
    assert isinstance(make_agent("random", 0, game="partnership", deck="full"), RandomAgent)
    with pytest.raises(ValueError, match="players=5 is not allowed for game='partnership'.*game='call_partner'"):
        make_agent("random", players=5)  # the partnership game has no players flag: the error names the game
    with pytest.raises(ValueError, match="players=7"):
        make_agent("random", game="call_partner", players=7)
    with pytest.raises(ValueError, match="rook_rank.*does not apply"):
        make_agent("random", game="call_partner", rook_rank="high")


@pytest.mark.call_partner
@pytest.mark.parametrize("spec, flags, message", [
    ("heuristic", {"game": "call_partner"}, "plays the partnership game.*call_partner_heuristic"),
    ("search", {"game": "call_partner"}, "plays the partnership game"),
    ("x.pt", {"game": "call_partner"}, "plays the partnership game"),
    ("call_partner_heuristic", {"game": "partnership"}, "plays the call_partner game.*not the partnership game"),
    ("nonsense", {"game": "call_partner"}, "unknown agent spec 'nonsense'.*call_partner_heuristic"),
    ("random", {"game": "doppelkopf"}, "game='doppelkopf' is not allowed"),
    ("call_partner_heuristic", {"players": 5, "decks": "full"}, "unknown call-your-partner flag.*decks"),
])
def test_make_agent_refuses_an_agent_of_the_other_game_by_name(spec, flags, message):
    with pytest.raises(ValueError, match=message):
        make_agent(spec, **flags)


@pytest.mark.call_partner
def test_game_config_and_split_game():
    assert split_game({"game": "call_partner", "players": 4}) == ("call_partner", {"players": 4})
    assert split_game(None) == ("partnership", {})
    assert isinstance(game_config({"game": "call_partner", "players": 4}), CallPartnerConfig)
    assert isinstance(game_config({"deck": "full"}), RookConfig)


# ------------------------------------------------------------------------------ rotation matches


class SeatRecorder:
    """Random play that records, per hand, the cards it was dealt (its first observation's hand)."""

    name = "recorder"
    hands: list = []

    def __init__(self, seed=None):
        self.inner = RandomAgent(seed)
        self.fresh = True

    def reset(self):
        self.fresh = True

    def act(self, obs, info=None):
        if self.fresh:
            ol = obs_layout(make_config(players=4))
            SeatRecorder.hands.append(tuple(np.flatnonzero(obs["observation"][ol.slices["hand"]]).tolist()))
            self.fresh = False
        return self.inner.act(obs, info)


@pytest.mark.call_partner
def test_call_partner_deals_are_rules_deals_and_rotate_the_dealer():
    for players, index in ((4, 0), (5, 7), (6, 11)):
        options, env_seed = make_deal(3, index, {"game": "call_partner", "players": players})
        assert options["dealer"] == index % players and len(options["hands"]) == players
        state = CallPartnerState(make_config(players=players))
        state.new_game(dealer=options["dealer"], hands=options["hands"], nest=options["nest"])  # a valid deal
        assert make_deal(3, index, {"game": "call_partner", "players": players}) == (options, env_seed)


@pytest.mark.call_partner
def test_field_specs():
    assert field_specs(["a", "b"], 5) == ["a", "b", "b", "b", "b"]
    assert field_specs(list("abcd"), 4) == list("abcd")
    with pytest.raises(ValueError, match="needs 5 agent specs.*or 2"):
        field_specs(["a", "b", "c"], 5)


@pytest.mark.call_partner
def test_every_agent_plays_every_seat_of_every_deal():
    res = play_rotation_match(["call_partner_heuristic", "random"], players=4, deals=3, seed=2, block_size=2)
    rec = res.records
    assert rec.shape[0] == 3 * 4 * 4  # deals x rotations x seats
    for deal in range(3):
        rows = rec[rec[:, RF["deal"]] == deal]
        for agent in range(4):
            assert sorted(rows[rows[:, RF["agent"]] == agent, RF["seat"]].tolist()) == [0, 1, 2, 3]
    # In rotation r seat s is played by agent (s + r) % n.
    assert np.all(rec[:, RF["agent"]] == (rec[:, RF["seat"]] + rec[:, RF["rotation"]]) % 4)
    # The hands per deal: the same cards in every rotation (the deal is replayed, not redealt).
    scores = rec[:, RF["score"]]
    assert res.hands == 12 and res.illegal_total == 0
    assert res.agents[0].hands == 12 and sum(a.hands for a in res.agents) == rec.shape[0]
    # Per-deal means are the rows' means; the agents' diffs sum to 0 on every deal.
    for j in range(4):
        for deal in range(3):
            sel = (rec[:, RF["agent"]] == j) & (rec[:, RF["deal"]] == deal)
            assert res.deal_scores[j, deal] == pytest.approx(scores[sel].mean())
    np.testing.assert_allclose(res.deal_diffs.sum(axis=0), 0, atol=1e-9)
    assert res.mean == pytest.approx(res.deal_diffs[0].mean()) and res.ci[0] <= res.mean <= res.ci[1]


@pytest.mark.call_partner
def test_each_agent_is_dealt_every_seats_cards():
    SeatRecorder.hands = []
    play_rotation_match([SeatRecorder, "random", "random", "random"], players=4, deals=2, seed=5)
    options0, _ = make_deal(5, 0, {"game": "call_partner", "players": 4})
    # Deal 0 first: in rotation r the recorder (agent 0) sits at seat (0 - r) % 4.
    seen = SeatRecorder.hands[:4]
    assert seen == [tuple(sorted(options0["hands"][(-r) % 4])) for r in range(4)]


@pytest.mark.call_partner
@pytest.mark.parametrize("spec", ["random", "call_partner_heuristic"])
def test_identical_agents_give_exactly_zero(spec):
    res = play_rotation_match([spec, spec], players=5, deals=6, seed=1)
    assert res.mean == 0 and res.ci == (0.0, 0.0)
    assert np.all(res.deal_diffs == 0)
    assert len({a.mean_score for a in res.agents}) == 1


@pytest.mark.call_partner
def test_deterministic_for_a_seed_and_over_workers():
    kw = dict(players=4, deals=6, seed=4, block_size=2)
    a = play_rotation_match(["call_partner_heuristic", "random"], **kw)
    b = play_rotation_match(["call_partner_heuristic", "random"], workers=2, **kw)
    c = play_rotation_match(["call_partner_heuristic", "random"], **{**kw, "seed": 5})
    assert a.to_dict(timing=False) == b.to_dict(timing=False)
    np.testing.assert_array_equal(a.records, b.records)
    assert a.to_dict(timing=False) != c.to_dict(timing=False)


@pytest.mark.call_partner
def test_the_heuristic_beats_random_players():
    res = play_rotation_match(["call_partner_heuristic", "random"], players=5, deals=30, seed=0)
    assert res.ci[0] > 0, res.summary()
    assert res.agents[0].illegal == 0 and res.agents[0].diff > 20


@pytest.mark.call_partner
def test_illegal_actions_are_counted_per_agent_and_strict_raises():
    class Bad:
        def __init__(self, seed=None):
            pass

        def act(self, obs, info=None):
            return int(np.flatnonzero(obs["action_mask"] == 0)[0])  # always an illegal action

    res = play_rotation_match([Bad, "random"], players=4, deals=1, seed=0)
    assert res.agents[0].illegal > 0 and all(a.illegal == 0 for a in res.agents[1:])
    with pytest.raises(IllegalActionError, match="rotation 0"):
        play_rotation_match([Bad, "random"], players=4, deals=1, seed=0, strict=True)


@pytest.mark.call_partner
@pytest.mark.parametrize("kwargs, message", [
    (dict(specs=["heuristic", "random"]), "plays the partnership game"),
    (dict(specs=["random", "random"], flags={"decks": "full"}), "unknown rule flag.*decks for game=.call_partner."),
    (dict(specs=["random", "random"], flags={"game": "partnership"}), "play_match"),
    (dict(specs=["random", "random"], flags={"episode": "game"}), "episode"),
    (dict(specs=["random", "random"], players=5, flags={"players": 4}), "contradicts"),
    (dict(specs=["random"] * 3, players=5), "needs 5 agent specs"),
    (dict(specs=["random", "random"], deals=0), "deals"),
])
def test_bad_rotation_input_is_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        play_rotation_match(**{"deals": 1, **kwargs})


@pytest.mark.call_partner
def test_play_match_refuses_call_partner_flags():
    with pytest.raises(ValueError, match="play_rotation_match"):
        play_match("random", "random", deals=1, flags={"game": "call_partner"})


@pytest.mark.call_partner
def test_cli_call_partner_rotation(tmp_path, capsys):
    js = tmp_path / "cp.json"
    rc = evaluate.main(["--game", "call_partner", "--players", "4", "call_partner_heuristic", "random",
                        "--deals", "4", "--seed", "1", "--no-progress", "--json", str(js)])
    assert rc == 0
    out = capsys.readouterr().out
    assert "rotation match, 4 players" in out and "minus the field" in out
    data = json.loads(js.read_text())
    assert data["players"] == 4 and data["deals"] == 4 and data["hands"] == 16 and data["illegal_actions"] == 0
    assert [a["name"] for a in data["agents"]] == ["call_partner_heuristic", "random #1", "random #2", "random #3"]
    assert data["flags"] == {"game": "call_partner", "players": 4}
    # The same run from the library gives the same numbers.
    res = play_rotation_match(["call_partner_heuristic", "random"], players=4, deals=4, seed=1)
    assert res.to_dict(timing=False) == {k: v for k, v in data.items()
                                          if k not in ("elapsed_s", "deals_per_s", "hands_per_s", "workers")}


@pytest.mark.call_partner
@pytest.mark.parametrize("argv, message", [
    (["--game", "call_partner", "heuristic", "random"], "plays the partnership game"),
    (["--game", "call_partner", "random"], "needs 5 agent specs"),
    (["--game", "call_partner", "--players", "7", "random", "random"], "players=7"),
    (["--game", "call_partner", "--players", "4", "--flag", "players=5", "random", "random"], "contradicts"),
    (["--game", "call_partner", "--round-robin", "random", "random"], "--round-robin is not available"),
    (["--game", "call_partner", "random", "random", "--flag", "rook_rank=high"], "does not apply"),
    (["--game", "call_partner", "random", "random", "--flag", "game=x"], "not a rule flag"),
    (["--players", "5", "random", "random"], "--players is for --game call_partner"),
    (["--game", "hearts", "random", "random"], "invalid choice"),
])
def test_cli_call_partner_bad_input(argv, message, capsys):
    assert message in usage_error(evaluate.main, argv, capsys)

"""The heuristic's hand model: one feature function and one weight vector serve bidding, discard
planning and trump choice; the fitting script (tools/fit_hand_model.py) runs and recovers weights."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from helpers import legal_mask_array
from rook_env.agents.heuristic import HeuristicAgent
from rook_env.agents.heuristic.bidding import (
    BID_CALIBRATION,
    HAND_FEATURES,
    HAND_WEIGHTS,
    N_FEATURES,
    HandModel,
    hand_features,
)
from rook_env.agents.heuristic.tables import card_tables
from rook_env.games.partnership.config import make_config
from rook_env.games.partnership.observation import encode
from rook_env.games.partnership.rules import DISCARD, TRUMP, RookState

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import fit_hand_model

KEYS = [(deck, rank) for deck in ("tournament", "full") for rank in ("high", "low", "ten_and_half")]


def _agent(weights=None, **flags) -> HeuristicAgent:
    agent = HeuristicAgent(**flags)
    agent.strict = True
    if weights is not None:
        agent.hand_model = HandModel(agent.tables, weights)
    return agent


def _observe(st: RookState) -> dict:
    return {"observation": encode(st, st.current), "action_mask": legal_mask_array(st)}


def _first_bids(agent: HeuristicAgent, deals: int) -> list[int]:
    """The first bid decision (the seat left of the dealer) on seeded deals."""
    out = []
    for d in range(deals):
        st = RookState(make_config(), seed=d)
        st.new_game(dealer=3)
        out.append(agent.act(_observe(st)))
    return out


def _bidder_plans(agent: HeuristicAgent, deals: int) -> list[tuple[int, int]]:
    """(discards, trump) of seat 0 forced to win the auction at the minimum, on seeded deals."""
    out = []
    for d in range(deals):
        st = RookState(make_config(), seed=d)
        st.new_game(dealer=3)
        st.apply(st.L.BID0)
        for _ in range(3):
            st.apply(st.L.PASS)
        agent.reset()
        while st.phase in (DISCARD, TRUMP):
            st.apply(agent.act(_observe(st)))
        out.append((st.discards, st.trump))
    return out


def test_every_configuration_has_weights_and_a_calibration():
    assert N_FEATURES == len(HAND_FEATURES) == 19
    for key in KEYS:
        assert len(HAND_WEIGHTS[key]) == N_FEATURES, key
        _, slope = BID_CALIBRATION[key]
        assert 0.3 < slope < 1.5, key


def test_wrong_number_of_weights_is_refused():
    with pytest.raises(ValueError, match="19 weights"):
        HandModel(card_tables(make_config()), (1.0, 2.0))


def test_one_weight_changes_both_a_bid_and_a_discard():
    """Bidding and planning read the same weights through the same features: raising the weight
    of side seconds changes first bids and the bidder's discards."""
    base = HAND_WEIGHTS[("tournament", "high")]
    changed = list(base)
    changed[HAND_FEATURES.index("seconds")] += 5.0
    deals = 60
    bids_a, bids_b = _first_bids(_agent(), deals), _first_bids(_agent(changed), deals)
    assert bids_a != bids_b
    plans_a, plans_b = _bidder_plans(_agent(), deals), _bidder_plans(_agent(changed), deals)
    assert any(a[0] != b[0] for a, b in zip(plans_a, plans_b))
    # and the same weights unchanged reproduce the decisions exactly
    assert _first_bids(_agent(list(base)), deals) == bids_a
    assert _bidder_plans(_agent(list(base)), deals) == plans_a


def test_features_of_a_crafted_hand():
    tab = card_tables(make_config())
    layout = tab.layout
    hand = sum(1 << layout.parse_card(c) for c in ["B14", "B13", "B11", "Rook", "R14", "R12", "Y5", "Y13", "G14"])
    black = layout.card_colour[layout.parse_card("B14")]
    f = dict(zip(HAND_FEATURES, hand_features(tab, hand, black, nest_points=20, nest_unseen=False)))
    assert f["trumps"] == 4 and f["rook"] == 1
    assert (f["top1"], f["top2"], f["top3"]) == (1, 1, 0)  # B14 B13, not B12
    assert f["top_run"] == 3  # Rook Bird, B14, B13 (B12 missing)
    assert (f["masters"], f["master_seconds"], f["seconds"]) == (2, 0, 1)  # R14, G14; Y13
    assert (f["voids"], f["singletons"], f["long_singletons"]) == (0, 1, 1)  # G14 alone, 4 trumps
    assert f["unguarded"] == 5  # Y5; R14 and G14 are masters
    assert (f["points"], f["trump_points"]) == (55, 30)
    assert f["nest_unseen"] == 0
    assert f["nest"] == pytest.approx(0.95 * 20)  # min(.95, .3 + .1 * 4 + .1 * 3)
    assert hand_features(tab, hand, black, nest_unseen=True)[HAND_FEATURES.index("nest_unseen")] == 1


def test_fit_recovers_known_weights():
    rng = np.random.default_rng(0)
    x = np.column_stack([np.ones(4000), rng.normal(size=(4000, 3)) * 3])
    truth = np.array([50.0, 2.0, -1.0, 0.5])
    y = x @ truth + rng.normal(size=4000)
    weights, r2, sd = fit_hand_model.fit(x, y)
    np.testing.assert_allclose(weights, truth, atol=0.05)
    assert r2 > 0.9 and 0.9 < sd < 1.1


def test_fit_script_smoke(capsys):
    x, y = fit_hand_model.simulate({}, deals=2, seed=3, explore=1.0)
    assert x.shape[1] == N_FEATURES
    dealt = x[:, HAND_FEATURES.index("nest_unseen")] == 1
    assert dealt.sum() == 8  # two deals x four forced bidders
    assert (~dealt).sum() >= 8  # their kept hands, plus the explored plans
    assert ((y >= 0) & (y <= 120)).all()
    fit_hand_model.main(["--deck", "tournament", "--rook-rank", "high", "--deals", "2", "--seed", "3"])
    out = capsys.readouterr().out
    assert "('tournament', 'high'): (" in out and "BID_CALIBRATION" in out

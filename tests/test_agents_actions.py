"""The shipped agents choose the same actions on the same observations as when the fixture was recorded
(``tests/data/agent_actions.npz``, written by ``python tests/agent_actions.py``): ``heuristic``, ``ppo`` and ``best``
in the partnership game, ``call_partner_heuristic``, ``ppo`` and ``best`` at a 5-player call-your-partner table."""

from __future__ import annotations

import numpy as np
import pytest

from agent_actions import CASES, FIXTURE, choices

PARAMS = [(case, spec) for case, (_, _, specs) in CASES.items() for spec in specs]


@pytest.fixture(scope="module")
def fixture() -> dict[str, np.ndarray]:
    with np.load(FIXTURE) as data:
        return {k: data[k] for k in data.files}


@pytest.mark.parametrize("case,spec", PARAMS, ids=[f"{c}-{s}" for c, s in PARAMS])
def test_shipped_agent_chooses_the_recorded_actions(fixture, case, spec):
    if spec != CASES[case][2][0] or case == "partnership_best":
        pytest.importorskip("torch")  # the networks ("ppo", "best") need torch
    flags = CASES[case][0]
    positions = {k: fixture[f"{case}/{k}"] for k in ("hand", "seat", "observation", "action_mask")}
    assert len(positions["hand"]) >= 100
    recorded = fixture[f"{case}/actions/{spec}"]
    got = choices(spec, flags, positions)
    assert got.shape == recorded.shape
    differ = np.flatnonzero(got != recorded)
    assert differ.size == 0, f"{spec} ({case}) chose otherwise at {differ.size} of {got.size} decisions: {differ[:10]}"

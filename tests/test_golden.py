"""Behaviour does not change: replay the golden traces of both games (see ``tests/golden.py``).

Each case plays the recorded seeds again and compares every episode's digest (observations and
masks of every seat, the global state, rewards, terminations, truncations, infos, actions) and,
for the trained network (``golden.RECORDED_NETWORK``), the actions it chose.
"""

import json

import pytest
from golden import DATA, run_episode

GOLDEN = json.loads(DATA.read_text())


@pytest.mark.parametrize("key", sorted(GOLDEN))
def test_golden_trace(key):
    case = GOLDEN[key]
    driver = key.split("/")[1]
    if driver == "ppo":
        pytest.importorskip("torch")
    for seed, want in enumerate(case["episodes"]):
        got = run_episode(case["game"], case["flags"], seed, driver)
        if driver == "ppo":
            assert got["actions"] == want["actions"], f"{key} seed {seed}: the recorded network chose other actions"
        assert got["steps"] == want["steps"], f"{key} seed {seed}: episode length changed"
        assert got["digest"] == want["digest"], f"{key} seed {seed}: observations, masks or rewards changed"

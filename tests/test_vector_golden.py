"""The batched engines replay their recorded traces (``tests/data/vector_golden.json``) digest for digest.

Recorded on main before issue 22's single engine (``python tests/vector_trace.py``): for both games
and, for the partnership game, both backends, seeded runs driven by ``sample_legal`` with every step's
observations, masks, rewards, episode ends and infos (and now and then every seat's ``observe`` and
``state_for``) hashed. A refactoring of the engine must not change one of them.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from rook_env.games.partnership import kernels
from rook_env.vector import pick_legal

from vector_trace import GOLDEN, NUM_ENVS, RUNS, STEPS, backends, trace

RECORDED = json.loads(GOLDEN.read_text())
CASES = [pytest.param(name, game, b, kw, id=f"{name}/{b}",
                      marks=[pytest.mark.skipif(b == "numba" and not kernels.AVAILABLE, reason="numba is not installed")])
         for name, game, kw in RUNS for b in backends(game)]


def test_recording_matches_the_runs():
    assert RECORDED["steps"] == STEPS and RECORDED["num_envs"] == NUM_ENVS
    assert set(RECORDED["runs"]) == {f"{name}/{b}" for name, game, _ in RUNS for b in backends(game)}


@pytest.mark.parametrize("name, game, backend, kwargs", CASES)
def test_replays_the_recorded_trace(name, game, backend, kwargs):
    expected = RECORDED["runs"][f"{name}/{backend}"]
    got = trace(game, backend, kwargs)
    first = next((t for t, (a, b) in enumerate(zip(got, expected)) if a != b), None)
    assert first is None and len(got) == len(expected), f"{name}/{backend}: first differing step {first}"


@pytest.mark.parametrize("name, game, backend, kwargs", [c for c in CASES if c.id in ("default/numpy", "cp4/numpy")])
def test_numpy_choice_of_actions_replays_too(name, game, backend, kwargs):
    """The traces do not depend on sample_legal's compiled choice: pick_legal gives the same runs."""
    got = trace(game, backend, kwargs, pick=lambda mask, rng: pick_legal(mask, rng.random(mask.shape[0])))
    assert got == RECORDED["runs"][f"{name}/{backend}"]

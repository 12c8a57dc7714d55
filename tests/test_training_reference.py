"""Behaviour does not change: two tiny seeded runs of :func:`rook_env.training.train` (the partnership game
with a playoff and the overlapped loop; call-your-partner Rook with the synchronous loop) give exactly the
numbers recorded from train.py before it became a package (main at f9fc005: tests/data/training_tiny_*.json):
losses, training points, evaluations, behaviour-cloning accuracies, selection, playoff and the shipped
weights. Wall-clock figures (seconds, rates) are left out. Floats are compared to 1e-4 relative: the network's
sparse first layer (rook_env/agents/learned/model.py, after the recording) sums the same products in another
order than the dense one, which moves losses and weight sums by up to about 1e-5 relative; a change of
behaviour (another action sampled, another deal) moves the training points and evaluations by far more.
The runs set ``grad_precision=float32``: the recording was made with float32 gradient products, and the
bfloat16 products (the default on CPUs that have them) move the weights by about 1e-3 relative, an
intended change of arithmetic that tests/test_model.py checks on its own terms.

    python tests/test_training_reference.py --record   # re-record (only after a deliberate change of behaviour)
"""

from __future__ import annotations

import json
import math
import os
import sys

import pytest

pytest.importorskip("torch")
from rook_env.agents.learned.model import load_checkpoint  # noqa: E402
from rook_env.training import make_train_config, train  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data")
RUNS = {
    "partnership": ("smoke.yaml", ["total_decisions=3000", "rollout_decisions=1024", "eval_every=1", "eval_deals=4",
                                   "bc_steps=10", "bc_hands=8", "playoff_candidates=2", "playoff_deals=4",
                                   "final_eval_deals=4", "checkpoint_every=1", "grad_precision=float32"]),
    "call_partner": ("call_partner_smoke.yaml", ["total_decisions=1500", "rollout_decisions=512", "eval_every=1",
                                                 "eval_deals=2", "bc_steps=10", "bc_hands=6", "overlap=false",
                                                 "final_eval_deals=2", "checkpoint_every=1",
                                                 "grad_precision=float32"]),
}
NAMES = {"partnership": "tiny_p", "call_partner": "tiny_c"}  # the recorded runs' names
REL_TOL = 1e-4  # float rounding of the sparse first layer (see above)
WALL_CLOCK = ("seconds", "wall_seconds", "decisions_per_s", "collect_decisions_per_s", "update_decisions_per_s",
              "collect_ahead_seconds")


def reproducible(summary: dict) -> dict:
    """What a seed determines of a run: the summary's numbers, the history in last.pt (wall-clock figures
    dropped) and the sums of agent.pt's weights."""
    def clean(x):
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items() if not k.startswith(WALL_CLOCK) and k != "path"}
        if isinstance(x, list):
            return [clean(v) for v in x]
        return x

    keep = {k: summary[k] for k in ("name", "seed", "stop_reason", "iterations", "decisions", "bc", "best",
                                    "final_eval", "playoff")}
    keep["history"] = load_checkpoint(summary["paths"]["last"])["history"]
    agent = load_checkpoint(summary["paths"]["agent"])
    keep["agent_weight_sums"] = {k: float(v.double().sum()) for k, v in agent["model"].items()}
    return json.loads(json.dumps(clean(keep)))  # tuples -> lists, as in the recorded file


def run(game: str, run_dir: str) -> dict:
    config, overrides = RUNS[game]
    cfg = make_train_config(os.path.join(ROOT, "configs", config),
                            [f"run_dir={run_dir}", f"name={NAMES[game]}", "progress=false", *overrides])
    return reproducible(train(cfg, quiet=True, overwrite=True))


def assert_same(got, want, where: str = "") -> None:
    if isinstance(want, dict):
        assert isinstance(got, dict) and sorted(got) == sorted(want), f"{where}: keys {sorted(got)} != {sorted(want)}"
        for k in want:
            assert_same(got[k], want[k], f"{where}.{k}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{where}: {got!r} != {want!r}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, f"{where}[{i}]")
    elif isinstance(want, float) and not (isinstance(want, bool)):
        assert isinstance(got, (int, float)) and (math.isnan(want) and math.isnan(got)
                                                   or math.isclose(got, want, rel_tol=REL_TOL, abs_tol=1e-12)), \
            f"{where}: {got!r} != {want!r}"
    else:
        assert got == want, f"{where}: {got!r} != {want!r}"


@pytest.mark.parametrize("game", sorted(RUNS))
def test_a_seeded_run_gives_the_numbers_recorded_before_the_package(game, tmp_path):
    with open(os.path.join(DATA, f"training_tiny_{game}.json")) as fh:
        want = json.load(fh)
    assert_same(run(game, str(tmp_path)), want, game)


if __name__ == "__main__" and sys.argv[1:] == ["--record"]:
    import tempfile

    for game in RUNS:
        with open(os.path.join(DATA, f"training_tiny_{game}.json"), "w") as fh:
            json.dump(run(game, tempfile.mkdtemp()), fh, indent=1, sort_keys=True)

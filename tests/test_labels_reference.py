"""Counterfactual labels, their fits and rounds of both give the numbers recorded before the two games' labels became
one module (tests/data/labels_reference.npz and .json, recorded at c50b83b with the modules of that time): the same
label values on the same deals in both games (against itself, the heuristic, per-phase shares), the same fits (over
a network, over the heuristic) and two rounds with an opponent of the field (their labels' arrays by digest, their fits'
validation errors and the networks' weight sums). Floats of a fit are compared to 1e-4 relative, as
tests/test_training_reference.py does; labels exactly.

    python tests/test_labels_reference.py --record   # re-record (only after a deliberate change of behaviour)
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
import tempfile

import numpy as np
import pytest
import torch

from rook_env.agents import make_agent
from rook_env.agents.learned.model import load_checkpoint, model_from_checkpoint
from rook_env.training.expert import read_shards, shard_paths
from rook_env.training.labels import counterfactual
from rook_env.training.labels import fit as label_fit
from rook_env.training.labels.rounds import RoundsConfig, run_rounds
from rook_env.training.labels.shards import write_shard

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data", "labels_reference")
NETWORK = "rook_env/agents/checkpoints/ppo_default.pt"
REL_TOL = 1e-4


def _model():
    torch.set_num_threads(1)
    return model_from_checkpoint(load_checkpoint(NETWORK), NETWORK).eval()


# name: (game, deals, seed, label_prob, the network plays (partnership), further arguments)
CASES = {
    "partnership_self": ("partnership", 6, 31, 0.3, {}),
    "partnership_heuristic": ("partnership", 4, 41, 0.3, {"opponent": "heuristic"}),
    "partnership_phases": ("partnership", 4, 51, 0.2, {"phase_label_prob": {"bid": 0.6, "play": 0.4}}),
    "call_partner_5": ("call_partner", 3, 123, 0.5, {"players": 5}),
    "call_partner_4": ("call_partner", 2, 77, 0.4, {"players": 4}),
}


def labels_of(name: str, model) -> dict[str, np.ndarray]:
    game, deals, seed, label_prob, extra = CASES[name]
    extra = dict(extra)
    if "opponent" in extra:
        extra["opponent"] = make_agent(extra["opponent"])
    network = model if game == "partnership" else None
    return counterfactual.label_deals(game, deals, seed, label_prob, network=network, **extra)


def weight_sums(path: str) -> dict[str, float]:
    return {k: float(v.double().sum()) for k, v in load_checkpoint(path)["model"].items()}


def fits(tmp: str, model) -> dict:
    """A fit over the network on partnership labels, a residual fit over the heuristic on call-your-partner ones."""
    out = {}
    os.makedirs(f"{tmp}/p")
    os.makedirs(f"{tmp}/c")
    write_shard(f"{tmp}/p/shard_9_00000.npz", counterfactual.label_deals("partnership", 8, 9, 0.5, network=model))
    cfg = label_fit.FitConfig(labels=f"{tmp}/p", out=f"{tmp}/p.pt", init=NETWORK, epochs=2, margin=10.0,
                              val_share=0.25, threads=1, lr=1e-3)
    out["fit_network"] = {"summary": label_fit.fit(cfg, log=lambda *_: None), "weights": weight_sums(cfg.out)}
    write_shard(f"{tmp}/c/shard_5_00000.npz", counterfactual.label_deals("call_partner", 8, 5, 0.25))
    cfg = label_fit.FitConfig(labels=f"{tmp}/c", out=f"{tmp}/c.pt", epochs=2, hidden=[32], val_share=0.25, threads=1)
    out["fit_heuristic"] = {"summary": label_fit.fit(cfg, log=lambda *_: None), "weights": weight_sums(cfg.out)}
    for v in out.values():
        for key in ("labels", "out", "init"):
            v["summary"]["fit"].pop(key, None)
    return json.loads(json.dumps(out))


def rounds(tmp: str) -> dict:
    cfg = RoundsConfig(network=NETWORK, out=f"{tmp}/r", rounds=2, self_hands=4, heuristic_hands=4,
                       opponents={"ppo:" + NETWORK: 4}, shard_hands=2, label_prob=0.5, tables=64, processes=1, epochs=1,
                       threads=1, seed=500)
    summary = run_rounds(cfg, log=lambda *_: None)
    out = {"rounds": [{"val_mse": r["val_mse"], "zero_mse": r["zero_mse"], "best_epoch": r["best_epoch"],
                       "labels": {k: v["first_seed"] for k, v in r["labels"].items()},
                       "weights": weight_sums(r["network"])} for r in summary], "round_labels": {}}
    for r in summary:
        for k, v in r["labels"].items():
            rec = read_shards(shard_paths(v["folder"]))
            out["round_labels"][f"{r['round']}/{k}"] = {
                key: hashlib.sha256(np.ascontiguousarray(rec[key]).tobytes()).hexdigest() for key in sorted(rec)}
    return out


@pytest.fixture(scope="module")
def recorded() -> tuple[dict, dict]:
    with np.load(DATA + ".npz") as z:
        arrays = {k: z[k] for k in z.files}
    with open(DATA + ".json") as fh:
        return arrays, json.load(fh)


def close(got, want, where: str = "") -> None:
    """``got`` equals ``want``: numbers to REL_TOL relative (integers exactly), the rest exactly."""
    if isinstance(want, dict):
        assert set(got) == set(want), where
        for k in want:
            close(got[k], want[k], f"{where}.{k}")
    elif isinstance(want, list):
        assert len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want)):
            close(g, w, f"{where}[{i}]")
    elif isinstance(want, float):
        assert math.isclose(got, want, rel_tol=REL_TOL, abs_tol=1e-9), (where, got, want)
    else:
        assert got == want, (where, got, want)


@pytest.mark.parametrize("name", list(CASES))
def test_the_same_labels_on_the_same_deals(name, recorded):
    arrays, _ = recorded
    got = labels_of(name, _model())
    want = {k.split("/", 1)[1]: v for k, v in arrays.items() if k.startswith(name + "/")}
    assert want and set(want) <= set(got)  # (call-your-partner records gained each label's chance, ``prob``)
    for key, value in want.items():
        assert got[key].dtype == value.dtype, key
        np.testing.assert_array_equal(got[key], value, err_msg=key)
    assert len(got["q"]) > 10


def test_the_same_fits(recorded, tmp_path):
    _, meta = recorded
    got = fits(str(tmp_path), _model())
    for name in ("fit_network", "fit_heuristic"):
        close(got[name], meta[name], name)


def test_the_same_rounds(recorded, tmp_path):
    _, meta = recorded
    got = rounds(str(tmp_path))
    close(got["rounds"], meta["rounds"], "rounds")
    assert got["round_labels"] == meta["round_labels"]


def record() -> None:
    model = _model()
    arrays = {f"{name}/{k}": v for name in CASES for k, v in labels_of(name, model).items()}
    with tempfile.TemporaryDirectory() as tmp:
        meta = {**fits(tmp, model), **rounds(tmp)}
    np.savez_compressed(DATA + ".npz", **arrays)
    with open(DATA + ".json", "w") as fh:
        json.dump(meta, fh, indent=1, sort_keys=True)


if __name__ == "__main__" and "--record" in sys.argv:
    record()

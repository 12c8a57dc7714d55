"""benchmarks/soak.py: a tiny run passes on every driver, and its checks catch what they claim to."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import random
import sys

import numpy as np
import pytest

import rook_env
from rook_env.games.partnership.rules import PLAY

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def soak():
    spec = importlib.util.spec_from_file_location("soak_script", os.path.join(ROOT, "benchmarks", "soak.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules["soak_script"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    yield module
    del sys.modules["soak_script"]


def _position(soak, steps: int = 0, **flags):
    """A real position of raw_env after ``steps`` random legal actions, with its Reference."""
    e = rook_env.raw_env(**flags)
    e.reset(seed=5)
    rng = random.Random(5)
    for _ in range(steps):
        legal = e.unwrapped.game.legal_actions()
        e.step(legal[rng.randrange(len(legal))])
    p = soak._aec_position(e)
    return p, soak.Reference(p.config, flags)


def test_a_tiny_soak_passes_on_every_driver(soak, tmp_path, capsys):
    out = tmp_path / "soak.json"
    assert soak.main(["--combinations", "5", "--hands", "15", "--seed", "3", "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["verdict"] == "PASS" and result["combinations"] == 5
    assert set(result["drivers"]) == {"raw_env", "env()", "vector"}
    for name, d in result["drivers"].items():
        assert d["violations"] == 0, (name, d["examples"])
        assert d["hands"] >= d["combinations"] > 0 or (name == "vector" and d["skipped"])
        assert d["steps"] > d["hands"]
    assert "soak summary" in capsys.readouterr().out


def test_one_driver_can_be_soaked(soak, capsys):
    assert soak.main(["--drivers", "vector", "--combinations", "2", "--hands", "4", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "vector" in out and "raw_env" not in out


def test_every_combination_is_valid_and_its_layout_matches_rules_md(soak):
    combos = soak.flag_combinations(random.Random(0))
    # 864 F1-F12 combinations, 86 other games and 3 presets, each with BASE_PER_GAME F1-F12 combinations
    assert len(combos) == 864 + (86 + 3) * soak.BASE_PER_GAME
    for flag in soak.GAME_FLAGS + ("ones", "preset"):
        values = {c.get(flag) for c in combos}
        assert len(values) >= 2, flag  # every other-game flag is soaked with more than its default
    tally = soak.Tally()
    for flags in combos:
        flags = {f: v for f, v in flags.items() if f != "max_hands"}
        soak.check_config(soak.Reference(rook_env.games.partnership.config.make_config(**flags), flags), tally, str(flags))
    assert tally.n_violations == 0, tally.violations


def test_the_reference_reads_rules_md_facts(soak):
    _, ref = _position(soak, rook_bird="off", nest="off")
    assert (ref.n, ref.nest_size, ref.hand_size, ref.total, ref.bids[0], ref.bids[-1]) == (40, 0, 10, 100, 65, 100)
    _, ref = _position(soak, deck="full", ones="low")
    assert (ref.n, ref.nest_size, ref.hand_size, ref.total, ref.bids[0], ref.bids[-1]) == (57, 5, 13, 120, 70, 120)
    _, ref = _position(soak, preset="regular_partnership")
    assert (ref.n, ref.hand_size, ref.total, ref.bids[0], ref.bids[-1]) == (56, 14, 100, 70, 120)


def test_check_position_passes_a_real_position_and_catches_tampering(soak):
    p, ref = _position(soak, steps=30)
    assert p.phase == PLAY
    tally = soak.Tally()
    soak.check_position(p, ref, tally, "real")
    assert tally.n_violations == 0, tally.violations

    def failures(**changes):
        t = soak.Tally()
        soak.check_position(dataclasses.replace(p, **changes), ref, t, "tampered")
        return t.violations

    other_card = (p.hands[1] & -p.hands[1]).bit_length() - 1  # a card of seat 1's hand
    leaked = p.obs.copy()
    leaked[0, soak.obs_layout(p.config).NEST + other_card] = 1.0  # seat 0 sees it in its nest section
    assert any("another seat's hand" in v for v in failures(obs=leaked))
    extra = p.legal | 1 << ref.PASS  # passing in the play phase
    masks = p.masks.copy()
    masks[p.current, ref.PASS] = 1
    assert any("RULES.md" in v for v in failures(legal=extra, masks=masks))
    assert any("mask" in v for v in failures(masks=np.ones_like(p.masks)))
    lost = list(p.hands)
    lost[0] &= lost[0] - 1  # a card vanishes
    assert any("partition" in v for v in failures(hands=tuple(lost)))
    nan = p.obs.copy()
    nan[2, 0] = np.nan
    assert any("Box" in v for v in failures(obs=nan))


def test_check_hand_end_catches_wrong_scores_and_rewards(soak):
    _, ref = _position(soak)
    cfg = ref.cfg
    result = {"bidder": 1, "bid": 80, "trump": 2, "counters": [40, 80], "bonus": [0, 0], "hand_scores": [40, 80],
              "made": True, "scores": [40, 80], "last_trick_team": 1, "tricks_won": [3, 6], "game_winner": -1}
    good = soak.HandEnd(cfg, result, (0, 0), (-40.0, 40.0, -40.0, 40.0), True, True, False, 2, False)
    tally = soak.Tally()
    soak.check_hand_end(good, ref, tally, "good")
    assert tally.n_violations == 0, tally.violations
    for bad in (
        dataclasses.replace(good, result={**result, "counters": [40, 70]}),  # counters lost
        dataclasses.replace(good, result={**result, "hand_scores": [40, -80], "made": False}),  # set though made
        dataclasses.replace(good, rewards=(-40.0, 40.0, -40.0, 41.0)),  # partners differ
        dataclasses.replace(good, call=3),  # trump is not the contract's
        dataclasses.replace(good, result={**result, "bid": 125}),  # outside 70..120
    ):
        t = soak.Tally()
        soak.check_hand_end(bad, ref, t, "bad")
        assert t.n_violations >= 1


def test_the_vector_driver_skips_only_a_refusal_of_an_unsupported_flag(soak, monkeypatch):
    def refuse(message):
        def make(*args, **kwargs):
            raise ValueError(message)
        return make

    monkeypatch.setattr(soak, "RookVectorEnv", refuse("circus_rook='on' is not supported by RookVectorEnv yet; use x"))
    records = list(soak.drive_vector({"circus_rook": "on"}, 2, random.Random(0)))
    assert records == [soak.Skip("circus_rook='on' is not supported by RookVectorEnv yet")]
    monkeypatch.setattr(soak, "RookVectorEnv", refuse("deck='full' is wrong"))
    (note,) = soak.drive_vector({"deck": "full"}, 2, random.Random(0))
    assert isinstance(note, soak.Note) and "refused" in note.problem


def test_the_vector_illegal_try_catches_an_engine_that_accepts_it(soak):
    v = soak.RookVectorEnv(3)
    v.reset(seed=0)
    legal = soak._masks_of(v.action_mask)
    actions = np.array([soak.bits(m)[0] for m in legal])
    notes = list(soak._try_illegal_vector(v, actions, legal, random.Random(0)))
    assert [n.problem for n in notes] == [None, None]  # raise: nothing changed; terminate: the penalty
    v.illegal_action = "terminate"  # an engine that accepts illegal actions
    (note,) = soak._try_illegal_vector(v, actions, legal, random.Random(0))
    assert "accepted" in note.problem

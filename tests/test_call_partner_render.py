"""The drawn call-your-partner table (render_mode="rgb_array"): shape and type for 4, 5 and 6 seats,
states draw differently, a seat's view holds nothing hidden from that seat (neither cards nor who
the secret partner is), PettingZoo's render_test, frames a video recorder can take, Pillow missing."""

from __future__ import annotations

import sys

import numpy as np
import pytest

pytest.importorskip("PIL")

from helpers import cp_deal  # noqa: E402
from pettingzoo.test import render_test  # noqa: E402
from rook_env.games import call_partner  # noqa: E402
from rook_env.agents import make_agent  # noqa: E402
from rook_env.games.call_partner.render import CALL_PARTNER  # noqa: E402
from rook_env.games.call_partner.rules import CALL, OVER, PLAY  # noqa: E402
from rook_env.core.render import draw_seat_view, draw_table  # noqa: E402
from rook_env.core.drawing import (  # noqa: E402
    HEIGHT, PANEL_HEIGHT, PANEL_WIDTH, WIDTH, RenderDependencyError, draw_scene,
)

SHAPE = (PANEL_HEIGHT, PANEL_WIDTH, 3)


def _agents(n: int, seed: int = 0, **flags):
    flags = {**flags, "players": n}
    flags.pop("max_hands", None)  # an environment option, not a rule flag
    return [make_agent("call_partner_heuristic", seed=seed + s, **flags) for s in range(n)]


def _step(e, agents) -> None:
    e.step(agents[e.unwrapped.game.current].act(e.observe(e.agent_selection)))


@pytest.mark.parametrize("players", [4, 5, 6])
def test_rgb_array_shape_and_dtype(players):
    e = call_partner.env(render_mode="rgb_array", players=players)
    assert "rgb_array" in e.metadata["render_modes"] and e.metadata["render_fps"] > 0
    e.reset(seed=1)
    img = e.render()
    assert isinstance(img, np.ndarray) and img.dtype == np.uint8 and img.shape == SHAPE
    assert len(np.unique(img.reshape(-1, 3), axis=0)) > 20  # a drawing, not a blank canvas
    for s in range(players):
        assert draw_seat_view(e, f"player_{s}").shape == SHAPE
    assert (PANEL_WIDTH, PANEL_HEIGHT) != (WIDTH, HEIGHT)  # the partnership table keeps its own size


@pytest.mark.parametrize("players", [4, 5, 6])
def test_different_states_draw_differently(players):
    e = call_partner.raw_env(render_mode="rgb_array", players=players)
    e.reset(seed=2)
    agents = _agents(players)
    frames = [e.render()]
    while e.game.phase != OVER:
        _step(e, agents)
        frames.append(e.render())
    for i, (a, b) in enumerate(zip(frames, frames[1:])):
        assert not np.array_equal(a, b), f"decision {i + 1} did not change the drawing"
    e.reset(seed=3)
    assert not np.array_equal(e.render(), frames[0])  # another deal
    assert np.array_equal(e.render(), e.render())  # deterministic


# Five players, dealer 4: player_0 bids 100 and the others pass; player_0 lays down five of the
# nest's blacks, R6 and R7, names red, Rook high and calls G14 (player_2's in the base deal). Two
# tricks follow in which neither G14 nor Y5 is played, so nobody but G14's holder knows the partner.
HANDS = {
    0: "R1 R14 R13 R12 R11 R10 R9 R8 R7 R6",
    1: "R4 Y14 Y13 Y12 Y11 Y10 Y9 Y8 Y7 Y6",
    2: "R3 G14 G13 G12 G11 G10 G9 G8 G7 G6",
    3: "R2 Y5 B8 B7 B6 B5 B4 B3 B2 B1",
    4: "R5 G5 G4 G3 G2 G1 Y4 Y3 Y2 Y1",
}
NEST = "B14 B13 B12 B11 B10 B9 Rook"
SCRIPT = ["bid 100", "pass", "pass", "pass", "pass", "B14", "B13", "B12", "B11", "B10", "R6", "R7",
          "trump red", "rook high", "G14", "R1", "R4", "R3", "R2", "R5", "R14", "Y14", "G13", "B7", "G5"]


def _deal(swap: tuple[str, str] | None = None):
    e = call_partner.raw_env(players=5)
    hands, nest = cp_deal(e.config, {s: h for s, h in HANDS.items()}, NEST)
    if swap is not None:
        a, b = (e.layout.parse_card(t) for t in swap)
        exchange = {a: b, b: a}
        hands = [[exchange.get(c, c) for c in h] for h in hands]
        nest = [exchange.get(c, c) for c in nest]
    e.reset(seed=0, options={"hands": hands, "nest": nest, "dealer": 4})
    return e


def _seat_frames(swap=None) -> tuple[list[list[np.ndarray]], list[np.ndarray]]:
    e = _deal(swap)
    seats, spectator = [], []
    for action in [None, *SCRIPT]:
        if action is not None:
            e.step(e.layout.parse_action(action))
        seats.append([draw_seat_view(e, f"player_{s}") for s in range(5)])
        spectator.append(draw_table(e.game))
    assert e.game.phase == PLAY and len(e.game.tricks) == 2
    return seats, spectator


@pytest.mark.parametrize(
    "swap, blind, seeing",
    [
        (("G14", "Y5"), (0, 1, 4), (2, 3)),  # the called card: player_2 or player_3 is the secret partner
        (("B9", "B1"), (1, 2, 4), (0, 3)),  # between the nest (player_0 takes it) and player_3's hand
    ],
)
def test_seat_view_does_not_change_when_only_hidden_cards_change(swap, blind, seeing):
    base, base_spec = _seat_frames()
    other, other_spec = _seat_frames(swap)
    for step, (x, y) in enumerate(zip(base, other)):
        for s in blind:
            assert np.array_equal(x[s], y[s]), f"player_{s}'s view changed at step {step}: hidden information leaked"
    for s in seeing:  # the seats holding the swapped cards see the difference: the test can fail
        assert not np.array_equal(base[-1][s], other[-1][s])
    assert not np.array_equal(base_spec[-1], other_spec[-1])  # and so does the spectator


def test_partners_as_each_viewer_may_know_them():
    e = _deal()
    for action in SCRIPT:
        e.step(e.layout.parse_action(action))
    view = lambda s: CALL_PARTNER.seat_view(e.observe(f"player_{s}"), s, e.config)  # noqa: E731
    assert e.game.partners == (2,)
    assert view(2).partners == [2] and "me" in view(2).partners_text  # the holder knows from the call
    for s in (0, 1, 3, 4):
        assert view(s).partners == [] and "unknown" in view(s).partners_text
    spec = CALL_PARTNER.spectator(e.game)
    assert spec.secret_partners == [2] and spec.partners == [] and "secret" in spec.partners_text
    for action in ["R13", "Y13", "G14"]:  # player_2 plays the called card: now everyone knows
        e.step(e.layout.parse_action(action))
    for s in range(5):
        assert view(s).partners == [2]
    spec = CALL_PARTNER.spectator(e.game)
    assert spec.partners == [2] and spec.secret_partners == [] and spec.partners_text == "P2"


def test_called_card_in_the_nest_means_alone_for_the_spectator():
    e = _deal()
    for action in SCRIPT[:14]:
        e.step(e.layout.parse_action(action))
    e.step(e.layout.parse_action("B14"))  # the bidder calls one of its own discards
    assert e.game.phase == PLAY and e.game.partners == ()
    assert "alone" in CALL_PARTNER.spectator(e.game).partners_text
    assert "unknown" in CALL_PARTNER.seat_view(e.observe("player_1"), 1, e.config).partners_text
    assert draw_table(e.game).shape == SHAPE


@pytest.mark.parametrize("players", [4, 5, 6])
def test_pettingzoo_render_test(players):
    def is_table(img):
        return img.shape == SHAPE and img.dtype == np.uint8

    render_test(lambda render_mode=None: call_partner.env(render_mode=render_mode, players=players),
                custom_tests={"rgb_array": is_table})


@pytest.mark.parametrize("flags", [
    {"players": 6, "episode": "game", "max_hands": 2},
    {"players": 4, "nest_discard": "no_counters_unless_forced", "deck": "no_twos_to_fours"},
])
def test_every_phase_draws_frames_a_video_can_take(flags):
    """Every phase draws, with 6 players' two called cards, the end of a hand and the next hand of
    a game; every frame of the episode has one shape, even sides and uint8 (what gymnasium's
    RecordVideo and the video encoders need)."""
    e = call_partner.env(render_mode="rgb_array", **flags)
    e.reset(seed=6)
    agents = _agents(e.unwrapped.n, **flags)
    phases, shapes = set(), set()
    while not (e.terminations["player_0"] or e.truncations["player_0"]):
        _step(e, agents)
        frame = e.render()
        phases.add(e.unwrapped.game.phase)
        shapes.add((frame.shape, frame.dtype.str))
        if e.unwrapped.game.phase == CALL:
            assert draw_seat_view(e, e.agent_selection).shape == SHAPE
    assert shapes == {(SHAPE, "|u1")} and SHAPE[0] % 2 == 0 and SHAPE[1] % 2 == 0
    assert {CALL, PLAY} <= phases


def test_six_players_show_two_called_cards():
    e = call_partner.raw_env(players=6)
    e.reset(seed=4)
    agents = _agents(6)
    while e.game.phase != PLAY:
        _step(e, agents)
    assert len(CALL_PARTNER.spectator(e.game).called) == 2
    assert len(CALL_PARTNER.seat_view(e.observe("player_1"), 1, e.config).called) == 2
    assert draw_scene(CALL_PARTNER.spectator(e.game)).shape == SHAPE


def test_missing_pillow_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "PIL", None)  # makes `import PIL` fail
    for make in (call_partner.raw_env, call_partner.env):
        with pytest.raises(RenderDependencyError, match=r'pip install "rook_env\[render\]"') as info:
            make(render_mode="rgb_array")
        assert isinstance(info.value, ImportError)
    e = call_partner.env(render_mode="ansi")  # the other modes need nothing
    e.reset(seed=0)
    assert isinstance(e.render(), str)


def test_render_modes_match_rook_v1():
    import rook_env

    assert call_partner.raw_env.metadata["render_modes"] == rook_env.raw_env.metadata["render_modes"]
    with pytest.raises(ValueError, match="rgb_array"):
        call_partner.env(render_mode="video")
